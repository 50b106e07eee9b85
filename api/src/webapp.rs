//! The web app for customers and staff, served by the binary itself: `/` is the page, `/app/...`
//! its script, style sheet and the vendored wavesurfer.js (waveform and regions; version pinned
//! in the file names, taken from the npm registry). Every file is embedded at compile time with
//! `include_bytes!`, so the app needs no CDN, no node build and no network at run time. The app
//! talks only to the API under `/api`.

use poem::http::{StatusCode, header};
use poem::web::Path;
use poem::{Response, handler};

/// One embedded file: its name under `/app/`, media type and bytes.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    bytes: &'static [u8],
}

const INDEX_HTML: &[u8] = include_bytes!("../web/index.html");

const ASSETS: &[Asset] = &[
    Asset { name: "app.js", content_type: "text/javascript; charset=utf-8", bytes: include_bytes!("../web/app.js") },
    Asset {
        name: "editor.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../web/editor.js"),
    },
    Asset { name: "app.css", content_type: "text/css; charset=utf-8", bytes: include_bytes!("../web/app.css") },
    Asset {
        name: "vendor/wavesurfer-7.12.1.min.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../web/vendor/wavesurfer-7.12.1.min.js"),
    },
    Asset {
        name: "vendor/wavesurfer-regions-7.12.1.min.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../web/vendor/wavesurfer-regions-7.12.1.min.js"),
    },
    Asset {
        name: "vendor/wavesurfer-LICENSE.txt",
        content_type: "text/plain; charset=utf-8",
        bytes: include_bytes!("../web/vendor/wavesurfer-LICENSE.txt"),
    },
];

/// The page's content security policy: everything from this origin, nothing from elsewhere.
/// (wavesurfer.js styles its shadow DOM with an inline `<style>`, hence `'unsafe-inline'` for
/// styles only.)
const CSP: &str = "default-src 'self'; img-src 'self' data: blob:; media-src 'self' blob:; style-src 'self' 'unsafe-inline'; \
script-src 'self'; connect-src 'self'; frame-ancestors 'none'";

/// `GET /`: the app's page.
#[handler]
pub fn index() -> Response {
    Response::builder()
        .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
        .header(header::CACHE_CONTROL, "no-cache")
        .header(header::CONTENT_SECURITY_POLICY, CSP)
        .header("x-content-type-options", "nosniff")
        .body(INDEX_HTML)
}

/// `GET /app/*name`: a script, style sheet or vendored library of the app; 404 otherwise.
#[handler]
pub fn asset(Path(name): Path<String>) -> Response {
    match ASSETS.iter().find(|a| a.name == name) {
        Some(asset) => Response::builder()
            .header(header::CONTENT_TYPE, asset.content_type)
            .header(header::CACHE_CONTROL, "no-cache")
            .header("x-content-type-options", "nosniff")
            .body(asset.bytes),
        None => Response::builder()
            .status(StatusCode::NOT_FOUND)
            .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
            .body(format!("No file app/{name}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_loads_only_embedded_files_that_exist() {
        let page = std::str::from_utf8(INDEX_HTML).unwrap();
        for reference in page.split("\"/app/").skip(1) {
            let name = reference.split('"').next().unwrap();
            assert!(ASSETS.iter().any(|a| a.name == name), "index.html loads app/{name}, which is not embedded");
        }
        assert!(
            !page.contains("http://") && !page.contains("https://"),
            "the page must not load anything from elsewhere"
        );
    }
}
