//! Downloads a client's `sourceUrl` into the [`MediaStore`], safely and with clear failures.
//!
//! Every hop (the URL and each redirect) passes the [`AddressGuard`], and the connection is pinned
//! to the addresses the guard vetted, so redirects and DNS cannot lead into the operator's network.
//! That is why redirects are followed here (at most `max_redirects`) rather than by reqwest.
//! The body streams chunk by chunk into a temp file with a byte cap; it is never whole in memory.
//! The whole download, redirects included, has an overall deadline: a server that drips a byte
//! a second never times out between chunks, and would otherwise hold a download slot for hours.
//! Each failure is a [`FetchError`] whose message can go straight into a job's `errorMsg`.

use std::time::Duration;

use tokio::time::{Instant, timeout_at};

use reqwest::header::{CONTENT_DISPOSITION, CONTENT_TYPE, LOCATION};
use url::Url;

use super::address_guard::{AddressGuard, GuardError};
use super::human;
use super::storage::{MediaError, MediaStore, StoredMedia, TempMedia};

/// Largest file accepted from `upload-media-from-url` (the spec's 16 GB).
pub const MAX_URL_MEDIA_BYTES: u64 = 16_000_000_000;

/// Longest a whole download may take by default (operator setting `--download-deadline`).
pub const DEFAULT_DOWNLOAD_DEADLINE: Duration = Duration::from_secs(30 * 60);

/// How downloads behave. `Default` gives the production values.
#[derive(Debug, Clone)]
pub struct FetchConfig {
    /// Longest wait for a TCP (and TLS) connection.
    pub connect_timeout: Duration,
    /// Longest wait for the next bytes of the response (reset by every chunk received).
    pub read_timeout: Duration,
    /// Longest the whole download may take, from the first request to the last byte.
    pub deadline: Duration,
    /// Redirects followed before giving up.
    pub max_redirects: usize,
    /// Largest body accepted, in bytes.
    pub max_bytes: u64,
    /// Allow loopback and private addresses (operator setting; tests use loopback).
    pub allow_private: bool,
}

impl Default for FetchConfig {
    fn default() -> Self {
        FetchConfig {
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(30),
            deadline: DEFAULT_DOWNLOAD_DEADLINE,
            max_redirects: 5,
            max_bytes: MAX_URL_MEDIA_BYTES,
            allow_private: false,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("The URL is not valid: {0}")]
    InvalidUrl(String),
    #[error("The URL cannot be fetched: {0}")]
    Refused(GuardError),
    #[error("The host {host} is unreachable: {reason}")]
    Unreachable { host: String, reason: String },
    #[error("The server answered {status} {reason}")]
    HttpStatus { status: u16, reason: String },
    #[error("The file is larger than the limit of {}", human_bytes(.limit))]
    TooLarge { limit: u64 },
    #[error("The URL redirected more than {max} times")]
    TooManyRedirects { max: usize },
    #[error("The server at {host} did not answer within {} s", seconds(.after))]
    Timeout { host: String, after: Duration },
    #[error(
        "The download from {host} did not finish within the limit of {}: the server sent {} in {}",
        human::limit(*.limit), human::size(*.received), human::limit(*.limit)
    )]
    TooSlow { host: String, received: u64, limit: Duration },
    #[error("The download from {host} was interrupted: {reason}")]
    Interrupted { host: String, reason: String },
    #[error("The URL returned a web page ({content_type}), not a media file")]
    NotMedia { content_type: String },
    #[error("The download could not be stored: {0}")]
    Storage(MediaError),
}

impl From<MediaError> for FetchError {
    fn from(e: MediaError) -> Self {
        match e {
            MediaError::TooLarge { limit } => FetchError::TooLarge { limit },
            other => FetchError::Storage(other),
        }
    }
}

/// A finished download, not yet committed to a job.
#[derive(Debug)]
pub struct Download {
    pub temp: TempMedia,
    /// From `Content-Disposition`, else the last segment of the final URL's path (unsanitized;
    /// [`MediaStore::commit`] sanitizes).
    pub file_name: String,
    /// The URL the body came from, after redirects.
    pub final_url: Url,
}

