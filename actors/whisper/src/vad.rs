//! Voice activity detection: Silero VAD v6 on burn, and faster-whisper's speech-span rules.
//!
//! Whisper invents text on silence and noise; the engine asks this module where speech is, to
//! skip long non-speech stretches and to report "no speech found". The network is Silero's:
//! a fixed STFT as a conv (256 taps, hop 128), magnitude, four Conv1d+ReLU, one LSTM cell and
//! a 1×1 conv + sigmoid, fed 512-sample (32 ms) chunks each preceded by the previous chunk's
//! last 64 samples, with the LSTM state carried from chunk to chunk. Everything before the LSTM
//! is independent per chunk, so it runs on burn in batches; the recurrence itself (a 128×512
//! mat-vec per chunk) runs in plain Rust, where it costs microseconds instead of a dozen burn
//! op dispatches per chunk. `speech_spans` is faster-whisper's `get_speech_timestamps`.
//! A pass's running state is a [`VadState`] owned by the caller (fed through
//! [`SileroVad::push`]), so a live session can keep one beside a shared engine;
//! [`VadStream`] is the same with the model borrowed, for a file's single pass.

use std::ops::Range;
use std::path::{Path, PathBuf};

use burn::tensor::activation::relu;
use burn::tensor::module::conv1d;
use burn::tensor::ops::ConvOptions;
use burn::tensor::{Device, Tensor, TensorData};
use safetensors::{Dtype, SafeTensors};

/// Samples per VAD chunk at 16 kHz.
pub const CHUNK: usize = 512;
/// Samples of the previous chunk that precede each chunk.
const CONTEXT: usize = 64;
const HIDDEN: usize = 128;
/// Chunks encoded per burn batch (≈ 33 s of audio; bounds memory on long files).
const BATCH: usize = 1024;

#[derive(Debug, thiserror::Error)]
pub enum VadError {
    #[error("Cannot read the voice activity model {}: {source} (install it with `bash ops/setup.sh`)", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("The voice activity model {} is not a valid Silero VAD v6 file: {reason}", path.display())]
    Invalid { path: PathBuf, reason: String },
}

/// Silero VAD v6 (16 kHz), weights loaded once; `Send + Sync`, share it.
pub struct SileroVad {
    device: Device,
    stft: Tensor<3>,                           // [258, 1, 256]
    convs: Vec<(Tensor<3>, Tensor<1>, usize)>, // weight, bias, stride
    w_ih: Tensor<2>,                           // [128, 512] (transposed)
    b_gates: Tensor<1>,                        // bias_ih + bias_hh
    w_hh: Vec<f32>,                            // [512, 128], row per gate unit
    final_w: Vec<f32>,                         // [128]
    final_b: f32,
}

impl SileroVad {
    /// Loads the model onto burn's flex device (this CPU).
    pub fn load(path: &Path) -> Result<SileroVad, VadError> {
        SileroVad::load_on(path, &Device::flex())
    }

    /// Loads the model onto `device` (the engine's: a GPU's where Whisper runs on one); the
    /// LSTM's recurrence stays on the host either way.
    pub fn load_on(path: &Path, device: &Device) -> Result<SileroVad, VadError> {
        let bytes = std::fs::read(path).map_err(|source| VadError::Io { path: path.into(), source })?;
        let invalid = |reason: String| VadError::Invalid { path: path.into(), reason };
        let st = SafeTensors::deserialize(&bytes).map_err(|e| invalid(e.to_string()))?;
        let get = |name: &str, shape: &[usize]| -> Result<Vec<f32>, VadError> {
            let t = st.tensor(name).map_err(|_| invalid(format!("tensor `{name}` is missing")))?;
            if t.dtype() != Dtype::F32 || t.shape() != shape {
                return Err(invalid(format!(
                    "tensor `{name}` is {:?} {:?}, expected F32 {shape:?}",
                    t.dtype(),
                    t.shape()
                )));
            }
            Ok(t.data().chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
        };
        let device = device.clone();
        let t3 = |v: Vec<f32>, s: [usize; 3]| Tensor::<3>::from_data(TensorData::new(v, s), &device);
        let t1 = |v: Vec<f32>| {
            let n = v.len();
            Tensor::<1>::from_data(TensorData::new(v, [n]), &device)
        };

        let stft = t3(get("stft_conv.weight", &[258, 1, 256])?, [258, 1, 256]);
        let mut convs = Vec::new();
        for (i, (cout, cin, stride)) in [(128, 129, 1), (64, 128, 2), (64, 64, 2), (128, 64, 1)].into_iter().enumerate()
        {
            let w = get(&format!("conv{}.weight", i + 1), &[cout, cin, 3])?;
            let b = get(&format!("conv{}.bias", i + 1), &[cout])?;
            convs.push((t3(w, [cout, cin, 3]), t1(b), stride));
        }
        let w_ih = get("lstm_cell.weight_ih", &[4 * HIDDEN, HIDDEN])?;
        let w_ih = Tensor::<2>::from_data(TensorData::new(w_ih, [4 * HIDDEN, HIDDEN]), &device).transpose();
        let b_ih = get("lstm_cell.bias_ih", &[4 * HIDDEN])?;
        let b_hh = get("lstm_cell.bias_hh", &[4 * HIDDEN])?;
        let b_gates = t1(b_ih.iter().zip(&b_hh).map(|(a, b)| a + b).collect());
        let w_hh = get("lstm_cell.weight_hh", &[4 * HIDDEN, HIDDEN])?;
        let final_w = get("final_conv.weight", &[1, HIDDEN, 1])?;
        let final_b = get("final_conv.bias", &[1])?[0];
        Ok(SileroVad { device, stft, convs, w_ih, b_gates, w_hh, final_w, final_b })
    }

    /// Speech probability of every 512-sample chunk of 16 kHz `samples`, as faster-whisper
    /// computes them: the audio is zero-padded to the next multiple of 512 (a whole extra
    /// chunk when it already is one), so there are `samples.len() / 512 + 1` values.
    pub fn speech_probabilities(&self, samples: &[f32]) -> Vec<f32> {
        let mut stream = self.stream();
        let mut probs = stream.push(samples);
        probs.extend(stream.finish());
        probs
    }

    /// A VAD pass fed piece by piece (for files too long to hold whole).
    pub fn stream(&self) -> VadStream<'_> {
        VadStream { vad: self, state: VadState::new() }
    }

