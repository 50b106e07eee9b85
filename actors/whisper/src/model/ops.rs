//! The operations of the Whisper network whose implementation depends on where it runs, each
//! written twice: on this CPU through the hand-written kernels ([`scribe_kernels`], over host
//! `Vec<f32>`s, the fast path), and on any burn device through burn's tensor API (a GPU through
//! wgpu/Vulkan or CUDA; flex too, which the tests use to hold one path against the other).
//! Everything else in [`crate::model`] (norms, convolutions, residual sums) is burn on both.
//!
//! The choice is made once, at load time ([`Placement`]): each weight is stored in the form its
//! path reads, so a call never converts weights.

use burn::tensor::activation::gelu;
use burn::tensor::module::{attention, linear};
use burn::tensor::ops::AttentionModuleOptions;
use burn::tensor::{DType, Device, Int, Tensor, TensorData};

use scribe_kernels::{self as kernels, AttentionKv, AttentionPrecision, Dense, Matrix};

/// Where the network runs.
#[derive(Clone, Debug)]
pub enum Placement {
    /// This CPU: burn's flex backend for the convolutions and norms, the hand-written kernels
    /// for the products, attention and GELU.
    Cpu,
    /// Any burn device, every operation through burn's tensor API, in float32 or (where the
    /// device computes in it) float16.
    Device(Device),
}

impl Placement {
    /// The burn device the network's tensors live on.
    pub fn device(&self) -> Device {
        match self {
            Placement::Cpu => Device::flex(),
            Placement::Device(d) => d.clone(),
        }
    }
}

/// A tensor of `data` on `device`, in f32 (the CPU path's host rows).
pub(super) fn from_vec<const D: usize>(data: Vec<f32>, shape: [usize; D], device: &Device) -> Tensor<D> {
    from_vec_as(data, shape, device, DType::F32)
}

/// A tensor of `data` on `device`, held in `dtype` (converted on the way).
pub(super) fn from_vec_as<const D: usize>(
    data: Vec<f32>,
    shape: [usize; D],
    device: &Device,
    dtype: DType,
) -> Tensor<D> {
    Tensor::from_data(TensorData::new(data, shape), (device, dtype))
}

/// A tensor's values as f32 host rows, whatever float type it is held in.
pub(super) fn to_vec<const D: usize>(t: Tensor<D>) -> Vec<f32> {
    t.try_into_data_dtype(DType::F32).expect("reading a tensor").try_into_vec::<f32>().expect("f32 values")
}

/// Rows of a `[.., features]` tensor: the product of all dimensions but the last.
fn rows<const D: usize>(shape: &[usize; D]) -> usize {
    shape[..D - 1].iter().product()
}

/// GELU, on [`kernels::gelu`] on the CPU path (burn-flex's is a scalar libm loop on one thread).
pub(super) fn gelu_on<const D: usize>(host: bool, t: Tensor<D>) -> Tensor<D> {
    if !host {
        return gelu(t);
    }
    let device = t.device();
    let shape: [usize; D] = t.dims();
    let mut x = to_vec(t);
    kernels::gelu(&mut x);
    from_vec(x, shape, &device)
}

/// A linear layer `x·Wᵀ + b`.
#[allow(clippy::large_enum_variant)] // a few per layer: burn's tensor handles are large, boxing buys nothing
pub(super) enum Linear {
    /// Many rows at once (the encoder's 1500 a window): the GEMM kernels, f32 or int8.
    Dense(Dense),
    /// Few rows (a decoder step): the matrix kernels in the compute type.
    Matrix(Matrix),
    /// burn's `linear` on the device: the weight transposed, `[in, out]`.
    Tensor { w: Tensor<2>, b: Option<Tensor<1>> },
}

impl Linear {
    /// A device layer from a `[out, in]` row-major weight, held in `dtype`.
    pub(super) fn tensor(
        w: Vec<f32>,
        out: usize,
        inp: usize,
        b: Option<Vec<f32>>,
        device: &Device,
        dtype: DType,
    ) -> Linear {
        let w = from_vec_as(w, [out, inp], device, dtype).transpose();
        Linear::Tensor { w, b: b.map(|b| from_vec_as(b, [out], device, dtype)) }
    }

