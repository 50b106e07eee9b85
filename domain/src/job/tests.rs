//! The job aggregate's rules, one test per behaviour, then properties over random histories.

use serde_json::json;

use super::*;
use crate::codec::VersionedEvent;
use crate::kinds::{JobType, TranscriptionType};
use crate::requests::JobParams;
use crate::speakers::{Diarization, SpeakerCount};
use crate::testing::given;

fn user(name: &str) -> UserName {
    UserName::parse(name).unwrap()
}

fn id(s: &str) -> JobId {
    JobId::parse(s).unwrap()
}

fn request(f: impl FnOnce(&mut JobParams)) -> JobRequest {
    let mut p = JobParams::default();
    f(&mut p);
    p.validate().unwrap()
}

fn with_callback(p: &mut JobParams) {
    p.callback_url = Some("https://hooks.example.org/scribe".into());
}

fn submit(request: JobRequest) -> JobCommand {
    JobCommand::Submit {
        job_id: id("j1"),
        owner: user("ann"),
        at_ms: 1_000,
        request,
        source: NewMedia::Upload { filename: "talk.wav".into(), media: media() },
    }
}

/// The history of an upload of `request` as it was recorded before the edge stored uploads
/// first: `JobSubmitted` alone, its media still to be stored (such histories remain in old logs).
fn submitted(request: JobRequest) -> Vec<JobEvent> {
    let mut events = decide(&JobState::default(), submit(request)).unwrap();
    events.truncate(1);
    events
}

fn media() -> StoredMedia {
    StoredMedia { path: "media/j1".into(), bytes: 352_078 }
}

/// A direct job's history up to (not including) its terminal event.
fn transcribed(request: JobRequest) -> Vec<JobEvent> {
    let mut h = submitted(request);
    h.extend([
        JobEvent::MediaStored { path: "media/j1".into(), bytes: 352_078, at_ms: 1_001 },
        JobEvent::MediaProbed { duration_ms: 11_000, nr_audio_seconds: 11, at_ms: 1_002 },
        JobEvent::TranscriptionStarted { attempt: 1, at_ms: 1_003 },
    ]);
    let state = JobAggregate::replay(&h);
    // Decided, so that a manual job's draft opens its task as in real life.
    let produced = decide(
        &state,
        JobCommand::RecordTranscript {
            path: "transcripts/j1.json".into(),
            detected_language: None,
            words: 22,
            at_ms: 1_004,
        },
    )
    .unwrap();
    h.extend(produced);
    h
}

fn done(request: JobRequest) -> Vec<JobEvent> {
    let mut h = transcribed(request);
    h.push(JobEvent::JobCompleted { at_ms: 1_005 });
    h
}

fn failed(request: JobRequest) -> Vec<JobEvent> {
    let mut h = submitted(request);
    h.push(JobEvent::JobFailed { error_msg: "No speech found".into(), at_ms: 1_005 });
    h
}

fn callback(outcome: CallbackOutcome, next: Option<u64>) -> JobCommand {
    JobCommand::RecordCallbackAttempt { outcome, at_ms: 2_000, next_attempt_at_ms: next }
}

// --- Submission

#[test]
fn an_upload_is_accepted_as_an_open_job() {
    let state = given::<JobAggregate>([]).when(submit(request(|_| {}))).accepted().1;
    assert_eq!(state.status(), Some(JobStatus::Open));
    // An upload carries its stored file (an upload without media cannot be expressed): the next
    // stage is the probe.
    assert_eq!(state.stage(), Stage::ProbeMedia);
    let job = state.view().unwrap();
    assert_eq!((job.filename.as_str(), job.created, job.nr_audio_seconds), ("talk.wav", 1_000, 0));
}

#[test]
fn an_upload_already_on_disk_is_recorded_with_its_submission() {
    let command = JobCommand::Submit {
        job_id: id("j1"),
        owner: user("ann"),
        at_ms: 1_000,
        request: request(|_| {}),
        source: NewMedia::Upload { filename: "../../secret/talk.wav".into(), media: media() },
    };
    let (events, state) = given::<JobAggregate>([]).when(command).accepted();
    assert_eq!(events.len(), 2);
    assert_eq!(events[1], JobEvent::MediaStored { path: "media/j1".into(), bytes: 352_078, at_ms: 1_000 });
    assert_eq!(state.stage(), Stage::ProbeMedia);
    assert_eq!(state.view().unwrap().filename, "talk.wav", "directories are dropped from file names");
}

