//! `scribe-bench restart`: how long a server with a long history takes to serve again. Writes
//! the histories of N finished jobs (default 100 000) into a fresh event log, decided by the same
//! domain rules the service uses (submitted with its file, probed, transcribed, done), then
//! starts `scribe serve` on it twice: first with no read models (they are built from the whole
//! log, as after `scribe rebuild` or an upgrade), then again with the read models it left
//! (checkpointed). For each start it prints the time until the server listens, until it answers
//! `GET /jobs`, and until the newest job's status is served, which needs the read models to have
//! caught up with the log, and until the job pipeline has read the whole log and takes new work.
//! The design's goal, for the restart: serves requests within seconds.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::bail;
use futures::StreamExt;
use scribe_actors::runtime::open_event_store;
use scribe_domain::Aggregate;
use scribe_domain::VersionedEvent;
use scribe_domain::ids::{JobId, UserName, job_stream};
use scribe_domain::job::{JobAggregate, JobCommand, NewMedia, StoredMedia};
use scribe_domain::requests::JobParams;
use scribe_eventstore::{EventStore, ExpectedVersion, NewEvent};

use crate::env::{bench_key, in_scratch_dir};
use crate::server_process::ServerProcess;

/// The design document's "within seconds", read as this many.
const GOAL: Duration = Duration::from_secs(10);
/// What the server logs once its job pipeline has read the whole log and starts work again.
const PIPELINE_CAUGHT_UP: &str = "pipeline caught up with the log";
/// Jobs appended at once while writing the history (the store commits concurrent appends together).
const WRITERS: usize = 64;

#[derive(clap::Args, Debug)]
pub struct BenchRestartArgs {
    /// Finished jobs in the history.
    #[arg(long, default_value_t = 100_000)]
    pub jobs: usize,
    /// Directory for the server's data. Default: the system temp directory.
    #[arg(long)]
    pub work_dir: Option<PathBuf>,
    /// Directory holding the models the server loads (as for `scribe serve`).
    #[arg(long, env = "SCRIBE_MODELS_DIR")]
    pub models_dir: Option<PathBuf>,
}

pub fn run(args: BenchRestartArgs) -> anyhow::Result<()> {
    if args.jobs == 0 {
        bail!("--jobs must be at least 1");
    }
    in_scratch_dir(args.work_dir.clone(), "restart", |work| bench(&args, work))
}

fn bench(args: &BenchRestartArgs, work: &Path) -> anyhow::Result<()> {
    let data_dir = work.join("data");
    let key = bench_key(&data_dir)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;

    eprintln!("writing the histories of {} finished jobs ...", args.jobs);
    let started = Instant::now();
    let (events, newest) = runtime.block_on(write_history(&data_dir, args.jobs))?;
    let log_bytes = std::fs::metadata(data_dir.join(scribe_eventstore::sqlite::FILE_NAME))?.len();
    println!(
        "history: {} jobs, {events} events, event log {:.0} MB, written in {:.1} s",
        args.jobs,
        log_bytes as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );

    let models_dir = args.models_dir.clone().unwrap_or_else(crate::default_models_dir);
    let client = reqwest::Client::new();
    let mut restart = Duration::ZERO;
    for (label, stderr) in [
        ("first start, read models built from the log", "serve-1.stderr"),
        ("restart, checkpointed read models", "serve-2.stderr"),
    ] {
        let launched = Instant::now();
        let mut server = ServerProcess::start(&data_dir, &models_dir, &[], &work.join(stderr))?;
        let listening = launched.elapsed();
        let base = format!("http://{}/api", server.addr);
        runtime.block_on(wait_for(&client, &format!("{base}/jobs?apiKey={key}&pageSize=1"), |_| true))?;
        let listed = launched.elapsed();
        let status_url = format!("{base}/jobs/status?apiKey={key}&jobId={newest}");
        runtime.block_on(wait_for(&client, &status_url, |body| body.contains("\"DONE\"")))?;
        let served = launched.elapsed();
        wait_for_line(&work.join(stderr), PIPELINE_CAUGHT_UP)?;
        let resumed = launched.elapsed();
        println!(
            "{label}: listening after {:.2} s, GET /jobs answered after {:.2} s, the newest job's status after {:.2} s; the pipeline had read the log (new work starts) after {:.2} s",
            listening.as_secs_f64(),
            listed.as_secs_f64(),
            served.as_secs_f64(),
            resumed.as_secs_f64()
        );
        // The last start is the restart the goal is about: serving, and new work started.
        restart = served.max(resumed);
        server.terminate(Duration::from_secs(30))?;
    }
    println!(
        "restart: serving and working again after {:.2} s (goal: within {} s): {}",
        restart.as_secs_f64(),
        GOAL.as_secs(),
        if restart <= GOAL { "met" } else { "NOT met" }
    );
    Ok(())
}

