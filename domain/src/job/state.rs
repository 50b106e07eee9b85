//! `JobState`: what a job's history adds up to. The job actor decides with it; the read models,
//! the API and the callback actor read it; recovery asks it which [`Stage`] comes next.

use crate::ids::{GlossaryId, JobId, UserName};
use crate::kinds::{JobStatus, JobType, TranscriptionType};
use crate::languages::{Language, TargetLanguage};

use super::events::{CallbackOutcome, MediaSource, Submission};
use super::task::TaskState;

/// A media file on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredMedia {
    /// Relative to the data directory.
    pub path: String,
    pub bytes: u64,
}

/// The transcript document of a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transcript {
    /// Relative to the data directory.
    pub path: String,
    /// The requested language, or the detected one for `auto` jobs.
    pub language: Language,
    pub words: u64,
    /// A machine draft that people still work on (manual jobs).
    pub draft: bool,
}

/// The translated subtitles of a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Translation {
    /// Relative to the data directory.
    pub path: String,
    pub target_language: TargetLanguage,
}

/// Where callback delivery stands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallbackProgress {
    /// Attempts made so far (failed ones and the delivered one).
    pub attempts: u32,
    pub last_outcome: Option<CallbackOutcome>,
    /// When the next attempt is due, after a failed one.
    pub next_attempt_at_ms: Option<u64>,
    /// A 2xx was received.
    pub delivered: bool,
    /// Why delivery stopped without a 2xx.
    pub abandoned: Option<String>,
}

impl CallbackProgress {
    /// Delivered or abandoned: no more attempts.
    pub fn is_settled(&self) -> bool {
        self.delivered || self.abandoned.is_some()
    }
}

/// The next thing to do for a job, as its log says. On restart, every job not at `Finished`,
/// `HumanWork` or `Deleted` resumes here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Nothing was submitted on this stream.
    New,
    /// `sourceUrl` not fetched yet. An upload records its file (and duration) in the append
    /// that submits it, so it is never here once that append is read whole.
    StoreMedia,
    /// Media on disk, duration unknown.
    ProbeMedia,
    /// Probed; no transcript yet (also when an attempt started and crashed).
    Transcribe,
    /// Transcript ready; translatedSubtitles not produced yet (direct jobs).
    Translate,
    /// Every artifact is there but `JobCompleted` was not recorded.
    Complete,
    /// A manual job waiting for people (draft made, or a translation request).
    HumanWork,
    /// A manual job's draft exists but its task was never opened (jobs recorded before tasks
    /// existed): open it.
    OpenTask,
    /// A live session records this job; its session ends it (or, after a crash, the node
    /// that ran it, on its next start), and its recording is then transcribed.
    Live,
    /// Finished with a callbackUrl whose delivery is not settled.
    DeliverCallback,
    /// Nothing left to do.
    Finished,
    Deleted,
}

/// Facts about an existing job that a translatedSubtitles request needs (see
/// `JobCommand::RequestTranslation`). Built by [`JobState::source_facts`].
#[derive(Debug, Clone, PartialEq)]
pub struct SourceJobFacts {
    pub job_id: JobId,
    pub owner: UserName,
    pub job_type: JobType,
    pub transcription_type: TranscriptionType,
    pub status: JobStatus,
    pub deleted: bool,
    pub language: Language,
    pub number_of_speakers: u8,
    pub filename: String,
    pub nr_audio_seconds: u64,
    /// The source's media file, relative to the data directory.
    pub media_path: Option<String>,
    /// The source's final transcript, relative to the data directory.
    pub document_path: Option<String>,
    /// The source's glossary: its translation is worked on with the same names and terms.
    pub glossary_id: Option<GlossaryId>,
}

/// A job as its history made it. Built only by `evolve`; read through its fields and methods.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobState {
    /// `None` until `JobSubmitted`.
    pub submission: Option<Submission>,
    pub media: Option<StoredMedia>,
    pub duration_ms: Option<u64>,
    /// From the probe (or copied from the source job for translations); 0 until known.
    pub nr_audio_seconds: u64,
    pub transcription_attempts: u32,
    /// When the latest transcription attempt started.
    pub transcription_started_ms: Option<u64>,
    /// The latest progress point of the latest attempt (cleared when an attempt starts).
    pub transcription_progress: Option<super::progress::ProgressPoint>,
    pub transcript: Option<Transcript>,
    pub translation: Option<Translation>,
    /// Terminal status and when it was reached.
    pub finished: Option<(JobStatus, u64)>,
    /// The reason given with `ERROR`.
    pub error_msg: Option<String>,
    pub callback: CallbackProgress,
    pub deleted: bool,
    /// Deleted because its retention ended (`JobExpired`), not by its owner.
    pub expired: bool,
    /// The human tasks of a manual job, in the order they were opened.
    pub tasks: Vec<TaskState>,
    /// Revisions of the document the owner saved after `DONE` (see `DocumentEdited`).
    pub document_edits: u32,
    /// The last claim on the job's machine work (see `job::work_claim`).
    pub claim: Option<super::work_claim::WorkClaim>,
    /// A live session's finalized utterances, in order (see `job::live`).
    pub live_utterances: Vec<super::live::LiveUtterance>,
    /// How the live session ended, once it has.
    pub live_end: Option<super::live::LiveEnd>,
    /// The request that waited for the job let go of it (see `job::awaited`).
    pub request_detached: bool,
}

