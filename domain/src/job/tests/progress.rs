//! The progress of a running transcription: recorded in whole 10 % steps of the running
//! attempt only, never backwards, and shown on the Job object until the transcript exists.

use super::*;

/// A direct job probed at 100 s of media whose transcription attempt 1 started at 10 000 ms.
fn started() -> Vec<JobEvent> {
    let mut h = submitted(request(|_| {}));
    h.extend([
        JobEvent::MediaStored { path: "media/j1".into(), bytes: 352_078, at_ms: 1_001 },
        JobEvent::MediaProbed { duration_ms: 100_000, nr_audio_seconds: 100, at_ms: 1_002 },
        JobEvent::TranscriptionStarted { attempt: 1, at_ms: 10_000 },
    ]);
    h
}

fn progress(attempt: u32, done_ms: u64, at_ms: u64) -> JobCommand {
    JobCommand::RecordTranscriptionProgress { attempt, done_ms, total_ms: 100_000, at_ms }
}

fn progressed(attempt: u32, done_ms: u64, at_ms: u64) -> JobEvent {
    JobEvent::TranscriptionProgressed { attempt, done_ms, total_ms: 100_000, at_ms }
}

#[test]
fn given_a_started_transcription_then_the_job_shows_zero_percent_without_an_estimate() {
    let state = JobAggregate::replay(&started());
    assert_eq!(state.view().unwrap().progress, Some(JobProgress { percent: 0, eta_seconds: None }));
    let queued = JobAggregate::replay(&started()[..3]);
    assert_eq!(queued.view().unwrap().progress, None, "a job waiting for recognition has no progress yet");
}

#[test]
fn given_a_running_attempt_when_a_new_step_is_reached_then_it_is_recorded_with_an_estimate() {
    // 42 % after 21 s: 29 s for the 58 % left.
    let state =
        given::<JobAggregate>(started()).when(progress(1, 42_000, 31_000)).then([progressed(1, 42_000, 31_000)]);
    assert_eq!(state.view().unwrap().progress, Some(JobProgress { percent: 42, eta_seconds: Some(29) }));
}

#[test]
fn given_a_recorded_step_when_progress_stays_in_it_or_goes_back_then_it_is_refused() {
    let mut history = started();
    history.push(progressed(1, 42_000, 31_000));
    let refusal = JobRefusal::AlreadyRecorded("this step of the transcription's progress");
    given::<JobAggregate>(history.clone()).when(progress(1, 49_000, 32_000)).then_refused(refusal.clone());
    given::<JobAggregate>(history.clone()).when(progress(1, 30_000, 32_000)).then_refused(refusal.clone());
    given::<JobAggregate>(started()).when(progress(1, 9_999, 11_000)).then_refused(refusal);
    given::<JobAggregate>(history).when(progress(1, 50_000, 33_000)).then([progressed(1, 50_000, 33_000)]);
}

#[test]
fn given_a_running_attempt_then_at_most_ten_steps_are_recorded() {
    let mut history = started();
    let mut recorded = 0;
    for done_ms in (0..=100_000).step_by(500) {
        let state = JobAggregate::replay(&history);
        if let Ok(events) = decide(&state, progress(1, done_ms, 10_000 + done_ms)) {
            recorded += events.len();
            history.extend(events);
        }
    }
    assert_eq!(recorded, 10);
    let state = JobAggregate::replay(&history);
    assert_eq!(state.view().unwrap().progress, Some(JobProgress { percent: 100, eta_seconds: Some(0) }));
}

#[test]
fn progress_past_the_length_counts_as_the_whole_media() {
    given::<JobAggregate>(started())
        .when(JobCommand::RecordTranscriptionProgress {
            attempt: 1,
            done_ms: 100_400,
            total_ms: 100_000,
            at_ms: 20_000,
        })
        .then([progressed(1, 100_000, 20_000)]);
}

#[test]
fn given_a_restarted_transcription_when_the_earlier_attempt_reports_then_it_is_refused_and_progress_starts_over() {
    let mut history = started();
    history.extend([progressed(1, 60_000, 40_000), JobEvent::TranscriptionStarted { attempt: 2, at_ms: 50_000 }]);
    let state = JobAggregate::replay(&history);
    assert_eq!(state.view().unwrap().progress, Some(JobProgress { percent: 0, eta_seconds: None }));
    given::<JobAggregate>(history.clone())
        .when(progress(1, 70_000, 51_000))
        .then_refused(JobRefusal::OutOfOrder("this progress belongs to an earlier transcription attempt"));
    given::<JobAggregate>(history).when(progress(2, 10_000, 55_000)).then([progressed(2, 10_000, 55_000)]);
}

#[test]
fn given_an_ended_or_deleted_job_then_progress_is_refused_and_not_shown() {
    let mut history = started();
    history.push(progressed(1, 50_000, 30_000));
    let mut done = history.clone();
    done.extend([
        JobEvent::TranscriptProduced {
            path: "transcripts/j1.json".into(),
            language: Language::parse("en").unwrap(),
            words: 22,
            draft: false,
            at_ms: 60_000,
        },
        JobEvent::JobCompleted { at_ms: 60_001 },
    ]);
    assert_eq!(JobAggregate::replay(&done).view().unwrap().progress, None);
    given::<JobAggregate>(done.clone())
        .when(progress(1, 60_000, 61_000))
        .then_refused(JobRefusal::Finished(JobStatus::Done));
    let transcribed = &done[..done.len() - 1];
    assert_eq!(JobAggregate::replay(transcribed).view().unwrap().progress, None, "recognition is over");
    given::<JobAggregate>(transcribed.to_vec())
        .when(progress(1, 60_000, 61_000))
        .then_refused(JobRefusal::OutOfOrder("no transcription of this job is running"));
    let mut failed = history.clone();
    failed.push(JobEvent::JobFailed { error_msg: "No speech found".into(), at_ms: 31_000 });
    assert_eq!(JobAggregate::replay(&failed).view().unwrap().progress, None);
    let mut deleted = history;
    deleted.push(JobEvent::JobDeleted { by: user("ann"), at_ms: 31_000 });
    assert_eq!(JobAggregate::replay(&deleted).progress(), None);
    given::<JobAggregate>(deleted).when(progress(1, 60_000, 32_000)).then_refused(JobRefusal::Deleted);
}

#[test]
fn a_progress_event_is_stored_under_its_name_and_read_back() {
    let event = progressed(1, 42_000, 31_000);
    let stored = event.encode();
    assert_eq!(event.event_type(), "TranscriptionProgressed");
    assert_eq!(
        stored,
        json!({"type": "TranscriptionProgressed", "v": 1, "attempt": 1, "done_ms": 42_000, "total_ms": 100_000, "at_ms": 31_000})
    );
    assert_eq!(JobEvent::decode(&stored).unwrap(), event);
    let job = JobAggregate::replay(&[started(), vec![event]].concat()).view().unwrap();
    assert_eq!(serde_json::to_value(job.progress).unwrap(), json!({"percent": 42, "etaSeconds": 29}));
}
