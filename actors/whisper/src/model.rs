//! The Whisper network on burn: audio encoder and text decoder, written once.
//!
//! Weights come from a parsed CTranslate2 file ([`crate::ct2`]). The network's structure lives
//! here; the operations whose implementation depends on where it runs (linear layers,
//! attention, GELU, the token embedding and logits) are in `model/ops.rs`, chosen once at load time by
//! the [`Placement`]:
//!
//! - On this CPU ([`Placement::Cpu`]) the encoder's linear layers (and the decoder's
//!   cross-attention key/value projection, applied to all 1500 frames) are [`Dense`] GEMMs: f32
//!   on the `gemm` crate under float32 and float16 (CTranslate2 on a CPU has no float16 GEMM
//!   either), int8 on the VNNI kernel under int8, inputs quantized per row as CTranslate2 does.
//!   The decoder's layers and the logits projection are [`Matrix`] products of few rows in the
//!   [`ComputeType`] (f32, f16, or int8 with per-row scales, converted or quantized at load time
//!   as CTranslate2 does).
//! - On any other burn device ([`Placement::Device`]: a GPU through wgpu/Vulkan or CUDA) every
//!   operation is burn's, weights and activations in float32 or float16 (the norms in f32).
//!
//! q/k/v stay fused so each attention block does one product, and the logits projection is the
//! token embedding (tied). The decoder keeps a self-attention key/value cache per layer;
//! cross-attention keys/values are computed once per 30 s window ([`AudioContext`]). The struct
//! is immutable after loading, so one instance is shared between threads.

mod ops;

use burn::tensor::module::{conv1d, layer_norm};
use burn::tensor::ops::ConvOptions;
use burn::tensor::{DType, Device, FloatDType, Tensor};
use scribe_kernels::int8_gemm::Int8Gemm;
use scribe_kernels::{self as kernels, AttentionPrecision, Dense, Matrix};

use crate::ct2::{Ct2Error, Ct2File, StoredWeight, WhisperDims};
use crate::engine::ComputeType;
use crate::profile::time;
pub use ops::Placement;
use ops::{CrossKv, Linear, SelfKv, TokenEmbedding, from_vec_as, gelu_on, to_vec};

const LN_EPS: f64 = 1e-5;

/// A layer norm, always computed in f32 (its weights too): in float16 the variance of the
/// residual stream's larger activations would overflow.
struct Norm {
    g: Tensor<1>,
    b: Tensor<1>,
}

impl Norm {
    fn forward<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        let dtype = x.dtype();
        if dtype == DType::F32 {
            return layer_norm(x, self.g.clone(), Some(self.b.clone()), LN_EPS);
        }
        layer_norm(x.cast(FloatDType::F32), self.g.clone(), Some(self.b.clone()), LN_EPS).cast(dtype)
    }
}

/// A feed-forward block: `x + fc2(gelu(fc1(norm(x))))`.
struct FeedForward {
    norm: Norm,
    fc1: Linear,
    fc2: Linear,
}

impl FeedForward {
    fn forward(&self, x: Tensor<3>) -> Tensor<3> {
        x.clone() + Linear::feed_forward(&self.fc1, &self.fc2, self.norm.forward(x))
    }
}

struct EncoderLayer {
    norm: Norm,
    qkv: Linear,
    out: Linear,
    mlp: FeedForward,
}

/// On the CPU, the decoder's weights are [`Matrix`] kernels (few rows per call), but for the
/// cross-attention key/value projection, applied to all 1500 encoder frames once per window.
struct DecoderLayer {
    norm: Norm,
    qkv: Linear,
    out: Linear,
    cross_norm: Norm,
    cross_q: Linear,
    cross_kv: Linear,
    cross_out: Linear,
    mlp: FeedForward,
}

/// A loaded Whisper model.
pub struct Whisper {
    pub dims: WhisperDims,
    device: Device,
    /// The float type of the network's tensors on a device (f32 on the CPU path).
    dtype: DType,
    /// The CPU path: the hand-written kernels over host rows.
    host: bool,
    conv1: (Tensor<3>, Tensor<1>),
    conv2: (Tensor<3>, Tensor<1>),
    enc_pos: Tensor<3>, // [1, n_audio_ctx, d]
    enc_layers: Vec<EncoderLayer>,
    enc_norm: Norm,
    /// Token embedding, also the (tied) logits projection, and the decoder's positions.
    tokens: TokenEmbedding,
    dec_layers: Vec<DecoderLayer>,
    dec_norm: Norm,
    /// On the CPU, the precision of cross-attention's keys, values and products: bf16 factors
    /// under int8 (where the CPU has AVX-512 BF16), half the bytes every decoder step reads per
    /// window; f32 otherwise. The encoder's self-attention stays f32: in bf16 it moved the
    /// encoder's output 3 times further from CTranslate2's int8 one
    /// (`tests/model_geometries.rs`). `None` on a device.
    cross_attention: Option<AttentionPrecision>,
}

