//! The event store port: the one place where Scribe's history is written and read.
//!
//! Every fact about a job, glossary or account is an event in a named stream (`job-<jobId>`, ...).
//! Writers append with an [`ExpectedVersion`], so two writers racing on one stream can never fork
//! its history: one wins, the other gets [`StoreError::WrongExpectedVersion`] and decides again.
//! Readers either load one stream (to rebuild an actor) or follow the whole log in global order
//! (projections), from a checkpoint, with [`EventStore::subscribe_all`].
//!
//! Adapters: [`sqlite::SqliteEventStore`] (embedded default, one file),
//! [`postgres::PostgresEventStore`] (several nodes on one PostgreSQL database) and
//! [`kurrent::KurrentDbEventStore`] (a KurrentDB / EventStoreDB cluster). [`StoreLocation`]
//! picks one from the `--event-store` setting. The checks every adapter makes on an append (a
//! stream name, at least one event, the expected version, how the events are numbered) live in
//! one module, `append`. Every adapter must pass the suite in `contract` (feature `testing`),
//! which is written against this trait only.
//!
//! # What every caller may rely on
//!
//! - **Streams**: versions are 0-based and gapless; an append is all-or-nothing; an append whose
//!   [`ExpectedVersion`] is not met writes nothing and fails with `WrongExpectedVersion`.
//! - **Global positions** are `>= 1`, unique, and **increase in commit order**, but **may have
//!   gaps** (KurrentDB's positions are byte offsets in its log; a PostgreSQL or SQLite log has none
//!   in practice, but nobody may count on it). So: compare positions, never count them; never
//!   compute "the next position" or "how many events lie between two positions".
//! - **No late arrivals**: once a reader has seen position `p` (in `read_all` or a subscription),
//!   no event with a position `<= p` can appear afterwards. A checkpoint "everything up to `p`" is
//!   therefore final.
//! - [`Appended::position`] is the position of the append's last event, and a reader that has
//!   passed it has seen the append (read-your-writes waits for exactly this).
//! - [`EventStore::head_position`] is the position of an event that exists (or 0 for an empty log),
//!   so a follower of the log that waits until it has passed the head it read at start-up will get
//!   there.
//! - [`RecordedEvent::position`] from [`EventStore::read_stream`] is the same number `read_all`
//!   gives for that event (a KurrentDB server that does not report positions on stream reads
//!   gives 0 there; Scribe uses them only to print an audit trail).
//!
//! ```no_run
//! # use std::sync::Arc;
//! # use futures::StreamExt;
//! # use serde_json::json;
//! # use scribe_eventstore::*;
//! # async fn demo(store: Arc<dyn EventStore>) -> Result<(), StoreError> {
//! let events = vec![NewEvent::new("JobSubmitted", json!({"type": "JobSubmitted", "v": 1}))];
//! let appended = store.append("job-42", ExpectedVersion::NoStream, events).await?;
//!
//! // A projection follows the whole log from its checkpoint, catch-up then live.
//! let mut log = store.subscribe_all(0);
//! while let Some(event) = log.next().await {
//!     let event = event?;
//!     if event.position >= appended.position {
//!         break; // the projection has seen our write
//!     }
//! }
//! # Ok(()) }
//! ```
//!
//! The trait is object safe (`Arc<dyn EventStore>`); its methods return boxed futures so that no
//! macro crate is needed.

mod append;
#[cfg(feature = "testing")]
pub mod contract;
pub mod kurrent;
mod location;
pub mod postgres;
pub mod sqlite;
#[cfg(feature = "testing")]
pub mod throwaway_postgres;

use std::fmt;

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use serde_json::Value;

pub use kurrent::KurrentDbEventStore;
pub use location::StoreLocation;
pub use postgres::PostgresEventStore;
pub use sqlite::SqliteEventStore;

/// What the writer believes the stream looks like before its append.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpectedVersion {
    /// Append whatever the stream holds (no concurrency check).
    Any,
    /// The stream must not exist yet (creating a job, an account, ...).
    NoStream,
    /// The stream's last event must have this version (0-based).
    Exact(u64),
}

impl ExpectedVersion {
    /// The expectation that matches a stream whose last version is `current`
    /// (`None`: the stream does not exist).
    pub fn after(current: Option<u64>) -> Self {
        current.map_or(ExpectedVersion::NoStream, ExpectedVersion::Exact)
    }

