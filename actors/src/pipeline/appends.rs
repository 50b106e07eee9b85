//! Feeding the log to the pipeline an append at a time. The store delivers the events of one
//! append together (each read of the log sees whole appends), and the pipeline gets everything
//! delivered together as one message: it folds a whole append into a job before it decides what
//! the job needs next. Fed one event at a time, it would dispatch a stage for every event of an
//! upload's append (JobSubmitted, MediaStored, MediaProbed) although the append itself already
//! did the first two.

use std::sync::Arc;

use futures::StreamExt;
use ractor::{ActorRef, Message};

use scribe_eventstore::{EventStore, RecordedEvent};

/// The most events handed over in one message (while catching up on a long log).
const MAX_BATCH: usize = 512;

/// Sends every event after `after` to `actor`, in order, catch-up then live, as `events(..)`:
/// each message holds the events the store had ready together (whole appends, unless one is
/// longer than [`MAX_BATCH`]). When the subscription fails, sends what came before the failure,
/// then `lost(reason)`, and stops: the actor resubscribes from the last position it saw. Stops as
/// well when the actor is gone.
pub fn follow_appends<M: Message>(
    store: Arc<dyn EventStore>,
    after: u64,
    actor: ActorRef<M>,
    events: fn(Vec<RecordedEvent>) -> M,
    lost: fn(String) -> M,
) {
    tokio::spawn(async move {
        let mut ready = store.subscribe_all(after).ready_chunks(MAX_BATCH);
        while let Some(chunk) = ready.next().await {
            let mut batch = Vec::with_capacity(chunk.len());
            let mut failure = None;
            for next in chunk {
                match next {
                    Ok(recorded) => batch.push(recorded),
                    Err(e) => {
                        failure = Some(e.to_string());
                        break;
                    }
                }
            }
            if !batch.is_empty() && actor.cast(events(batch)).is_err() {
                return;
            }
            if let Some(reason) = failure {
                let _ = actor.cast(lost(reason));
                return;
            }
        }
    });
}