#[test]
fn a_url_job_takes_its_file_name_from_the_url() {
    let url = crate::http_url::HttpUrl::parse_field("sourceUrl", "https://cdn.example.org/a/jfk.wav?sig=1").unwrap();
    let command = JobCommand::Submit {
        job_id: id("j1"),
        owner: user("ann"),
        at_ms: 5,
        request: request(|_| {}),
        source: NewMedia::Url { source_url: url.clone() },
    };
    let (events, _) = given::<JobAggregate>([]).when(command).accepted();
    let JobEvent::JobSubmitted(s) = &events[0] else { panic!("{events:?}") };
    assert_eq!(s.source, MediaSource::Url { source_url: url, filename: "jfk.wav".into() });
}

#[test]
fn submitting_an_existing_job_is_refused() {
    given::<JobAggregate>(submitted(request(|_| {})))
        .when(submit(request(|_| {})))
        .then_refused(JobRefusal::AlreadyExists);
}

#[test]
fn commands_on_an_unknown_job_are_refused_as_not_found() {
    given::<JobAggregate>([]).when(JobCommand::Complete { at_ms: 1 }).then_refused(JobRefusal::NotFound);
    given::<JobAggregate>([]).when(JobCommand::Delete { by: user("ann"), at_ms: 1 }).then_refused(JobRefusal::NotFound);
}

// --- The pipeline of a direct job

#[test]
fn a_direct_job_walks_the_pipeline_to_done() {
    let mut state = JobAggregate::replay(&submitted(request(|_| {})));
    let steps = [
        (JobCommand::RecordMediaStored { media: media(), at_ms: 2 }, Stage::ProbeMedia),
        (JobCommand::RecordMediaProbed { duration_ms: 11_000, fails_with: None, at_ms: 3 }, Stage::Transcribe),
        (JobCommand::StartTranscription { at_ms: 4 }, Stage::Transcribe),
        (
            JobCommand::RecordTranscript { path: "t/j1.json".into(), detected_language: None, words: 22, at_ms: 5 },
            Stage::Complete,
        ),
        (JobCommand::Complete { at_ms: 6 }, Stage::Finished),
    ];
    for (command, stage) in steps {
        let events = decide(&state, command).unwrap();
        state = events.iter().fold(state, evolve);
        assert_eq!(state.stage(), stage);
    }
    let job = state.view().unwrap();
    assert_eq!((job.status, job.nr_audio_seconds), (JobStatus::Done, 11));
    assert!(!state.transcript.unwrap().draft);
}

#[test]
fn pipeline_steps_out_of_order_are_refused() {
    let fresh = || given::<JobAggregate>(submitted(request(|_| {})));
    fresh()
        .when(JobCommand::RecordMediaProbed { duration_ms: 1, fails_with: None, at_ms: 2 })
        .then_refused(JobRefusal::OutOfOrder("media must be stored before it is probed"));
    fresh()
        .when(JobCommand::StartTranscription { at_ms: 2 })
        .then_refused(JobRefusal::OutOfOrder("media must be probed before transcription starts"));
    fresh()
        .when(JobCommand::RecordTranscript { path: "t".into(), detected_language: None, words: 1, at_ms: 2 })
        .then_refused(JobRefusal::OutOfOrder("transcription must start before a transcript is recorded"));
    fresh()
        .when(JobCommand::Complete { at_ms: 2 })
        .then_refused(JobRefusal::OutOfOrder("a final transcript must exist before the job is done"));
    fresh()
        .when(JobCommand::RecordTranslation { path: "x".into(), at_ms: 2 })
        .then_refused(JobRefusal::OutOfOrder("only translatedSubtitles jobs are translated"));
}

