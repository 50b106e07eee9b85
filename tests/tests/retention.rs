//! Retention (beyond the spec): a job's own `deleteAfterSeconds` and the operator's `--retention`
//! delete a finished job's media and transcripts once the shorter one has passed. Status shows
//! when; afterwards the job answers 410 like a deleted one, nothing of it stays on disk, and
//! `scribe replay` keeps its history with `JobExpired` last, also across a restart.

use std::time::{Duration, Instant};

use scribe_tests::{ASR_TIMEOUT, FileServer, Options, TestServer, clips, paths};
use serde_json::{Value, json};

/// How long an expiry may take to show once due (the reactor looks every second).
const EXPIRY_TIMEOUT: Duration = Duration::from_secs(30);

fn job_id(job: &Value) -> String {
    job["jobId"].as_str().expect("a jobId").to_owned()
}

/// Waits until the job answers 410; returns the error body.
fn wait_until_gone(server: &TestServer, key: &str, id: &str) -> Value {
    let deadline = Instant::now() + EXPIRY_TIMEOUT;
    loop {
        let reply = server.get("/jobs/status", key, &[("jobId", id)]);
        if reply.status == 410 {
            return reply.error(410, Some("jobId"));
        }
        assert!(Instant::now() < deadline, "job {id} never expired: {}\n{}", reply.json(), server.logs());
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// Polls every job in turn until each has been seen DONE or ERROR; returns each one's status as
/// first seen ended. (Waiting for one job after the other would miss one that ends, and expires
/// 3 s later, while an earlier one is still being waited for.)
fn wait_until_each_ended(server: &TestServer, key: &str, ids: &[&str]) -> Vec<Value> {
    let deadline = Instant::now() + ASR_TIMEOUT;
    let mut ended: Vec<Option<Value>> = vec![None; ids.len()];
    while ended.iter().any(Option::is_none) {
        for (id, seen) in ids.iter().zip(ended.iter_mut()).filter(|(_, seen)| seen.is_none()) {
            let job = server.status(key, id);
            if job["status"] == "DONE" || job["status"] == "ERROR" {
                *seen = Some(job);
            }
        }
        assert!(Instant::now() < deadline, "not every job of {ids:?} ended in time\n{}", server.logs());
        std::thread::sleep(Duration::from_millis(100));
    }
    ended.into_iter().flatten().collect()
}

/// Checks that the job `id` expired: 410 saying why, exports gone, no file left, history kept.
fn assert_expired(server: &TestServer, key: &str, id: &str, retention_s: u64) {
    let gone = wait_until_gone(server, key, id);
    assert!(gone["message"].as_str().unwrap_or_default().contains("retention"), "{gone}");
    server.get("/jobs/export-json", key, &[("jobId", id)]).error(410, Some("jobId"));
    let deadline = Instant::now() + EXPIRY_TIMEOUT;
    while !paths::files_named_after(&server.data_dir(), id).is_empty() {
        assert!(
            Instant::now() < deadline,
            "files of the expired job left: {:?}",
            paths::files_named_after(&server.data_dir(), id)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let history = server.scribe_ok(&["replay", id]);
    let ended = history.contains("JobCompleted") || history.contains("JobFailed");
    assert!(history.contains("JobSubmitted") && ended, "the history is kept: {history}");
    let last = history.lines().last().unwrap_or_default();
    assert!(last.contains("JobExpired") && last.contains(&format!("retention_s={retention_s}")), "{history}");
}

#[test]
fn a_job_asking_for_deletion_after_two_seconds_is_gone_two_seconds_after_it_ends() {
    let server = TestServer::start();
    let key = server.key();
    let job =
        server.upload_ok(key, &paths::corpus_file(clips::SHORT), &[("language", "en"), ("deleteAfterSeconds", "2")]);
    assert_eq!(job["deleteAfterSeconds"], 2, "{job}");
    assert!(job.get("expiresAt").is_none(), "no expiry before the job ends: {job}");
    let id = job_id(&job);
    let done = server.wait_for_status(key, &id, &["DONE", "ERROR"], ASR_TIMEOUT);
    assert_eq!(done["status"], "DONE", "{done}");
    let expires_at = done["expiresAt"].as_u64().unwrap_or_else(|| panic!("status shows when the data goes: {done}"));
    let now_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;
    assert!(
        expires_at <= now_ms + 2_000 && expires_at + 60_000 > now_ms,
        "expiresAt {expires_at} is two seconds after the end (now {now_ms})"
    );
    // Listed with it too, until it is gone.
    let listed = server.list_jobs(key, &[("jobId", &id)]);
    if let Some(listed) = listed.first() {
        assert_eq!(listed["deleteAfterSeconds"], 2, "{listed}");
    }
    assert_expired(&server, key, &id, 2);
    assert!(server.list_jobs(key, &[("jobId", &id)]).is_empty(), "an expired job leaves the list");
    let replay = server.scribe_ok(&["replay", &id]);
    assert!(replay.lines().next().is_some_and(|l| l.contains("delete_after_seconds=2")), "{replay}");
}

#[test]
fn the_operators_retention_applies_to_every_job_and_the_shorter_limit_wins() {
    let mut server =
        TestServer::start_with(Options { extra_args: vec!["--retention".into(), "3s".into()], ..Options::default() });
    let files = FileServer::start();
    let key = server.key().to_owned();
    // No limit of its own: the server's 3 s apply.
    let plain = job_id(&server.upload_ok(&key, &paths::corpus_file(clips::SHORT), &[("language", "en")]));
    // Its own limit is longer: the server's shorter one wins.
    let url_job = server.upload_url_ok(
        &key,
        &files.corpus_url(clips::SHORT),
        &json!({"language": "en", "deleteAfterSeconds": 86_400}),
    );
    assert_eq!(url_job["deleteAfterSeconds"], 86_400, "{url_job}");
    let url_job = job_id(&url_job);
    // A failed job is kept no longer than a finished one.
    let failed = job_id(&server.upload_ok(&key, &paths::corpus_file(clips::SILENCE), &[]));
    for ended in wait_until_each_ended(&server, &key, &[&plain, &url_job, &failed]) {
        assert!(ended["expiresAt"].is_u64(), "{ended}");
    }
    for id in [&plain, &url_job, &failed] {
        assert_expired(&server, &key, id, 3);
    }

    // After a restart (checkpoints and all), a job that ended before it expires all the same.
    let later = job_id(&server.upload_ok(&key, &paths::corpus_file(clips::SHORT), &[("language", "en")]));
    server.wait_for_status(&key, &later, &["DONE"], ASR_TIMEOUT);
    server.stop();
    std::thread::sleep(Duration::from_secs(4));
    server.restart();
    assert_expired(&server, &key, &later, 3);
}

#[test]
fn a_delete_after_that_is_not_a_number_of_seconds_is_refused_naming_it() {
    let server = TestServer::start();
    let key = server.key();
    for bad in ["0", "-5", "soon", "315360001"] {
        server
            .upload(key, &paths::corpus_file(clips::SHORT), &[("deleteAfterSeconds", bad)])
            .error(400, Some("deleteAfterSeconds"));
    }
    let reply = server.post_json(
        "/jobs/upload-media-from-url",
        key,
        &json!({"sourceUrl": "https://example.com/a.wav", "deleteAfterSeconds": 0}),
    );
    reply.error(400, Some("deleteAfterSeconds"));
}
