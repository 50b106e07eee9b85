//! `scribe-bench status`: the request rate `GET /jobs/status` sustains, against a bare poem
//! handler on the same machine (the design's goal: at least half of it). Starts `scribe serve`
//! on a fresh data directory holding one finished job, and, in this process, a poem server whose
//! only handler answers the same bytes the real endpoint answered; then drives each in turn, a
//! few rounds, with the same client for the same time: keep-alive HTTP/1.1 connections, each sending its next request when
//! the last answer has arrived. The real endpoint does everything a client's call does: apiKey
//! authentication, rate limiting, the read-model lookup, JSON.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use poem::listener::{Acceptor, Listener, TcpListener};

use crate::env::{bench_key, in_scratch_dir};
use crate::server_process::ServerProcess;

const GOAL: f64 = 0.5;

#[derive(clap::Args, Debug)]
pub struct BenchStatusArgs {
    /// Seconds of load on each server.
    #[arg(long, default_value_t = 5.0)]
    pub seconds: f64,
    /// Rounds on each server, alternating.
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// Concurrent keep-alive connections.
    #[arg(long, default_value_t = 32)]
    pub connections: usize,
    /// Directory for the server's data. Default: the system temp directory.
    #[arg(long)]
    pub work_dir: Option<PathBuf>,
    /// Directory holding the models the server loads (as for `scribe serve`).
    #[arg(long, env = "SCRIBE_MODELS_DIR")]
    pub models_dir: Option<PathBuf>,
}

pub fn run(args: BenchStatusArgs) -> anyhow::Result<()> {
    if !args.seconds.is_finite() || args.seconds <= 0.0 || args.connections == 0 || args.rounds == 0 {
        bail!("--seconds, --rounds and --connections must be positive");
    }
    in_scratch_dir(args.work_dir.clone(), "status", |work| bench(&args, work))
}

fn bench(args: &BenchStatusArgs, work: &Path) -> anyhow::Result<()> {
    let data_dir = work.join("data");
    let key = bench_key(&data_dir)?;
    let client_runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let (_, job_id) = client_runtime.block_on(crate::restart::write_history(&data_dir, 1))?;

    let models_dir = args.models_dir.clone().unwrap_or_else(crate::default_models_dir);
    // The speech model is released before the load starts; the rate limiter still runs for every
    // request, with a limit this one client cannot reach.
    let extra =
        ["--model-keep-alive", "1s", "--rate-per-second", "1000000000", "--rate-burst", "1000000000"].map(String::from);
    let mut server = ServerProcess::start(&data_dir, &models_dir, &extra, &work.join("serve.stderr"))?;
    let path = format!("/api/jobs/status?apiKey={key}&jobId={job_id}");
    let answer = client_runtime.block_on(first_answer(&server.addr, &path))?;
    std::thread::sleep(Duration::from_secs(2));
    let load = Duration::from_secs_f64(args.seconds);

    let bare_runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let bare_addr = bare_runtime.block_on(start_bare(answer.clone()))?;
    // Alternating rounds, so that a slow moment of the machine does not favour one side.
    let (mut reals, mut bares) = (Vec::new(), Vec::new());
    for _ in 0..args.rounds {
        reals.push(client_runtime.block_on(drive(&server.addr, &path, args.connections, load))?);
        bares.push(client_runtime.block_on(drive(&bare_addr, &path, args.connections, load))?);
    }
    server.kill();
    let (real, bare) = (median(reals), median(bares));
    let ratio = real / bare;
    println!(
        "GET /jobs/status ({} bytes answered), {} connections, {} rounds of {:.0} s each, medians:",
        answer.len(),
        args.connections,
        args.rounds,
        load.as_secs_f64()
    );
    println!("scribe serve:       {real:.0} requests/s");
    println!("bare poem handler:  {bare:.0} requests/s");
    println!("ratio {ratio:.2} (goal >= {GOAL}): {}", if ratio >= GOAL { "met" } else { "NOT met" });
    Ok(())
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// One request, to check the endpoint answers 200 and to learn its body.
async fn first_answer(addr: &str, path: &str) -> anyhow::Result<Bytes> {
    let mut sender = connect(addr).await?;
    let response = sender.send_request(request(addr, path)?).await?;
    let status = response.status();
    let body = response.into_body().collect().await?.to_bytes();
    if !status.is_success() {
        bail!("GET {path} answered {status}: {}", String::from_utf8_lossy(&body));
    }
    Ok(body)
}

/// A poem server on a free loopback port answering `body` as JSON to `GET /api/jobs/status`.
async fn start_bare(body: Bytes) -> anyhow::Result<String> {
    use poem::{EndpointExt, Route, get, handler, web::Data};

    #[handler]
    fn status(body: Data<&Bytes>) -> poem::Response {
        poem::Response::builder().content_type("application/json; charset=utf-8").body(body.0.clone())
    }

    let acceptor = TcpListener::bind("127.0.0.1:0").into_acceptor().await?;
    let addr = acceptor
        .local_addr()
        .into_iter()
        .next()
        .and_then(|a| a.as_socket_addr().copied())
        .context("the bare server's address")?;
    let app = Route::new().at("/api/jobs/status", get(status)).data(body);
    tokio::spawn(poem::Server::new_with_acceptor(acceptor).run(app));
    Ok(addr.to_string())
}

/// Sends requests over `connections` keep-alive connections for `load`; returns requests per
/// second. Any answer other than 200 stops the run with an error.
async fn drive(addr: &str, path: &str, connections: usize, load: Duration) -> anyhow::Result<f64> {
    let done = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let deadline = started + load;
    let mut tasks = Vec::with_capacity(connections);
    for _ in 0..connections {
        let (addr, path, done) = (addr.to_owned(), path.to_owned(), Arc::clone(&done));
        tasks.push(tokio::spawn(async move {
            let mut sender = connect(&addr).await?;
            while Instant::now() < deadline {
                let response = sender.send_request(request(&addr, &path)?).await?;
                let status = response.status();
                response.into_body().collect().await?;
                if !status.is_success() {
                    bail!("GET {path} answered {status} under load");
                }
                done.fetch_add(1, Ordering::Relaxed);
            }
            Ok::<_, anyhow::Error>(())
        }));
    }
    for task in tasks {
        task.await??;
    }
    Ok(done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64())
}

type Sender = hyper::client::conn::http1::SendRequest<Empty<Bytes>>;

async fn connect(addr: &str) -> anyhow::Result<Sender> {
    let stream = tokio::net::TcpStream::connect(addr).await.with_context(|| format!("connecting to {addr}"))?;
    stream.set_nodelay(true)?;
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    Ok(sender)
}

fn request(addr: &str, path: &str) -> anyhow::Result<hyper::Request<Empty<Bytes>>> {
    Ok(hyper::Request::get(path).header(hyper::header::HOST, addr).body(Empty::new())?)
}
