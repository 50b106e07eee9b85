//! Durability across restarts: stop the server (SIGTERM) and start it again on the same data
//! directory; jobs, glossaries and keys are all still there, a job still `OPEN` at the stop
//! goes on to the end, and `scribe rebuild` (server stopped) leaves every list unchanged.

use scribe_tests::{ASR_TIMEOUT, TestServer, clips, paths};
use serde_json::{Value, json};

/// What a client can see of one account.
/// The lists a user sees, without the progress of recognitions running (the perfect jobs'
/// machine pass goes on after a restart, and moves on by itself).
fn snapshot(server: &TestServer, key: &str) -> (Vec<Value>, Value) {
    let mut jobs = server.list_jobs(key, &[("pageSize", "100")]);
    for job in &mut jobs {
        job.as_object_mut().expect("a job object").remove("progress");
    }
    let glossaries = server.get("/glossary", key, &[]).ok();
    (jobs, glossaries)
}

#[test]
fn jobs_glossaries_and_keys_survive_a_restart() {
    let mut server = TestServer::start();
    let admin = server.key().to_owned();
    let carol = server.create_key("carol", None);
    let short = paths::corpus_file(clips::SHORT);

    let done = server.upload_ok(&admin, &short, &[]);
    let done_id = done["jobId"].as_str().unwrap().to_owned();
    server.wait_for_status(&admin, &done_id, &["DONE", "ERROR"], ASR_TIMEOUT);
    let manual = server.upload_ok(&carol, &short, &[("jobType", "perfect"), ("transcriptionType", "captions")]);
    let deleted = server.upload_ok(&carol, &short, &[("jobType", "perfect")]);
    let deleted_id = deleted["jobId"].as_str().unwrap().to_owned();
    server.delete("/jobs", &carol, &[("jobId", &deleted_id)]).ok();
    server.create_glossary(&admin, &json!({"name": "Kept", "names": ["Kennedy"], "items": [{"name": "NASA"}]}));
    server.create_glossary(&carol, &json!({"name": "Carol's"}));

    let before_admin = snapshot(&server, &admin);
    let before_carol = snapshot(&server, &carol);
    assert_eq!(before_carol.0.len(), 1);

    server.restart();

    assert_eq!(snapshot(&server, &admin), before_admin, "admin's jobs and glossaries after the restart");
    assert_eq!(snapshot(&server, &carol), before_carol, "carol's jobs and glossaries after the restart");
    assert_eq!(server.status(&carol, manual["jobId"].as_str().unwrap())["status"], "OPEN");
    server.get("/jobs/status", &carol, &[("jobId", &deleted_id)]).error(410, Some("jobId"));
    // Both keys still work, and the restarted server takes new work.
    let after = server.upload_ok(&carol, &short, &[("jobType", "perfect")]);
    assert_eq!(after["status"], "OPEN");
}

#[test]
fn a_job_open_at_shutdown_finishes_after_the_restart() {
    let mut server = TestServer::start();
    let key = server.key().to_owned();
    let job = server.upload_ok(&key, &paths::corpus_file(clips::JFK), &[]);
    let id = job["jobId"].as_str().unwrap().to_owned();
    server.restart();
    let done = server.wait_for_status(&key, &id, &["DONE", "ERROR"], ASR_TIMEOUT);
    assert_eq!(done["status"], "DONE", "{done}");
    assert_eq!(done["nrAudioSeconds"], 11);
}

#[test]
fn rebuild_leaves_the_lists_unchanged() {
    let mut server = TestServer::start();
    let admin = server.key().to_owned();
    let dave = server.create_key("dave", None);
    let short = paths::corpus_file(clips::SHORT);
    let first = server.upload_ok(&admin, &short, &[]);
    server.wait_for_status(&admin, first["jobId"].as_str().unwrap(), &["DONE", "ERROR"], ASR_TIMEOUT);
    for query in [&[("jobType", "perfect")][..], &[("transcriptionType", "captions"), ("jobType", "perfect")][..]] {
        server.upload_ok(&dave, &short, query);
    }
    let gone = server.upload_ok(&dave, &short, &[("jobType", "perfect")]);
    server.delete("/jobs", &dave, &[("jobId", gone["jobId"].as_str().unwrap())]).ok();
    let g = server.create_glossary(&dave, &json!({"name": "Before"}));
    server.put_json(&format!("/glossary/{}", g["id"].as_str().unwrap()), &dave, &json!({"name": "After"})).ok();
    server.create_glossary(&admin, &json!({"name": "Admin's"}));

    let before = (snapshot(&server, &admin), snapshot(&server, &dave));
    server.stop();
    let out = server.scribe_ok(&["rebuild"]);
    assert!(out.contains("rebuilt"), "{out}");
    server.restart();
    let after = (snapshot(&server, &admin), snapshot(&server, &dave));
    assert_eq!(after, before, "GET /jobs and GET /glossary after `scribe rebuild`");
}
