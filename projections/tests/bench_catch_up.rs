//! Benchmark (ignored by default; prints, asserts no timing): how fast the projection catches up
//! with a log of many jobs, live and by `rebuild`.
//! Run: `cargo test --release -p scribe-projections --test bench_catch_up -- --ignored --nocapture`
//! (`SCRIBE_BENCH_JOBS` sets the number of jobs, default 5000).

use std::sync::Arc;
use std::time::{Duration, Instant};

use scribe_domain::ids::{JobId, UserName, job_stream};
use scribe_domain::job::{self, JobCommand, JobState, NewMedia, StoredMedia};
use scribe_domain::requests::JobParams;
use scribe_domain::{Aggregate, VersionedEvent};
use scribe_eventstore::{EventStore, ExpectedVersion, NewEvent, SqliteEventStore};
use scribe_projections::{Projection, ReadModels, rebuild};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark; run with --ignored --nocapture"]
async fn catch_up_throughput() {
    let jobs: usize = std::env::var("SCRIBE_BENCH_JOBS").ok().and_then(|v| v.parse().ok()).unwrap_or(5000);
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn EventStore> = Arc::new(SqliteEventStore::open_in(dir.path()).unwrap());
    let owner = UserName::parse("bench").unwrap();
    let mut at_ms = 1_763_000_000_000u64;
    for i in 0..jobs {
        let job_id = JobId::parse(&format!("job-{i:07}")).unwrap();
        let mut state = JobState::default();
        let mut events = Vec::new();
        let commands = [
            JobCommand::Submit {
                job_id: job_id.clone(),
                owner: owner.clone(),
                at_ms,
                request: JobParams::default().validate().unwrap(),
                source: NewMedia::Upload {
                    filename: "jfk.wav".into(),
                    media: StoredMedia { path: format!("media/{job_id}"), bytes: 352_844 },
                },
            },
            JobCommand::RecordMediaProbed { duration_ms: 11_000, fails_with: None, at_ms },
            JobCommand::StartTranscription { at_ms },
            JobCommand::RecordTranscript { path: format!("t/{job_id}"), detected_language: None, words: 22, at_ms },
            JobCommand::Complete { at_ms },
        ];
        for command in commands {
            for event in job::JobAggregate::decide(&state, command).unwrap() {
                state = job::evolve(state, &event);
                events.push(NewEvent::new(event.event_type(), event.encode()));
            }
        }
        store.append(&job_stream(&job_id), ExpectedVersion::NoStream, events).await.unwrap();
        at_ms += 7;
    }
    let head = store.head_position().await.unwrap();

    let started = Instant::now();
    let read_models = ReadModels::open(dir.path()).unwrap();
    let projection = Projection::start(store.clone(), read_models.clone()).await.unwrap();
    assert!(read_models.wait_for(head, Duration::from_secs(600)).await);
    let live = started.elapsed();
    projection.stop().await;
    drop(read_models);

    let started = Instant::now();
    let report = rebuild(store, dir.path()).await.unwrap();
    let rebuilt = started.elapsed();
    assert_eq!(report.position, head);

    let rate = |d: Duration| head as f64 / d.as_secs_f64();
    println!(
        "{jobs} jobs, {head} events: live catch-up {:.2} s ({:.0} events/s), rebuild {:.2} s ({:.0} events/s)",
        live.as_secs_f64(),
        rate(live),
        rebuilt.as_secs_f64(),
        rate(rebuilt)
    );
}