/// Cross-attention keys and values of one encoded window, per decoder layer.
pub struct AudioContext {
    kv: Vec<CrossKv>,
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

/// Self-attention keys and values of the tokens decoded so far, per layer.
#[derive(Clone)]
pub struct KvCache {
    layers: Vec<SelfKv>,
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
        for layer in &mut self.layers {
            layer.select(rows, self.batch);
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

struct Loader<'a> {
    f: &'a Ct2File,
    device: Device,
    /// The float type of the weights on a device (f32 on the CPU path; norms are always f32).
    dtype: DType,
    host: bool,
    compute: ComputeType,
}

impl Loader<'_> {
    fn vec1(&self, name: &str, dtype: DType) -> Result<Tensor<1>, Ct2Error> {
        let v = self.f.f32(name)?;
        let n = v.len();
        Ok(from_vec_as(v, [n], &self.device, dtype))
    }
    /// A `[out, in]` linear layer for the 1500-row encoder products: on the CPU, int8 under the
    /// int8 compute type where the CPU has the int8 GEMM (kept as stored, or quantized per row
    /// here), f32 otherwise (int8 weights dequantized).
    fn dense(&self, name: &str) -> Result<Linear, Ct2Error> {
        let bias = Some(self.f.f32(&format!("{name}/bias"))?);
        let (w, rows, cols) = self.f.weight(&format!("{name}/weight"))?;
        if !self.host {
            return Ok(Linear::tensor(w.into_f32(cols), rows, cols, bias, &self.device, self.dtype));
        }
        let int8 = self.compute == ComputeType::Int8 && Int8Gemm::available();
        Ok(Linear::Dense(match w {
            StoredWeight::I8 { q, row_scale } if int8 => Dense::int8(q, row_scale, rows, cols, bias),
            w if int8 => {
                let (q, row_scale) = kernels::quantize_rows(&w.into_f32(cols), cols);
                Dense::int8(q, row_scale, rows, cols, bias)
            }
            w => Dense::new(w.into_f32(cols), rows, cols, bias),
        }))
    }
    fn norm(&self, name: &str) -> Result<Norm, Ct2Error> {
        Ok(Norm {
            g: self.vec1(&format!("{name}/gamma"), DType::F32)?,
            b: self.vec1(&format!("{name}/beta"), DType::F32)?,
        })
    }
    fn conv(&self, name: &str) -> Result<(Tensor<3>, Tensor<1>), Ct2Error> {
        let s = self.f.shape(&format!("{name}/weight"))?.to_vec();
        let w =
            from_vec_as(self.f.dequantized(&format!("{name}/weight"))?, [s[0], s[1], s[2]], &self.device, self.dtype);
        Ok((w, self.vec1(&format!("{name}/bias"), self.dtype)?))
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
    /// The token embeddings, which also project the decoder's output to the logits, and the
    /// decoder's positions. Under int8 the embeddings stay 16-bit unless the file stores them in
    /// int8: their rounding moves every token's score by about 1 %, enough to change beam
    /// search's choice between close candidates (on the corpus's English clips, base: float32
    /// 16.0 % WER, int8 with int8 logits 16.8 %, with 16-bit logits 14.0 %), as quantized
    /// language models keep their output layer wider.
    fn token_embedding(&self) -> Result<TokenEmbedding, Ct2Error> {
        let name = "decoder/embeddings/weight";
        let (pos, n_ctx, d) = self.matrix("decoder/position_encodings/encodings")?;
        if !self.host {
            let (e, vocab, d) = self.f.weight(name)?;
            return Ok(TokenEmbedding::Tensor {
                e: from_vec_as(e.into_f32(d), [vocab, d], &self.device, self.dtype),
                pos: from_vec_as(pos, [n_ctx, d], &self.device, self.dtype),
            });
        }
        let e = if self.compute == ComputeType::Int8 && !self.f.is_quantized(name) {
            let wider = Loader { compute: ComputeType::Float16, device: self.device.clone(), ..*self };
            wider.kernel_matrix(name, None)?
        } else {
            self.kernel_matrix(name, None)?
        };
        debug_assert_eq!(e.inp, d);
        Ok(TokenEmbedding::Host { e, pos })
    }
    /// A decoder linear layer: [`Matrix`] kernels on the CPU.
    fn kernel_linear(&self, name: &str) -> Result<Linear, Ct2Error> {
        let bias = Some(self.f.f32(&format!("{name}/bias"))?);
        if !self.host {
            let (w, rows, cols) = self.f.weight(&format!("{name}/weight"))?;
            return Ok(Linear::tensor(w.into_f32(cols), rows, cols, bias, &self.device, self.dtype));
        }
        Ok(Linear::Matrix(self.kernel_matrix(&format!("{name}/weight"), bias)?))
    }
    fn feed_forward(&self, p: &str, fc: impl Fn(&str) -> Result<Linear, Ct2Error>) -> Result<FeedForward, Ct2Error> {
        Ok(FeedForward {
            norm: self.norm(&format!("{p}/ffn/layer_norm"))?,
            fc1: fc(&format!("{p}/ffn/linear_0"))?,
            fc2: fc(&format!("{p}/ffn/linear_1"))?,
        })
    }
}

impl Whisper {
    /// Builds the network from a parsed, validated CTranslate2 Whisper file on `placement`, the
    /// decoder's weights (on the CPU) in `compute`. A device runs in float32, or in float16
    /// where it computes in it (weights and activations; the norms in f32); int8 is refused
    /// there, and float16 on a device without it.
    pub fn load(f: &Ct2File, placement: &Placement, compute: ComputeType) -> Result<Whisper, Ct2Error> {
        let dims = f.whisper_dims()?;
        let host = matches!(placement, Placement::Cpu);
        let device = placement.device();
        let refused = |reason: String| Err(Ct2Error { path: f.path().to_path_buf(), reason });
        let dtype = match compute {
            _ if host => DType::F32,
            ComputeType::Float32 => DType::F32,
            ComputeType::Float16 if device.supports_dtype(DType::F16) => DType::F16,
            ComputeType::Float16 => {
                return refused(format!(
                    "this device does not compute in float16 ({device:?}); use compute type float32"
                ));
            }
            ComputeType::Int8 => {
                return refused(
                    "compute type int8 runs on the CPU only; on a GPU device use float32 or float16".to_owned(),
                );
            }
        };
        let l = Loader { f, device: device.clone(), dtype, host, compute };
        let enc_layers = (0..dims.n_encoder_layers)
            .map(|i| {
                let p = format!("encoder/layer_{i}");
                Ok(EncoderLayer {
                    norm: l.norm(&format!("{p}/self_attention/layer_norm"))?,
                    qkv: l.dense(&format!("{p}/self_attention/linear_0"))?,
                    out: l.dense(&format!("{p}/self_attention/linear_1"))?,
                    mlp: l.feed_forward(&p, |n| l.dense(n))?,
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
                    mlp: l.feed_forward(&p, |n| l.kernel_linear(n))?,
                })
            })
            .collect::<Result<Vec<_>, Ct2Error>>()?;
        let (pos, n, d) = l.matrix("encoder/position_encodings/encodings")?;
        let enc_pos = from_vec_as(pos, [1, n, d], &device, dtype);
        Ok(Whisper {
            conv1: l.conv("encoder/conv1")?,
            conv2: l.conv("encoder/conv2")?,
            enc_pos,
            enc_layers,
            enc_norm: l.norm("encoder/layer_norm")?,
            tokens: l.token_embedding()?,
            dec_layers,
            dec_norm: l.norm("decoder/layer_norm")?,
            cross_attention: host.then_some(match compute {
                ComputeType::Int8 => AttentionPrecision::Bf16,
                ComputeType::Float32 | ComputeType::Float16 => AttentionPrecision::F32,
            }),
            host,
            device,
            dtype,
            dims,
        })
    }