    fn out_features(&self) -> usize {
        match self {
            Linear::Dense(m) => m.out,
            Linear::Matrix(m) => m.out,
            Linear::Tensor { w, .. } => w.dims()[1],
        }
    }

    /// The CPU path on `rows` rows of host activations, GELU after when `with_gelu`.
    fn host(&self, x: &[f32], rows: usize, with_gelu: bool) -> Vec<f32> {
        match self {
            Linear::Dense(m) => m.forward(x, rows, with_gelu),
            Linear::Matrix(m) => {
                let mut y = m.forward(x, rows);
                if with_gelu {
                    kernels::gelu(&mut y);
                }
                y
            }
            Linear::Tensor { .. } => unreachable!("a device layer has no host path"),
        }
    }

    /// `x·Wᵀ + b` over the last dimension of `x`.
    pub(super) fn forward<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        if let Linear::Tensor { w, b } = self {
            return linear(x, w.clone(), b.clone());
        }
        let mut shape = x.dims();
        let device = x.device();
        let y = self.host(&to_vec(x), rows(&shape), false);
        shape[D - 1] = self.out_features();
        from_vec(y, shape, &device)
    }

    /// The feed-forward block's products, `fc2(gelu(fc1(x)))`: on the CPU path the hidden
    /// activations stay host rows between the two kernels.
    pub(super) fn feed_forward<const D: usize>(fc1: &Linear, fc2: &Linear, x: Tensor<D>) -> Tensor<D> {
        if let Linear::Tensor { .. } = fc1 {
            return fc2.forward(gelu(fc1.forward(x)));
        }
        let mut shape = x.dims();
        let device = x.device();
        let n = rows(&shape);
        let hidden = fc1.host(&to_vec(x), n, true);
        shape[D - 1] = fc2.out_features();
        from_vec(fc2.host(&hidden, n, false), shape, &device)
    }

    /// Bytes of weights one call reads (0 for a device layer, whose reads are the device's).
    pub(super) fn weight_bytes(&self) -> u64 {
        match self {
            Linear::Matrix(m) => m.weight_bytes(),
            Linear::Dense(_) | Linear::Tensor { .. } => 0,
        }
    }
}

/// Splits `[b, t, k·h·dh]` fused projections into `k` tensors `[b, h, t, dh]`.
fn split_heads(x: Tensor<3>, k: usize, h: usize) -> Vec<Tensor<4>> {
    let [b, t, d] = x.dims();
    let dh = d / (k * h);
    let x = x.reshape([b, t, k * h, dh]).swap_dims(1, 2);
    (0..k).map(|i| x.clone().narrow(1, i * h, h)).collect()
}

/// `[b, h, t, dh]` heads back to `[b, t, h·dh]`.
fn merge_heads(x: Tensor<4>) -> Tensor<3> {
    let [b, h, t, dh] = x.dims();
    x.swap_dims(1, 2).reshape([b, t, h * dh])
}

fn options(dh: usize, causal: bool) -> AttentionModuleOptions {
    AttentionModuleOptions { scale: Some(1.0 / (dh as f64).sqrt()), softcap: None, is_causal: causal }
}

/// The encoder's self-attention over each window of `[b, t, 3·h·dh]` fused q/k/v projections
/// (not causal): `[b, t, h·dh]`.
pub(super) fn window_attention(host: bool, qkv: Tensor<3>, h: usize) -> Tensor<3> {
    let [b, t, d3] = qkv.dims();
    let d = d3 / 3;
    if host {
        let device = qkv.device();
        let attended: Vec<f32> =
            to_vec(qkv).chunks_exact(t * d3).flat_map(|w| kernels::window_attention(w, t, h, d / h)).collect();
        return from_vec(attended, [b, t, d], &device);
    }
    let mut qkv = split_heads(qkv, 3, h);
    let (v, k, q) = (qkv.pop().expect("v"), qkv.pop().expect("k"), qkv.pop().expect("q"));
    merge_heads(attention(q, k, v, None, None, options(d / h, false)))
}

