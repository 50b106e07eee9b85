//! How far a job's speech recognition has come, recorded in the job's log so that every server
//! node sharing the event store can show it (the node answering a client is not always the one
//! transcribing).
//!
//! The engine reports progress many times a second; the log keeps only whole steps of
//! [`PROGRESS_STEP_PERCENT`] (10 %), at most ten events per attempt. That is enough for a person
//! watching a long job (a 43-minute recording gets a new point every minute or so) while a job's
//! stream, which every node replays, stays short. A step is recorded only while the attempt it
//! belongs to runs: after the job ended or was deleted, for an earlier attempt, or for a step
//! already recorded, the command is refused (the worker drops those refusals quietly: progress
//! is a courtesy, never a reason to stop recognition).

use super::{JobEvent, JobRefusal, JobState};

/// The size of the steps recorded (see the module documentation).
pub const PROGRESS_STEP_PERCENT: u64 = 10;

/// The last progress point of the running transcription attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProgressPoint {
    pub attempt: u32,
    /// Milliseconds of media recognised, out of `total_ms`.
    pub done_ms: u64,
    pub total_ms: u64,
    pub at_ms: u64,
}

impl ProgressPoint {
    /// The whole step (0..=10) this point reached.
    pub fn step(&self) -> u64 {
        step_of(self.done_ms, self.total_ms)
    }
}

/// The whole step (0..=100 / [`PROGRESS_STEP_PERCENT`]) of `done_ms` out of `total_ms`.
pub fn step_of(done_ms: u64, total_ms: u64) -> u64 {
    percent_of(done_ms, total_ms) / PROGRESS_STEP_PERCENT
}

/// Whole percent (0..=100, rounded down) of `done_ms` out of `total_ms`.
pub fn percent_of(done_ms: u64, total_ms: u64) -> u64 {
    if total_ms == 0 {
        return 0;
    }
    (u128::from(done_ms.min(total_ms)) * 100 / u128::from(total_ms)) as u64
}

/// Records a new step of attempt `attempt`; see the module documentation for what is refused.
pub(super) fn record(
    state: &JobState,
    attempt: u32,
    done_ms: u64,
    total_ms: u64,
    at_ms: u64,
) -> Result<Vec<JobEvent>, JobRefusal> {
    if state.transcription_attempts == 0 || state.transcript.is_some() {
        return Err(JobRefusal::OutOfOrder("no transcription of this job is running"));
    }
    if attempt != state.transcription_attempts {
        return Err(JobRefusal::OutOfOrder("this progress belongs to an earlier transcription attempt"));
    }
    if total_ms == 0 {
        return Err(JobRefusal::OutOfOrder("progress needs the length of the media"));
    }
    let done_ms = done_ms.min(total_ms);
    let last_step = state.transcription_progress.map_or(0, |p| p.step());
    if step_of(done_ms, total_ms) <= last_step {
        return Err(JobRefusal::AlreadyRecorded("this step of the transcription's progress"));
    }
    Ok(vec![JobEvent::TranscriptionProgressed { attempt, done_ms, total_ms, at_ms }])
}

/// The progress of a running transcription, as clients see it (`progress` on the Job object).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobProgress {
    /// Whole percent (0..=100) of the media recognised.
    pub percent: u8,
    /// Seconds of recognition left, estimated at the last progress point from the time spent
    /// since the attempt started and the share done; absent until a point past 0 %.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eta_seconds: Option<u64>,
}

impl JobState {
    /// The progress of the job's running transcription: `None` unless the job is open, not
    /// deleted, and an attempt started that has produced no transcript yet.
    pub fn progress(&self) -> Option<JobProgress> {
        if self.deleted || self.finished.is_some() || self.transcript.is_some() {
            return None;
        }
        let started_ms = self.transcription_started_ms?;
        let Some(point) = self.transcription_progress.filter(|p| p.attempt == self.transcription_attempts) else {
            return Some(JobProgress { percent: 0, eta_seconds: None });
        };
        let percent = percent_of(point.done_ms, point.total_ms);
        let eta_seconds = (point.done_ms > 0).then(|| {
            let elapsed_ms = u128::from(point.at_ms.saturating_sub(started_ms));
            let left_ms = u128::from(point.total_ms - point.done_ms.min(point.total_ms));
            // elapsed × left / done, rounded up to a whole second.
            (elapsed_ms * left_ms / u128::from(point.done_ms)).div_ceil(1000) as u64
        });
        Some(JobProgress { percent: percent as u8, eta_seconds })
    }
}
