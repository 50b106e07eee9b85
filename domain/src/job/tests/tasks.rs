//! The human work of manual jobs: given a history, when a staff member (or the lease sweeper)
//! asks something of a task, then these events, or this refusal.

use super::*;
use crate::job::task::{DAY_MS, Worker, task_id};
use crate::kinds::{Role, TaskKind};

const LEASE: u64 = 7_200_000;

fn perfect(f: impl FnOnce(&mut JobParams)) -> JobRequest {
    request(|p| {
        p.job_type = Some("perfect".into());
        f(p)
    })
}

fn worker(name: &str, role: Role, languages: &[&str]) -> Worker {
    Worker { user: user(name), role, languages: languages.iter().map(|l| (*l).to_owned()).collect() }
}

fn tina() -> Worker {
    worker("tina", Role::Transcriber, &["en"])
}

fn transcribe_id() -> String {
    task_id(&id("j1"), TaskKind::Transcribe)
}

fn translate_id() -> String {
    task_id(&id("j1"), TaskKind::Translate)
}

fn claim(task: &str, w: Worker, at_ms: u64) -> JobCommand {
    JobCommand::ClaimTask { task_id: task.into(), worker: w, lease_ms: LEASE, at_ms }
}

fn save(task: &str, by: &str, path: &str, at_ms: u64) -> JobCommand {
    JobCommand::SaveDraft { task_id: task.into(), by: user(by), path: path.into(), words: 21, lease_ms: LEASE, at_ms }
}

fn submit_task(task: &str, by: &str, at_ms: u64) -> JobCommand {
    JobCommand::SubmitTask { task_id: task.into(), by: user(by), at_ms }
}

/// A manual transcription whose draft is ready and whose task tina claimed at 2 000.
fn claimed_by_tina() -> Vec<JobEvent> {
    let mut h = transcribed(perfect(|_| {}));
    h.push(JobEvent::TaskClaimed {
        task_id: transcribe_id(),
        by: user("tina"),
        lease_until_ms: 2_000 + LEASE,
        at_ms: 2_000,
    });
    h
}

#[test]
fn given_a_manual_draft_then_a_transcribe_task_is_due_after_the_turnaround() {
    let history = transcribed(perfect(|p| p.turnaround_time = Some("TWO_DAYS".into())));
    assert_eq!(
        history.last(),
        Some(&JobEvent::TaskOpened {
            task_id: transcribe_id(),
            kind: TaskKind::Transcribe,
            deadline_ms: 1_000 + 2 * DAY_MS,
            at_ms: 1_004,
        })
    );
    let state = JobAggregate::replay(&history);
    assert_eq!(state.stage(), Stage::HumanWork);
    assert!(state.task(&transcribe_id()).unwrap().is_open());
}

#[test]
fn given_an_open_task_when_an_eligible_transcriber_claims_it_then_they_hold_a_lease() {
    given::<JobAggregate>(transcribed(perfect(|_| {}))).when(claim(&transcribe_id(), tina(), 2_000)).then([
        JobEvent::TaskClaimed {
            task_id: transcribe_id(),
            by: user("tina"),
            lease_until_ms: 2_000 + LEASE,
            at_ms: 2_000,
        },
    ]);
}

#[test]
fn given_an_open_task_when_the_wrong_role_or_language_claims_it_then_it_is_not_for_them() {
    for w in [worker("tom", Role::Translator, &[]), worker("nel", Role::Transcriber, &["nl"])] {
        let refusal = decide(&JobAggregate::replay(&transcribed(perfect(|_| {}))), claim(&transcribe_id(), w, 2_000));
        assert!(matches!(refusal, Err(JobRefusal::TaskNotForYou(_))), "{refusal:?}");
    }
}

#[test]
fn given_a_held_task_when_someone_else_claims_it_then_it_is_refused_until_the_lease_expires() {
    let other = worker("otto", Role::Transcriber, &[]);
    given::<JobAggregate>(claimed_by_tina())
        .when(claim(&transcribe_id(), other.clone(), 2_000 + LEASE - 1))
        .then_refused(JobRefusal::TaskHeldByOther { task_id: transcribe_id(), until_ms: 2_000 + LEASE });
    let at = 2_000 + LEASE;
    given::<JobAggregate>(claimed_by_tina()).when(claim(&transcribe_id(), other, at)).then([
        JobEvent::TaskReleased { task_id: transcribe_id(), by: None, expired: true, at_ms: at },
        JobEvent::TaskClaimed { task_id: transcribe_id(), by: user("otto"), lease_until_ms: at + LEASE, at_ms: at },
    ]);
}