#[test]
fn a_repeated_pipeline_step_is_refused() {
    let history = transcribed(request(|_| {}));
    given::<JobAggregate>(history.clone())
        .when(JobCommand::RecordMediaStored { media: media(), at_ms: 9 })
        .then_refused(JobRefusal::AlreadyRecorded("the media file"));
    given::<JobAggregate>(history.clone())
        .when(JobCommand::RecordMediaProbed { duration_ms: 1, fails_with: None, at_ms: 9 })
        .then_refused(JobRefusal::AlreadyRecorded("the media duration"));
    given::<JobAggregate>(history.clone())
        .when(JobCommand::StartTranscription { at_ms: 9 })
        .then_refused(JobRefusal::AlreadyRecorded("the transcript"));
    given::<JobAggregate>(history)
        .when(JobCommand::RecordTranscript { path: "t".into(), detected_language: None, words: 1, at_ms: 9 })
        .then_refused(JobRefusal::AlreadyRecorded("the transcript"));
}

#[test]
fn transcription_restarts_after_a_crash_with_the_next_attempt_number() {
    let mut history = transcribed(request(|_| {}));
    history.pop(); // the crash came before the transcript
    given::<JobAggregate>(history)
        .when(JobCommand::StartTranscription { at_ms: 9 })
        .then([JobEvent::TranscriptionStarted { attempt: 2, at_ms: 9 }]);
}

#[test]
fn nr_audio_seconds_is_the_duration_rounded_to_whole_seconds() {
    assert_eq!(nr_audio_seconds(0), 0);
    assert_eq!(nr_audio_seconds(11_000), 11);
    assert_eq!(nr_audio_seconds(11_499), 11);
    assert_eq!(nr_audio_seconds(11_500), 12);
    assert_eq!(nr_audio_seconds(u64::MAX), u64::MAX / 1000);
}

#[test]
fn an_auto_job_shows_the_detected_language() {
    let mut history = transcribed(request(|p| p.language = Some("auto".into())));
    history.pop();
    let nl = Language::parse("nl").unwrap();
    let state = given::<JobAggregate>(history)
        .when(JobCommand::RecordTranscript { path: "t".into(), detected_language: Some(nl), words: 3, at_ms: 9 })
        .accepted()
        .1;
    assert_eq!(state.view().unwrap().language, nl);
    assert!(state.submission.unwrap().language.is_auto(), "the request is kept as it was");
}

#[test]
fn a_detected_language_does_not_override_an_explicit_one() {
    let mut history = transcribed(request(|p| p.language = Some("de-ch".into())));
    history.pop();
    let state = given::<JobAggregate>(history)
        .when(JobCommand::RecordTranscript {
            path: "t".into(),
            detected_language: Some(Language::parse("de").unwrap()),
            words: 3,
            at_ms: 9,
        })
        .accepted()
        .1;
    assert_eq!(state.view().unwrap().language.code(), "de-ch");
}

// --- Manual jobs and translations

#[test]
fn a_manual_job_keeps_the_machine_transcript_as_a_draft_and_stays_open() {
    let perfect = request(|p| p.job_type = Some("perfect".into()));
    let state = JobAggregate::replay(&transcribed(perfect.clone()));
    assert!(state.transcript.as_ref().unwrap().draft);
    assert_eq!((state.status(), state.stage()), (Some(JobStatus::Open), Stage::HumanWork));
    given::<JobAggregate>(transcribed(perfect))
        .when(JobCommand::Complete { at_ms: 9 })
        .then_refused(JobRefusal::OutOfOrder("a final transcript must exist before the job is done"));
}

#[test]
fn a_direct_translated_subtitles_job_is_done_only_once_translated() {
    let r = request(|p| {
        p.transcription_type = Some("translatedSubtitles".into());
        p.target_language = Some("sv".into());
    });
    let history = transcribed(r);
    assert_eq!(JobAggregate::replay(&history).stage(), Stage::Translate);
    given::<JobAggregate>(history.clone())
        .when(JobCommand::Complete { at_ms: 9 })
        .then_refused(JobRefusal::OutOfOrder("translated subtitles must exist before the job is done"));
    let state = given::<JobAggregate>(history)
        .when(JobCommand::RecordTranslation { path: "tr/j1.json".into(), at_ms: 9 })
        .accepted()
        .1;
    assert_eq!(state.stage(), Stage::Complete);
    assert_eq!(state.translation.as_ref().unwrap().target_language.code(), "sv");
}

