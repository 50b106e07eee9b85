//! Links that work without an `apiKey`, because every parameter is signed: EBU-STL downloads
//! (`GET /api/downloads/stl`, handed out by `/jobs/export-stl`) and a job's media for the work
//! API's audio player (`GET /api/work/media`, in a task's detail and the editor's document).
//! Both the exports and the work API make and check them; neither owns them, so they live here.
//!
//! An STL link is `<public_url>/api/downloads/stl?jobId=..&rows=..&screen=..&expires=..&sig=..` where
//! `expires` is in Unix seconds and `sig` is the URL-safe base64 (no padding) of
//! HMAC-SHA256(key, "scribe-stl-v1\n{jobId}\n{rows}\n{screen}\n{expires}"). Numbers are written in
//! their shortest form (`2`, `1.5`), so a value parsed back from the link signs the same. A media
//! link signs "scribe-media-v1\n{jobId}\n{expires}" the same way.
//!
//! The key is 32 random bytes kept in `<data_dir>/link-secret` (base64, mode 0600), created on
//! first use, so links stay valid across restarts. Deleting that file invalidates every link
//! handed out so far; a new key is created on the next export.

use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use hmac::{Hmac, KeyInit, Mac};
use poem::http::StatusCode;
use rand::RngCore;
use scribe_actors::clock::now_ms;
use sha2::Sha256;

use crate::API_PREFIX;
use crate::error::ApiError;
use crate::state::ApiSettings;

/// Path of the signed media download (audio player), under [`API_PREFIX`].
pub const MEDIA_PATH: &str = "/work/media";
/// Path of the signed STL download, under [`API_PREFIX`].
pub const DOWNLOAD_STL_PATH: &str = "/downloads/stl";

/// Name of the key file in the data directory.
pub const SECRET_FILE: &str = "link-secret";
/// What is signed starts with this, so that a signature can never be replayed for another use.
const CONTEXT: &str = "scribe-stl-v1";
const MEDIA_CONTEXT: &str = "scribe-media-v1";
const KEY_BYTES: usize = 32;

/// The parameters of one STL download: what is rendered, and until when the link works.
#[derive(Debug, Clone, PartialEq)]
pub struct StlLink {
    pub job_id: String,
    pub rows: i64,
    pub screen: f64,
    /// Unix seconds after which the link is refused.
    pub expires: u64,
}

/// Why a link is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    #[error(
        "This link is not valid: its signature does not match its parameters. Ask for a new link (/jobs/export-stl, or the task again)"
    )]
    BadSignature,
    #[error(
        "This link expired at {expired_at} (Unix seconds). Ask for a new link (/jobs/export-stl, or the task again)"
    )]
    Expired { expired_at: u64 },
}

/// A refused link as the client sees it: 403 naming `sig` for a bad signature, 410 naming
/// `expires` once it expired.
impl From<LinkError> for ApiError {
    fn from(e: LinkError) -> ApiError {
        match e {
            LinkError::BadSignature => ApiError::new(StatusCode::FORBIDDEN, e.to_string(), Some("sig".into())),
            LinkError::Expired { .. } => ApiError::new(StatusCode::GONE, e.to_string(), Some("expires".into())),
        }
    }
}

/// The service's signed links: the key they are signed with (read from, or created in, the
/// data directory on first use) and the public URL they start with.
pub struct SignedLinks {
    data_dir: PathBuf,
    public_url: String,
    key: tokio::sync::OnceCell<LinkKey>,
}

impl SignedLinks {
    pub fn new(data_dir: PathBuf, settings: &ApiSettings) -> SignedLinks {
        SignedLinks { data_dir, public_url: settings.public_url.clone(), key: tokio::sync::OnceCell::new() }
    }

    pub(crate) async fn key(&self) -> Result<&LinkKey, ApiError> {
        self.key
            .get_or_try_init(|| async {
                let dir = self.data_dir.clone();
                tokio::task::spawn_blocking(move || LinkKey::load_or_create(&dir).map_err(|e| e.to_string()))
                    .await
                    .map_err(|e| e.to_string())?
            })
            .await
            .map_err(|e| ApiError::internal("Loading the download-link key", &e))
    }