/// Cross-attention keys and values of one encoded window, for one decoder layer.
#[allow(clippy::large_enum_variant)] // a few per layer: burn's tensor handles are large, boxing buys nothing
pub(super) enum CrossKv {
    Host(AttentionKv),
    /// Keys and values, `[h, n, dh]` each.
    Tensor {
        k: Tensor<3>,
        v: Tensor<3>,
    },
}

impl CrossKv {
    /// One per window, from the `[b, n, 2·h·dh]` key/value projections of `b` windows.
    pub(super) fn of_windows(host: Option<AttentionPrecision>, kv: Tensor<3>, h: usize) -> Vec<CrossKv> {
        let [b, n, d2] = kv.dims();
        let dh = d2 / (2 * h);
        if let Some(precision) = host {
            let rows = to_vec(kv);
            return rows
                .chunks_exact(n * d2)
                .map(|w| CrossKv::Host(AttentionKv::new(w, d2, n, h, dh, precision)))
                .collect();
        }
        let mut kv = split_heads(kv, 2, h);
        let (v, k) = (kv.pop().expect("v"), kv.pop().expect("k"));
        (0..b)
            .map(|w| CrossKv::Tensor {
                k: k.clone().narrow(0, w, 1).reshape([h, n, dh]),
                v: v.clone().narrow(0, w, 1).reshape([h, n, dh]),
            })
            .collect()
    }

    /// Scaled scores `q·kᵀ/√dh` of `[1, t, h·dh]` queries against head `head`: `[t, n]`.
    pub(super) fn scores(&self, q: Tensor<3>, head: usize) -> Vec<f32> {
        match self {
            CrossKv::Host(kv) => {
                let t = q.dims()[1];
                kv.scores(&to_vec(q), t, head)
            }
            CrossKv::Tensor { k, .. } => {
                let [h, n, dh] = k.dims();
                let q = split_heads(q, 1, h).pop().expect("q").narrow(1, head, 1); // [1, 1, t, dh]
                let k = k.clone().narrow(0, head, 1).reshape([1, 1, n, dh]);
                to_vec(q.matmul(k.swap_dims(2, 3)) / (dh as f64).sqrt())
            }
        }
    }
}

/// Attention of `[b, t, h·dh]` queries, batch row `i` over the window `kvs[row_window[i]]`:
/// `[b, t, h·dh]`.
pub(super) fn cross_attention(kvs: &[&CrossKv], row_window: &[usize], q: Tensor<3>) -> Tensor<3> {
    let [b, t, d] = q.dims();
    match kvs[0] {
        CrossKv::Host(_) => {
            let device = q.device();
            let q = to_vec(q);
            let host = |w: usize| match kvs[w] {
                CrossKv::Host(kv) => kv,
                CrossKv::Tensor { .. } => unreachable!("one placement per model"),
            };
            let attended = if kvs.len() == 1 {
                host(0).attend(&q, d, b * t)
            } else {
                use rayon::prelude::*;
                // Runs of batch rows on the same window: one attention call each.
                let mut runs: Vec<(usize, usize)> = Vec::new(); // (window, first row)
                for (row, &w) in row_window.iter().enumerate() {
                    if runs.last().is_none_or(|&(last, _)| last != w) {
                        runs.push((w, row));
                    }
                }
                let ends: Vec<usize> = runs.iter().skip(1).map(|r| r.1).chain([b]).collect();
                runs.par_iter()
                    .zip(ends)
                    .map(|(&(w, r0), r1)| host(w).attend(&q[r0 * t * d..r1 * t * d], d, (r1 - r0) * t))
                    .collect::<Vec<_>>()
                    .concat()
            };
            from_vec(attended, [b, t, d], &device)
        }
        CrossKv::Tensor { k, .. } => {
            let [h, n, dh] = k.dims();
            let device = q.device();
            let (k, v) = if kvs.len() == 1 {
                let CrossKv::Tensor { k, v } = kvs[0] else { unreachable!("one placement per model") };
                (
                    k.clone().unsqueeze_dim::<4>(0).expand([b, h, n, dh]),
                    v.clone().unsqueeze_dim::<4>(0).expand([b, h, n, dh]),
                )
            } else {
                let (ks, vs): (Vec<_>, Vec<_>) = kvs
                    .iter()
                    .map(|kv| match kv {
                        CrossKv::Tensor { k, v } => (k.clone(), v.clone()),
                        CrossKv::Host(_) => unreachable!("one placement per model"),
                    })
                    .unzip();
                let rows = indices(row_window, &device);
                (Tensor::stack::<4>(ks, 0).select(0, rows.clone()), Tensor::stack::<4>(vs, 0).select(0, rows))
            };
            let q = split_heads(q, 1, h).pop().expect("q");
            merge_heads(attention(q, k, v, None, None, options(dh, false)))
        }
    }
}

