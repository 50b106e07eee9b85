//! The one error type of the read side: what went wrong, and while doing what.
//!
//! A domain refusal never appears here: these errors mean the read-model file or the event store
//! failed, or the log holds an event this Scribe cannot decode, and a retry or an operator is
//! needed.

use scribe_eventstore::StoreError;

/// Why a read-model operation failed.
#[derive(Debug, thiserror::Error)]
pub enum ProjectionError {
    /// The read-model SQLite file failed (disk full, file unreadable, locked for too long, ...).
    #[error("read-model database failure while {action}: {source}")]
    Database {
        action: &'static str,
        #[source]
        source: rusqlite::Error,
    },
    /// A file operation around the database failed (creating the data directory, replacing the
    /// file after a rebuild, ...).
    #[error("read-model file operation failed while {action}: {source}")]
    Io {
        action: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// The event store could not be read.
    #[error("the event store could not be read: {0}")]
    Store(#[from] StoreError),
    /// An event of the log cannot be decoded (written by a newer Scribe, or edited by hand). The
    /// read models stop before it rather than diverge from the log.
    #[error(
        "event {event_type} (version {version} of stream {stream}, log position {position}) cannot be decoded: {reason}; \
         the read models stop before it (was it written by a newer Scribe?)"
    )]
    Undecodable { stream: String, version: u64, position: u64, event_type: String, reason: String },
    /// A stored row does not parse back (the file was edited by hand, or written by a newer
    /// Scribe). `scribe rebuild` recreates it from the event log.
    #[error("read-model row {key} is unreadable ({reason}); run `scribe rebuild` to recreate the read models")]
    CorruptRow { key: String, reason: String },
    /// The read models of this data directory are already open (a server is running on it).
    #[error(
        "the read models in {dir} are in use by another Scribe process (is a server running on this data directory? stop it first)"
    )]
    InUse { dir: String },
    /// There are no read models in the data directory (no server ever ran on it).
    #[error("there are no read models at {path}: start `scribe serve` on this data directory first")]
    Missing { path: String },
    /// The projection actor could not be started or reached.
    #[error("the projection actor failed: {0}")]
    Actor(String),
    /// A blocking read-model task panicked or was cancelled (the runtime is shutting down).
    #[error("a read-model task did not finish: {0}")]
    Task(String),
}

/// Wraps an SQLite error with what was being done.
pub(crate) fn db(action: &'static str) -> impl FnOnce(rusqlite::Error) -> ProjectionError {
    move |source| ProjectionError::Database { action, source }
}

/// Wraps an I/O error with what was being done.
pub(crate) fn io(action: &'static str) -> impl FnOnce(std::io::Error) -> ProjectionError {
    move |source| ProjectionError::Io { action, source }
}
