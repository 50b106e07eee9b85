//! The job as clients see it: the spec's Job object, its `{jobStatus: Job}` wrapper, and the
//! callback payload. Their serde shapes *are* the API's JSON; a test pins them.

use serde::{Deserialize, Serialize};

use crate::ids::{GlossaryId, JobId, UserName};
use crate::kinds::{JobStatus, JobType, TaskKind, TranscriptionStyle, TranscriptionType};
use crate::languages::{Language, TargetLanguage};
use crate::options::JobOptions;

use super::events::MediaSource;
use super::live;
use super::state::JobState;

/// The spec's Job object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Job {
    pub job_id: JobId,
    /// Milliseconds since the Unix epoch.
    pub created: u64,
    /// The requested code; for `auto`, the detected language once the transcript exists.
    pub language: Language,
    pub status: JobStatus,
    /// 0 until the media has been probed.
    pub nr_audio_seconds: u64,
    pub transcription_type: TranscriptionType,
    pub filename: String,
    pub job_type: JobType,
    /// Always present; `null` when none.
    pub notes: Option<String>,
    /// Present only when options were explicitly requested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_options: Option<JobOptions>,
    /// Only on translatedSubtitles jobs made from an existing job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_job_id: Option<JobId>,
    /// Only on translatedSubtitles jobs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_language: Option<TargetLanguage>,
    /// Why the job failed, only when the status is `ERROR` (the same sentence as the callback's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_msg: Option<String>,
    /// Beyond the spec: seconds after finishing when the job's data is deleted, as requested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_after_seconds: Option<u64>,
    /// When the job finished (`DONE` or `ERROR`), milliseconds since the Unix epoch; with the
    /// operator's retention it tells when the data expires (see `job::retention`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_ms: Option<u64>,
    /// The job's data was deleted because its retention ended.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub expired: bool,
    /// Beyond the spec: how far the running speech recognition has come, only while the job is
    /// `OPEN` and its transcription runs (see `job::progress`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<super::progress::JobProgress>,
}

impl Job {
    /// When this job's media and documents are deleted under the operator's `retention_s`.
    pub fn expires_at_ms(&self, retention_s: Option<u64>) -> Option<u64> {
        super::retention::expires_at_ms(self.finished_ms?, self.delete_after_seconds, retention_s)
    }
}

/// An open task of a manual job, with what a staff member needs to pick it (the work queue).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskView {
    pub task_id: String,
    pub job_id: JobId,
    pub owner: UserName,
    pub kind: TaskKind,
    /// The language of the speech (the detected one for `auto` jobs).
    pub language: Language,
    /// The language to translate into (translate tasks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_language: Option<TargetLanguage>,
    pub nr_audio_seconds: u64,
    pub opened_ms: u64,
    pub deadline_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holder: Option<UserName>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_until_ms: Option<u64>,
    /// The last saved revision (0: none yet).
    pub revision: u32,
    pub transcription_type: TranscriptionType,
    pub transcription_style: TranscriptionStyle,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub glossary_id: Option<GlossaryId>,
    pub number_of_speakers: u8,
}

impl TaskView {
    /// The language the work is done in: the target of a translation, else the speech's.
    pub fn work_language(&self) -> &'static str {
        match (self.kind, self.target_language) {
            (TaskKind::Translate, Some(t)) => t.code(),
            _ => self.language.code(),
        }
    }

    /// Who holds the task at `now_ms` (a lease that ran out holds nothing).
    pub fn holder_at(&self, now_ms: u64) -> Option<&UserName> {
        match (&self.holder, self.lease_until_ms) {
            (Some(h), Some(until)) if now_ms < until => Some(h),
            _ => None,
        }
    }
}

/// `{"jobStatus": Job}`, the answer of upload, translation and status endpoints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobStatusResponse {
    pub job_status: Job,
}

