//! The retention reactor: once a finished job's retention ends (the operator's `--retention`, or
//! the job's own `deleteAfterSeconds`, the shorter; see `scribe_domain::job::retention`), it
//! records `JobExpired` on the job and removes the job's media and documents, as a deletion does.
//!
//! It follows the whole log: a job's finish tells when it expires, and every `JobExpired` that
//! arrives (recorded here, by another node, or before a crash) removes the job's files, so files
//! never outlive the event that says they are gone. It acts only once caught up with the log,
//! looks for due jobs every [`SWEEP_EVERY`], and keeps a checkpoint of the jobs it waits for.
//! A checkpoint written under another retention setting is not used: the log is read again, so
//! a changed `--retention` applies to every finished job.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef};
use scribe_domain::VersionedEvent;
use scribe_domain::ids::{JobId, job_id_of_stream};
use scribe_domain::job::{JobCommand, JobEvent, JobRefusal, retention};
use scribe_eventstore::{EventStore, RecordedEvent};
use serde::{Deserialize, Serialize};
use tracing::Instrument;

use crate::checkpoint::{self, CheckpointFile};
use crate::clock::now_ms;
use crate::command::CommandError;
use crate::jobs::{Jobs, job_span};
use crate::media::MediaStore;
use crate::store_follow::follow_log;

/// How often due jobs are looked for.
pub const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// What the reactor needs.
pub struct RetentionArgs {
    pub store: Arc<dyn EventStore>,
    pub jobs: Jobs,
    pub media: MediaStore,
    /// The operator's retention; `None`: only jobs that asked for it expire.
    pub retention: Option<Duration>,
    pub checkpoint: Option<CheckpointFile>,
}

pub enum RetentionMsg {
    Event(RecordedEvent),
    SubscriptionLost(String),
    /// Expire the jobs whose retention has ended.
    Sweep,
    /// Recording a job's expiry failed: it is tried again at the next sweep.
    NotExpired(JobId),
    SaveCheckpoint,
}

/// The reactor's checkpoint.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct RetentionCheckpoint {
    position: u64,
    /// The operator's retention it was written under.
    retention_s: Option<u64>,
    /// Unfinished jobs, with the `deleteAfterSeconds` each asked for.
    unfinished: BTreeMap<String, Option<u64>>,
    /// Finished jobs that will expire, with when (ms since the epoch).
    due: BTreeMap<String, u64>,
}

pub struct RetentionActor;

pub struct RetentionState {
    args: RetentionArgs,
    retention_s: Option<u64>,
    unfinished: HashMap<JobId, Option<u64>>,
    due: HashMap<JobId, u64>,
    /// Jobs whose expiry is being recorded (not asked again meanwhile).
    expiring: HashSet<JobId>,
    position: u64,
    start_head: u64,
    saved_position: u64,
}

impl Actor for RetentionActor {
    type Msg = RetentionMsg;
    type State = RetentionState;
    type Arguments = RetentionArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<RetentionMsg>,
        args: RetentionArgs,
    ) -> Result<RetentionState, ActorProcessingErr> {
        let start_head = args.store.head_position().await?;
        let retention_s = args.retention.map(|d| d.as_secs());
        let saved = args
            .checkpoint
            .as_ref()
            .and_then(CheckpointFile::load::<RetentionCheckpoint>)
            .filter(|c| c.position <= start_head && c.retention_s == retention_s)
            .unwrap_or_default();
        let state = RetentionState {
            unfinished: parse_ids(saved.unfinished),
            due: parse_ids(saved.due),
            expiring: HashSet::new(),
            position: saved.position,
            start_head,
            saved_position: saved.position,
            retention_s,
            args,
        };
        if state.args.checkpoint.is_some() {
            myself.send_interval(checkpoint::SAVE_EVERY, || RetentionMsg::SaveCheckpoint);
        }
        myself.send_interval(SWEEP_EVERY, || RetentionMsg::Sweep);
        follow_log(
            state.args.store.clone(),
            saved.position,
            myself,
            RetentionMsg::Event,
            RetentionMsg::SubscriptionLost,
        );
        Ok(state)
    }

    async fn handle(
        &self,
        myself: ActorRef<RetentionMsg>,
        msg: RetentionMsg,
        state: &mut RetentionState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            RetentionMsg::Event(event) => {
                state.position = event.position;
                state.fold(&event).await;
            }
            RetentionMsg::Sweep => {
                if state.position >= state.start_head {
                    state.expire_due(&myself);
                }
            }
            RetentionMsg::NotExpired(job_id) => {
                state.expiring.remove(&job_id);
            }
            RetentionMsg::SaveCheckpoint => state.save_checkpoint().await,
            RetentionMsg::SubscriptionLost(reason) => {
                tracing::error!(%reason, position = state.position, "retention: log subscription lost; resubscribing");
                tokio::time::sleep(Duration::from_millis(500)).await;
                follow_log(
                    state.args.store.clone(),
                    state.position,
                    myself,
                    RetentionMsg::Event,
                    RetentionMsg::SubscriptionLost,
                );
            }
        }
        Ok(())
    }
}

