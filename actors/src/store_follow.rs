//! Feeding the whole log to an actor: the pipeline, the refund reactor and the retention reactor
//! read every event in order, from a position on, as messages of their own. It lives here, not in
//! `scribe-eventstore`, because it speaks ractor: the store itself knows nothing of the runtime.

use std::sync::Arc;

use futures::StreamExt;
use ractor::{ActorRef, Message};
use scribe_eventstore::{EventStore, RecordedEvent};

/// Sends every event after `after` to `actor` as `event(..)`, in order, catch-up then live.
/// When the subscription fails, sends `lost(reason)` and stops: the actor resubscribes from the
/// last position it saw. Stops as well when the actor is gone.
pub fn follow_log<M: Message>(
    store: Arc<dyn EventStore>,
    after: u64,
    actor: ActorRef<M>,
    event: fn(RecordedEvent) -> M,
    lost: fn(String) -> M,
) {
    tokio::spawn(async move {
        let mut events = store.subscribe_all(after);
        while let Some(next) = events.next().await {
            let (msg, failed) = match next {
                Ok(recorded) => (event(recorded), false),
                Err(e) => (lost(e.to_string()), true),
            };
            if actor.cast(msg).is_err() || failed {
                return;
            }
        }
    });
}
