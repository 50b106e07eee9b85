//! The one path every new job takes to be paid for, whichever door it comes through (the upload
//! and URL endpoints, the order of a human translation, the OpenAI door's requests, a live
//! session kept as a job). A door builds a [`NewJob`] and asks [`Billing::submit`]; it only maps
//! the answer to its protocol. A live session's minutes are paid here too, as they start
//! ([`Billing::charge_live_minute`]).
//!
//! The saga, in order:
//!
//! 1. the rules that need no money: the media-length rule (`MaxDuration`) and the domain's own
//!    decision on the new job (it is pure): a refused job is never charged;
//! 2. the charge, when the price is known (stored media, a translation of a known length); a job
//!    whose length comes later (a URL) must only have its first minute covered now;
//! 3. the job is recorded; if that fails, the charge is given back at once.
//!
//! A job whose length is known only once its media is in is charged by
//! [`Billing::charge_probed`] in the probe stage, before its length is recorded, so no
//! transcription starts unpaid. The compensation for work that never delivers (a job that ends
//! in `ERROR`, a deletion before work started, a crash between charge and record) is the refund
//! reactor's (`billing::refunds`).
//!
//! Prices and the longest accepted media are set once, by the operator (`scribe serve
//! --price-*-per-minute`, `--max-duration`), and live here only.

use std::sync::Arc;

use scribe_domain::account::{AccountAggregate, AccountCommand, AccountRefusal, Prices, insufficient_balance_message};
use scribe_domain::http_url::HttpUrl;
use scribe_domain::ids::{JobId, UserName, account_stream};
use scribe_domain::job::{
    self, JobCommand, JobRefusal, JobState, MaxDuration, MediaSource, MediaTooLong, NewMedia, SourceJobFacts,
    StoredMedia,
};
use scribe_domain::kinds::{JobType, TranscriptionType};
use scribe_domain::requests::{JobRequest, TranslationRequest};

use crate::clock::now_ms;
use crate::command::{self, CommandError};
use crate::jobs::{JobError, JobExecuted, Jobs, job_span};
use scribe_eventstore::EventStore;

/// A new job, as a door hands it to the saga.
#[derive(Debug, Clone)]
pub enum NewJob {
    /// Media the door received, stored and probed (an upload): priced on its duration and
    /// charged before the job is recorded, with its file and its duration, in one append.
    Stored {
        job_id: JobId,
        owner: UserName,
        request: JobRequest,
        /// The file name the client gave.
        filename: String,
        media: StoredMedia,
        duration_ms: u64,
        /// The node whose open request waits for the job's answer (the OpenAI door).
        awaited_on: Option<String>,
    },
    /// Media the service fetches (`sourceUrl`): its length is unknown until then, so its first
    /// minute must be covered now and the rest is charged at probe ([`Billing::charge_probed`]).
    Url { job_id: JobId, owner: UserName, request: JobRequest, source_url: HttpUrl },
    /// Translated subtitles of a finished manual captions job, made by a person: the translation
    /// of the source's length is charged before the order is recorded.
    Translation { job_id: JobId, owner: UserName, request: TranslationRequest, source: SourceJobFacts },
    /// A live session kept as a job, run by the node `node`: its first minute must be covered
    /// now; each minute is paid as it starts ([`Billing::charge_live_minute`]).
    Live { job_id: JobId, owner: UserName, request: JobRequest, node: String },
}

/// Why a new job was not recorded. Nothing stays charged for it.
#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    /// The media is longer than the server accepts (nothing was charged or recorded).
    #[error(transparent)]
    TooLong(MediaTooLong),
    /// The balance does not cover the job (or, for a URL job, its first minute).
    #[error("{}", insufficient_balance_message(*.balance_cents, *.price_cents))]
    InsufficientBalance { balance_cents: u64, price_cents: u64 },
    /// The domain refused the new job, before anything was charged.
    #[error(transparent)]
    Refused(JobRefusal),
    /// The account could not be read or charged.
    #[error("the account: {0}")]
    Account(CommandError<AccountRefusal>),
    /// Recording the job failed; its charge was given back.
    #[error(transparent)]
    Job(JobError),
}

/// Why a job could not be charged at probe: only the store failing (the stage is tried again).
#[derive(Debug, thiserror::Error)]
#[error("charging a job at probe: {0}")]
pub struct ChargeError(String);

/// The saga's handle, built once at start-up and shared by every door and the probe stage.
#[derive(Clone)]
pub struct Billing {
    store: Arc<dyn EventStore>,
    jobs: Jobs,
    prices: Prices,
    max_duration: MaxDuration,
}

