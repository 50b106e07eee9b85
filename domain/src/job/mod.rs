//! The job aggregate: one job's state machine, event-sourced on the stream `job-<jobId>`.
//!
//! ```text
//! (none) ──Submit──────────────▶ OPEN ──Complete──▶ DONE ─┐
//! (none) ──RequestTranslation──▶ BUSY ──Fail──────▶ ERROR ┴─▶ callback attempts until delivered
//!                                                             or abandoned
//! any submitted job ──Delete──▶ deleted (refuses everything after)
//! DONE/ERROR job ──Expire (retention ended)──▶ deleted
//! ```
//!
//! An `OPEN` direct job walks the pipeline: media stored → probed → transcription started →
//! transcript produced (→ translation produced, for translatedSubtitles) → `DONE`; a failure at
//! any step → `ERROR`. A manual (`perfect`) job gets a *draft* transcript from the engine and
//! stays `OPEN` for human work. `DONE` and `ERROR` are terminal: a second terminal event is
//! refused, and only callback bookkeeping and deletion follow them.
//!
//! [`decide`] passes every command through the same guards, in one place, then hands it to the
//! rule of its kind: `submit` (a new job), `stages` (the machine pipeline), `progress` (how far
//! recognition has come), `tasks` (a manual job's human work), `callbacks`, `edit`,
//! `work_claim` and `retention`.
//!
//! ```
//! use scribe_domain::ids::{JobId, UserName};
//! use scribe_domain::job::{self, JobCommand, JobState, NewMedia, StoredMedia};
//! use scribe_domain::kinds::JobStatus;
//! use scribe_domain::requests::JobParams;
//!
//! let request = JobParams { number_of_speakers: Some(1), ..Default::default() }.validate()?;
//! let submit = JobCommand::Submit {
//!     job_id: JobId::parse("0192f6a4-7c1e-7d2a-9a55-2b3c4d5e6f70")?,
//!     owner: UserName::parse("ann")?,
//!     at_ms: 1_763_769_600_000,
//!     request,
//!     source: NewMedia::Upload {
//!         filename: "jfk.wav".into(),
//!         media: StoredMedia { path: "media/0192f6a4-7c1e-7d2a-9a55-2b3c4d5e6f70/jfk.wav".into(), bytes: 352_078 },
//!     },
//! };
//! let events = job::decide(&JobState::default(), submit).expect("a new job is accepted");
//! let state = events.iter().fold(JobState::default(), job::evolve);
//! assert_eq!(state.status(), Some(JobStatus::Open));
//! # Ok::<(), scribe_domain::ValidationError>(())
//! ```

mod awaited;
mod callbacks;
mod edit;
mod events;
pub mod live;
pub mod media_limit;
pub mod progress;
pub mod retention;
mod stages;
mod state;
mod submit;
pub mod task;
mod task_access;
mod tasks;
mod view;
pub mod work_claim;

#[cfg(test)]
mod tests;

pub use awaited::LOST_TO_RESTART;
pub use events::{CallbackOutcome, JobEvent, MediaSource, Submission};
pub use media_limit::{MaxDuration, MediaTooLong};
pub use progress::{JobProgress, ProgressPoint};
pub use state::{CallbackProgress, JobState, SourceJobFacts, Stage, StoredMedia, Transcript, Translation};
pub use submit::NewMedia;
pub use view::{CallbackPayload, Job, JobStatusResponse, TaskView, callback_message_id};

use crate::aggregate::Aggregate;
use crate::ids::{JOB_STREAM_PREFIX, JobId, UserName};
use crate::kinds::{JobStatus, TaskKind};
use crate::languages::Language;
use crate::requests::{JobRequest, TranslationRequest};
use task::{Lease, Revision, TaskState, Worker};

