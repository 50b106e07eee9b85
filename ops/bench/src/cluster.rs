//! `scribe-bench cluster`: several `scribe serve` nodes on one PostgreSQL event store and one
//! shared media directory, on loopback ports of this machine.
//!
//! The check (always run): `--nodes` nodes share a throwaway PostgreSQL cluster (or `--postgres`)
//! and a media directory; jobs are submitted to every node in turn (uploads and URL jobs, some
//! that must fail, all with a `callbackUrl` to a local receiver); as soon as the last node holds
//! a claim on a transcription it is SIGKILLed. The others must finish everything: then every job
//! is `DONE` or `ERROR` as its media says, with exactly one terminal event in the log; every
//! callback arrived exactly once (one POST per job, one `webhook-id` per job); every failed job
//! was refunded exactly once; the surviving nodes list the same jobs, and each one's read models
//! equal a rebuild from the log. Exits non-zero otherwise, so the short version is a test.
//!
//! With `--throughput N`: N speech uploads are transcribed by 1, 2, ... `--nodes` nodes in turn,
//! on the same history, and jobs per hour are printed with the one-node run as the anchor; then
//! the append and subscribe throughput of SQLite and of this PostgreSQL (see `bench eventstore`).

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use poem::listener::{Acceptor, Listener, TcpListener};
use poem::web::{Data, Json, Path as UrlPath};
use poem::{EndpointExt, Response, Route, handler};
use scribe_domain::VersionedEvent;
use scribe_domain::account::AccountEvent;
use scribe_domain::ids::{JobId, UserName, account_stream, job_stream};
use scribe_domain::job::{JobEvent, Stage};
use scribe_eventstore::throwaway_postgres::ThrowawayPostgres;
use scribe_eventstore::{EventStore, StoreLocation};
use serde_json::Value;

use crate::server_process::ServerProcess;

#[derive(clap::Args, Debug, Clone)]
pub struct BenchClusterArgs {
    /// Nodes sharing the store (at least 2 for the check).
    #[arg(long, default_value_t = 3)]
    pub nodes: usize,
    /// Jobs of the check, submitted to the nodes in turn (a third are URL jobs, a third fail).
    #[arg(long, default_value_t = 9)]
    pub jobs: usize,
    /// Also measure jobs per hour with 1..=nodes nodes, on this many speech uploads each.
    #[arg(long)]
    pub throughput: Option<usize>,
    /// How long a node's claim lasts unless renewed (short, so the check does not wait long for
    /// the killed node's work).
    #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
    pub claim_lease: Duration,
    /// How long the survivors may take to settle every job and callback.
    #[arg(long, default_value = "10m", value_parser = humantime::parse_duration)]
    pub settle_timeout: Duration,
    /// Whisper model, by name under the models directory.
    #[arg(long, default_value = "whisper-tiny.en")]
    pub model: String,
    /// Directory holding the models installed by `ops/setup.sh`.
    #[arg(long, env = "SCRIBE_MODELS_DIR")]
    pub models_dir: Option<PathBuf>,
    /// Speech corpus [default: ../shared/corpus].
    #[arg(long, env = "SCRIBE_CORPUS_DIR")]
    pub corpus: Option<PathBuf>,
    /// Use this PostgreSQL database instead of a throwaway cluster (it gets the benchmark's jobs:
    /// never point this at production).
    #[arg(long)]
    pub postgres: Option<String>,
    /// Where the nodes' directories and logs go [default: the system temp directory]; kept if a
    /// check fails.
    #[arg(long)]
    pub work_dir: Option<PathBuf>,
}

/// What a job is made of, and how it must end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    UploadSpeech,
    UrlSpeech,
    UploadTruncated,
}

impl Kind {
    fn expected(self) -> &'static str {
        match self {
            Kind::UploadSpeech | Kind::UrlSpeech => "DONE",
            Kind::UploadTruncated => "ERROR",
        }
    }
}

/// A job a node accepted.
#[derive(Debug, Clone)]
struct Accepted {
    job_id: String,
    kind: Kind,
    node: usize,
}

