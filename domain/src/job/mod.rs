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
//! ```
//! use scribe_domain::ids::{JobId, UserName};
//! use scribe_domain::job::{self, JobCommand, JobState, NewMedia};
//! use scribe_domain::kinds::JobStatus;
//! use scribe_domain::requests::JobParams;
//!
//! let request = JobParams { number_of_speakers: Some(1), ..Default::default() }.validate()?;
//! let submit = JobCommand::Submit {
//!     job_id: JobId::parse("0192f6a4-7c1e-7d2a-9a55-2b3c4d5e6f70")?,
//!     owner: UserName::parse("ann")?,
//!     at_ms: 1_763_769_600_000,
//!     request,
//!     source: NewMedia::Upload { filename: "jfk.wav".into() },
//!     media: None,
//! };
//! let events = job::decide(&JobState::default(), submit).expect("a new job is accepted");
//! let state = events.iter().fold(JobState::default(), job::evolve);
//! assert_eq!(state.status(), Some(JobStatus::Open));
//! # Ok::<(), scribe_domain::ValidationError>(())
//! ```

mod edit;
mod events;
pub mod retention;
mod state;
pub mod task;
mod task_access;
mod view;
pub mod work_claim;

#[cfg(test)]
mod tests;

pub use events::{CallbackOutcome, JobEvent, MediaSource, Submission};
pub use state::{CallbackProgress, JobState, SourceJobFacts, Stage, StoredMedia, Transcript, Translation};
pub use view::{CallbackPayload, Job, JobStatusResponse, TaskView, callback_message_id};

use crate::aggregate::Aggregate;
use crate::http_url::HttpUrl;
use crate::ids::{JOB_STREAM_PREFIX, JobId, UserName};
use crate::kinds::{JobStatus, JobType, TaskKind, TranscriptionType, TurnaroundTime};
use crate::languages::Language;
use crate::requests::{JobRequest, TranslationRequest};
use task::{DAY_MS, Lease, Revision, TaskState, Worker};

/// Where the media of a new job comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum NewMedia {
    /// An upload; `filename` as the client sent it (it is sanitized here).
    Upload { filename: String },
    /// A URL to fetch; the file name is taken from its path.
    Url { source_url: HttpUrl },
}

