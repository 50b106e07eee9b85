//! A live session kept as a job (`saveAsJob`): the job exists from the session's first moment,
//! each finalized utterance is recorded on its stream as it happens, and the session's end
//! records the audio, its length and the document of the finals it sent in one append. A
//! session cut short by a crash is ended the same way from what its stream holds, and says so.
//!
//! Then the recording is read again as a direct job reads a file: each final was read alone,
//! cut at a pause, so a sentence spoken with pauses came back as several, while the whole
//! recording reads as one text (`ops/bench/live.md`). The job's transcript is that reading; the
//! finals stay on the job's stream, and become its transcript only if the reading fails, so a
//! session that was captioned never ends in `ERROR` for it.

use serde::{Deserialize, Serialize};

use crate::languages::Language;

use super::{JobEvent, JobRefusal, JobState, MediaSource, StoredMedia};

/// One finalized utterance as recorded: times in milliseconds from the start of the stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LiveUtterance {
    /// 0, 1, 2, ... in the order they were finalized.
    pub index: u32,
    pub start_ms: u64,
    pub end_ms: u64,
    pub words: Vec<LiveWordRecord>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LiveWordRecord {
    pub text: String,
    pub start_ms: u64,
    pub end_ms: u64,
    pub conf: f32,
}

/// How the session ended, as its job's last live facts say.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveEnd {
    /// Set when the session did not end on its own (a crash): a sentence for the job's notes.
    pub interrupted: Option<String>,
    /// The finals' document, kept for when reading the recording again fails (`None` for
    /// sessions that ended before recordings were read again).
    pub finals: Option<LiveTranscript>,
    /// Why reading the recording again failed, when it did.
    pub reread_failed: Option<String>,
}

impl LiveEnd {
    /// The sentences about the session for the job's notes.
    pub fn notes(&self) -> Option<String> {
        let reread = self
            .reread_failed
            .as_ref()
            .map(|e| format!("Reading the recording again failed ({e}); the transcript is the session's live results"));
        match (&self.interrupted, reread) {
            (Some(i), Some(r)) => Some(format!("{i}. {r}")),
            (i, r) => i.clone().or(r),
        }
    }
}

/// What the session's end brings: the audio file and the document written from the recorded
/// finals (`None` when nothing was finalized).
#[derive(Debug, Clone, PartialEq)]
pub struct LiveOutcome {
    pub media: StoredMedia,
    pub duration_ms: u64,
    pub transcript: Option<LiveTranscript>,
    pub interrupted: Option<String>,
}

/// A transcript document written from a session's finals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LiveTranscript {
    pub path: String,
    pub language: Language,
    pub words: u64,
}

fn is_live(state: &JobState) -> bool {
    matches!(state.submission.as_ref().map(|s| &s.source), Some(MediaSource::Live { .. }))
}

/// Records utterance `utterance.index`; one recorded already is not recorded twice.
pub(super) fn record_utterance(
    state: &JobState,
    utterance: LiveUtterance,
    at_ms: u64,
) -> Result<Vec<JobEvent>, JobRefusal> {
    if !is_live(state) {
        return Err(JobRefusal::OutOfOrder("only a live session's job records utterances"));
    }
    let next = state.live_utterances.len() as u32;
    if utterance.index < next {
        return Err(JobRefusal::AlreadyRecorded("this utterance"));
    }
    if utterance.index > next {
        return Err(JobRefusal::OutOfOrder("utterances are recorded in order"));
    }
    Ok(vec![JobEvent::LiveUtteranceRecorded { utterance, at_ms }])
}

/// Ends the session: its recording is stored and probed, and read again next (the job goes on
/// to transcription); `ERROR` when nothing was finalized.
pub(super) fn finish(state: &JobState, outcome: LiveOutcome, at_ms: u64) -> Result<Vec<JobEvent>, JobRefusal> {
    if !is_live(state) {
        return Err(JobRefusal::OutOfOrder("only a live session's job is finished by its session"));
    }
    if state.live_end.is_some() {
        return Err(JobRefusal::AlreadyRecorded("the end of the live session"));
    }
    let LiveOutcome { media, duration_ms, transcript, interrupted } = outcome;
    let nothing = transcript.is_none();
    let mut events = vec![
        JobEvent::MediaStored { path: media.path, bytes: media.bytes, at_ms },
        JobEvent::MediaProbed { duration_ms, nr_audio_seconds: super::nr_audio_seconds(duration_ms), at_ms },
        JobEvent::LiveSessionEnded { interrupted, finals: transcript, at_ms },
    ];
    if nothing {
        events.push(JobEvent::JobFailed { error_msg: "No speech was finalized in the live session".into(), at_ms });
    }
    Ok(events)
}

