//! The machine stages of a job, each recorded once and in order: media stored → probed →
//! transcription started → transcript produced (→ translation produced, for translatedSubtitles)
//! → `DONE`; or a failure at any step → `ERROR`. A manual job's transcript is a draft that opens
//! its first task.

use crate::kinds::{JobType, TaskKind, TranscriptionType};
use crate::languages::Language;

use super::{JobEvent, JobRefusal, JobState, MediaSource, StoredMedia, Submission, nr_audio_seconds, tasks};

/// Whether the job translates another job's document (it has no media or transcript of its own).
fn from_job(submission: &Submission) -> bool {
    matches!(submission.source, MediaSource::Job { .. })
}

pub(super) fn store_media(
    state: &JobState,
    submission: &Submission,
    media: StoredMedia,
    at_ms: u64,
) -> Result<Vec<JobEvent>, JobRefusal> {
    if from_job(submission) {
        return Err(JobRefusal::OutOfOrder("a translation of an existing job has no media of its own"));
    }
    if state.media.is_some() {
        return Err(JobRefusal::AlreadyRecorded("the media file"));
    }
    Ok(vec![JobEvent::MediaStored { path: media.path, bytes: media.bytes, at_ms }])
}

/// The probed length, and the failure `fails_with` (media the server refuses) in the same append.
pub(super) fn probe_media(
    state: &JobState,
    duration_ms: u64,
    fails_with: Option<String>,
    at_ms: u64,
) -> Result<Vec<JobEvent>, JobRefusal> {
    if state.media.is_none() {
        return Err(JobRefusal::OutOfOrder("media must be stored before it is probed"));
    }
    if state.duration_ms.is_some() {
        return Err(JobRefusal::AlreadyRecorded("the media duration"));
    }
    let mut events =
        vec![JobEvent::MediaProbed { duration_ms, nr_audio_seconds: nr_audio_seconds(duration_ms), at_ms }];
    events.extend(fails_with.map(|error_msg| JobEvent::JobFailed { error_msg, at_ms }));
    Ok(events)
}

pub(super) fn start_transcription(state: &JobState, at_ms: u64) -> Result<Vec<JobEvent>, JobRefusal> {
    if state.duration_ms.is_none() {
        return Err(JobRefusal::OutOfOrder("media must be probed before transcription starts"));
    }
    if state.transcript.is_some() {
        return Err(JobRefusal::AlreadyRecorded("the transcript"));
    }
    Ok(vec![JobEvent::TranscriptionStarted { attempt: state.transcription_attempts + 1, at_ms }])
}

/// The engine's transcript; for an `auto` job, the language it detected becomes the job's.
pub(super) fn record_transcript(
    state: &JobState,
    submission: &Submission,
    path: String,
    detected_language: Option<Language>,
    words: u64,
    at_ms: u64,
) -> Result<Vec<JobEvent>, JobRefusal> {
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
    let mut events = vec![JobEvent::TranscriptProduced { path, language, words, draft, at_ms }];
    if draft {
        events.push(tasks::open_task(submission, TaskKind::Transcribe, at_ms));
    }
    Ok(events)
}

pub(super) fn record_translation(
    state: &JobState,
    submission: &Submission,
    path: String,
    at_ms: u64,
) -> Result<Vec<JobEvent>, JobRefusal> {
    let target_language = match submission.target_language {
        Some(t) if submission.transcription_type == TranscriptionType::TranslatedSubtitles => t,
        _ => return Err(JobRefusal::OutOfOrder("only translatedSubtitles jobs are translated")),
    };
    if !from_job(submission) && state.transcript.is_none() {
        return Err(JobRefusal::OutOfOrder("a transcript must exist before it is translated"));
    }
    if state.translation.is_some() {
        return Err(JobRefusal::AlreadyRecorded("the translation"));
    }
    Ok(vec![JobEvent::TranslationProduced { path, target_language, at_ms }])
}

pub(super) fn complete(state: &JobState, submission: &Submission, at_ms: u64) -> Result<Vec<JobEvent>, JobRefusal> {
    let translated = submission.transcription_type == TranscriptionType::TranslatedSubtitles;
    if translated && state.translation.is_none() {
        return Err(JobRefusal::OutOfOrder("translated subtitles must exist before the job is done"));
    }
    if !from_job(submission) && state.transcript.as_ref().is_none_or(|t| t.draft) {
        return Err(JobRefusal::OutOfOrder("a final transcript must exist before the job is done"));
    }
    Ok(vec![JobEvent::JobCompleted { at_ms }])
}

/// A blank `error_msg` is replaced by a generic sentence: a failure is never refused.
pub(super) fn fail(error_msg: &str, at_ms: u64) -> Vec<JobEvent> {
    vec![JobEvent::JobFailed { error_msg: failure_message(error_msg), at_ms }]
}

/// `error_msg` trimmed, or a generic sentence when it is blank.
pub(super) fn failure_message(error_msg: &str) -> String {
    match error_msg.trim() {
        "" => "Processing failed for an unknown reason".to_owned(),
        msg => msg.to_owned(),
    }
}
