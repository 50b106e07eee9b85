//! Reading and deleting jobs over HTTP: `GET /jobs/status`, `GET /jobs` (filters, paging, newest
//! first, deleted jobs absent) and `DELETE /jobs` (message, files gone, 410 afterwards, a
//! `JobDeleted` event in `scribe replay`).

use scribe_tests::api::ids;
use scribe_tests::{ASR_TIMEOUT, TestServer, clips, paths};
use serde_json::Value;

fn job_id(job: &Value) -> String {
    job["jobId"].as_str().unwrap_or_else(|| panic!("no jobId in {job}")).to_owned()
}

#[test]
fn list_filters_pages_and_orders_newest_first() {
    let server = TestServer::start();
    let key = server.key();
    let short = paths::corpus_file(clips::SHORT);
    // Oldest first: direct transcription, manual transcription, direct captions, manual captions, direct transcription.
    let uploads: [&[(&str, &str)]; 5] = [
        &[],
        &[("jobType", "perfect")],
        &[("transcriptionType", "captions")],
        &[("jobType", "perfect"), ("transcriptionType", "captions")],
        &[],
    ];
    let mut created = Vec::new();
    for query in uploads {
        created.push(job_id(&server.upload_ok(key, &short, query)));
    }
    let newest_first: Vec<String> = created.iter().rev().cloned().collect();

    assert_eq!(ids(&server.list_jobs(key, &[]), "jobId"), newest_first, "all jobs, newest first");
    let listed = server.list_jobs(key, &[]);
    for job in &listed {
        for field in
            ["jobId", "created", "language", "status", "nrAudioSeconds", "transcriptionType", "filename", "jobType"]
        {
            assert!(job.get(field).is_some(), "list entry without {field}: {job}");
        }
        assert!(job.get("jobStatus").is_none(), "list entries are bare jobs: {job}");
    }
    let created_times: Vec<u64> = listed.iter().map(|j| j["created"].as_u64().unwrap()).collect();
    assert!(created_times.windows(2).all(|w| w[0] >= w[1]), "created descending: {created_times:?}");

    let perfect = ids(&server.list_jobs(key, &[("jobType", "perfect")]), "jobId");
    assert_eq!(perfect, vec![created[3].clone(), created[1].clone()]);
    let captions = ids(&server.list_jobs(key, &[("transcriptionType", "captions")]), "jobId");
    assert_eq!(captions, vec![created[3].clone(), created[2].clone()]);
    let both = ids(&server.list_jobs(key, &[("transcriptionType", "captions"), ("jobType", "direct")]), "jobId");
    assert_eq!(both, vec![created[2].clone()]);
    let one = ids(&server.list_jobs(key, &[("jobId", &created[2])]), "jobId");
    assert_eq!(one, vec![created[2].clone()]);
    assert!(server.list_jobs(key, &[("transcriptionType", "translatedSubtitles")]).is_empty());

    // Paging: pages count from 0; the last page is short, past it is empty.
    let page = |p: &str| ids(&server.list_jobs(key, &[("pageSize", "2"), ("page", p)]), "jobId");
    assert_eq!(page("0"), newest_first[0..2]);
    assert_eq!(page("1"), newest_first[2..4]);
    assert_eq!(page("2"), newest_first[4..5]);
    assert!(page("3").is_empty());
    assert_eq!(ids(&server.list_jobs(key, &[("pageSize", "100")]), "jobId"), newest_first);

    // Status filter: the manual jobs stay OPEN; wait for the direct ones to end.
    for id in [&created[0], &created[2], &created[4]] {
        server.wait_for_status(key, id, &["DONE", "ERROR"], ASR_TIMEOUT);
    }
    let open = ids(&server.list_jobs(key, &[("status", "OPEN")]), "jobId");
    assert_eq!(open, vec![created[3].clone(), created[1].clone()], "manual jobs stay OPEN");
    let done = ids(&server.list_jobs(key, &[("status", "DONE")]), "jobId");
    assert_eq!(done, vec![created[4].clone(), created[2].clone(), created[0].clone()]);
    assert!(server.list_jobs(key, &[("status", "ERROR")]).is_empty());
}

#[test]
fn default_page_size_is_20() {
    let server = TestServer::start();
    let key = server.key();
    let short = paths::corpus_file(clips::SHORT);
    for _ in 0..21 {
        // Manual jobs: no speech recognition needed to fill a page.
        server.upload_ok(key, &short, &[("jobType", "perfect")]);
    }
    assert_eq!(server.list_jobs(key, &[]).len(), 20);
    assert_eq!(server.list_jobs(key, &[("page", "1")]).len(), 1);
}