/// Appends `jobs` finished jobs owned by `bench`; returns the number of events and the id of
/// the newest job.
pub(super) async fn write_history(data_dir: &Path, jobs: usize) -> anyhow::Result<(usize, JobId)> {
    let store = open_event_store(data_dir)?;
    let owner = UserName::parse("bench").map_err(|e| anyhow::anyhow!("{}", e.message))?;
    let request = JobParams::default().validate().map_err(|e| anyhow::anyhow!("{}", e.message))?;
    let histories = (0..jobs).map(|i| history(i, &owner, &request));
    let mut events = 0;
    let mut newest = None;
    // Oldest first, so that the newest job is the one created last.
    let mut appends = futures::stream::iter(histories)
        .map(|(job_id, new_events)| append(Arc::clone(&store), job_id, new_events))
        .buffered(WRITERS);
    while let Some(appended) = appends.next().await {
        let (job_id, n) = appended?;
        events += n;
        newest = Some(job_id);
    }
    Ok((events, newest.expect("at least one job")))
}

async fn append(store: Arc<dyn EventStore>, job_id: JobId, events: Vec<NewEvent>) -> anyhow::Result<(JobId, usize)> {
    let n = events.len();
    store.append(&job_stream(&job_id), ExpectedVersion::after(None), events).await?;
    Ok((job_id, n))
}

/// The events of one direct transcription job from upload to `DONE`, as the service decides them.
fn history(index: usize, owner: &UserName, request: &scribe_domain::requests::JobRequest) -> (JobId, Vec<NewEvent>) {
    let job_id = JobId::parse(&format!("bench-{index:07}")).expect("a valid job id");
    let at_ms = 1_700_000_000_000 + index as u64 * 1000;
    let commands = [
        JobCommand::Submit {
            job_id: job_id.clone(),
            owner: owner.clone(),
            at_ms,
            request: request.clone(),
            source: NewMedia::Upload {
                filename: format!("interview-{index}.mp3"),
                media: StoredMedia { path: format!("media/{job_id}/interview-{index}.mp3"), bytes: 12_345_678 },
            },
        },
        JobCommand::RecordMediaProbed { duration_ms: 754_000, fails_with: None, at_ms: at_ms + 200 },
        JobCommand::StartTranscription { at_ms: at_ms + 300 },
        JobCommand::RecordTranscript {
            path: format!("transcripts/{job_id}.json"),
            detected_language: None,
            words: 1_800,
            at_ms: at_ms + 60_000,
        },
        JobCommand::Complete { at_ms: at_ms + 60_001 },
    ];
    let mut state = <JobAggregate as Aggregate>::State::default();
    let mut events = Vec::new();
    for command in commands {
        let decided = JobAggregate::decide(&state, command).expect("the domain accepts a job's normal course");
        for event in decided {
            events.push(NewEvent::new(event.event_type(), event.encode()));
            state = JobAggregate::evolve(state, &event);
        }
    }
    (job_id, events)
}

/// Polls `url` until it answers 200 with a body `ready` accepts.
async fn wait_for(client: &reqwest::Client, url: &str, ready: impl Fn(&str) -> bool) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        if let Ok(response) = client.get(url).send().await
            && response.status().is_success()
            && ready(&response.text().await.unwrap_or_default())
        {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("{url} did not answer as expected within 10 minutes");
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Waits until the file at `path` (one server start's stderr) holds `needle`.
fn wait_for_line(path: &Path, needle: &str) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(600);
    while !std::fs::read_to_string(path).unwrap_or_default().contains(needle) {
        if Instant::now() > deadline {
            bail!("the server did not log {needle:?} within 10 minutes (see {})", path.display());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(())
}
