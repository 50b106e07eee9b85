//! How long a finished job's media and documents are kept. Two rules can limit it: the
//! operator's `--retention` (for every job) and the job's own `deleteAfterSeconds` (asked at
//! submission); the shorter wins, counted from when the job finished (`DONE` or `ERROR`). When
//! it ends the job *expires*: its files are removed and it answers as a deleted job, while its
//! history keeps every event, `JobExpired` last, as a deletion does.

use super::{JobEvent, JobRefusal, JobState};

/// How long a finished job is kept, in seconds: the shorter of the job's own `delete_after_s`
/// and the operator's `retention_s`; `None` when neither limits it.
pub fn kept_for_s(delete_after_s: Option<u64>, retention_s: Option<u64>) -> Option<u64> {
    match (delete_after_s, retention_s) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// When a job that finished at `finished_ms` expires (milliseconds since the epoch), if any
/// rule limits it (see [`kept_for_s`]).
pub fn expires_at_ms(finished_ms: u64, delete_after_s: Option<u64>, retention_s: Option<u64>) -> Option<u64> {
    let keep_s = kept_for_s(delete_after_s, retention_s)?;
    Some(finished_ms.saturating_add(keep_s.saturating_mul(1000)))
}

impl JobState {
    /// When this job's data expires under the operator's `retention_s`: `None` while it is
    /// unfinished, once it is deleted, or when nothing limits how long it is kept.
    pub fn expires_at_ms(&self, retention_s: Option<u64>) -> Option<u64> {
        let (_, finished_ms) = self.finished?;
        if self.deleted {
            return None;
        }
        expires_at_ms(finished_ms, self.submission.as_ref()?.delete_after_seconds, retention_s)
    }
}

/// Decides the expiry of a job at `at_ms` under the operator's `retention_s`: refused unless it
/// finished and its retention has ended.
pub(super) fn decide_expire(
    state: &JobState,
    retention_s: Option<u64>,
    at_ms: u64,
) -> Result<Vec<JobEvent>, JobRefusal> {
    let own = state.submission.as_ref().and_then(|s| s.delete_after_seconds);
    match (state.expires_at_ms(retention_s), kept_for_s(own, retention_s)) {
        (Some(due), Some(kept)) if at_ms >= due => Ok(vec![JobEvent::JobExpired { retention_s: kept, at_ms }]),
        _ => Err(JobRefusal::OutOfOrder("the job's retention has not ended")),
    }
}