    /// Feeds `samples` (16 kHz) to the pass whose state is `state`; returns the probabilities
    /// of the 512-sample chunks they completed (a partial chunk waits in `state` for the next
    /// samples). For a caller that holds the model behind a shared reference (an
    /// `Arc<Engine>`) and keeps the state itself, e.g. a live session.
    pub fn push(&self, state: &mut VadState, samples: &[f32]) -> Vec<f32> {
        state.pending.extend_from_slice(samples);
        let whole = state.pending.len() / CHUNK * CHUNK;
        let mut probs = Vec::with_capacity(whole / CHUNK);
        let pending = std::mem::take(&mut state.pending);
        for block in pending[..whole].chunks(BATCH * CHUNK) {
            self.run(state, block, &mut probs);
        }
        state.pending = pending[whole..].to_vec();
        probs
    }

    /// Ends the pass: the remainder, zero-padded, makes one last chunk (always, as in
    /// faster-whisper), whose probability is returned.
    pub fn finish(&self, mut state: VadState) -> f32 {
        let mut last = std::mem::take(&mut state.pending);
        last.resize(CHUNK, 0.0);
        let mut probs = Vec::with_capacity(1);
        self.run(&mut state, &last, &mut probs);
        probs[0]
    }

    /// Windows of digital silence (context and chunk all zeros, as in a file padded with
    /// silence or a compression bomb of hours of it) all give the encoder the same input: they
    /// reuse its output for one such window, and once the LSTM state stops changing, its
    /// probability. The result is the same; hours of silence take seconds instead of minutes.
    fn run(&self, state: &mut VadState, block: &[f32], probs: &mut Vec<f32>) {
        let mut windows = Vec::with_capacity(block.len() / CHUNK * (CHUNK + 2 * CONTEXT));
        let mut n = 0;
        for chunk in block.chunks_exact(CHUNK) {
            if state.context.iter().all(|&s| s == 0.0) && chunk.iter().all(|&s| s == 0.0) {
                self.encode_and_step(state, std::mem::take(&mut windows), n, probs);
                n = 0;
                probs.push(self.step_silent(state));
                continue;
            }
            windows.extend_from_slice(&state.context);
            windows.extend_from_slice(chunk);
            // Silero pads each 576-sample input by reflection on the right (64 samples).
            windows.extend((0..CONTEXT).map(|k| chunk[CHUNK - 2 - k]));
            state.context.copy_from_slice(&chunk[CHUNK - CONTEXT..]);
            n += 1;
        }
        self.encode_and_step(state, windows, n, probs);
    }

    fn encode_and_step(&self, state: &mut VadState, windows: Vec<f32>, n: usize, probs: &mut Vec<f32>) {
        if n == 0 {
            return;
        }
        state.settled = None;
        let gates = self.encode(windows, n);
        for g in gates.chunks_exact(4 * HIDDEN) {
            probs.push(self.step(state, g));
        }
    }

