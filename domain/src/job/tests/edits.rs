//! A customer correcting their finished job: given a history, when the owner (or someone else)
//! saves an edited document, then a `DocumentEdited` revision, or this refusal.

use super::*;
use crate::kinds::JobStatus;

fn edit(by: &str, path: &str, at_ms: u64) -> JobCommand {
    JobCommand::EditDocument { by: user(by), path: path.into(), words: 21, at_ms }
}

fn edited(revision: u32, path: &str, at_ms: u64) -> JobEvent {
    JobEvent::DocumentEdited { by: user("ann"), revision, path: path.into(), words: 21, at_ms }
}

#[test]
fn given_a_done_job_when_its_owner_edits_then_revision_1_becomes_the_transcript() {
    let state = given::<JobAggregate>(done(request(|_| {})))
        .when(edit("ann", "media/j1/work/edit-1.json", 5_000))
        .then([edited(1, "media/j1/work/edit-1.json", 5_000)]);
    let transcript = state.transcript.clone().expect("a transcript");
    assert_eq!(transcript.path, "media/j1/work/edit-1.json");
    assert_eq!(transcript.words, 21);
    assert_eq!(state.status(), Some(JobStatus::Done), "an edit does not reopen the job");
}

#[test]
fn given_an_edited_job_when_edited_again_then_the_revision_counts_up() {
    let mut history = done(request(|_| {}));
    history.push(edited(1, "a.json", 5_000));
    given::<JobAggregate>(history).when(edit("ann", "b.json", 6_000)).then([edited(2, "b.json", 6_000)]);
}

#[test]
fn given_a_done_job_when_another_account_edits_then_forbidden() {
    given::<JobAggregate>(done(request(|_| {}))).when(edit("bob", "x.json", 5_000)).then_refused(JobRefusal::Forbidden);
}

#[test]
fn given_an_open_job_when_edited_then_not_finished() {
    given::<JobAggregate>(transcribed(request(|_| {})))
        .when(edit("ann", "x.json", 5_000))
        .then_refused(JobRefusal::NotFinished);
}

#[test]
fn given_a_failed_job_when_edited_then_refused_as_finished_in_error() {
    given::<JobAggregate>(failed(request(|_| {})))
        .when(edit("ann", "x.json", 5_000))
        .then_refused(JobRefusal::Finished(JobStatus::Error));
}

#[test]
fn given_a_deleted_job_when_edited_then_deleted() {
    let mut history = done(request(|_| {}));
    history.push(JobEvent::JobDeleted { by: user("ann"), at_ms: 4_000 });
    given::<JobAggregate>(history).when(edit("ann", "x.json", 5_000)).then_refused(JobRefusal::Deleted);
}

#[test]
fn given_no_job_when_edited_then_not_found() {
    given::<JobAggregate>([]).when(edit("ann", "x.json", 5_000)).then_refused(JobRefusal::NotFound);
}

#[test]
fn document_edited_round_trips_through_the_codec() {
    let event = edited(3, "media/j1/work/edit.json", 7_000);
    assert_eq!(event.event_type(), "DocumentEdited");
    assert_eq!(JobEvent::decode(&event.encode()).unwrap(), event);
}

#[test]
fn the_delivered_document_is_the_file_the_last_event_names() {
    assert_eq!(JobAggregate::replay(&transcribed(request(|_| {}))).delivered_document(), Some("transcripts/j1.json"));
    let mut history = done(request(|_| {}));
    history.push(edited(1, "media/j1/work/edit-1.json", 5_000));
    history.push(edited(2, "media/j1/work/edit-2.json", 6_000));
    assert_eq!(JobAggregate::replay(&history).delivered_document(), Some("media/j1/work/edit-2.json"));
}

#[test]
fn the_editor_asks_the_same_rule_as_the_decision() {
    let done = JobAggregate::replay(&done(request(|_| {})));
    assert_eq!(done.can_edit(&user("ann")), Ok(()));
    assert_eq!(done.can_edit(&user("bob")), Err(JobRefusal::Forbidden));
    let open = JobAggregate::replay(&transcribed(request(|_| {})));
    assert_eq!(open.can_edit(&user("ann")), Err(JobRefusal::NotFinished));
    assert_eq!(JobState::default().can_edit(&user("ann")), Err(JobRefusal::NotFound));
}