/// What can be asked of a job. Each command carries every outside fact its decision needs.
#[derive(Debug, Clone, PartialEq)]
pub enum JobCommand {
    /// Accept a new job from a stored upload or a URL. An upload's file is recorded in the same
    /// append as the job.
    Submit {
        job_id: JobId,
        owner: UserName,
        at_ms: u64,
        request: JobRequest,
        source: NewMedia,
    },
    /// Accept an upload the edge received, stored and probed: the job, its file and its
    /// duration are recorded in one append, so nothing probes it again. A new job is `OPEN`:
    /// media the server refuses (too long, unreadable) is refused by the edge, with no job.
    SubmitUpload {
        job_id: JobId,
        owner: UserName,
        at_ms: u64,
        request: JobRequest,
        filename: String,
        media: StoredMedia,
        duration_ms: u64,
        /// The node whose open request waits for the job's answer (the OpenAI door).
        awaited_on: Option<String>,
    },
    /// Accept a request for translated subtitles of an existing manual captions job, whose
    /// facts the caller looked up.
    RequestTranslation {
        job_id: JobId,
        owner: UserName,
        at_ms: u64,
        request: TranslationRequest,
        source: SourceJobFacts,
    },
    RecordMediaStored {
        media: StoredMedia,
        at_ms: u64,
    },
    /// The probed length of the media, in milliseconds. `fails_with` is the `errorMsg` the job
    /// ends in when the media worker refuses what it probed (longer than the operator accepts,
    /// or a balance that does not cover it): the length and the failure are one append, so the
    /// job shows the probed length and no stage ever starts on it.
    RecordMediaProbed {
        duration_ms: u64,
        fails_with: Option<String>,
        at_ms: u64,
    },
    StartTranscription {
        at_ms: u64,
    },
    /// Transcription attempt `attempt` has recognised `done_ms` of the media's `total_ms`
    /// (see `progress`: only whole new 10 % steps of the running attempt are recorded).
    RecordTranscriptionProgress {
        attempt: u32,
        done_ms: u64,
        total_ms: u64,
        at_ms: u64,
    },
    /// `detected_language` is the engine's answer for `auto` jobs (a Whisper code that is also a
    /// spec code: see `Language::from_whisper`).
    RecordTranscript {
        path: String,
        detected_language: Option<Language>,
        words: u64,
        at_ms: u64,
    },
    RecordTranslation {
        path: String,
        at_ms: u64,
    },
    Complete {
        at_ms: u64,
    },
    /// A blank `error_msg` is replaced by a generic sentence: a failure must never be refused.
    Fail {
        error_msg: String,
        at_ms: u64,
    },
    /// The result of one callback delivery. `next_attempt_at_ms` is when the caller's retry
    /// schedule would try again, or `None` when the schedule is exhausted.
    RecordCallbackAttempt {
        outcome: CallbackOutcome,
        at_ms: u64,
        next_attempt_at_ms: Option<u64>,
    },
    /// The owner `by` deletes the job.
    Delete {
        by: UserName,
        at_ms: u64,
    },
    /// The job's retention (its own `deleteAfterSeconds`, or the operator's `retention_s`)
    /// ended: its data goes as for a deletion (see `job::retention`).
    Expire {
        retention_s: Option<u64>,
        at_ms: u64,
    },
    /// Open the next task of a manual job whose draft exists but whose task was never opened.
    OpenTask {
        at_ms: u64,
    },
    /// `worker` takes the task for `lease_ms` (or renews a lease they hold).
    ClaimTask {
        task_id: String,
        worker: Worker,
        lease_ms: u64,
        at_ms: u64,
    },
    /// The holder saved a revision of the document, already written to `path`.
    SaveDraft {
        task_id: String,
        by: UserName,
        path: String,
        words: u64,
        lease_ms: u64,
        at_ms: u64,
    },
    /// The holder gives the task back.
    ReleaseTask {
        task_id: String,
        by: UserName,
        at_ms: u64,
    },
    /// Record that the lease on the task ran out (the sweeper's command).
    ExpireLease {
        task_id: String,
        at_ms: u64,
    },
    /// The holder hands in the last saved revision (or the untouched machine draft).
    SubmitTask {
        task_id: String,
        by: UserName,
        at_ms: u64,
    },
    /// The owner `by` corrected the transcript of their `DONE` job; the document is at `path`
    /// (see `edit`).
    EditDocument {
        by: UserName,
        path: String,
        words: u64,
        at_ms: u64,
    },
    /// A live session's finalized utterance (see `live`).
    RecordUtterance {
        utterance: live::LiveUtterance,
        at_ms: u64,
    },
    /// A live session ended (or was found cut short): its audio, length and transcript.
    FinishLive {
        outcome: live::LiveOutcome,
        at_ms: u64,
    },
    /// The request that waited for the job lets go of it (see `awaited`).
    DetachRequest {
        at_ms: u64,
    },
    /// The cluster node `node` takes (or renews) the job's current `stage` until `until_ms`
    /// (see `work_claim`).
    ClaimWork {
        stage: Stage,
        node: String,
        until_ms: u64,
        at_ms: u64,
    },
}