/// The body POSTed to a job's callbackUrl when it ends: the Job without `notes` (and without
/// the wrapper), plus `errorMsg` when the status is `ERROR`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallbackPayload {
    pub job_id: JobId,
    pub created: u64,
    pub language: Language,
    /// `DONE` or `ERROR`.
    pub status: JobStatus,
    pub nr_audio_seconds: u64,
    pub transcription_type: TranscriptionType,
    pub filename: String,
    pub job_type: JobType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_options: Option<JobOptions>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_job_id: Option<JobId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_language: Option<TargetLanguage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_msg: Option<String>,
}

impl JobState {
    /// The Job object of this state; `None` before submission. (A deleted job still has a
    /// view, for audit; the API answers 410 instead of showing it.)
    pub fn view(&self) -> Option<Job> {
        let s = self.submission.as_ref()?;
        let source_job_id = match &s.source {
            MediaSource::Job { source_job_id, .. } => Some(source_job_id.clone()),
            _ => None,
        };
        Some(Job {
            job_id: s.job_id.clone(),
            created: s.created_ms,
            language: self.language()?,
            status: self.status()?,
            nr_audio_seconds: self.nr_audio_seconds,
            transcription_type: s.transcription_type,
            filename: s.source.filename().to_owned(),
            job_type: s.job_type,
            // A live session cut short (or not read again) says so where a person reads about the job.
            notes: self.live_end.as_ref().and_then(live::LiveEnd::notes).or_else(|| s.notes.clone()),
            job_options: s.job_options,
            source_job_id,
            target_language: s.target_language,
            error_msg: self.error_msg.clone().filter(|_| self.status() == Some(JobStatus::Error)),
            delete_after_seconds: s.delete_after_seconds,
            finished_ms: self.finished.map(|(_, at)| at),
            expired: self.expired,
            progress: self.progress(),
        })
    }

    /// The open tasks of this job, as the work queue shows them (none once the job is finished
    /// or deleted).
    pub fn task_views(&self) -> Vec<TaskView> {
        let Some(s) = self.submission.as_ref() else { return Vec::new() };
        if self.deleted || self.finished.is_some() {
            return Vec::new();
        }
        let language = self.language().unwrap_or(s.language);
        self.tasks
            .iter()
            .filter(|t| t.is_open())
            .map(|t| TaskView {
                task_id: t.task_id.clone(),
                job_id: s.job_id.clone(),
                owner: s.owner.clone(),
                kind: t.kind,
                language,
                target_language: s.target_language.filter(|_| t.kind == TaskKind::Translate),
                nr_audio_seconds: self.nr_audio_seconds,
                opened_ms: t.opened_ms,
                deadline_ms: t.deadline_ms,
                holder: t.lease.as_ref().map(|l| l.holder.clone()),
                lease_until_ms: t.lease.as_ref().map(|l| l.until_ms),
                revision: t.revision.as_ref().map_or(0, |r| r.number),
                transcription_type: s.transcription_type,
                transcription_style: s.job_options.map_or(TranscriptionStyle::Cleanread, |o| o.transcription_style),
                notes: s.notes.clone(),
                glossary_id: s.glossary_id.clone(),
                number_of_speakers: s.number_of_speakers,
            })
            .collect()
    }

    /// The callback body, once the job is `DONE` or `ERROR` and has a callbackUrl.
    pub fn callback_payload(&self) -> Option<CallbackPayload> {
        self.submission.as_ref()?.callback_url.as_ref()?;
        let job = self.view()?;
        if !job.status.is_terminal() {
            return None;
        }
        Some(CallbackPayload {
            job_id: job.job_id,
            created: job.created,
            language: job.language,
            status: job.status,
            nr_audio_seconds: job.nr_audio_seconds,
            transcription_type: job.transcription_type,
            filename: job.filename,
            job_type: job.job_type,
            job_options: job.job_options,
            source_job_id: job.source_job_id,
            target_language: job.target_language,
            error_msg: job.error_msg,
        })
    }
}

/// The `webhook-id` of a job's callback: the same for every retry of one job and status, so
/// receivers can drop duplicates (Standard Webhooks).
pub fn callback_message_id(job_id: &JobId, status: JobStatus) -> String {
    format!("msg_{job_id}_{status}")
}
