//! Claims on machine work by cluster nodes: given a history, when a node claims the job's stage,
//! then a `WorkClaimed` event, or a refusal naming the node that holds it.

use super::*;
use crate::job::work_claim::ClaimStatus;

const LEASE: u64 = 30_000;

fn claim(stage: Stage, node: &str, at_ms: u64) -> JobCommand {
    JobCommand::ClaimWork { stage, node: node.into(), until_ms: at_ms + LEASE, at_ms }
}

fn claimed(stage: Stage, node: &str, at_ms: u64) -> JobEvent {
    JobEvent::WorkClaimed { stage, node: node.into(), lease_until_ms: at_ms + LEASE, at_ms }
}

/// A probed upload: its next stage is transcription.
fn probed() -> Vec<JobEvent> {
    let mut h = transcribed(request(|_| {}));
    h.truncate(h.len() - 2); // without TranscriptionStarted and TranscriptProduced
    assert_eq!(JobAggregate::replay(&h).stage(), Stage::Transcribe);
    h
}

#[test]
fn given_a_free_stage_when_a_node_claims_it_then_the_node_holds_it() {
    let state = given::<JobAggregate>(probed()).when(claim(Stage::Transcribe, "a", 5_000)).then([claimed(
        Stage::Transcribe,
        "a",
        5_000,
    )]);
    assert_eq!(state.claim_status("a", 5_001), ClaimStatus::Mine { until_ms: 5_000 + LEASE });
    assert_eq!(state.claim_status("b", 5_001), ClaimStatus::Other { node: "a".into(), until_ms: 5_000 + LEASE });
    // A lease of this node that ran out is claimed again before the work runs.
    assert_eq!(state.claim_status("a", 5_000 + LEASE), ClaimStatus::Free);
}

#[test]
fn given_a_held_stage_when_another_node_claims_it_then_it_is_refused_until_the_lease_ends() {
    let mut history = probed();
    history.push(claimed(Stage::Transcribe, "a", 5_000));
    given::<JobAggregate>(history.clone())
        .when(claim(Stage::Transcribe, "b", 5_000 + LEASE - 1))
        .then_refused(JobRefusal::WorkHeldByOther { node: "a".into(), until_ms: 5_000 + LEASE });
    // The holder died: its lease ran out, and the other node takes the stage over.
    given::<JobAggregate>(history).when(claim(Stage::Transcribe, "b", 5_000 + LEASE)).then([claimed(
        Stage::Transcribe,
        "b",
        5_000 + LEASE,
    )]);
}

#[test]
fn given_a_held_stage_when_its_holder_claims_again_then_the_lease_is_renewed() {
    let mut history = probed();
    history.push(claimed(Stage::Transcribe, "a", 5_000));
    let state = given::<JobAggregate>(history).when(claim(Stage::Transcribe, "a", 9_000)).then([claimed(
        Stage::Transcribe,
        "a",
        9_000,
    )]);
    assert_eq!(state.claim.unwrap().until_ms, 9_000 + LEASE);
}

#[test]
fn a_claim_covers_only_its_stage() {
    let mut history = probed();
    history.push(claimed(Stage::Transcribe, "a", 5_000));
    history.extend(transcribed(request(|_| {})).split_off(probed().len()));
    let state = JobAggregate::replay(&history);
    assert_eq!(state.stage(), Stage::Complete);
    assert_eq!(state.claim_status("b", 5_001), ClaimStatus::Free);
    let refusal = decide(&state, claim(Stage::Transcribe, "b", 5_002));
    assert!(matches!(refusal, Err(JobRefusal::OutOfOrder(_))), "{refusal:?}");
    let refusal = decide(&state, claim(Stage::Complete, "b", 5_002));
    assert!(matches!(refusal, Err(JobRefusal::OutOfOrder(_))), "a single-append step is never claimed: {refusal:?}");
}

#[test]
fn a_finished_job_with_a_callback_due_is_claimed_for_its_delivery_and_a_deleted_one_is_not() {
    let history = done(request(with_callback));
    given::<JobAggregate>(history.clone()).when(claim(Stage::DeliverCallback, "a", 5_000)).then([claimed(
        Stage::DeliverCallback,
        "a",
        5_000,
    )]);
    let mut deleted = history;
    deleted.push(JobEvent::JobDeleted { by: user("ann"), at_ms: 4_000 });
    given::<JobAggregate>(deleted).when(claim(Stage::DeliverCallback, "a", 5_000)).then_refused(JobRefusal::Deleted);
}

#[test]
fn a_claim_round_trips_through_its_stored_form() {
    let event = claimed(Stage::DeliverCallback, "node-1", 5_000);
    let stored = event.encode();
    assert_eq!(stored["stage"], "deliver_callback");
    assert_eq!(JobEvent::decode(&stored).unwrap(), event);
    let mut future = stored.clone();
    future["stage"] = serde_json::json!("diarize");
    let decoded = JobEvent::decode(&future).unwrap();
    let state = JobAggregate::replay(&[submitted(request(|_| {})), vec![decoded]].concat());
    assert_eq!(
        state.claim_status("other", 5_001),
        ClaimStatus::Free,
        "a stage this version does not know holds nothing"
    );
}
