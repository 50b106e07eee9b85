//! Running a command against an event-sourced aggregate: load its stream, let the pure domain
//! `decide`, append the events with the version the decision was based on.
//!
//! This is the one write path of Scribe. Job actors use [`Aggregate`] state they keep in memory
//! and call [`append_decision`]; glossaries and accounts, which are written rarely, go through
//! [`execute`], which loads the stream each time. Either way a concurrent writer cannot fork a
//! stream: the loser of a race gets `WrongExpectedVersion`, reloads and decides again.
//!
//! Commands that [`execute`] runs on one stream in this process take turns (a lock per stream),
//! so many requests of one account at once (parallel uploads, each charging it) do not race one
//! another; only writers on other nodes can still win a race, and the loser decides again after
//! a short random pause, up to [`MAX_EXECUTE_RETRIES`] times.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use rand::Rng;
use scribe_domain::{Aggregate, DecodeError, VersionedEvent};

use scribe_eventstore::{EventStore, ExpectedVersion, NewEvent, RecordedEvent, StoreError};

/// How often a job actor's command is decided again after losing a race with another writer.
pub(crate) const MAX_CONFLICT_RETRIES: usize = 5;

/// How often [`execute`] decides again after losing a race with a writer on another node.
pub const MAX_EXECUTE_RETRIES: usize = 20;

/// The longest random pause before deciding again after a lost race.
const MAX_RETRY_PAUSE: Duration = Duration::from_millis(20);

/// An aggregate's state as of a stream version.
pub struct Loaded<A: Aggregate> {
    pub state: A::State,
    /// Version of the last event folded in; `None` when the stream does not exist.
    pub version: Option<u64>,
}

impl<A: Aggregate> Clone for Loaded<A> {
    fn clone(&self) -> Self {
        Loaded { state: self.state.clone(), version: self.version }
    }
}

impl<A: Aggregate> std::fmt::Debug for Loaded<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Loaded").field("state", &self.state).field("version", &self.version).finish()
    }
}

impl<A: Aggregate> Default for Loaded<A> {
    fn default() -> Self {
        Loaded { state: A::State::default(), version: None }
    }
}

/// What a successful command did.
pub struct Executed<A: Aggregate> {
    /// The state after the command.
    pub state: A::State,
    /// The events appended (empty when the command changed nothing).
    pub events: Vec<A::Event>,
    /// Version of the stream's last event after the command.
    pub version: Option<u64>,
    /// Global log position of the last appended event, for read-your-writes; `None` when nothing
    /// was appended.
    pub position: Option<u64>,
}

impl<A: Aggregate> Clone for Executed<A> {
    fn clone(&self) -> Self {
        Executed {
            state: self.state.clone(),
            events: self.events.clone(),
            version: self.version,
            position: self.position,
        }
    }
}

impl<A: Aggregate> std::fmt::Debug for Executed<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executed")
            .field("state", &self.state)
            .field("events", &self.events)
            .field("version", &self.version)
            .field("position", &self.position)
            .finish()
    }
}

/// Why a command did not take effect. A refusal is the domain's answer; the others are failures.
#[derive(Debug, thiserror::Error)]
pub enum CommandError<R: std::error::Error + 'static> {
    #[error(transparent)]
    Refused(R),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("stream {stream} holds an unreadable event: {source}")]
    Decode {
        stream: String,
        #[source]
        source: DecodeError,
    },
    /// The actor that owns the aggregate could not be reached (shutting down, or it crashed
    /// while handling this command).
    #[error("the {0} is unavailable, try again")]
    Unavailable(&'static str),
    /// The actor that owns the aggregate did not answer in time. The command may still take
    /// effect: look at the aggregate before sending it again.
    #[error("the {actor} did not answer within {} s; the command may still be recorded", after.as_secs())]
    TimedOut { actor: &'static str, after: Duration },
}

impl<R: std::error::Error + 'static> CommandError<R> {
    pub fn refusal(&self) -> Option<&R> {
        match self {
            CommandError::Refused(r) => Some(r),
            _ => None,
        }
    }
}

