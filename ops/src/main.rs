//! `scribe`: the service's binary. `serve` runs the service; the other subcommands are the
//! operator's tools (keys, balance, audit replay, projection rebuild, transcription from the
//! command line). The benchmarks are a binary of their own, `scribe-bench` (`ops/bench`).

mod admin;
mod cli;
mod config;
mod data_dir;
mod serve;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "scribe", version, about = "Self-hosted transcription and subtitling service")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once per run
enum Command {
    /// Run the HTTP service (with no configuration: 127.0.0.1:8080, data in ./data).
    Serve(config::ServeArgs),
    /// Manage API keys.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Manage account balances.
    #[command(subcommand)]
    Balance(BalanceCommand),
    /// Print a job's whole history, one line per event, for audit.
    Replay {
        /// The job id.
        job_id: String,
        #[command(flatten)]
        store: config::StoreArgs,
        /// One JSON object per event instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Rebuild the read models from the event log (run while the service is stopped).
    Rebuild {
        #[command(flatten)]
        store: config::StoreArgs,
    },
    /// Transcribe a media file with the built-in speech engine.
    Transcribe(cli::transcribe::TranscribeArgs),
    /// Subtitle quality figures for a job: cues, hard-limit violations, reading speed, durations.
    SubtitleReport(cli::subtitle_report::SubtitleReportArgs),
    /// The human work on manual jobs.
    #[command(subcommand)]
    Work(WorkCommand),
}

#[derive(Subcommand)]
enum WorkCommand {
    /// List the tasks past their deadline, most overdue first (from the server's read models).
    Overdue {
        #[arg(long, env = "SCRIBE_DATA_DIR", default_value = "data")]
        data_dir: PathBuf,
    },
}

fn parse_role(value: &str) -> Result<scribe_domain::kinds::Role, String> {
    scribe_domain::kinds::Role::parse_field("--role", value).map_err(|e| e.message)
}

#[derive(Subcommand)]
enum KeysCommand {
    /// Issue a new API key for USER (opening the account if needed); prints the key on stdout.
    Create {
        #[arg(long)]
        user: String,
        /// What the account does: `customer` submits jobs; `transcriber` and `translator` are
        /// staff who work on manual jobs through the work API. Set when the account is opened.
        #[arg(long, default_value = "customer", value_parser = parse_role)]
        role: scribe_domain::kinds::Role,
        /// Staff only: the languages they work in, comma-separated (e.g. `en,nl`; for
        /// translators, the languages they translate into). Default: every language.
        #[arg(long, value_delimiter = ',')]
        languages: Vec<String>,
        #[command(flatten)]
        store: config::StoreArgs,
        /// Balance credited when this opens the account, in cents.
        #[arg(long, default_value_t = scribe_actors::accounts::DEFAULT_INITIAL_CREDIT_CENTS)]
        initial_credit_cents: u64,
    },
}

#[derive(Subcommand)]
enum BalanceCommand {
    /// Add CENTS to USER's balance.
    Credit {
        #[arg(long)]
        user: String,
        #[arg(long)]
        cents: u64,
        #[command(flatten)]
        store: config::StoreArgs,
    },
}

fn main() -> ExitCode {
    scribe_whisper::malloc::configure();
    let cli = Cli::parse();
    // Everything written to the data directory (by serve or by the operator's tools) is
    // owner-only: the event log holds callback signing secrets.
    data_dir::restrict_new_files();
    let result = match cli.command {
        Command::Serve(args) => block_on(serve::run(args)),
        Command::Keys(KeysCommand::Create { user, role, languages, store, initial_credit_cents }) => {
            block_on(admin::create_key(&store, &user, role, languages, initial_credit_cents))
        }
        Command::Work(WorkCommand::Overdue { data_dir }) => admin::overdue(&data_dir),
        Command::Balance(BalanceCommand::Credit { user, cents, store }) => {
            block_on(admin::credit(&store, &user, cents))
        }
        Command::Replay { job_id, store, json } => block_on(admin::replay(&store, &job_id, json)),
        Command::Rebuild { store } => block_on(admin::rebuild(&store)),
        Command::Transcribe(args) => cli::transcribe::run(args),
        Command::SubtitleReport(args) => cli::subtitle_report::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("scribe: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Runs `future` on a fresh runtime. Work still running on blocking threads afterwards (a
/// transcription cut short by a stop signal) is abandoned after a second: its job resumes from the
/// log on the next start.
fn block_on<F: Future>(future: F) -> F::Output {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a tokio runtime");
    let output = runtime.block_on(future);
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    output
}
