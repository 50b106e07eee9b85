//! Event store throughput on a real file, printed (never asserted: timings vary by machine).
//! Run: `cargo test --release -p scribe-eventstore --test eventstore_bench -- --ignored --nocapture`
//! Env `SCRIBE_BENCH_JOBS` (default 100000) sets how many job streams of 5 events are written.

use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;
use scribe_eventstore::{EventStore, ExpectedVersion, NewEvent, SqliteEventStore};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark; prints timings"]
async fn eventstore_throughput() {
    let jobs: u64 = std::env::var("SCRIBE_BENCH_JOBS").ok().and_then(|v| v.parse().ok()).unwrap_or(100_000);
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteEventStore::open_in(dir.path()).unwrap());

    // One writer, one event per append: every append waits for its own fsync.
    let started = Instant::now();
    for i in 0..1000u64 {
        store.append("bench-serial", ExpectedVersion::Any, vec![event(i)]).await.unwrap();
    }
    let serial = started.elapsed();
    println!("serial appends:     1000 in {serial:?} ({:.0}/s)", 1000.0 / serial.as_secs_f64());

    // Many jobs at once, as in a busy server: 64 concurrent writers share commits.
    let started = Instant::now();
    let writers: Vec<_> = (0..64u64)
        .map(|w| {
            let store = store.clone();
            tokio::spawn(async move {
                for job in (w..jobs).step_by(64) {
                    let stream = format!("job-{job}");
                    let mut version = None;
                    for step in 0..5u64 {
                        let appended =
                            store.append(&stream, ExpectedVersion::after(version), vec![event(step)]).await.unwrap();
                        version = Some(appended.last_version);
                    }
                }
            })
        })
        .collect();
    for writer in writers {
        writer.await.unwrap();
    }
    let concurrent = started.elapsed();
    let appends = jobs * 5;
    println!(
        "concurrent appends: {appends} ({jobs} jobs x 5) in {concurrent:?} ({:.0}/s)",
        appends as f64 / concurrent.as_secs_f64()
    );

    // Replay the whole log, as projections do on a rebuild.
    let head = store.head_position().await.unwrap();
    let started = Instant::now();
    let mut replay = store.subscribe_all(0);
    let mut seen = 0u64;
    while seen < head {
        let e = replay.next().await.unwrap().unwrap();
        seen += 1;
        assert_eq!(e.position, seen);
    }
    let replayed = started.elapsed();
    println!("replay subscribe_all: {seen} events in {replayed:?} ({:.0}/s)", seen as f64 / replayed.as_secs_f64());

    let started = Instant::now();
    for job in (0..jobs).step_by((jobs / 1000).max(1) as usize) {
        assert_eq!(store.read_stream(&format!("job-{job}"), 0).await.unwrap().len(), 5);
    }
    println!("read_stream: 1000 job streams in {:?}", started.elapsed());
    let size = std::fs::metadata(store.path()).unwrap().len();
    println!("file size: {:.1} MB for {head} events", size as f64 / 1e6);
}

fn event(step: u64) -> NewEvent {
    NewEvent::new(
        "Step",
        json!({"type": "Step", "v": 1, "step": step, "jobId": "0f8c2d1e-1b2c-4d5e-8f90-123456789abc"}),
    )
}
