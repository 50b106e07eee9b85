//! The `scribe` binary's offline commands, run as a user would run them. (Building this test also
//! makes cargo build the binary that the black-box tests in `tests/` start.)

use std::process::{Command, Output};

fn scribe(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_scribe")).args(args).output().expect("the scribe binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn help_lists_the_operator_commands() {
    let out = scribe(&["--help"]);
    assert!(out.status.success());
    let help = text(&out.stdout);
    for command in ["serve", "keys", "balance", "replay", "rebuild", "transcribe"] {
        assert!(help.contains(command), "`scribe --help` should mention {command}:\n{help}");
    }
    assert!(!help.contains("bench"), "the benchmarks are `scribe-bench`'s, not the service's:\n{help}");
}

#[test]
fn keys_create_prints_a_new_key_each_time_and_the_secret_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let first = scribe(&["keys", "create", "--user", "alice", "--data-dir", data]);
    assert!(first.status.success(), "{}", text(&first.stderr));
    let second = scribe(&["keys", "create", "--user", "alice", "--data-dir", data]);
    assert!(second.status.success(), "{}", text(&second.stderr));
    let (k1, k2) = (text(&first.stdout).trim().to_owned(), text(&second.stdout).trim().to_owned());
    assert!(k1.starts_with("sk_") && k2.starts_with("sk_"), "{k1} / {k2}");
    assert_ne!(k1, k2);
    assert!(text(&first.stderr).contains("opened account 'alice'"));
    assert!(!text(&second.stderr).contains("opened account"));
    assert!(text(&first.stderr).contains("whsec_"));
}

#[test]
fn keys_create_refuses_an_invalid_user_name() {
    let dir = tempfile::tempdir().unwrap();
    let out = scribe(&["keys", "create", "--user", "no spaces please", "--data-dir", dir.path().to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("may contain only"), "{}", text(&out.stderr));
}

#[test]
fn replay_of_an_unknown_job_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let out = scribe(&["replay", "nope", "--data-dir", data]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("no event store"), "{}", text(&out.stderr));
    assert!(scribe(&["keys", "create", "--user", "bob", "--data-dir", data]).status.success());
    let out = scribe(&["replay", "nope", "--data-dir", data]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("no job nope"), "{}", text(&out.stderr));
}

#[test]
fn serve_without_a_model_fails_fast_and_says_how_to_install_it() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let missing = dir.path().join("no-models");
    let out = scribe(&[
        "serve",
        "--port",
        "0",
        "--data-dir",
        data.to_str().unwrap(),
        "--models-dir",
        missing.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains("ops/setup.sh"), "{err}");
}

#[test]
fn replay_into_a_closed_pipe_ends_quietly() {
    // A job with a long history, recorded the way the server records it.
    let dir = tempfile::tempdir().unwrap();
    let job_id = "0192f6a4-7c1e-7d2a-9a55-2b3c4d5e6f70";
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        use scribe_eventstore::{EventStore, ExpectedVersion, NewEvent, SqliteEventStore};
        let store = SqliteEventStore::open_in(dir.path()).unwrap();
        let events = (0..2000)
            .map(|n| NewEvent::new("CallbackAttempted", serde_json::json!({"type": "CallbackAttempted", "v": 1, "attempt": n, "atMs": 1_763_769_600_000u64 + n})))
            .collect();
        store.append(&format!("job-{job_id}"), ExpectedVersion::NoStream, events).await.unwrap();
    });
    // `scribe replay ID | head -0`: the reader is gone before the first line is written.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_scribe"))
        .args(["replay", job_id, "--data-dir", dir.path().to_str().unwrap()])
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .expect("the scribe binary runs");
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "status {:?}, stderr:\n{stderr}", out.status);
    assert!(!stderr.contains("panicked") && stderr.trim().is_empty(), "{stderr}");
}
