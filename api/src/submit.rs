//! The checks and the command shared by both ways of creating a job (upload and URL): the
//! glossary must be the caller's, client URLs must pass the address guard, the balance must
//! cover the job, and the job is submitted on its own actor.
//!
//! Billing rule: a job is charged when its price is known. Uploads are probed before the job
//! exists, so they are charged at submission (402 if the balance does not cover the real
//! duration). A URL job's duration is unknown until the download, so submission only requires
//! the price of its first minute (402 otherwise).

use poem::http::StatusCode;
use scribe_actors::clock::now_ms;
use scribe_actors::command::{self, CommandError};
use scribe_actors::media::GuardError;
use scribe_domain::account::{AccountAggregate, AccountCommand, AccountRefusal};
use scribe_domain::ids::{GlossaryId, JobId, UserName, account_stream};
use scribe_domain::requests::JobRequest;

use crate::auth::Caller;
use crate::error::ApiError;
use crate::state::ApiState;

/// A fresh, unguessable job id.
pub fn new_job_id() -> JobId {
    JobId::parse(&uuid::Uuid::new_v4().to_string()).expect("a UUID is a valid job id")
}

/// `glossaryId` must name one of the caller's glossaries: unknown → 404, deleted → 410,
/// another account's → 403, each naming `glossaryId`.
pub fn check_glossary(state: &ApiState, caller: &Caller, id: Option<&GlossaryId>) -> Result<(), ApiError> {
    let Some(id) = id else { return Ok(()) };
    let field = Some("glossaryId".to_owned());
    let record = state.read.glossary(id).map_err(|e| ApiError::internal("Looking up the glossary", &e))?;
    match record {
        None => Err(ApiError::new(StatusCode::NOT_FOUND, format!("glossaryId {id} does not exist"), field)),
        Some(r) if r.owner != caller.user => {
            Err(ApiError::new(StatusCode::FORBIDDEN, format!("glossaryId {id} belongs to another account"), field))
        }
        Some(r) if r.deleted => Err(ApiError::new(StatusCode::GONE, format!("glossaryId {id} was deleted"), field)),
        Some(_) => Ok(()),
    }
}

/// Refuses a direct job this server's models could not finish (a translation target without a
/// model, a language the speech model does not know): 400 naming the parameter and what the
/// server can do, before anything is stored or charged.
pub fn check_capabilities(state: &ApiState, request: &JobRequest) -> Result<(), ApiError> {
    Ok(state.settings.capabilities.check(request)?)
}

/// Refuses a client URL that the service must not contact (private or unresolvable host),
/// naming the parameter.
pub async fn vet_url(state: &ApiState, field: &str, url: &url::Url) -> Result<(), ApiError> {
    match state.guard.check(url).await {
        Ok(_) => Ok(()),
        Err(e @ GuardError::PrivateAddress { .. }) => {
            Err(ApiError::invalid(field, format!("{field} is refused: {e}; only public addresses can be used")))
        }
        Err(e) => Err(ApiError::invalid(field, format!("{field} cannot be used: {e}"))),
    }
}

/// The price of `request` for `nr_audio_seconds` of audio, in cents.
pub fn price_cents(state: &ApiState, request: &JobRequest, nr_audio_seconds: u64) -> u64 {
    state.settings.prices.price_cents(request.job_type, request.transcription_type, nr_audio_seconds, false)
}

/// 402 unless the caller's balance covers the first minute of the job (the least any job costs).
pub fn check_minimum_balance(state: &ApiState, caller: &Caller, request: &JobRequest) -> Result<(), ApiError> {
    let price = price_cents(state, request, 0);
    if caller.balance_cents < price {
        return Err(insufficient(caller.balance_cents, price));
    }
    Ok(())
}

/// Charges the caller's account for a job; 402 if the balance does not cover it. Nothing is
/// recorded when the job is free.
pub async fn charge(state: &ApiState, user: &UserName, job_id: &JobId, cents: u64) -> Result<(), ApiError> {
    if cents == 0 {
        return Ok(());
    }
    let cmd = AccountCommand::Charge { job_id: job_id.clone(), cents, at_ms: now_ms() };
    match command::execute::<AccountAggregate>(state.store.as_ref(), &account_stream(user), cmd).await {
        Ok(_) => Ok(()),
        Err(CommandError::Refused(AccountRefusal::InsufficientBalance { balance_cents, price_cents })) => {
            Err(insufficient(balance_cents, price_cents))
        }
        Err(e) => Err(ApiError::internal("Charging the account", &e)),
    }
}

/// Gives back a charge when the job it paid for could not be recorded.
pub async fn refund(state: &ApiState, user: &UserName, job_id: &JobId) {
    let cmd = AccountCommand::Refund { job_id: job_id.clone(), at_ms: now_ms() };
    match command::execute::<AccountAggregate>(state.store.as_ref(), &account_stream(user), cmd).await {
        Ok(_) | Err(CommandError::Refused(AccountRefusal::NothingToRefund(_))) => {}
        Err(e) => tracing::error!(%job_id, %user, error = %e, "refunding a job that was not recorded"),
    }
}

fn insufficient(balance_cents: u64, price_cents: u64) -> ApiError {
    ApiError::payment_required(scribe_domain::account::insufficient_balance_message(balance_cents, price_cents))
}
