//! Runs one of the benchmarks' own checks (`scribe-bench crash`, `scribe-bench cluster`) as a test:
//! with the test models and corpus, in a temp work directory, and with what a failure needs to be
//! understood (the command's output and the tail of every server log it left).

use std::process::{Command, ExitStatus};

use crate::paths;

/// The outcome of a `scribe-bench` run.
pub struct BenchRun {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    /// The last lines of every `*.stderr` file the command's servers wrote, each under its path.
    pub server_logs: String,
}

impl BenchRun {
    /// Everything a failed assertion should show.
    pub fn report(&self) -> String {
        format!("stdout:\n{}\nstderr:\n{}\nserver logs (tails):\n{}", self.stdout, self.stderr, self.server_logs)
    }
}

/// Runs `scribe-bench <args> --models-dir .. --corpus .. --work-dir <temp>`.
pub fn run(args: &[&str]) -> BenchRun {
    let work = tempfile::Builder::new().prefix("scribe-bench-").tempdir().expect("a temp dir");
    let output = Command::new(paths::bench_bin())
        .args(args)
        .arg("--models-dir")
        .arg(paths::models_dir())
        .arg("--corpus")
        .arg(paths::corpus_dir())
        .arg("--work-dir")
        .arg(work.path())
        .env("SCRIBE_LOG", "warn")
        .output()
        .unwrap_or_else(|e| panic!("running scribe-bench {args:?}: {e}"));
    let server_logs = std::fs::read_dir(work.path())
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|d| std::fs::read_dir(d.path()).ok())
        .flatten()
        .flatten()
        .filter(|f| f.file_name().to_string_lossy().ends_with(".stderr"))
        .filter_map(|f| {
            Some(format!("--- {}\n{}\n", f.path().display(), tail(&std::fs::read_to_string(f.path()).ok()?, 60)))
        })
        .collect();
    BenchRun {
        status: output.status,
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        server_logs,
    }
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}