impl RetentionState {
    async fn fold(&mut self, recorded: &RecordedEvent) {
        let Some(job_id) = job_id_of_stream(&recorded.stream) else { return };
        if !matches!(
            recorded.event_type.as_str(),
            "JobSubmitted" | "JobCompleted" | "JobFailed" | "JobDeleted" | "JobExpired"
        ) {
            return;
        }
        let event = match JobEvent::decode(&recorded.data) {
            Ok(event) => event,
            Err(error) => {
                job_span(&job_id).in_scope(
                    || tracing::error!(version = recorded.version, %error, "retention: a job event cannot be decoded"),
                );
                return;
            }
        };
        match event {
            JobEvent::JobSubmitted(submission) => {
                self.unfinished.insert(job_id, submission.delete_after_seconds);
            }
            JobEvent::JobCompleted { at_ms } | JobEvent::JobFailed { at_ms, .. } => {
                let own = self.unfinished.remove(&job_id).flatten();
                if let Some(due) = retention::expires_at_ms(at_ms, own, self.retention_s) {
                    self.due.insert(job_id, due);
                }
            }
            JobEvent::JobDeleted { .. } => {
                self.unfinished.remove(&job_id);
                self.due.remove(&job_id);
            }
            JobEvent::JobExpired { .. } => {
                self.due.remove(&job_id);
                self.expiring.remove(&job_id);
                // Whoever recorded it, the files go now (again, harmlessly, after a restart).
                let deleted = self.args.media.delete_job(job_id.as_str()).await;
                job_span(&job_id).in_scope(|| match deleted {
                    Ok(()) => tracing::info!("retention ended: the job's media and documents are deleted"),
                    Err(e) => tracing::error!(error = %e, "deleting the files of an expired job"),
                });
            }
            _ => {}
        }
    }

    /// Records the expiry of every job whose retention has ended; its files go when the event
    /// comes back through the log.
    fn expire_due(&mut self, myself: &ActorRef<RetentionMsg>) {
        let now = now_ms();
        let due: Vec<JobId> = self
            .due
            .iter()
            .filter(|(id, at)| **at <= now && !self.expiring.contains(*id))
            .map(|(id, _)| id.clone())
            .collect();
        for job_id in due {
            self.expiring.insert(job_id.clone());
            let (jobs, retention_s, me) = (self.args.jobs.clone(), self.retention_s, myself.clone());
            let span = job_span(&job_id);
            tokio::spawn(
                async move {
                    match jobs.execute(&job_id, JobCommand::Expire { retention_s, at_ms: now_ms() }).await {
                        Ok(_) => {}
                        // Deleted meanwhile: nothing left to expire.
                        Err(CommandError::Refused(JobRefusal::Deleted)) => {}
                        Err(e) => {
                            tracing::warn!(error = %e, "recording a job's expiry; trying again shortly");
                            let _ = me.cast(RetentionMsg::NotExpired(job_id));
                        }
                    }
                }
                .instrument(span),
            );
        }
    }

    async fn save_checkpoint(&mut self) {
        let Some(file) = &self.args.checkpoint else { return };
        if self.position < self.start_head || self.position <= self.saved_position {
            return;
        }
        let saved = RetentionCheckpoint {
            position: self.position,
            retention_s: self.retention_s,
            unfinished: self.unfinished.iter().map(|(id, s)| (id.to_string(), *s)).collect(),
            due: self.due.iter().map(|(id, at)| (id.to_string(), *at)).collect(),
        };
        file.save(&saved).await;
        self.saved_position = self.position;
    }
}

/// A checkpoint's map with its job ids parsed back (invalid ones are logged and dropped).
fn parse_ids<T>(saved: BTreeMap<String, T>) -> HashMap<JobId, T> {
    saved
        .into_iter()
        .filter_map(|(id, value)| match JobId::parse(&id) {
            Ok(job_id) => Some((job_id, value)),
            Err(_) => {
                tracing::warn!(job_id = %id, "a retention checkpoint names an invalid job id; skipped");
                None
            }
        })
        .collect()
}
