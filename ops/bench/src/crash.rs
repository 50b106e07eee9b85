//! `scribe-bench crash`: kills the real server at random moments and checks that no accepted job
//! is lost, finished twice, or left without its callback.
//!
//! Each round starts `scribe serve` (this same binary) on one data directory, lets a few clients
//! submit jobs through the HTTP API (slowly streamed uploads, URL jobs fetched slowly from a local
//! media server, some with a `callbackUrl` to a local receiver that sometimes answers 503 and
//! always answers late), and SIGKILLs the server after a random time: in the middle of uploads,
//! downloads, transcriptions and callbacks. After the last round the server runs until every job
//! that got a `jobId` has settled, then the tally is made from the API, the receiver and the event
//! log: lost (not `DONE`/`ERROR`), doubled (two terminal events), undelivered (no acknowledged
//! callback), and whether the read models equal a rebuild from the log. Exits non-zero unless all
//! of those are zero, so the short version (`--rounds 3`) is also a test.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use poem::listener::{Acceptor, Listener, TcpListener};
use poem::web::{Data, Json, Path as UrlPath};
use poem::{Body, EndpointExt, Response, Route, handler};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use scribe_actors::runtime::open_event_store;
use scribe_domain::ids::{JobId, job_stream};
use serde_json::Value;
use tokio::io::AsyncWriteExt;

use crate::server_process::ServerProcess;

#[derive(clap::Args, Debug, Clone)]
pub struct BenchCrashArgs {
    /// Kill-and-restart rounds.
    #[arg(long, default_value_t = 50)]
    pub rounds: u32,
    /// Clients submitting jobs at once during a round.
    #[arg(long, default_value_t = 3)]
    pub clients: usize,
    /// Shortest time the server runs in a round before it is killed.
    #[arg(long, default_value = "300ms", value_parser = humantime::parse_duration)]
    pub min_uptime: Duration,
    /// Longest time the server runs in a round before it is killed.
    #[arg(long, default_value = "6s", value_parser = humantime::parse_duration)]
    pub max_uptime: Duration,
    /// How long the last run may take to settle every job and callback.
    #[arg(long, default_value = "15m", value_parser = humantime::parse_duration)]
    pub settle_timeout: Duration,
    /// Whisper model, by name under the models directory (tiny.en keeps rounds short).
    #[arg(long, default_value = "whisper-tiny.en")]
    pub model: String,
    /// Directory holding the models installed by `ops/setup.sh`.
    #[arg(long, env = "SCRIBE_MODELS_DIR")]
    pub models_dir: Option<PathBuf>,
    /// Speech corpus (its audio/ folder is what the clients send) [default: ../shared/corpus].
    #[arg(long, env = "SCRIBE_CORPUS_DIR")]
    pub corpus: Option<PathBuf>,
    /// Seed for the kill times, job mix and receiver answers [default: random].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Where the data directory and logs go [default: the system temp directory]; kept if a
    /// check fails, so the logs and `scribe replay` can explain it.
    #[arg(long)]
    pub work_dir: Option<PathBuf>,
}

/// What a client can submit, and how the job must end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    UploadSpeech,
    UploadTruncated,
    UrlSpeech,
    UrlSilence,
    UrlMissing,
}

const KINDS: [Kind; 5] =
    [Kind::UploadSpeech, Kind::UploadTruncated, Kind::UrlSpeech, Kind::UrlSilence, Kind::UrlMissing];

/// A job the server accepted: it answered with a `jobId`.
#[derive(Debug, Clone)]
struct Accepted {
    job_id: String,
    kind: Kind,
    callback: bool,
}

/// The local peer: serves media slowly and receives callbacks.
struct Peer {
    addr: String,
    audio: PathBuf,
    rng: Mutex<StdRng>,
    /// jobId → statuses the receiver answered, in order.
    answers: Mutex<HashMap<String, Vec<u16>>>,
}

/// Bytes per chunk and pause between chunks when streaming media, both ways: slow enough that a
/// kill often lands mid-transfer.
const CHUNK: usize = 32 * 1024;
const CHUNK_PAUSE: Duration = Duration::from_millis(40);

