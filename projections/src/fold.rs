//! From recorded events to aggregate states, with the domain's own `evolve`.
//!
//! The read models show what `JobState::view` (and the glossary and account states) say, so the
//! projection folds events with exactly the domain's functions instead of re-implementing them.
//! A [`Folder`] keeps the latest state of recently touched streams in memory, tagged with the
//! stream version it reflects. When the next event of a stream is not the direct successor of
//! the cached state (first sight after a restart, an evicted entry, a skipped event), the state
//! is rebuilt from the stream in the event store, up to that event. The cache is therefore only a
//! speed-up: a state is never applied to twice and never misses an event.
//!
//! An event that cannot be decoded is an error naming it (stream, version, type): the read
//! models stop before it instead of silently leaving it out and diverging from the log.

use std::collections::HashMap;

use crate::error::ProjectionError;

use scribe_domain::{Aggregate, DecodeError, VersionedEvent};
use scribe_eventstore::{EventStore, RecordedEvent};

/// Streams whose state is kept in memory; past this the cache is emptied and refills itself.
/// Events of one job usually arrive close together, so a few thousand cover the live ones.
const MAX_CACHED_STREAMS: usize = 20_000;

struct Folded<S> {
    /// Version of the last event folded into `state`.
    version: u64,
    state: S,
}

/// The states of one aggregate kind's streams. See the module documentation.
pub(crate) struct Folder<A: Aggregate> {
    states: HashMap<String, Folded<A::State>>,
}

impl<A: Aggregate> Folder<A> {
    pub(crate) fn new() -> Self {
        Folder { states: HashMap::new() }
    }

    /// Forgets every cached state (after a failed write, whose states were never stored).
    pub(crate) fn clear(&mut self) {
        self.states.clear();
    }

    /// Decodes `recorded` and folds it into its stream's state. Returns the event and the state
    /// after it; an event that cannot be decoded is [`ProjectionError::Undecodable`].
    pub(crate) async fn apply(
        &mut self,
        store: &dyn EventStore,
        recorded: &RecordedEvent,
    ) -> Result<(A::Event, &A::State), ProjectionError> {
        let event = decode::<A>(recorded)?;
        let prior = match self.states.remove(&recorded.stream) {
            _ if recorded.version == 0 => A::State::default(),
            Some(folded) if folded.version + 1 == recorded.version => folded.state,
            _ => replay_before::<A>(store, &recorded.stream, recorded.version).await?,
        };
        let state = A::evolve(prior, &event);
        if self.states.len() >= MAX_CACHED_STREAMS {
            self.states.clear();
        }
        let folded = self
            .states
            .entry(recorded.stream.clone())
            .insert_entry(Folded { version: recorded.version, state })
            .into_mut();
        Ok((event, &folded.state))
    }
}

/// The state of `stream` after its events with version `< version`, read from the store.
async fn replay_before<A: Aggregate>(
    store: &dyn EventStore,
    stream: &str,
    version: u64,
) -> Result<A::State, ProjectionError> {
    let history = store.read_stream(stream, 0).await?;
    let mut state = A::State::default();
    for recorded in history.iter().take_while(|e| e.version < version) {
        state = A::evolve(state, &decode::<A>(recorded)?);
    }
    Ok(state)
}

/// The domain event in `recorded`, or the error that names it.
fn decode<A: Aggregate>(recorded: &RecordedEvent) -> Result<A::Event, ProjectionError> {
    A::Event::decode(&recorded.data).map_err(|error: DecodeError| ProjectionError::Undecodable {
        stream: recorded.stream.clone(),
        version: recorded.version,
        position: recorded.position,
        event_type: recorded.event_type.clone(),
        reason: error.to_string(),
    })
}
