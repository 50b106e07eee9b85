//! Documents by event: a customer's correction and a transcriber's submission are each a new
//! file that their event names, and the exports read the file the job's history names last. Shown
//! right after a restart (nothing rendered or remembered in memory), with the job's conventional
//! transcript file (`transcripts/<jobId>.json`) still holding the machine's words: no handler
//! copies a document over another.

use std::time::{Duration, Instant};

use scribe_tests::{ASR_TIMEOUT, Reply, TestServer, clips, paths};
use serde_json::{Value, json};

/// The word put in place of the machine's first word; the clip never says it.
const EDIT: &str = "Zanzibar";

fn export(server: &TestServer, key: &str, format: &str, job_id: &str) -> String {
    let reply = server.get(&format!("/jobs/export-{format}"), key, &[("jobId", job_id)]);
    assert_eq!(reply.status, 200, "export-{format}: {}", reply.text);
    reply.text
}

/// The `path` that the last `event_type` event of the job's history names (`scribe replay`).
fn named_path(server: &TestServer, job_id: &str, event_type: &str) -> String {
    let history = server.scribe_ok(&["replay", job_id]);
    let line = history
        .lines()
        .rfind(|l| l.contains(event_type))
        .unwrap_or_else(|| panic!("no {event_type} in the history:\n{history}"));
    let path = line.split_whitespace().find_map(|field| field.strip_prefix("path=")).expect("the event names a path");
    path.to_owned()
}

/// The job's conventional transcript file, where the machine's transcript was written.
fn conventional_transcript(server: &TestServer, job_id: &str) -> String {
    let path = server.data_dir().join("transcripts").join(format!("{job_id}.json"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Checks that the document the event names holds the edit, and the conventional file does not.
fn assert_read_from_the_named_file(server: &TestServer, job_id: &str, event_type: &str) {
    let named = named_path(server, job_id, event_type);
    assert_ne!(named, format!("transcripts/{job_id}.json"), "the event names a file of its own");
    let document = std::fs::read_to_string(server.data_dir().join(&named)).expect("the named document");
    assert!(document.contains(EDIT), "{named} holds the edit");
    let conventional = conventional_transcript(server, job_id);
    assert!(!conventional.contains(EDIT), "nothing copied the edit over the machine's transcript file");
}

/// The document with its first word replaced by [`EDIT`].
fn edited(document: &Value) -> Value {
    let mut document = document.clone();
    document["segments"][0]["words"][0]["text"] = json!(EDIT);
    document
}

#[test]
fn a_customer_edit_is_exported_right_after_a_restart_from_the_file_its_event_names() {
    let mut server = TestServer::start();
    let key = server.key().to_owned();
    let job = server.upload_ok(&key, &paths::corpus_file(clips::SHORT), &[("numberOfSpeakers", "1")]);
    let job_id = job["jobId"].as_str().unwrap().to_owned();
    let done = server.wait_for_status(&key, &job_id, &["DONE", "ERROR"], ASR_TIMEOUT);
    assert_eq!(done["status"], "DONE", "{done}");
    assert!(!export(&server, &key, "txt", &job_id).contains(EDIT));

    let document = server.get("/jobs/document", &key, &[("jobId", &job_id)]).ok()["document"].clone();
    let put = server
        .http()
        .put(server.url("/api/jobs/document"))
        .query(&[("apiKey", key.as_str()), ("jobId", job_id.as_str())])
        .json(&edited(&document));
    assert_eq!(Reply::send(put).ok()["revision"], 1);

    server.restart();
    let txt = export(&server, &key, "txt", &job_id);
    assert!(txt.contains(EDIT), "the export after the restart shows the edit:\n{txt}");
    let json: Value = serde_json::from_str(&export(&server, &key, "json", &job_id)).unwrap();
    assert_eq!(json["segments"][0]["words"][0]["text"], EDIT, "{json}");
    let again = server.get("/jobs/document", &key, &[("jobId", &job_id)]).ok();
    assert_eq!(again["revision"], 1);
    assert_eq!(again["document"]["segments"][0]["words"][0]["text"], EDIT, "the editor reads the same file");
    assert_read_from_the_named_file(&server, &job_id, "DocumentEdited");
}

#[test]
fn a_submitted_revision_is_exported_right_after_a_restart_from_the_file_its_event_names() {
    let mut server = TestServer::start();
    let customer = server.key().to_owned();
    let tina = server.create_staff_key("tina", "transcriber", &["en"]);
    let job = server.upload_ok(
        &customer,
        &paths::corpus_file(clips::SHORT),
        &[("jobType", "perfect"), ("numberOfSpeakers", "1")],
    );
    let job_id = job["jobId"].as_str().unwrap().to_owned();

    let deadline = Instant::now() + ASR_TIMEOUT;
    let task_id = loop {
        let tasks = server.get("/work/tasks", &tina, &[]).ok();
        if let Some(task) = tasks.as_array().unwrap().iter().find(|t| t["jobId"] == job_id.as_str()) {
            break task["taskId"].as_str().unwrap().to_owned();
        }
        assert!(Instant::now() < deadline, "no task for job {job_id}\n{}", server.logs());
        std::thread::sleep(Duration::from_millis(250));
    };
    server.post(&format!("/work/tasks/{task_id}/claim"), &tina, &[]).ok();
    let work = server.get(&format!("/work/tasks/{task_id}"), &tina, &[]).ok();
    let saved = server.put_json(&format!("/work/tasks/{task_id}/document"), &tina, &edited(&work["document"])).ok();
    assert_eq!(saved["revision"], 1);
    server.post(&format!("/work/tasks/{task_id}/submit"), &tina, &[]).ok();
    let done = server.wait_for_status(&customer, &job_id, &["DONE", "ERROR"], Duration::from_secs(30));
    assert_eq!(done["status"], "DONE", "{done}");

    server.restart();
    let srt = export(&server, &customer, "srt", &job_id);
    assert!(srt.contains(EDIT), "the export after the restart shows the people's document:\n{srt}");
    assert_read_from_the_named_file(&server, &job_id, "TaskSubmitted");
}
