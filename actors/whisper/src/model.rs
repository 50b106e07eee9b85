//! The Whisper network on burn (flex backend, f32): audio encoder and text decoder.
//!
//! Weights come from a parsed CTranslate2 file ([`crate::ct2`]). The encoder's linear layers
//! (and the decoder's cross-attention key/value projection, applied to all 1500 frames) are
//! [`Dense`] GEMMs: f32 on the `gemm` crate under float32 and float16 (CTranslate2 on a CPU
//! has no float16 GEMM either), int8 on the VNNI kernel under int8, inputs quantized per row
//! as CTranslate2 does. The decoder's layers and the logits projection are [`Matrix`]
//! products of few rows in the [`ComputeType`] (f32, f16, or int8 with per-row scales,
//! converted or quantized at load time as CTranslate2 does); q/k/v stay fused so each
//! attention block does one matmul, and the logits projection is the token embedding (tied).
//! The decoder keeps a self-attention key/value cache per layer; cross-attention keys/values are
//! computed once per 30 s window ([`AudioContext`]). The struct is immutable after loading, so
//! one instance is shared between threads.

use burn::tensor::module::{conv1d, layer_norm};
use burn::tensor::ops::ConvOptions;
use burn::tensor::{Device, Tensor, TensorData};
use rayon::prelude::*;
use scribe_kernels::int8_gemm::Int8Gemm;
use scribe_kernels::{self as kernels, AttentionKv, AttentionPrecision, Dense, Matrix};

use crate::ct2::{Ct2Error, Ct2File, StoredWeight, WhisperDims};
use crate::engine::ComputeType;
use crate::profile::time;

const LN_EPS: f64 = 1e-5;

struct Norm {
    g: Tensor<1>,
    b: Tensor<1>,
}

impl Norm {
    fn forward<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        layer_norm(x, self.g.clone(), Some(self.b.clone()), LN_EPS)
    }
}

/// The encoder's feed-forward block, on [`Dense`] kernels (GELU fused into the first).
struct Mlp {
    norm: Norm,
    fc1: Dense,
    fc2: Dense,
}

impl Mlp {
    fn forward(&self, x: Tensor<3>) -> Tensor<3> {
        let [b, t, d] = x.dims();
        let hidden = self.fc1.forward(&to_vec(self.norm.forward(x.clone())), b * t, true);
        let device = x.device();
        x + from_vec(self.fc2.forward(&hidden, b * t, false), [b, t, d], &device)
    }
}

/// The decoder's feed-forward block, on [`Matrix`] kernels.
struct DecMlp {
    norm: Norm,
    fc1: Matrix,
    fc2: Matrix,
}

struct EncoderLayer {
    norm: Norm,
    qkv: Dense,
    out: Dense,
    mlp: Mlp,
}

/// Decoder weights live in [`Matrix`] form (f16 as stored, few rows per call); only the
/// cross-attention key/value projection, applied to all 1500 encoder frames, stays on burn.
struct DecoderLayer {
    norm: Norm,
    qkv: Matrix,
    out: Matrix,
    cross_norm: Norm,
    cross_q: Matrix,
    cross_kv: Dense,
    cross_out: Matrix,
    mlp: DecMlp,
}

/// A loaded Whisper model.
pub struct Whisper {
    pub dims: WhisperDims,
    device: Device,
    conv1: (Tensor<3>, Tensor<1>),
    conv2: (Tensor<3>, Tensor<1>),
    enc_pos: Tensor<3>, // [1, n_audio_ctx, d]
    enc_layers: Vec<EncoderLayer>,
    enc_norm: Norm,
    /// Token embedding `[vocab, d]`, also the (tied) logits projection.
    tok_emb: Matrix,
    dec_pos: Vec<f32>, // [n_text_ctx, d]
    dec_layers: Vec<DecoderLayer>,
    dec_norm: Norm,
    /// Cross-attention's keys and values and products: bf16 factors under int8 (where the
    /// CPU has AVX-512 BF16), half the bytes every decoder step reads per window; f32
    /// otherwise. The encoder's self-attention stays f32: in bf16 it moved the encoder's
    /// output 3 times further from CTranslate2's int8 one (`tests/model_geometries.rs`).
    cross_attention: AttentionPrecision,
}