#[test]
fn given_a_held_task_when_its_holder_claims_again_then_the_lease_is_renewed() {
    given::<JobAggregate>(claimed_by_tina()).when(claim(&transcribe_id(), tina(), 5_000)).then([
        JobEvent::TaskClaimed {
            task_id: transcribe_id(),
            by: user("tina"),
            lease_until_ms: 5_000 + LEASE,
            at_ms: 5_000,
        },
    ]);
}

#[test]
fn given_a_held_task_when_the_holder_saves_then_a_revision_is_recorded_and_the_lease_renewed() {
    let state = given::<JobAggregate>(claimed_by_tina())
        .when(save(&transcribe_id(), "tina", "media/j1/work/a.json", 3_000))
        .then([JobEvent::DraftSaved {
            task_id: transcribe_id(),
            by: user("tina"),
            revision: 1,
            path: "media/j1/work/a.json".into(),
            words: 21,
            lease_until_ms: 3_000 + LEASE,
            at_ms: 3_000,
        }]);
    let (events, _) = given::<JobAggregate>(claimed_by_tina().into_iter().chain([JobEvent::DraftSaved {
        task_id: transcribe_id(),
        by: user("tina"),
        revision: 1,
        path: "a".into(),
        words: 21,
        lease_until_ms: 3_000 + LEASE,
        at_ms: 3_000,
    }]))
    .when(save(&transcribe_id(), "tina", "b", 4_000))
    .accepted();
    assert!(matches!(events[0], JobEvent::DraftSaved { revision: 2, .. }));
    assert_eq!(state.task(&transcribe_id()).unwrap().lease.as_ref().unwrap().until_ms, 3_000 + LEASE);
}

#[test]
fn given_a_task_the_caller_does_not_hold_when_they_save_submit_or_release_then_it_is_refused() {
    let not_held = JobRefusal::TaskNotHeld(transcribe_id());
    given::<JobAggregate>(claimed_by_tina())
        .when(save(&transcribe_id(), "otto", "x", 3_000))
        .then_refused(not_held.clone());
    given::<JobAggregate>(claimed_by_tina())
        .when(submit_task(&transcribe_id(), "otto", 3_000))
        .then_refused(not_held.clone());
    given::<JobAggregate>(claimed_by_tina())
        .when(JobCommand::ReleaseTask { task_id: transcribe_id(), by: user("otto"), at_ms: 3_000 })
        .then_refused(not_held.clone());
    // A lease that ran out is not held any more, even by its former holder.
    given::<JobAggregate>(claimed_by_tina())
        .when(save(&transcribe_id(), "tina", "x", 2_000 + LEASE))
        .then_refused(not_held);
}

#[test]
fn given_an_unknown_task_then_it_is_not_found() {
    given::<JobAggregate>(transcribed(perfect(|_| {})))
        .when(claim("j1-translate", worker("tom", Role::Translator, &[]), 2_000))
        .then_refused(JobRefusal::NoSuchTask("j1-translate".into()));
}

#[test]
fn given_a_held_task_when_released_then_it_returns_to_the_queue_with_its_draft() {
    let mut history = claimed_by_tina();
    history.push(JobEvent::DraftSaved {
        task_id: transcribe_id(),
        by: user("tina"),
        revision: 1,
        path: "a".into(),
        words: 21,
        lease_until_ms: 3_000 + LEASE,
        at_ms: 3_000,
    });
    let state = given::<JobAggregate>(history)
        .when(JobCommand::ReleaseTask { task_id: transcribe_id(), by: user("tina"), at_ms: 4_000 })
        .then([JobEvent::TaskReleased {
            task_id: transcribe_id(),
            by: Some(user("tina")),
            expired: false,
            at_ms: 4_000,
        }]);
    let task = state.task(&transcribe_id()).unwrap();
    assert_eq!((task.lease.as_ref(), task.revision.as_ref().map(|r| r.number)), (None, Some(1)));
}