/// Fetches URLs under one [`FetchConfig`].
#[derive(Debug, Clone)]
pub struct Fetcher {
    config: FetchConfig,
    guard: AddressGuard,
}

impl Fetcher {
    pub fn new(config: FetchConfig) -> Self {
        let guard = AddressGuard::new(config.allow_private);
        Fetcher { config, guard }
    }

    pub fn config(&self) -> &FetchConfig {
        &self.config
    }

    /// Downloads `url` and commits it as the media of `job_id`.
    pub async fn fetch_to_store(&self, url: &str, store: &MediaStore, job_id: &str) -> Result<StoredMedia, FetchError> {
        let download = self.download(url, store).await?;
        Ok(store.commit(download.temp, job_id, &download.file_name).await?)
    }

    /// Downloads `url` into a temp file of `store`, following redirects hop by hop.
    pub async fn download(&self, url: &str, store: &MediaStore) -> Result<Download, FetchError> {
        let mut url = Url::parse(url).map_err(|e| FetchError::InvalidUrl(e.to_string()))?;
        let deadline = Instant::now() + self.config.deadline;
        let mut redirects = 0;
        loop {
            let host = url.host_str().unwrap_or_default().to_owned();
            let response = timeout_at(deadline, self.request(&url)).await.map_err(|_| self.too_slow(&host, 0))??;
            let status = response.status();
            if let Some(location) = response.headers().get(LOCATION).filter(|_| status.is_redirection()) {
                if redirects == self.config.max_redirects {
                    return Err(FetchError::TooManyRedirects { max: self.config.max_redirects });
                }
                redirects += 1;
                let location =
                    location.to_str().map_err(|_| FetchError::InvalidUrl("the redirect target is not text".into()))?;
                url =
                    url.join(location).map_err(|e| FetchError::InvalidUrl(format!("redirect to {location:?}: {e}")))?;
                continue;
            }
            if !status.is_success() {
                return Err(FetchError::HttpStatus {
                    status: status.as_u16(),
                    reason: status.canonical_reason().unwrap_or("").to_owned(),
                });
            }
            // A share link that answers with an HTML page is the most common wrong URL; say so
            // before downloading it. Everything else is judged by its content later (probing).
            let content_type = response.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
            let mime = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
            if mime == "text/html" || mime == "application/xhtml+xml" {
                return Err(FetchError::NotMedia { content_type: mime });
            }
            if response.content_length().is_some_and(|len| len > self.config.max_bytes) {
                return Err(FetchError::TooLarge { limit: self.config.max_bytes });
            }
            let file_name = response
                .headers()
                .get(CONTENT_DISPOSITION)
                .and_then(|v| v.to_str().ok())
                .and_then(file_name_from_content_disposition)
                .or_else(|| file_name_from_url(&url))
                .unwrap_or_else(|| "media".to_owned());
            let temp = self.receive_body(response, store, &host, deadline).await?;
            return Ok(Download { temp, file_name, final_url: url });
        }
    }

    /// Sends one GET to a guarded, pinned address; no redirect is followed.
    async fn request(&self, url: &Url) -> Result<reqwest::Response, FetchError> {
        let vetted = self.guard.check(url).await.map_err(|e| match e {
            GuardError::Unresolvable { host, reason } => FetchError::Unreachable { host, reason },
            refused => FetchError::Refused(refused),
        })?;
        let client = vetted
            .pinned_client()
            .connect_timeout(self.config.connect_timeout)
            .read_timeout(self.config.read_timeout)
            .user_agent(concat!("Scribe/", env!("CARGO_PKG_VERSION")));
        let client = client.build().map_err(|e| FetchError::Interrupted {
            host: vetted.host.clone(),
            reason: format!("the HTTP client could not start: {}", root_cause(&e)),
        })?;
        client.get(url.clone()).send().await.map_err(|e| self.classify(&vetted.host, e))
    }