fn indices(rows: &[usize], device: &Device) -> Tensor<1, Int> {
    let ids: Vec<i64> = rows.iter().map(|&r| r as i64).collect();
    Tensor::from_ints(TensorData::new(ids, [rows.len()]), device)
}

/// Self-attention keys and values of one decoder layer for the tokens decoded so far.
#[derive(Clone, Default)]
#[allow(clippy::large_enum_variant)] // a few per layer: burn's tensor handles are large, boxing buys nothing
pub(super) enum SelfKv {
    #[default]
    Empty,
    /// Per batch row, `[len, h·dh]` row-major.
    Host { k: Vec<Vec<f32>>, v: Vec<Vec<f32>> },
    /// `[b, h, len, dh]` each.
    Tensor { k: Tensor<4>, v: Tensor<4> },
}

impl SelfKv {
    /// Keeps, for each new batch row, the cache of row `rows[i]`; a host row's last use moves it.
    pub(super) fn select(&mut self, rows: &[usize], batch: usize) {
        match self {
            SelfKv::Empty => {}
            SelfKv::Host { k, v } => {
                let mut uses = vec![0usize; batch];
                rows.iter().for_each(|&r| uses[r] += 1);
                let (mut old_k, mut old_v) = (std::mem::take(k), std::mem::take(v));
                for &r in rows {
                    uses[r] -= 1;
                    if uses[r] == 0 {
                        k.push(std::mem::take(&mut old_k[r]));
                        v.push(std::mem::take(&mut old_v[r]));
                    } else {
                        k.push(old_k[r].clone());
                        v.push(old_v[r].clone());
                    }
                }
            }
            SelfKv::Tensor { k, v } => {
                let ids = indices(rows, &k.device());
                *k = k.clone().select(0, ids.clone());
                *v = v.clone().select(0, ids);
            }
        }
    }
}