#[test]
fn given_an_expired_lease_when_the_sweeper_expires_it_then_it_is_released_and_not_before() {
    let at = 2_000 + LEASE;
    given::<JobAggregate>(claimed_by_tina())
        .when(JobCommand::ExpireLease { task_id: transcribe_id(), at_ms: at - 1 })
        .then_refused(JobRefusal::OutOfOrder("the task has no expired lease"));
    given::<JobAggregate>(claimed_by_tina())
        .when(JobCommand::ExpireLease { task_id: transcribe_id(), at_ms: at })
        .then([JobEvent::TaskReleased { task_id: transcribe_id(), by: None, expired: true, at_ms: at }]);
}

#[test]
fn given_a_held_transcription_when_submitted_then_the_job_is_done_with_the_human_document() {
    let mut history = claimed_by_tina();
    history.push(JobEvent::DraftSaved {
        task_id: transcribe_id(),
        by: user("tina"),
        revision: 1,
        path: "media/j1/work/r1.json".into(),
        words: 21,
        lease_until_ms: 3_000 + LEASE,
        at_ms: 3_000,
    });
    let state = given::<JobAggregate>(history).when(submit_task(&transcribe_id(), "tina", 4_000)).then([
        JobEvent::TaskSubmitted {
            task_id: transcribe_id(),
            by: user("tina"),
            revision: 1,
            path: "media/j1/work/r1.json".into(),
            at_ms: 4_000,
        },
        JobEvent::JobCompleted { at_ms: 4_000 },
    ]);
    assert_eq!(state.status(), Some(JobStatus::Done));
    let transcript = state.transcript.as_ref().unwrap();
    assert_eq!((transcript.path.as_str(), transcript.draft), ("media/j1/work/r1.json", false));
    given::<JobAggregate>(claimed_by_tina().into_iter().chain([JobEvent::TaskSubmitted {
        task_id: transcribe_id(),
        by: user("tina"),
        revision: 0,
        path: "transcripts/j1.json".into(),
        at_ms: 4_000,
    }]))
    .when(claim(&transcribe_id(), tina(), 5_000))
    .then_refused(JobRefusal::TaskClosed(transcribe_id()));
}

#[test]
fn given_an_unsaved_transcription_when_submitted_then_the_machine_draft_is_accepted_as_is() {
    given::<JobAggregate>(claimed_by_tina()).when(submit_task(&transcribe_id(), "tina", 4_000)).then([
        JobEvent::TaskSubmitted {
            task_id: transcribe_id(),
            by: user("tina"),
            revision: 0,
            path: "transcripts/j1.json".into(),
            at_ms: 4_000,
        },
        JobEvent::JobCompleted { at_ms: 4_000 },
    ]);
}

#[test]
fn given_translated_subtitles_ordered_at_submission_then_transcription_comes_first_then_translation() {
    let order = perfect(|p| {
        p.transcription_type = Some("translatedSubtitles".into());
        p.target_language = Some("pt".into());
    });
    let mut history = transcribed(order);
    history.push(JobEvent::TaskClaimed {
        task_id: transcribe_id(),
        by: user("tina"),
        lease_until_ms: 2_000 + LEASE,
        at_ms: 2_000,
    });
    let (events, state) = given::<JobAggregate>(history).when(submit_task(&transcribe_id(), "tina", 3_000)).accepted();
    assert_eq!(
        events[1],
        JobEvent::TaskOpened {
            task_id: translate_id(),
            kind: TaskKind::Translate,
            deadline_ms: 1_000 + 7 * DAY_MS,
            at_ms: 3_000
        }
    );
    assert_eq!(state.status(), Some(JobStatus::Open));
    assert_eq!(state.translation_source_path(), Some("transcripts/j1.json"));
    // Translators into Portuguese only.
    let tom = worker("tom", Role::Translator, &["pt"]);
    let refused = decide(&state, claim(&translate_id(), worker("nina", Role::Translator, &["nl"]), 3_500));
    assert!(matches!(refused, Err(JobRefusal::TaskNotForYou(_))));
    let state = decide(&state, claim(&translate_id(), tom, 3_500)).unwrap().iter().fold(state, evolve);
    assert_eq!(
        decide(&state, submit_task(&translate_id(), "tom", 3_600)),
        Err(JobRefusal::NothingToSubmit(translate_id()))
    );
    let state = decide(&state, save(&translate_id(), "tom", "media/j1/work/pt.json", 3_700))
        .unwrap()
        .iter()
        .fold(state, evolve);
    let events = decide(&state, submit_task(&translate_id(), "tom", 3_800)).unwrap();
    assert_eq!(
        events[1..],
        [
            JobEvent::TranslationProduced {
                path: "media/j1/work/pt.json".into(),
                target_language: crate::languages::TargetLanguage::parse_for(JobType::Perfect, "pt").unwrap(),
                at_ms: 3_800
            },
            JobEvent::JobCompleted { at_ms: 3_800 },
        ]
    );
    assert_eq!(events.iter().fold(state, evolve).status(), Some(JobStatus::Done));
}

