//! The web app for customers and staff, served by the binary itself: `/` is the page, `/app/...`
//! its script, style sheet and the vendored wavesurfer.js (waveform and regions; version pinned
//! in the file names, taken from the npm registry). Every file of `api/web/` is embedded at
//! compile time (`rust-embed`, served by poem's embedded-files endpoints), so the app needs no
//! CDN, no node build and no network at run time. The app talks only to the API under `/api`.
//! `/favicon.ico` is its icon (`web/favicon.ico`, 32 × 32).

use poem::endpoint::{EmbeddedFileEndpoint, EmbeddedFilesEndpoint};
use poem::http::{StatusCode, header};
use poem::middleware::SetHeader;
use poem::{Endpoint, EndpointExt, IntoResponse};
use rust_embed::RustEmbed;

/// The page itself, `web/index.html`.
#[derive(RustEmbed)]
#[folder = "web/"]
#[include = "index.html"]
struct Page;

/// Everything the page loads from `/app/`: `web/` without the page.
#[derive(RustEmbed)]
#[folder = "web/"]
#[exclude = "index.html"]
struct Assets;

/// The page's content security policy: everything from this origin, nothing from elsewhere.
/// (wavesurfer.js styles its shadow DOM with an inline `<style>`, hence `'unsafe-inline'` for
/// styles only.)
const CSP: &str = "default-src 'self'; img-src 'self' data: blob:; media-src 'self' blob:; style-src 'self' 'unsafe-inline'; \
script-src 'self'; connect-src 'self'; frame-ancestors 'none'";

/// The headers every file of the app is served with: always revalidated (its ETag makes that
/// cheap), and never sniffed into another type.
fn app_headers() -> SetHeader {
    SetHeader::new().overriding(header::CACHE_CONTROL, "no-cache").overriding("x-content-type-options", "nosniff")
}

/// `GET /`: the app's page.
pub fn index() -> impl Endpoint {
    not_modified_is_an_answer(EmbeddedFileEndpoint::<Page>::new("index.html"))
        .with(app_headers().overriding(header::CONTENT_SECURITY_POLICY, CSP))
        .with(SetHeader::new().overriding(header::CONTENT_TYPE, "text/html; charset=utf-8"))
}

/// `GET /app/<name>`: a script, style sheet or vendored library of the app (its type from its
/// name); 404 otherwise.
pub fn assets() -> impl Endpoint {
    not_modified_is_an_answer(EmbeddedFilesEndpoint::<Assets>::new()).with(app_headers())
}

/// `GET /favicon.ico`: the app's icon (browsers ask for it at this address on every site).
pub fn favicon() -> impl Endpoint {
    not_modified_is_an_answer(EmbeddedFileEndpoint::<Assets>::new("favicon.ico"))
        .with(app_headers())
        .with(SetHeader::new().overriding(header::CONTENT_TYPE, "image/x-icon"))
}

/// poem's embedded endpoints answer a matching `If-None-Match` with an error carrying 304; the
/// API's error handling would turn any error into a JSON error, so the 304 is answered here, as
/// the plain response it is.
fn not_modified_is_an_answer(files: impl Endpoint + 'static) -> impl Endpoint {
    files.around(|files, req| async move {
        match files.call(req).await {
            Ok(found) => Ok(found.into_response()),
            Err(e) if e.status() == StatusCode::NOT_MODIFIED => Ok(StatusCode::NOT_MODIFIED.into_response()),
            Err(e) => Err(e),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_loads_only_embedded_files_that_exist() {
        let page = Page::get("index.html").expect("the page is embedded");
        let page = std::str::from_utf8(&page.data).unwrap();
        for reference in page.split("\"/app/").skip(1) {
            let name = reference.split('"').next().unwrap();
            assert!(Assets::get(name).is_some(), "index.html loads app/{name}, which is not embedded");
        }
        assert!(
            !page.contains("http://") && !page.contains("https://"),
            "the page must not load anything from elsewhere"
        );
    }
}
