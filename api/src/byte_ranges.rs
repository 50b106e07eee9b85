//! A stored file answered as RFC 9110 §14 says, for the signed media link of manual tasks (an
//! audio player seeks with `Range` requests). The `Range` header is read by the
//! `http-range-header` crate (which follows RFC 9110); what it finds decides the answer:
//!
//! - no `Range`, or one the server ignores: 200 with the whole file. Ignored are a header that
//!   is not valid (`bytes=5-2`, `items=0-1`, garbage: §14.2 says a server MAY ignore it), one
//!   asking for several ranges (answered whole, never as `multipart/byteranges`), and any range
//!   when `If-Range` names another version of the file (§13.1.5).
//! - one satisfiable range: 206 with `Content-Range: bytes first-last/size`; a last position
//!   past the end is cut to the last byte, and a suffix longer than the file selects all of it.
//! - an unsatisfiable one (it starts past the end, or `bytes=-0`): 416 with
//!   `Content-Range: bytes */size` and the API's JSON error body.
//!
//! Every answer says `Accept-Ranges: bytes`, its `Content-Length`, the type of the media (from
//! its name) and the file's `ETag` and `Last-Modified`. The body streams from disk.

use std::io::SeekFrom;
use std::ops::RangeInclusive;
use std::path::Path;
use std::time::UNIX_EPOCH;

use http_range_header::{RangeUnsatisfiableError, parse_range_header};
use poem::http::{HeaderMap, HeaderValue, StatusCode, header};
use poem::{Body, Response};
use tokio::io::{AsyncReadExt, AsyncSeekExt};
use tokio_util::io::ReaderStream;

use crate::error::{ApiError, ErrorCode, error_response};

/// Bytes read from disk at a time while streaming.
const CHUNK_BYTES: usize = 64 << 10;

/// What a request gets of a file of a known size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// The whole file (200).
    Whole,
    /// One range of it, both ends inside the file (206).
    Part(RangeInclusive<u64>),
    /// Nothing: the range starts past the end, or selects no byte (416).
    Unsatisfiable,
}

/// What the `Range` header `range` selects of a file of `size` bytes.
pub fn select(range: Option<&str>, size: u64) -> Selection {
    let Some(range) = range else {
        return Selection::Whole;
    };
    let parsed = match parse_range_header(range) {
        Ok(parsed) => parsed,
        // Not a valid bytes range (or one the parser will not tolerate): ignored.
        Err(_) => return Selection::Whole,
    };
    if parsed.len() > 1 {
        return Selection::Whole;
    }
    match parsed.validate(size) {
        Ok(ranges) => ranges.into_iter().next().map_or(Selection::Whole, Selection::Part),
        Err(RangeUnsatisfiableError::Unsatisfiable) => Selection::Unsatisfiable,
        Err(_) => Selection::Whole,
    }
}

/// The file's validators: a strong `ETag` (stored media never changes in place: a new upload is
/// a new file, so its size and modification time name its version) and `Last-Modified`.
struct Validators {
    etag: String,
    last_modified: Option<String>,
}

