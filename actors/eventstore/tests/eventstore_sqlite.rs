//! The event store contract run against the SQLite adapter on real files, plus the durability
//! promise: an append acknowledged before a SIGKILL is in the file afterwards.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

use scribe_eventstore::{EventStore, ExpectedVersion, NewEvent, SqliteEventStore, contract};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_store_passes_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_owned();
    contract::run_all(move |slot| {
        let path = root.join(format!("slot-{slot}"));
        async move { Arc::new(SqliteEventStore::open_in(&path).unwrap()) as Arc<dyn EventStore> }
    })
    .await;
}

#[tokio::test]
async fn the_file_uses_wal_and_the_documented_schema() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteEventStore::open_in(dir.path()).unwrap();
    store
        .append("job-1", ExpectedVersion::NoStream, vec![NewEvent::new("JobSubmitted", json!({"v": 1}))])
        .await
        .unwrap();
    let conn = rusqlite::Connection::open(store.path()).unwrap();
    let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    assert_eq!(mode, "wal");
    let row: (i64, String, i64, String, String) = conn
        .query_row("SELECT position, stream, version, type, data FROM events", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .unwrap();
    assert_eq!(row, (1, "job-1".into(), 0, "JobSubmitted".into(), r#"{"v":1}"#.into()));
}

#[tokio::test]
async fn a_corrupt_row_is_reported_not_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteEventStore::open_in(dir.path()).unwrap();
    store.append("job-1", ExpectedVersion::Any, vec![NewEvent::new("A", json!({}))]).await.unwrap();
    let conn = rusqlite::Connection::open(store.path()).unwrap();
    conn.execute("UPDATE events SET data = '{not json' WHERE position = 1", []).unwrap();
    let error = store.read_all(0, 10).await.unwrap_err();
    assert!(error.to_string().contains("position 1"), "{error}");
}

const CHILD_ENV: &str = "SCRIBE_TEST_SIGKILL_DIR";
const WRITERS: usize = 4;

/// Child half of the SIGKILL test: appends forever and prints each acknowledged append.
/// Does nothing unless started by `acknowledged_appends_survive_sigkill`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "helper process of acknowledged_appends_survive_sigkill"]
async fn sigkill_child() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let store = Arc::new(SqliteEventStore::open_in(Path::new(&dir)).unwrap());
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let store = store.clone();
            tokio::spawn(async move {
                let stream = format!("job-{w}");
                for version in 0u64.. {
                    let event = NewEvent::new("Tick", json!({"writer": w, "version": version}));
                    let appended = store
                        .append(&stream, ExpectedVersion::after(version.checked_sub(1)), vec![event])
                        .await
                        .unwrap();
                    let mut out = std::io::stdout().lock();
                    writeln!(out, "acked {stream} {} {}", appended.last_version, appended.position).unwrap();
                    out.flush().unwrap();
                }
            })
        })
        .collect();
    for writer in writers {
        writer.await.unwrap();
    }
}

#[tokio::test]
async fn acknowledged_appends_survive_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["sigkill_child", "--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut acked: HashMap<(String, u64), u64> = HashMap::new();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    while acked.len() < 300 {
        assert!(read_ack(&mut stdout, &mut acked), "the child stopped before 300 appends");
    }
    child.kill().unwrap(); // SIGKILL on Unix
    while read_ack(&mut stdout, &mut acked) {} // acks already in the pipe count too
    child.wait().unwrap();

    let store = SqliteEventStore::open_in(&PathBuf::from(dir.path())).unwrap();
    let all = store.read_all(0, usize::MAX).await.unwrap();
    for (i, e) in all.iter().enumerate() {
        assert_eq!(e.position, i as u64 + 1, "positions stay gapless after a kill");
    }
    let stored: HashMap<(String, u64), u64> = all.into_iter().map(|e| ((e.stream, e.version), e.position)).collect();
    for (key, position) in &acked {
        assert_eq!(stored.get(key), Some(position), "acknowledged append {key:?} must survive SIGKILL");
    }
    println!("{} acknowledged appends before SIGKILL, {} events in the reopened file", acked.len(), stored.len());
}

/// Reads one line of the child's output and records it if it is a complete ack. False at EOF.
fn read_ack(out: &mut impl BufRead, acked: &mut HashMap<(String, u64), u64>) -> bool {
    let mut line = String::new();
    if out.read_line(&mut line).unwrap() == 0 {
        return false;
    }
    let Some(rest) = line.strip_prefix("acked ").and_then(|l| l.strip_suffix('\n')) else {
        return true;
    };
    let fields: Vec<&str> = rest.split(' ').collect();
    if let [stream, version, position] = fields[..] {
        acked.insert((stream.to_owned(), version.parse().unwrap()), position.parse().unwrap());
    }
    true
}
