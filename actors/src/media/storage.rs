//! Media and transcript files on disk, under the data directory.
//!
//! Layout: `<data_dir>/media/<jobId>/<fileName>` for a job's media, `<data_dir>/transcripts/<jobId>.json`
//! for its transcript (and `<jobId>.translation.json` for translated subtitles). Uploads and downloads stream into a temp file in `media/` (same file
//! system, so the final rename is atomic) with a byte cap, in large direct writes (see `block_writer`). Only [`MediaStore::commit`] gives the
//! file its final name, after an fsync of the file and of the directories, so an event naming the
//! file is written only once the file is durable. An uncommitted temp file is removed when dropped
//! (a client that disconnects mid-upload leaves nothing behind) and at the next start after a crash.

use std::io;
use std::path::{Path, PathBuf};

use tokio::fs::File;
use tokio::io::AsyncWriteExt;

use super::block_writer::{self, BlockWriter};

/// Temp files start with this prefix; any left at start-up are remains of a crash.
const TEMP_PREFIX: &str = ".incoming-";
/// In a shared media directory, a temp file untouched this long is a crashed node's remains.
pub const SHARED_TEMP_STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(3600);
/// Longest file name kept, in bytes (file systems allow 255).
const MAX_NAME_BYTES: usize = 180;

#[derive(Debug, thiserror::Error)]
pub enum MediaError {
    #[error("the file is larger than the limit of {limit} bytes")]
    TooLarge { limit: u64 },
    #[error("invalid job id {0:?} for a media path")]
    InvalidJobId(String),
    #[error("media storage failed while {action} ({path}): {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

fn io_error<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> MediaError + 'a {
    move |source| MediaError::Io { action, path: path.to_owned(), source }
}

/// The media and transcript directories of one data directory.
#[derive(Debug, Clone)]
pub struct MediaStore {
    /// The directory event paths are relative to (`media/` and `transcripts/` are in it).
    root: PathBuf,
    media_dir: PathBuf,
    transcripts_dir: PathBuf,
}

/// A committed media file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredMedia {
    pub path: PathBuf,
    /// The sanitized name the file is stored under.
    pub file_name: String,
    pub size: u64,
}

impl MediaStore {
    /// Creates `<data_dir>/media` and `<data_dir>/transcripts` if needed and removes temp files
    /// left by a crash.
    pub async fn open(data_dir: &Path) -> Result<Self, MediaError> {
        Self::open_with_cleanup(data_dir, None).await
    }

    /// Like [`MediaStore::open`], for a directory that several nodes share (`--media-dir`):
    /// another node may be writing a temp file right now, so only those untouched for
    /// [`SHARED_TEMP_STALE_AFTER`] are taken for the remains of a crash.
    pub async fn open_shared(dir: &Path) -> Result<Self, MediaError> {
        Self::open_with_cleanup(dir, Some(SHARED_TEMP_STALE_AFTER)).await
    }

    async fn open_with_cleanup(data_dir: &Path, stale_after: Option<std::time::Duration>) -> Result<Self, MediaError> {
        let store = MediaStore {
            root: data_dir.to_owned(),
            media_dir: data_dir.join("media"),
            transcripts_dir: data_dir.join("transcripts"),
        };
        for dir in [&store.media_dir, &store.transcripts_dir] {
            tokio::fs::create_dir_all(dir).await.map_err(io_error("creating a directory", dir))?;
        }
        for dir in [&store.media_dir, &store.transcripts_dir] {
            let mut entries = tokio::fs::read_dir(dir).await.map_err(io_error("listing a directory", dir))?;
            while let Some(entry) = entries.next_entry().await.map_err(io_error("listing a directory", dir))? {
                if entry.file_name().to_string_lossy().starts_with(TEMP_PREFIX) {
                    let path = entry.path();
                    if let Some(stale_after) = stale_after {
                        let modified = entry.metadata().await.and_then(|m| m.modified()).ok();
                        let age = modified.and_then(|m| m.elapsed().ok()).unwrap_or_default();
                        if age < stale_after {
                            continue; // perhaps another node's upload in progress
                        }
                    }
                    tracing::info!(path = %path.display(), "removing a partial file left by an interrupted run");
                    tokio::fs::remove_file(&path).await.map_err(io_error("removing a partial file", &path))?;
                }
            }
        }
        Ok(store)
    }

    pub fn media_dir(&self) -> &Path {
        &self.media_dir
    }

