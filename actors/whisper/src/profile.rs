//! Opt-in stage timings, to see where transcription time goes without a profiler.
//!
//! Set `SCRIBE_WHISPER_PROFILE=1` and every `transcribe` call prints, on stderr, the total
//! wall time and call count of each stage (audio decoding, VAD, mel, encoder, decoder steps,
//! logits, beam bookkeeping, alignment). Off by default; when off, `time` costs one relaxed
//! load of a cached flag.

use std::sync::Mutex;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("SCRIBE_WHISPER_PROFILE").is_ok_and(|v| !v.is_empty() && v != "0"))
}

/// (stage, total time, calls), in first-seen order.
static TOTALS: Mutex<Vec<(&'static str, Duration, u64)>> = Mutex::new(Vec::new());

/// Runs `f`, adding its wall time to `stage` when profiling is on.
pub fn time<T>(stage: &'static str, f: impl FnOnce() -> T) -> T {
    if !enabled() {
        return f();
    }
    let start = Instant::now();
    let out = f();
    add(stage, start.elapsed());
    out
}

fn add(stage: &'static str, d: Duration) {
    let mut totals = TOTALS.lock().unwrap_or_else(|e| e.into_inner());
    match totals.iter_mut().find(|t| t.0 == stage) {
        Some(t) => {
            t.1 += d;
            t.2 += 1;
        }
        None => totals.push((stage, d, 1)),
    }
}

/// Prints and clears the totals gathered since the last report (when profiling is on).
pub fn report(label: &str) {
    if !enabled() {
        return;
    }
    let totals = std::mem::take(&mut *TOTALS.lock().unwrap_or_else(|e| e.into_inner()));
    let lines: Vec<String> =
        totals.iter().map(|(stage, d, n)| format!("  {stage:<18}{:>9.3} s {n:>7} calls", d.as_secs_f64())).collect();
    eprintln!("[whisper profile] {label}\n{}", lines.join("\n"));
}
