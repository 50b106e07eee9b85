//! A live session kept as a job (`saveAsJob`): the job exists from the session's first moment,
//! each finalized utterance is recorded on its stream as it happens, and the session's end
//! records the audio, its length, the transcript and the completion in one append. A session
//! cut short by a crash is finished the same way from what its stream holds, and says so.

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
}

/// What the session's end brings: the audio file and the transcript written from the recorded
/// utterances (`None` when nothing was said).
#[derive(Debug, Clone, PartialEq)]
pub struct LiveOutcome {
    pub media: StoredMedia,
    pub duration_ms: u64,
    pub transcript: Option<LiveTranscript>,
    pub interrupted: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
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

/// Ends the session's job: DONE with its transcript, or ERROR when nothing was said.
pub(super) fn finish(state: &JobState, outcome: LiveOutcome, at_ms: u64) -> Result<Vec<JobEvent>, JobRefusal> {
    if !is_live(state) {
        return Err(JobRefusal::OutOfOrder("only a live session's job is finished by its session"));
    }
    let LiveOutcome { media, duration_ms, transcript, interrupted } = outcome;
    let mut events = vec![
        JobEvent::MediaStored { path: media.path, bytes: media.bytes, at_ms },
        JobEvent::MediaProbed { duration_ms, nr_audio_seconds: super::nr_audio_seconds(duration_ms), at_ms },
        JobEvent::LiveSessionEnded { interrupted, at_ms },
    ];
    match transcript {
        Some(t) => {
            events.push(JobEvent::TranscriptProduced {
                path: t.path,
                language: t.language,
                words: t.words,
                draft: false,
                at_ms,
            });
            events.push(JobEvent::JobCompleted { at_ms });
        }
        None => {
            events.push(JobEvent::JobFailed { error_msg: "No speech was finalized in the live session".into(), at_ms })
        }
    }
    Ok(events)
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

    #[test]
    fn given_a_live_job_when_it_finishes_then_it_is_done_with_its_media_and_transcript() {
        let state = live_job();
        let outcome = LiveOutcome {
            media: StoredMedia { path: "media/j.wav".into(), bytes: 32_044 },
            duration_ms: 1_000,
            transcript: Some(LiveTranscript {
                path: "transcripts/j.json".into(),
                language: Language::default_language(),
                words: 1,
            }),
            interrupted: Some("interrupted".into()),
        };
        let state = apply(state.clone(), decide(&state, JobCommand::FinishLive { outcome, at_ms: 9 }).unwrap());
        assert_eq!(state.status(), Some(JobStatus::Done));
        assert_eq!(state.nr_audio_seconds, 1);
        assert_eq!(state.live_end, Some(LiveEnd { interrupted: Some("interrupted".into()) }));
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
