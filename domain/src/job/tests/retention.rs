//! Retention: a finished job expires when the shorter of its own `deleteAfterSeconds` and the
//! operator's retention has passed since it finished.

use super::*;

fn keep_for(seconds: i64) -> impl FnOnce(&mut JobParams) {
    move |p| p.delete_after_seconds = Some(seconds)
}

#[test]
fn given_a_job_done_at_1005_ms_kept_for_10_s_then_it_expires_at_11005_ms() {
    let history = done(request(keep_for(10)));
    let state = JobAggregate::replay(&history);
    assert_eq!(state.expires_at_ms(None), Some(11_005));
    assert_eq!(state.expires_at_ms(Some(3)), Some(4_005), "the operator's shorter retention wins");
    assert_eq!(state.expires_at_ms(Some(60)), Some(11_005), "the job's shorter own time wins");
    given::<JobAggregate>(history.clone())
        .when(JobCommand::Expire { retention_s: None, at_ms: 11_004 })
        .then_refused(JobRefusal::OutOfOrder("the job's retention has not ended"));
    let state = given::<JobAggregate>(history)
        .when(JobCommand::Expire { retention_s: None, at_ms: 11_005 })
        .then([JobEvent::JobExpired { retention_s: 10, at_ms: 11_005 }]);
    assert!(state.deleted && state.expired);
    assert_eq!(state.stage(), Stage::Deleted);
    assert_eq!(state.expires_at_ms(None), None, "an expired job expires no more");
}

#[test]
fn given_the_operators_retention_alone_then_failed_jobs_expire_too() {
    let history = failed(request(|_| {}));
    given::<JobAggregate>(history.clone())
        .when(JobCommand::Expire { retention_s: None, at_ms: u64::MAX })
        .then_refused(JobRefusal::OutOfOrder("the job's retention has not ended"));
    given::<JobAggregate>(history)
        .when(JobCommand::Expire { retention_s: Some(2), at_ms: 3_005 })
        .then([JobEvent::JobExpired { retention_s: 2, at_ms: 3_005 }]);
}

#[test]
fn given_an_unfinished_or_deleted_job_then_it_does_not_expire() {
    given::<JobAggregate>(transcribed(request(keep_for(1))))
        .when(JobCommand::Expire { retention_s: Some(1), at_ms: u64::MAX })
        .then_refused(JobRefusal::OutOfOrder("the job's retention has not ended"));
    let mut deleted = done(request(keep_for(1)));
    deleted.push(JobEvent::JobDeleted { by: user("ann"), at_ms: 1_500 });
    given::<JobAggregate>(deleted)
        .when(JobCommand::Expire { retention_s: None, at_ms: u64::MAX })
        .then_refused(JobRefusal::Deleted);
}

#[test]
fn given_a_delete_after_of_zero_or_over_ten_years_then_the_request_is_refused() {
    for bad in [0, -1, crate::requests::MAX_DELETE_AFTER_SECONDS + 1] {
        let err = JobParams { delete_after_seconds: Some(bad), ..JobParams::default() }.validate().unwrap_err();
        assert_eq!(err.field, "deleteAfterSeconds", "{bad}");
    }
    let ok = JobParams { delete_after_seconds: Some(86_400), ..JobParams::default() }.validate().unwrap();
    assert_eq!(ok.delete_after_seconds, Some(86_400));
}