    /// The step of a chunk of digital silence.
    fn step_silent(&self, state: &mut VadState) -> f32 {
        if let Some(p) = state.settled {
            return p;
        }
        let gates = match state.silent_gates.take() {
            Some(g) => g,
            None => self.encode(vec![0.0; CHUNK + 2 * CONTEXT], 1),
        };
        let (h, c) = (state.h, state.c);
        let p = self.step(state, &gates);
        state.silent_gates = Some(gates);
        if h == state.h && c == state.c {
            state.settled = Some(p);
        }
        p
    }

    /// One LSTM cell step (PyTorch gate order i, f, g, o) and the output head.
    fn step(&self, state: &mut VadState, x_gates: &[f32]) -> f32 {
        let w = &self.w_hh;
        let mut gates = [0f32; 4 * HIDDEN];
        for (j, gate) in gates.iter_mut().enumerate() {
            let row = &w[j * HIDDEN..(j + 1) * HIDDEN];
            *gate = x_gates[j] + row.iter().zip(&state.h).map(|(a, b)| a * b).sum::<f32>();
        }
        for k in 0..HIDDEN {
            let i = sigmoid(gates[k]);
            let f = sigmoid(gates[HIDDEN + k]);
            let g = gates[2 * HIDDEN + k].tanh();
            let o = sigmoid(gates[3 * HIDDEN + k]);
            state.c[k] = f * state.c[k] + i * g;
            state.h[k] = o * state.c[k].tanh();
        }
        let logit: f32 = self.final_w.iter().zip(&state.h).map(|(w, h)| w * h.max(0.0)).sum();
        sigmoid(logit + self.final_b)
    }

    /// Input projection `W_ih·x + b` of the LSTM for a batch of 640-sample windows
    /// (64 context + 512 chunk + 64 reflected), row-major `[n, 512]`.
    fn encode(&self, windows: Vec<f32>, n: usize) -> Vec<f32> {
        const WIN: usize = CONTEXT + CHUNK + CONTEXT;
        let x = Tensor::<3>::from_data(TensorData::new(windows, [n, 1, WIN]), &self.device);
        let spec = conv1d(x, self.stft.clone(), None, ConvOptions::new([128], [0], [1], 1)); // [n, 258, 4]
        let re = spec.clone().narrow(1, 0, 129);
        let im = spec.narrow(1, 129, 129);
        let mut x = (re.square() + im.square()).sqrt();
        for (w, b, stride) in &self.convs {
            x = relu(conv1d(x, w.clone(), Some(b.clone()), ConvOptions::new([*stride], [1], [1], 1)));
        }
        let x: Tensor<2> = x.reshape([n, HIDDEN]); // one time step left
        let gates = x.matmul(self.w_ih.clone()) + self.b_gates.clone().unsqueeze::<2>();
        gates.into_data().try_to_vec::<f32>().expect("f32 tensor")
    }
}

/// The running state of one VAD pass, owned by its caller: LSTM state, the last 64 samples,
/// and a partial chunk. Feed it with [`SileroVad::push`]; it holds no reference to the model,
/// so a long-lived consumer (a live session) can keep it next to an `Arc` of the engine.
#[derive(Clone, Debug)]
pub struct VadState {
    h: [f32; HIDDEN],
    c: [f32; HIDDEN],
    context: [f32; CONTEXT],
    pending: Vec<f32>,
    /// The encoder's output for a window of digital silence (all zeros), computed once.
    silent_gates: Option<Vec<f32>>,
    /// The probability of a silent chunk once the LSTM state no longer changes under silence.
    settled: Option<f32>,
}

impl VadState {
    /// The state at the start of a stream.
    pub fn new() -> VadState {
        VadState {
            h: [0.0; HIDDEN],
            c: [0.0; HIDDEN],
            context: [0.0; CONTEXT],
            pending: Vec::new(),
            silent_gates: None,
            settled: None,
        }
    }

    /// Samples received that do not yet make a whole chunk (0..512).
    pub fn pending(&self) -> usize {
        self.pending.len()
    }
}

impl Default for VadState {
    fn default() -> Self {
        VadState::new()
    }
}

/// A VAD pass that borrows its model: [`VadState`] with the model at hand.
pub struct VadStream<'a> {
    vad: &'a SileroVad,
    state: VadState,
}

