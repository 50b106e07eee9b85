//! Properties over random command sequences: whatever a job is asked, in whatever order, the
//! accepted history replays to the same state (also after a trip through the stored JSON form),
//! ends at most once, and after its end or its deletion accepts only what it should.

use proptest::prelude::*;

use super::*;

/// One step a client, a reactor or the callback actor might ask for.
#[derive(Debug, Clone)]
enum Op {
    Submit,
    StoreMedia,
    Probe(u64),
    Start,
    Transcript(bool),
    Translate,
    Complete,
    Fail,
    Callback(Option<u16>, bool),
    Delete(bool),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        1 => Just(Op::Submit),
        2 => Just(Op::StoreMedia),
        2 => (0u64..4_000_000).prop_map(Op::Probe),
        2 => Just(Op::Start),
        2 => any::<bool>().prop_map(Op::Transcript),
        2 => Just(Op::Translate),
        3 => Just(Op::Complete),
        1 => Just(Op::Fail),
        3 => (prop_oneof![Just(None), Just(Some(200)), Just(Some(204)), Just(Some(410)), Just(Some(500)), Just(Some(302))], any::<bool>())
            .prop_map(|(code, next)| Op::Callback(code, next)),
        1 => any::<bool>().prop_map(Op::Delete),
    ]
}

/// The first command: an upload or URL job of any kind, or a translation request.
#[derive(Debug, Clone)]
struct Start {
    perfect: bool,
    kind: u8,
    callback: bool,
    translation_request: bool,
    on_disk: bool,
}

fn start() -> impl Strategy<Value = Start> {
    (any::<bool>(), 0u8..3, any::<bool>(), prop::bool::weighted(0.15), any::<bool>()).prop_map(
        |(perfect, kind, callback, translation_request, on_disk)| Start {
            perfect,
            kind,
            callback,
            translation_request,
            on_disk,
        },
    )
}

fn first_command(s: &Start) -> JobCommand {
    if s.translation_request {
        let mut command = request_translation(captions_source(|_| {}));
        if let JobCommand::RequestTranslation { request, .. } = &mut command {
            request.callback_url =
                s.callback.then(|| crate::http_url::HttpUrl::parse_field("callbackUrl", "https://h/cb").unwrap());
        }
        return command;
    }
    let r = request(|p| {
        p.job_type = Some(if s.perfect { "perfect" } else { "direct" }.into());
        p.transcription_type = Some(["transcription", "captions", "translatedSubtitles"][s.kind as usize].into());
        if s.kind == 2 {
            p.target_language = Some("en".into());
        }
        if s.callback {
            with_callback(p);
        }
    });
    match submit(r) {
        // The media is stored with an upload; a job that waits for its media is a URL job.
        JobCommand::Submit { job_id, owner, at_ms, request, .. } if !s.on_disk => {
            let source_url = crate::http_url::HttpUrl::parse_field("sourceUrl", "https://cdn.example.org/talk.wav")
                .expect("a valid URL");
            JobCommand::Submit { job_id, owner, at_ms, request, source: NewMedia::Url { source_url } }
        }
        other => other,
    }
}

fn command(op: &Op, at_ms: u64) -> JobCommand {
    match op {
        Op::Submit => submit(request(|_| {})),
        Op::StoreMedia => JobCommand::RecordMediaStored { media: media(), at_ms },
        Op::Probe(ms) => JobCommand::RecordMediaProbed { duration_ms: *ms, fails_with: None, at_ms },
        Op::Start => JobCommand::StartTranscription { at_ms },
        Op::Transcript(detect) => JobCommand::RecordTranscript {
            path: "t.json".into(),
            detected_language: detect.then(|| Language::parse("it").unwrap()),
            words: 5,
            at_ms,
        },
        Op::Translate => JobCommand::RecordTranslation { path: "tr.json".into(), at_ms },
        Op::Complete => JobCommand::Complete { at_ms },
        Op::Fail => JobCommand::Fail { error_msg: "No speech found".into(), at_ms },
        Op::Callback(code, next) => JobCommand::RecordCallbackAttempt {
            outcome: code.map_or(CallbackOutcome::Error("connection refused".into()), CallbackOutcome::Status),
            at_ms,
            next_attempt_at_ms: next.then_some(at_ms + 30_000),
        },
        Op::Delete(owner) => JobCommand::Delete { by: user(if *owner { "ann" } else { "bob" }), at_ms },
    }
}

fn is_callback_event(e: &JobEvent) -> bool {
    matches!(
        e,
        JobEvent::CallbackAttempted { .. } | JobEvent::CallbackDelivered { .. } | JobEvent::CallbackAbandoned { .. }
    )
}