    /// Bytes of weights one decoder step reads on the CPU: every decoder layer's [`Matrix`]
    /// weights and the logits projection, in the loaded compute type (cross-attention keys and
    /// values, computed once per window, excluded).
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
        layers + self.tokens.weight_bytes()
    }

    /// The storage type of the decoder's weights ("float32", "float16", "int8").
    pub fn decoder_weights_kind(&self) -> &'static str {
        self.tokens.kind()
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
        to_vec(self.encoder_outputs(&[mel], 2 * self.dims.n_audio_ctx))
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
        let h = self.dims.n_heads;
        time("enc cross kv", || {
            let mut contexts: Vec<AudioContext> =
                (0..b).map(|_| AudioContext { kv: Vec::new(), positions: frames / 2 }).collect();
            // One layer's projection at a time, so only one layer's rows are held twice.
            for layer in &self.dec_layers {
                let kv = CrossKv::of_windows(self.cross_attention, layer.cross_kv.forward(x.clone()), h);
                for (ctx, kv) in contexts.iter_mut().zip(kv) {
                    ctx.kv.push(kv);
                }
            }
            contexts
        })
    }

    /// The encoder's outputs (after its final norm) for several windows of `frames` mel
    /// frames: `[windows, frames / 2, d_model]`.
    fn encoder_outputs(&self, mels: &[&[f32]], frames: usize) -> Tensor<3> {
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
        let x = from_vec_as(stacked, [b, self.dims.n_mels, frames], &self.device, self.dtype);
        let x = time("enc conv", || {
            let x = conv1d(x, self.conv1.0.clone(), Some(self.conv1.1.clone()), ConvOptions::new([1], [1], [1], 1));
            let x = gelu_on(self.host, x);
            let x = conv1d(x, self.conv2.0.clone(), Some(self.conv2.1.clone()), ConvOptions::new([2], [1], [1], 1));
            gelu_on(self.host, x)
        });
        let n_ctx = frames / 2;
        let positions = if n_ctx == self.dims.n_audio_ctx {
            self.enc_pos.clone()
        } else {
            self.enc_pos.clone().narrow(1, 0, n_ctx)
        };
        let mut x = x.swap_dims(1, 2) + positions;
        for layer in &self.enc_layers {
            let qkv = time("enc qkv", || layer.qkv.forward(layer.norm.forward(x.clone())));
            let a = time("enc attention", || ops::window_attention(self.host, qkv, self.dims.n_heads));
            x = x + time("enc out", || layer.out.forward(a));
            x = time("enc mlp", || layer.mlp.forward(x));
        }
        self.enc_norm.forward(x)
    }

