//! A job an open request waits for (the OpenAI door answers a request with its job's result).
//! The node that holds the request records itself in the submission, so the log knows that the
//! answer has nowhere else to go. When the server's wait runs out the request lets go of the job
//! (`RequestDetached`: the client was told the job's id and follows it on the jobs API). A job
//! whose request was held by a process that is gone (a crash, a restart) is failed and refunded
//! by that node when it starts again: nobody will receive its answer, and an OpenAI client
//! retries with a new request, which must not pay twice.

use super::{JobEvent, JobRefusal, JobState, Submission};

/// The `errorMsg` of a job whose waiting request was lost to a restart of its node.
pub const LOST_TO_RESTART: &str = "The server restarted while the OpenAI API request waited for this job; \
nobody will receive the answer, so the work was stopped and nothing is charged (a retried request is a new job)";

/// The request stops waiting; the job goes on for the client to fetch.
pub(super) fn detach(state: &JobState, submission: &Submission, at_ms: u64) -> Result<Vec<JobEvent>, JobRefusal> {
    if submission.awaited_on.is_none() {
        return Err(JobRefusal::OutOfOrder("no request waits for this job"));
    }
    if state.request_detached {
        return Err(JobRefusal::AlreadyRecorded("RequestDetached"));
    }
    Ok(vec![JobEvent::RequestDetached { at_ms }])
}

impl JobState {
    /// The node whose open request waits for this unfinished job's answer, if any.
    pub fn awaited_on(&self) -> Option<&str> {
        if self.request_detached || self.finished.is_some() || self.deleted {
            return None;
        }
        self.submission.as_ref()?.awaited_on.as_deref()
    }

    /// Whether the request this job's answer was for died with the process that held it: the
    /// node `node`, started at `started_ms`, finds the job awaited on itself but submitted
    /// before it started.
    pub fn request_lost_to_restart(&self, node: &str, started_ms: u64) -> bool {
        self.awaited_on() == Some(node) && self.submission.as_ref().is_some_and(|s| s.created_ms < started_ms)
    }
}
