//! The events of a job's stream (`job-<jobId>`), and how they are stored.
//!
//! Field names are snake_case (they are storage, not API). Times are milliseconds since the Unix
//! epoch, given by the caller. Durations are integer milliseconds: floats do not round-trip
//! through every JSON reader.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::codec::{self, DecodeError, VersionedEvent};
use crate::decoding::DecodingChoices;
use crate::http_url::HttpUrl;
use crate::ids::{GlossaryId, JobId, UserName};
use crate::kinds::{JobType, TaskKind, TranscriptionType, TurnaroundTime};
use crate::languages::{Language, TargetLanguage};
use crate::options::JobOptions;

/// Everything fixed about a job when it is accepted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Submission {
    pub job_id: JobId,
    pub owner: UserName,
    pub created_ms: u64,
    /// As requested (`auto` stays `auto` here; the detected language arrives with the transcript).
    pub language: Language,
    pub transcription_type: TranscriptionType,
    pub job_type: JobType,
    pub number_of_speakers: u8,
    /// The client gave `numberOfSpeakers` (absent in events of jobs accepted before this was
    /// told apart: those kept the default's meaning, a bound).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub number_of_speakers_given: bool,
    pub job_options: Option<JobOptions>,
    pub turnaround_time: Option<TurnaroundTime>,
    pub target_language: Option<TargetLanguage>,
    pub callback_url: Option<HttpUrl>,
    pub glossary_id: Option<GlossaryId>,
    pub notes: Option<String>,
    pub source: MediaSource,
    /// Seconds after the job finishes when its media and documents are deleted, as requested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_after_seconds: Option<u64>,
    /// `speakerChannels` as the client gave it (beyond the spec): `Some(true)`, each audio channel
    /// is one speaker; `None`, left out, so the operator's default applies when the job is
    /// diarized (see [`Submission::diarization`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speaker_channels: Option<bool>,
    /// How the engine decodes the job, as its client chose (the OpenAI door).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decoding: Option<DecodingChoices>,
    /// The server node holding the open request that waits for this job's answer (the OpenAI
    /// door); `None`: nobody waits, the client polls or is called back (see `job::awaited`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub awaited_on: Option<String>,
}

impl Submission {
    /// What diarization looks for, from `numberOfSpeakers` and whether the client gave it.
    pub fn speaker_count(&self) -> crate::speakers::SpeakerCount {
        crate::speakers::SpeakerCount::of(self.number_of_speakers, self.number_of_speakers_given)
    }

    /// How the job's words get their speakers, with the operator's default for `speakerChannels`
    /// (`--speaker-channels`) applied when the job left it out.
    pub fn diarization(&self, speaker_channels_by_default: bool) -> crate::speakers::Diarization {
        crate::speakers::Diarization::of(
            self.speaker_channels,
            speaker_channels_by_default,
            self.speaker_count(),
            self.number_of_speakers_given,
        )
    }
}

/// Where a job's media comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MediaSource {
    /// `POST /jobs/upload-media`: the file arrived with the request.
    Upload { filename: String },
    /// `POST /jobs/upload-media-from-url`: the service fetches `source_url`.
    Url { source_url: HttpUrl, filename: String },
    /// A live session kept as a job (`saveAsJob`), run by the server node `node`: its audio is
    /// stored when the session ends.
    Live { filename: String, node: String },
    /// `POST /jobs/translatedSubtitles`: the media and captions of an existing job.
    /// `media_path` and `document_path` (relative to the data directory) are the source's
    /// media and final transcript, which the translator works from.
    Job {
        source_job_id: JobId,
        filename: String,
        nr_audio_seconds: u64,
        #[serde(default)]
        media_path: Option<String>,
        #[serde(default)]
        document_path: Option<String>,
    },
}

impl MediaSource {
    pub fn filename(&self) -> &str {
        match self {
            MediaSource::Upload { filename }
            | MediaSource::Url { filename, .. }
            | MediaSource::Live { filename, .. }
            | MediaSource::Job { filename, .. } => filename,
        }
    }
}

/// What one callback delivery attempt got back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallbackOutcome {
    /// The receiver answered with this HTTP status.
    Status(u16),
    /// No answer: connection refused, timeout, refused address... (a sentence for the audit log).
    Error(String),
}