/// Cross-attention keys and values of one encoded window, per decoder layer.
pub struct AudioContext {
    kv: Vec<AttentionKv>,
    /// Encoder positions (20 ms each): `n_audio_ctx` for a whole window, fewer for a window
    /// fitted to its speech ([`Whisper::encode_frames`]).
    positions: usize,
}

impl AudioContext {
    /// Encoder positions the decoder attends to (two mel frames, 20 ms, each).
    pub fn positions(&self) -> usize {
        self.positions
    }
}

/// Self-attention keys and values of one decoder layer: per batch row, `[len, d]` row-major.
#[derive(Clone, Default)]
struct LayerKv {
    k: Vec<Vec<f32>>,
    v: Vec<Vec<f32>>,
}

/// Self-attention keys and values of the tokens decoded so far, per layer.
#[derive(Clone)]
pub struct KvCache {
    layers: Vec<LayerKv>,
    len: usize,
    batch: usize,
}

impl KvCache {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn batch(&self) -> usize {
        self.batch
    }

    /// Keeps, for each new batch row, the cache of row `rows[i]` (beam reordering, or growing
    /// a batch of one into several hypotheses). A row's last use moves it instead of copying.
    pub fn select(&mut self, rows: &[usize]) {
        let mut uses = vec![0usize; self.batch];
        rows.iter().for_each(|&r| uses[r] += 1);
        for layer in &mut self.layers {
            let (mut k, mut v) = (std::mem::take(&mut layer.k), std::mem::take(&mut layer.v));
            let mut left = uses.clone();
            for &r in rows {
                left[r] -= 1;
                if left[r] == 0 {
                    layer.k.push(std::mem::take(&mut k[r]));
                    layer.v.push(std::mem::take(&mut v[r]));
                } else {
                    layer.k.push(k[r].clone());
                    layer.v.push(v[r].clone());
                }
            }
        }
        self.batch = rows.len();
    }
}

/// Raw cross-attention scores (before softmax) of the alignment heads, and logits, for a
/// whole token sequence; input to word-level timing.
pub struct AlignmentScores {
    /// `[n_heads, n_tokens, n_audio_ctx]`, row-major.
    pub qk: Vec<f32>,
    pub n_heads: usize,
    /// `[n_tokens, vocab]`, row-major.
    pub logits: Vec<f32>,
}

fn from_vec<const D: usize>(data: Vec<f32>, shape: [usize; D], device: &Device) -> Tensor<D> {
    Tensor::from_data(TensorData::new(data, shape), device)
}

fn to_vec<const D: usize>(t: Tensor<D>) -> Vec<f32> {
    t.into_data().try_into_vec::<f32>().expect("f32 tensor")
}

/// GELU on [`kernels::gelu`] (burn-flex's is a scalar libm loop on one thread).
fn fast_gelu<const D: usize>(t: Tensor<D>) -> Tensor<D> {
    let device = t.device();
    let shape: [usize; D] = t.dims();
    let mut x = to_vec(t);
    kernels::gelu(&mut x);
    from_vec(x, shape, &device)
}

struct Loader<'a> {
    f: &'a Ct2File,
    device: Device,
    compute: ComputeType,
}

