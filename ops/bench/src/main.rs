//! `scribe-bench`: the benchmarks, each printing what it measured as a ratio against an anchor
//! measured in the same run. A binary of its own so that the service's binary, its `--help` and
//! its dependencies are the service's; the server benchmarks start the `scribe` binary that sits
//! beside this one (or `$SCRIBE_BIN`).

mod asr;
mod cluster;
mod crash;
mod diarization;
mod env;
mod eventstore;
mod gemm;
mod live;
mod live_client;
mod live_encoder;
mod live_partials;
mod live_pauses;
mod live_seams;
mod restart;
mod server_process;
mod status;
mod upload;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};
use scribe_eventstore::StoreLocation;

#[derive(Parser)]
#[command(name = "scribe-bench", version, about = "Scribe's benchmarks: measured ratios against an anchor")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Our engine against faster-whisper on the corpus: wall time, speed ratio, WER.
    Asr(asr::BenchAsrArgs),
    /// Our speaker diarization against senko and pyannote's pipeline on the corpus: DER and wall time.
    Diarization(diarization::BenchDiarizationArgs),
    /// Peak server memory during a large upload, and its throughput against `dd`.
    Upload(upload::BenchUploadArgs),
    /// Kill the server at random moments; count lost, doubled and undelivered jobs.
    Crash(crash::BenchCrashArgs),
    /// Start a server on the history of 100 000 jobs; time until it serves them.
    Restart(restart::BenchRestartArgs),
    /// Requests per second of GET /jobs/status against a bare poem handler.
    Status(status::BenchStatusArgs),
    /// Append and subscribe throughput of each event store (SQLite as the anchor, PostgreSQL,
    /// KurrentDB when given).
    Eventstore(eventstore::BenchEventStoreArgs),
    /// The engine's hand-written matrix kernels against the gemm crate, on Whisper's shapes.
    Gemm(gemm::BenchGemmArgs),
    /// Several nodes on one PostgreSQL store: kill one mid-job and check nothing is lost,
    /// doubled or called back twice; with --throughput, jobs per hour with 1, 2, 3 nodes.
    Cluster(cluster::BenchClusterArgs),
    /// Live transcription against direct jobs on the same clips: WER, final and first-partial
    /// latency, and how many sessions at once keep up with real time (base and tiny.en).
    Live(live::BenchLiveArgs),
}

fn main() -> ExitCode {
    // The allocator settings of the `scribe` binary, so the engine is measured as it runs there.
    scribe_whisper::malloc::configure();
    let result = match Cli::parse().command {
        Command::Asr(args) => asr::run(args),
        Command::Diarization(args) => diarization::run(args),
        Command::Upload(args) => upload::run(args),
        Command::Crash(args) => crash::run(args),
        Command::Restart(args) => restart::run(args),
        Command::Status(args) => status::run(args),
        Command::Eventstore(args) => eventstore::run(args),
        Command::Gemm(args) => gemm::run(args),
        Command::Cluster(args) => cluster::run(args),
        Command::Live(args) => live::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("scribe-bench: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The `scribe` binary the server benchmarks start: `$SCRIBE_BIN`, else the one beside this
/// binary (cargo builds both into the same directory).
pub fn scribe_exe() -> anyhow::Result<PathBuf> {
    if let Some(bin) = std::env::var_os("SCRIBE_BIN") {
        return Ok(PathBuf::from(bin));
    }
    let me = std::env::current_exe().context("locating scribe-bench")?;
    let bin = me.with_file_name(format!("scribe{}", std::env::consts::EXE_SUFFIX));
    anyhow::ensure!(
        bin.is_file(),
        "no scribe binary beside {} (build it: `cargo build --release --workspace --bins`, or set SCRIBE_BIN)",
        me.display()
    );
    Ok(bin)
}

/// The models directory when no `--models-dir` is given: `$SCRIBE_MODELS_DIR`, else `./models`
/// (what `scribe serve` uses).
pub fn default_models_dir() -> PathBuf {
    std::env::var_os("SCRIBE_MODELS_DIR").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("models"))
}

/// Rebuilds the read models of the data directory `data_dir` from the store at `location` (what
/// `scribe rebuild` does), so a benchmark can compare them with the ones the server kept.
pub async fn rebuild_read_models(data_dir: &std::path::Path, location: &StoreLocation) -> anyhow::Result<()> {
    let store = location.open().await.with_context(|| format!("cannot open the event store {location}"))?;
    let report = scribe_projections::rebuild(store, data_dir).await.context("rebuilding the read models")?;
    println!("rebuilt the read models from {} events (checkpoint {})", report.events, report.position);
    Ok(())
}