impl CallbackOutcome {
    /// Any 2xx acknowledges a callback.
    pub fn is_acknowledged(&self) -> bool {
        matches!(self, CallbackOutcome::Status(200..=299))
    }

    /// `410 Gone`: the receiver asks us to stop.
    pub fn is_gone(&self) -> bool {
        matches!(self, CallbackOutcome::Status(410))
    }
}

impl std::fmt::Display for CallbackOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallbackOutcome::Status(code) => write!(f, "HTTP {code}"),
            CallbackOutcome::Error(e) => f.write_str(e),
        }
    }
}

/// A fact in a job's history. Stored with [`VersionedEvent::encode`], read with
/// [`VersionedEvent::decode`]; every type is at version 1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum JobEvent {
    /// The job was accepted (→ `OPEN`, or `BUSY` when it translates an existing job).
    /// (Boxed: it is ten times larger than every other event.)
    JobSubmitted(Box<Submission>),
    /// The media file is on disk, at `path` relative to the data directory, fsynced.
    MediaStored { path: String, bytes: u64, at_ms: u64 },
    /// The media was decoded far enough to know its length.
    MediaProbed { duration_ms: u64, nr_audio_seconds: u64, at_ms: u64 },
    /// Speech recognition began (attempt 1, 2, ... when restarted after a crash).
    TranscriptionStarted { attempt: u32, at_ms: u64 },
    /// Attempt `attempt` of speech recognition has recognised `done_ms` of the media's
    /// `total_ms`: a new whole 10 % step (see `job::progress`, which keeps it to ten a job).
    TranscriptionProgressed { attempt: u32, done_ms: u64, total_ms: u64, at_ms: u64 },
    /// A transcript document is on disk at `path` (relative to the data directory).
    /// `draft` is true for manual jobs: the machine transcript people start from.
    TranscriptProduced { path: String, language: Language, words: u64, draft: bool, at_ms: u64 },
    /// Translated subtitles are on disk at `path`.
    TranslationProduced { path: String, target_language: TargetLanguage, at_ms: u64 },
    /// → `DONE`.
    JobCompleted { at_ms: u64 },
    /// → `ERROR`; `error_msg` is shown to the client.
    JobFailed { error_msg: String, at_ms: u64 },
    /// A callback delivery failed; `next_attempt_at_ms` is when the next one is due (none when
    /// this was the last, followed by `CallbackAbandoned`).
    CallbackAttempted { attempt: u32, outcome: CallbackOutcome, at_ms: u64, next_attempt_at_ms: Option<u64> },
    /// The receiver acknowledged the callback with a 2xx.
    CallbackDelivered { attempt: u32, status_code: u16, at_ms: u64 },
    /// No more attempts will be made.
    CallbackAbandoned { reason: String, at_ms: u64 },
    /// The owner deleted the job; its files are to be removed. Kept for audit.
    JobDeleted { by: UserName, at_ms: u64 },
    /// The job's retention ended `retention_s` after it finished: its files are to be removed,
    /// and it answers as a deleted job from now on (see `job::retention`).
    JobExpired { retention_s: u64, at_ms: u64 },
    /// Human work was opened on a manual job (see `job::task`), due by `deadline_ms`.
    TaskOpened { task_id: String, kind: TaskKind, deadline_ms: u64, at_ms: u64 },
    /// A staff member took the task; nobody else may work on it until `lease_until_ms`.
    TaskClaimed { task_id: String, by: UserName, lease_until_ms: u64, at_ms: u64 },
    /// A revision of the task's document is on disk at `path`; the save renewed the lease.
    DraftSaved {
        task_id: String,
        by: UserName,
        revision: u32,
        path: String,
        words: u64,
        lease_until_ms: u64,
        at_ms: u64,
    },
    /// The task went back to the queue, with its saved draft: released by its holder (`by`),
    /// or because the lease expired (`expired`, no `by`).
    TaskReleased {
        task_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<UserName>,
        expired: bool,
        at_ms: u64,
    },
    /// The holder handed in the task's document at `path` (revision 0: the machine draft as it
    /// was). The task is closed.
    TaskSubmitted { task_id: String, by: UserName, revision: u32, path: String, at_ms: u64 },
    /// The owner corrected the finished job's document (revision 1, 2, ...), now at `path`:
    /// it is the job's transcript from here on.
    DocumentEdited { by: UserName, revision: u32, path: String, words: u64, at_ms: u64 },
    /// A live session finalized an utterance (see `job::live`).
    LiveUtteranceRecorded { utterance: super::live::LiveUtterance, at_ms: u64 },
    /// The live session ended; `interrupted` says why when it did not end on its own. `finals`
    /// is the document of the finals it sent: the recording is then read again as a direct job
    /// reads a file, and the finals are its transcript only if that fails (see `job::live`).
    /// (Sessions that ended before the recording was read again record no `finals`: their
    /// `TranscriptProduced` follows in the same append.)
    LiveSessionEnded {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        interrupted: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        finals: Option<super::live::LiveTranscript>,
        at_ms: u64,
    },
    /// Reading a live session's recording again failed with `error_msg`; the finals it sent are
    /// the job's transcript (see `job::live`).
    LiveRereadFailed { error_msg: String, at_ms: u64 },
    /// The request that waited for the job stopped waiting, the job still running (the server's
    /// wait ran out; the client follows the job on the jobs API). See `job::awaited`.
    RequestDetached { at_ms: u64 },
    /// A node of a cluster took (or renewed) the job's `stage` until `lease_until_ms`; see
    /// `job::work_claim`.
    WorkClaimed {
        #[serde(with = "super::work_claim::stage_serde")]
        stage: super::Stage,
        node: String,
        lease_until_ms: u64,
        at_ms: u64,
    },
}