impl Loader<'_> {
    fn vec1(&self, name: &str) -> Result<Tensor<1>, Ct2Error> {
        let v = self.f.f32(name)?;
        let n = v.len();
        Ok(from_vec(v, [n], &self.device))
    }
    /// A `[out, in]` linear layer for the 1500-row encoder products: int8 under the int8
    /// compute type where the CPU has the int8 GEMM (kept as stored, or quantized per row
    /// here), f32 otherwise (int8 weights dequantized).
    fn dense(&self, name: &str) -> Result<Dense, Ct2Error> {
        let bias = Some(self.f.f32(&format!("{name}/bias"))?);
        let (w, rows, cols) = self.f.weight(&format!("{name}/weight"))?;
        let int8 = self.compute == ComputeType::Int8 && Int8Gemm::available();
        Ok(match w {
            StoredWeight::I8 { q, row_scale } if int8 => Dense::int8(q, row_scale, rows, cols, bias),
            w if int8 => {
                let (q, row_scale) = kernels::quantize_rows(&w.into_f32(cols), cols);
                Dense::int8(q, row_scale, rows, cols, bias)
            }
            w => Dense::new(w.into_f32(cols), rows, cols, bias),
        })
    }
    fn norm(&self, name: &str) -> Result<Norm, Ct2Error> {
        Ok(Norm { g: self.vec1(&format!("{name}/gamma"))?, b: self.vec1(&format!("{name}/beta"))? })
    }
    fn mlp(&self, p: &str) -> Result<Mlp, Ct2Error> {
        Ok(Mlp {
            norm: self.norm(&format!("{p}/ffn/layer_norm"))?,
            fc1: self.dense(&format!("{p}/ffn/linear_0"))?,
            fc2: self.dense(&format!("{p}/ffn/linear_1"))?,
        })
    }
    fn conv(&self, name: &str) -> Result<(Tensor<3>, Tensor<1>), Ct2Error> {
        let s = self.f.shape(&format!("{name}/weight"))?.to_vec();
        let w = from_vec(self.f.dequantized(&format!("{name}/weight"))?, [s[0], s[1], s[2]], &self.device);
        Ok((w, self.vec1(&format!("{name}/bias"))?))
    }
    fn matrix(&self, name: &str) -> Result<(Vec<f32>, usize, usize), Ct2Error> {
        let s = self.f.shape(name)?.to_vec();
        Ok((self.f.f32(name)?, s[0], s[1]))
    }
    /// A `[out, in]` weight for the [`Matrix`] kernels in the compute type: kept as stored
    /// when it already is, else widened, narrowed, dequantized or quantized (per row, as
    /// CTranslate2 does) once here.
    fn kernel_matrix(&self, name: &str, bias: Option<Vec<f32>>) -> Result<Matrix, Ct2Error> {
        let (w, rows, cols) = self.f.weight(name)?;
        Ok(match (self.compute, w) {
            (ComputeType::Int8, StoredWeight::I8 { q, row_scale }) => Matrix::int8(q, row_scale, rows, cols, bias),
            (ComputeType::Int8, w) => Matrix::quantize(&w.into_f32(cols), rows, cols, bias),
            (ComputeType::Float16, StoredWeight::F16(w)) => Matrix::f16(w, rows, cols, bias),
            (ComputeType::Float16, w) => {
                Matrix::f16(w.into_f32(cols).into_iter().map(half::f16::from_f32).collect(), rows, cols, bias)
            }
            (ComputeType::Float32, w) => Matrix::f32(w.into_f32(cols), rows, cols, bias),
        })
    }
    /// The token embeddings, which also project the decoder's output to the logits. Under int8
    /// they stay 16-bit unless the file stores them in int8: their rounding moves every
    /// token's score by about 1 %, enough to change beam search's choice between close
    /// candidates (on the corpus's English clips, base: float32 16.0 % WER, int8 with int8
    /// logits 16.8 %, with 16-bit logits 14.0 %), as quantized language models keep their
    /// output layer wider.
    fn logits_matrix(&self, name: &str) -> Result<Matrix, Ct2Error> {
        if self.compute == ComputeType::Int8 && !self.f.is_quantized(name) {
            let wider = Loader { f: self.f, device: self.device.clone(), compute: ComputeType::Float16 };
            return wider.kernel_matrix(name, None);
        }
        self.kernel_matrix(name, None)
    }
    fn kernel_linear(&self, name: &str) -> Result<Matrix, Ct2Error> {
        self.kernel_matrix(&format!("{name}/weight"), Some(self.f.f32(&format!("{name}/bias"))?))
    }
}

