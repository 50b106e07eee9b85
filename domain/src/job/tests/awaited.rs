//! A job an open request waits for (the OpenAI door): recorded with the node that holds the
//! request, let go when the server's wait runs out, and found lost when that node starts again.

use super::*;

/// An upload submitted at 1 000 ms whose answer a request on node `a` waits for.
fn awaited_upload() -> Vec<JobEvent> {
    decide(&JobState::default(), stored_upload(11_000, Some("a"))).unwrap()
}

#[test]
fn given_a_job_awaited_on_node_a_when_a_restarts_after_it_then_its_request_is_lost() {
    let state = JobAggregate::replay(&awaited_upload());
    assert_eq!(state.awaited_on(), Some("a"));
    assert!(state.request_lost_to_restart("a", 2_000), "node a started after the job: the request died with it");
    assert!(!state.request_lost_to_restart("a", 1_000), "submitted to the running process: its request is alive");
    assert!(!state.request_lost_to_restart("b", 2_000), "node b does not hold the request");
}

#[test]
fn given_a_job_awaited_when_the_wait_runs_out_then_the_request_lets_go_once() {
    let history = awaited_upload();
    let state = given::<JobAggregate>(history.clone())
        .when(JobCommand::DetachRequest { at_ms: 1_500 })
        .then([JobEvent::RequestDetached { at_ms: 1_500 }]);
    assert_eq!(state.awaited_on(), None);
    assert!(!state.request_lost_to_restart("a", 2_000), "the client follows the job itself: it goes on");
    let mut detached = history;
    detached.push(JobEvent::RequestDetached { at_ms: 1_500 });
    given::<JobAggregate>(detached)
        .when(JobCommand::DetachRequest { at_ms: 1_600 })
        .then_refused(JobRefusal::AlreadyRecorded("RequestDetached"));
}

#[test]
fn given_a_finished_or_unawaited_job_then_no_request_waits_for_it() {
    let mut finished = awaited_upload();
    finished.push(JobEvent::JobCompleted { at_ms: 1_400 });
    let state = JobAggregate::replay(&finished);
    assert!(!state.request_lost_to_restart("a", 2_000), "a finished job is not failed again");
    given::<JobAggregate>(finished)
        .when(JobCommand::DetachRequest { at_ms: 1_500 })
        .then_refused(JobRefusal::Finished(JobStatus::Done));
    let upload = transcribed(request(|_| {}));
    assert_eq!(JobAggregate::replay(&upload).awaited_on(), None);
    given::<JobAggregate>(upload)
        .when(JobCommand::DetachRequest { at_ms: 1_500 })
        .then_refused(JobRefusal::OutOfOrder("no request waits for this job"));
}

#[test]
fn a_submission_without_a_waiting_request_is_stored_as_before() {
    let events = decide(&JobState::default(), submit(request(|_| {}))).unwrap();
    let stored = events[0].encode();
    assert!(!stored.to_string().contains("awaited_on"), "{stored}");
    assert_eq!(JobEvent::decode(&stored).unwrap(), events[0]);
    let awaited = awaited_upload()[0].encode();
    assert_eq!(JobEvent::decode(&awaited).unwrap(), awaited_upload()[0]);
}
