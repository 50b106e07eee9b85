//! One pipeline dispatch per stage a job really needs, as `/metrics` counts them
//! (`scribe_pipeline_dispatches_total{stage="…"}`): an upload, whose own append stores and probes
//! its media, is dispatched for recognition and completion only; a URL job once more for each of
//! fetching and probing its media.

use std::collections::BTreeMap;

use scribe_tests::{ASR_TIMEOUT, FileServer, TestServer, clips, paths};
use serde_json::json;

/// Every stage the pipeline dispatches, with its count on the server's `/metrics`.
fn dispatches(server: &TestServer) -> BTreeMap<String, u64> {
    let text = server.http().get(server.url("/metrics")).send().expect("/metrics answers").text().unwrap();
    text.lines()
        .filter_map(|line| line.strip_prefix("scribe_pipeline_dispatches_total{stage=\""))
        .filter_map(|rest| {
            let (stage, count) = rest.split_once("\"} ")?;
            Some((stage.to_owned(), count.trim().parse().ok()?))
        })
        .collect()
}

/// The counts the server should show: `nonzero` as given, every other dispatched stage at 0.
fn expected(nonzero: &[(&str, u64)]) -> BTreeMap<String, u64> {
    let mut all: BTreeMap<String, u64> =
        ["StoreMedia", "ProbeMedia", "Transcribe", "Translate", "Complete", "OpenTask", "DeliverCallback"]
            .iter()
            .map(|stage| (stage.to_string(), 0))
            .collect();
    for (stage, count) in nonzero {
        all.insert(stage.to_string(), *count);
    }
    all
}

#[test]
fn an_upload_is_dispatched_only_for_the_stages_its_append_left_and_a_url_job_for_each() {
    let server = TestServer::start();
    let files = FileServer::start();
    let key = server.key();
    assert_eq!(dispatches(&server), expected(&[]), "nothing dispatched before the first job");

    let upload = server.upload_ok(key, &paths::corpus_file(clips::JFK), &[("language", "en")]);
    let id = upload["jobId"].as_str().expect("a jobId").to_owned();
    let done = server.wait_for_status(key, &id, &["DONE", "ERROR"], ASR_TIMEOUT);
    assert_eq!(done["status"], "DONE", "{done}");
    assert_eq!(
        dispatches(&server),
        expected(&[("Transcribe", 1), ("Complete", 1)]),
        "the upload's append stored and probed its media: no StoreMedia or ProbeMedia dispatch\n{}",
        server.logs()
    );

    let by_url = server.upload_url_ok(key, &files.corpus_url(clips::JFK), &json!({"language": "en"}));
    let id = by_url["jobId"].as_str().expect("a jobId").to_owned();
    let done = server.wait_for_status(key, &id, &["DONE", "ERROR"], ASR_TIMEOUT);
    assert_eq!(done["status"], "DONE", "{done}");
    assert_eq!(
        dispatches(&server),
        expected(&[("StoreMedia", 1), ("ProbeMedia", 1), ("Transcribe", 2), ("Complete", 2)]),
        "a URL job is fetched once and probed once\n{}",
        server.logs()
    );
}