impl VersionedEvent for JobEvent {
    fn event_type(&self) -> &'static str {
        match self {
            JobEvent::JobSubmitted(_) => "JobSubmitted",
            JobEvent::MediaStored { .. } => "MediaStored",
            JobEvent::MediaProbed { .. } => "MediaProbed",
            JobEvent::TranscriptionStarted { .. } => "TranscriptionStarted",
            JobEvent::TranscriptionProgressed { .. } => "TranscriptionProgressed",
            JobEvent::TranscriptProduced { .. } => "TranscriptProduced",
            JobEvent::TranslationProduced { .. } => "TranslationProduced",
            JobEvent::JobCompleted { .. } => "JobCompleted",
            JobEvent::JobFailed { .. } => "JobFailed",
            JobEvent::CallbackAttempted { .. } => "CallbackAttempted",
            JobEvent::CallbackDelivered { .. } => "CallbackDelivered",
            JobEvent::CallbackAbandoned { .. } => "CallbackAbandoned",
            JobEvent::JobDeleted { .. } => "JobDeleted",
            JobEvent::JobExpired { .. } => "JobExpired",
            JobEvent::TaskOpened { .. } => "TaskOpened",
            JobEvent::TaskClaimed { .. } => "TaskClaimed",
            JobEvent::DraftSaved { .. } => "DraftSaved",
            JobEvent::TaskReleased { .. } => "TaskReleased",
            JobEvent::TaskSubmitted { .. } => "TaskSubmitted",
            JobEvent::DocumentEdited { .. } => "DocumentEdited",
            JobEvent::WorkClaimed { .. } => "WorkClaimed",
            JobEvent::RequestDetached { .. } => "RequestDetached",
            JobEvent::LiveUtteranceRecorded { .. } => "LiveUtteranceRecorded",
            JobEvent::LiveSessionEnded { .. } => "LiveSessionEnded",
            JobEvent::LiveRereadFailed { .. } => "LiveRereadFailed",
        }
    }

    fn encode(&self) -> Value {
        codec::encode_tagged(self, 1)
    }

    fn decode(stored: &Value) -> Result<Self, DecodeError> {
        match codec::header(stored)? {
            (_, 1) => codec::decode_as(stored),
            // When a type changes shape, freeze the old one as e.g. `JobSubmittedV1` and add
            // `("JobSubmitted", 1) => Ok(codec::decode_as::<JobSubmittedV1>(stored)?.into())`.
            _ => Err(codec::unknown_version(stored)),
        }
    }
}
