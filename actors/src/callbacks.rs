//! The callback actor: tells a client's `callbackUrl` that its job ended (`DONE` or `ERROR`), and
//! keeps telling it until the receiver acknowledges or the retry schedule runs out.
//!
//! The pipeline hands over every finished job whose callback is not settled (stage
//! `DeliverCallback`), on every start too. Each such job gets one task here, so two deliveries of
//! the same job never overlap and a slow receiver never holds up another. The task:
//!
//! 1. reads the job (the job actor's state is the truth: a retry due at `next_attempt_at_ms`
//!    waits until then, one already due goes now, which is how a pending callback resumes after
//!    a restart);
//! 2. POSTs the spec's callback payload, signed with the owner's webhook secret
//!    ([`signing`] documents the scheme), to the vetted URL, without following redirects;
//! 3. records the attempt on the job (`RecordCallbackAttempt`): a 2xx delivers, `410 Gone`
//!    abandons, anything else schedules the next try ([`CallbackSettings`]) or, when the
//!    schedule is over, abandons;
//!
//! and repeats until the callback is settled, then reports the stage done to the pipeline.
//!
//! On a cluster, each attempt is claimed right before the POST, with a lease that outlasts the
//! request (`WorkClaimed` until now + timeout + lease, appended with an expected version): the
//! pipeline's claim may have lapsed while this node was slow, or the job actor's view may be
//! behind another node's delivery, and either would let two nodes send the same callback. A
//! node that cannot claim the attempt does not send. Delivery is still at least once across a
//! crash between the POST and its record (it is sent again, with the same `webhook-id`, so
//! receivers can drop the repeat), but never twice between live nodes.

mod delivery;
mod schedule;
pub mod signing;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef};
use scribe_domain::account::AccountAggregate;
use scribe_domain::ids::{JobId, account_stream};
use scribe_domain::job::{CallbackOutcome, JobCommand, JobRefusal, JobState, Stage, callback_message_id};
use scribe_eventstore::EventStore;
use tokio::sync::Semaphore;
use tokio::task::AbortHandle;
use tracing::Instrument;

pub use schedule::CallbackSettings;
pub use signing::{SecretError, WebhookSecret};

use crate::clock::now_ms;
use crate::cluster::ClusterSettings;
use crate::command::{self, CommandError};
use crate::jobs::{JobError, Jobs};
use crate::media::AddressGuard;
use crate::worker::{StageDone, report};

/// Wait before trying again when the job or its account could not be read or written (the
/// store or a job actor is briefly unavailable); no attempt is recorded for these.
const TROUBLE_PAUSE: Duration = Duration::from_secs(2);

/// How often recording a sent attempt is tried again before the attempt counts as not made.
const RECORD_TRIES: u32 = 5;

pub enum CallbackMsg {
    /// Deliver the callback of a finished job; `done` is reported once it is settled.
    Deliver { job_id: JobId, done: StageDone },
    /// A job's delivery task ended.
    Ended(JobId),
    /// How many jobs have a delivery under way (for metrics and tests).
    Pending(ractor::RpcReplyPort<usize>),
}

pub struct CallbackActor;

#[derive(Clone)]
pub struct CallbackArgs {
    pub jobs: Jobs,
    pub store: Arc<dyn EventStore>,
    pub guard: AddressGuard,
    pub settings: CallbackSettings,
    /// This node's part in a cluster: each attempt is claimed before it is sent.
    pub cluster: Option<ClusterSettings>,
}

pub struct CallbackState {
    deliverer: Arc<Deliverer>,
    /// The delivery task of each job being delivered.
    running: HashMap<JobId, AbortHandle>,
}

impl Actor for CallbackActor {
    type Msg = CallbackMsg;
    type State = CallbackState;
    type Arguments = CallbackArgs;