impl Whisper {
    /// Builds the network from a parsed, validated CTranslate2 Whisper file, the decoder's
    /// weights in `compute`.
    pub fn load(f: &Ct2File, device: &Device, compute: ComputeType) -> Result<Whisper, Ct2Error> {
        let dims = f.whisper_dims()?;
        let l = Loader { f, device: device.clone(), compute };
        let enc_layers = (0..dims.n_encoder_layers)
            .map(|i| {
                let p = format!("encoder/layer_{i}");
                Ok(EncoderLayer {
                    norm: l.norm(&format!("{p}/self_attention/layer_norm"))?,
                    qkv: l.dense(&format!("{p}/self_attention/linear_0"))?,
                    out: l.dense(&format!("{p}/self_attention/linear_1"))?,
                    mlp: l.mlp(&p)?,
                })
            })
            .collect::<Result<Vec<_>, Ct2Error>>()?;
        let dec_layers = (0..dims.n_decoder_layers)
            .map(|i| {
                let p = format!("decoder/layer_{i}");
                Ok(DecoderLayer {
                    norm: l.norm(&format!("{p}/self_attention/layer_norm"))?,
                    qkv: l.kernel_linear(&format!("{p}/self_attention/linear_0"))?,
                    out: l.kernel_linear(&format!("{p}/self_attention/linear_1"))?,
                    cross_norm: l.norm(&format!("{p}/attention/layer_norm"))?,
                    cross_q: l.kernel_linear(&format!("{p}/attention/linear_0"))?,
                    cross_kv: l.dense(&format!("{p}/attention/linear_1"))?,
                    cross_out: l.kernel_linear(&format!("{p}/attention/linear_2"))?,
                    mlp: DecMlp {
                        norm: l.norm(&format!("{p}/ffn/layer_norm"))?,
                        fc1: l.kernel_linear(&format!("{p}/ffn/linear_0"))?,
                        fc2: l.kernel_linear(&format!("{p}/ffn/linear_1"))?,
                    },
                })
            })
            .collect::<Result<Vec<_>, Ct2Error>>()?;
        let (pos, n, d) = l.matrix("encoder/position_encodings/encodings")?;
        let enc_pos = from_vec(pos, [1, n, d], device);
        let tok_emb = l.logits_matrix("decoder/embeddings/weight")?;
        let (dec_pos, _, _) = l.matrix("decoder/position_encodings/encodings")?;
        Ok(Whisper {
            conv1: l.conv("encoder/conv1")?,
            conv2: l.conv("encoder/conv2")?,
            enc_pos,
            enc_layers,
            enc_norm: l.norm("encoder/layer_norm")?,
            tok_emb,
            dec_pos,
            dec_layers,
            dec_norm: l.norm("decoder/layer_norm")?,
            cross_attention: match compute {
                ComputeType::Int8 => AttentionPrecision::Bf16,
                ComputeType::Float32 | ComputeType::Float16 => AttentionPrecision::F32,
            },
            device: device.clone(),
            dims,
        })
    }

    /// Bytes of weights one decoder step reads: every decoder layer's [`Matrix`] weights and
    /// the logits projection, in the loaded compute type (cross-attention keys and values,
    /// computed once per window, excluded).
    pub fn decoder_bytes_per_step(&self) -> u64 {
        let layers: u64 = self
            .dec_layers
            .iter()
            .map(|l| {
                [&l.qkv, &l.out, &l.cross_q, &l.cross_out, &l.mlp.fc1, &l.mlp.fc2]
                    .iter()
                    .map(|m| m.weight_bytes())
                    .sum::<u64>()
            })
            .sum();
        layers + self.tok_emb.weight_bytes()
    }

