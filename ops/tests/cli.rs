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
    for command in ["serve", "keys", "balance", "replay", "rebuild", "transcribe", "bench"] {
        assert!(help.contains(command), "`scribe --help` should mention {command}:\n{help}");
    }
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