#[test]
fn list_parameters_are_validated_naming_the_field() {
    let server = TestServer::start();
    let key = server.key();
    let cases: &[(&[(&str, &str)], &str)] = &[
        (&[("pageSize", "101")], "pageSize"),
        (&[("pageSize", "0")], "pageSize"),
        (&[("page", "-1")], "page"),
        (&[("page", "first")], "page"),
        (&[("status", "BUSY")], "status"),
        (&[("status", "FINISHED")], "status"),
        (&[("jobType", "robot")], "jobType"),
        (&[("transcriptionType", "poem")], "transcriptionType"),
    ];
    for (query, field) in cases {
        server.get("/jobs", key, query).error(400, Some(field));
    }
}

#[test]
fn jobs_of_other_accounts_are_not_listed_and_are_forbidden() {
    let server = TestServer::start();
    let alice = server.key().to_owned();
    let bob = server.create_key("bob", None);
    let short = paths::corpus_file(clips::SHORT);
    let alices = job_id(&server.upload_ok(&alice, &short, &[("jobType", "perfect")]));
    assert!(server.list_jobs(&bob, &[]).is_empty(), "bob sees none of admin's jobs");
    assert!(server.list_jobs(&bob, &[("jobId", &alices)]).is_empty());
    server.get("/jobs/status", &bob, &[("jobId", &alices)]).error(403, Some("jobId"));
    server.delete("/jobs", &bob, &[("jobId", &alices)]).error(403, Some("jobId"));
    assert_eq!(server.status(&alice, &alices)["status"], "OPEN", "bob's delete did nothing");
}

#[test]
fn unknown_and_missing_job_ids() {
    let server = TestServer::start();
    let key = server.key();
    let unknown = "0b9c6a1e-6a43-4b7e-9d0e-3f3c0c0c0c0c";
    server.get("/jobs/status", key, &[("jobId", unknown)]).error(404, Some("jobId"));
    server.delete("/jobs", key, &[("jobId", unknown)]).error(404, Some("jobId"));
    server.get("/jobs/status", key, &[]).error(400, Some("jobId"));
    server.delete("/jobs", key, &[]).error(400, Some("jobId"));
}

#[test]
fn delete_removes_the_files_answers_410_after_and_keeps_the_audit_event() {
    let server = TestServer::start();
    let key = server.key();
    let job = server.upload_ok(key, &paths::corpus_file(clips::SHORT), &[]);
    let id = job_id(&job);
    server.wait_for_status(key, &id, &["DONE", "ERROR"], ASR_TIMEOUT);
    let job_dir = server.data_dir().join("media").join(&id);
    assert!(job_dir.is_dir(), "the upload is stored under {}", job_dir.display());

    let reply = server.delete("/jobs", key, &[("jobId", &id)]);
    assert_eq!(reply.ok(), serde_json::json!({"message": "Job deleted"}));
    assert!(!job_dir.exists(), "{} still exists after the delete", job_dir.display());
    let left = paths::files_named_after(&server.data_dir(), &id);
    assert!(left.is_empty(), "files of the deleted job left on disk (transcript?): {left:?}");

    server.get("/jobs/status", key, &[("jobId", &id)]).error(410, Some("jobId"));
    server.delete("/jobs", key, &[("jobId", &id)]).error(410, Some("jobId"));
    assert!(server.list_jobs(key, &[]).is_empty(), "deleted jobs are not listed");
    assert!(server.list_jobs(key, &[("jobId", &id)]).is_empty());

    let history = server.scribe_ok(&["replay", &id]);
    let lines: Vec<&str> = history.lines().collect();
    assert!(lines.first().is_some_and(|l| l.contains("JobSubmitted")), "{history}");
    assert!(lines.last().is_some_and(|l| l.contains("JobDeleted")), "{history}");
    let json = server.scribe_ok(&["replay", &id, "--json"]);
    let events: Vec<Value> =
        json.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect();
    assert_eq!(events.len(), lines.len(), "one JSON line per event");
    assert_eq!(events.last().unwrap()["type"], "JobDeleted");
    assert!(events.windows(2).all(|w| w[0]["version"].as_u64() < w[1]["version"].as_u64()), "in order");
}

#[test]
fn replay_of_an_unknown_job_fails_clearly() {
    let server = TestServer::start();
    let out = server.scribe(&["replay", "0b9c6a1e-6a43-4b7e-9d0e-3f3c0c0c0c0c"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no job"), "{stderr}");
}