    /// The storage type of the decoder's weights ("float32", "float16", "int8").
    pub fn decoder_weights_kind(&self) -> &'static str {
        self.tok_emb.kind()
    }

    /// Floating-point operations (2 × multiply-adds) of encoding one 30 s window: the two
    /// convolutions, every layer's projections, attention products and feed-forward, and the
    /// decoder layers' cross-attention keys and values computed with it.
    pub fn encoder_flops_per_window(&self) -> f64 {
        let d = &self.dims;
        let (t, dm, f) = (d.n_audio_ctx as f64, d.d_model as f64, d.d_ffn as f64);
        let conv = 2.0 * t * d.n_mels as f64 * dm * 3.0 + t * dm * dm * 3.0;
        let layer = t * dm * 3.0 * dm + t * dm * dm + 2.0 * t * dm * f + 2.0 * t * t * dm;
        let cross_kv = d.n_decoder_layers as f64 * t * dm * 2.0 * dm;
        2.0 * (conv + d.n_encoder_layers as f64 * layer + cross_kv)
    }

    fn heads(&self) -> (usize, usize) {
        (self.dims.n_heads, self.dims.d_model / self.dims.n_heads)
    }

    /// `x·Wᵀ + b` on the [`Matrix`] kernels, for `m` rows.
    fn apply_rows(&self, m: &Matrix, x: &[f32], rows: usize) -> Vec<f32> {
        m.forward(x, rows)
    }

    /// Encodes one window of log-mel features, row-major `[n_mels, 2 * n_audio_ctx]`, and
    /// precomputes every decoder layer's cross-attention keys and values.
    pub fn encode(&self, mel: &[f32]) -> AudioContext {
        self.encode_batch(&[mel]).pop().expect("one window in, one out")
    }

    /// Encodes only the first `frames` mel frames of a window (row-major `[n_mels, frames]`,
    /// `frames` even and at most a window's): the encoder reads `frames / 2` positions with
    /// their own positional embeddings, as whisper.cpp's `audio_ctx` does, at a cost in
    /// proportion. The decoder then sees no audio after them.
    pub fn encode_frames(&self, mel: &[f32], frames: usize) -> AudioContext {
        self.encode_batch_frames(&[mel], frames).pop().expect("one window in, one out")
    }

    /// The encoder's output (after its final norm) for one window of log-mel features:
    /// `[n_audio_ctx, d_model]` row-major.
    pub fn encoder_output(&self, mel: &[f32]) -> Vec<f32> {
        self.encoder_outputs(&[mel], 2 * self.dims.n_audio_ctx)
    }

    /// Encodes several windows in one pass: their 1500-row products are stacked into one
    /// `(windows · 1500)`-row product per layer (one read of each weight), attention stays
    /// within each window. Returns one [`AudioContext`] per window, in order.
    pub fn encode_batch(&self, mels: &[&[f32]]) -> Vec<AudioContext> {
        self.encode_batch_frames(mels, 2 * self.dims.n_audio_ctx)
    }

    /// [`Whisper::encode_batch`] for windows of `frames` mel frames each (see
    /// [`Whisper::encode_frames`]).
    pub fn encode_batch_frames(&self, mels: &[&[f32]], frames: usize) -> Vec<AudioContext> {
        let b = mels.len();
        if b == 0 {
            return Vec::new();
        }
        crate::profile::count("encoder windows", b as u64);
        let x = self.encoder_outputs(mels, frames);
        let (h, dh) = self.heads();
        let (n_ctx, d) = (frames / 2, self.dims.d_model);
        time("enc cross kv", || {
            let mut contexts: Vec<AudioContext> =
                (0..b).map(|_| AudioContext { kv: Vec::new(), positions: n_ctx }).collect();
            // One layer's projection at a time, so only one layer's rows are held twice.
            for layer in &self.dec_layers {
                let rows = layer.cross_kv.forward(&x, b * n_ctx, false);
                for (w, ctx) in contexts.iter_mut().enumerate() {
                    let window = &rows[w * n_ctx * 2 * d..(w + 1) * n_ctx * 2 * d];
                    ctx.kv.push(AttentionKv::new(window, 2 * d, n_ctx, h, dh, self.cross_attention));
                }
            }
            contexts
        })
    }

    /// The encoder's outputs (after its final norm) for several windows of `frames` mel
    /// frames, stacked: `[windows · frames / 2, d_model]` row-major.
    fn encoder_outputs(&self, mels: &[&[f32]], frames: usize) -> Vec<f32> {
        let b = mels.len();
        assert!(
            frames >= 2 && frames.is_multiple_of(2) && frames <= 2 * self.dims.n_audio_ctx,
            "an encoder window holds an even number of mel frames, at most a whole window's"
        );
        let mut stacked = Vec::with_capacity(b * self.dims.n_mels * frames);
        for mel in mels {
            assert_eq!(mel.len(), self.dims.n_mels * frames, "mel window has the wrong size");
            stacked.extend_from_slice(mel);
        }
        let x = from_vec(stacked, [b, self.dims.n_mels, frames], &self.device);
        let x = time("enc conv", || {
            let x = conv1d(x, self.conv1.0.clone(), Some(self.conv1.1.clone()), ConvOptions::new([1], [1], [1], 1));
            let x = fast_gelu(x);
            let x = conv1d(x, self.conv2.0.clone(), Some(self.conv2.1.clone()), ConvOptions::new([2], [1], [1], 1));
            fast_gelu(x)
        });
        let (h, dh) = self.heads();
        let (n_ctx, d) = (frames / 2, self.dims.d_model);
        let positions = if n_ctx == self.dims.n_audio_ctx {
            self.enc_pos.clone()
        } else {
            self.enc_pos.clone().narrow(1, 0, n_ctx)
        };
        let mut x = x.swap_dims(1, 2) + positions;
        for layer in &self.enc_layers {
            let qkv = time("enc qkv", || layer.qkv.forward(&to_vec(layer.norm.forward(x.clone())), b * n_ctx, false));
            let a = time("enc attention", || {
                qkv.chunks_exact(n_ctx * 3 * d)
                    .flat_map(|w| kernels::window_attention(w, n_ctx, h, dh))
                    .collect::<Vec<_>>()
            });
            x = x + time("enc out", || from_vec(layer.out.forward(&a, b * n_ctx, false), [b, n_ctx, d], &self.device));
            x = time("enc mlp", || layer.mlp.forward(x));
        }
        to_vec(self.enc_norm.forward(x))
    }

    /// An empty cache for `batch` parallel sequences.
    pub fn new_cache(&self, batch: usize) -> KvCache {
        KvCache { layers: Vec::new(), len: 0, batch }
    }

    /// Embeds `tokens` (`batch` rows of equal length, row-major) at positions after the cache.
    fn embed(&self, tokens: &[u32], batch: usize, start: usize) -> Tensor<3> {
        let t = tokens.len() / batch;
        let d = self.dims.d_model;
        let mut x = Vec::with_capacity(tokens.len() * d);
        for (i, &tok) in tokens.iter().enumerate() {
            let pos = &self.dec_pos[(start + i % t) * d..(start + i % t + 1) * d];
            x.extend(self.tok_emb.row(tok as usize).iter().zip(pos).map(|(e, p)| e + p));
        }
        from_vec(x, [batch, t, d], &self.device)
    }

    /// The logits of `[B, T, d]` decoder outputs (after the final norm), row-major `[B·T, vocab]`.
    fn logits(&self, x: Tensor<3>) -> Vec<f32> {
        let [b, t, _] = x.dims();
        time("logits", || self.tok_emb.forward(&to_vec(x), b * t))
    }

    /// Self-attention block, feed-forward excluded, of one decoder layer: appends the new
    /// tokens' keys and values to `kv` and attends over everything cached (causally among
    /// the new tokens when `causal`).
    fn self_attention(&self, layer: &DecoderLayer, x: Tensor<3>, kv: &mut LayerKv, causal: bool) -> Tensor<3> {
        let [b, t, d] = x.dims();
        let (h, dh) = self.heads();
        let scale = 1.0 / (dh as f32).sqrt();
        let qkv = time("dec qkv", || layer.qkv.forward(&to_vec(layer.norm.forward(x.clone())), b * t));
        if kv.k.len() != b {
            *kv = LayerKv { k: vec![Vec::new(); b], v: vec![Vec::new(); b] };
        }
        let start = kv.k[0].len() / d;
        let mut out = vec![0.0f32; b * t * d];
        time("dec sdpa", || {
            for bi in 0..b {
                for i in 0..t {
                    let row = &qkv[(bi * t + i) * 3 * d..(bi * t + i + 1) * 3 * d];
                    kv.k[bi].extend_from_slice(&row[d..2 * d]);
                    kv.v[bi].extend_from_slice(&row[2 * d..]);
                }
            }
            // One rayon task per (hypothesis, head), each `[t, dh]`.
            let per_head: Vec<Vec<f32>> = (0..b * h)
                .into_par_iter()
                .map(|task| {
                    let (bi, head) = (task / h, task % h);
                    let (ks, vs) = (&kv.k[bi][head * dh..], &kv.v[bi][head * dh..]);
                    let mut scores = Vec::with_capacity(start + t);
                    let mut o = vec![0.0f32; t * dh];
                    for (i, o) in o.chunks_exact_mut(dh).enumerate() {
                        let q = &qkv[(bi * t + i) * 3 * d + head * dh..][..dh];
                        let n = if causal { start + i + 1 } else { start + t };
                        kernels::attend_cached(q, ks, vs, d, n, scale, &mut scores, o);
                    }
                    o
                })
                .collect();
            for (task, o) in per_head.iter().enumerate() {
                let (bi, head) = (task / h, task % h);
                for i in 0..t {
                    out[(bi * t + i) * d + head * dh..][..dh].copy_from_slice(&o[i * dh..(i + 1) * dh]);
                }
            }
        });
        x + from_vec(self.apply_rows(&layer.out, &out, b * t), [b, t, d], &self.device)
    }

    fn mlp(&self, layer: &DecoderLayer, x: Tensor<3>) -> Tensor<3> {
        let [b, t, d] = x.dims();
        let mlp = &layer.mlp;
        let mut hidden = mlp.fc1.forward(&to_vec(mlp.norm.forward(x.clone())), b * t);
        kernels::gelu(&mut hidden);
        x + from_vec(mlp.fc2.forward(&hidden, b * t), [b, t, d], &self.device)
    }

    /// Runs the decoder over new tokens, appending to `cache`. `tokens` holds `cache.batch()`
    /// rows of equal length. Returns logits `[batch, rows.len(), vocab]` (row-major) for the
    /// positions `rows` within the new tokens.
    pub fn decode(&self, audio: &AudioContext, cache: &mut KvCache, tokens: &[u32], rows: &[usize]) -> Vec<f32> {
        self.decode_multi(&[audio], &vec![0; cache.batch], cache, tokens, rows)
    }

    /// [`Whisper::decode`] for batch rows that belong to different windows: row `i` attends
    /// to `audios[row_audio[i]]` (rows of one window side by side), everything else is shared,
    /// so each step reads every weight once for all the windows' hypotheses.
    pub fn decode_multi(
        &self,
        audios: &[&AudioContext],
        row_audio: &[usize],
        cache: &mut KvCache,
        tokens: &[u32],
        rows: &[usize],
    ) -> Vec<f32> {
        let batch = cache.batch;
        assert_eq!(row_audio.len(), batch, "one window per batch row");
        let t = tokens.len() / batch;
        assert!(t * batch == tokens.len() && t > 0, "token rows must have equal, non-zero length");
        assert!(cache.len + t <= self.dims.n_text_ctx, "decoder context exceeded");
        let mut x = self.embed(tokens, batch, cache.len);
        let fresh = cache.layers.is_empty();
        for (i, layer) in self.dec_layers.iter().enumerate() {
            // Only a fresh multi-token prompt needs a causal mask; a single new token may
            // attend to everything before it.
            if fresh {
                cache.layers.push(LayerKv::default());
            }
            let y = time("dec self attn", || self.self_attention(layer, x, &mut cache.layers[i], fresh && t > 1));
            let kvs: Vec<&AttentionKv> = audios.iter().map(|a| &a.kv[i]).collect();
            x = time("dec cross attn", || self.cross_attention(layer, &kvs, row_audio, y));
            x = time("dec mlp", || self.mlp(layer, x));
        }
        cache.len += t;
        if rows.is_empty() {
            return Vec::new();
        }
        let x = if rows.len() == t {
            x
        } else {
            let picked = rows.iter().map(|&r| x.clone().narrow(1, r, 1)).collect();
            Tensor::cat(picked, 1)
        };
        self.logits(self.dec_norm.forward(x))
    }

    /// Cross-attention block: `x` plus attention of its `[B, T, d]` queries, batch row `i` over
    /// the window `kvs[row_audio[i]]`.
    fn cross_attention(
        &self,
        layer: &DecoderLayer,
        kvs: &[&AttentionKv],
        row_audio: &[usize],
        x: Tensor<3>,
    ) -> Tensor<3> {
        let [b, t, d] = x.dims();
        let q = self.cross_queries(layer, x.clone());
        let attended = if kvs.len() == 1 {
            kvs[0].attend(&q, d, b * t)
        } else {
            // Runs of batch rows on the same window: one attention call each.
            let mut runs: Vec<(usize, usize)> = Vec::new(); // (window, first row)
            for (row, &w) in row_audio.iter().enumerate() {
                if runs.last().is_none_or(|&(last, _)| last != w) {
                    runs.push((w, row));
                }
            }
            let ends: Vec<usize> = runs.iter().skip(1).map(|r| r.1).chain([b]).collect();
            runs.par_iter()
                .zip(ends)
                .map(|(&(w, r0), r1)| kvs[w].attend(&q[r0 * t * d..r1 * t * d], d, (r1 - r0) * t))
                .collect::<Vec<_>>()
                .concat()
        };
        x + from_vec(layer.cross_out.forward(&attended, b * t), [b, t, d], &self.device)
    }

    /// The cross-attention queries of `[B, T, d]` activations, row-major `[B·T, d]`.
    fn cross_queries(&self, layer: &DecoderLayer, x: Tensor<3>) -> Vec<f32> {
        let [b, t, _] = x.dims();
        layer.cross_q.forward(&to_vec(layer.cross_norm.forward(x)), b * t)
    }

    /// Decodes a whole token sequence (batch 1, no cache) and returns the logits of every
    /// position plus the raw cross-attention scores of the given `(layer, head)` pairs.
    pub fn alignment_scores(&self, audio: &AudioContext, tokens: &[u32], heads: &[(usize, usize)]) -> AlignmentScores {
        let t = tokens.len();
        let mut x = self.embed(tokens, 1, 0);
        let mut qk = Vec::new();
        for (i, layer) in self.dec_layers.iter().enumerate() {
            x = self.self_attention(layer, x, &mut LayerKv::default(), t > 1);
            let wanted: Vec<usize> = heads.iter().filter(|(l, _)| *l == i).map(|&(_, hd)| hd).collect();
            if !wanted.is_empty() {
                let q = self.cross_queries(layer, x.clone());
                for hd in wanted {
                    qk.extend(audio.kv[i].scores(&q, t, hd));
                }
            }
            x = self.cross_attention(layer, &[&audio.kv[i]], &[0], x);
            x = self.mlp(layer, x);
        }
        let logits = self.logits(self.dec_norm.forward(x));
        AlignmentScores { qk, n_heads: heads.len(), logits }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    /// tiny.en, from `SCRIBE_MODELS_DIR` (or the repository's `models/`).
    fn tiny_en() -> Whisper {
        let dir = std::env::var_os("SCRIBE_MODELS_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models"));
        let file =
            Ct2File::open(&dir.join("whisper-tiny.en/model.bin")).expect("tiny.en installed (SCRIBE_MODELS_DIR)");
        Whisper::load(&file, &Device::flex(), ComputeType::default()).unwrap()
    }

    /// Log-mel-like features in Whisper's range (−1..1.5), different per `seed`.
    fn features(model: &Whisper, seed: u32) -> Vec<f32> {
        let n = model.dims.n_mels * 2 * model.dims.n_audio_ctx;
        (0..n as u32)
            .map(|i| ((i.wrapping_mul(2654435761).wrapping_add(seed * 97)) % 1000) as f32 / 400.0 - 1.0)
            .collect()
    }

    fn assert_close(a: &[f32], b: &[f32], what: &str) {
        assert_eq!(a.len(), b.len(), "{what}: sizes");
        let worst = a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0f32, f32::max);
        assert!(worst < 1e-3, "{what}: differs by {worst}");
    }

    fn argmax(x: &[f32]) -> usize {
        x.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).unwrap().0
    }

    #[test]
    fn batched_decoder_gives_each_window_the_single_window_logits() {
        let model = tiny_en();
        let vocab = model.dims.n_vocab;
        let mels = [features(&model, 1), features(&model, 2)];
        let single: Vec<AudioContext> = mels.iter().map(|m| model.encode(m)).collect();
        let batch = model.encode_batch(&[&mels[0], &mels[1]]);
        let prompt = [50257u32, 50363, 843, 523]; // <|startoftranscript|> <|0.00|> " And" " so"

        // One window at a time: the prompt, then a step with two hypotheses for window 0
        // and one for window 1.
        let mut expected_prompt = Vec::new();
        let mut expected_step = Vec::new();
        for (w, audio) in single.iter().enumerate() {
            let mut cache = model.new_cache(1);
            expected_prompt.extend(model.decode(audio, &mut cache, &prompt, &[3]));
            let next: &[u32] = if w == 0 { &[616, 7982] } else { &[3148] };
            cache.select(&vec![0; next.len()]);
            expected_step.extend(model.decode(audio, &mut cache, next, &[0]));
        }

        // Both windows in one batch.
        let audios = [&batch[0], &batch[1]];
        let mut cache = model.new_cache(2);
        let tokens: Vec<u32> = prompt.iter().chain(&prompt).copied().collect();
        let got_prompt = model.decode_multi(&audios, &[0, 1], &mut cache, &tokens, &[3]);
        cache.select(&[0, 0, 1]);
        let got_step = model.decode_multi(&audios, &[0, 0, 1], &mut cache, &[616, 7982, 3148], &[0]);

        assert_close(&got_prompt, &expected_prompt, "prompt logits");
        assert_close(&got_step, &expected_step, "step logits");
        for (g, e) in got_step.chunks(vocab).zip(expected_step.chunks(vocab)) {
            assert_eq!(argmax(g), argmax(e));
        }
        // The two windows really differ (each row saw its own audio).
        assert!(got_prompt[..vocab].iter().zip(&got_prompt[vocab..]).any(|(a, b)| (a - b).abs() > 1e-2));
    }
}