/// Folds recorded events into `loaded`.
pub fn fold<A: Aggregate>(
    mut loaded: Loaded<A>,
    events: &[RecordedEvent],
) -> Result<Loaded<A>, CommandError<A::Refusal>> {
    for recorded in events {
        let event = A::Event::decode(&recorded.data)
            .map_err(|source| CommandError::Decode { stream: recorded.stream.clone(), source })?;
        loaded.state = A::evolve(loaded.state, &event);
        loaded.version = Some(recorded.version);
    }
    Ok(loaded)
}

/// Rebuilds an aggregate from its whole stream.
pub async fn load<A: Aggregate>(store: &dyn EventStore, stream: &str) -> Result<Loaded<A>, CommandError<A::Refusal>> {
    let events = store.read_stream(stream, 0).await?;
    fold::<A>(Loaded::default(), &events)
}

/// Decides `command` on `loaded` and appends the result expecting `loaded.version`.
/// On success `loaded` is advanced to the new state. A lost race is returned as
/// `CommandError::Store(StoreError::WrongExpectedVersion)`, with `loaded` untouched.
pub async fn append_decision<A: Aggregate>(
    store: &dyn EventStore,
    stream: &str,
    loaded: &mut Loaded<A>,
    command: A::Command,
) -> Result<Executed<A>, CommandError<A::Refusal>> {
    let events = A::decide(&loaded.state, command).map_err(CommandError::Refused)?;
    if events.is_empty() {
        return Ok(Executed { state: loaded.state.clone(), events, version: loaded.version, position: None });
    }
    let new_events = events.iter().map(|e| NewEvent::new(e.event_type(), e.encode())).collect();
    let appended = store.append(stream, ExpectedVersion::after(loaded.version), new_events).await?;
    let state = events.iter().fold(loaded.state.clone(), A::evolve);
    loaded.state = state.clone();
    loaded.version = Some(appended.last_version);
    Ok(Executed { state, events, version: loaded.version, position: Some(appended.position) })
}

/// Loads the aggregate, decides, appends; on a lost race reloads and decides again. Commands
/// on the same stream in this process run one at a time.
pub async fn execute<A: Aggregate>(
    store: &dyn EventStore,
    stream: &str,
    command: A::Command,
) -> Result<Executed<A>, CommandError<A::Refusal>>
where
    A::Command: Clone,
{
    let turn = stream_lock(stream);
    let _turn = turn.lock().await;
    let mut loaded = load::<A>(store, stream).await?;
    let mut retries = 0;
    loop {
        match append_decision::<A>(store, stream, &mut loaded, command.clone()).await {
            Err(CommandError::Store(StoreError::WrongExpectedVersion { .. })) if retries < MAX_EXECUTE_RETRIES => {
                retries += 1;
                let pause = rand::rng().random_range(Duration::ZERO..=MAX_RETRY_PAUSE);
                tokio::time::sleep(pause).await;
                loaded = catch_up::<A>(store, stream, loaded).await?;
            }
            other => return other,
        }
    }
}

/// The lock that commands on `stream` take turns with in this process. Locks live while someone
/// holds or waits for them; the table forgets the others as it grows.
fn stream_lock(stream: &str) -> Arc<tokio::sync::Mutex<()>> {
    static LOCKS: Mutex<Option<HashMap<String, Weak<tokio::sync::Mutex<()>>>>> = Mutex::new(None);
    let mut locks = LOCKS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let locks = locks.get_or_insert_with(HashMap::new);
    if let Some(lock) = locks.get(stream).and_then(Weak::upgrade) {
        return lock;
    }
    if locks.len() >= 1024 {
        locks.retain(|_, lock| lock.strong_count() > 0);
    }
    let lock = Arc::new(tokio::sync::Mutex::new(()));
    locks.insert(stream.to_owned(), Arc::downgrade(&lock));
    lock
}

/// Folds in whatever was appended to the stream after `loaded.version`.
pub async fn catch_up<A: Aggregate>(
    store: &dyn EventStore,
    stream: &str,
    loaded: Loaded<A>,
) -> Result<Loaded<A>, CommandError<A::Refusal>> {
    let from = loaded.version.map_or(0, |v| v + 1);
    let events = store.read_stream(stream, from).await?;
    fold::<A>(loaded, &events)
}
