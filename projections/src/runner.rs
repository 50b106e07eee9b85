//! The live projection: a ractor actor that owns the read-model writer, fed by a pump task that
//! follows the whole event log from the checkpoint.
//!
//! The pump reads what the subscription has ready, up to [`BATCH_SIZE`] events, and *calls* the
//! actor with it, so it never reads further ahead than one batch (catch-up of a long log stays
//! in bounded memory). The actor applies the batch in one transaction, then publishes the new
//! position to [`ReadModels::watch_position`].
//!
//! An event it cannot decode stops the projection just before it, and the error (logged, and
//! retried with a growing pause) names the event's stream, version and type (see `fold`): the
//! read models never silently diverge from the log. An event the store cannot even read back is
//! logged and stepped over, and any other failure (store or file) is logged and retried from the
//! checkpoint with a growing pause.
//!
//! Supervision: the actor can be spawned linked to a supervisor ([`ProjectionActor`],
//! [`ProjectionArgs`]); a restarted one starts again from the checkpoint in the file.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use ractor::rpc::CallResult;
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use scribe_eventstore::{EventStore, RecordedEvent, StoreError};
use tokio::task::JoinHandle;

use crate::error::ProjectionError;
use crate::projector::{BATCH_SIZE, Projector};
use crate::read::ReadModels;

/// First pause before retrying after a failure; doubled up to [`MAX_RETRY_PAUSE`].
const MIN_RETRY_PAUSE: Duration = Duration::from_millis(100);
const MAX_RETRY_PAUSE: Duration = Duration::from_secs(10);

/// The projection actor. Spawn it with [`Projection::start`], or linked to a supervisor with
/// `Actor::spawn_linked(None, ProjectionActor, args, supervisor)`.
pub struct ProjectionActor;

/// What the projection actor needs to start.
#[derive(Clone)]
pub struct ProjectionArgs {
    pub store: Arc<dyn EventStore>,
    pub read_models: ReadModels,
}

/// A message to the projection actor (sent by its own pump; opaque to others).
pub struct ProjectionMsg(Apply);

struct Apply {
    events: Vec<RecordedEvent>,
    through: u64,
    reply: RpcReplyPort<Result<u64, String>>,
}

/// The actor's state: the writer, and the pump that feeds it (aborted when the state is dropped,
/// whether the actor stops or crashes).
pub struct ProjectionState {
    projector: Projector,
    read_models: ReadModels,
    _pump: AbortOnDrop,
}

struct AbortOnDrop(JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Actor for ProjectionActor {
    type Msg = ProjectionMsg;
    type State = ProjectionState;
    type Arguments = ProjectionArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<ProjectionMsg>,
        args: ProjectionArgs,
    ) -> Result<ProjectionState, ActorProcessingErr> {
        let ProjectionArgs { store, read_models } = args;
        let path = read_models.path().to_owned();
        let opening = store.clone();
        let projector = tokio::task::spawn_blocking(move || Projector::open(opening, &path)).await??;
        let checkpoint = projector.position();
        read_models.publish(checkpoint);
        tracing::info!(checkpoint, "read-model projection started");
        let pump = tokio::spawn(pump(store, myself, checkpoint));
        Ok(ProjectionState { projector, read_models, _pump: AbortOnDrop(pump) })
    }

    async fn handle(
        &self,
        _myself: ActorRef<ProjectionMsg>,
        message: ProjectionMsg,
        state: &mut ProjectionState,
    ) -> Result<(), ActorProcessingErr> {
        let ProjectionMsg(Apply { events, through, reply }) = message;
        let result = state.projector.apply(events, through).await;
        match &result {
            Ok(position) => {
                state.read_models.invalidate(&state.projector.take_changes());
                state.read_models.publish(*position)
            }
            Err(error) => {
                tracing::error!(%error, checkpoint = state.projector.position(), "applying events to the read models failed");
                // The events before an undecodable one were written: show them.
                state.read_models.invalidate(&state.projector.take_changes());
                state.read_models.publish(state.projector.position());
            }
        }
        let _ = reply.send(result.map_err(|e| e.to_string()));
        Ok(())
    }
}

/// A running projection, started by [`Projection::start`].
pub struct Projection {
    actor: ActorRef<ProjectionMsg>,
    handle: JoinHandle<()>,
}

