//! The bookkeeping of a finished job's callback: each delivery attempt is recorded; a 2xx
//! answer delivers it, a 410 or an exhausted retry schedule abandons it.

use super::{CallbackOutcome, JobEvent, JobRefusal, JobState, Submission};

/// The result of one delivery; `next_attempt_at_ms` is when the caller's schedule would try
/// again (`None`: it is exhausted).
pub(super) fn record_attempt(
    state: &JobState,
    submission: &Submission,
    outcome: CallbackOutcome,
    at_ms: u64,
    next_attempt_at_ms: Option<u64>,
) -> Result<Vec<JobEvent>, JobRefusal> {
    if submission.callback_url.is_none() {
        return Err(JobRefusal::NoCallback);
    }
    if !state.status().is_some_and(|s| s.is_terminal()) {
        return Err(JobRefusal::NotFinished);
    }
    if state.callback.is_settled() {
        return Err(JobRefusal::CallbackSettled);
    }
    let attempt = state.callback.attempts + 1;
    if let CallbackOutcome::Status(code @ 200..=299) = outcome {
        return Ok(vec![JobEvent::CallbackDelivered { attempt, status_code: code, at_ms }]);
    }
    let give_up = if outcome.is_gone() {
        Some("the receiver answered 410 Gone".to_owned())
    } else if next_attempt_at_ms.is_none() {
        Some(format!("gave up after {attempt} attempts; the last one got: {outcome}"))
    } else {
        None
    };
    let next_attempt_at_ms = if give_up.is_some() { None } else { next_attempt_at_ms };
    let mut events = vec![JobEvent::CallbackAttempted { attempt, outcome, at_ms, next_attempt_at_ms }];
    if let Some(reason) = give_up {
        events.push(JobEvent::CallbackAbandoned { reason, at_ms });
    }
    Ok(events)
}