fn captions_source(f: impl FnOnce(&mut SourceJobFacts)) -> SourceJobFacts {
    let mut facts = SourceJobFacts {
        job_id: id("src"),
        owner: user("ann"),
        job_type: JobType::Perfect,
        transcription_type: TranscriptionType::Captions,
        status: JobStatus::Done,
        deleted: false,
        language: Language::parse("en").unwrap(),
        number_of_speakers: 2,
        filename: "talk.mp4".into(),
        nr_audio_seconds: 61,
        media_path: Some("media/src/talk.mp4".into()),
        document_path: Some("transcripts/src.json".into()),
        glossary_id: None,
    };
    f(&mut facts);
    facts
}

fn request_translation(source: SourceJobFacts) -> JobCommand {
    let params = crate::requests::TranslationParams {
        source_job_id: Some("src".into()),
        target_language: Some("fr-ca".into()),
        notes: Some("Use formal vous.".into()),
        ..Default::default()
    };
    JobCommand::RequestTranslation {
        job_id: id("j2"),
        owner: user("ann"),
        at_ms: 7,
        request: params.validate().unwrap(),
        source,
    }
}

#[test]
fn a_translation_of_a_manual_captions_job_is_busy() {
    let state = given::<JobAggregate>([]).when(request_translation(captions_source(|_| {}))).accepted().1;
    assert_eq!(state.stage(), Stage::HumanWork);
    let json = serde_json::to_value(state.view().unwrap()).unwrap();
    assert_eq!(
        json,
        json!({
            "jobId": "j2", "created": 7, "language": "en", "status": "BUSY", "nrAudioSeconds": 61,
            "transcriptionType": "translatedSubtitles", "filename": "talk.mp4", "jobType": "perfect",
            "notes": "Use formal vous.", "sourceJobId": "src", "targetLanguage": "fr-ca"
        })
    );
}

#[test]
fn a_busy_translation_is_done_once_the_translation_exists() {
    let history = decide(&JobState::default(), request_translation(captions_source(|_| {}))).unwrap();
    given::<JobAggregate>(history.clone())
        .when(JobCommand::Complete { at_ms: 9 })
        .then_refused(JobRefusal::OutOfOrder("translated subtitles must exist before the job is done"));
    given::<JobAggregate>(history.clone())
        .when(JobCommand::RecordMediaStored { media: media(), at_ms: 9 })
        .then_refused(JobRefusal::OutOfOrder("a translation of an existing job has no media of its own"));
    let (_, state) =
        given::<JobAggregate>(history).when(JobCommand::RecordTranslation { path: "tr".into(), at_ms: 9 }).accepted();
    let state = decide(&state, JobCommand::Complete { at_ms: 10 }).unwrap().iter().fold(state, evolve);
    assert_eq!(state.status(), Some(JobStatus::Done));
}

#[test]
fn translations_are_refused_for_ineligible_sources() {
    let refused = |facts: SourceJobFacts, refusal: JobRefusal| {
        given::<JobAggregate>([]).when(request_translation(facts)).then_refused(refusal);
    };
    refused(captions_source(|f| f.owner = user("bob")), JobRefusal::Forbidden);
    refused(captions_source(|f| f.deleted = true), JobRefusal::Deleted);
    refused(
        captions_source(|f| f.job_type = JobType::Direct),
        JobRefusal::SourceNotEligible(
            "sourceJobId: translated subtitles of automatic (direct) jobs must be requested at submission \
             with transcriptionType=translatedSubtitles"
                .into(),
        ),
    );
    refused(
        captions_source(|f| f.transcription_type = TranscriptionType::Transcription),
        JobRefusal::SourceNotEligible(
            "sourceJobId: translated subtitles can be requested only for captions jobs".into(),
        ),
    );
    refused(captions_source(|f| f.status = JobStatus::Error), JobRefusal::SourceNotDone(JobStatus::Error));
    refused(captions_source(|f| f.status = JobStatus::Open), JobRefusal::SourceNotDone(JobStatus::Open));
}