    async fn pre_start(
        &self,
        _: ActorRef<CallbackMsg>,
        args: CallbackArgs,
    ) -> Result<CallbackState, ActorProcessingErr> {
        let sending = Semaphore::new(args.settings.max_concurrent.max(1));
        let deliverer = Deliverer {
            jobs: args.jobs,
            store: args.store,
            guard: args.guard,
            settings: args.settings,
            cluster: args.cluster,
            sending,
        };
        Ok(CallbackState { deliverer: Arc::new(deliverer), running: HashMap::new() })
    }

    async fn handle(
        &self,
        myself: ActorRef<CallbackMsg>,
        msg: CallbackMsg,
        state: &mut CallbackState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            CallbackMsg::Deliver { job_id, done } => {
                if state.running.contains_key(&job_id) {
                    return Ok(()); // its task reports when it ends
                }
                let deliverer = state.deliverer.clone();
                let id = job_id.clone();
                let span = done.span();
                let task = tokio::spawn(
                    async move {
                        deliverer.deliver_until_settled(&id).await;
                        let _ = myself.cast(CallbackMsg::Ended(id));
                        report(done);
                    }
                    .instrument(span),
                );
                state.running.insert(job_id, task.abort_handle());
            }
            CallbackMsg::Ended(job_id) => {
                state.running.remove(&job_id);
            }
            CallbackMsg::Pending(reply) => {
                let _ = reply.send(state.running.len());
            }
        }
        Ok(())
    }

    async fn post_stop(&self, _: ActorRef<CallbackMsg>, state: &mut CallbackState) -> Result<(), ActorProcessingErr> {
        // Unsettled callbacks are in the log; the next start resumes them.
        for task in state.running.values() {
            task.abort();
        }
        Ok(())
    }
}

/// Everything a delivery task needs, shared by all of them.
struct Deliverer {
    jobs: Jobs,
    store: Arc<dyn EventStore>,
    guard: AddressGuard,
    settings: CallbackSettings,
    cluster: Option<ClusterSettings>,
    /// Bounds the requests in flight.
    sending: Semaphore,
}

/// Why an attempt could not be made or recorded (not the receiver's fault).
#[derive(Debug, thiserror::Error)]
enum Trouble {
    #[error("reading or recording the job: {0}")]
    Job(#[from] JobError),
    #[error("reading the owner's account: {0}")]
    Account(String),
    #[error("the job has no callback to send")]
    NoPayload,
    #[error("another node delivers this callback, or it is no longer due")]
    NotOurs,
}

impl Deliverer {
    /// Attempts delivery, waiting between attempts as recorded on the job, until the job's
    /// callback is delivered or abandoned (or the job is deleted).
    async fn deliver_until_settled(&self, job_id: &JobId) {
        let mut job = self.read(job_id).await;
        while job.stage() == Stage::DeliverCallback {
            let now = now_ms();
            if let Some(due) = job.callback.next_attempt_at_ms.filter(|due| *due > now) {
                tokio::time::sleep(Duration::from_millis(due - now)).await;
                job = self.read(job_id).await; // it may have been deleted meanwhile
                continue;
            }
            job = match self.attempt(job_id, &job).await {
                Ok(after) => after,
                Err(Trouble::NotOurs) => {
                    // The pipeline looks at the job again and waits for the holder's lease.
                    tracing::debug!("callback attempt held by another node, or settled");
                    return;
                }
                Err(trouble) => {
                    tracing::warn!(error = %trouble, "callback attempt not made; trying again shortly");
                    tokio::time::sleep(TROUBLE_PAUSE).await;
                    self.read(job_id).await
                }
            };
        }
        if job.callback.delivered {
            tracing::info!(attempts = job.callback.attempts, "callback delivered");
        } else if let Some(reason) = &job.callback.abandoned {
            tracing::warn!(%reason, "callback abandoned");
        } else {
            tracing::debug!(stage = ?job.stage(), "callback no longer due");
        }
    }

    /// The job's current state, waiting out trouble reading it.
    async fn read(&self, job_id: &JobId) -> JobState {
        loop {
            match self.jobs.state(job_id).await {
                Ok((state, _)) => return state,
                Err(e) => {
                    tracing::warn!(error = %e, "reading job for its callback; trying again shortly");
                    tokio::time::sleep(TROUBLE_PAUSE).await;
                }
            }
        }
    }