    /// An empty cache for `batch` parallel sequences.
    pub fn new_cache(&self, batch: usize) -> KvCache {
        KvCache { layers: Vec::new(), len: 0, batch }
    }

    /// The logits of `[B, T, d]` decoder outputs (after the final norm), row-major `[B·T, vocab]`.
    fn logits(&self, x: Tensor<3>) -> Vec<f32> {
        time("logits", || self.tokens.logits(x))
    }

    /// Self-attention block, feed-forward excluded, of one decoder layer: appends the new
    /// tokens' keys and values to `kv` and attends over everything cached (causally among
    /// the new tokens when `causal`, which only a fresh cache asks for).
    fn self_attention(&self, layer: &DecoderLayer, x: Tensor<3>, kv: &mut SelfKv, causal: bool) -> Tensor<3> {
        let qkv = time("dec qkv", || layer.qkv.forward(layer.norm.forward(x.clone())));
        let attended = time("dec sdpa", || ops::self_attention(self.host, qkv, self.dims.n_heads, kv, causal));
        x + layer.out.forward(attended)
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
        let mut x = self.tokens.embed(tokens, batch, cache.len, &self.device);
        let fresh = cache.layers.is_empty();
        for (i, layer) in self.dec_layers.iter().enumerate() {
            // Only a fresh multi-token prompt needs a causal mask; a single new token may
            // attend to everything before it.
            if fresh {
                cache.layers.push(SelfKv::default());
            }
            let y = time("dec self attn", || self.self_attention(layer, x, &mut cache.layers[i], fresh && t > 1));
            let kvs: Vec<&CrossKv> = audios.iter().map(|a| &a.kv[i]).collect();
            x = time("dec cross attn", || self.cross_attention(layer, &kvs, row_audio, y));
            x = time("dec mlp", || layer.mlp.forward(x));
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
    fn cross_attention(&self, layer: &DecoderLayer, kvs: &[&CrossKv], row_audio: &[usize], x: Tensor<3>) -> Tensor<3> {
        let q = layer.cross_q.forward(layer.cross_norm.forward(x.clone()));
        x + layer.cross_out.forward(ops::cross_attention(kvs, row_audio, q))
    }

    /// Decodes a whole token sequence (batch 1, no cache) and returns the logits of every
    /// position plus the raw cross-attention scores of the given `(layer, head)` pairs.
    pub fn alignment_scores(&self, audio: &AudioContext, tokens: &[u32], heads: &[(usize, usize)]) -> AlignmentScores {
        let t = tokens.len();
        let mut x = self.tokens.embed(tokens, 1, 0, &self.device);
        let mut qk = Vec::new();
        for (i, layer) in self.dec_layers.iter().enumerate() {
            x = self.self_attention(layer, x, &mut SelfKv::default(), t > 1);
            let wanted: Vec<usize> = heads.iter().filter(|(l, _)| *l == i).map(|&(_, hd)| hd).collect();
            if !wanted.is_empty() {
                let q = layer.cross_q.forward(layer.cross_norm.forward(x.clone()));
                for hd in wanted {
                    qk.extend(audio.kv[i].scores(q.clone(), hd));
                }
            }
            x = self.cross_attention(layer, &[&audio.kv[i]], &[0], x);
            x = layer.mlp.forward(x);
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
        Whisper::load(&file, &Placement::Cpu, ComputeType::default()).unwrap()
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