#[test]
fn source_facts_describe_a_job_for_translation_requests() {
    let state = JobAggregate::replay(&done(request(|p| {
        p.job_type = Some("perfect".into());
        p.transcription_type = Some("captions".into());
    })));
    let facts = state.source_facts().unwrap();
    assert_eq!(
        (facts.job_type, facts.transcription_type, facts.nr_audio_seconds),
        (JobType::Perfect, TranscriptionType::Captions, 11)
    );
}

// --- Terminal states

#[test]
fn a_failure_ends_the_job_in_error_with_its_message() {
    let state = given::<JobAggregate>(submitted(request(|_| {})))
        .when(JobCommand::Fail { error_msg: "No speech found".into(), at_ms: 5 })
        .then([JobEvent::JobFailed { error_msg: "No speech found".into(), at_ms: 5 }]);
    assert_eq!((state.status(), state.error_msg.as_deref()), (Some(JobStatus::Error), Some("No speech found")));
}

#[test]
fn a_failure_without_a_message_gets_a_generic_one() {
    given::<JobAggregate>(submitted(request(|_| {})))
        .when(JobCommand::Fail { error_msg: "  ".into(), at_ms: 5 })
        .then([JobEvent::JobFailed { error_msg: "Processing failed for an unknown reason".into(), at_ms: 5 }]);
}

#[test]
fn a_second_terminal_event_is_refused() {
    given::<JobAggregate>(done(request(|_| {})))
        .when(JobCommand::Fail { error_msg: "late".into(), at_ms: 9 })
        .then_refused(JobRefusal::Finished(JobStatus::Done));
    given::<JobAggregate>(done(request(|_| {})))
        .when(JobCommand::Complete { at_ms: 9 })
        .then_refused(JobRefusal::Finished(JobStatus::Done));
    given::<JobAggregate>(failed(request(|_| {})))
        .when(JobCommand::Complete { at_ms: 9 })
        .then_refused(JobRefusal::Finished(JobStatus::Error));
}

#[test]
fn pipeline_work_after_the_end_is_refused() {
    given::<JobAggregate>(failed(request(|_| {})))
        .when(JobCommand::RecordMediaStored { media: media(), at_ms: 9 })
        .then_refused(JobRefusal::Finished(JobStatus::Error));
}

// --- Callbacks

#[test]
fn a_2xx_answer_delivers_the_callback() {
    let state = given::<JobAggregate>(done(request(with_callback)))
        .when(callback(CallbackOutcome::Status(204), Some(3_000)))
        .then([JobEvent::CallbackDelivered { attempt: 1, status_code: 204, at_ms: 2_000 }]);
    assert!(state.callback.delivered);
    assert_eq!(state.stage(), Stage::Finished);
}

#[test]
fn a_failed_attempt_schedules_the_next_one() {
    let state = given::<JobAggregate>(done(request(with_callback)))
        .when(callback(CallbackOutcome::Status(500), Some(30_000)))
        .then([JobEvent::CallbackAttempted {
            attempt: 1,
            outcome: CallbackOutcome::Status(500),
            at_ms: 2_000,
            next_attempt_at_ms: Some(30_000),
        }]);
    assert_eq!(state.stage(), Stage::DeliverCallback);
    assert_eq!(state.callback.next_attempt_at_ms, Some(30_000));
}

#[test]
fn a_410_answer_stops_the_retries() {
    let state = given::<JobAggregate>(failed(request(with_callback)))
        .when(callback(CallbackOutcome::Status(410), Some(30_000)))
        .then([
            JobEvent::CallbackAttempted {
                attempt: 1,
                outcome: CallbackOutcome::Status(410),
                at_ms: 2_000,
                next_attempt_at_ms: None,
            },
            JobEvent::CallbackAbandoned { reason: "the receiver answered 410 Gone".into(), at_ms: 2_000 },
        ]);
    assert_eq!(state.stage(), Stage::Finished);
}

