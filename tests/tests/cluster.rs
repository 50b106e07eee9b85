//! Several nodes on one production event store: the short version of `scribe bench cluster`.
//! It starts a throwaway PostgreSQL cluster (`initdb`/`pg_ctl` in a temp directory, unix socket
//! only) and three real `scribe serve` nodes on loopback ports that share it and one media
//! directory; jobs (uploads, URL jobs, a file that cannot be decoded; all with a callbackUrl) are
//! submitted to every node in turn, and the node that first runs a transcription is SIGKILLed in
//! the middle of it. The command fails unless the other nodes take its work over and every job
//! ends `DONE` or `ERROR` as its media says, with one terminal event, one callback POST (one
//! `webhook-id`) per job, one refund per failed job, and read models that agree across the
//! survivors and equal a rebuild from the log.

use std::process::Command;

use scribe_tests::paths;

#[test]
fn three_nodes_share_the_work_and_a_killed_nodes_job_finishes_elsewhere_once() {
    let work = tempfile::Builder::new().prefix("scribe-cluster-").tempdir().expect("a temp dir");
    let output = Command::new(paths::scribe_bin())
        .args(["bench", "cluster", "--nodes", "3", "--jobs", "6", "--settle-timeout", "8m"])
        .arg("--models-dir")
        .arg(paths::models_dir())
        .arg("--corpus")
        .arg(paths::corpus_dir())
        .arg("--work-dir")
        .arg(work.path())
        .env("SCRIBE_LOG", "warn")
        .output()
        .expect("running scribe bench cluster");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let logs: String = std::fs::read_dir(work.path())
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|d| std::fs::read_dir(d.path()).ok())
        .flatten()
        .flatten()
        .filter(|f| f.file_name().to_string_lossy().ends_with(".stderr"))
        .filter_map(|f| Some(format!("--- {}\n{}", f.path().display(), tail(&std::fs::read_to_string(f.path()).ok()?, 40))))
        .collect();
    assert!(output.status.success(), "the cluster check failed\nstdout:\n{stdout}\nstderr:\n{stderr}\nnode logs (tails):\n{logs}");
    assert!(stdout.contains("lost 0, doubled 0, unexpected outcome 0"), "unexpected tally:\n{stdout}\n{stderr}");
    assert!(stdout.contains("callbacks 6 received for 6 jobs (not exactly once: 0), refunds wrong 0"), "{stdout}");
    assert!(stdout.contains("survivors agree, read models equal a rebuild"), "{stdout}");
    assert!(!stdout.contains("taken over 0"), "the killed node's work was not taken over:\n{stdout}");
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}