    /// Whether a stream whose last version is `current` meets this expectation.
    pub fn is_met_by(self, current: Option<u64>) -> bool {
        match self {
            ExpectedVersion::Any => true,
            ExpectedVersion::NoStream => current.is_none(),
            ExpectedVersion::Exact(v) => current == Some(v),
        }
    }
}

impl fmt::Display for ExpectedVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExpectedVersion::Any => f.write_str("any version"),
            ExpectedVersion::NoStream => f.write_str("no stream"),
            ExpectedVersion::Exact(v) => write!(f, "version {v}"),
        }
    }
}

/// An event to append: its type name and its JSON body (`{"type": ..., "v": 1, ...}` by convention).
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvent {
    pub event_type: String,
    pub data: Value,
}

impl NewEvent {
    pub fn new(event_type: impl Into<String>, data: Value) -> Self {
        NewEvent { event_type: event_type.into(), data }
    }
}

/// Where a successful append left the stream and the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Appended {
    /// Version of the last event written (0-based); pass it as `ExpectedVersion::Exact` next time.
    pub last_version: u64,
    /// Global position of the last event written. A reader that has passed this position has
    /// seen the append (read-your-writes). See the module documentation for what positions promise.
    pub position: u64,
}

/// An event as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedEvent {
    pub stream: String,
    /// Position in its stream, 0-based, no gaps.
    pub version: u64,
    /// Position in the whole log: at least 1, increasing in commit order, possibly with gaps.
    pub position: u64,
    pub event_type: String,
    pub data: Value,
    /// Milliseconds since the Unix epoch, set by the store when the event was appended.
    pub recorded_at_ms: i64,
}

/// Why the store could not do what was asked. A domain refusal is never a `StoreError`.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Another writer appended first (or the stream exists / does not exist, against the
    /// expectation). Reload the stream and decide again.
    #[error("stream {stream} was expected at {expected} but is at {}", describe_version(.actual))]
    WrongExpectedVersion { stream: String, expected: ExpectedVersion, actual: Option<u64> },
    /// The request itself is malformed (empty append, empty stream name).
    #[error("invalid append to stream {stream:?}: {reason}")]
    InvalidAppend { stream: String, reason: &'static str },
    /// The store is named or configured wrongly (an unsupported URL scheme, a malformed URL).
    #[error("{0}")]
    Configuration(String),
    /// A stored event could not be read back.
    #[error("stored event at position {position} is unreadable: {reason}")]
    Corrupt { position: u64, reason: String },
    /// The storage backend failed (disk full, file unreadable, connection lost, ...).
    #[error("event store failure while {action}: {source}")]
    Backend {
        action: &'static str,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// A backend failure while doing `action` (every adapter reports its failures this way).
pub(crate) fn backend(action: &'static str, source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> StoreError {
    StoreError::Backend { action, source: source.into() }
}

fn describe_version(v: &Option<u64>) -> String {
    match *v {
        None => "no stream".to_owned(),
        Some(v) => format!("version {v}"),
    }
}

/// The event store port. See the module documentation.
pub trait EventStore: Send + Sync + 'static {
    /// Appends `events` atomically to `stream` if its current version meets `expected`.
    /// When this returns `Ok`, the events are durable.
    fn append<'a>(
        &'a self,
        stream: &'a str,
        expected: ExpectedVersion,
        events: Vec<NewEvent>,
    ) -> BoxFuture<'a, Result<Appended, StoreError>>;

    /// The events of `stream` with version `>= from_version`, in order (empty if none).
    fn read_stream<'a>(
        &'a self,
        stream: &'a str,
        from_version: u64,
    ) -> BoxFuture<'a, Result<Vec<RecordedEvent>, StoreError>>;

    /// Up to `max` events of the whole log with position `> after_position`, in position order.
    /// `after_position = 0` starts at the beginning. `after_position` may be any number, not only
    /// the position of a stored event.
    fn read_all(&self, after_position: u64, max: usize) -> BoxFuture<'_, Result<Vec<RecordedEvent>, StoreError>>;

    /// The position of the last event in the log (0 when empty). Always the position of an
    /// existing event: a subscription from 0 reaches it.
    fn head_position(&self) -> BoxFuture<'_, Result<u64, StoreError>>;

    /// Every event with position `> after_position`: first those already stored, then new ones as
    /// they are appended, strictly in position order, each exactly once. The stream ends only
    /// after yielding an error (or when the store shuts down).
    fn subscribe_all(&self, after_position: u64) -> BoxStream<'static, Result<RecordedEvent, StoreError>>;
}
