//! What a stored media file holds, read from its content (never its name): its duration, for the
//! upload edge and the probe stage alike. The media store does this so that nothing outside
//! `actors` reaches the speech engine's decoder.

use std::path::{Path, PathBuf};

use scribe_whisper::audio::{self, AudioError};

use super::MediaStore;

/// Why a file's duration could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The content is not usable media (not audio or video, no audio track, cut short...): the
    /// client's mistake, said in words a client reads.
    #[error(transparent)]
    NotMedia(AudioError),
    /// The file could not be read: the server's problem.
    #[error(transparent)]
    Unreadable(AudioError),
    /// The probe itself failed (it panicked).
    #[error("Inspecting the media failed unexpectedly: {0}")]
    Crashed(String),
}

impl MediaStore {
    /// The duration of the media at `path`, in milliseconds (the decoder runs off the async
    /// threads).
    pub async fn probe(&self, path: &Path) -> Result<u64, ProbeError> {
        let path: PathBuf = path.to_owned();
        let in_job = tracing::Span::current();
        let probed = tokio::task::spawn_blocking(move || in_job.in_scope(|| audio::probe(&path)))
            .await
            .map_err(|e| ProbeError::Crashed(e.to_string()))?;
        match probed {
            Ok(info) => Ok((info.duration_s * 1000.0).round().max(0.0) as u64),
            Err(e @ AudioError::Io { .. }) => Err(ProbeError::Unreadable(e)),
            Err(e) => Err(ProbeError::NotMedia(e)),
        }
    }
}
