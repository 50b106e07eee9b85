//! A customer's corrections to their own finished job: the owner saves a corrected document
//! (words, speakers, highlights) after `DONE`, and it becomes the job's transcript, so every
//! export shows it. Each save is a `DocumentEdited` event with the next revision number, so
//! `scribe replay` tells who changed the transcript and when.

use crate::ids::UserName;
use crate::kinds::{JobStatus, TranscriptionType};

use super::{JobEvent, JobRefusal, JobState};

/// Decides an edit of the job's document by `by`, already written to `path`.
pub(super) fn decide_edit(
    state: &JobState,
    by: UserName,
    path: String,
    words: u64,
    at_ms: u64,
) -> Result<Vec<JobEvent>, JobRefusal> {
    let Some(submission) = &state.submission else { return Err(JobRefusal::NotFound) };
    if by != submission.owner {
        return Err(JobRefusal::Forbidden);
    }
    if state.deleted {
        return Err(JobRefusal::Deleted);
    }
    match state.status() {
        Some(JobStatus::Done) => {}
        Some(JobStatus::Error) => return Err(JobRefusal::Finished(JobStatus::Error)),
        _ => return Err(JobRefusal::NotFinished),
    }
    if submission.transcription_type == TranscriptionType::TranslatedSubtitles {
        return Err(JobRefusal::OutOfOrder("the transcript of a translatedSubtitles job is not edited here"));
    }
    if state.transcript.is_none() {
        return Err(JobRefusal::OutOfOrder("the job has no transcript to edit"));
    }
    Ok(vec![JobEvent::DocumentEdited { by, revision: state.document_edits + 1, path, words, at_ms }])
}

/// What a `DocumentEdited` event changes: the job's transcript is the edited document.
pub(super) fn apply_edit(state: &mut JobState, revision: u32, path: &str, words: u64) {
    state.document_edits = revision;
    if let Some(transcript) = &mut state.transcript {
        transcript.path = path.to_owned();
        transcript.words = words;
    }
}