    /// The absolute URL of a job's media for the work API's audio player, signed for `ttl`.
    pub(crate) async fn media_url(&self, job_id: &str, ttl: Duration) -> Result<String, ApiError> {
        let expires = now_ms() / 1000 + ttl.as_secs();
        let sig = self.key().await?.sign_media(job_id, expires);
        let mut url = url::Url::parse(&self.public_url)
            .map_err(|e| ApiError::internal("Building the media link (setting public_url)", &e))?;
        let path = format!("{}{API_PREFIX}{MEDIA_PATH}", url.path().trim_end_matches('/'));
        url.set_path(&path);
        url.query_pairs_mut()
            .append_pair("jobId", job_id)
            .append_pair("expires", &expires.to_string())
            .append_pair("sig", &sig);
        Ok(url.into())
    }

    /// The absolute URL of a signed STL download.
    pub(crate) async fn stl_url(&self, link: &StlLink) -> Result<String, ApiError> {
        let sig = self.key().await?.sign(link);
        let mut url = url::Url::parse(&self.public_url)
            .map_err(|e| ApiError::internal("Building the download link (setting public_url)", &e))?;
        let path = format!("{}{API_PREFIX}{DOWNLOAD_STL_PATH}", url.path().trim_end_matches('/'));
        url.set_path(&path);
        url.query_pairs_mut()
            .append_pair("jobId", &link.job_id)
            .append_pair("rows", &link.rows.to_string())
            .append_pair("screen", &link.screen.to_string())
            .append_pair("expires", &link.expires.to_string())
            .append_pair("sig", &sig);
        Ok(url.into())
    }
}

/// Why the key could not be loaded or created.
#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error(
        "{path} does not hold a base64 key of {KEY_BYTES} bytes; delete it to create a new one (links already handed out stop working)"
    )]
    Malformed { path: PathBuf },
}

/// The HMAC key links are signed with.
#[derive(Clone)]
pub struct LinkKey([u8; KEY_BYTES]);

impl std::fmt::Debug for LinkKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LinkKey(..)")
    }
}