/// The local peer: serves media and receives callbacks (always acknowledging them).
struct Peer {
    addr: String,
    audio: PathBuf,
    /// Every callback POST received: (jobId, webhook-id).
    received: Mutex<Vec<(String, String)>>,
}

/// One running node.
struct Node {
    process: ServerProcess,
    name: String,
    data_dir: PathBuf,
    id: String,
    base: String,
}

/// The common part of every node's command line.
struct NodeSetup {
    work: PathBuf,
    models_dir: PathBuf,
    args: Vec<String>,
}

pub fn run(args: BenchClusterArgs) -> anyhow::Result<()> {
    if args.nodes < 2 || args.jobs == 0 {
        bail!("--nodes must be at least 2 and --jobs at least 1");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    runtime.block_on(bench(args))
}

async fn bench(args: BenchClusterArgs) -> anyhow::Result<()> {
    let corpus = args.corpus.clone().unwrap_or_else(|| PathBuf::from("../shared/corpus"));
    let audio = corpus.join("audio");
    for file in ["en_jfk.wav", "variants/corrupt_truncated.mp3"] {
        if !audio.join(file).is_file() {
            bail!("{} is missing (pass --corpus or set SCRIBE_CORPUS_DIR)", audio.join(file).display());
        }
    }
    let models_dir = args.models_dir.clone().unwrap_or_else(crate::default_models_dir);
    let work = args
        .work_dir
        .clone()
        .unwrap_or_else(std::env::temp_dir)
        .join(format!("scribe-bench-cluster-{}", std::process::id()));
    std::fs::create_dir_all(&work).with_context(|| format!("cannot create {}", work.display()))?;
    eprintln!("nodes' directories and logs in {}", work.display());

    let _cluster;
    let url = match &args.postgres {
        Some(url) => url.clone(),
        None => {
            let cluster = tokio::task::spawn_blocking(|| ThrowawayPostgres::start(false))
                .await?
                .context("starting a throwaway PostgreSQL cluster")?;
            let url = cluster.create_database("scribe").await?;
            _cluster = cluster;
            url
        }
    };
    let location = StoreLocation::Postgres(url.clone());
    let store = location.open().await?;
    let shared_media = work.join("shared-media");
    let setup = NodeSetup {
        work: work.clone(),
        models_dir: models_dir.clone(),
        args: [
            "--event-store",
            &url,
            "--media-dir",
            &shared_media.to_string_lossy(),
            "--claim-lease",
            &humantime::format_duration(args.claim_lease).to_string(),
            "--allow-private-urls",
            "true",
            "--callback-retries",
            "300ms,1s",
            "--asr-workers",
            "1",
            "--rate-per-second",
            "1000",
            "--rate-burst",
            "1000",
            "--model-dir",
            &models_dir.join(&args.model).to_string_lossy(),
        ]
        .map(String::from)
        .to_vec(),
    };
    let peer = Peer::start(audio).await?;

    let outcome = check(&args, &setup, &location, store.as_ref(), &peer).await;
    let outcome = match (outcome, args.throughput) {
        (Ok(()), Some(jobs)) => throughput(&args, &setup, &peer, jobs, &url).await,
        (other, _) => other,
    };
    match outcome {
        Ok(()) => {
            std::fs::remove_dir_all(&work).ok();
            Ok(())
        }
        Err(e) => Err(e.context(format!("cluster bench failed; nodes' data and logs kept in {}", work.display()))),
    }
}

/// The check: see the module documentation.
async fn check(
    args: &BenchClusterArgs,
    setup: &NodeSetup,
    location: &StoreLocation,
    store: &dyn EventStore,
    peer: &Arc<Peer>,
) -> anyhow::Result<()> {
    let mut nodes = Vec::new();
    for n in 0..args.nodes {
        nodes.push(start_node(setup, &format!("check-{n}")).await?);
    }
    let key = nodes[0].process.first_key.clone();
    if key.is_empty() {
        bail!("the first node printed no API key (was the database empty?)");
    }
    let owner = UserName::parse("admin").map_err(|e| anyhow::anyhow!("{}", e.message))?;
    let http = reqwest::Client::new();
    let mut accepted = Vec::new();
    let kinds = [Kind::UploadSpeech, Kind::UrlSpeech, Kind::UploadTruncated];
    for i in 0..args.jobs {
        let node = i % nodes.len();
        let kind = kinds[i % kinds.len()];
        let job_id = submit(&http, &nodes[node].base, &key, peer, kind).await?;
        accepted.push(Accepted { job_id, kind, node });
    }
    eprintln!("{} jobs submitted to {} nodes", accepted.len(), nodes.len());

    // Kill the first node seen running the transcription of speech (it takes seconds).
    let speech: Vec<String> =
        accepted.iter().filter(|j| j.kind != Kind::UploadTruncated).map(|j| format!("job-{}", j.job_id)).collect();
    let deadline = Instant::now() + Duration::from_secs(300);
    let (taken, victim) = loop {
        if let Some((job, holder)) = transcribing(store, &speech).await?
            && let Some(victim) = nodes.iter().position(|n| n.id == holder)
        {
            break (job, victim);
        }
        if Instant::now() > deadline {
            bail!("no node was seen transcribing within 5 minutes");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let mut killed = nodes.remove(victim);
    tokio::task::spawn_blocking(move || killed.process.kill()).await?;
    eprintln!("SIGKILLed node {victim} while it transcribed job {taken}");

    // The survivors settle everything.
    let deadline = Instant::now() + args.settle_timeout;
    let statuses = loop {
        let statuses: HashMap<String, String> = list_all(&http, &nodes[0].base, &key)
            .await?
            .into_iter()
            .map(|(id, job)| (id, job["status"].as_str().unwrap_or_default().to_string()))
            .collect();
        let open = accepted.iter().filter(|j| !statuses.get(&j.job_id).is_some_and(|s| is_terminal(s))).count();
        let called: usize = {
            let received = peer.received.lock().unwrap();
            accepted.iter().filter(|j| received.iter().any(|(id, _)| *id == j.job_id)).count()
        };
        if (open == 0 && called == accepted.len()) || Instant::now() > deadline {
            break statuses;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    // Late duplicates, if any, would arrive within a retry or two.
    tokio::time::sleep(Duration::from_secs(3)).await;

    // The log.
    let charges = account_history(store, &owner).await?;
    let (mut doubled, mut refunds_wrong, mut taken_over) = (Vec::new(), Vec::new(), 0);
    for job in &accepted {
        let id = JobId::parse(&job.job_id).map_err(|e| anyhow::anyhow!("{}", e.message))?;
        let events = store.read_stream(&job_stream(&id), 0).await?;
        let terminal = events.iter().filter(|e| matches!(e.event_type.as_str(), "JobCompleted" | "JobFailed")).count();
        if terminal != 1 {
            doubled.push(format!("{} has {terminal} terminal events", job.job_id));
        }
        let claimants: Vec<String> = events
            .iter()
            .filter_map(|e| match JobEvent::decode(&e.data) {
                Ok(JobEvent::WorkClaimed { stage: Stage::Transcribe, node, .. }) => Some(node),
                _ => None,
            })
            .collect();
        if claimants.windows(2).any(|w| w[0] != w[1]) {
            taken_over += 1;
        }
        let refunds = charges.get(&job.job_id).map_or(0, |c| c.1);
        let wanted = usize::from(job.kind == Kind::UploadTruncated);
        if refunds != wanted {
            refunds_wrong.push(format!("{} ({:?}) refunded {refunds} times", job.job_id, job.kind));
        }
    }
    let lost: Vec<&Accepted> =
        accepted.iter().filter(|j| !statuses.get(&j.job_id).is_some_and(|s| is_terminal(s))).collect();
    let wrong: Vec<&Accepted> = accepted
        .iter()
        .filter(|j| statuses.get(&j.job_id).is_some_and(|s| is_terminal(s) && s != j.kind.expected()))
        .collect();
    let received = peer.received.lock().unwrap().clone();
    let mut per_job: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (job, hook) in &received {
        per_job.entry(job).or_default().push(hook);
    }
    let not_once: Vec<String> = accepted
        .iter()
        .filter(|j| per_job.get(j.job_id.as_str()).is_none_or(|hooks| hooks.len() != 1))
        .map(|j| format!("{}: {:?}", j.job_id, per_job.get(j.job_id.as_str())))
        .collect();

    // Read models: the survivors agree, and each equals a rebuild from the log.
    let listed = list_all(&http, &nodes[0].base, &key).await?;
    let mut agree = true;
    for node in &nodes[1..] {
        agree &= list_all(&http, &node.base, &key).await? == listed;
    }
    let mut rebuilt_equal = true;
    for node in nodes {
        let before = list_all(&http, &node.base, &key).await?;
        stop(node.process).await?;
        crate::rebuild_read_models(&node.data_dir, location).await?;
        let restarted = start_node(setup, &node.name).await?;
        rebuilt_equal &= list_all(&http, &restarted.base, &key).await? == before;
        stop(restarted.process).await?;
    }

    println!(
        "nodes {}, jobs {}, killed 1 mid-transcription, taken over {}, lost {}, doubled {}, unexpected outcome {}, \
         callbacks {} received for {} jobs (not exactly once: {}), refunds wrong {}, survivors {}, read models {}",
        args.nodes,
        accepted.len(),
        taken_over,
        lost.len(),
        doubled.len(),
        wrong.len(),
        received.len(),
        per_job.len(),
        not_once.len(),
        refunds_wrong.len(),
        if agree { "agree" } else { "DISAGREE" },
        if rebuilt_equal { "equal a rebuild" } else { "DIFFER from a rebuild" },
    );
    for line in lost.iter().map(|j| format!("lost: {} ({:?}) {:?}", j.job_id, j.kind, statuses.get(&j.job_id))) {
        println!("{line}");
    }
    for j in &wrong {
        println!(
            "unexpected: {} ({:?}, submitted to node {}) ended {:?}",
            j.job_id,
            j.kind,
            j.node,
            statuses.get(&j.job_id)
        );
    }
    for line in doubled.iter().chain(&not_once).chain(&refunds_wrong) {
        println!("{line}");
    }
    if !lost.is_empty()
        || !doubled.is_empty()
        || !wrong.is_empty()
        || !not_once.is_empty()
        || !refunds_wrong.is_empty()
        || !agree
        || !rebuilt_equal
        || taken_over == 0
    {
        bail!("the cluster check failed");
    }
    Ok(())
}

/// Jobs per hour with 1..=nodes nodes on the same history, then the stores' throughput.
async fn throughput(
    args: &BenchClusterArgs,
    setup: &NodeSetup,
    peer: &Arc<Peer>,
    jobs: usize,
    url: &str,
) -> anyhow::Result<()> {
    let http = reqwest::Client::new();
    let mut rates = Vec::new();
    for count in 1..=args.nodes {
        let mut nodes = Vec::new();
        for n in 0..count {
            nodes.push(start_node(setup, &format!("throughput-{count}-{n}")).await?);
        }
        let key = bench_key(url, &format!("bench{count}"))?;
        let started = Instant::now();
        let mut ids = Vec::new();
        for i in 0..jobs {
            ids.push(submit(&http, &nodes[i % count].base, &key, peer, Kind::UploadSpeech).await?);
        }
        let deadline = Instant::now() + args.settle_timeout;
        loop {
            let listed = list_all(&http, &nodes[0].base, &key).await?;
            if ids.iter().all(|id| listed.get(id).is_some_and(|j| j["status"] == "DONE")) {
                break;
            }
            if Instant::now() > deadline {
                bail!("{count} nodes did not finish {jobs} jobs within {:?}", args.settle_timeout);
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let elapsed = started.elapsed();
        let per_hour = jobs as f64 / elapsed.as_secs_f64() * 3600.0;
        eprintln!("{count} node(s): {jobs} jobs in {:.1} s", elapsed.as_secs_f64());
        rates.push((count, per_hour));
        for node in nodes {
            stop(node.process).await?;
        }
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!();
    println!(
        "jobs per hour ({jobs} uploads of en_jfk.wav, 11 s each, model {}; {cores} cores shared by every node)",
        args.model
    );
    for (count, per_hour) in &rates {
        println!("{count} node(s): {per_hour:>8.0} jobs/h  ({:.2}x one node)", per_hour / rates[0].1);
    }
    println!("(all nodes share this machine's cores: a ratio near 1x here means the work is spread without loss;");
    println!(" on separate machines each node adds its own cores, so throughput grows with the nodes.)");

    let store_args = crate::eventstore::BenchEventStoreArgs {
        serial: 300,
        events: 3000,
        writers: 16,
        postgres: Some(url.to_owned()),
        kurrentdb: None,
        work_dir: Some(setup.work.clone()),
    };
    tokio::task::spawn_blocking(move || crate::eventstore::run(store_args)).await?
}

/// Starts a node with its own data directory `<work>/<name>`; reads its node id.
async fn start_node(setup: &NodeSetup, name: &str) -> anyhow::Result<Node> {
    let data_dir = setup.work.join(name);
    std::fs::create_dir_all(&data_dir)?;
    let log = setup.work.join(format!("{name}.stderr"));
    let (dir, models, extra, log_path) = (data_dir.clone(), setup.models_dir.clone(), setup.args.clone(), log.clone());
    let process = tokio::task::spawn_blocking(move || ServerProcess::start(&dir, &models, &extra, &log_path)).await??;
    let id = std::fs::read_to_string(data_dir.join("node-id"))
        .with_context(|| format!("node {name} wrote no node id (see {})", log.display()))?
        .trim()
        .to_owned();
    let base = format!("http://{}/api", process.addr);
    Ok(Node { process, name: name.to_owned(), data_dir, id, base })
}

/// Stops a node with SIGTERM (it must exit cleanly).
async fn stop(mut process: ServerProcess) -> anyhow::Result<()> {
    tokio::task::spawn_blocking(move || process.terminate(Duration::from_secs(15))).await?
}

/// A job among `streams` whose transcription a node holds a claim on right now (not transcribed
/// yet), with that node.
async fn transcribing(store: &dyn EventStore, streams: &[String]) -> anyhow::Result<Option<(String, String)>> {
    let mut claimed: HashMap<String, String> = HashMap::new();
    let mut after = 0;
    loop {
        let batch = store.read_all(after, 1000).await?;
        let Some(last) = batch.last() else { break };
        after = last.position;
        for e in &batch {
            match JobEvent::decode(&e.data) {
                Ok(JobEvent::WorkClaimed { stage: Stage::Transcribe, node, .. }) if streams.contains(&e.stream) => {
                    claimed.insert(e.stream.clone(), node);
                }
                Ok(JobEvent::TranscriptProduced { .. } | JobEvent::JobFailed { .. }) => {
                    claimed.remove(&e.stream);
                }
                _ => {}
            }
        }
    }
    Ok(claimed.into_iter().next())
}

/// Per job id: (charges, refunds) on the account's stream.
async fn account_history(store: &dyn EventStore, owner: &UserName) -> anyhow::Result<HashMap<String, (usize, usize)>> {
    let mut per_job: HashMap<String, (usize, usize)> = HashMap::new();
    for e in store.read_stream(&account_stream(owner), 0).await? {
        match AccountEvent::decode(&e.data) {
            Ok(AccountEvent::BalanceCharged { job_id, .. }) => per_job.entry(job_id.to_string()).or_default().0 += 1,
            Ok(AccountEvent::BalanceRefunded { job_id, .. }) => per_job.entry(job_id.to_string()).or_default().1 += 1,
            _ => {}
        }
    }
    Ok(per_job)
}

/// Opens an account with ample credit on the shared store and returns its key.
fn bench_key(url: &str, user: &str) -> anyhow::Result<String> {
    let output = std::process::Command::new(crate::scribe_exe()?)
        .args(["keys", "create", "--user", user, "--initial-credit-cents", "1000000000", "--event-store", url])
        .env_remove("SCRIBE_CONFIG")
        .output()
        .context("running scribe keys create")?;
    if !output.status.success() {
        bail!("scribe keys create failed: {}", String::from_utf8_lossy(&output.stderr));
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

/// Submits one job with a callback to the peer; returns its id.
async fn submit(http: &reqwest::Client, base: &str, key: &str, peer: &Peer, kind: Kind) -> anyhow::Result<String> {
    let callback_url = format!("http://{}/hook", peer.addr);
    let request = match kind {
        Kind::UploadSpeech | Kind::UploadTruncated => {
            let name = if kind == Kind::UploadSpeech { "en_jfk.wav" } else { "variants/corrupt_truncated.mp3" };
            let bytes = tokio::fs::read(peer.audio.join(name)).await?;
            let part =
                reqwest::multipart::Part::bytes(bytes).file_name(name.rsplit('/').next().unwrap_or(name).to_owned());
            http.post(format!("{base}/jobs/upload-media"))
                .query(&[("apiKey", key), ("language", "en"), ("callbackUrl", &callback_url)])
                .multipart(reqwest::multipart::Form::new().part("file", part))
        }
        Kind::UrlSpeech => {
            let body = serde_json::json!({
                "sourceUrl": format!("http://{}/media/en_jfk.wav", peer.addr),
                "language": "en",
                "callbackUrl": callback_url,
            });
            http.post(format!("{base}/jobs/upload-media-from-url")).query(&[("apiKey", key)]).json(&body)
        }
    };
    let reply = request.send().await?;
    let status = reply.status();
    let body: Value = reply.json().await?;
    match body["jobStatus"]["jobId"].as_str() {
        Some(id) if status.is_success() => Ok(id.to_owned()),
        _ => bail!("{kind:?} refused: HTTP {status}: {body}"),
    }
}

fn is_terminal(status: &str) -> bool {
    status == "DONE" || status == "ERROR"
}

/// Every job in the account's list, page by page, keyed by jobId.
async fn list_all(http: &reqwest::Client, base: &str, key: &str) -> anyhow::Result<BTreeMap<String, Value>> {
    let mut jobs = BTreeMap::new();
    for page in 0.. {
        let items: Vec<Value> = http
            .get(format!("{base}/jobs"))
            .query(&[("apiKey", key), ("page", &page.to_string()), ("pageSize", "100")])
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        if items.is_empty() {
            break;
        }
        for item in items {
            jobs.insert(item["jobId"].as_str().unwrap_or_default().to_string(), item);
        }
    }
    Ok(jobs)
}

impl Peer {
    async fn start(audio: PathBuf) -> anyhow::Result<Arc<Peer>> {
        let acceptor = TcpListener::bind("127.0.0.1:0").into_acceptor().await?;
        let addr = acceptor
            .local_addr()
            .into_iter()
            .next()
            .and_then(|a| a.as_socket_addr().copied())
            .context("the peer's address")?;
        let peer = Arc::new(Peer { addr: addr.to_string(), audio, received: Mutex::default() });
        let app = Route::new()
            .at("/media/:name", poem::get(serve_media))
            .at("/hook", poem::post(receive_callback))
            .data(peer.clone());
        tokio::spawn(poem::Server::new_with_acceptor(acceptor).run(app));
        Ok(peer)
    }
}

/// `GET /media/NAME`: a corpus file.
#[handler]
async fn serve_media(UrlPath(name): UrlPath<String>, peer: Data<&Arc<Peer>>) -> Response {
    match tokio::fs::read(peer.audio.join(&name)).await {
        Ok(bytes) => Response::builder().content_type("audio/wav").body(bytes),
        Err(_) => Response::builder().status(poem::http::StatusCode::NOT_FOUND).body("no such file"),
    }
}

/// `POST /hook`: records the job and the `webhook-id`, and acknowledges.
#[handler]
async fn receive_callback(
    Json(body): Json<Value>,
    headers: &poem::http::HeaderMap,
    peer: Data<&Arc<Peer>>,
) -> poem::http::StatusCode {
    let job_id = body["jobId"].as_str().unwrap_or_default().to_string();
    let hook = headers.get("webhook-id").and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
    peer.received.lock().unwrap().push((job_id, hook));
    poem::http::StatusCode::OK
}
