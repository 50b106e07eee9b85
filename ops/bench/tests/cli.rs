//! `scribe-bench` as an operator runs it: its help lists every benchmark. (Building this test
//! also makes cargo build the binary the crash and cluster tests in `tests/` run.)

use std::process::Command;

#[test]
fn help_lists_every_benchmark() {
    let out = Command::new(env!("CARGO_BIN_EXE_scribe-bench")).arg("--help").output().expect("scribe-bench runs");
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for bench in ["asr", "diarization", "upload", "crash", "restart", "status", "eventstore", "gemm", "cluster"] {
        assert!(help.contains(bench), "`scribe-bench --help` should list {bench}:\n{help}");
    }
}