impl Billing {
    pub fn new(store: Arc<dyn EventStore>, jobs: Jobs, prices: Prices, max_duration: MaxDuration) -> Billing {
        Billing { store, jobs, prices, max_duration }
    }

    /// What jobs cost on this server.
    pub fn prices(&self) -> &Prices {
        &self.prices
    }

    /// Whether `owner`'s balance covers the least `request` can cost (its first minute). A door
    /// that receives media first asks this before receiving it; [`Billing::submit`] asks it again.
    pub async fn check_minimum(&self, owner: &UserName, request: &JobRequest) -> Result<(), SubmitError> {
        self.check_least(owner, request.job_type, request.transcription_type).await
    }

    /// [`Billing::check_minimum`] for any job of this type and transcription type, before the
    /// rest of its request is known (a door that reads its parameters with the media).
    pub async fn check_least(
        &self,
        owner: &UserName,
        job_type: JobType,
        transcription_type: TranscriptionType,
    ) -> Result<(), SubmitError> {
        let least = self.prices.price_cents(job_type, transcription_type, 0, false);
        if least == 0 {
            return Ok(());
        }
        let account = command::load::<AccountAggregate>(self.store.as_ref(), &account_stream(owner))
            .await
            .map_err(SubmitError::Account)?;
        let balance_cents = account.state.balance_cents;
        if balance_cents < least {
            return Err(SubmitError::InsufficientBalance { balance_cents, price_cents: least });
        }
        Ok(())
    }

    /// Charges and records a new job; a job that cannot be recorded gets its charge back.
    pub async fn submit(&self, new_job: NewJob) -> Result<JobExecuted, SubmitError> {
        let at_ms = now_ms();
        let (job_id, owner, command, due) = match new_job {
            NewJob::Stored { job_id, owner, request, filename, media, duration_ms, awaited_on } => {
                self.max_duration.check(duration_ms).map_err(SubmitError::TooLong)?;
                let price = self.prices.price_cents(
                    request.job_type,
                    request.transcription_type,
                    job::nr_audio_seconds(duration_ms),
                    false,
                );
                let command = JobCommand::SubmitUpload {
                    job_id: job_id.clone(),
                    owner: owner.clone(),
                    at_ms,
                    request,
                    filename,
                    media,
                    duration_ms,
                    awaited_on,
                };
                (job_id, owner, command, Due::Now(price))
            }
            NewJob::Url { job_id, owner, request, source_url } => {
                let source = NewMedia::Url { source_url };
                self.arriving_later(job_id, owner, request, source, Due::AtProbe, at_ms).await?
            }
            NewJob::Live { job_id, owner, request, node } => {
                let source = NewMedia::Live { node };
                self.arriving_later(job_id, owner, request, source, Due::AsSpoken, at_ms).await?
            }
            NewJob::Translation { job_id, owner, request, source } => {
                let price = self.prices.price_cents(
                    JobType::Perfect,
                    TranscriptionType::TranslatedSubtitles,
                    source.nr_audio_seconds,
                    true,
                );
                let command = JobCommand::RequestTranslation {
                    job_id: job_id.clone(),
                    owner: owner.clone(),
                    at_ms,
                    request,
                    source,
                };
                (job_id, owner, command, Due::Now(price))
            }
        };
        // The domain's answer first (it is pure): a refused job is never charged.
        job::decide(&JobState::default(), command.clone()).map_err(SubmitError::Refused)?;
        let charged = match due {
            Due::Now(cents) => self.charge(&owner, &job_id, cents).await?,
            Due::AtProbe | Due::AsSpoken => false,
        };
        match self.jobs.execute(&job_id, command).await {
            Ok(executed) => Ok(executed),
            Err(e) => {
                if charged {
                    self.refund_unrecorded(&owner, &job_id).await;
                }
                Err(SubmitError::Job(e))
            }
        }
    }

    /// The submission of a job whose media arrives after it is recorded (fetched, or spoken):
    /// only its first minute must be covered now.
    async fn arriving_later(
        &self,
        job_id: JobId,
        owner: UserName,
        request: JobRequest,
        source: NewMedia,
        due: Due,
        at_ms: u64,
    ) -> Result<(JobId, UserName, JobCommand, Due), SubmitError> {
        self.check_minimum(&owner, &request).await?;
        let command = JobCommand::Submit { job_id: job_id.clone(), owner: owner.clone(), at_ms, request, source };
        Ok((job_id, owner, command, due))
    }