/// What can be asked of a job. Each command carries every outside fact its decision needs.
#[derive(Debug, Clone, PartialEq)]
pub enum JobCommand {
    /// Accept a new job from an upload or a URL. `media` is given when the upload was already
    /// streamed to disk, so that the job and its file are recorded in one append.
    Submit {
        job_id: JobId,
        owner: UserName,
        at_ms: u64,
        request: JobRequest,
        source: NewMedia,
        media: Option<StoredMedia>,
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

/// Decides whether `command` is allowed in `state`, and if so, which events record it.
pub fn decide(state: &JobState, command: JobCommand) -> Result<Vec<JobEvent>, JobRefusal> {
    use JobCommand as C;
    use JobEvent as E;

    let Some(submission) = &state.submission else {
        return match command {
            C::Submit { job_id, owner, at_ms, request, source, media } => {
                Ok(submit(job_id, owner, at_ms, request, source, media))
            }
            C::SubmitUpload { job_id, owner, at_ms, request, filename, media, duration_ms } => {
                let mut events = submit(job_id, owner, at_ms, request, NewMedia::Upload { filename }, Some(media));
                events.push(E::MediaProbed { duration_ms, nr_audio_seconds: nr_audio_seconds(duration_ms), at_ms });
                Ok(events)
            }
            C::RequestTranslation { job_id, owner, at_ms, request, source } => {
                request_translation(job_id, owner, at_ms, request, source)
            }
            _ => Err(JobRefusal::NotFound),
        };
    };
    if matches!(command, C::Submit { .. } | C::SubmitUpload { .. } | C::RequestTranslation { .. }) {
        return Err(JobRefusal::AlreadyExists);
    }
    if let C::Delete { by, at_ms } = command {
        if by != submission.owner {
            return Err(JobRefusal::Forbidden);
        }
        if state.deleted {
            return Err(JobRefusal::Deleted);
        }
        return Ok(vec![E::JobDeleted { by, at_ms }]);
    }
    if let C::Expire { retention_s, at_ms } = command {
        if state.deleted {
            return Err(JobRefusal::Deleted);
        }
        return retention::decide_expire(state, retention_s, at_ms);
    }
    if let C::EditDocument { by, path, words, at_ms } = command {
        return edit::decide_edit(state, by, path, words, at_ms);
    }
    if state.deleted {
        return Err(JobRefusal::Deleted);
    }
    // Callback delivery follows the end of a job, so work is claimed before the terminal check.
    if let C::ClaimWork { stage, node, until_ms, at_ms } = command {
        return work_claim::decide_claim(state, stage, node, until_ms, at_ms);
    }
    let status = state.status().expect("a submitted job has a status");
    let is_callback = matches!(command, C::RecordCallbackAttempt { .. });
    if status.is_terminal() && !is_callback {
        return Err(JobRefusal::Finished(status));
    }
    let from_job = matches!(submission.source, MediaSource::Job { .. });

    match command {
        C::Submit { .. }
        | C::SubmitUpload { .. }
        | C::RequestTranslation { .. }
        | C::Delete { .. }
        | C::Expire { .. }
        | C::EditDocument { .. }
        | C::ClaimWork { .. } => {
            unreachable!("handled above")
        }
        C::OpenTask { at_ms } => {
            if !state.tasks.is_empty() || state.transcript.as_ref().is_none_or(|t| !t.draft) {
                return Err(JobRefusal::OutOfOrder("only a manual job's draft waits for its first task"));
            }
            Ok(vec![open_task(submission, TaskKind::Transcribe, at_ms)])
        }
        C::ClaimTask { task_id, worker, lease_ms, at_ms } => {
            let task = state.task_for(&task_id, &worker)?;
            let mut events = Vec::new();
            if let Some(lease) = &task.lease {
                if lease.holder != worker.user && !lease.is_expired(at_ms) {
                    return Err(JobRefusal::TaskHeldByOther { task_id, until_ms: lease.until_ms });
                }
                if lease.holder != worker.user {
                    events.push(E::TaskReleased { task_id: task_id.clone(), by: None, expired: true, at_ms });
                }
            }
            events.push(E::TaskClaimed {
                task_id,
                by: worker.user,
                lease_until_ms: at_ms.saturating_add(lease_ms),
                at_ms,
            });
            Ok(events)
        }
        C::SaveDraft { task_id, by, path, words, lease_ms, at_ms } => {
            let task = state.task_held_by(&task_id, &by, at_ms)?;
            let revision = task.revision.as_ref().map_or(1, |r| r.number + 1);
            Ok(vec![E::DraftSaved {
                task_id,
                by,
                revision,
                path,
                words,
                lease_until_ms: at_ms.saturating_add(lease_ms),
                at_ms,
            }])
        }
        C::ReleaseTask { task_id, by, at_ms } => {
            let task = state.open_task(&task_id)?;
            match &task.lease {
                Some(lease) if lease.holder == by => {
                    Ok(vec![E::TaskReleased { task_id, by: Some(by), expired: false, at_ms }])
                }
                _ => Err(JobRefusal::TaskNotHeld(task_id)),
            }
        }
        C::ExpireLease { task_id, at_ms } => {
            let task = state.open_task(&task_id)?;
            match &task.lease {
                Some(lease) if lease.is_expired(at_ms) => {
                    Ok(vec![E::TaskReleased { task_id, by: None, expired: true, at_ms }])
                }
                _ => Err(JobRefusal::OutOfOrder("the task has no expired lease")),
            }
        }
        C::SubmitTask { task_id, by, at_ms } => {
            let task = state.task_held_by(&task_id, &by, at_ms)?;
            let (revision, path) = match (&task.revision, task.kind) {
                (Some(r), _) => (r.number, r.path.clone()),
                (None, TaskKind::Transcribe) => match &state.transcript {
                    Some(t) => (0, t.path.clone()),
                    None => return Err(JobRefusal::OutOfOrder("the machine draft is missing")),
                },
                (None, TaskKind::Translate) => return Err(JobRefusal::NothingToSubmit(task_id)),
            };
            let kind = task.kind;
            let mut events = vec![E::TaskSubmitted { task_id, by, revision, path: path.clone(), at_ms }];
            let translated = submission.transcription_type == TranscriptionType::TranslatedSubtitles;
            match kind {
                TaskKind::Transcribe if translated => events.push(open_task(submission, TaskKind::Translate, at_ms)),
                TaskKind::Transcribe => events.push(E::JobCompleted { at_ms }),
                TaskKind::Translate => {
                    let target_language = submission
                        .target_language
                        .ok_or(JobRefusal::OutOfOrder("a translation task needs a target language"))?;
                    events.push(E::TranslationProduced { path, target_language, at_ms });
                    events.push(E::JobCompleted { at_ms });
                }
            }
            Ok(events)
        }
        C::RecordMediaStored { media, at_ms } => {
            if from_job {
                return Err(JobRefusal::OutOfOrder("a translation of an existing job has no media of its own"));
            }
            if state.media.is_some() {
                return Err(JobRefusal::AlreadyRecorded("the media file"));
            }
            Ok(vec![E::MediaStored { path: media.path, bytes: media.bytes, at_ms }])
        }
        C::RecordMediaProbed { duration_ms, fails_with, at_ms } => {
            if state.media.is_none() {
                return Err(JobRefusal::OutOfOrder("media must be stored before it is probed"));
            }
            if state.duration_ms.is_some() {
                return Err(JobRefusal::AlreadyRecorded("the media duration"));
            }
            let mut events =
                vec![E::MediaProbed { duration_ms, nr_audio_seconds: nr_audio_seconds(duration_ms), at_ms }];
            events.extend(fails_with.map(|error_msg| E::JobFailed { error_msg, at_ms }));
            Ok(events)
        }
        C::StartTranscription { at_ms } => {
            if state.duration_ms.is_none() {
                return Err(JobRefusal::OutOfOrder("media must be probed before transcription starts"));
            }
            if state.transcript.is_some() {
                return Err(JobRefusal::AlreadyRecorded("the transcript"));
            }
            Ok(vec![E::TranscriptionStarted { attempt: state.transcription_attempts + 1, at_ms }])
        }
        C::RecordTranscript { path, detected_language, words, at_ms } => {
            if state.transcription_attempts == 0 {
                return Err(JobRefusal::OutOfOrder("transcription must start before a transcript is recorded"));
            }
            if state.transcript.is_some() {
                return Err(JobRefusal::AlreadyRecorded("the transcript"));
            }
            let language = match detected_language {
                Some(l) if submission.language.is_auto() && !l.is_auto() => l,
                _ => submission.language,
            };
            let draft = submission.job_type == JobType::Perfect;
            let mut events = vec![E::TranscriptProduced { path, language, words, draft, at_ms }];
            if draft {
                events.push(open_task(submission, TaskKind::Transcribe, at_ms));
            }
            Ok(events)
        }
        C::RecordTranslation { path, at_ms } => {
            let target_language = match submission.target_language {
                Some(t) if submission.transcription_type == TranscriptionType::TranslatedSubtitles => t,
                _ => {
                    return Err(JobRefusal::OutOfOrder("only translatedSubtitles jobs are translated"));
                }
            };
            if !from_job && state.transcript.is_none() {
                return Err(JobRefusal::OutOfOrder("a transcript must exist before it is translated"));
            }
            if state.translation.is_some() {
                return Err(JobRefusal::AlreadyRecorded("the translation"));
            }
            Ok(vec![E::TranslationProduced { path, target_language, at_ms }])
        }
        C::Complete { at_ms } => {
            let translated = submission.transcription_type == TranscriptionType::TranslatedSubtitles;
            if translated && state.translation.is_none() {
                return Err(JobRefusal::OutOfOrder("translated subtitles must exist before the job is done"));
            }
            if !from_job && state.transcript.as_ref().is_none_or(|t| t.draft) {
                return Err(JobRefusal::OutOfOrder("a final transcript must exist before the job is done"));
            }
            Ok(vec![E::JobCompleted { at_ms }])
        }
        C::Fail { error_msg, at_ms } => {
            let error_msg = match error_msg.trim() {
                "" => "Processing failed for an unknown reason".to_owned(),
                msg => msg.to_owned(),
            };
            Ok(vec![E::JobFailed { error_msg, at_ms }])
        }
        C::RecordCallbackAttempt { outcome, at_ms, next_attempt_at_ms } => {
            if submission.callback_url.is_none() {
                return Err(JobRefusal::NoCallback);
            }
            if !status.is_terminal() {
                return Err(JobRefusal::NotFinished);
            }
            if state.callback.is_settled() {
                return Err(JobRefusal::CallbackSettled);
            }
            let attempt = state.callback.attempts + 1;
            if let CallbackOutcome::Status(code @ 200..=299) = outcome {
                return Ok(vec![E::CallbackDelivered { attempt, status_code: code, at_ms }]);
            }
            let give_up = if outcome.is_gone() {
                Some("the receiver answered 410 Gone".to_owned())
            } else if next_attempt_at_ms.is_none() {
                Some(format!("gave up after {attempt} attempts; the last one got: {outcome}"))
            } else {
                None
            };
            let next_attempt_at_ms = if give_up.is_some() { None } else { next_attempt_at_ms };
            let mut events = vec![E::CallbackAttempted { attempt, outcome, at_ms, next_attempt_at_ms }];
            if let Some(reason) = give_up {
                events.push(E::CallbackAbandoned { reason, at_ms });
            }
            Ok(events)
        }
    }
}

/// `TaskOpened` for the job's task of `kind`, due `turnaroundTime` calendar days after the job
/// was created.
fn open_task(submission: &Submission, kind: TaskKind, at_ms: u64) -> JobEvent {
    let turnaround =
        submission.turnaround_time.unwrap_or_else(|| TurnaroundTime::default_for(submission.transcription_type));
    JobEvent::TaskOpened {
        task_id: task::task_id(&submission.job_id, kind),
        kind,
        deadline_ms: submission.created_ms.saturating_add(u64::from(turnaround.days()) * DAY_MS),
        at_ms,
    }
}

fn submit(
    job_id: JobId,
    owner: UserName,
    at_ms: u64,
    request: JobRequest,
    source: NewMedia,
    media: Option<StoredMedia>,
) -> Vec<JobEvent> {
    let source = match source {
        NewMedia::Upload { filename } => {
            MediaSource::Upload { filename: crate::http_url::sanitize_filename(&filename) }
        }
        NewMedia::Url { source_url } => MediaSource::Url { filename: source_url.file_name(), source_url },
    };
    let mut events = vec![JobEvent::JobSubmitted(Box::new(Submission {
        job_id,
        owner,
        created_ms: at_ms,
        language: request.language,
        transcription_type: request.transcription_type,
        job_type: request.job_type,
        number_of_speakers: request.number_of_speakers,
        job_options: request.job_options,
        turnaround_time: request.turnaround_time,
        target_language: request.target_language,
        callback_url: request.callback_url,
        glossary_id: request.glossary_id,
        notes: None,
        source,
        delete_after_seconds: request.delete_after_seconds,
    }))];
    if let Some(media) = media {
        events.push(JobEvent::MediaStored { path: media.path, bytes: media.bytes, at_ms });
    }
    events
}

fn request_translation(
    job_id: JobId,
    owner: UserName,
    at_ms: u64,
    request: TranslationRequest,
    source: SourceJobFacts,
) -> Result<Vec<JobEvent>, JobRefusal> {
    if source.owner != owner {
        return Err(JobRefusal::Forbidden);
    }
    if source.deleted {
        return Err(JobRefusal::Deleted);
    }
    let not_eligible = |why: &str| Err(JobRefusal::SourceNotEligible(format!("sourceJobId: {why}")));
    if source.job_type != JobType::Perfect {
        return not_eligible(
            "translated subtitles of automatic (direct) jobs must be requested at submission \
             with transcriptionType=translatedSubtitles",
        );
    }
    if source.transcription_type != TranscriptionType::Captions {
        return not_eligible("translated subtitles can be requested only for captions jobs");
    }
    if source.status != JobStatus::Done {
        return Err(JobRefusal::SourceNotDone(source.status));
    }
    let submission = Submission {
        job_id,
        owner,
        created_ms: at_ms,
        language: source.language,
        transcription_type: TranscriptionType::TranslatedSubtitles,
        job_type: JobType::Perfect,
        number_of_speakers: source.number_of_speakers,
        job_options: None,
        turnaround_time: Some(request.turnaround_time),
        target_language: Some(request.target_language),
        callback_url: request.callback_url,
        glossary_id: None,
        notes: request.notes,
        source: MediaSource::Job {
            source_job_id: source.job_id,
            filename: source.filename,
            nr_audio_seconds: source.nr_audio_seconds,
            media_path: source.media_path,
            document_path: source.document_path,
        },
        delete_after_seconds: None,
    };
    let task = open_task(&submission, TaskKind::Translate, at_ms);
    Ok(vec![JobEvent::JobSubmitted(Box::new(submission)), task])
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
        E::TranscriptionStarted { attempt, .. } => state.transcription_attempts = *attempt,
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
            if kind == Some(TaskKind::Transcribe) {
                if let Some(transcript) = &mut state.transcript {
                    transcript.path = path.clone();
                    transcript.draft = false;
                }
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