#[test]
fn the_last_scheduled_attempt_abandons_the_callback() {
    let mut history = done(request(with_callback));
    history.push(JobEvent::CallbackAttempted {
        attempt: 1,
        outcome: CallbackOutcome::Error("connection refused".into()),
        at_ms: 1_500,
        next_attempt_at_ms: Some(2_000),
    });
    given::<JobAggregate>(history).when(callback(CallbackOutcome::Error("timed out after 10 s".into()), None)).then([
        JobEvent::CallbackAttempted {
            attempt: 2,
            outcome: CallbackOutcome::Error("timed out after 10 s".into()),
            at_ms: 2_000,
            next_attempt_at_ms: None,
        },
        JobEvent::CallbackAbandoned {
            reason: "gave up after 2 attempts; the last one got: timed out after 10 s".into(),
            at_ms: 2_000,
        },
    ]);
}

#[test]
fn a_settled_callback_takes_no_more_attempts() {
    let mut history = done(request(with_callback));
    history.push(JobEvent::CallbackDelivered { attempt: 1, status_code: 200, at_ms: 1_500 });
    given::<JobAggregate>(history)
        .when(callback(CallbackOutcome::Status(200), None))
        .then_refused(JobRefusal::CallbackSettled);
}

#[test]
fn callbacks_wait_for_the_end_and_need_a_url() {
    given::<JobAggregate>(submitted(request(with_callback)))
        .when(callback(CallbackOutcome::Status(200), None))
        .then_refused(JobRefusal::NotFinished);
    given::<JobAggregate>(done(request(|_| {})))
        .when(callback(CallbackOutcome::Status(200), None))
        .then_refused(JobRefusal::NoCallback);
}

// --- Deletion

#[test]
fn the_owner_deletes_a_job_at_any_stage() {
    for history in [submitted(request(|_| {})), transcribed(request(|_| {})), done(request(with_callback))] {
        let state = given::<JobAggregate>(history)
            .when(JobCommand::Delete { by: user("ann"), at_ms: 9 })
            .then([JobEvent::JobDeleted { by: user("ann"), at_ms: 9 }]);
        assert_eq!(state.stage(), Stage::Deleted);
    }
}

#[test]
fn another_user_cannot_delete_a_job() {
    given::<JobAggregate>(submitted(request(|_| {})))
        .when(JobCommand::Delete { by: user("bob"), at_ms: 9 })
        .then_refused(JobRefusal::Forbidden);
}

#[test]
fn a_deleted_job_refuses_everything_and_a_second_delete_is_gone() {
    let mut history = done(request(with_callback));
    history.push(JobEvent::JobDeleted { by: user("ann"), at_ms: 9 });
    given::<JobAggregate>(history.clone())
        .when(JobCommand::Delete { by: user("ann"), at_ms: 10 })
        .then_refused(JobRefusal::Deleted);
    given::<JobAggregate>(history.clone())
        .when(callback(CallbackOutcome::Status(200), None))
        .then_refused(JobRefusal::Deleted);
    given::<JobAggregate>(history.clone())
        .when(JobCommand::Delete { by: user("bob"), at_ms: 10 })
        .then_refused(JobRefusal::Forbidden);
}

// --- What clients see

#[test]
fn the_job_object_has_the_spec_shape() {
    let state = JobAggregate::replay(&done(request(|_| {})));
    let json = serde_json::to_value(JobStatusResponse { job_status: state.view().unwrap() }).unwrap();
    assert_eq!(
        json,
        json!({"jobStatus": {
            "jobId": "j1", "created": 1000, "language": "en", "status": "DONE", "nrAudioSeconds": 11,
            "transcriptionType": "transcription", "filename": "talk.wav", "jobType": "direct", "notes": null,
            // Beyond the spec, for the read models: when it finished (the API shows `expiresAt`).
            "finishedMs": 1005
        }})
    );
}

#[test]
fn job_options_appear_only_when_requested() {
    let state = JobAggregate::replay(&submitted(request(|p| p.transcription_style = Some("verbatim".into()))));
    let json = serde_json::to_value(state.view().unwrap()).unwrap();
    assert_eq!(json["jobOptions"], json!({"transcriptionStyle": "verbatim"}));
}