impl LinkKey {
    /// Reads `<data_dir>/link-secret`, creating it (mode 0600) with a random key if it does not
    /// exist. Safe against a concurrent creator: the first file to land wins and both use it.
    pub fn load_or_create(data_dir: &Path) -> Result<LinkKey, SecretError> {
        let path = data_dir.join(SECRET_FILE);
        let io_err = |path: &Path| {
            let path = path.to_owned();
            move |source| SecretError::Io { path, source }
        };
        match std::fs::read_to_string(&path) {
            Ok(text) => return LinkKey::decode(&text, &path),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_err(&path)(e)),
        }
        let mut key = [0u8; KEY_BYTES];
        rand::rng().fill_bytes(&mut key);
        // Write a private temporary file completely, then link it into place: readers never see a
        // half-written key, and an existing key is never replaced.
        let temp = data_dir.join(format!("{SECRET_FILE}.tmp-{}", std::process::id()));
        let written = (|| {
            let mut file =
                std::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&temp)?;
            file.write_all(format!("{}\n", STANDARD.encode(key)).as_bytes())?;
            file.sync_all()
        })();
        if let Err(e) = written {
            let _ = std::fs::remove_file(&temp);
            return Err(io_err(&temp)(e));
        }
        let linked = std::fs::hard_link(&temp, &path);
        let _ = std::fs::remove_file(&temp);
        match linked {
            Ok(()) => {
                std::fs::File::open(data_dir).and_then(|d| d.sync_all()).map_err(io_err(data_dir))?;
                Ok(LinkKey(key))
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                let text = std::fs::read_to_string(&path).map_err(io_err(&path))?;
                LinkKey::decode(&text, &path)
            }
            Err(e) => Err(io_err(&path)(e)),
        }
    }

    fn decode(text: &str, path: &Path) -> Result<LinkKey, SecretError> {
        let malformed = || SecretError::Malformed { path: path.to_owned() };
        let bytes = STANDARD.decode(text.trim()).map_err(|_| malformed())?;
        Ok(LinkKey(bytes.try_into().map_err(|_| malformed())?))
    }

    /// The `sig` of a link.
    pub fn sign(&self, link: &StlLink) -> String {
        URL_SAFE_NO_PAD.encode(self.mac(link).finalize().into_bytes())
    }

    /// Checks `sig` against the link's parameters (in constant time), then its expiry against
    /// `now` (Unix seconds).
    pub fn verify(&self, link: &StlLink, sig: &str, now: u64) -> Result<(), LinkError> {
        let tag = URL_SAFE_NO_PAD.decode(sig.trim()).map_err(|_| LinkError::BadSignature)?;
        self.mac(link).verify_slice(&tag).map_err(|_| LinkError::BadSignature)?;
        if now > link.expires {
            return Err(LinkError::Expired { expired_at: link.expires });
        }
        Ok(())
    }

    fn mac(&self, link: &StlLink) -> Hmac<Sha256> {
        self.mac_of(&format!("{CONTEXT}\n{}\n{}\n{}\n{}", link.job_id, link.rows, link.screen, link.expires))
    }

    /// The `sig` of a link to a job's media for the work API's audio player (its own context,
    /// so an STL signature never opens media and the reverse).
    pub fn sign_media(&self, job_id: &str, expires: u64) -> String {
        URL_SAFE_NO_PAD.encode(self.mac_of(&format!("{MEDIA_CONTEXT}\n{job_id}\n{expires}")).finalize().into_bytes())
    }

    /// Checks a media link's `sig`, then its expiry against `now` (Unix seconds).
    pub fn verify_media(&self, job_id: &str, expires: u64, sig: &str, now: u64) -> Result<(), LinkError> {
        let tag = URL_SAFE_NO_PAD.decode(sig.trim()).map_err(|_| LinkError::BadSignature)?;
        self.mac_of(&format!("{MEDIA_CONTEXT}\n{job_id}\n{expires}"))
            .verify_slice(&tag)
            .map_err(|_| LinkError::BadSignature)?;
        if now > expires {
            return Err(LinkError::Expired { expired_at: expires });
        }
        Ok(())
    }

    fn mac_of(&self, signed: &str) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes a key of any length");
        mac.update(signed.as_bytes());
        mac
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn link() -> StlLink {
        StlLink { job_id: "job-1".into(), rows: 2, screen: 2.0, expires: 1_000 }
    }

    #[test]
    fn a_signed_link_verifies_until_it_expires() {
        let dir = tempfile::tempdir().unwrap();
        let key = LinkKey::load_or_create(dir.path()).unwrap();
        let sig = key.sign(&link());
        assert_eq!(key.verify(&link(), &sig, 999), Ok(()));
        assert_eq!(key.verify(&link(), &sig, 1_000), Ok(()));
        assert_eq!(key.verify(&link(), &sig, 1_001), Err(LinkError::Expired { expired_at: 1_000 }));
    }

    #[test]
    fn changing_any_parameter_or_the_signature_breaks_the_link() {
        let dir = tempfile::tempdir().unwrap();
        let key = LinkKey::load_or_create(dir.path()).unwrap();
        let sig = key.sign(&link());
        let tampered = [
            StlLink { job_id: "job-2".into(), ..link() },
            StlLink { rows: 1, ..link() },
            StlLink { screen: 2.5, ..link() },
            StlLink { expires: 9_999_999_999, ..link() },
        ];
        for t in tampered {
            assert_eq!(key.verify(&t, &sig, 0), Err(LinkError::BadSignature), "{t:?}");
        }
        let mut bad = sig.clone().into_bytes();
        bad[0] = if bad[0] == b'A' { b'B' } else { b'A' };
        assert_eq!(key.verify(&link(), std::str::from_utf8(&bad).unwrap(), 0), Err(LinkError::BadSignature));
        assert_eq!(key.verify(&link(), "not base64!", 0), Err(LinkError::BadSignature));
        assert_eq!(key.verify(&link(), "", 0), Err(LinkError::BadSignature));
    }

    #[test]
    fn the_key_survives_a_restart_and_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let first = LinkKey::load_or_create(dir.path()).unwrap();
        let again = LinkKey::load_or_create(dir.path()).unwrap();
        assert_eq!(first.0, again.0);
        let mode = std::fs::metadata(dir.path().join(SECRET_FILE)).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let other = LinkKey::load_or_create(tempfile::tempdir().unwrap().path()).unwrap();
        assert_ne!(first.0, other.0, "each data directory gets its own random key");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file is left");
    }

    #[test]
    fn a_damaged_key_file_is_reported_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(SECRET_FILE), "short").unwrap();
        let err = LinkKey::load_or_create(dir.path()).unwrap_err();
        assert!(err.to_string().contains("delete it"), "{err}");
        assert_eq!(std::fs::read_to_string(dir.path().join(SECRET_FILE)).unwrap(), "short");
    }
}