    /// `path` as events record it: relative to the store's directory.
    pub fn relative(&self, path: &Path) -> String {
        path.strip_prefix(&self.root).unwrap_or(path).to_string_lossy().into_owned()
    }

    /// Starts a new file that may grow to at most `limit` bytes.
    pub async fn create_temp(&self, limit: u64) -> Result<TempMedia, MediaError> {
        let path = self.media_dir.join(format!("{TEMP_PREFIX}{}.part", uuid::Uuid::new_v4()));
        let writer = block_writer::create(&path).await.map_err(io_error("creating a temp file", &path))?;
        Ok(TempMedia { writer, path, written: 0, limit, committed: false })
    }

    /// Makes `temp` the job's media file `<jobId>/<file_name>` (name sanitized), durably.
    pub async fn commit(&self, temp: TempMedia, job_id: &str, file_name: &str) -> Result<StoredMedia, MediaError> {
        let job_dir = self.job_dir(job_id)?;
        let file_name = sanitize_file_name(file_name);
        let mut temp = temp;
        temp.writer.finish().await.map_err(io_error("writing", &temp.path))?;
        tokio::fs::create_dir_all(&job_dir).await.map_err(io_error("creating a job directory", &job_dir))?;
        let path = job_dir.join(&file_name);
        tokio::fs::rename(&temp.path, &path).await.map_err(io_error("moving the file into place", &path))?;
        temp.committed = true;
        sync_dir(&job_dir).await?;
        sync_dir(&self.media_dir).await?;
        Ok(StoredMedia { path, file_name, size: temp.written })
    }

    /// Where a job's committed media file named `file_name` lives.
    pub fn media_path(&self, job_id: &str, file_name: &str) -> Result<PathBuf, MediaError> {
        Ok(self.job_dir(job_id)?.join(sanitize_file_name(file_name)))
    }

    /// Where a job's transcript lives.
    pub fn transcript_path(&self, job_id: &str) -> Result<PathBuf, MediaError> {
        check_job_id(job_id)?;
        Ok(self.transcripts_dir.join(format!("{job_id}.json")))
    }

    /// Writes a job's transcript atomically (temp file, fsync, rename, fsync directory): readers
    /// see the old file or the new one, never a part.
    pub async fn write_transcript(&self, job_id: &str, json: &[u8]) -> Result<PathBuf, MediaError> {
        self.write_document(self.transcript_path(job_id)?, json).await
    }

    /// Where a job's translated document (direct translatedSubtitles) lives, beside its
    /// transcript: `<data_dir>/transcripts/<jobId>.translation.json`.
    pub fn translation_path(&self, job_id: &str) -> Result<PathBuf, MediaError> {
        check_job_id(job_id)?;
        Ok(self.transcripts_dir.join(format!("{job_id}.translation.json")))
    }

    /// Writes a job's translated document atomically, as [`MediaStore::write_transcript`].
    pub async fn write_translation(&self, job_id: &str, json: &[u8]) -> Result<PathBuf, MediaError> {
        self.write_document(self.translation_path(job_id)?, json).await
    }

    /// A job's translated document, or `None` if none was written.
    pub async fn read_translation(&self, job_id: &str) -> Result<Option<Vec<u8>>, MediaError> {
        read_if_there(&self.translation_path(job_id)?).await
    }

    async fn write_document(&self, path: PathBuf, json: &[u8]) -> Result<PathBuf, MediaError> {
        let temp = self.transcripts_dir.join(format!("{TEMP_PREFIX}{}.part", uuid::Uuid::new_v4()));
        let result = async {
            let mut file = File::create_new(&temp).await.map_err(io_error("creating a temp file", &temp))?;
            file.write_all(json).await.map_err(io_error("writing", &temp))?;
            file.sync_all().await.map_err(io_error("syncing", &temp))?;
            tokio::fs::rename(&temp, &path).await.map_err(io_error("moving the file into place", &path))?;
            sync_dir(&self.transcripts_dir).await
        }
        .await;
        if result.is_err() {
            let _ = tokio::fs::remove_file(&temp).await;
        }
        result.map(|()| path)
    }

    /// Where what the decoder reported about a job's transcript lives (see
    /// `scribe_domain::decoding::DecodingRecord`), beside it: `<data_dir>/transcripts/<jobId>.decoding.json`.
    pub fn decoding_path(&self, job_id: &str) -> Result<PathBuf, MediaError> {
        check_job_id(job_id)?;
        Ok(self.transcripts_dir.join(format!("{job_id}.decoding.json")))
    }

