//! No accepted job lost to a crash: the short version of `scribe bench crash`. It runs the real
//! binary's crash check: a few rounds of submitting uploads and URL jobs (with and without
//! callbacks) and SIGKILLing the server at random moments, then one run until everything settles;
//! the command fails unless no job is lost, none has two terminal events, every callback was
//! acknowledged, and the read models equal a rebuild. The long soak is `scribe bench crash`.

use std::process::Command;

use scribe_tests::paths;

#[test]
fn jobs_survive_random_kills_with_no_loss_no_double_and_every_callback() {
    let work = tempfile::Builder::new().prefix("scribe-crash-").tempdir().expect("a temp dir");
    let output = Command::new(paths::scribe_bin())
        .args(["bench", "crash", "--rounds", "3", "--clients", "2", "--max-uptime", "5s", "--settle-timeout", "10m"])
        .arg("--models-dir")
        .arg(paths::models_dir())
        .arg("--corpus")
        .arg(paths::corpus_dir())
        .arg("--work-dir")
        .arg(work.path())
        .env("SCRIBE_LOG", "warn")
        .output()
        .expect("running scribe bench crash");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let logs: String = std::fs::read_dir(work.path())
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|d| std::fs::read_dir(d.path()).ok())
        .flatten()
        .flatten()
        .filter(|f| f.file_name() == "serve.stderr")
        .filter_map(|f| std::fs::read_to_string(f.path()).ok())
        .map(|text| text.lines().rev().take(80).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n"))
        .collect();
    assert!(output.status.success(), "the crash check failed\nstdout:\n{stdout}\nstderr:\n{stderr}\nserver log (tail):\n{logs}");
    assert!(stdout.contains("lost 0, doubled 0, undelivered 0"), "unexpected tally:\n{stdout}\n{stderr}");
    assert!(!stdout.contains("jobs 0 "), "no job was accepted, so nothing was checked:\n{stdout}\n{stderr}");
}
