//! `scribe-bench eventstore`: append and subscribe throughput of each event store on this machine,
//! with the embedded SQLite file as the anchor measured in the same run. PostgreSQL runs on a
//! throwaway cluster (fsync on, as in production) unless `--postgres URL` names a server;
//! KurrentDB runs only when `--kurrentdb URL` names one.
//!
//! For each store: serial appends (one writer, one event per append: each waits for its own
//! durable commit), concurrent appends (many writers, each on its own stream, as many jobs at
//! once), catch-up (a subscription from 0 reading the whole log) and live delivery (a
//! subscription following the writers of the concurrent round, until it has seen their last
//! event).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use futures::StreamExt;
use scribe_eventstore::throwaway_postgres::ThrowawayPostgres;
use scribe_eventstore::{
    EventStore, ExpectedVersion, KurrentDbEventStore, NewEvent, PostgresEventStore, SqliteEventStore,
};
use serde_json::json;

use crate::env::in_scratch_dir;

#[derive(clap::Args, Debug)]
pub struct BenchEventStoreArgs {
    /// Appends of the serial round (one event each).
    #[arg(long, default_value_t = 1000)]
    pub serial: usize,
    /// Events of the concurrent round (one event per append).
    #[arg(long, default_value_t = 20000)]
    pub events: usize,
    /// Concurrent writers in the concurrent round.
    #[arg(long, default_value_t = 16)]
    pub writers: usize,
    /// Benchmark this PostgreSQL database instead of a throwaway cluster (its scribe_events
    /// table gets the benchmark's events: never point this at production).
    #[arg(long)]
    pub postgres: Option<String>,
    /// Also benchmark this KurrentDB server (streams in a fresh `scribe-bench-...:` namespace).
    #[arg(long)]
    pub kurrentdb: Option<String>,
    /// Directory for the SQLite file. Default: the system temp directory.
    #[arg(long)]
    pub work_dir: Option<PathBuf>,
}

/// What one store achieved.
struct Measured {
    name: String,
    serial_per_s: f64,
    concurrent_per_s: f64,
    catch_up_per_s: f64,
    live_per_s: f64,
}

pub fn run(args: BenchEventStoreArgs) -> anyhow::Result<()> {
    if args.serial == 0 || args.events == 0 || args.writers == 0 {
        bail!("--serial, --events and --writers must be positive");
    }
    in_scratch_dir(args.work_dir.clone(), "eventstore", |work| {
        let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
        runtime.block_on(async {
            let mut results = Vec::new();
            let sqlite: Arc<dyn EventStore> = Arc::new(SqliteEventStore::open_in(&work.join("sqlite"))?);
            results.push(measure("SQLite (embedded file)", sqlite, &args).await?);

            let _cluster;
            let (name, url) = match &args.postgres {
                Some(url) => ("PostgreSQL (given server)", url.clone()),
                None => {
                    let cluster = tokio::task::spawn_blocking(|| ThrowawayPostgres::start(true))
                        .await?
                        .context("starting a throwaway PostgreSQL cluster")?;
                    let url = cluster.create_database("bench").await?;
                    _cluster = cluster;
                    ("PostgreSQL (throwaway local cluster, fsync on)", url)
                }
            };
            let postgres: Arc<dyn EventStore> = Arc::new(PostgresEventStore::connect(&url).await?);
            results.push(measure(name, postgres, &args).await?);

            if let Some(url) = &args.kurrentdb {
                let namespace = format!("scribe-bench-{}-{}:", std::process::id(), now_ms());
                let kurrent: Arc<dyn EventStore> = Arc::new(KurrentDbEventStore::connect(url, Some(&namespace)).await?);
                results.push(measure("KurrentDB (given server)", kurrent, &args).await?);
            } else {
                println!("KurrentDB: not measured (give --kurrentdb esdb://host:2113?tls=false)");
            }
            report(&results, &args);
            anyhow::Ok(())
        })
    })
}

