//! Whisper's log-mel spectrogram, computed exactly as faster-whisper's `FeatureExtractor`.
//!
//! The encoder was trained on these features, so every detail matters: 160 zero samples
//! appended, center reflect padding of 200, periodic Hann window, 400-point real FFT (not a
//! power of two, hence realfft rather than burn), hop 160, last frame dropped, power spectrum,
//! librosa's Slaney mel filter bank, log10 clamped at 1e-10, floor at (global max − 8), and
//! (x + 4) / 4. The FFT plan and the filter banks are built once per process.

use std::sync::{Arc, OnceLock};

use realfft::{RealFftPlanner, RealToComplex};

pub const N_FFT: usize = 400;
pub const HOP: usize = 160;
/// Frames in one 30 s Whisper window.
pub const N_FRAMES: usize = 3000;
/// Frequency bins of the one-sided spectrum.
pub const N_BINS: usize = N_FFT / 2 + 1;
const SAMPLE_RATE: f64 = 16_000.0;

/// A log-mel spectrogram, row-major `[n_mels × n_frames]`.
#[derive(Clone, Debug, PartialEq)]
pub struct LogMel {
    pub n_mels: usize,
    pub n_frames: usize,
    pub data: Vec<f32>,
}

/// librosa's `mel(sr=16000, n_fft=400, n_mels, htk=False, norm="slaney")`, row-major
/// `[n_mels × 201]`, the bank Whisper ships in `mel_filters.npz`.
pub fn mel_filters(n_mels: usize) -> Vec<f32> {
    // Slaney's mel scale: linear below 1 kHz, logarithmic above.
    const F_SP: f64 = 200.0 / 3.0;
    const MIN_LOG_HZ: f64 = 1000.0;
    const MIN_LOG_MEL: f64 = MIN_LOG_HZ / F_SP;
    let logstep = 6.4f64.ln() / 27.0;
    let hz_to_mel = |hz: f64| {
        if hz >= MIN_LOG_HZ { MIN_LOG_MEL + (hz / MIN_LOG_HZ).ln() / logstep } else { hz / F_SP }
    };
    let mel_to_hz = |mel: f64| {
        if mel >= MIN_LOG_MEL { MIN_LOG_HZ * (logstep * (mel - MIN_LOG_MEL)).exp() } else { F_SP * mel }
    };
    let max_mel = hz_to_mel(SAMPLE_RATE / 2.0);
    let freqs: Vec<f64> = (0..n_mels + 2).map(|i| mel_to_hz(max_mel * i as f64 / (n_mels + 1) as f64)).collect();
    let fft_freq = |k: usize| k as f64 * SAMPLE_RATE / N_FFT as f64;

    let mut weights = vec![0f32; n_mels * N_BINS];
    for m in 0..n_mels {
        let (lo, mid, hi) = (freqs[m], freqs[m + 1], freqs[m + 2]);
        let enorm = 2.0 / (hi - lo);
        for k in 0..N_BINS {
            let f = fft_freq(k);
            let lower = (f - lo) / (mid - lo);
            let upper = (hi - f) / (hi - mid);
            weights[m * N_BINS + k] = (lower.min(upper).max(0.0) * enorm) as f32;
        }
    }
    weights
}

/// Whisper's normalised log-mel of 16 kHz mono `samples`: `samples.len() / 160 + 1` frames.
/// The max − 8 floor is global over the input, as in faster-whisper (which computes the
/// features of a whole file at once).
pub fn log_mel(samples: &[f32], n_mels: usize) -> LogMel {
    let total = samples.len();
    let mut mel = mel_power_frames(samples, 0, total, 0, n_frames(total), n_mels);
    let max = max_log10(&mel);
    normalize(&mut mel, max);
    mel
}

/// Frames in the spectrogram of a signal of `total` samples (the last one covers the padding).
pub fn n_frames(total: usize) -> usize {
    total / HOP + 1
}

/// The largest `log10` mel power of a spectrogram (before [`normalize`]): the reference of the
/// max − 8 floor. Over a whole signal it is the max of the maxima of its pieces.
pub fn max_log10(power: &LogMel) -> f32 {
    power.data.iter().fold(f32::NEG_INFINITY, |m, &x| m.max(x.max(1e-10).log10()))
}

/// Turns mel power into Whisper's features: log10, floor at `max_log10 − 8`, then (x + 4) / 4.
pub fn normalize(power: &mut LogMel, max_log10: f32) {
    let floor = max_log10 - 8.0;
    for x in &mut power.data {
        *x = (x.max(1e-10).log10().max(floor) + 4.0) / 4.0;
    }
}

/// Position `j` of the STFT input is sample `source(j)` of the signal (or one of the zeros
/// appended after it when `source(j) >= total`): faster-whisper appends 160 zeros, then pads
/// 200 on each side by reflection.
fn source(j: usize, total: usize) -> usize {
    reflect(j as isize - (N_FFT / 2) as isize, total + HOP)
}