/// A failure while the recording of a session that sent finals is read again: the finals
/// become the transcript and the job is done, the failure in its notes. `None` for any other
/// job or moment (the failure is the job's).
pub(super) fn keep_finals(state: &JobState, error_msg: &str, at_ms: u64) -> Option<Vec<JobEvent>> {
    let finals = state.live_end.as_ref()?.finals.clone()?;
    if state.transcript.is_some() || state.finished.is_some() || state.deleted {
        return None;
    }
    Some(vec![
        JobEvent::LiveRereadFailed { error_msg: super::stages::failure_message(error_msg), at_ms },
        JobEvent::TranscriptProduced {
            path: finals.path,
            language: finals.language,
            words: finals.words,
            draft: false,
            at_ms,
        },
        JobEvent::JobCompleted { at_ms },
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{JobId, UserName};
    use crate::job::{JobCommand, NewMedia, Stage, decide, evolve};
    use crate::kinds::JobStatus;
    use crate::requests::JobParams;

    fn live_job() -> JobState {
        let request = JobParams::default().validate().unwrap();
        let command = JobCommand::Submit {
            job_id: JobId::parse("j1").unwrap(),
            owner: UserName::parse("ann").unwrap(),
            at_ms: 1,
            request,
            source: NewMedia::Live { node: "n1".into() },
        };
        apply(JobState::default(), decide(&JobState::default(), command).unwrap())
    }

    fn utterance(index: u32) -> LiveUtterance {
        LiveUtterance {
            index,
            start_ms: 1000 * index as u64,
            end_ms: 1000 * index as u64 + 800,
            words: vec![LiveWordRecord { text: "hello".into(), start_ms: 0, end_ms: 500, conf: 0.9 }],
        }
    }

    fn apply(state: JobState, events: Vec<JobEvent>) -> JobState {
        events.iter().fold(state, evolve)
    }

    #[test]
    fn given_a_live_job_when_utterances_are_recorded_then_each_is_kept_once_in_order() {
        let state = live_job();
        assert_eq!(state.stage(), Stage::Live);
        let state = apply(
            state.clone(),
            decide(&state, JobCommand::RecordUtterance { utterance: utterance(0), at_ms: 5 }).unwrap(),
        );
        assert_eq!(state.live_utterances.len(), 1);
        assert_eq!(
            decide(&state, JobCommand::RecordUtterance { utterance: utterance(0), at_ms: 6 }),
            Err(JobRefusal::AlreadyRecorded("this utterance"))
        );
        assert!(decide(&state, JobCommand::RecordUtterance { utterance: utterance(2), at_ms: 6 }).is_err());
    }

    fn ended(interrupted: Option<&str>) -> JobState {
        let state = live_job();
        let outcome = LiveOutcome {
            media: StoredMedia { path: "media/j.wav".into(), bytes: 32_044 },
            duration_ms: 1_000,
            transcript: Some(LiveTranscript {
                path: "transcripts/j.live-finals.json".into(),
                language: Language::default_language(),
                words: 1,
            }),
            interrupted: interrupted.map(str::to_owned),
        };
        apply(state.clone(), decide(&state, JobCommand::FinishLive { outcome, at_ms: 9 }).unwrap())
    }

    #[test]
    fn given_a_live_job_when_it_finishes_then_its_recording_is_transcribed_next() {
        let state = ended(Some("interrupted"));
        assert_eq!(state.stage(), Stage::Transcribe);
        assert_eq!(state.status(), Some(JobStatus::Open));
        assert_eq!(state.nr_audio_seconds, 1);
        assert_eq!(state.live_end.as_ref().and_then(LiveEnd::notes).as_deref(), Some("interrupted"));
        let again = LiveOutcome {
            media: StoredMedia { path: "media/j.wav".into(), bytes: 32_044 },
            duration_ms: 1_000,
            transcript: None,
            interrupted: None,
        };
        assert!(decide(&state, JobCommand::FinishLive { outcome: again, at_ms: 10 }).is_err());
    }

    #[test]
    fn given_an_ended_session_when_its_recording_is_read_again_then_that_reading_is_the_transcript() {
        let state = ended(None);
        let state = apply(state.clone(), decide(&state, JobCommand::StartTranscription { at_ms: 10 }).unwrap());
        let cmd = JobCommand::RecordTranscript {
            path: "transcripts/j.json".into(),
            detected_language: None,
            words: 3,
            at_ms: 11,
        };
        let state = apply(state.clone(), decide(&state, cmd).unwrap());
        let state = apply(state.clone(), decide(&state, JobCommand::Complete { at_ms: 12 }).unwrap());
        assert_eq!(state.status(), Some(JobStatus::Done));
        assert_eq!(state.transcript.as_ref().map(|t| t.path.as_str()), Some("transcripts/j.json"));
        assert_eq!(state.live_end.as_ref().and_then(LiveEnd::notes), None);
    }

    #[test]
    fn given_an_ended_session_when_reading_it_again_fails_then_its_finals_are_the_transcript() {
        let state = ended(Some("Cut short"));
        let fail = JobCommand::Fail { error_msg: "the engine failed".into(), at_ms: 10 };
        let state = apply(state.clone(), decide(&state, fail).unwrap());
        assert_eq!(state.status(), Some(JobStatus::Done));
        assert_eq!(state.transcript.as_ref().map(|t| t.path.as_str()), Some("transcripts/j.live-finals.json"));
        let notes = state.live_end.as_ref().and_then(LiveEnd::notes).unwrap();
        assert!(notes.starts_with("Cut short. Reading the recording again failed (the engine failed)"), "{notes}");
        // Once done, a failure is the job's own again (nothing is kept twice).
        let fail = JobCommand::Fail { error_msg: "late".into(), at_ms: 11 };
        let again = decide(&state, fail).unwrap_or_default();
        assert!(!again.iter().any(|e| matches!(e, JobEvent::LiveRereadFailed { .. })), "{again:?}");
    }

    #[test]
    fn given_a_live_job_without_speech_when_it_finishes_then_it_is_an_error() {
        let state = live_job();
        let outcome = LiveOutcome {
            media: StoredMedia { path: "media/j.wav".into(), bytes: 44 },
            duration_ms: 0,
            transcript: None,
            interrupted: None,
        };
        let state = apply(state.clone(), decide(&state, JobCommand::FinishLive { outcome, at_ms: 9 }).unwrap());
        assert_eq!(state.status(), Some(JobStatus::Error));
    }
}
