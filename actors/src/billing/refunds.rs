//! The saga's compensation, as a reactor: a job that ends in `ERROR` delivered nothing, so its
//! charge goes back.
//!
//! [`RefundActor`] follows the whole log. It remembers which unfinished jobs were charged (from
//! the accounts' `BalanceCharged` events) and refunds a job when its `JobFailed` arrives; on start
//! it reads the log from the beginning and refunds, once caught up, every failed job that still
//! has a charge, so a crash between the failure and the refund loses no refund. A job deleted
//! before any work was spent on it (see `JobState::refunded_on_delete`: a direct job whose
//! recognition has not started, a manual job nobody claimed) is refunded the same way.
//!
//! It also gives back an *orphan* charge: a job paid at submission is charged just before it is
//! recorded (see `billing::saga`), so a crash (or a failed refund) between the two leaves a charge
//! for a job that does not exist. A charge whose job has not appeared `ORPHAN_GRACE` after it is
//! refunded.
//!
//! Refunds are idempotent: the account aggregate refuses a second refund for a job.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef};
use scribe_domain::VersionedEvent;
use scribe_domain::account::{AccountAggregate, AccountCommand, AccountEvent, AccountRefusal};
use scribe_domain::ids::{JobId, UserName, account_stream, job_id_of_stream, job_stream, user_of_account_stream};
use scribe_domain::job::{self, JobState};
use scribe_eventstore::{EventStore, RecordedEvent};
use tracing::Instrument;

use crate::checkpoint::{self, CheckpointFile, RefundCheckpoint};
use crate::clock::now_ms;
use crate::command::{self, CommandError};
use crate::jobs::job_span;
use crate::store_follow::follow_log;

/// How long after a charge its job must exist before the charge counts as an orphan. The saga
/// records the job right after charging it (milliseconds), so this is generous.
pub const ORPHAN_GRACE: Duration = Duration::from_secs(60);

/// How often charges without a job are looked for.
const ORPHAN_CHECK_EVERY: Duration = Duration::from_secs(10);

pub enum RefundMsg {
    Event(RecordedEvent),
    SubscriptionLost(String),
    /// Refund the charges whose job never appeared.
    CheckOrphans,
    /// Write the checkpoint (see `checkpoint`), if the reactor moved since the last one.
    SaveCheckpoint,
}

pub struct RefundActor;

pub struct RefundState {
    store: Arc<dyn EventStore>,
    /// Charged jobs not yet finished, with the account that paid.
    charged: HashMap<JobId, UserName>,
    /// Failed jobs to refund once the log is caught up with.
    pending: HashMap<JobId, UserName>,
    /// Jobs that a deletion would still refund, folded with the domain's rules (a job leaves
    /// once it finishes or work is spent on it).
    refundable: HashMap<JobId, JobState>,
    /// Charges not yet followed by any event of their job, with the account and when (ms).
    unmatched: HashMap<JobId, (UserName, i64)>,
    position: u64,
    start_head: u64,
    /// Refunds asked for whose `BalanceRefunded` has not come back through the log yet (kept as
    /// pending in the checkpoint, so a crash before the refund is recorded loses nothing).
    refunding: HashMap<JobId, UserName>,
    /// The stream version folded into each refundable job (to skip what a checkpoint already holds).
    versions: HashMap<JobId, u64>,
    checkpoint: Option<CheckpointFile>,
    saved_position: u64,
}

impl Actor for RefundActor {
    type Msg = RefundMsg;
    type State = RefundState;
    /// The store, and where the reactor keeps its checkpoint (`None`: it reads the log from the start).
    type Arguments = (Arc<dyn EventStore>, Option<CheckpointFile>);