/// The samples (`lo..hi`, within the signal) that frames `first..first + n` read.
pub fn frame_support(first: usize, n: usize, total: usize) -> std::ops::Range<usize> {
    let (mut lo, mut hi) = (usize::MAX, 0);
    for j in first * HOP..(first + n.max(1) - 1) * HOP + N_FFT {
        let i = source(j, total);
        if i < total {
            lo = lo.min(i);
            hi = hi.max(i + 1);
        }
    }
    if lo > hi { 0..0 } else { lo..hi }
}

/// Mel power (before the log) of frames `first..first + n` of the spectrogram of a signal of
/// `total` samples, `[n_mels × n]`. `part` holds the signal's samples from `offset` on and
/// must cover [`frame_support`]; each frame is computed exactly as in a whole-signal pass.
pub fn mel_power_frames(part: &[f32], offset: usize, total: usize, first: usize, n: usize, n_mels: usize) -> LogMel {
    let start = first * HOP;
    let signal: Vec<f32> = (start..start + n.saturating_sub(1) * HOP + N_FFT)
        .map(|j| {
            let i = source(j, total);
            if i < total { part[i - offset] } else { 0.0 }
        })
        .collect();

    let built;
    let filters = match SparseFilters::cached(n_mels) {
        Some(bank) => bank,
        None => {
            built = SparseFilters::new(n_mels);
            &built
        }
    };
    let fft = plan();
    let window = hann();
    let mut frame = fft.make_input_vec();
    let mut spectrum = fft.make_output_vec();
    let mut scratch = fft.make_scratch_vec();
    let mut power = [0f32; N_BINS];
    let mut data = vec![0f32; n_mels * n];
    for t in 0..n {
        let start = t * HOP;
        for ((dst, &x), &w) in frame.iter_mut().zip(&signal[start..start + N_FFT]).zip(window) {
            *dst = x * w;
        }
        fft.process_with_scratch(&mut frame, &mut spectrum, &mut scratch).expect("buffers come from the plan itself");
        for (p, c) in power.iter_mut().zip(&spectrum) {
            *p = c.norm_sqr();
        }
        for (m, row) in filters.rows.iter().enumerate() {
            let sum: f32 = row.weights.iter().zip(&power[row.first..]).map(|(w, p)| w * p).sum();
            data[m * n + t] = sum;
        }
    }
    LogMel { n_mels, n_frames: n, data }
}

/// numpy's "reflect" padding index for position `i` of a signal of length `n` (mirrors
/// repeatedly when the padding is longer than the signal).
fn reflect(i: isize, n: usize) -> usize {
    if n == 1 {
        return 0;
    }
    let period = 2 * (n as isize - 1);
    let i = i.rem_euclid(period);
    (if i < n as isize { i } else { period - i }) as usize
}

fn plan() -> &'static Arc<dyn RealToComplex<f32>> {
    static PLAN: OnceLock<Arc<dyn RealToComplex<f32>>> = OnceLock::new();
    PLAN.get_or_init(|| RealFftPlanner::<f32>::new().plan_fft_forward(N_FFT))
}

/// Periodic Hann window (`np.hanning(401)[:-1]`).
fn hann() -> &'static [f32; N_FFT] {
    static WINDOW: OnceLock<[f32; N_FFT]> = OnceLock::new();
    WINDOW.get_or_init(|| {
        std::array::from_fn(|i| (0.5 - 0.5 * (2.0 * std::f64::consts::PI * i as f64 / N_FFT as f64).cos()) as f32)
    })
}

/// The mel bank without its zeros: each filter touches only a few FFT bins.
struct SparseFilters {
    rows: Vec<FilterRow>,
}

struct FilterRow {
    first: usize,
    weights: Vec<f32>,
}

impl SparseFilters {
    /// The banks Whisper uses (80 and 128 mels), built once.
    fn cached(n_mels: usize) -> Option<&'static SparseFilters> {
        static BANK_80: OnceLock<SparseFilters> = OnceLock::new();
        static BANK_128: OnceLock<SparseFilters> = OnceLock::new();
        match n_mels {
            80 => Some(BANK_80.get_or_init(|| SparseFilters::new(80))),
            128 => Some(BANK_128.get_or_init(|| SparseFilters::new(128))),
            _ => None,
        }
    }

    fn new(n_mels: usize) -> SparseFilters {
        let dense = mel_filters(n_mels);
        let rows = dense
            .chunks_exact(N_BINS)
            .map(|row| {
                let first = row.iter().position(|&w| w != 0.0).unwrap_or(0);
                let last = row.iter().rposition(|&w| w != 0.0).map_or(first, |l| l + 1);
                FilterRow { first, weights: row[first..last].to_vec() }
            })
            .collect();
        SparseFilters { rows }
    }
}
