//! The OpenAPI document tells the truth: schemathesis (PyPI, in the tools venv) generates
//! requests from `/api/openapi.json` of a real server and checks every answer — no server error,
//! every status, content type, header and body as documented, schema-valid requests accepted and
//! schema-invalid ones refused, auth enforced, deleted resources gone — through all its phases
//! (examples, coverage, fuzzing, and the stateful phase that chains operations through the
//! document's links). It must end with no failure and no error. (Its warnings are about reach,
//! not correctness — the staff endpoints answer the customer key 403/401, exports of jobs that
//! are not finished 404/409 — and are shown in the output.)
//!
//! Bounded for CI: a fixed seed (the same requests every run), a cap on examples per operation
//! and on the total time. The configuration, with the reason for each expectation beyond the
//! document, is `tests/schemathesis/schemathesis.toml`.
//!
//! Needs the tools venv (`$SCRIBE_VENV`, default `<repo>/.venv`): `bash ops/setup.sh`.

use std::process::Command;

use scribe_tests::server::Options;
use scribe_tests::{TestServer, paths};

/// Test cases per operation and phase. 20 (with one worker) made about 4,400 cases in 150 s and
/// missed what an outside run of 24,081 cases found (optional parameters the server required,
/// an empty document the schema allowed, query parameters silently ignored); 100 with two
/// workers reaches far more of each operation's space in the same few minutes.
const MAX_EXAMPLES: &str = "100";
/// Seconds for the whole run (fuzzing and the stateful phase repeat until it is spent).
const MAX_TIME_S: &str = "210";
/// Concurrent workers: the server answers most cases in microseconds, so schemathesis's own
/// generation is the bottleneck and a second worker nearly doubles the cases per second.
const WORKERS: &str = "2";
/// A fixed seed: the same requests in every run, so a failure reproduces.
const SEED: &str = "20261123";

#[test]
fn schemathesis_finds_nothing_wrong_with_the_document_or_the_server() {
    // The test's requests must not be throttled: a 429 is documented, but it hides answers
    // (schemathesis sends many invalid keys on purpose, which the failed-auth limit counts).
    let server = TestServer::start_with(Options {
        extra_args: [
            "--rate-per-second",
            "100000",
            "--rate-burst",
            "100000",
            "--auth-failures-per-minute",
            "100000",
            "--auth-failures-burst",
            "100000",
        ]
        .map(String::from)
        .to_vec(),
        ..Options::default()
    });
    let config = paths::repo().join("tests/schemathesis/schemathesis.toml");
    let reports = tempfile::tempdir().unwrap();
    let out = Command::new(paths::venv_bin("st"))
        .arg("--config-file")
        .arg(&config)
        .arg("run")
        .arg(server.url("/api/openapi.json"))
        .args(["--checks", "all", "--phases", "examples,coverage,fuzzing,stateful"])
        .args(["--max-examples", MAX_EXAMPLES, "--max-time", MAX_TIME_S, "--seed", SEED])
        .args(["--workers", WORKERS, "--no-color", "--output-truncate", "false", "--request-timeout", "30"])
        .args(["--generation-database", "none"])
        .arg("--report-dir")
        .arg(reports.path())
        .env("SCRIBE_TEST_API_KEY", server.key())
        // One `ast.parse` at a time in the workers' threads (see the file's comment).
        .env("PYTHONPATH", paths::repo().join("tests/schemathesis/python"))
        .current_dir(reports.path())
        .output()
        .expect("running schemathesis (st) from the tools venv: bash ops/setup.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "schemathesis found problems ({}):\n{stdout}\n{stderr}\n--- server log ---\n{}",
        out.status,
        server.logs()
    );
    // Shown with `--nocapture`: the phases, the number of test cases and the run's duration.
    println!("{stdout}");
    let summary = stdout.lines().rev().find(|l| l.contains(" in ") && l.contains('=')).unwrap_or_default();
    for bad in ["failure", "error"] {
        assert!(!summary.contains(bad), "schemathesis summary: {summary}\n{stdout}");
    }
}
