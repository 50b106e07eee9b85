//! The contract between the pipeline and the workers it commands (media, ASR, translation,
//! callbacks): a stage is handed to a worker with a [`StageDone`], and the worker hands it back
//! through [`report`] (or [`fail_and_report`]) when the work ends.
//!
//! It lives apart from the pipeline so that the workers depend on the contract, not on the
//! process manager that drives them: the pipeline sees [`StageReport`]s through a
//! [`DerivedActorRef`], and the workers never name its messages.

use ractor::DerivedActorRef;
use scribe_domain::ids::JobId;
use scribe_domain::job::{JobCommand, Stage};
use tracing::Instrument;

use crate::clock::now_ms;
use crate::jobs::{Jobs, job_span};

/// What a worker tells the pipeline about a stage it was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StageReport {
    /// The worker finished the stage (whatever the outcome).
    Done(JobId, Stage),
    /// The stage's work ended without a report (its worker panicked or died with the stage queued).
    Lost(JobId, Stage),
}

/// Who to tell when a stage's work ends: the pipeline, the job and the stage.
///
/// Hand it to [`report`] (or [`fail_and_report`]) when the work ends. Dropped without that (the
/// task doing the work panicked, or the worker died with the stage queued), it tells the pipeline
/// that the stage was lost, and the stage runs again.
pub struct StageDone {
    reports: DerivedActorRef<StageReport>,
    pub job_id: JobId,
    pub stage: Stage,
    reported: bool,
}

impl StageDone {
    pub fn new(reports: DerivedActorRef<StageReport>, job_id: JobId, stage: Stage) -> StageDone {
        StageDone { reports, job_id, stage, reported: false }
    }

    /// The tracing span of the job this stage belongs to (see [`job_span`]), for the work on it.
    pub fn span(&self) -> tracing::Span {
        job_span(&self.job_id)
    }
}

impl Drop for StageDone {
    fn drop(&mut self) {
        let msg = if self.reported {
            StageReport::Done(self.job_id.clone(), self.stage)
        } else {
            StageReport::Lost(self.job_id.clone(), self.stage)
        };
        // A stopped pipeline has nothing left to drive; on the next start it reads the log.
        if self.reports.send_message(msg).is_err() {
            let stage = self.stage;
            job_span(&self.job_id).in_scope(|| tracing::debug!(?stage, "the pipeline is gone; stage report dropped"));
        }
    }
}

/// Tells the pipeline a stage's work ended.
pub fn report(mut done: StageDone) {
    done.reported = true;
}

/// Records the job as failed with `error_msg`, then reports the stage done.
pub fn fail_and_report(jobs: &Jobs, done: StageDone, error_msg: String) {
    let jobs = jobs.clone();
    // Called from the work on the job: its span goes with the task.
    tokio::spawn(
        async move {
            if let Err(e) = jobs.execute(&done.job_id, JobCommand::Fail { error_msg, at_ms: now_ms() }).await {
                tracing::warn!(error = %e, "recording job failure; the stage runs again");
            }
            report(done);
        }
        .instrument(tracing::Span::current()),
    );
}
