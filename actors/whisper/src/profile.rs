//! Opt-in stage timings, to see where transcription time goes without a profiler.
//!
//! Set `SCRIBE_WHISPER_PROFILE=1` and every `transcribe` call prints, on stderr, the total
//! wall time and call count of each stage (audio decoding, VAD, mel, encoder, decoder steps,
//! logits, beam bookkeeping, alignment). A program can also turn the timings on in-process
//! ([`enable`]) and read them ([`take`]): `scribe-bench asr` does, to divide the decoder's
//! and encoder's work by their time. Off by default; when off, `time` costs two relaxed loads.
//!
//! Stages in use: "scan (decode+vad)", "mel level pass", "mel", "encode" (one call per
//! encoder call, of one window or a batch of them), "encoder windows" (a count: the windows
//! encoded), "windows again (wordless stretch)" and "windows again (chunk's rest)" (counts:
//! the batched path's windows decoded again), "decode window", "decoder step" (one call per decoder forward pass: one read
//! of the decoder's weights, whatever the number of beams), "beam rules+topk", "kv select",
//! "word timestamps", and the model's inner stages ("enc …", "dec …", "logits").

use std::sync::Mutex;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The total time and number of calls of one stage since the last [`take`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StageTime {
    pub stage: &'static str,
    pub total: Duration,
    pub calls: u64,
}

/// Whether `SCRIBE_WHISPER_PROFILE` asks for the stderr report.
fn env_enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("SCRIBE_WHISPER_PROFILE").is_ok_and(|v| !v.is_empty() && v != "0"))
}

/// Set by [`enable`]: the process reads the timings itself.
static IN_PROCESS: AtomicBool = AtomicBool::new(false);

fn enabled() -> bool {
    IN_PROCESS.load(Ordering::Relaxed) || env_enabled()
}

/// Turns the timings on for the rest of the process, for [`take`] to read (no stderr report
/// unless `SCRIBE_WHISPER_PROFILE` is set too).
pub fn enable() {
    IN_PROCESS.store(true, Ordering::Relaxed);
}

/// The stages' totals since the last [`take`], in first-seen order, and resets them.
pub fn take() -> Vec<StageTime> {
    std::mem::take(&mut *lock(&TAKEN))
}

/// Totals for [`take`] and, separately, for the stderr [`report`] (which resets its own on each
/// report, so one does not empty the other).
static TAKEN: Mutex<Vec<StageTime>> = Mutex::new(Vec::new());
static REPORTED: Mutex<Vec<StageTime>> = Mutex::new(Vec::new());

fn lock(m: &'static Mutex<Vec<StageTime>>) -> std::sync::MutexGuard<'static, Vec<StageTime>> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `f`, adding its wall time to `stage` when profiling is on.
pub fn time<T>(stage: &'static str, f: impl FnOnce() -> T) -> T {
    if !enabled() {
        return f();
    }
    let start = Instant::now();
    let out = f();
    let elapsed = start.elapsed();
    if IN_PROCESS.load(Ordering::Relaxed) {
        add(&TAKEN, stage, elapsed);
    }
    if env_enabled() {
        add(&REPORTED, stage, elapsed);
    }
    out
}

/// Counts `n` items of `stage` (no time), when profiling is on: "encoder windows" counts the
/// 30 s windows encoded, which the batched path encodes several to an "encode" call.
pub fn count(stage: &'static str, n: u64) {
    if IN_PROCESS.load(Ordering::Relaxed) {
        add_n(&TAKEN, stage, Duration::ZERO, n);
    }
    if env_enabled() {
        add_n(&REPORTED, stage, Duration::ZERO, n);
    }
}

fn add(totals: &'static Mutex<Vec<StageTime>>, stage: &'static str, d: Duration) {
    add_n(totals, stage, d, 1);
}

fn add_n(totals: &'static Mutex<Vec<StageTime>>, stage: &'static str, d: Duration, n: u64) {
    let mut totals = lock(totals);
    match totals.iter_mut().find(|t| t.stage == stage) {
        Some(t) => {
            t.total += d;
            t.calls += n;
        }
        None => totals.push(StageTime { stage, total: d, calls: n }),
    }
}

/// Prints and clears the totals gathered since the last report (when `SCRIBE_WHISPER_PROFILE`
/// is set).
pub fn report(label: &str) {
    if !env_enabled() {
        return;
    }
    let totals = std::mem::take(&mut *lock(&REPORTED));
    let lines: Vec<String> = totals
        .iter()
        .map(|t| format!("  {:<18}{:>9.3} s {:>7} calls", t.stage, t.total.as_secs_f64(), t.calls))
        .collect();
    eprintln!("[whisper profile] {label}\n{}", lines.join("\n"));
}
