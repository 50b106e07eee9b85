//! Kaldi-compatible log mel filter banks, the input CAM++ was trained on.
//!
//! Follows Kaldi's `compute-fbank-feats` defaults as torchaudio's `kaldi.fbank` reproduces them
//! (3D-Speaker extracts its features that way): 25 ms frames every 10 ms with `snip_edges`
//! (only whole frames), per-frame DC removal, pre-emphasis 0.97 (the first sample against
//! itself), the "povey" window (a Hann window raised to 0.85), zero padding to 512 points,
//! power spectrum, 80 triangular filters on Kaldi's mel scale (1127·ln(1 + f/700)) from 20 Hz
//! to Nyquist, and the natural log floored at f32 epsilon. Dither is 0 (deterministic), and no
//! energy coefficient is added. Samples are taken in [-1, 1], as torchaudio loads them.

use std::sync::{Arc, OnceLock};

use realfft::{RealFftPlanner, RealToComplex};

pub const SAMPLE_RATE: usize = 16_000;
pub const FRAME_LENGTH: usize = 400;
pub const FRAME_SHIFT: usize = 160;
pub const N_FFT: usize = 512;
pub const N_MELS: usize = 80;
const PREEMPH: f32 = 0.97;
const LOW_FREQ: f32 = 20.0;

fn mel(f: f32) -> f32 {
    1127.0 * (1.0 + f / 700.0).ln()
}

/// Frames `snip_edges` yields for `n` samples.
pub fn num_frames(n: usize) -> usize {
    if n < FRAME_LENGTH { 0 } else { 1 + (n - FRAME_LENGTH) / FRAME_SHIFT }
}

struct Tables {
    window: Vec<f32>,
    /// Per mel bin: first FFT bin and its weights.
    filters: Vec<(usize, Vec<f32>)>,
    fft: Arc<dyn RealToComplex<f32>>,
}

fn tables() -> &'static Tables {
    static T: OnceLock<Tables> = OnceLock::new();
    T.get_or_init(|| {
        let n = FRAME_LENGTH;
        let window = (0..n)
            .map(|i| {
                let a = 2.0 * std::f64::consts::PI * i as f64 / (n - 1) as f64;
                (0.5 - 0.5 * a.cos()).powf(0.85) as f32
            })
            .collect();
        let nyquist = SAMPLE_RATE as f32 / 2.0;
        let (lo, hi) = (mel(LOW_FREQ), mel(nyquist));
        let delta = (hi - lo) / (N_MELS + 1) as f32;
        let bin_width = SAMPLE_RATE as f32 / N_FFT as f32;
        let filters = (0..N_MELS)
            .map(|b| {
                let left = lo + b as f32 * delta;
                let center = lo + (b + 1) as f32 * delta;
                let right = lo + (b + 2) as f32 * delta;
                // Kaldi weighs the first N_FFT/2 bins (not the Nyquist bin).
                let w: Vec<f32> = (0..N_FFT / 2)
                    .map(|i| {
                        let m = mel(i as f32 * bin_width);
                        if m > left && m < right {
                            if m <= center { (m - left) / (center - left) } else { (right - m) / (right - center) }
                        } else {
                            0.0
                        }
                    })
                    .collect();
                let first = w.iter().position(|&v| v > 0.0).unwrap_or(0);
                let last = w.iter().rposition(|&v| v > 0.0).map_or(first, |p| p + 1);
                (first, w[first..last].to_vec())
            })
            .collect();
        let fft = RealFftPlanner::<f32>::new().plan_fft_forward(N_FFT);
        Tables { window, filters, fft }
    })
}