impl VadStream<'_> {
    /// Feeds samples; returns the probabilities of the chunks they completed.
    pub fn push(&mut self, samples: &[f32]) -> Vec<f32> {
        self.vad.push(&mut self.state, samples)
    }

    /// Ends the stream: the remainder, zero-padded, makes one last chunk (always, as in
    /// faster-whisper).
    pub fn finish(self) -> Vec<f32> {
        vec![self.vad.finish(self.state)]
    }
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// faster-whisper's `VadOptions`; `Default` is its defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct VadParams {
    /// Probability at or above which a chunk is speech.
    pub threshold: f32,
    /// Below this a chunk is silence; in between it continues the current state.
    /// `None` = `max(threshold − 0.15, 0.01)`.
    pub neg_threshold: Option<f32>,
    /// Spans not longer than this are dropped.
    pub min_speech_ms: u32,
    /// Spans longer than this are split (at a silence of ≥ 98 ms when there is one).
    pub max_speech_s: f32,
    /// Silence needed to end a span.
    pub min_silence_ms: u32,
    /// Padding added on both sides of each span.
    pub speech_pad_ms: u32,
}

impl Default for VadParams {
    fn default() -> Self {
        VadParams {
            threshold: 0.5,
            neg_threshold: None,
            min_speech_ms: 0,
            max_speech_s: f32::INFINITY,
            min_silence_ms: 2000,
            speech_pad_ms: 400,
        }
    }
}

/// Speech spans, in samples, of audio of `n_samples` whose chunk probabilities are `probs`.
/// A line-by-line port of faster-whisper's `get_speech_timestamps`.
pub fn speech_spans(probs: &[f32], n_samples: usize, p: &VadParams) -> Vec<Range<usize>> {
    const SR: f64 = 16_000.0;
    let win = CHUNK as i64;
    let min_speech = SR * p.min_speech_ms as f64 / 1000.0;
    let pad = SR * p.speech_pad_ms as f64 / 1000.0;
    let max_speech = SR * p.max_speech_s as f64 - win as f64 - 2.0 * pad;
    let min_silence = SR * p.min_silence_ms as f64 / 1000.0;
    let min_silence_at_max_speech = SR * 98.0 / 1000.0;
    let threshold = p.threshold;
    let neg_threshold = p.neg_threshold.unwrap_or((threshold - 0.15).max(0.01));
    let len = n_samples as i64;

    let mut triggered = false;
    let mut speeches: Vec<(i64, i64)> = Vec::new();
    let mut start: Option<i64> = None; // current_speech["start"]
    let mut temp_end = 0i64;
    let (mut prev_end, mut next_start) = (0i64, 0i64);

    for (i, &prob) in probs.iter().enumerate() {
        let pos = win * i as i64;
        if prob >= threshold && temp_end != 0 {
            temp_end = 0;
            if next_start < prev_end {
                next_start = pos;
            }
        }
        if prob >= threshold && !triggered {
            triggered = true;
            start = Some(pos);
            continue;
        }
        if triggered && start.is_some_and(|s| (pos - s) as f64 > max_speech) {
            if prev_end != 0 {
                speeches.push((start.unwrap_or(0), prev_end));
                start = None;
                if next_start < prev_end {
                    triggered = false;
                } else {
                    start = Some(next_start);
                }
                prev_end = 0;
                next_start = 0;
                temp_end = 0;
            } else {
                speeches.push((start.unwrap_or(0), pos));
                start = None;
                prev_end = 0;
                next_start = 0;
                temp_end = 0;
                triggered = false;
                continue;
            }
        }
        if prob < neg_threshold && triggered {
            if temp_end == 0 {
                temp_end = pos;
            }
            if (pos - temp_end) as f64 > min_silence_at_max_speech {
                prev_end = temp_end;
            }
            if ((pos - temp_end) as f64) < min_silence {
                continue;
            }
            let s = start.unwrap_or(0);
            if (temp_end - s) as f64 > min_speech {
                speeches.push((s, temp_end));
            }
            start = None;
            prev_end = 0;
            next_start = 0;
            temp_end = 0;
            triggered = false;
            continue;
        }
    }
    if let Some(s) = start
        && (len - s) as f64 > min_speech
    {
        speeches.push((s, len));
    }

    // Pad each span, splitting short gaps between neighbours evenly.
    let n = speeches.len();
    for i in 0..n {
        if i == 0 {
            speeches[0].0 = (speeches[0].0 as f64 - pad).max(0.0) as i64;
        }
        if i + 1 < n {
            let silence = speeches[i + 1].0 - speeches[i].1;
            if (silence as f64) < 2.0 * pad {
                speeches[i].1 += silence.div_euclid(2);
                speeches[i + 1].0 = (speeches[i + 1].0 - silence.div_euclid(2)).max(0);
            } else {
                speeches[i].1 = (speeches[i].1 as f64 + pad).min(len as f64) as i64;
                speeches[i + 1].0 = (speeches[i + 1].0 as f64 - pad).max(0.0) as i64;
            }
        } else {
            speeches[i].1 = (speeches[i].1 as f64 + pad).min(len as f64) as i64;
        }
    }
    speeches.into_iter().map(|(s, e)| s.max(0) as usize..e.max(0) as usize).collect()
}