fn is_terminal_event(e: &JobEvent) -> bool {
    matches!(e, JobEvent::JobCompleted { .. } | JobEvent::JobFailed { .. })
}

/// Runs the commands, checking each accepted step against the state before it; returns the
/// accepted history and the state folded step by step.
fn run(start: &Start, ops: &[Op]) -> Result<(Vec<JobEvent>, JobState), TestCaseError> {
    let mut state = JobState::default();
    let mut history = Vec::new();
    let commands = std::iter::once(first_command(start))
        .chain(ops.iter().enumerate().map(|(i, op)| command(op, 2_000 + i as u64)));
    for command in commands {
        let Ok(events) = decide(&state, command.clone()) else {
            continue;
        };
        prop_assert!(!events.is_empty(), "an accepted command records something: {command:?}");
        let before = state.status();
        if state.deleted {
            prop_assert!(false, "a deleted job accepted {command:?}");
        }
        if before.is_some_and(JobStatus::is_terminal) {
            prop_assert!(
                events.iter().all(|e| is_callback_event(e) || matches!(e, JobEvent::JobDeleted { .. })),
                "after the end only callbacks and deletion: {events:?}"
            );
        }
        if events.iter().any(is_callback_event) {
            prop_assert!(before.is_some_and(JobStatus::is_terminal), "callbacks only after the end");
            prop_assert!(!state.callback.is_settled(), "no attempt after the callback settled");
        }
        for event in &events {
            state = evolve(state, event);
        }
        if let Some(status) = before.filter(|s| s.is_terminal()) {
            prop_assert_eq!(state.status(), Some(status), "a terminal status never changes");
        }
        history.extend(events);
    }
    Ok((history, state))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn an_accepted_history_replays_to_the_same_state_through_its_stored_form(start in start(), ops in prop::collection::vec(op(), 0..40)) {
        let (history, stepwise) = run(&start, &ops)?;
        let stored: Vec<serde_json::Value> = history.iter().map(VersionedEvent::encode).collect();
        let text = serde_json::to_string(&stored).unwrap();
        let reread: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
        let decoded: Vec<JobEvent> = reread.iter().map(|v| JobEvent::decode(v).unwrap()).collect();
        prop_assert_eq!(&decoded, &history);
        prop_assert_eq!(JobAggregate::replay(&decoded), stepwise);
    }

    #[test]
    fn a_job_ends_at_most_once_and_nothing_follows_its_deletion(start in start(), ops in prop::collection::vec(op(), 0..40)) {
        let (history, state) = run(&start, &ops)?;
        prop_assert!(history.iter().filter(|e| is_terminal_event(e)).count() <= 1);
        if let Some(i) = history.iter().position(|e| matches!(e, JobEvent::JobDeleted { .. })) {
            prop_assert_eq!(i, history.len() - 1, "JobDeleted is the last event");
        }
        let settled = history.iter().filter(|e| matches!(e, JobEvent::CallbackDelivered { .. } | JobEvent::CallbackAbandoned { .. })).count();
        prop_assert!(settled <= 1, "a callback settles once");
        if state.callback.delivered {
            prop_assert!(state.callback.abandoned.is_none());
        }
        prop_assert_eq!(state.view().map(|j| j.job_id), Some(id(if start.translation_request { "j2" } else { "j1" })));
    }

    #[test]
    fn after_the_end_only_callbacks_and_deletion_are_accepted(start in start(), ops in prop::collection::vec(op(), 0..40), probe in op()) {
        let (_, state) = run(&start, &ops)?;
        if let Some(status) = state.status().filter(|s| s.is_terminal()) {
            let command = command(&probe, 99_999);
            let result = decide(&state, command.clone());
            let allowed = matches!(command, JobCommand::RecordCallbackAttempt { .. } | JobCommand::Delete { .. });
            if !allowed {
                let refused_as_finished = result == Err(JobRefusal::Finished(status))
                    || result == Err(JobRefusal::Deleted)
                    || result == Err(JobRefusal::AlreadyExists);
                prop_assert!(refused_as_finished, "{command:?} after {status}: {result:?}");
            }
        }
    }

    #[test]
    fn the_stage_is_finished_or_waiting_for_a_callback_exactly_when_the_job_ended(start in start(), ops in prop::collection::vec(op(), 0..40)) {
        let (_, state) = run(&start, &ops)?;
        let ended = state.status().is_some_and(JobStatus::is_terminal) && !state.deleted;
        prop_assert_eq!(ended, matches!(state.stage(), Stage::Finished | Stage::DeliverCallback));
    }
}