/// Why a command was refused. The API maps `NotFound` and `NoSuchTask` → 404, `Forbidden` and
/// `TaskNotForYou` → 403, `Deleted` → 410, `SourceNotEligible` → 400, the rest → 409.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JobRefusal {
    #[error("job not found")]
    NotFound,
    #[error("a job with this id already exists")]
    AlreadyExists,
    #[error("this job belongs to another account")]
    Forbidden,
    #[error("this job was deleted")]
    Deleted,
    #[error("the job has already finished with status {0}")]
    Finished(JobStatus),
    #[error("the job is not finished yet")]
    NotFinished,
    #[error("{0} was already recorded for this job")]
    AlreadyRecorded(&'static str),
    #[error("{0}")]
    OutOfOrder(&'static str),
    #[error("the job has no callbackUrl")]
    NoCallback,
    #[error("the callback was already delivered or abandoned")]
    CallbackSettled,
    #[error("{0}")]
    SourceNotEligible(String),
    #[error("the source job is {0}: translated subtitles can be ordered once it is DONE")]
    SourceNotDone(JobStatus),
    #[error("no task {0}")]
    NoSuchTask(String),
    #[error("task {0} was already submitted")]
    TaskClosed(String),
    #[error("{0}")]
    TaskNotForYou(String),
    #[error("task {task_id} is held by someone else until {until_ms} (milliseconds since the epoch)")]
    TaskHeldByOther { task_id: String, until_ms: u64 },
    #[error("you do not hold task {0}: claim it first (a lease ends when it is released or expires)")]
    TaskNotHeld(String),
    #[error("task {0} has no saved translation to submit: save the target-language document first")]
    NothingToSubmit(String),
    #[error("node {node} runs this job's current stage until {until_ms} (milliseconds since the epoch)")]
    WorkHeldByOther { node: String, until_ms: u64 },
}

/// Marker type implementing [`Aggregate`] for jobs.
pub struct JobAggregate;

impl Aggregate for JobAggregate {
    const STREAM_PREFIX: &'static str = JOB_STREAM_PREFIX;
    type State = JobState;
    type Command = JobCommand;
    type Event = JobEvent;
    type Refusal = JobRefusal;

    fn decide(state: &JobState, command: JobCommand) -> Result<Vec<JobEvent>, JobRefusal> {
        decide(state, command)
    }

    fn evolve(state: JobState, event: &JobEvent) -> JobState {
        evolve(state, event)
    }
}

/// Decides whether `command` is allowed in `state`, and if so, which events record it: the
/// guards every command passes (`guard`), then the rule of its kind, each in its own file.
pub fn decide(state: &JobState, command: JobCommand) -> Result<Vec<JobEvent>, JobRefusal> {
    use JobCommand as C;
    let Some(submission) = &state.submission else { return submit::decide_new(command) };
    guard(state, submission, &command)?;
    match command {
        C::Submit { .. } | C::SubmitUpload { .. } | C::RequestTranslation { .. } => Err(JobRefusal::AlreadyExists),
        C::Delete { by, at_ms } => Ok(vec![JobEvent::JobDeleted { by, at_ms }]),
        C::Expire { retention_s, at_ms } => retention::decide_expire(state, retention_s, at_ms),
        C::EditDocument { by, path, words, at_ms } => edit::decide_edit(state, by, path, words, at_ms),
        C::ClaimWork { stage, node, until_ms, at_ms } => work_claim::decide_claim(state, stage, node, until_ms, at_ms),
        C::RecordMediaStored { media, at_ms } => stages::store_media(state, submission, media, at_ms),
        C::RecordMediaProbed { duration_ms, fails_with, at_ms } => {
            stages::probe_media(state, duration_ms, fails_with, at_ms)
        }
        C::StartTranscription { at_ms } => stages::start_transcription(state, at_ms),
        C::RecordTranscriptionProgress { attempt, done_ms, total_ms, at_ms } => {
            progress::record(state, attempt, done_ms, total_ms, at_ms)
        }
        C::RecordTranscript { path, detected_language, words, at_ms } => {
            stages::record_transcript(state, submission, path, detected_language, words, at_ms)
        }
        C::RecordTranslation { path, at_ms } => stages::record_translation(state, submission, path, at_ms),
        C::Complete { at_ms } => stages::complete(state, submission, at_ms),
        C::Fail { error_msg, at_ms } => {
            Ok(live::keep_finals(state, &error_msg, at_ms).unwrap_or_else(|| stages::fail(&error_msg, at_ms)))
        }
        C::RecordCallbackAttempt { outcome, at_ms, next_attempt_at_ms } => {
            callbacks::record_attempt(state, submission, outcome, at_ms, next_attempt_at_ms)
        }
        C::OpenTask { at_ms } => tasks::open_first(state, submission, at_ms),
        C::ClaimTask { task_id, worker, lease_ms, at_ms } => tasks::claim(state, task_id, worker, lease_ms, at_ms),
        C::SaveDraft { task_id, by, path, words, lease_ms, at_ms } => {
            tasks::save_draft(state, task_id, by, path, words, lease_ms, at_ms)
        }
        C::ReleaseTask { task_id, by, at_ms } => tasks::release(state, task_id, by, at_ms),
        C::ExpireLease { task_id, at_ms } => tasks::expire_lease(state, task_id, at_ms),
        C::SubmitTask { task_id, by, at_ms } => tasks::hand_in(state, submission, task_id, by, at_ms),
        C::RecordUtterance { utterance, at_ms } => live::record_utterance(state, utterance, at_ms),
        C::FinishLive { outcome, at_ms } => live::finish(state, outcome, at_ms),
        C::DetachRequest { at_ms } => awaited::detach(state, submission, at_ms),
    }
}

/// The checks every command on an existing job passes before its own rule, in this order:
///
/// 1. a job is created once: `AlreadyExists`;
/// 2. the owner's commands (delete, edit) are refused to anyone else: `Forbidden`;
/// 3. a deleted (or expired) job refuses everything: `Deleted`;
/// 4. a finished job (`DONE`, `ERROR`) refuses more work: `Finished`. What follows the end is
///    exempt: deleting, expiring, editing the document, and the callback (its attempts, and the
///    claim on its delivery).
fn guard(state: &JobState, submission: &Submission, command: &JobCommand) -> Result<(), JobRefusal> {
    use JobCommand as C;
    let (by_owner, after_end) = match command {
        C::Submit { .. } | C::SubmitUpload { .. } | C::RequestTranslation { .. } => {
            return Err(JobRefusal::AlreadyExists);
        }
        C::Delete { by, .. } | C::EditDocument { by, .. } => (Some(by), true),
        C::Expire { .. } | C::ClaimWork { .. } | C::RecordCallbackAttempt { .. } => (None, true),
        _ => (None, false),
    };
    if by_owner.is_some_and(|by| *by != submission.owner) {
        return Err(JobRefusal::Forbidden);
    }
    if state.deleted {
        return Err(JobRefusal::Deleted);
    }
    match state.status() {
        Some(status) if status.is_terminal() && !after_end => Err(JobRefusal::Finished(status)),
        _ => Ok(()),
    }
}

/// `nrAudioSeconds` of a media duration: whole seconds, rounded to nearest (an 11.0 s clip whose
/// probe says 11 000.4 ms is 11, not 12).
pub fn nr_audio_seconds(duration_ms: u64) -> u64 {
    duration_ms.saturating_add(500) / 1000
}

/// Applies one event of the job's history.
pub fn evolve(mut state: JobState, event: &JobEvent) -> JobState {
    use JobEvent as E;
    match event {
        E::JobSubmitted(submission) => {
            if let MediaSource::Job { nr_audio_seconds, .. } = submission.source {
                state.nr_audio_seconds = nr_audio_seconds;
            }
            state.submission = Some(Submission::clone(submission));
        }
        E::MediaStored { path, bytes, .. } => state.media = Some(StoredMedia { path: path.clone(), bytes: *bytes }),
        E::MediaProbed { duration_ms, nr_audio_seconds, .. } => {
            state.duration_ms = Some(*duration_ms);
            state.nr_audio_seconds = *nr_audio_seconds;
        }
        E::TranscriptionStarted { attempt, at_ms } => {
            state.transcription_attempts = *attempt;
            state.transcription_started_ms = Some(*at_ms);
            state.transcription_progress = None;
        }
        E::TranscriptionProgressed { attempt, done_ms, total_ms, at_ms } => {
            state.transcription_progress =
                Some(ProgressPoint { attempt: *attempt, done_ms: *done_ms, total_ms: *total_ms, at_ms: *at_ms })
        }
        E::TranscriptProduced { path, language, words, draft, .. } => {
            state.transcript =
                Some(Transcript { path: path.clone(), language: *language, words: *words, draft: *draft });
        }
        E::TranslationProduced { path, target_language, .. } => {
            state.translation = Some(Translation { path: path.clone(), target_language: *target_language });
        }
        E::JobCompleted { at_ms } => {
            state.finished = Some((JobStatus::Done, *at_ms));
        }
        E::JobFailed { error_msg, at_ms } => {
            state.error_msg = Some(error_msg.clone());
            state.finished = Some((JobStatus::Error, *at_ms));
        }
        E::CallbackAttempted { attempt, outcome, next_attempt_at_ms, .. } => {
            state.callback.attempts = *attempt;
            state.callback.last_outcome = Some(outcome.clone());
            state.callback.next_attempt_at_ms = *next_attempt_at_ms;
        }
        E::CallbackDelivered { attempt, status_code, .. } => {
            state.callback.attempts = *attempt;
            state.callback.last_outcome = Some(CallbackOutcome::Status(*status_code));
            state.callback.next_attempt_at_ms = None;
            state.callback.delivered = true;
        }
        E::CallbackAbandoned { reason, .. } => {
            state.callback.next_attempt_at_ms = None;
            state.callback.abandoned = Some(reason.clone());
        }
        E::JobDeleted { .. } => state.deleted = true,
        E::RequestDetached { .. } => state.request_detached = true,
        E::LiveUtteranceRecorded { utterance, .. } => state.live_utterances.push(utterance.clone()),
        E::LiveSessionEnded { interrupted, finals, .. } => {
            state.live_end =
                Some(live::LiveEnd { interrupted: interrupted.clone(), finals: finals.clone(), reread_failed: None })
        }
        E::LiveRereadFailed { error_msg, .. } => {
            if let Some(end) = &mut state.live_end {
                end.reread_failed = Some(error_msg.clone());
            }
        }
        E::JobExpired { .. } => {
            state.deleted = true;
            state.expired = true;
        }
        E::TaskOpened { task_id, kind, deadline_ms, at_ms } => state.tasks.push(TaskState {
            task_id: task_id.clone(),
            kind: *kind,
            opened_ms: *at_ms,
            deadline_ms: *deadline_ms,
            lease: None,
            revision: None,
            ever_claimed: false,
            submitted: None,
        }),
        E::TaskClaimed { task_id, by, lease_until_ms, .. } => {
            if let Some(t) = task_mut(&mut state, task_id) {
                t.lease = Some(Lease { holder: by.clone(), until_ms: *lease_until_ms });
                t.ever_claimed = true;
            }
        }
        E::DraftSaved { task_id, by, revision, path, lease_until_ms, at_ms, .. } => {
            if let Some(t) = task_mut(&mut state, task_id) {
                t.revision = Some(Revision { number: *revision, path: path.clone(), by: by.clone(), at_ms: *at_ms });
                t.lease = Some(Lease { holder: by.clone(), until_ms: *lease_until_ms });
            }
        }
        E::TaskReleased { task_id, .. } => {
            if let Some(t) = task_mut(&mut state, task_id) {
                t.lease = None;
            }
        }
        E::TaskSubmitted { task_id, by, path, at_ms, .. } => {
            let mut kind = None;
            if let Some(t) = task_mut(&mut state, task_id) {
                t.submitted = Some((by.clone(), *at_ms));
                t.lease = None;
                kind = Some(t.kind);
            }
            // The transcriber's document becomes the job's transcript.
            if kind == Some(TaskKind::Transcribe)
                && let Some(transcript) = &mut state.transcript
            {
                transcript.path = path.clone();
                transcript.draft = false;
            }
        }
        E::DocumentEdited { revision, path, words, .. } => edit::apply_edit(&mut state, *revision, path, *words),
        E::WorkClaimed { stage, node, lease_until_ms, .. } => {
            state.claim = Some(work_claim::WorkClaim { stage: *stage, node: node.clone(), until_ms: *lease_until_ms })
        }
    }
    state
}

fn task_mut<'a>(state: &'a mut JobState, task_id: &str) -> Option<&'a mut TaskState> {
    state.tasks.iter_mut().find(|t| t.task_id == task_id)
}