    async fn pre_start(
        &self,
        myself: ActorRef<RefundMsg>,
        (store, file): Self::Arguments,
    ) -> Result<RefundState, ActorProcessingErr> {
        let start_head = store.head_position().await?;
        // A checkpoint past the head belongs to another log (the store was replaced): ignore it.
        let saved: RefundCheckpoint = file
            .as_ref()
            .and_then(CheckpointFile::load)
            .filter(|c: &RefundCheckpoint| c.position <= start_head)
            .unwrap_or_default();
        let mut state = RefundState {
            store: store.clone(),
            charged: parse_accounts(&saved.charged),
            pending: parse_accounts(&saved.pending),
            refundable: HashMap::new(),
            unmatched: HashMap::new(),
            position: saved.position,
            start_head,
            refunding: HashMap::new(),
            versions: HashMap::new(),
            checkpoint: file,
            saved_position: saved.position,
        };
        for (job_id, job, version) in checkpoint::restore_jobs(store.as_ref(), &saved.refundable).await? {
            state.refundable.insert(job_id.clone(), job);
            state.versions.insert(job_id, version);
        }
        if state.checkpoint.is_some() {
            myself.send_interval(checkpoint::SAVE_EVERY, || RefundMsg::SaveCheckpoint);
        }
        myself.send_interval(ORPHAN_CHECK_EVERY, || RefundMsg::CheckOrphans);
        if state.position >= start_head {
            state.refund_pending();
        }
        follow_log(store, saved.position, myself, RefundMsg::Event, RefundMsg::SubscriptionLost);
        Ok(state)
    }

    async fn handle(
        &self,
        myself: ActorRef<RefundMsg>,
        msg: RefundMsg,
        state: &mut RefundState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            RefundMsg::Event(event) => {
                state.position = event.position;
                state.fold(&event);
                if state.position >= state.start_head {
                    state.refund_pending();
                }
            }
            RefundMsg::CheckOrphans => {
                if state.position >= state.start_head {
                    state.refund_orphans().await;
                }
            }
            RefundMsg::SaveCheckpoint => state.save_checkpoint().await,
            RefundMsg::SubscriptionLost(reason) => {
                tracing::error!(%reason, position = state.position, "refunds: log subscription lost; resubscribing");
                tokio::time::sleep(Duration::from_millis(500)).await;
                follow_log(state.store.clone(), state.position, myself, RefundMsg::Event, RefundMsg::SubscriptionLost);
            }
        }
        Ok(())
    }
}

impl RefundState {
    fn fold(&mut self, recorded: &RecordedEvent) {
        if let Some(user) = user_of_account_stream(&recorded.stream) {
            match AccountEvent::decode(&recorded.data) {
                Ok(AccountEvent::BalanceCharged { job_id, .. }) => {
                    self.unmatched.insert(job_id.clone(), (user.clone(), recorded.recorded_at_ms));
                    self.charged.insert(job_id, user);
                }
                Ok(AccountEvent::BalanceRefunded { job_id, .. }) => {
                    self.charged.remove(&job_id);
                    self.pending.remove(&job_id);
                    self.unmatched.remove(&job_id);
                    self.refunding.remove(&job_id);
                }
                Ok(_) => {}
                Err(error) => tracing::error!(
                    stream = %recorded.stream,
                    version = recorded.version,
                    event_type = %recorded.event_type,
                    %error,
                    "refunds: an account event cannot be decoded; its charge or refund is not followed"
                ),
            }
        } else if let Some(job_id) = job_id_of_stream(&recorded.stream) {
            self.unmatched.remove(&job_id);
            self.follow_refundable(&job_id, recorded);
            match recorded.event_type.as_str() {
                "JobFailed" => {
                    if let Some(user) = self.charged.remove(&job_id) {
                        self.pending.insert(job_id, user);
                    }
                }
                "JobCompleted" | "JobDeleted" => {
                    self.charged.remove(&job_id);
                }
                _ => {}
            }
        }
    }
}

impl RefundState {
    /// Refunds every charge older than `ORPHAN_GRACE` whose job does not exist.
    async fn refund_orphans(&mut self) {
        let now = now_ms() as i64;
        let due: Vec<JobId> = self
            .unmatched
            .iter()
            .filter(|(_, (_, at))| now.saturating_sub(*at) >= ORPHAN_GRACE.as_millis() as i64)
            .map(|(id, _)| id.clone())
            .collect();
        for job_id in due {
            // The job may have been submitted before its charge (a URL job): then it exists.
            match self.store.read_stream(&job_stream(&job_id), 0).await {
                Ok(events) if events.is_empty() => {
                    if let Some((user, _)) = self.unmatched.remove(&job_id) {
                        job_span(&job_id).in_scope(|| {
                            tracing::warn!(%user, "a charge without a job (the job was never recorded); refunding it")
                        });
                        self.charged.remove(&job_id);
                        refund(self.store.clone(), job_id, user);
                    }
                }
                Ok(_) => {
                    self.unmatched.remove(&job_id);
                }
                Err(error) => job_span(&job_id).in_scope(
                    || tracing::error!(%error, "refunds: could not look for the job of a charge; trying again later"),
                ),
            }
        }
    }