    /// The probe stage's part of the saga, for a job recorded before its length was known (a URL
    /// job): the media-length rule, then the charge for `duration_ms`. `Ok(None)`: the job goes
    /// on; `Ok(Some(error_msg))`: it fails with that message (too long, or a balance that does not
    /// cover it), nothing charged. A job paid at submission, or already charged, is left alone.
    pub async fn charge_probed(&self, job_id: &JobId, duration_ms: u64) -> Result<Option<String>, ChargeError> {
        if let Err(too_long) = self.max_duration.check(duration_ms) {
            job_span(job_id).in_scope(|| tracing::info!(duration_ms, "media longer than the server accepts"));
            return Ok(Some(too_long.to_string()));
        }
        let (job, _) = self.jobs.state(job_id).await.map_err(|e| ChargeError(e.to_string()))?;
        let Some(submission) = job.submission.as_ref() else { return Ok(None) };
        if !matches!(submission.source, MediaSource::Url { .. }) {
            return Ok(None);
        }
        let cents = self.prices.price_cents(
            submission.job_type,
            submission.transcription_type,
            job::nr_audio_seconds(duration_ms),
            false,
        );
        match self.charge(&submission.owner, job_id, cents).await {
            Ok(_) | Err(SubmitError::Account(CommandError::Refused(AccountRefusal::AlreadyCharged(_)))) => Ok(None),
            Err(e @ SubmitError::InsufficientBalance { .. }) => Ok(Some(e.to_string())),
            Err(e) => Err(ChargeError(e.to_string())),
        }
    }

    /// Pays minute `minute` (1, 2, ...) of `owner`'s live session `session`, as its first sample
    /// arrives, at the price of a minute of a direct job; a minute already paid is not paid again.
    pub async fn charge_live_minute(&self, owner: &UserName, session: &JobId, minute: u32) -> Result<(), SubmitError> {
        let cents = self.prices.price_cents(JobType::Direct, TranscriptionType::Transcription, 60, false);
        if cents == 0 {
            return Ok(());
        }
        let cmd = AccountCommand::ChargeLiveMinute { session: session.clone(), minute, cents, at_ms: now_ms() };
        match command::execute::<AccountAggregate>(self.store.as_ref(), &account_stream(owner), cmd).await {
            Ok(_) | Err(CommandError::Refused(AccountRefusal::LiveMinuteAlreadyCharged { .. })) => Ok(()),
            Err(CommandError::Refused(AccountRefusal::InsufficientBalance { balance_cents, price_cents })) => {
                Err(SubmitError::InsufficientBalance { balance_cents, price_cents })
            }
            Err(e) => Err(SubmitError::Account(e)),
        }
    }

    /// Charges `owner` `cents` for `job_id`; `Ok(false)` when the job is free (nothing recorded).
    async fn charge(&self, owner: &UserName, job_id: &JobId, cents: u64) -> Result<bool, SubmitError> {
        if cents == 0 {
            return Ok(false);
        }
        let cmd = AccountCommand::Charge { job_id: job_id.clone(), cents, at_ms: now_ms() };
        match command::execute::<AccountAggregate>(self.store.as_ref(), &account_stream(owner), cmd).await {
            Ok(_) => Ok(true),
            Err(CommandError::Refused(AccountRefusal::InsufficientBalance { balance_cents, price_cents })) => {
                Err(SubmitError::InsufficientBalance { balance_cents, price_cents })
            }
            Err(e) => Err(SubmitError::Account(e)),
        }
    }

    /// Gives back the charge of a job that could not be recorded (should this fail too, the
    /// refund reactor gives the orphan charge back).
    async fn refund_unrecorded(&self, owner: &UserName, job_id: &JobId) {
        let cmd = AccountCommand::Refund { job_id: job_id.clone(), at_ms: now_ms() };
        match command::execute::<AccountAggregate>(self.store.as_ref(), &account_stream(owner), cmd).await {
            Ok(_) | Err(CommandError::Refused(AccountRefusal::NothingToRefund(_))) => {}
            Err(e) => job_span(job_id)
                .in_scope(|| tracing::error!(user = %owner, error = %e, "refunding a job that was not recorded")),
        }
    }
}

/// When a new job is paid for.
#[derive(Debug, Clone, Copy)]
enum Due {
    /// At submission, this many cents.
    Now(u64),
    /// At probe, once its length is known (its first minute must be covered at submission).
    AtProbe,
    /// Minute by minute as a live session's audio arrives (its first must be covered now).
    AsSpoken,
}
