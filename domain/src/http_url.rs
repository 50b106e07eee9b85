//! `HttpUrl`: a client-given URL (`sourceUrl`, `callbackUrl`) checked for syntax only.
//!
//! Whether the address it names may be contacted (public, not loopback or metadata) is decided
//! by the address guard in `actors/`, at connection time, because DNS answers change.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::ValidationError;

/// Longest URL accepted, in bytes. Presigned object-store URLs run to about 1 500.
pub const MAX_URL_LEN: usize = 4096;

/// An absolute `http` or `https` URL with a host.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct HttpUrl(url::Url);

impl HttpUrl {
    /// Checks the parameter `field` (`sourceUrl`, `callbackUrl`).
    pub fn parse_field(field: &str, value: &str) -> Result<HttpUrl, ValidationError> {
        let bad = |why: &str| ValidationError::new(field, format!("{field} {why}"));
        if value.len() > MAX_URL_LEN {
            return Err(bad(&format!("must be at most {MAX_URL_LEN} characters long")));
        }
        // Checked as sent: the URL parser would quietly drop or encode spaces and control
        // characters, and read `http:host` as `http://host`.
        if value.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(bad("must not contain spaces or control characters"));
        }
        let has_scheme_and_slashes = value
            .split_once("://")
            .is_some_and(|(scheme, _)| scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https"));
        if !has_scheme_and_slashes {
            return Err(bad("must be an absolute http or https URL (http://host/... or https://host/...)"));
        }
        let url = url::Url::parse(value).map_err(|e| bad(&format!("must be an absolute http or https URL ({e})")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(bad(&format!("must use http or https, not {}", url.scheme())));
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(bad("must name a host"));
        }
        Ok(HttpUrl(url))
    }

    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// The parsed URL, for the HTTP client and the address guard.
    pub fn url(&self) -> &url::Url {
        &self.0
    }

    /// A file name for media fetched from this URL: the last path segment, percent-decoded,
    /// or `media` when the path has none (`https://host/`).
    pub fn file_name(&self) -> String {
        let last = self.0.path_segments().and_then(|mut s| s.next_back()).unwrap_or("");
        sanitize_filename(&percent_encoding::percent_decode_str(last).decode_utf8_lossy())
    }
}

impl fmt::Debug for HttpUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HttpUrl({})", self.0)
    }
}

impl fmt::Display for HttpUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.as_str())
    }
}

impl Serialize for HttpUrl {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0.as_str())
    }
}

impl<'de> Deserialize<'de> for HttpUrl {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        HttpUrl::parse_field("url", &s).map_err(serde::de::Error::custom)
    }
}

/// Longest file name kept, in characters.
pub const MAX_FILENAME_CHARS: usize = 255;

/// The display name of an uploaded or fetched file: the part after the last `/` or `\`,
/// without control characters, trimmed, at most [`MAX_FILENAME_CHARS`] characters; `media` when
/// nothing is left. It is shown to clients only and never used as a path on disk.
pub fn sanitize_filename(raw: &str) -> String {
    let base = raw.rsplit(['/', '\\']).next().unwrap_or("");
    let clean: String = base.chars().filter(|c| !c.is_control()).take(MAX_FILENAME_CHARS).collect();
    let clean = clean.trim();
    if clean.is_empty() || clean == "." || clean == ".." { "media".to_owned() } else { clean.to_owned() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<HttpUrl, ValidationError> {
        HttpUrl::parse_field("callbackUrl", s)
    }

    #[test]
    fn absolute_http_and_https_urls_are_accepted() {
        for ok in [
            "http://127.0.0.1:9000/hook",
            "https://example.org/a?b=c#d",
            "https://user:pw@example.org/x",
            "http://[::1]:8080/",
        ] {
            assert!(parse(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn other_urls_are_rejected_naming_the_parameter() {
        for bad in [
            "",
            "example.org/hook",
            "/hook",
            "ftp://example.org/x",
            "file:///etc/passwd",
            "mailto:a@b.c",
            "http://",
            "javascript:alert(1)",
        ] {
            let err = parse(bad).unwrap_err();
            assert_eq!(err.field, "callbackUrl", "{bad}");
            assert!(err.message.starts_with("callbackUrl "), "{}", err.message);
        }
        assert!(parse(&format!("https://example.org/{}", "a".repeat(MAX_URL_LEN))).is_err());
    }

    #[test]
    fn file_names_come_from_the_last_path_segment() {
        let name = |s: &str| parse(s).unwrap().file_name();
        assert_eq!(name("https://h/media/jfk.wav?X-Amz-Signature=abc"), "jfk.wav");
        assert_eq!(name("https://h/my%20talk.mp3"), "my talk.mp3");
        assert_eq!(name("https://h/"), "media");
        assert_eq!(name("https://h/a/%2e%2e"), "media");
        assert_eq!(name("https://h/100%"), "100%");
    }

    #[test]
    fn uploaded_file_names_lose_their_directories_and_control_characters() {
        assert_eq!(sanitize_filename("C:\\Users\\ann\\talk.wav"), "talk.wav");
        assert_eq!(sanitize_filename("../../etc/passwd"), "passwd");
        assert_eq!(sanitize_filename("a\u{0}b\n.wav"), "ab.wav");
        assert_eq!(sanitize_filename("   "), "media");
        assert_eq!(sanitize_filename(&"é".repeat(300)).chars().count(), MAX_FILENAME_CHARS);
    }
}