impl Projection {
    /// Starts keeping `read_models` up to date with `store`, from their checkpoint.
    /// Start one per [`ReadModels`].
    pub async fn start(store: Arc<dyn EventStore>, read_models: ReadModels) -> Result<Projection, ProjectionError> {
        let (actor, handle) = Actor::spawn(None, ProjectionActor, ProjectionArgs { store, read_models })
            .await
            .map_err(|e| ProjectionError::Actor(e.to_string()))?;
        Ok(Projection { actor, handle })
    }

    /// The actor, for linking or monitoring.
    pub fn actor(&self) -> &ActorRef<ProjectionMsg> {
        &self.actor
    }

    /// Stops the projection after the batch in progress (if any) and waits until it has stopped.
    pub async fn stop(self) {
        self.actor.stop(None);
        let _ = self.handle.await;
    }
}

/// How following the log ended.
enum Followed {
    /// The actor is gone: the pump ends too.
    ActorGone,
    /// An unreadable event was stepped over; subscribe again at once.
    Resubscribe,
    /// Something failed; retry after a pause.
    Failed(String),
}

async fn pump(store: Arc<dyn EventStore>, actor: ActorRef<ProjectionMsg>, mut after: u64) {
    let mut pause = MIN_RETRY_PAUSE;
    loop {
        match follow(&*store, &actor, &mut after).await {
            Followed::ActorGone => return,
            Followed::Resubscribe => pause = MIN_RETRY_PAUSE,
            Followed::Failed(reason) => {
                tracing::warn!(%reason, checkpoint = after, retry_in = ?pause, "the read-model projection stalled; retrying");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(MAX_RETRY_PAUSE);
            }
        }
    }
}

/// Subscribes after `after` and hands every ready batch to the actor, advancing `after`.
async fn follow(store: &dyn EventStore, actor: &ActorRef<ProjectionMsg>, after: &mut u64) -> Followed {
    let mut batches = store.subscribe_all(*after).ready_chunks(BATCH_SIZE);
    while let Some(batch) = batches.next().await {
        let mut events = Vec::with_capacity(batch.len());
        let mut failure = None;
        for item in batch {
            match item {
                Ok(event) => events.push(event),
                Err(error) => {
                    failure = Some(error);
                    break;
                }
            }
        }
        if let Some(last) = events.last().map(|e| e.position) {
            match apply(actor, events, last).await {
                Ok(position) => *after = position,
                Err(followed) => return followed,
            }
        }
        match failure {
            None => {}
            Some(StoreError::Corrupt { position, reason }) if position > *after => {
                return step_over(store, actor, after, position, &reason).await;
            }
            Some(error) => return Followed::Failed(error.to_string()),
        }
    }
    Followed::Failed("the event log subscription ended".to_owned())
}

/// Applies the events before the unreadable one at `position`, then moves past it.
async fn step_over(
    store: &dyn EventStore,
    actor: &ActorRef<ProjectionMsg>,
    after: &mut u64,
    position: u64,
    reason: &str,
) -> Followed {
    // Positions may have gaps, so the events before `position` cannot be counted: read them one
    // at a time (an unreadable event is rare) until the unreadable one.
    let mut before = Vec::new();
    let mut cursor = *after;
    loop {
        match store.read_all(cursor, 1).await {
            Ok(mut page) => match page.pop() {
                Some(event) if event.position < position => {
                    cursor = event.position;
                    before.push(event);
                }
                _ => break,
            },
            Err(StoreError::Corrupt { position: unreadable, .. }) if unreadable == position => break,
            Err(error) => return Followed::Failed(error.to_string()),
        }
    }
    tracing::error!(position, %reason, "the read models skip an event the store cannot read back");
    match apply(actor, before, position).await {
        Ok(applied) => {
            *after = applied;
            Followed::Resubscribe
        }
        Err(followed) => followed,
    }
}

async fn apply(actor: &ActorRef<ProjectionMsg>, events: Vec<RecordedEvent>, through: u64) -> Result<u64, Followed> {
    let called = actor.call(|reply| ProjectionMsg(Apply { events, through, reply }), None).await;
    match called {
        Ok(CallResult::Success(Ok(position))) => Ok(position),
        Ok(CallResult::Success(Err(reason))) => Err(Followed::Failed(reason)),
        Ok(CallResult::Timeout | CallResult::SenderError) | Err(_) => Err(Followed::ActorGone),
    }
}