#[test]
fn the_callback_payload_has_no_notes_and_carries_error_msg_on_error() {
    let state = JobAggregate::replay(&failed(request(with_callback)));
    assert_eq!(
        serde_json::to_value(state.callback_payload().unwrap()).unwrap(),
        json!({
            "jobId": "j1", "created": 1000, "language": "en", "status": "ERROR", "nrAudioSeconds": 0,
            "transcriptionType": "transcription", "filename": "talk.wav", "jobType": "direct",
            "errorMsg": "No speech found"
        })
    );
    let done = JobAggregate::replay(&done(request(with_callback)));
    let json = serde_json::to_value(done.callback_payload().unwrap()).unwrap();
    assert_eq!(json["status"], "DONE");
    assert!(json.get("errorMsg").is_none() && json.get("notes").is_none());
}

#[test]
fn there_is_no_callback_payload_before_the_end_or_without_a_url() {
    assert!(JobAggregate::replay(&submitted(request(with_callback))).callback_payload().is_none());
    assert!(JobAggregate::replay(&done(request(|_| {}))).callback_payload().is_none());
}

#[test]
fn the_webhook_id_is_stable_per_job_and_status() {
    assert_eq!(callback_message_id(&id("j1"), JobStatus::Done), "msg_j1_DONE");
}

// --- Stored form

#[test]
fn events_are_stored_with_type_and_version() {
    let stored = JobEvent::JobCompleted { at_ms: 5 }.encode();
    assert_eq!(stored, json!({"type": "JobCompleted", "v": 1, "at_ms": 5}));
    let submitted = submitted(request(with_callback)).remove(0).encode();
    assert_eq!((submitted["type"].as_str(), submitted["v"].as_u64()), (Some("JobSubmitted"), Some(1)));
    assert_eq!(submitted["source"], json!({"kind": "upload", "filename": "talk.wav"}));
}

#[test]
fn the_speakers_asked_for_are_stored_and_old_submissions_keep_the_bound() {
    // Given a submission that named its number of speakers, and one that left it out,
    let given = submitted(request(|p| p.number_of_speakers = Some(3))).remove(0);
    let left_out = submitted(request(|_| {})).remove(0);
    let JobEvent::JobSubmitted(s) = &given else { panic!("{given:?}") };
    assert_eq!(s.speaker_count(), SpeakerCount::Exactly(3));
    let JobEvent::JobSubmitted(s) = &left_out else { panic!("{left_out:?}") };
    assert_eq!(s.speaker_count(), SpeakerCount::AtMost(2));
    // when stored and read back, then the choice survives;
    let stored = given.encode();
    assert_eq!(stored["number_of_speakers_given"], true);
    assert_eq!(JobEvent::decode(&stored).unwrap(), given);
    // and a submission stored before the choice was recorded reads as the default's bound.
    let mut old = left_out.encode();
    old.as_object_mut().unwrap().remove("number_of_speakers_given");
    old["number_of_speakers"] = json!(3);
    let JobEvent::JobSubmitted(s) = JobEvent::decode(&old).unwrap() else { panic!() };
    assert_eq!(s.speaker_count(), SpeakerCount::AtMost(3));
}

#[test]
fn speaker_channels_are_stored_as_given_and_the_operator_default_fills_a_gap() {
    // Given a submission that asked for channels as speakers, and one that left it out,
    let asked = submitted(request(|p| p.speaker_channels = Some(true))).remove(0);
    let left_out = submitted(request(|_| {})).remove(0);
    let JobEvent::JobSubmitted(s) = &asked else { panic!("{asked:?}") };
    assert_eq!(s.speaker_channels, Some(true));
    assert_eq!(s.diarization(false), Diarization::ByChannel);
    // when stored and read back, then the choice survives;
    let stored = asked.encode();
    assert_eq!(stored["speaker_channels"], true);
    assert_eq!(JobEvent::decode(&stored).unwrap(), asked);
    // the one that left it out stores nothing (old events read alike) and follows the operator;
    let stored = left_out.encode();
    assert!(stored.get("speaker_channels").is_none(), "{stored}");
    let JobEvent::JobSubmitted(s) = JobEvent::decode(&stored).unwrap() else { panic!() };
    assert_eq!(s.speaker_channels, None);
    assert_eq!(s.diarization(true), Diarization::ByChannel);
    assert_eq!(s.diarization(false), Diarization::ByVoice(SpeakerCount::AtMost(2)));
    // and a job that said false, or named its speakers, is diarized by voice whatever the operator says.
    let no = submitted(request(|p| p.speaker_channels = Some(false))).remove(0);
    let JobEvent::JobSubmitted(s) = &no else { panic!() };
    assert_eq!(s.diarization(true), Diarization::ByVoice(SpeakerCount::AtMost(2)));
    let named = submitted(request(|p| p.number_of_speakers = Some(3))).remove(0);
    let JobEvent::JobSubmitted(s) = &named else { panic!() };
    assert_eq!(s.diarization(true), Diarization::ByVoice(SpeakerCount::Exactly(3)));
}