pub fn run(args: BenchCrashArgs) -> anyhow::Result<()> {
    if args.rounds == 0 || args.clients == 0 {
        bail!("--rounds and --clients must be at least 1");
    }
    if args.min_uptime > args.max_uptime {
        bail!("--min-uptime must not exceed --max-uptime");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    runtime.block_on(bench(args))
}

async fn bench(args: BenchCrashArgs) -> anyhow::Result<()> {
    let seed = args.seed.unwrap_or_else(rand::random);
    let corpus = args.corpus.clone().unwrap_or_else(|| PathBuf::from("../shared/corpus"));
    let audio = corpus.join("audio");
    for file in ["en_jfk.wav", "silence_10s.wav", "variants/corrupt_truncated.mp3"] {
        if !audio.join(file).is_file() {
            bail!("{} is missing (pass --corpus or set SCRIBE_CORPUS_DIR)", audio.join(file).display());
        }
    }
    let models_dir = args.models_dir.clone().unwrap_or_else(crate::default_models_dir);
    let work = args
        .work_dir
        .clone()
        .unwrap_or_else(std::env::temp_dir)
        .join(format!("scribe-bench-crash-{}", std::process::id()));
    std::fs::create_dir_all(&work).with_context(|| format!("cannot create {}", work.display()))?;
    let data_dir = work.join("data");
    let log = work.join("serve.stderr");
    let server_args: Vec<String> = [
        "--allow-private-urls",
        "true",
        "--callback-retries",
        "300ms,1s",
        "--model-dir",
        &models_dir.join(&args.model).to_string_lossy(),
    ]
    .map(String::from)
    .to_vec();
    eprintln!("seed {seed}; data in {}", work.display());

    let peer = Peer::start(audio.clone(), seed).await?;
    let accepted: Arc<Mutex<Vec<Accepted>>> = Arc::default();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut key = String::new();

    for round in 1..=args.rounds {
        let server = start_server(&data_dir, &models_dir, &server_args, &log).await?;
        if round == 1 {
            key = server.first_key.clone();
            if key.is_empty() {
                bail!("the first start printed no API key");
            }
        }
        let base = format!("http://{}/api", server.addr);
        let clients: Vec<_> = (0..args.clients)
            .map(|c| {
                let client = Client {
                    http: reqwest::Client::new(),
                    base: base.clone(),
                    key: key.clone(),
                    peer: peer.clone(),
                    rng: StdRng::seed_from_u64(seed ^ (u64::from(round) << 16) ^ c as u64),
                };
                tokio::spawn(client.submit_until_killed(accepted.clone()))
            })
            .collect();
        let uptime = rng.random_range(args.min_uptime..=args.max_uptime);
        tokio::time::sleep(uptime).await;
        let mut server = server;
        tokio::task::spawn_blocking(move || server.kill()).await?;
        for client in clients {
            client.abort();
            let _ = client.await;
        }
        let jobs = accepted.lock().unwrap().len();
        eprintln!("round {round}: killed after {} ms; {jobs} jobs accepted so far", uptime.as_millis());
    }

    // The last run: everything must settle.
    let mut server = start_server(&data_dir, &models_dir, &server_args, &log).await?;
    let base = format!("http://{}/api", server.addr);
    let http = reqwest::Client::new();
    let accepted = accepted.lock().unwrap().clone();
    eprintln!("settling {} jobs ...", accepted.len());
    let deadline = Instant::now() + args.settle_timeout;
    let statuses = loop {
        let statuses: HashMap<String, String> = list_all(&http, &base, &key)
            .await?
            .into_iter()
            .map(|(id, job)| (id, job["status"].as_str().unwrap_or_default().to_string()))
            .collect();
        let open = statuses.values().filter(|s| !is_terminal(s)).count();
        let waiting = undelivered(&peer, &accepted, &statuses);
        // A callback answered here is recorded by the server a moment later: stopping it in
        // between would leave the delivery unrecorded (it would be sent again at the next start).
        let settled = open == 0 && waiting == 0 && unrecorded_callbacks(&data_dir, &accepted).await?.is_empty();
        if settled || Instant::now() > deadline {
            break statuses;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    };
    let listed = list_all(&http, &base, &key).await?;
    tokio::task::spawn_blocking(move || server.terminate(Duration::from_secs(10))).await??;

    // The read models must equal a rebuild from the log.
    crate::rebuild_read_models(&data_dir, &scribe_eventstore::StoreLocation::Embedded(data_dir.clone())).await?;
    let mut server = start_server(&data_dir, &models_dir, &server_args, &log).await?;
    let rebuilt = list_all(&http, &format!("http://{}/api", server.addr), &key).await?;
    tokio::task::spawn_blocking(move || server.terminate(Duration::from_secs(10))).await??;
    let projections_equal = listed == rebuilt;

    // The log: exactly one terminal event per job, and the callback recorded as delivered.
    let store = open_event_store(&data_dir)?;
    let mut doubled = Vec::new();
    for job in &accepted {
        let id = JobId::parse(&job.job_id).map_err(|e| anyhow::anyhow!("{}", e.message))?;
        let events = store.read_stream(&job_stream(&id), 0).await?;
        let terminal = events.iter().filter(|e| matches!(e.event_type.as_str(), "JobCompleted" | "JobFailed")).count();
        if terminal > 1 {
            doubled.push(job.job_id.clone());
        }
    }
    drop(store);
    let unrecorded = unrecorded_callbacks(&data_dir, &accepted).await?;
    let lost: Vec<&Accepted> =
        accepted.iter().filter(|j| !statuses.get(&j.job_id).is_some_and(|s| is_terminal(s))).collect();
    let wrong: Vec<&Accepted> = accepted
        .iter()
        .filter(|j| statuses.get(&j.job_id).is_some_and(|s| is_terminal(s) && *s != expected(j.kind)))
        .collect();
    let undelivered_count = undelivered(&peer, &accepted, &statuses);
    let with_callback = accepted.iter().filter(|j| j.callback).count();
    let deliveries: usize = peer.answers.lock().unwrap().values().map(Vec::len).sum();

    println!(
        "rounds {}, jobs {} ({} with callbacks, {} deliveries received), lost {}, doubled {}, undelivered {}, \
         unexpected outcome {}, callbacks not recorded {}, projections {}",
        args.rounds,
        accepted.len(),
        with_callback,
        deliveries,
        lost.len(),
        doubled.len(),
        undelivered_count,
        wrong.len(),
        unrecorded.len(),
        if projections_equal { "equal a rebuild" } else { "DIFFER from a rebuild" },
    );
    for job in &lost {
        println!("lost: {} ({:?}) status {:?}", job.job_id, job.kind, statuses.get(&job.job_id));
    }
    for job in &wrong {
        println!("unexpected: {} ({:?}) ended {:?}", job.job_id, job.kind, statuses.get(&job.job_id));
    }
    for id in doubled.iter().chain(&unrecorded) {
        println!("see: scribe replay {id} --data-dir {}", data_dir.display());
    }
    let failed = accepted.is_empty()
        || !lost.is_empty()
        || !doubled.is_empty()
        || undelivered_count > 0
        || !wrong.is_empty()
        || !unrecorded.is_empty()
        || !projections_equal;
    if failed {
        bail!("crash check failed; data and logs kept in {}", work.display());
    }
    std::fs::remove_dir_all(&work).ok();
    Ok(())
}

async fn start_server(
    data_dir: &Path,
    models_dir: &Path,
    extra: &[String],
    log: &Path,
) -> anyhow::Result<ServerProcess> {
    let (data_dir, models_dir, extra, log) =
        (data_dir.to_owned(), models_dir.to_owned(), extra.to_vec(), log.to_owned());
    tokio::task::spawn_blocking(move || ServerProcess::start(&data_dir, &models_dir, &extra, &log)).await?
}

fn is_terminal(status: &str) -> bool {
    status == "DONE" || status == "ERROR"
}

/// How each kind of job must end.
fn expected(kind: Kind) -> &'static str {
    match kind {
        Kind::UploadSpeech | Kind::UrlSpeech => "DONE",
        Kind::UploadTruncated | Kind::UrlSilence | Kind::UrlMissing => "ERROR",
    }
}

/// The jobs with a callback whose delivery the log does not record (read beside the server).
async fn unrecorded_callbacks(data_dir: &Path, accepted: &[Accepted]) -> anyhow::Result<Vec<String>> {
    let store = open_event_store(data_dir)?;
    let mut unrecorded = Vec::new();
    for job in accepted.iter().filter(|j| j.callback) {
        let id = JobId::parse(&job.job_id).map_err(|e| anyhow::anyhow!("{}", e.message))?;
        let events = store.read_stream(&job_stream(&id), 0).await?;
        if !events.iter().any(|e| e.event_type == "CallbackDelivered") {
            unrecorded.push(job.job_id.clone());
        }
    }
    Ok(unrecorded)
}

/// Jobs with a callback that finished but whose receiver has not acknowledged one (answered 2xx).
fn undelivered(peer: &Peer, accepted: &[Accepted], statuses: &HashMap<String, String>) -> usize {
    let answers = peer.answers.lock().unwrap();
    accepted
        .iter()
        .filter(|j| j.callback)
        .filter(|j| statuses.get(&j.job_id).is_none_or(|s| is_terminal(s)))
        .filter(|j| !answers.get(&j.job_id).is_some_and(|a| a.iter().any(|s| (200..300).contains(s))))
        .count()
}

/// Every job in the account's list, page by page, keyed by jobId (waiting out rate limits).
async fn list_all(http: &reqwest::Client, base: &str, key: &str) -> anyhow::Result<BTreeMap<String, Value>> {
    let mut jobs = BTreeMap::new();
    let mut page = 0;
    loop {
        let reply = http
            .get(format!("{base}/jobs"))
            .query(&[("apiKey", key), ("page", &page.to_string()), ("pageSize", "100")])
            .send()
            .await?;
        if reply.status() == reqwest::StatusCode::TOO_MANY_REQUESTS {
            let wait = reply.headers().get("retry-after").and_then(|v| v.to_str().ok()?.parse().ok()).unwrap_or(1);
            tokio::time::sleep(Duration::from_secs(wait)).await;
            continue;
        }
        let reply = reply.error_for_status()?;
        let items: Vec<Value> = reply.json().await?;
        if items.is_empty() {
            break;
        }
        for item in items {
            jobs.insert(item["jobId"].as_str().unwrap_or_default().to_string(), item);
        }
        page += 1;
    }
    Ok(jobs)
}

/// A client of the API that submits jobs until its server dies.
struct Client {
    http: reqwest::Client,
    base: String,
    key: String,
    peer: Arc<Peer>,
    rng: StdRng,
}

impl Client {
    async fn submit_until_killed(mut self, accepted: Arc<Mutex<Vec<Accepted>>>) {
        loop {
            let kind = KINDS[self.rng.random_range(0..KINDS.len())];
            let callback = self.rng.random_bool(0.5);
            match self.submit(kind, callback).await {
                Ok(Ok(job_id)) => accepted.lock().unwrap().push(Accepted { job_id, kind, callback }),
                Ok(Err(refusal)) => eprintln!("client: {kind:?} refused: {refusal}"),
                Err(_) => return, // the server is gone
            }
            let pause = self.rng.random_range(100..1000);
            tokio::time::sleep(Duration::from_millis(pause)).await;
        }
    }

    /// Submits one job: its jobId, or the server's refusal; `Err` when the server is gone.
    async fn submit(&mut self, kind: Kind, callback: bool) -> anyhow::Result<Result<String, String>> {
        let callback_url = format!("http://{}/hook", self.peer.addr);
        let mut query = vec![
            ("apiKey", self.key.clone()),
            ("language", "en".into()),
            ("transcriptionType", "transcription".into()),
        ];
        if callback {
            query.push(("callbackUrl", callback_url.clone()));
        }
        let request = match kind {
            Kind::UploadSpeech | Kind::UploadTruncated => {
                let name = if kind == Kind::UploadSpeech { "en_jfk.wav" } else { "variants/corrupt_truncated.mp3" };
                let bytes = tokio::fs::read(self.peer.audio.join(name)).await?;
                let len = bytes.len() as u64;
                let part = reqwest::multipart::Part::stream_with_length(
                    reqwest::Body::wrap_stream(tokio_util::io::ReaderStream::new(slow_reader(bytes))),
                    len,
                )
                .file_name(name.rsplit('/').next().unwrap_or(name).to_string());
                query.push(("jobType", "direct".into()));
                self.http
                    .post(format!("{}/jobs/upload-media", self.base))
                    .query(&query)
                    .multipart(reqwest::multipart::Form::new().part("file", part))
            }
            Kind::UrlSpeech | Kind::UrlSilence | Kind::UrlMissing => {
                let name = match kind {
                    Kind::UrlSpeech => "en_jfk.wav",
                    Kind::UrlSilence => "silence_10s.wav",
                    _ => "missing.wav",
                };
                let mut body = serde_json::json!({
                    "sourceUrl": format!("http://{}/media/{name}", self.peer.addr),
                    "language": "en",
                    "jobType": "direct",
                    "transcriptionType": "transcription",
                });
                if callback {
                    body["callbackUrl"] = Value::String(callback_url);
                }
                self.http
                    .post(format!("{}/jobs/upload-media-from-url", self.base))
                    .query(&[("apiKey", &self.key)])
                    .json(&body)
            }
        };
        let reply = request.send().await?;
        let status = reply.status();
        let body: Value = reply.json().await?;
        Ok(match body["jobStatus"]["jobId"].as_str() {
            Some(id) if status.is_success() => Ok(id.to_string()),
            _ => Err(format!("HTTP {status}: {body}")),
        })
    }
}

/// `bytes` as a reader that trickles them out chunk by chunk.
fn slow_reader(bytes: Vec<u8>) -> tokio::io::DuplexStream {
    let (mut writer, reader) = tokio::io::duplex(CHUNK);
    tokio::spawn(async move {
        for chunk in bytes.chunks(CHUNK) {
            if writer.write_all(chunk).await.is_err() {
                return;
            }
            tokio::time::sleep(CHUNK_PAUSE).await;
        }
    });
    reader
}

impl Peer {
    async fn start(audio: PathBuf, seed: u64) -> anyhow::Result<Arc<Peer>> {
        let acceptor = TcpListener::bind("127.0.0.1:0").into_acceptor().await?;
        let addr = acceptor
            .local_addr()
            .into_iter()
            .next()
            .and_then(|a| a.as_socket_addr().copied())
            .context("the peer's address")?;
        let peer = Arc::new(Peer {
            addr: addr.to_string(),
            audio,
            rng: Mutex::new(StdRng::seed_from_u64(seed.rotate_left(17))),
            answers: Mutex::default(),
        });
        let app = Route::new()
            .at("/media/:name", poem::get(serve_media))
            .at("/hook", poem::post(receive_callback))
            .data(peer.clone());
        tokio::spawn(poem::Server::new_with_acceptor(acceptor).run(app));
        Ok(peer)
    }
}

/// `GET /media/NAME`: a corpus file, trickled; 404 for names it does not have.
#[handler]
async fn serve_media(UrlPath(name): UrlPath<String>, peer: Data<&Arc<Peer>>) -> Response {
    let Ok(bytes) = tokio::fs::read(peer.audio.join(&name)).await else {
        return Response::builder().status(poem::http::StatusCode::NOT_FOUND).body("no such file");
    };
    let len = bytes.len();
    Response::builder()
        .content_type("audio/wav")
        .header("content-length", len)
        .body(Body::from_async_read(slow_reader(bytes)))
}

/// `POST /hook`: a callback receiver that answers late and, one time in four, with 503.
#[handler]
async fn receive_callback(Json(body): Json<Value>, peer: Data<&Arc<Peer>>) -> poem::http::StatusCode {
    let (delay, fail) = {
        let mut rng = peer.rng.lock().unwrap();
        (rng.random_range(0..400), rng.random_bool(0.25))
    };
    tokio::time::sleep(Duration::from_millis(delay)).await;
    let status = if fail { 503 } else { 200 };
    let job_id = body["jobId"].as_str().unwrap_or_default().to_string();
    peer.answers.lock().unwrap().entry(job_id).or_default().push(status);
    poem::http::StatusCode::from_u16(status).expect("a valid status")
}
