//! `scribe-bench live --quick` as a test: the live benchmark runs end to end (direct jobs, live
//! sessions at real-time pace, sessions at once with base and tiny.en) and prints its table of
//! measures against the goals. Whether the goals are met is the benchmark's report, not a test.

use scribe_tests::bench;

#[test]
fn the_live_benchmark_prints_every_measure_next_to_its_goal() {
    let run = bench::run(&["live", "--quick"]);
    assert!(run.status.success(), "scribe-bench live --quick failed\n{}", run.report());
    for row in [
        "WER %",
        "final latency p50 s (last word)",
        "final latency p95 s (last word)",
        "final latency p50 s (utterance end)",
        "final latency p95 s (utterance end)",
        "first partial latency p50 s",
        "first partial latency p95 s",
        "real-time sessions (whisper-base)",
        "real-time sessions (whisper-tiny.en)",
    ] {
        let line = run.stdout.lines().find(|l| l.starts_with(row));
        assert!(line.is_some(), "no `{row}` row:\n{}", run.report());
        // Every measured row has a figure, not a placeholder.
        let value = line.unwrap()[row.len()..].split_whitespace().next().unwrap_or_default();
        // A machine without tiny.en installed skips it; a busy machine may skip every partial of
        // the two short clips (a session behind real time skips partials), leaving no figure.
        let skipped = (row.contains("tiny.en") && value == "skipped") || (row.contains("partial") && value == "-");
        assert!(value.parse::<f64>().is_ok() || skipped, "`{row}` has no figure ({value:?}):\n{}", run.report());
    }
    // The anchor is measured in the same run: the WER row has both sides.
    let wer = run.stdout.lines().find(|l| l.starts_with("WER %")).unwrap();
    let sides: Vec<&str> = wer["WER %".len()..].split_whitespace().take(2).collect();
    assert!(sides.iter().all(|s| s.parse::<f64>().is_ok()), "the WER row lacks a side: {wer}");
}