    /// Folds the events of jobs that a deletion would refund; a deletion that the domain says
    /// is refunded moves the job's charge to the pending refunds.
    fn follow_refundable(&mut self, job_id: &JobId, recorded: &RecordedEvent) {
        let Ok(event) = job::JobEvent::decode(&recorded.data) else { return };
        if self.versions.get(job_id).is_some_and(|v| recorded.version <= *v) {
            return; // already in the state restored from the checkpoint
        }
        self.versions.remove(job_id);
        let prior = match self.refundable.remove(job_id) {
            Some(state) => state,
            None if recorded.version == 0 => JobState::default(),
            None => return,
        };
        if matches!(event, job::JobEvent::JobDeleted { .. }) && prior.refunded_on_delete() {
            if let Some(user) = self.charged.remove(job_id) {
                self.pending.insert(job_id.clone(), user);
            }
            return;
        }
        let state = job::evolve(prior, &event);
        // A job stays followed while a deletion would refund it; once work is spent on it (or it
        // finishes) that never changes back.
        if !state.deleted && state.refunded_on_delete() {
            self.refundable.insert(job_id.clone(), state);
            self.versions.insert(job_id.clone(), recorded.version);
        }
    }

    /// Asks for the refund of every pending job (once the log is caught up with).
    fn refund_pending(&mut self) {
        for (job_id, user) in std::mem::take(&mut self.pending) {
            self.refunding.insert(job_id.clone(), user.clone());
            refund(self.store.clone(), job_id, user);
        }
    }

    /// Writes the checkpoint once caught up, if the reactor moved since the last one.
    async fn save_checkpoint(&mut self) {
        let Some(file) = &self.checkpoint else { return };
        if self.position < self.start_head || self.position <= self.saved_position {
            return;
        }
        let accounts = |m: &HashMap<JobId, UserName>| {
            m.iter().map(|(j, u)| (j.to_string(), u.to_string())).collect::<std::collections::BTreeMap<_, _>>()
        };
        let mut pending = accounts(&self.pending);
        pending.extend(accounts(&self.refunding));
        let saved = RefundCheckpoint {
            position: self.position,
            charged: accounts(&self.charged),
            pending,
            refundable: self.versions.iter().map(|(j, v)| (j.to_string(), *v)).collect(),
        };
        file.save(&saved).await;
        self.saved_position = self.position;
    }
}

/// Job id → account maps of a checkpoint, parsed back (invalid entries are logged and dropped).
fn parse_accounts(saved: &std::collections::BTreeMap<String, String>) -> HashMap<JobId, UserName> {
    saved
        .iter()
        .filter_map(|(job, user)| match (JobId::parse(job), UserName::parse(user)) {
            (Ok(job), Ok(user)) => Some((job, user)),
            _ => {
                tracing::warn!(%job, %user, "a refund checkpoint names an invalid job or account; skipped");
                None
            }
        })
        .collect()
}

/// Gives a failed job's charge back to `user`.
fn refund(store: Arc<dyn EventStore>, job_id: JobId, user: UserName) {
    let span = job_span(&job_id);
    tokio::spawn(
        async move {
            let cmd = AccountCommand::Refund { job_id, at_ms: now_ms() };
            match command::execute::<AccountAggregate>(store.as_ref(), &account_stream(&user), cmd).await {
                Ok(_) => tracing::info!(%user, "refunded the charge of a failed (or unclaimed deleted) job"),
                Err(CommandError::Refused(AccountRefusal::NothingToRefund(_))) => {}
                Err(e) => tracing::error!(%user, error = %e, "refunding a failed job"),
            }
        }
        .instrument(span),
    );
}