async fn measure(name: &str, store: Arc<dyn EventStore>, args: &BenchEventStoreArgs) -> anyhow::Result<Measured> {
    eprintln!("measuring {name} ...");
    let start_head = store.head_position().await?;
    // Fresh stream names, so that a run against a given server that already holds a run works.
    let run = now_ms();

    let started = Instant::now();
    for i in 0..args.serial {
        store.append(&format!("bench-{run}-serial"), ExpectedVersion::Any, vec![event(i)]).await?;
    }
    let serial_per_s = rate(args.serial, started.elapsed());

    // The live subscriber starts at the head, before the writers.
    let live_from = store.head_position().await?;
    let mut live = store.subscribe_all(live_from);
    let total = args.events;
    let follower = tokio::spawn(async move {
        let mut seen = 0usize;
        while seen < total {
            match live.next().await {
                Some(Ok(_)) => seen += 1,
                Some(Err(e)) => return Err(anyhow::anyhow!("the live subscription failed: {e}")),
                None => bail!("the live subscription ended after {seen} events"),
            }
        }
        Ok(Instant::now())
    });
    let started = Instant::now();
    let per_writer = args.events.div_ceil(args.writers);
    let mut writers = Vec::new();
    for w in 0..args.writers {
        let store = store.clone();
        let count = per_writer.min(args.events.saturating_sub(w * per_writer));
        writers.push(tokio::spawn(async move {
            let stream = format!("bench-{run}-job-{w}");
            for i in 0..count {
                let expected = ExpectedVersion::after(i.checked_sub(1).map(|v| v as u64));
                store.append(&stream, expected, vec![event(i)]).await?;
            }
            anyhow::Ok(())
        }));
    }
    for writer in writers {
        writer.await??;
    }
    let concurrent_per_s = rate(args.events, started.elapsed());
    let live_done = tokio::time::timeout(Duration::from_secs(600), follower)
        .await
        .context("the live subscription did not see every event within 10 minutes")???;
    let live_per_s = rate(args.events, live_done - started);

    let expected = args.serial + args.events;
    let started = Instant::now();
    let mut log = store.subscribe_all(start_head);
    let mut seen = 0usize;
    while seen < expected {
        match log.next().await {
            Some(Ok(_)) => seen += 1,
            Some(Err(e)) => bail!("the catch-up subscription failed: {e}"),
            None => bail!("the catch-up subscription ended after {seen} events"),
        }
    }
    let catch_up_per_s = rate(expected, started.elapsed());
    Ok(Measured { name: name.to_owned(), serial_per_s, concurrent_per_s, catch_up_per_s, live_per_s })
}

fn report(results: &[Measured], args: &BenchEventStoreArgs) {
    let anchor = &results[0];
    println!();
    println!(
        "event store throughput ({} serial appends; {} events from {} concurrent writers; one event per append)",
        args.serial, args.events, args.writers
    );
    println!(
        "{:<48} {:>16} {:>18} {:>16} {:>18}",
        "store", "serial append/s", "concurrent ev/s", "live ev/s", "catch-up ev/s"
    );
    for m in results {
        println!(
            "{:<48} {:>16.0} {:>18.0} {:>16.0} {:>18.0}",
            m.name, m.serial_per_s, m.concurrent_per_s, m.live_per_s, m.catch_up_per_s
        );
    }
    for m in &results[1..] {
        println!(
            "{} / SQLite: serial {:.2}x, concurrent {:.2}x, live {:.2}x, catch-up {:.2}x",
            m.name,
            m.serial_per_s / anchor.serial_per_s,
            m.concurrent_per_s / anchor.concurrent_per_s,
            m.live_per_s / anchor.live_per_s,
            m.catch_up_per_s / anchor.catch_up_per_s
        );
    }
}

fn event(i: usize) -> NewEvent {
    NewEvent::new(
        "TranscriptionStarted",
        json!({"type": "TranscriptionStarted", "v": 1, "n": i, "model": "whisper-base", "language": "en"}),
    )
}

fn rate(count: usize, elapsed: Duration) -> f64 {
    count as f64 / elapsed.as_secs_f64().max(1e-9)
}

fn now_ms() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis())
}