/// Log mel filter banks of 16 kHz `samples`, row-major `[frames, 80]`.
pub fn fbank(samples: &[f32]) -> Vec<f32> {
    let t = tables();
    let frames = num_frames(samples.len());
    let mut out = vec![0.0f32; frames * N_MELS];
    let mut buf = t.fft.make_input_vec();
    let mut spec = t.fft.make_output_vec();
    let mut scratch = t.fft.make_scratch_vec();
    let mut power = vec![0.0f32; N_FFT / 2 + 1];
    for (f, row) in out.chunks_exact_mut(N_MELS).enumerate() {
        let frame = &samples[f * FRAME_SHIFT..f * FRAME_SHIFT + FRAME_LENGTH];
        let mean = frame.iter().map(|&v| v as f64).sum::<f64>() as f32 / FRAME_LENGTH as f32;
        for (b, &v) in buf.iter_mut().zip(frame) {
            *b = v - mean;
        }
        for i in (1..FRAME_LENGTH).rev() {
            buf[i] -= PREEMPH * buf[i - 1];
        }
        buf[0] -= PREEMPH * buf[0];
        for (b, w) in buf.iter_mut().zip(&t.window) {
            *b *= w;
        }
        buf[FRAME_LENGTH..].iter_mut().for_each(|b| *b = 0.0);
        t.fft.process_with_scratch(&mut buf, &mut spec, &mut scratch).expect("fft sizes");
        for (p, c) in power.iter_mut().zip(&spec) {
            *p = c.norm_sqr();
        }
        for (m, (first, w)) in row.iter_mut().zip(&t.filters) {
            let e: f32 = w.iter().zip(&power[*first..]).map(|(a, b)| a * b).sum();
            *m = e.max(f32::EPSILON).ln();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_count_follows_snip_edges() {
        assert_eq!(num_frames(399), 0);
        assert_eq!(num_frames(400), 1);
        assert_eq!(num_frames(16_000), 98);
    }

    /// Silence floors every band at ln(f32::EPSILON).
    #[test]
    fn silence_is_the_log_floor() {
        let f = fbank(&[0.0; 800]);
        assert_eq!(f.len(), 3 * N_MELS);
        assert!(f.iter().all(|&v| (v - f32::EPSILON.ln()).abs() < 1e-6));
    }

    /// A pure tone puts its energy in the mel band whose centre is nearest, and the value
    /// matches the closed form: a 1 kHz sine of amplitude A, after the DC removal,
    /// pre-emphasis and window, has power |X(k)|² ≈ (A·|1 − 0.97·e^{-jω}|·Σw/2)² at its bin.
    #[test]
    fn tone_lands_in_its_band_with_the_expected_energy() {
        let a = 0.5f32;
        let freq = 1000.0f32; // exactly bin 32 of the 512-point FFT
        let s: Vec<f32> =
            (0..4000).map(|i| a * (2.0 * std::f32::consts::PI * freq * i as f32 / 16000.0).sin()).collect();
        let f = fbank(&s);
        let row = &f[5 * N_MELS..6 * N_MELS];
        let best = row.iter().enumerate().max_by(|x, y| x.1.total_cmp(y.1)).unwrap().0;
        // mel centres: lo + (b+1)·delta; 1 kHz is mel 999.99, the nearest centre is band 22.
        let (lo, hi) = (mel(20.0), mel(8000.0));
        let delta = (hi - lo) / 81.0;
        let expect_band = ((mel(1000.0) - lo) / delta - 1.0).round() as usize;
        assert_eq!(best, expect_band);
        // Closed-form peak: the band's weight at bin 32 times the tone's power there (the
        // window's leakage into neighbouring bins adds the rest, within a few percent).
        let t = tables();
        let w = &t.window;
        let sum_w: f32 = w.iter().sum();
        let omega = 2.0 * std::f32::consts::PI * freq / 16000.0;
        let pre = ((1.0 - 0.97 * omega.cos()).powi(2) + (0.97 * omega.sin()).powi(2)).sqrt();
        let peak = (a * pre * sum_w / 2.0).powi(2);
        let (first, weights) = &t.filters[best];
        let w32 = weights[32 - first];
        let lower = (peak * w32).ln();
        assert!(row[best] >= lower - 0.05 && row[best] < lower + 1.0, "{} vs {}", row[best], lower);
    }
}