/// Self-attention of `[b, t, 3·h·dh]` fused projections of new tokens over the cache and
/// themselves, appending their keys and values to `kv` (causally among the new tokens when
/// `causal`, which only a fresh cache asks for): `[b, t, h·dh]`.
pub(super) fn self_attention(host: bool, qkv: Tensor<3>, h: usize, kv: &mut SelfKv, causal: bool) -> Tensor<3> {
    let [b, t, d3] = qkv.dims();
    let d = d3 / 3;
    let dh = d / h;
    if !host {
        let mut parts = split_heads(qkv, 3, h);
        let (v_new, k_new, q) = (parts.pop().expect("v"), parts.pop().expect("k"), parts.pop().expect("q"));
        let (k, v) = match std::mem::take(kv) {
            SelfKv::Tensor { k, v } => (Tensor::cat(vec![k, k_new], 2), Tensor::cat(vec![v, v_new], 2)),
            _ => (k_new, v_new),
        };
        *kv = SelfKv::Tensor { k: k.clone(), v: v.clone() };
        return merge_heads(attention(q, k, v, None, None, options(dh, causal)));
    }
    use rayon::prelude::*;
    let device = qkv.device();
    let qkv = to_vec(qkv);
    let scale = 1.0 / (dh as f32).sqrt();
    if !matches!(kv, SelfKv::Host { k, .. } if k.len() == b) {
        *kv = SelfKv::Host { k: vec![Vec::new(); b], v: vec![Vec::new(); b] };
    }
    let SelfKv::Host { k: keys, v: values } = kv else { unreachable!("set above") };
    let start = keys[0].len() / d;
    for bi in 0..b {
        for i in 0..t {
            let row = &qkv[(bi * t + i) * 3 * d..(bi * t + i + 1) * 3 * d];
            keys[bi].extend_from_slice(&row[d..2 * d]);
            values[bi].extend_from_slice(&row[2 * d..]);
        }
    }
    // One rayon task per (hypothesis, head), each `[t, dh]`.
    let per_head: Vec<Vec<f32>> = (0..b * h)
        .into_par_iter()
        .map(|task| {
            let (bi, head) = (task / h, task % h);
            let (ks, vs) = (&keys[bi][head * dh..], &values[bi][head * dh..]);
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
    let mut out = vec![0.0f32; b * t * d];
    for (task, o) in per_head.iter().enumerate() {
        let (bi, head) = (task / h, task % h);
        for i in 0..t {
            out[(bi * t + i) * d + head * dh..][..dh].copy_from_slice(&o[i * dh..(i + 1) * dh]);
        }
    }
    from_vec(out, [b, t, d], &device)
}

/// The token embedding (also the tied logits projection) and the decoder's positions.
#[allow(clippy::large_enum_variant)] // a few per layer: burn's tensor handles are large, boxing buys nothing
pub(super) enum TokenEmbedding {
    /// `e` in the compute type's kernel form; positions `[n_text_ctx, d]` row-major.
    Host { e: Matrix, pos: Vec<f32> },
    /// `[vocab, d]` and `[n_text_ctx, d]`.
    Tensor { e: Tensor<2>, pos: Tensor<2> },
}

impl TokenEmbedding {
    /// Embeds `tokens` (`batch` rows of equal length, row-major) at positions from `start` on:
    /// `[batch, t, d]` on `device`.
    pub(super) fn embed(&self, tokens: &[u32], batch: usize, start: usize, device: &Device) -> Tensor<3> {
        let t = tokens.len() / batch;
        match self {
            TokenEmbedding::Host { e, pos } => {
                let d = e.inp;
                let mut x = Vec::with_capacity(tokens.len() * d);
                for (i, &tok) in tokens.iter().enumerate() {
                    let p = &pos[(start + i % t) * d..(start + i % t + 1) * d];
                    x.extend(e.row(tok as usize).iter().zip(p).map(|(e, p)| e + p));
                }
                from_vec(x, [batch, t, d], device)
            }
            TokenEmbedding::Tensor { e, pos } => {
                let d = e.dims()[1];
                let ids: Vec<usize> = tokens.iter().map(|&t| t as usize).collect();
                let x = e.clone().select(0, indices(&ids, device)).reshape([batch, t, d]);
                x + pos.clone().narrow(0, start, t).unsqueeze_dim::<3>(0)
            }
        }
    }

    /// Logits of `[b, t, d]` decoder outputs (after the final norm), row-major `[b·t, vocab]`.
    pub(super) fn logits(&self, x: Tensor<3>) -> Vec<f32> {
        match self {
            TokenEmbedding::Host { e, .. } => {
                let [b, t, _] = x.dims();
                e.forward(&to_vec(x), b * t)
            }
            TokenEmbedding::Tensor { e, .. } => to_vec(linear(x, e.clone().transpose(), None)),
        }
    }

    pub(super) fn weight_bytes(&self) -> u64 {
        match self {
            TokenEmbedding::Host { e, .. } => e.weight_bytes(),
            TokenEmbedding::Tensor { e, .. } => (e.dtype().size() * e.dims().iter().product::<usize>()) as u64,
        }
    }

    pub(super) fn kind(&self) -> &'static str {
        match self {
            TokenEmbedding::Host { e, .. } => e.kind(),
            TokenEmbedding::Tensor { e, .. } if e.dtype() == DType::F16 => "float16",
            TokenEmbedding::Tensor { .. } => "float32",
        }
    }
}
