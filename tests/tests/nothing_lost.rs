//! Nothing swallowed, nothing lost: states a crash or a newer Scribe can leave in the event log,
//! written into a stopped server's event store, then met by the restarted server over HTTP.
//!
//! - An upload is charged just before its job is recorded; a crash between the two leaves a
//!   charge without a job. The restarted server gives it back.
//! - A glossary the server cannot read is not silently ignored: the job that asked for it ends
//!   in `ERROR` saying so (and is refunded).

use std::path::Path;
use std::time::{Duration, Instant};

use scribe_tests::{ASR_TIMEOUT, FileServer, TestServer, clips, paths};
use serde_json::json;

/// The embedded event store in a data directory.
fn events_file(data_dir: &Path) -> std::path::PathBuf {
    data_dir.join("events.sqlite3")
}

/// Appends one event to `stream` of a stopped server's event store, as its next version and the
/// log's next position, recorded at `recorded_at_ms`.
fn append_raw(data_dir: &Path, stream: &str, event_type: &str, data: &serde_json::Value, recorded_at_ms: i64) {
    let conn = rusqlite::Connection::open(events_file(data_dir)).expect("the event store opens");
    let position: i64 = conn.query_row("SELECT COALESCE(MAX(position), 0) + 1 FROM events", [], |r| r.get(0)).unwrap();
    let version: i64 = conn
        .query_row("SELECT COALESCE(MAX(version) + 1, 0) FROM events WHERE stream = ?1", [stream], |r| r.get(0))
        .unwrap();
    conn.execute(
        "INSERT INTO events (position, stream, version, type, data, recorded_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        rusqlite::params![position, stream, version, event_type, data.to_string(), recorded_at_ms],
    )
    .expect("the event is appended");
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

#[test]
fn a_charge_whose_job_was_never_recorded_is_refunded_after_a_restart() {
    let mut server = TestServer::start();
    // 10 cents: exactly one upload of a short clip.
    let key = server.create_key("crashed", Some(10));
    server.stop();
    // What a crash between the edge's charge and the job's submission leaves: the account was
    // charged (two minutes ago) for a job id that has no stream.
    let two_minutes_ago = now_ms() - 120_000;
    let orphan = "6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f";
    append_raw(
        &server.data_dir(),
        "account-crashed",
        "BalanceCharged",
        &json!({"type": "BalanceCharged", "v": 1, "job_id": orphan, "cents": 10, "at_ms": two_minutes_ago}),
        two_minutes_ago,
    );
    server.restart();

    // The charge went back: the 10 cents pay for an upload again.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let reply = server.upload(&key, &paths::corpus_file(clips::SHORT), &[]);
        if reply.status == 200 {
            break;
        }
        assert_eq!(reply.status, 402, "{}", reply.json());
        assert!(
            Instant::now() < deadline,
            "the charge of a job that was never recorded was not refunded: {}",
            reply.json()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    let history = server.scribe(&["replay", orphan]);
    let stderr = String::from_utf8_lossy(&history.stderr);
    assert!(
        !history.status.success() && stderr.contains("no job"),
        "no job was made up for the orphan charge: {stderr}"
    );
    assert!(server.logs().contains("a charge without a job"), "the refund is logged");
}

#[test]
fn an_unreadable_glossary_fails_the_job_saying_so() {
    let mut server = TestServer::start();
    let files = FileServer::start();
    let key = server.key().to_owned();
    let glossary = server.create_glossary(&key, &json!({"name": "Inauguration", "names": ["Kennedy"]}));
    let id = glossary["id"].as_str().expect("a glossary id").to_owned();
    server.stop();
    // A change of the glossary written by a newer Scribe: this one cannot decode it.
    append_raw(
        &server.data_dir(),
        &format!("glossary-{id}"),
        "GlossaryUpdated",
        &json!({"type": "GlossaryUpdated", "v": 99, "id": id}),
        now_ms(),
    );
    server.restart();

    let job = server.upload_ok(
        &key,
        &paths::corpus_file(clips::JFK),
        &[("glossaryId", &id), ("callbackUrl", &files.callback_url())],
    );
    let job_id = job["jobId"].as_str().unwrap();
    let payload = files.wait_for_callback(job_id, ASR_TIMEOUT);
    assert_eq!(payload["status"], "ERROR", "the job must not be transcribed without its glossary: {payload}");
    let msg = payload["errorMsg"].as_str().unwrap_or_default();
    assert!(msg.contains("glossary") && msg.contains(&id), "{msg}");
}