    /// Writes a job's decoding record atomically, as [`MediaStore::write_transcript`].
    pub async fn write_decoding(&self, job_id: &str, json: &[u8]) -> Result<PathBuf, MediaError> {
        self.write_document(self.decoding_path(job_id)?, json).await
    }

    /// Where the document of a live session's finals lives (see `live::recording`), beside its
    /// transcript: `<data_dir>/transcripts/<jobId>.live-finals.json`.
    pub fn live_finals_path(&self, job_id: &str) -> Result<PathBuf, MediaError> {
        check_job_id(job_id)?;
        Ok(self.transcripts_dir.join(format!("{job_id}.live-finals.json")))
    }

    /// Writes a live session's finals atomically, as [`MediaStore::write_transcript`].
    pub async fn write_live_finals(&self, job_id: &str, json: &[u8]) -> Result<PathBuf, MediaError> {
        self.write_document(self.live_finals_path(job_id)?, json).await
    }

    /// A job's decoding record, or `None` if none was written.
    pub async fn read_decoding(&self, job_id: &str) -> Result<Option<Vec<u8>>, MediaError> {
        read_if_there(&self.decoding_path(job_id)?).await
    }

    /// A job's transcript, or `None` if none was written.
    pub async fn read_transcript(&self, job_id: &str) -> Result<Option<Vec<u8>>, MediaError> {
        read_if_there(&self.transcript_path(job_id)?).await
    }

    /// Writes a revision of a task's document into the job's `work` directory (temp file,
    /// fsync, rename, fsync directory) under a fresh name; returns its path.
    pub async fn write_work_document(&self, job_id: &str, task_id: &str, json: &[u8]) -> Result<PathBuf, MediaError> {
        let dir = self.job_dir(job_id)?.join("work");
        tokio::fs::create_dir_all(&dir).await.map_err(io_error("creating a directory", &dir))?;
        let name = format!("{}-{}.json", sanitize_file_name(task_id), uuid::Uuid::now_v7());
        let path = dir.join(name);
        let temp = dir.join(format!("{TEMP_PREFIX}{}.part", uuid::Uuid::new_v4()));
        let result = async {
            let mut file = File::create_new(&temp).await.map_err(io_error("creating a temp file", &temp))?;
            file.write_all(json).await.map_err(io_error("writing", &temp))?;
            file.sync_all().await.map_err(io_error("syncing", &temp))?;
            tokio::fs::rename(&temp, &path).await.map_err(io_error("moving the file into place", &path))?;
            sync_dir(&dir).await
        }
        .await;
        if result.is_err() {
            let _ = tokio::fs::remove_file(&temp).await;
        }
        result.map(|()| path)
    }

    /// Removes a file written by [`Self::write_work_document`] that was not recorded.
    pub async fn discard(&self, path: &Path) {
        if let Err(e) = tokio::fs::remove_file(path).await {
            tracing::warn!(path = %path.display(), error = %e, "removing an unrecorded document");
        }
    }

    /// Removes a job's media and transcript files; nothing to remove is not an error.
    pub async fn delete_job(&self, job_id: &str) -> Result<(), MediaError> {
        let job_dir = self.job_dir(job_id)?;
        match tokio::fs::remove_dir_all(&job_dir).await {
            Ok(()) => sync_dir(&self.media_dir).await?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_error("deleting", &job_dir)(e)),
        }
        for document in [
            self.transcript_path(job_id)?,
            self.translation_path(job_id)?,
            self.decoding_path(job_id)?,
            self.live_finals_path(job_id)?,
        ] {
            match tokio::fs::remove_file(&document).await {
                Ok(()) => sync_dir(&self.transcripts_dir).await?,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(io_error("deleting", &document)(e)),
            }
        }
        Ok(())
    }

    /// Removes what a worker wrote for a job deleted while it worked (the edge already removed
    /// what was there when the job was deleted). Logged in the caller's span (the job's).
    pub async fn remove_files_of_deleted(&self, job_id: &str) {
        tracing::info!("the job was deleted while it was worked on; removing its files");
        if let Err(e) = self.delete_job(job_id).await {
            tracing::error!(error = %e, "removing the files of a deleted job");
        }
    }

    fn job_dir(&self, job_id: &str) -> Result<PathBuf, MediaError> {
        check_job_id(job_id)?;
        Ok(self.media_dir.join(job_id))
    }
}