#[test]
fn given_a_translation_request_then_its_translate_task_opens_at_once() {
    let (events, state) = given::<JobAggregate>([]).when(request_translation(captions_source(|_| {}))).accepted();
    assert_eq!(
        events[1],
        JobEvent::TaskOpened {
            task_id: task_id(&id("j2"), TaskKind::Translate),
            kind: TaskKind::Translate,
            deadline_ms: 7 + 7 * DAY_MS,
            at_ms: 7,
        }
    );
    assert_eq!(state.translation_source_path(), Some("transcripts/src.json"));
    assert_eq!(state.media_path(), Some("media/src/talk.mp4"));
    assert_eq!(state.status(), Some(JobStatus::Busy));
}

#[test]
fn given_a_deleted_manual_job_then_it_is_refunded_only_if_nobody_ever_claimed_it() {
    let unclaimed = JobAggregate::replay(&transcribed(perfect(|_| {})));
    assert!(unclaimed.refunded_on_delete());
    let mut released = claimed_by_tina();
    released.push(JobEvent::TaskReleased {
        task_id: transcribe_id(),
        by: Some(user("tina")),
        expired: false,
        at_ms: 3_000,
    });
    assert!(!JobAggregate::replay(&released).refunded_on_delete());
    assert!(!JobAggregate::replay(&transcribed(request(|_| {}))).refunded_on_delete(), "direct jobs are machine work");
}

#[test]
fn given_a_direct_job_deleted_before_its_recognition_started_then_it_is_refunded() {
    let mut history = transcribed(request(|_| {}));
    let started = history.iter().position(|e| matches!(e, JobEvent::TranscriptionStarted { .. })).unwrap();
    history.truncate(started);
    assert!(JobAggregate::replay(&history).refunded_on_delete(), "queued, probed, nothing recognised yet");
    assert!(JobAggregate::replay(&history[..1]).refunded_on_delete(), "media not even stored yet");
    history.push(JobEvent::TranscriptionStarted { attempt: 1, at_ms: 1_003 });
    assert!(!JobAggregate::replay(&history).refunded_on_delete(), "the machine has started on it");
}

#[test]
fn given_a_draft_recorded_before_tasks_existed_then_the_pipeline_opens_its_task() {
    let mut history = transcribed(perfect(|_| {}));
    history.pop(); // the TaskOpened that older versions did not write
    let state = JobAggregate::replay(&history);
    assert_eq!(state.stage(), Stage::OpenTask);
    let (events, state) = given::<JobAggregate>(history).when(JobCommand::OpenTask { at_ms: 9 }).accepted();
    assert!(matches!(events[0], JobEvent::TaskOpened { kind: TaskKind::Transcribe, .. }));
    assert_eq!(state.stage(), Stage::HumanWork);
    assert_eq!(
        decide(&state, JobCommand::OpenTask { at_ms: 10 }).unwrap_err(),
        JobRefusal::OutOfOrder("only a manual job's draft waits for its first task")
    );
}

#[test]
fn task_events_round_trip_through_their_stored_form() {
    let events = [
        JobEvent::TaskOpened { task_id: "t".into(), kind: TaskKind::Translate, deadline_ms: 5, at_ms: 1 },
        JobEvent::TaskClaimed { task_id: "t".into(), by: user("tina"), lease_until_ms: 9, at_ms: 2 },
        JobEvent::DraftSaved {
            task_id: "t".into(),
            by: user("tina"),
            revision: 3,
            path: "p".into(),
            words: 4,
            lease_until_ms: 9,
            at_ms: 3,
        },
        JobEvent::TaskReleased { task_id: "t".into(), by: None, expired: true, at_ms: 4 },
        JobEvent::TaskSubmitted { task_id: "t".into(), by: user("tina"), revision: 3, path: "p".into(), at_ms: 5 },
    ];
    for e in events {
        assert_eq!(JobEvent::decode(&e.encode()).unwrap(), e);
    }
}