impl Validators {
    fn of(metadata: &std::fs::Metadata) -> Validators {
        let modified = metadata.modified().ok();
        let nanos = modified.and_then(|m| m.duration_since(UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos());
        Validators {
            etag: format!("\"{:x}-{:x}\"", metadata.len(), nanos),
            last_modified: modified.map(httpdate::fmt_http_date),
        }
    }

    /// Whether `If-Range` (absent, an entity tag or a date) lets the `Range` header apply.
    fn range_applies(&self, headers: &HeaderMap) -> bool {
        let Some(if_range) = headers.get(header::IF_RANGE).and_then(|v| v.to_str().ok()) else {
            return true;
        };
        let if_range = if_range.trim();
        if if_range.starts_with('"') {
            return if_range == self.etag;
        }
        // A date matches only the exact modification date (to the second, as dates are sent).
        match (httpdate::parse_http_date(if_range), &self.last_modified) {
            (Ok(date), Some(ours)) => httpdate::parse_http_date(ours).ok() == Some(date),
            _ => false,
        }
    }

    /// Whether `If-None-Match` names this version (or `*`): then 304.
    fn not_modified(&self, headers: &HeaderMap) -> bool {
        let Some(tags) = headers.get(header::IF_NONE_MATCH).and_then(|v| v.to_str().ok()) else {
            return false;
        };
        tags.split(',').map(|t| t.trim().trim_start_matches("W/")).any(|t| t == "*" || t == self.etag)
    }
}

/// Answers a request for the file at `path`, whose name gives its media type.
pub async fn serve(headers: &HeaderMap, path: &Path) -> Response {
    match answer(headers, path).await {
        Ok(response) => response,
        Err(e) => poem::IntoResponse::into_response(e),
    }
}

async fn answer(headers: &HeaderMap, path: &Path) -> Result<Response, ApiError> {
    let mut file = tokio::fs::File::open(path).await.map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            ApiError::new(StatusCode::NOT_FOUND, "The media file of this job is missing", Some("jobId".into()))
        }
        _ => ApiError::internal("Opening the media", &e),
    })?;
    let metadata = file.metadata().await.map_err(|e| ApiError::internal("Reading the media's size", &e))?;
    let size = metadata.len();
    let validators = Validators::of(&metadata);
    let content_type = mime_guess::from_path(path).first_or_octet_stream();

    let mut response = if validators.not_modified(headers) {
        Response::builder().status(StatusCode::NOT_MODIFIED).finish()
    } else {
        let range = headers.get(header::RANGE).filter(|_| validators.range_applies(headers));
        // A Range header that is not even text is as invalid as any other: ignored.
        let selection = match range.map(|v| v.to_str()) {
            Some(Ok(value)) => select(Some(value), size),
            _ => Selection::Whole,
        };
        match selection {
            Selection::Unsatisfiable => {
                let shown = range.and_then(|v| v.to_str().ok()).unwrap_or_default();
                let mut response = error_response(
                    StatusCode::RANGE_NOT_SATISFIABLE,
                    ErrorCode::RangeNotSatisfiable,
                    format!("The Range {shown} selects no byte of the media, which has {size} bytes"),
                );
                insert(&mut response, header::CONTENT_RANGE, format!("bytes */{size}"));
                response
            }
            Selection::Whole => {
                let mut response = Response::builder().status(StatusCode::OK).body(stream(file, size));
                insert(&mut response, header::CONTENT_TYPE, content_type.to_string());
                insert(&mut response, header::CONTENT_LENGTH, size.to_string());
                response
            }
            Selection::Part(part) => {
                let (first, last) = (*part.start(), *part.end());
                let length = last - first + 1;
                file.seek(SeekFrom::Start(first)).await.map_err(|e| ApiError::internal("Reading the media", &e))?;
                let mut response = Response::builder().status(StatusCode::PARTIAL_CONTENT).body(stream(file, length));
                insert(&mut response, header::CONTENT_TYPE, content_type.to_string());
                insert(&mut response, header::CONTENT_LENGTH, length.to_string());
                insert(&mut response, header::CONTENT_RANGE, format!("bytes {first}-{last}/{size}"));
                response
            }
        }
    };
    insert(&mut response, header::ACCEPT_RANGES, "bytes".to_owned());
    insert(&mut response, header::ETAG, validators.etag.clone());
    if let Some(date) = &validators.last_modified {
        insert(&mut response, header::LAST_MODIFIED, date.clone());
    }
    Ok(response)
}

/// `length` bytes of `file` from where it stands, read as they are sent.
fn stream(file: tokio::fs::File, length: u64) -> Body {
    Body::from_bytes_stream(ReaderStream::with_capacity(file.take(length), CHUNK_BYTES))
}

fn insert(response: &mut Response, name: header::HeaderName, value: String) {
    if let Ok(value) = HeaderValue::from_str(&value) {
        response.headers_mut().insert(name, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIZE: u64 = 96_078;

    #[test]
    fn one_range_inside_the_file_is_a_part() {
        assert_eq!(select(Some("bytes=0-99"), SIZE), Selection::Part(0..=99));
        assert_eq!(select(Some("bytes=96077-"), SIZE), Selection::Part(96_077..=96_077));
        assert_eq!(select(Some("bytes=-100"), SIZE), Selection::Part(95_978..=96_077));
    }

    #[test]
    fn a_last_position_past_the_end_is_cut_and_a_long_suffix_selects_everything() {
        assert_eq!(select(Some("bytes=0-99999999"), SIZE), Selection::Part(0..=96_077));
        assert_eq!(select(Some("bytes=-99999999"), SIZE), Selection::Part(0..=96_077));
    }

    #[test]
    fn a_range_that_selects_no_byte_is_unsatisfiable() {
        for range in ["bytes=99999999-", "bytes=96078-", "bytes=96078-96100", "bytes=-0"] {
            assert_eq!(select(Some(range), SIZE), Selection::Unsatisfiable, "{range}");
        }
        assert_eq!(select(Some("bytes=0-0"), 0), Selection::Unsatisfiable, "an empty file has no first byte");
    }

    #[test]
    fn invalid_and_multiple_ranges_are_ignored() {
        for range in ["bytes=5-2", "items=0-1", "bytes=abc", "bytes=", "bytes=0-1,5-9", "bytes=0-1, 99999999-"] {
            assert_eq!(select(Some(range), SIZE), Selection::Whole, "{range}");
        }
        assert_eq!(select(None, SIZE), Selection::Whole);
    }
}
