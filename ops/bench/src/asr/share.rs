//! The share of this machine's limit a run reaches: the decoder's weight reads against the
//! measured memory bandwidth, the encoder's flops against the measured peak (see
//! [`scribe_bench::limits`]), from the engine's stage timings.

use scribe_bench::limits::{self, FmaKind};
use scribe_whisper::profile::StageTime;

/// What one decoder step and one encoder window cost the loaded model (`Engine::cost()`).
#[derive(Clone, Copy, Debug)]
pub struct Cost {
    pub decoder_bytes_per_step: u64,
    pub encoder_flops_per_window: f64,
}

/// This machine's ceilings, measured at the start of the run.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub bytes_per_s: f64,
    pub flops: f64,
    pub fma: FmaKind,
}

impl Limits {
    /// Measures both with `threads` threads: a 1 GiB streaming read (32× a large L3) and
    /// about half a second of register-resident FMAs.
    pub fn measure(threads: usize) -> Limits {
        let bytes_per_s = limits::memory_bandwidth(threads, 1 << 30, 3);
        let (flops, fma) = limits::peak_flops(threads, 100_000_000);
        Limits { bytes_per_s, flops, fma }
    }

    pub fn describe(&self, threads: usize) -> String {
        format!(
            "this machine's limits ({threads} threads): memory read {:.1} GB/s (1 GiB streamed), peak {:.1} GFLOP/s f32 ({} loop in registers)",
            self.bytes_per_s / 1e9,
            self.flops / 1e9,
            self.fma
        )
    }
}

/// The stage whose calls are decoder steps (one read of the decoder's weights each).
pub const DECODER_STEP: &str = "decoder step";
/// The stage whose time is the encoder's.
pub const ENCODE: &str = "encode";
/// The count of windows encoded (the batched path encodes several per "encode" call).
pub const ENCODER_WINDOWS: &str = "encoder windows";

/// The shares (0..1) a run reached: decoder, encoder; `None` when unknown.
#[derive(Clone, Copy, Debug, Default)]
pub struct Share {
    pub decoder: Option<f64>,
    pub encoder: Option<f64>,
    pub decoder_steps: u64,
    pub windows: u64,
    pub decoder_s: f64,
    pub encoder_s: f64,
}

impl Share {
    pub fn of(cost: Option<Cost>, stages: &[StageTime], limits: &Limits) -> Share {
        let stage = |name: &str| stages.iter().find(|s| s.stage == name);
        let (decoder_steps, decoder_s) = stage(DECODER_STEP).map_or((0, 0.0), |s| (s.calls, s.total.as_secs_f64()));
        let (encode_calls, encoder_s) = stage(ENCODE).map_or((0, 0.0), |s| (s.calls, s.total.as_secs_f64()));
        let windows = stage(ENCODER_WINDOWS).map_or(encode_calls, |s| s.calls);
        let ratio = |work: f64, secs: f64, limit: f64| (secs > 0.0 && work > 0.0).then(|| work / secs / limit);
        Share {
            decoder: cost.and_then(|c| {
                ratio(c.decoder_bytes_per_step as f64 * decoder_steps as f64, decoder_s, limits.bytes_per_s)
            }),
            encoder: cost.and_then(|c| ratio(c.encoder_flops_per_window * windows as f64, encoder_s, limits.flops)),
            decoder_steps,
            windows,
            decoder_s,
            encoder_s,
        }
    }

    /// Adds another transcription's counts (the short clips are many transcriptions).
    pub fn add_stages(total: &mut Vec<StageTime>, stages: Vec<StageTime>) {
        for s in stages {
            match total.iter_mut().find(|t| t.stage == s.stage) {
                Some(t) => {
                    t.total += s.total;
                    t.calls += s.calls;
                }
                None => total.push(s),
            }
        }
    }
}

/// A share as a percentage, or "-" when unknown.
pub fn percent(share: Option<f64>) -> String {
    share.map_or_else(|| "-".to_string(), |s| format!("{:.1}%", s * 100.0))
}
