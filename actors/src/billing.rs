//! Billing the edge cannot do when it answers: a URL job's price is known only once its media
//! is in, and a job that ends in `ERROR` delivered nothing, so its charge goes back.
//!
//! - [`charge_url_job`] runs in the probe stage, before `MediaProbed` is recorded, so no
//!   transcription starts unpaid; a balance that does not cover the job fails it with a message
//!   that says so.
//! - [`RefundActor`] follows the whole log. It remembers which unfinished jobs were charged (from
//!   the accounts' `BalanceCharged` events) and refunds a job when its `JobFailed` arrives; on
//!   start it reads the log from the beginning and refunds, once caught up, every failed job
//!   that still has a charge, so a crash between the failure and the refund loses no refund.
//!
//! Both are idempotent: the account aggregate refuses a second charge or refund for a job.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef};
use scribe_domain::VersionedEvent;
use scribe_domain::account::{AccountAggregate, AccountCommand, AccountEvent, AccountRefusal, Prices, insufficient_balance_message};
use scribe_domain::ids::{JobId, UserName, account_stream, job_id_of_stream, user_of_account_stream};
use scribe_domain::job::{self, JobState, MediaSource};
use scribe_domain::kinds::JobType;

use crate::clock::now_ms;
use crate::command::{self, CommandError};
use crate::eventstore::{EventStore, RecordedEvent, follow_log};

/// Charges the owner of a URL job for its `duration_ms` of media. `Err` carries the job's
/// `errorMsg` when the balance does not cover it; an upload (charged by the edge) and a job
/// already charged are left alone.
pub async fn charge_url_job(
    store: &dyn EventStore,
    prices: &Prices,
    job_id: &JobId,
    job: &JobState,
    duration_ms: u64,
) -> Result<(), ChargeError> {
    let Some(submission) = job.submission.as_ref() else { return Ok(()) };
    if !matches!(submission.source, MediaSource::Url { .. }) {
        return Ok(());
    }
    let cents = prices.price_cents(submission.job_type, submission.transcription_type, job::nr_audio_seconds(duration_ms), false);
    if cents == 0 {
        return Ok(());
    }
    let cmd = AccountCommand::Charge { job_id: job_id.clone(), cents, at_ms: now_ms() };
    match command::execute::<AccountAggregate>(store, &account_stream(&submission.owner), cmd).await {
        Ok(_) | Err(CommandError::Refused(AccountRefusal::AlreadyCharged(_))) => Ok(()),
        Err(CommandError::Refused(AccountRefusal::InsufficientBalance { balance_cents, price_cents })) => {
            Err(ChargeError::Insufficient(insufficient_balance_message(balance_cents, price_cents)))
        }
        Err(e) => Err(ChargeError::Store(e.to_string())),
    }
}

/// Why a URL job could not be charged.
#[derive(Debug)]
pub enum ChargeError {
    /// The balance does not cover the job: this is the job's `errorMsg`.
    Insufficient(String),
    /// The event store failed; the stage is tried again.
    Store(String),
}

pub enum RefundMsg {
    Event(RecordedEvent),
    SubscriptionLost(String),
}

pub struct RefundActor;

pub struct RefundState {
    store: Arc<dyn EventStore>,
    /// Charged jobs not yet finished, with the account that paid.
    charged: HashMap<JobId, UserName>,
    /// Failed jobs to refund once the log is caught up with.
    pending: HashMap<JobId, UserName>,
    /// Unfinished manual jobs, folded with the domain's rules, to decide a refund on deletion.
    manual: HashMap<JobId, JobState>,
    position: u64,
    start_head: u64,
}

impl Actor for RefundActor {
    type Msg = RefundMsg;
    type State = RefundState;
    type Arguments = Arc<dyn EventStore>;

    async fn pre_start(&self, myself: ActorRef<RefundMsg>, store: Arc<dyn EventStore>) -> Result<RefundState, ActorProcessingErr> {
        let start_head = store.head_position().await?;
        follow_log(store.clone(), 0, myself, RefundMsg::Event, RefundMsg::SubscriptionLost);
        Ok(RefundState { store, charged: HashMap::new(), pending: HashMap::new(), manual: HashMap::new(), position: 0, start_head })
    }

    async fn handle(&self, myself: ActorRef<RefundMsg>, msg: RefundMsg, state: &mut RefundState) -> Result<(), ActorProcessingErr> {
        match msg {
            RefundMsg::Event(event) => {
                state.position = event.position;
                state.fold(&event);
                if state.position >= state.start_head {
                    for (job_id, user) in std::mem::take(&mut state.pending) {
                        refund(state.store.clone(), job_id, user);
                    }
                }
            }
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
                    self.charged.insert(job_id, user);
                }
                Ok(AccountEvent::BalanceRefunded { job_id, .. }) => {
                    self.charged.remove(&job_id);
                    self.pending.remove(&job_id);
                }
                _ => {}
            }
        } else if let Some(job_id) = job_id_of_stream(&recorded.stream) {
            self.follow_manual(&job_id, recorded);
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
    /// Folds the events of manual jobs; a deletion that the domain says is refunded moves the
    /// job's charge to the pending refunds.
    fn follow_manual(&mut self, job_id: &JobId, recorded: &RecordedEvent) {
        let Ok(event) = job::JobEvent::decode(&recorded.data) else { return };
        let prior = match self.manual.remove(job_id) {
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
        let manual = state.submission.as_ref().is_some_and(|s| s.job_type == JobType::Perfect);
        if manual && state.finished.is_none() && !state.deleted {
            self.manual.insert(job_id.clone(), state);
        }
    }
}

/// Gives a failed job's charge back to `user`.
fn refund(store: Arc<dyn EventStore>, job_id: JobId, user: UserName) {
    tokio::spawn(async move {
        let cmd = AccountCommand::Refund { job_id: job_id.clone(), at_ms: now_ms() };
        match command::execute::<AccountAggregate>(store.as_ref(), &account_stream(&user), cmd).await {
            Ok(_) => tracing::info!(%job_id, %user, "refunded the charge of a failed (or unclaimed deleted) job"),
            Err(CommandError::Refused(AccountRefusal::NothingToRefund(_))) => {}
            Err(e) => tracing::error!(%job_id, %user, error = %e, "refunding a failed job"),
        }
    });
}