    async fn receive_body(
        &self,
        mut response: reqwest::Response,
        store: &MediaStore,
        host: &str,
        deadline: Instant,
    ) -> Result<TempMedia, FetchError> {
        let mut temp = store.create_temp(self.config.max_bytes).await?;
        loop {
            let chunk = timeout_at(deadline, response.chunk())
                .await
                .map_err(|_| self.too_slow(host, temp.written()))?
                .map_err(|e| self.classify(host, e))?;
            let Some(chunk) = chunk else { return Ok(temp) };
            temp.write_chunk(&chunk).await?;
        }
    }

    fn too_slow(&self, host: &str, received: u64) -> FetchError {
        FetchError::TooSlow { host: host.to_owned(), received, limit: self.config.deadline }
    }

    fn classify(&self, host: &str, error: reqwest::Error) -> FetchError {
        let host = host.to_owned();
        if error.is_connect() {
            FetchError::Unreachable { host, reason: root_cause(&error) }
        } else if error.is_timeout() {
            FetchError::Timeout { host, after: self.config.read_timeout }
        } else {
            FetchError::Interrupted { host, reason: root_cause(&error) }
        }
    }
}

/// The innermost error message (reqwest's outer ones only say "error sending request").
fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = error;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

/// `filename*=UTF-8''...` (RFC 6266/5987) wins over `filename="..."`.
fn file_name_from_content_disposition(header: &str) -> Option<String> {
    let mut plain = None;
    for part in header.split(';').map(str::trim) {
        let Some((key, value)) = part.split_once('=') else {
            continue;
        };
        match key.trim().to_ascii_lowercase().as_str() {
            "filename*" => {
                let encoded = value.trim().split_once("''").map_or(value, |(_charset, rest)| rest);
                let name = percent_decode(encoded.trim_matches('"'));
                if !name.is_empty() {
                    return Some(name);
                }
            }
            "filename" => {
                let name = value.trim().trim_matches('"').replace("\\\"", "\"");
                if !name.is_empty() {
                    plain = Some(name);
                }
            }
            _ => {}
        }
    }
    plain
}

/// `%XX` escapes decoded; invalid escapes kept as they are, invalid UTF-8 replaced.
fn percent_decode(text: &str) -> String {
    percent_encoding::percent_decode_str(text).decode_utf8_lossy().into_owned()
}

fn file_name_from_url(url: &Url) -> Option<String> {
    let last = url.path_segments()?.rev().find(|s| !s.is_empty())?;
    Some(percent_decode(last))
}

fn seconds(d: &Duration) -> f32 {
    d.as_secs_f32()
}

fn human_bytes(bytes: &u64) -> String {
    let bytes = *bytes;
    const GB: u64 = 1_000_000_000;
    const MB: u64 = 1_000_000;
    if bytes >= GB && bytes.is_multiple_of(GB) {
        format!("{} GB", bytes / GB)
    } else if bytes >= MB && bytes.is_multiple_of(MB) {
        format!("{} MB", bytes / MB)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_come_from_content_disposition_first() {
        let cases = [
            ("attachment; filename=\"talk.mp3\"", Some("talk.mp3")),
            ("attachment; filename=plain.wav", Some("plain.wav")),
            ("attachment; filename=\"a.wav\"; filename*=UTF-8''na%C3%AFve%20talk.wav", Some("naïve talk.wav")),
            ("inline", None),
            ("attachment; filename=\"\"", None),
        ];
        for (header, want) in cases {
            assert_eq!(file_name_from_content_disposition(header).as_deref(), want, "{header}");
        }
    }

    #[test]
    fn file_names_fall_back_to_the_url_path() {
        let name = |u: &str| file_name_from_url(&Url::parse(u).unwrap());
        assert_eq!(name("https://example.com/media/caf%C3%A9.wav?x=1").as_deref(), Some("café.wav"));
        assert_eq!(name("https://example.com/dir/").as_deref(), Some("dir"));
        assert_eq!(name("https://example.com/"), None);
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
    }

    #[test]
    fn limits_read_well() {
        assert_eq!(
            FetchError::TooLarge { limit: MAX_URL_MEDIA_BYTES }.to_string(),
            "The file is larger than the limit of 16 GB"
        );
        assert_eq!(
            FetchError::HttpStatus { status: 404, reason: "Not Found".into() }.to_string(),
            "The server answered 404 Not Found"
        );
    }
}