/// `path` relative to the data directory, as events record it.
pub fn relative(data_dir: &Path, path: &Path) -> String {
    path.strip_prefix(data_dir).unwrap_or(path).to_string_lossy().into_owned()
}

/// A whole file, or `None` when there is none.
async fn read_if_there(path: &Path) -> Result<Option<Vec<u8>>, MediaError> {
    match tokio::fs::read(path).await {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_error("reading", path)(e)),
    }
}

/// A file being received. Dropping it without [`MediaStore::commit`] deletes it.
/// Its writes are not cancel safe: after a cancelled `write_chunk`, drop it.
#[derive(Debug)]
pub struct TempMedia {
    writer: BlockWriter,
    path: PathBuf,
    written: u64,
    limit: u64,
    committed: bool,
}

impl TempMedia {
    /// Appends a chunk; fails with [`MediaError::TooLarge`] (writing nothing) if the file would
    /// pass its limit.
    pub async fn write_chunk(&mut self, chunk: &[u8]) -> Result<(), MediaError> {
        let new_len = self.written + chunk.len() as u64;
        if new_len > self.limit {
            return Err(MediaError::TooLarge { limit: self.limit });
        }
        self.writer.write(chunk).await.map_err(io_error("writing", &self.path))?;
        self.written = new_len;
        Ok(())
    }

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Where the partial file currently is (it moves on commit).
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempMedia {
    fn drop(&mut self) {
        if !self.committed {
            // A plain unlink: quick, and Drop cannot await.
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Job ids become directory names: only ASCII letters, digits, `-` and `_` are accepted.
fn check_job_id(job_id: &str) -> Result<(), MediaError> {
    let valid = !job_id.is_empty()
        && job_id.len() <= 128
        && job_id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if valid { Ok(()) } else { Err(MediaError::InvalidJobId(job_id.to_owned())) }
}

/// Turns a client-supplied name into a safe single path component: the last segment of any path,
/// no control or reserved characters, no leading dot, bounded length, never empty.
pub fn sanitize_file_name(name: &str) -> String {
    let last = name.rsplit(['/', '\\']).next().unwrap_or("");
    let mut clean: String = last
        .chars()
        .map(|c| if c.is_control() || matches!(c, ':' | '*' | '?' | '"' | '<' | '>' | '|') { '_' } else { c })
        .collect();
    clean = clean.trim().trim_start_matches('.').to_owned();
    if clean.len() > MAX_NAME_BYTES {
        // Keep the extension, cut the stem on a character boundary.
        let ext = clean.rfind('.').map(|i| clean[i..].to_owned()).filter(|e| e.len() <= 16).unwrap_or_default();
        let mut cut = MAX_NAME_BYTES - ext.len();
        while !clean.is_char_boundary(cut) {
            cut -= 1;
        }
        clean = format!("{}{ext}", &clean[..cut]);
    }
    if clean.is_empty() { "media".to_owned() } else { clean }
}

async fn sync_dir(dir: &Path) -> Result<(), MediaError> {
    let handle = File::open(dir).await.map_err(io_error("opening a directory", dir))?;
    handle.sync_all().await.map_err(io_error("syncing a directory", dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_cannot_escape_or_hide() {
        let cases = [
            ("jfk.wav", "jfk.wav"),
            ("../../etc/passwd", "passwd"),
            ("C:\\Users\\me\\talk.mp3", "talk.mp3"),
            ("..", "media"),
            ("", "media"),
            ("/", "media"),
            (".hidden.wav", "hidden.wav"),
            ("a\u{0}b\nc.wav", "a_b_c.wav"),
            ("what?.wav", "what_.wav"),
            ("interview – été.m4a", "interview – été.m4a"),
        ];
        for (input, want) in cases {
            assert_eq!(sanitize_file_name(input), want, "sanitizing {input:?}");
        }
        let long = format!("{}.flac", "é".repeat(200));
        let clean = sanitize_file_name(&long);
        assert!(clean.len() <= MAX_NAME_BYTES && clean.ends_with(".flac"), "{clean}");
    }

    #[test]
    fn job_ids_are_single_safe_components() {
        for bad in ["", "..", "a/b", "a\\b", "job 1", "é"] {
            assert!(check_job_id(bad).is_err(), "{bad:?} must be refused");
        }
        check_job_id("0f8c2d1e-1b2c-4d5e-8f90-123456789abc").unwrap();
    }
}