impl JobState {
    /// `None` before submission; `OPEN`/`BUSY` until a terminal event, then `DONE`/`ERROR`.
    pub fn status(&self) -> Option<JobStatus> {
        let submission = self.submission.as_ref()?;
        Some(match self.finished {
            Some((status, _)) => status,
            None if matches!(submission.source, MediaSource::Job { .. }) => JobStatus::Busy,
            None => JobStatus::Open,
        })
    }

    pub fn owner(&self) -> Option<&UserName> {
        self.submission.as_ref().map(|s| &s.owner)
    }

    /// The language shown to clients: the detected one once known for `auto` jobs.
    pub fn language(&self) -> Option<Language> {
        let requested = self.submission.as_ref()?.language;
        Some(self.transcript.as_ref().map_or(requested, |t| t.language))
    }

    /// What happens next for this job (see [`Stage`]).
    pub fn stage(&self) -> Stage {
        let Some(submission) = &self.submission else {
            return Stage::New;
        };
        if self.deleted {
            return Stage::Deleted;
        }
        if self.finished.is_some() {
            return if submission.callback_url.is_some() && !self.callback.is_settled() {
                Stage::DeliverCallback
            } else {
                Stage::Finished
            };
        }
        if matches!(submission.source, MediaSource::Job { .. }) {
            return Stage::HumanWork;
        }
        // Once the session has ended, its recording goes on as an upload's would (read again).
        if matches!(submission.source, MediaSource::Live { .. }) && self.live_end.is_none() {
            return Stage::Live;
        }
        // A manual job's draft leads to human work; only jobs recorded before tasks existed
        // lack the task (the pipeline opens it).
        if let Some(t) = &self.transcript {
            if t.draft && self.tasks.is_empty() {
                return Stage::OpenTask;
            }
            if submission.job_type == JobType::Perfect {
                return Stage::HumanWork;
            }
        }
        let translated = submission.transcription_type == TranscriptionType::TranslatedSubtitles;
        match (&self.media, self.duration_ms, &self.transcript, &self.translation) {
            (None, _, _, _) => Stage::StoreMedia,
            (Some(_), None, _, _) => Stage::ProbeMedia,
            (Some(_), Some(_), None, _) => Stage::Transcribe,
            (_, _, Some(t), _) if t.draft => Stage::HumanWork,
            (_, _, Some(_), None) if translated => Stage::Translate,
            _ => Stage::Complete,
        }
    }

    /// The facts a translatedSubtitles request about this job needs; `None` before submission.
    pub fn source_facts(&self) -> Option<SourceJobFacts> {
        let s = self.submission.as_ref()?;
        Some(SourceJobFacts {
            job_id: s.job_id.clone(),
            owner: s.owner.clone(),
            job_type: s.job_type,
            transcription_type: s.transcription_type,
            status: self.status()?,
            deleted: self.deleted,
            language: self.language()?,
            number_of_speakers: s.number_of_speakers,
            filename: s.source.filename().to_owned(),
            nr_audio_seconds: self.nr_audio_seconds,
            media_path: self.media_path().map(str::to_owned),
            document_path: self.transcript.as_ref().filter(|t| !t.draft).map(|t| t.path.clone()),
            glossary_id: s.glossary_id.clone(),
        })
    }

    /// The media file people listen to: the job's own, or its source job's for a translation.
    pub fn media_path(&self) -> Option<&str> {
        match &self.submission.as_ref()?.source {
            MediaSource::Job { media_path, .. } => media_path.as_deref(),
            _ => self.media.as_ref().map(|m| m.path.as_str()),
        }
    }

    /// The task with this id.
    pub fn task(&self, task_id: &str) -> Option<&TaskState> {
        self.tasks.iter().find(|t| t.task_id == task_id)
    }

    /// The document a translation works from: the submitted transcription of this job, or the
    /// source job's final transcript.
    pub fn translation_source_path(&self) -> Option<&str> {
        match &self.submission.as_ref()?.source {
            MediaSource::Job { document_path, .. } => document_path.as_deref(),
            _ => self.transcript.as_ref().filter(|t| !t.draft).map(|t| t.path.as_str()),
        }
    }

    /// The document the job delivers, as its events name it (relative to the data directory):
    /// the translation of a translatedSubtitles job, else the transcript once people's work
    /// (or the machine's, for direct jobs) made it final. Every edit and submission records a
    /// new file and its event names it, so this follows the job's history; the exports and the
    /// editor read this file, and nothing is copied to a fixed name.
    pub fn delivered_document(&self) -> Option<&str> {
        let s = self.submission.as_ref()?;
        if s.transcription_type == TranscriptionType::TranslatedSubtitles && s.target_language.is_some() {
            return self.translation.as_ref().map(|t| t.path.as_str());
        }
        self.transcript.as_ref().filter(|t| !t.draft).map(|t| t.path.as_str())
    }

    /// Whether deleting this job now gives its money back: no work was spent on it yet. A manual
    /// job is refunded until someone first claims one of its tasks; a direct job until its
    /// recognition starts (once the machine has started on it, the charge stays, as it does for
    /// a claimed manual job). A finished job is never refunded on deletion.
    pub fn refunded_on_delete(&self) -> bool {
        let Some(s) = &self.submission else { return false };
        if self.finished.is_some() {
            return false;
        }
        match s.job_type {
            JobType::Perfect => !self.tasks.iter().any(|t| t.ever_claimed),
            JobType::Direct => self.transcription_attempts == 0 && self.transcript.is_none(),
        }
    }
}
