//! A customer's corrections to their own finished job: the owner saves a corrected document
//! (words, speakers, highlights) after `DONE`, and it becomes the job's transcript, so every
//! export shows it. Each save is a new file and a `DocumentEdited` event with the next revision
//! number naming it, so `scribe replay` tells who changed the transcript and when, and the
//! exports read the file the last event names. Who may edit is one query, [`JobState::can_edit`].

use crate::ids::UserName;
use crate::kinds::{JobStatus, TranscriptionType};

use super::{JobEvent, JobRefusal, JobState};

impl JobState {
    /// Whether `user` may correct the job's document now: the owner of a `DONE` job that was not
    /// deleted, whose deliverable is its transcript (not translated subtitles). The editor asks
    /// this before it reads or writes a document, and `decide` records an edit only if it holds.
    pub fn can_edit(&self, user: &UserName) -> Result<(), JobRefusal> {
        let Some(submission) = &self.submission else { return Err(JobRefusal::NotFound) };
        if *user != submission.owner {
            return Err(JobRefusal::Forbidden);
        }
        if self.deleted {
            return Err(JobRefusal::Deleted);
        }
        match self.status() {
            Some(JobStatus::Done) => {}
            Some(JobStatus::Error) => return Err(JobRefusal::Finished(JobStatus::Error)),
            _ => return Err(JobRefusal::NotFinished),
        }
        if submission.transcription_type == TranscriptionType::TranslatedSubtitles {
            return Err(JobRefusal::OutOfOrder("the subtitles of a translatedSubtitles job cannot be edited here"));
        }
        if self.transcript.is_none() {
            return Err(JobRefusal::OutOfOrder("the job has no transcript to edit"));
        }
        Ok(())
    }
}

/// Decides an edit of the job's document by `by`, already written to `path`.
pub(super) fn decide_edit(
    state: &JobState,
    by: UserName,
    path: String,
    words: u64,
    at_ms: u64,
) -> Result<Vec<JobEvent>, JobRefusal> {
    state.can_edit(&by)?;
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