    /// Sends the callback once and records the outcome; returns the job after it.
    async fn attempt(&self, job_id: &JobId, job: &JobState) -> Result<JobState, Trouble> {
        let (Some(payload), Some(submission), Some((_, finished_ms))) =
            (job.callback_payload(), &job.submission, job.finished)
        else {
            return Err(Trouble::NoPayload);
        };
        let url = submission.callback_url.as_ref().ok_or(Trouble::NoPayload)?.url();
        self.hold_attempt(job_id).await?;
        let account = command::load::<AccountAggregate>(self.store.as_ref(), &account_stream(&submission.owner))
            .await
            .map_err(|e| Trouble::Account(e.to_string()))?;
        let outcome = match WebhookSecret::parse(&account.state.webhook_secret) {
            Ok(secret) => {
                let message = delivery::Message {
                    url,
                    id: &callback_message_id(job_id, payload.status),
                    timestamp: now_ms() / 1000,
                    body: serde_json::to_vec(&payload).expect("a callback payload serializes"),
                    secret: &secret,
                };
                let _permit = self.sending.acquire().await.expect("the semaphore is never closed");
                delivery::send(&self.guard, self.settings.timeout, message).await
            }
            Err(e) => CallbackOutcome::Error(format!("not sent, it cannot be signed: {e}")),
        };
        let at_ms = now_ms();
        let attempt = job.callback.attempts + 1;
        let next_attempt_at_ms = if outcome.is_acknowledged() || outcome.is_gone() {
            None
        } else {
            self.settings.next_attempt_at(attempt, finished_ms, at_ms, &mut rand::rng())
        };
        match &next_attempt_at_ms {
            _ if outcome.is_acknowledged() => {}
            Some(next) => {
                tracing::info!(attempt, %outcome, retry_in_ms = next - at_ms, "callback not acknowledged")
            }
            None => tracing::info!(attempt, %outcome, "callback not acknowledged; no more retries"),
        }
        let record = JobCommand::RecordCallbackAttempt { outcome, at_ms, next_attempt_at_ms };
        // The POST went out: record it, trying again on trouble, since an attempt that is not
        // recorded is sent again (a second POST with the same webhook-id).
        let mut tries = 0;
        loop {
            match self.jobs.execute(job_id, record.clone()).await {
                Ok(executed) => return Ok(executed.state),
                // Settled or deleted meanwhile: the job's state says so.
                Err(CommandError::Refused(refusal)) => {
                    tracing::debug!(%refusal, "callback attempt not recorded");
                    return Ok(self.read(job_id).await);
                }
                Err(e) if tries < RECORD_TRIES => {
                    tries += 1;
                    tracing::warn!(error = %e, "recording a callback attempt; trying again shortly");
                    tokio::time::sleep(TROUBLE_PAUSE).await;
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// On a cluster, claims the delivery for one attempt (the request's timeout plus a lease),
    /// so that no other node sends it meanwhile; `NotOurs` when another node holds it or the
    /// job has moved on. A single node has nobody to share with.
    async fn hold_attempt(&self, job_id: &JobId) -> Result<(), Trouble> {
        let Some(cluster) = &self.cluster else { return Ok(()) };
        let now = now_ms();
        let lease = u64::try_from((self.settings.timeout + cluster.lease).as_millis()).unwrap_or(u64::MAX);
        let claim = JobCommand::ClaimWork {
            stage: Stage::DeliverCallback,
            node: cluster.node.clone(),
            until_ms: now.saturating_add(lease),
            at_ms: now,
        };
        match self.jobs.execute(job_id, claim).await {
            Ok(_) => Ok(()),
            Err(CommandError::Refused(
                JobRefusal::WorkHeldByOther { .. } | JobRefusal::OutOfOrder(_) | JobRefusal::Deleted,
            )) => Err(Trouble::NotOurs),
            Err(e) => Err(e.into()),
        }
    }
}
