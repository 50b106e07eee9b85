//! The checks shared by the ways of creating a job (upload, URL, translation order, the OpenAI
//! door): [`admit`], everything a job request can be refused for before its media is received
//! (what this server's models can do, the glossary, the callback address, the first minute's
//! price), and what the billing saga (`scribe_actors::billing`, which charges and records every
//! new job) answers, in HTTP.
//!
//! Billing rule (the saga's): a job is charged when its price is known. Uploads are probed before
//! the job exists, so they are charged at submission (402 if the balance does not cover the real
//! duration). A URL job's duration is unknown until the download, so submission only requires
//! the price of its first minute (402 otherwise).

use poem::http::StatusCode;
use scribe_actors::billing::SubmitError;
use scribe_actors::command::CommandError;
use scribe_actors::media::GuardError;
use scribe_domain::ids::{GlossaryId, JobId};
use scribe_domain::requests::JobRequest;

use crate::auth::Caller;
use crate::error::{ApiError, job_error};
use crate::state::ApiState;

/// A fresh, unguessable job id.
pub fn new_job_id() -> JobId {
    JobId::parse(&uuid::Uuid::new_v4().to_string()).expect("a UUID is a valid job id")
}

/// Everything `request` can be refused for before its media is received or fetched, in this
/// order: what this server's models can do (400), the glossary (404/403/410), the callback
/// address (400), a balance that cannot pay the first minute (402).
pub async fn admit(state: &ApiState, caller: &Caller, request: &JobRequest) -> Result<(), ApiError> {
    check_capabilities(state, request)?;
    check_glossary(state, caller, request.glossary_id.as_ref())?;
    if let Some(callback) = &request.callback_url {
        vet_url(state, "callbackUrl", callback.url()).await?;
    }
    check_minimum_balance(state, caller, request).await
}

/// `glossaryId` must name one of the caller's glossaries: unknown → 404, deleted → 410,
/// another account's → 403, each naming `glossaryId`.
fn check_glossary(state: &ApiState, caller: &Caller, id: Option<&GlossaryId>) -> Result<(), ApiError> {
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
fn check_capabilities(state: &ApiState, request: &JobRequest) -> Result<(), ApiError> {
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

/// 402 before anything is received unless the caller's balance covers the first minute of the
/// job (the least any job costs).
async fn check_minimum_balance(state: &ApiState, caller: &Caller, request: &JobRequest) -> Result<(), ApiError> {
    state.billing.check_minimum(&caller.user, request).await.map_err(billing_error)
}

/// What the billing saga's answer means for the client: media too long 400 on `file`, a balance
/// that does not cover the job 402, a refused or failed job as the job's own error.
pub fn billing_error(e: SubmitError) -> ApiError {
    match e {
        SubmitError::TooLong(refusal) => ApiError::invalid("file", refusal.to_string()),
        e @ SubmitError::InsufficientBalance { .. } => ApiError::payment_required(e.to_string()),
        SubmitError::Refused(refusal) => job_error(CommandError::Refused(refusal)),
        SubmitError::Account(e) => ApiError::internal("Charging the account", &e),
        SubmitError::Job(e) => job_error(e),
    }
}