#[test]
fn an_unknown_version_is_an_error_naming_type_and_version() {
    let err = JobEvent::decode(&json!({"type": "JobCompleted", "v": 7, "at_ms": 5})).unwrap_err();
    assert!(
        matches!(&err, crate::DecodeError::UnknownVersion { event_type, version: 7 } if event_type == "JobCompleted")
    );
    assert!(err.to_string().contains("JobCompleted has version 7"));
    assert!(matches!(
        JobEvent::decode(&json!({"type": "JobCompleted", "at_ms": 5})),
        Err(crate::DecodeError::MissingHeader)
    ));
    assert!(matches!(
        JobEvent::decode(&json!({"type": "JobCompleted", "v": 1})),
        Err(crate::DecodeError::Invalid { .. })
    ));
    assert!(matches!(JobEvent::decode(&json!({"type": "Nope", "v": 1})), Err(crate::DecodeError::Invalid { .. })));
}

#[test]
fn given_stored_media_when_probed_and_refused_then_the_length_and_the_failure_are_one_decision() {
    let mut history = submitted(request(|_| {}));
    history.push(JobEvent::MediaStored { path: "media/j1".into(), bytes: 3_205_222, at_ms: 1_001 });
    let refusal = "The media is 1 min 40 s long; this server accepts media of at most 1 minute";
    let state = given::<JobAggregate>(history)
        .when(JobCommand::RecordMediaProbed { duration_ms: 100_000, fails_with: Some(refusal.into()), at_ms: 1_002 })
        .then([
            JobEvent::MediaProbed { duration_ms: 100_000, nr_audio_seconds: 100, at_ms: 1_002 },
            JobEvent::JobFailed { error_msg: refusal.into(), at_ms: 1_002 },
        ]);
    assert_eq!(state.status(), Some(JobStatus::Error));
    assert_eq!(state.stage(), Stage::Finished, "no stage starts on refused media");
    let view = state.view().unwrap();
    assert_eq!(
        (view.nr_audio_seconds, view.error_msg.as_deref()),
        (100, Some(refusal)),
        "the job shows the probed length"
    );
}

/// An upload of `duration_ms` stored and probed by the edge, submitted at 1 000 ms; `awaited_on`
/// names the node whose request waits for its answer.
fn stored_upload(duration_ms: u64, awaited_on: Option<&str>) -> JobCommand {
    JobCommand::SubmitUpload {
        job_id: id("j1"),
        owner: user("ann"),
        at_ms: 1_000,
        request: request(|_| {}),
        filename: "talk.wav".into(),
        media: media(),
        duration_ms,
        awaited_on: awaited_on.map(str::to_owned),
    }
}

#[test]
fn an_upload_is_recorded_with_its_file_and_duration_in_one_decision() {
    let cmd = stored_upload(61_200, None);
    let events = decide(&JobState::default(), cmd.clone()).unwrap();
    let types: Vec<_> = events.iter().map(|e| e.event_type()).collect();
    assert_eq!(types, ["JobSubmitted", "MediaStored", "MediaProbed"]);
    let state = events.iter().fold(JobState::default(), evolve);
    assert_eq!(state.duration_ms, Some(61_200));
    assert_eq!(state.nr_audio_seconds, 61);
    assert_eq!(state.stage(), Stage::Transcribe, "nothing is left to store or probe");
    assert_eq!(decide(&state, cmd), Err(JobRefusal::AlreadyExists));
}

mod awaited;
mod claims;
mod edits;
mod progress;
mod properties;
mod retention;
mod tasks;
