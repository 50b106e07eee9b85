//! Hand-written CPU kernels for the shapes where burn's general-purpose ops are slow: the CPU
//! backend's fast path for Whisper (`scribe-whisper`) and diarization (`scribe-diarize`).
//!
//! A crate of its own, without burn (plain slices in, plain slices out), so the unsafe code,
//! its scalar twins and their property tests build and run in seconds, apart from the models.
//!
//! Whisper's decoder runs one token per beam per step: its linear layers and the 51865-token
//! logits projection are matrix × few-vectors products whose cost is reading the weights.
//! [`Matrix`] keeps them as the model file stores them (float16, `[out, in]` row-major, half
//! the bytes of f32; widening f16 to f32 is exact, so results equal an f32 matmul up to
//! summation order) and multiplies with AVX2/FMA/F16C when the CPU has them (detected at
//! run time, so the binary still runs on any x86-64), on rayon's pool, two weight rows per
//! pass and prefetching ahead (the hardware prefetcher alone leaves half the memory
//! bandwidth unused); `scribe-bench gemm` measures it at 2–26× the `gemm` crate on these
//! shapes. The encoder's 1500-row products are true GEMMs, where the `gemm` crate (the one
//! burn-flex runs on) is about twice as fast as the blocked AVX2 GEMM this file once had, so
//! [`Dense`] calls it in f32 (and [`Int8Gemm`] runs it in int8). [`AttentionKv`] holds
//! attention keys and values per head for the encoder's [`window_attention`] and the
//! decoder's cross-attention, a block of queries per task, on the AVX-512 kernels of
//! `attention512` for heads of 64 (the crate elsewhere), or, for cross-attention under int8,
//! on the bf16 kernels of `attention_bf16` (half the bytes per decoder step).
//! [`attend_cached`] is the decoder's self-attention over its cache. These and [`gelu`]
//! replace burn-flex ops that are slow for these shapes (flash attention; a scalar,
//! single-threaded libm erf). Every SIMD kernel has a plain-loop (or `gemm` crate) twin for
//! other CPUs, and the tests compare the two, on fixed shapes and as `proptest` properties
//! over random shapes and values (the bf16 kernels' twin is the f32 path, their test the
//! definition on rounded factors).

use half::f16;
use rayon::prelude::*;

use crate::int8_gemm::Int8Gemm;

pub mod int8_gemm;

#[cfg(target_arch = "x86_64")]
mod attention512;
#[cfg(target_arch = "x86_64")]
mod attention_bf16;
#[cfg(test)]
mod properties;

/// A linear layer `y = x·Wᵀ + b` with `W` stored `[out, in]`.
pub struct Matrix {
    w: Weights,
    bias: Option<Vec<f32>>,
    /// Output features (rows of `W`).
    pub out: usize,
    /// Input features (columns of `W`).
    pub inp: usize,
}

enum Weights {
    F16(Vec<f16>),
    F32(Vec<f32>),
    /// Row `r` is `q[r] · row_scale[r]`.
    I8 {
        q: Vec<i8>,
        row_scale: Vec<f32>,
    },
}

/// CTranslate2's int8 quantization of one row: scale `127 / max|w|` (rows of zeros keep
/// scale 1), values rounded half to even like numpy's `rint`. Returns the int8 row and the
/// factor that turns it back into weights (`max|w| / 127`).
pub fn quantize_row(w: &[f32], q: &mut Vec<i8>) -> f32 {
    let scale = int8_scale(w.iter().fold(0.0f32, |m, v| m.max(v.abs())));
    q.extend(w.iter().map(|v| round_small((v * scale).clamp(-127.0, 127.0)) as i8));
    1.0 / scale
}

/// `x.round_ties_even()` for `|x| ≤ 2²²`: adding and taking away 1.5·2²³ leaves no bits
/// below the unit, so the sum rounds half to even as every f32 addition does. On baseline
/// x86-64 `round_ties_even` is a libm call per value (2.5 % of a short transcription's
/// samples went to quantizing weights at load time); this loop vectorises.
fn round_small(x: f32) -> f32 {
    const MAGIC: f32 = 12_582_912.0; // 1.5 · 2²³
    (x + MAGIC) - MAGIC
}

/// [`quantize_row`] for each `inp`-wide row of `w`: the int8 rows and each row's factor.
pub fn quantize_rows(w: &[f32], inp: usize) -> (Vec<i8>, Vec<f32>) {
    let mut q = Vec::with_capacity(w.len());
    let row_scale = w.chunks(inp.max(1)).map(|row| quantize_row(row, &mut q)).collect();
    (q, row_scale)
}

/// The factor [`quantize_row`] multiplies a row by, from the row's largest magnitude.
#[inline]
pub fn int8_scale(amax: f32) -> f32 {
    let amax = if amax == 0.0 { 127.0 } else { amax.max(127.0 / f32::MAX) };
    127.0 / amax
}

thread_local! {
    /// A rayon thread's dot products for [`Matrix::forward`], kept from call to call.
    static DOTS: std::cell::RefCell<Vec<f32>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Weight rows per rayon task: enough work to pay for the task, enough tasks for every thread.
fn rows_per_task(out: usize, inp: usize, m: usize) -> usize {
    let threads = rayon::current_num_threads().max(1);
    let min_rows = (64 * 1024 / (inp * m).max(1)).max(8);
    out.div_ceil(4 * threads).max(min_rows)
}

impl Matrix {
    pub fn f16(w: Vec<f16>, out: usize, inp: usize, bias: Option<Vec<f32>>) -> Matrix {
        assert_eq!(w.len(), out * inp, "weight size");
        Matrix { w: Weights::F16(w), bias, out, inp }
    }

    pub fn f32(w: Vec<f32>, out: usize, inp: usize, bias: Option<Vec<f32>>) -> Matrix {
        assert_eq!(w.len(), out * inp, "weight size");
        Matrix { w: Weights::F32(w), bias, out, inp }
    }

    /// Int8 weights with one dequantization factor per row (row `r` is `q[r] · row_scale[r]`).
    pub fn int8(q: Vec<i8>, row_scale: Vec<f32>, out: usize, inp: usize, bias: Option<Vec<f32>>) -> Matrix {
        assert_eq!(q.len(), out * inp, "weight size");
        assert_eq!(row_scale.len(), out, "one scale per row");
        Matrix { w: Weights::I8 { q, row_scale }, bias, out, inp }
    }

    /// Quantizes f32 weights to int8 per row, as CTranslate2 does at conversion or load time.
    pub fn quantize(w: &[f32], out: usize, inp: usize, bias: Option<Vec<f32>>) -> Matrix {
        assert_eq!(w.len(), out * inp, "weight size");
        let (q, row_scale) = quantize_rows(w, inp);
        Matrix::int8(q, row_scale, out, inp, bias)
    }

    /// Bytes of weights (and int8 scales) one product reads; the bias is not counted.
    pub fn weight_bytes(&self) -> u64 {
        (match &self.w {
            Weights::F16(w) => w.len() * 2,
            Weights::F32(w) => w.len() * 4,
            Weights::I8 { q, row_scale } => q.len() + row_scale.len() * 4,
        }) as u64
    }

    /// The storage type's name ("float32", "float16", "int8").
    pub fn kind(&self) -> &'static str {
        match &self.w {
            Weights::F16(_) => "float16",
            Weights::F32(_) => "float32",
            Weights::I8 { .. } => "int8",
        }
    }

    /// Row `r` of `W` as f32 (an embedding lookup when `W` is the token embedding).
    pub fn row(&self, r: usize) -> Vec<f32> {
        let range = r * self.inp..(r + 1) * self.inp;
        match &self.w {
            Weights::F16(w) => w[range].iter().map(|v| v.to_f32()).collect(),
            Weights::F32(w) => w[range].to_vec(),
            Weights::I8 { q, row_scale } => q[range].iter().map(|&v| v as f32 * row_scale[r]).collect(),
        }
    }

    /// `x` holds `m` rows of `inp` values; returns `m` rows of `out` values.
    pub fn forward(&self, x: &[f32], m: usize) -> Vec<f32> {
        let (n, k) = (self.out, self.inp);
        assert_eq!(x.len(), m * k, "input size");
        let row_scale = match &self.w {
            Weights::I8 { row_scale, .. } => Some(row_scale),
            _ => None,
        };
        let mut y = vec![0.0f32; m * n];
        let result = SharedResult::of(&mut y);
        let rows = rows_per_task(n, k, m);
        (0..n.div_ceil(rows)).into_par_iter().for_each(|task| {
            let (r0, r1) = (task * rows, ((task + 1) * rows).min(n));
            DOTS.with_borrow_mut(|dots| {
                // Computed transposed, `[rows, m]`, then scaled into the task's columns of `y`.
                dots.resize((r1 - r0) * m, 0.0);
                match &self.w {
                    Weights::F16(w) => dot_rows(&w[r0 * k..r1 * k], x, m, k, dots, (m, 1)),
                    Weights::F32(w) => dot_rows(&w[r0 * k..r1 * k], x, m, k, dots, (m, 1)),
                    Weights::I8 { q, .. } => dot_rows(&q[r0 * k..r1 * k], x, m, k, dots, (m, 1)),
                }
                for (r, col) in (r0..r1).zip(dots.chunks_exact(m)) {
                    let b = self.bias.as_ref().map_or(0.0, |b| b[r]);
                    let s = row_scale.map_or(1.0, |s| s[r]);
                    for (i, v) in col.iter().enumerate() {
                        // SAFETY: column `r` of `y` belongs to this task's rows `r0..r1` alone,
                        // and no slice of `y` is alive during the loop.
                        unsafe { result.put(i * n + r, v * s + b) };
                    }
                }
            });
        });
        y
    }
}

/// A matrix in memory: element `(r, c)` of a `rows` × `cols` matrix is
/// `data[r·row_stride + c·col_stride]`, so one slice can be read as itself or as its transpose.
#[derive(Clone, Copy)]
struct View<'a> {
    data: &'a [f32],
    rows: usize,
    cols: usize,
    row_stride: usize,
    col_stride: usize,
}

impl<'a> View<'a> {
    /// `rows` rows of `cols` values, `row_stride` apart.
    fn rows(data: &'a [f32], rows: usize, cols: usize, row_stride: usize) -> View<'a> {
        View { data, rows, cols, row_stride, col_stride: 1 }
    }

    /// The transpose of `rows(data, cols, rows, row_stride)`: a column per stored row.
    fn columns(data: &'a [f32], rows: usize, cols: usize, col_stride: usize) -> View<'a> {
        View { data, rows, cols, row_stride: 1, col_stride }
    }

    /// Whether every element's offset is inside `data`.
    fn fits(&self) -> bool {
        self.rows == 0
            || self.cols == 0
            || (self.rows - 1) * self.row_stride + (self.cols - 1) * self.col_stride < self.data.len()
    }
}

/// `out = a·b`, or `out += a·b` when `accumulate`, `out` row-major `a.rows` × `b.cols`, through
/// the `gemm` crate (the GEMM burn-flex runs on: AVX-512 or AVX2 kernels chosen at run time),
/// on rayon's pool or on the calling thread.
fn matmul(a: View, b: View, out: &mut [f32], accumulate: bool, parallel: bool) {
    let (m, k, n) = (a.rows, a.cols, b.cols);
    assert!(b.rows == k && a.fits() && b.fits() && out.len() >= m * n, "matmul shapes");
    if m == 0 || n == 0 {
        return;
    }
    let parallelism = if parallel { gemm::Parallelism::Rayon(0) } else { gemm::Parallelism::None };
    // SAFETY: the assertion keeps every offset the crate reads inside `a.data` and `b.data`
    // (`fits`) and every one it writes (`i·n + j`, i < m, j < n) inside `out`; `out` is a
    // unique borrow, so it aliases neither input; strides fit `isize` because they index
    // slices.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            out.as_mut_ptr(),
            1,
            n as isize,
            accumulate,
            a.data.as_ptr(),
            a.col_stride as isize,
            a.row_stride as isize,
            b.data.as_ptr(),
            b.col_stride as isize,
            b.row_stride as isize,
            1.0,
            1.0,
            false,
            false,
            false,
            parallelism,
        )
    }
}

/// A linear layer `y = x·Wᵀ + b` for many rows (the encoder's 1500 frames). In f32, `W`
/// row-major `[out, in]` (widened from the model's f16 at load time: exact, so results equal
/// an f32 matmul up to summation order), multiplied by the `gemm` crate; it replaced a
/// hand-written blocked AVX2 GEMM that `scribe-bench gemm` measured at about half the
/// crate's speed on every encoder shape (the crate uses AVX-512 where the CPU has it). In
/// int8, on [`Int8Gemm`] (CPUs with AVX-512 VNNI).
pub struct Dense {
    w: DenseWeights,
    /// Output features.
    pub out: usize,
    /// Input features.
    pub inp: usize,
}

enum DenseWeights {
    F32 { w: Vec<f32>, bias: Vec<f32> },
    Int8(Int8Gemm),
}

impl Dense {
    /// From a row-major `[out, in]` weight and its bias (zero when absent).
    pub fn new(w: Vec<f32>, out: usize, inp: usize, bias: Option<Vec<f32>>) -> Dense {
        assert_eq!(w.len(), out * inp, "weight size");
        let bias = bias.unwrap_or_else(|| vec![0.0; out]);
        assert_eq!(bias.len(), out, "bias size");
        Dense { w: DenseWeights::F32 { w, bias }, out, inp }
    }

    /// From int8 weights `[out, in]` and each row's dequantization factor, on [`Int8Gemm`]
    /// (the caller checked [`Int8Gemm::available`]; without it the model keeps `Dense::new`).
    pub fn int8(q: Vec<i8>, row_scale: Vec<f32>, out: usize, inp: usize, bias: Option<Vec<f32>>) -> Dense {
        assert!(Int8Gemm::available(), "the int8 GEMM needs AVX-512 VNNI");
        Dense { w: DenseWeights::Int8(Int8Gemm::new(&q, row_scale, out, inp, bias)), out, inp }
    }

    /// `x` holds `m` rows of `inp` values; returns `m` rows of `out` values, through
    /// [`gelu`] when `with_gelu`.
    pub fn forward(&self, x: &[f32], m: usize, with_gelu: bool) -> Vec<f32> {
        let (n, k) = (self.out, self.inp);
        assert_eq!(x.len(), m * k, "input size");
        let mut y = match &self.w {
            DenseWeights::F32 { w, bias } => {
                let mut y = bias.repeat(m);
                matmul(View::rows(x, m, k, k), View::columns(w, k, n, k), &mut y, true, true);
                y
            }
            DenseWeights::Int8(g) => g.forward(x, m),
        };
        if with_gelu {
            gelu(&mut y);
        }
        y
    }
}

/// A weight element the kernels can widen to f32.
trait Weight: Copy + Send + Sync {
    fn to_f32(self) -> f32;
    #[cfg(target_arch = "x86_64")]
    /// Eight consecutive weights as f32 lanes.
    ///
    /// # Safety
    /// `p` points at 8 readable elements; the CPU has AVX2, FMA and F16C.
    unsafe fn load8(p: *const Self) -> std::arch::x86_64::__m256;
}

impl Weight for f16 {
    fn to_f32(self) -> f32 {
        f16::to_f32(self)
    }
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn load8(p: *const Self) -> std::arch::x86_64::__m256 {
        use std::arch::x86_64::*;
        // SAFETY: the caller promises 8 readable f16 (16 bytes, the unaligned load's width)
        // and F16C.
        unsafe { _mm256_cvtph_ps(_mm_loadu_si128(p as *const __m128i)) }
    }
}

impl Weight for i8 {
    fn to_f32(self) -> f32 {
        self as f32
    }
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn load8(p: *const Self) -> std::arch::x86_64::__m256 {
        use std::arch::x86_64::*;
        // SAFETY: the caller promises 8 readable i8 (8 bytes, the width `_mm_loadl_epi64`
        // reads, unaligned) and AVX2 (sign extension to eight i32 lanes).
        unsafe { _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(p as *const __m128i))) }
    }
}

impl Weight for f32 {
    fn to_f32(self) -> f32 {
        self
    }
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn load8(p: *const Self) -> std::arch::x86_64::__m256 {
        // SAFETY: the caller promises 8 readable f32 (an unaligned load) and AVX.
        unsafe { std::arch::x86_64::_mm256_loadu_ps(p) }
    }
}

#[inline]
fn simd_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::sync::OnceLock;
        static OK: OnceLock<bool> = OnceLock::new();
        *OK.get_or_init(|| {
            std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
                && std::arch::is_x86_feature_detected!("f16c")
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// `out[r * stride.0 + i * stride.1] = w_row_r · x_row_i` for every row `r` of `w` and every
/// one of the `m` rows `i` of `x`, rows `k` long.
fn dot_rows<W: Weight>(w: &[W], x: &[f32], m: usize, k: usize, out: &mut [f32], stride: (usize, usize)) {
    let n = w.len() / k;
    assert!(x.len() >= m * k && (n == 0 || m == 0 || out.len() > (n - 1) * stride.0 + (m - 1) * stride.1));
    #[cfg(target_arch = "x86_64")]
    if simd_available() {
        // SAFETY: the CPU features were detected above; the assertion above keeps every
        // access inside its slice.
        unsafe { avx2::dot_rows(w, x, m, k, out, stride) };
        return;
    }
    dot_rows_scalar(w, x, m, k, out, stride);
}

/// [`dot_rows`] as a plain loop.
fn dot_rows_scalar<W: Weight>(w: &[W], x: &[f32], m: usize, k: usize, out: &mut [f32], stride: (usize, usize)) {
    for (r, wr) in w.chunks_exact(k).enumerate() {
        for (i, xr) in x.chunks_exact(k).take(m).enumerate() {
            out[r * stride.0 + i * stride.1] = wr.iter().zip(xr).map(|(a, b)| a.to_f32() * b).sum();
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::Weight;

    /// Input rows handled per pass over the weights (accumulators live in registers).
    const BLOCK: usize = 6;
    /// Bytes of weight rows taken at a time: every input block passes over them while they
    /// are in L2, so many input rows still read the weights from memory once.
    const CHUNK_BYTES: usize = 64 * 1024;

    /// [`super::dot_rows`].
    ///
    /// # Safety
    /// The CPU has AVX2, FMA and F16C; `w` holds whole rows of `k`; `x` holds at least `m`
    /// rows of `k`; `out` has every index `r·stride.0 + i·stride.1` for `r` below the rows of
    /// `w` and `i` below `m` (what [`super::dot_rows`] asserts).
    #[target_feature(enable = "avx2,fma,f16c")]
    pub unsafe fn dot_rows<W: Weight>(w: &[W], x: &[f32], m: usize, k: usize, out: &mut [f32], stride: (usize, usize)) {
        let chunk = (CHUNK_BYTES / (k * size_of::<W>())).max(2) * k;
        for (c, w) in w.chunks(chunk).enumerate() {
            let out = &mut out[c * (chunk / k) * stride.0..];
            let mut i0 = 0;
            while i0 < m {
                let mb = (m - i0).min(BLOCK);
                // SAFETY: rows `i0..i0 + mb` of `x` exist (`mb` ≤ m − i0); `w` is this chunk's
                // whole rows and `out` starts at this chunk's first row, so `block`'s contract
                // is this function's.
                unsafe {
                    match mb {
                        1 => block::<W, 1>(w, x, i0, k, out, stride),
                        2 => block::<W, 2>(w, x, i0, k, out, stride),
                        3 => block::<W, 3>(w, x, i0, k, out, stride),
                        4 => block::<W, 4>(w, x, i0, k, out, stride),
                        5 => block::<W, 5>(w, x, i0, k, out, stride),
                        _ => block::<W, 6>(w, x, i0, k, out, stride),
                    }
                }
                i0 += mb;
            }
        }
    }

    /// Input rows `i0..i0 + B` against every weight row, two weight rows per pass: 2·B
    /// independent sums hide the FMA latency and each load of `x` feeds two FMAs.
    ///
    /// # Safety
    /// As [`dot_rows`], with `i0 + B` ≤ the rows of `x`.
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn block<W: Weight, const B: usize>(
        w: &[W],
        x: &[f32],
        i0: usize,
        k: usize,
        out: &mut [f32],
        stride: (usize, usize),
    ) {
        let n = w.len() / k;
        let mut r = 0;
        while r + 2 <= n {
            // SAFETY: weight rows `r` and `r + 1` exist (r + 2 ≤ n); the rest is our contract.
            unsafe { rows::<W, B, 2>(w, x, r, i0, k, out, stride) };
            r += 2;
        }
        if r < n {
            // SAFETY: weight row `r` exists (r < n); the rest is our contract.
            unsafe { rows::<W, B, 1>(w, x, r, i0, k, out, stride) };
        }
    }

    /// How far ahead of the rows being read [`rows`] prefetches, in bytes.
    const PREFETCH_BYTES: usize = 8192;

    /// Weight rows `r0..r0 + R` against input rows `i0..i0 + B`.
    ///
    /// # Safety
    /// As [`block`], with weight rows `r0..r0 + R` in `w`.
    #[target_feature(enable = "avx2,fma,f16c")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn rows<W: Weight, const B: usize, const R: usize>(
        w: &[W],
        x: &[f32],
        r0: usize,
        i0: usize,
        k: usize,
        out: &mut [f32],
        stride: (usize, usize),
    ) {
        // SAFETY: row `i0` of `x` and row `r0` of `w` exist (the contract), so both offsets
        // stay inside their slices.
        let xp = unsafe { x.as_ptr().add(i0 * k) };
        // SAFETY: as above.
        let wp = unsafe { w.as_ptr().add(r0 * k) };
        let mut acc = [[_mm256_setzero_ps(); B]; R];
        let mut c = 0;
        while c + 8 <= k {
            // SAFETY: columns `c..c + 8` are inside every row (c + 8 ≤ k) of weight rows
            // `r0..r0 + R` and input rows `i0..i0 + B`, which exist by the contract; the
            // prefetch is a hint that cannot fault, so its address may pass the end (hence
            // wrapping arithmetic). AVX2/FMA/F16C: the contract.
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(wp.wrapping_add(c * R + PREFETCH_BYTES / size_of::<W>()) as *const i8);
                let mut wv = [_mm256_setzero_ps(); R];
                for (r, v) in wv.iter_mut().enumerate() {
                    *v = W::load8(wp.add(r * k + c));
                }
                for i in 0..B {
                    let xv = _mm256_loadu_ps(xp.add(i * k + c));
                    for r in 0..R {
                        acc[r][i] = _mm256_fmadd_ps(xv, wv[r], acc[r][i]);
                    }
                }
            }
            c += 8;
        }
        for (r, acc) in acc.iter().enumerate() {
            let wr = &w[(r0 + r) * k..(r0 + r + 1) * k];
            for (i, a) in acc.iter().enumerate() {
                let xr = &x[(i0 + i) * k..(i0 + i + 1) * k];
                let tail: f32 = (c..k).map(|j| wr[j].to_f32() * xr[j]).sum();
                out[(r0 + r) * stride.0 + (i0 + i) * stride.1] = hsum(*a) + tail;
            }
        }
    }

    /// [`super::attend_cached`] for heads 64 wide: one dot product per key (two sums, then
    /// horizontal), [`softmax`], then the weighted sum of the values in eight registers.
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA; `q` and `out` hold 64 values; `keys` and `values` hold `n`
    /// rows of 64 `stride` apart (what [`super::attend_cached`] asserts).
    #[target_feature(enable = "avx2,fma,f16c")]
    pub unsafe fn attend_cached(
        q: &[f32],
        keys: &[f32],
        values: &[f32],
        stride: usize,
        n: usize,
        scale: f32,
        scores: &mut Vec<f32>,
        out: &mut [f32],
    ) {
        let qp = q.as_ptr();
        scores.clear();
        for j in 0..n {
            // SAFETY: key row `j` < n exists (the contract).
            let kp = unsafe { keys.as_ptr().add(j * stride) };
            let (mut a, mut b) = (_mm256_setzero_ps(), _mm256_setzero_ps());
            for c in (0..64).step_by(16) {
                // SAFETY: lanes `c..c + 16` ≤ 64 of the query and of key row `j`.
                unsafe {
                    a = _mm256_fmadd_ps(_mm256_loadu_ps(qp.add(c)), _mm256_loadu_ps(kp.add(c)), a);
                    b = _mm256_fmadd_ps(_mm256_loadu_ps(qp.add(c + 8)), _mm256_loadu_ps(kp.add(c + 8)), b);
                }
            }
            scores.push(hsum(_mm256_add_ps(a, b)) * scale);
        }
        // SAFETY: AVX2 and FMA, the contract.
        unsafe { softmax(scores) };
        let mut acc = [_mm256_setzero_ps(); 8];
        for (j, &p) in scores.iter().enumerate() {
            // SAFETY: value row `j` < n (one score per key) exists, 64 values from its start.
            unsafe {
                let vp = values.as_ptr().add(j * stride);
                let pv = _mm256_set1_ps(p);
                for (c, a) in acc.iter_mut().enumerate() {
                    *a = _mm256_fmadd_ps(pv, _mm256_loadu_ps(vp.add(c * 8)), *a);
                }
            }
        }
        for (c, a) in acc.iter().enumerate() {
            // SAFETY: lanes `c·8..c·8 + 8` ≤ 64 of `out`.
            unsafe { _mm256_storeu_ps(out.as_mut_ptr().add(c * 8), *a) };
        }
    }

    /// `exp` of eight lanes: Cephes `expf` (range reduction `x = n·ln2 + r`, |r| ≤ ln2/2,
    /// degree-7 polynomial, scaled by 2ⁿ through the exponent bits); within 2 ulp of the
    /// true value for x in [−87.3, 88]. Inputs are clamped to that range (below it the
    /// result is ~1e−38 instead of a denormal or 0, which no softmax sum can notice).
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    pub fn exp8(x: __m256) -> __m256 {
        use super::expf::*;
        let x = _mm256_max_ps(_mm256_min_ps(x, _mm256_set1_ps(MAX)), _mm256_set1_ps(MIN));
        let n = _mm256_round_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(_mm256_mul_ps(
            x,
            _mm256_set1_ps(std::f32::consts::LOG2_E),
        ));
        let r = _mm256_fnmadd_ps(n, _mm256_set1_ps(LN2_LO), _mm256_fnmadd_ps(n, _mm256_set1_ps(LN2_HI), x));
        let mut y = _mm256_set1_ps(POLY[0]);
        for c in &POLY[1..] {
            y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(*c));
        }
        y = _mm256_fmadd_ps(y, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0)));
        let e = _mm256_slli_epi32::<23>(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)));
        _mm256_mul_ps(y, _mm256_castsi256_ps(e))
    }

    /// The largest value of `row` (−∞ when empty).
    #[target_feature(enable = "avx2,fma")]
    fn max(row: &[f32]) -> f32 {
        let full = row.len() / 8 * 8;
        let mut mv = _mm256_set1_ps(f32::NEG_INFINITY);
        for i in (0..full).step_by(8) {
            // SAFETY: `i + 8` ≤ `full` ≤ the row's length.
            mv = _mm256_max_ps(mv, unsafe { _mm256_loadu_ps(row.as_ptr().add(i)) });
        }
        let mut lanes = [0.0f32; 8];
        // SAFETY: `lanes` holds the 8 values stored.
        unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), mv) };
        lanes.iter().chain(&row[full..]).copied().fold(f32::NEG_INFINITY, f32::max)
    }

    /// [`super::log_sum_exp`] with [`exp8`]: max, then the sum of exponentials.
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn log_sum_exp(row: &[f32]) -> f32 {
        let max = max(row);
        if max == f32::NEG_INFINITY {
            return max;
        }
        let full = row.len() / 8 * 8;
        let mx = _mm256_set1_ps(max);
        let mut sv = _mm256_setzero_ps();
        for i in (0..full).step_by(8) {
            // SAFETY: `i + 8` ≤ `full` ≤ the row's length.
            sv = _mm256_add_ps(sv, exp8(_mm256_sub_ps(unsafe { _mm256_loadu_ps(row.as_ptr().add(i)) }, mx)));
        }
        let tail: f32 = row[full..].iter().map(|v| (v - max).exp()).sum();
        max + (hsum(sv) + tail).ln()
    }

    /// [`super::softmax`] with [`exp8`]: max, exp and sum, scale; the tail (< 8 values)
    /// goes through a padded register.
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn softmax(row: &mut [f32]) {
        let len = row.len();
        let full = len / 8 * 8;
        let max = max(row);
        let p = row.as_mut_ptr();
        let mx = _mm256_set1_ps(max);
        let mut sv = _mm256_setzero_ps();
        for i in (0..full).step_by(8) {
            // SAFETY: `i + 8` ≤ `full` ≤ the row's length, and `p` is the row's start.
            unsafe {
                let e = exp8(_mm256_sub_ps(_mm256_loadu_ps(p.add(i)), mx));
                _mm256_storeu_ps(p.add(i), e);
                sv = _mm256_add_ps(sv, e);
            }
        }
        let mut sum = hsum(sv);
        if full < len {
            let mut tail = [max; 8];
            tail[..len - full].copy_from_slice(&row[full..]);
            // SAFETY: `tail` holds the 8 values loaded and stored.
            unsafe { _mm256_storeu_ps(tail.as_mut_ptr(), exp8(_mm256_sub_ps(_mm256_loadu_ps(tail.as_ptr()), mx))) };
            row[full..].copy_from_slice(&tail[..len - full]);
            sum += tail[..len - full].iter().sum::<f32>();
        }
        let inv = _mm256_set1_ps(1.0 / sum);
        for i in (0..full).step_by(8) {
            // SAFETY: `i + 8` ≤ `full` ≤ the row's length.
            unsafe { _mm256_storeu_ps(p.add(i), _mm256_mul_ps(_mm256_loadu_ps(p.add(i)), inv)) };
        }
        let inv = 1.0 / sum;
        row[full..].iter_mut().for_each(|v| *v *= inv);
    }

    #[inline(always)]
    pub(super) fn hsum(v: __m256) -> f32 {
        // SAFETY: register-only SSE/AVX operations; every caller runs with AVX enabled.
        unsafe {
            let s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
            let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
            let s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
            _mm_cvtss_f32(s)
        }
    }
}

/// Values per rayon task of [`gelu`].
const GELU_CHUNK: usize = 16 * 1024;

/// Exact-form GELU, `x·(1 + erf(x/√2))/2`, in place and in parallel.
pub fn gelu(x: &mut [f32]) {
    x.par_chunks_mut(GELU_CHUNK).for_each(gelu_serial);
}

/// [`gelu`] on the calling thread.
fn gelu_serial(x: &mut [f32]) {
    for v in x {
        *v = 0.5 * *v * (1.0 + erf(*v * std::f32::consts::FRAC_1_SQRT_2));
    }
}

/// erf as a rational function on [−4, 4] (Eigen's `generic_fast_erf_float`; outside, erf is
/// ±1 in f32); absolute error below 5e-7. Branch-free, so the loop vectorises.
fn erf(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let mut p = x2 * -2.726_142_3e-10 + 2.770_681_4e-8;
    p = x2 * p + -2.101_024e-6;
    p = x2 * p + -5.692_506_4e-5;
    p = x2 * p + -7.349_906_3e-4;
    p = x2 * p + -2.954_600_1e-3;
    p = x2 * p + -1.609_603_3e-2;
    let mut q = x2 * -1.456_607_2e-5 + -2.133_740_6e-4;
    q = x2 * q + -1.682_827e-3;
    q = x2 * q + -7.373_329e-3;
    q = x2 * q + -1.426_474e-2;
    x * p / q
}

/// Softmax of one row, in place: vectorised (AVX2 `exp`, see `avx2::exp8`) when the CPU
/// allows, else `softmax_scalar`.
#[inline]
pub fn softmax(row: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if simd_available() {
        // SAFETY: features detected.
        unsafe { avx2::softmax(row) };
        return;
    }
    softmax_scalar(row)
}

/// Attention of one query of one head over `n` cached positions:
/// `out = softmax(scale · q·kⱼ) · V`, key `j` being `keys[j·stride..][..dh]` and value `j`
/// `values[j·stride..][..dh]`, `dh = q.len() = out.len()`; `scores` is scratch space.
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn attend_cached(
    q: &[f32],
    keys: &[f32],
    values: &[f32],
    stride: usize,
    n: usize,
    scale: f32,
    scores: &mut Vec<f32>,
    out: &mut [f32],
) {
    let dh = q.len();
    assert!(
        out.len() == dh && (n == 0 || (keys.len() >= (n - 1) * stride + dh && values.len() >= (n - 1) * stride + dh))
    );
    #[cfg(target_arch = "x86_64")]
    if dh == 64 && simd_available() {
        // SAFETY: features detected; the assertion bounds every access.
        unsafe { avx2::attend_cached(q, keys, values, stride, n, scale, scores, out) };
        return;
    }
    attend_cached_scalar(q, keys, values, stride, n, scale, scores, out);
}

/// [`attend_cached`] as plain loops.
#[allow(clippy::too_many_arguments)]
fn attend_cached_scalar(
    q: &[f32],
    keys: &[f32],
    values: &[f32],
    stride: usize,
    n: usize,
    scale: f32,
    scores: &mut Vec<f32>,
    out: &mut [f32],
) {
    let dh = q.len();
    scores.clear();
    scores.extend(
        (0..n).map(|j| q.iter().zip(&keys[j * stride..j * stride + dh]).map(|(a, b)| a * b).sum::<f32>() * scale),
    );
    softmax_scalar(scores);
    out.fill(0.0);
    for (j, &p) in scores.iter().enumerate() {
        for (o, &v) in out.iter_mut().zip(&values[j * stride..j * stride + dh]) {
            *o += p * v;
        }
    }
}

/// `ln Σ exp(xᵢ)`, from the maximum (so it cannot overflow); −∞ when every value is −∞.
/// Vectorised like [`softmax`] when the CPU allows.
#[inline]
pub fn log_sum_exp(x: &[f32]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if simd_available() {
        // SAFETY: features detected.
        return unsafe { avx2::log_sum_exp(x) };
    }
    log_sum_exp_scalar(x)
}

/// [`log_sum_exp`] with libm `exp`.
fn log_sum_exp_scalar(x: &[f32]) -> f32 {
    let max = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    if max == f32::NEG_INFINITY {
        return max;
    }
    max + x.iter().map(|v| (v - max).exp()).sum::<f32>().ln()
}

/// Softmax of one row, in place, with libm `exp`.
fn softmax_scalar(row: &mut [f32]) {
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for v in row.iter_mut() {
        *v = (*v - max).exp();
        sum += *v;
    }
    let inv = 1.0 / sum;
    row.iter_mut().for_each(|v| *v *= inv);
}

/// Cephes `expf`'s constants, shared by the 8- and 16-lane `exp` (`avx2::exp8`,
/// `attention512::exp16`) so both give the same values: the clamp, ln 2 in two parts for the
/// range reduction, and the polynomial's coefficients from the highest degree down.
#[cfg(target_arch = "x86_64")]
mod expf {
    pub const MAX: f32 = 88.0;
    pub const MIN: f32 = -87.336_55;
    pub const LN2_HI: f32 = 0.693_359_4;
    pub const LN2_LO: f32 = -2.121_944_4e-4;
    pub const POLY: [f32; 6] = [1.987_569_1e-4, 1.398_199_9e-3, 8.333_452e-3, 4.166_579_6e-2, 1.666_666_5e-1, 5e-1];
}

/// Query rows per attention task: their score rows (× 1500 positions) stay in L2.
const QUERY_BLOCK: usize = 48;

thread_local! {
    /// A rayon thread's block of score rows and of one head's outputs, kept from task to
    /// task (fresh ones each task cost a page fault per 4 KiB).
    static SCRATCH: std::cell::RefCell<(Vec<f32>, Vec<f32>)> = const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

/// Softmax of `rows` rows of `t` scores, in place.
fn softmax_rows(s: &mut [f32], rows: usize, t: usize) {
    #[cfg(target_arch = "x86_64")]
    if attention512::available() {
        // SAFETY: the CPU has AVX-512 F.
        return unsafe { attention512::softmax_rows(s, rows, t) };
    }
    s[..rows * t].chunks_exact_mut(t).for_each(softmax);
}

/// The precision of attention's two products: f32, or bf16 factors with f32 sums (see
/// `attention_bf16`), which the int8 compute type takes where the CPU has AVX-512 BF16.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttentionPrecision {
    F32,
    Bf16,
}

impl AttentionPrecision {
    /// Bf16 where the CPU runs it for heads of `dh` (every Whisper model's 64), else f32.
    fn usable(self, dh: usize) -> AttentionPrecision {
        #[cfg(target_arch = "x86_64")]
        if self == AttentionPrecision::Bf16 && dh == attention_bf16::DH && attention_bf16::available() {
            return self;
        }
        let _ = dh;
        AttentionPrecision::F32
    }
}

/// Keys and values of `t` positions for `h` heads of width `dh`, each head's keys and values
/// contiguous, so both products of attention stream memory.
pub struct AttentionKv {
    store: KvStore,
    t: usize,
    h: usize,
    dh: usize,
}

enum KvStore {
    /// Values `[h][t][dh]`; keys `[h][t][dh]` for the `gemm` crate, or, for heads of 64 on a
    /// CPU with AVX-512 (`blocked`), in the layout of `attention512`
    /// (`[h][⌈t/32⌉][64][32]`, zero-padded).
    F32 { k: Vec<f32>, v: Vec<f32>, blocked: bool },
    /// Per head, `attention_bf16`'s layouts of keys and values.
    Bf16 { k: Vec<u32>, v: Vec<u32> },
}

impl AttentionKv {
    /// From `t` rows `stride` apart, each holding the keys (`h·dh`, heads side by side)
    /// followed by the values, for products in `precision` where the CPU runs it.
    pub fn new(
        rows: &[f32],
        stride: usize,
        t: usize,
        h: usize,
        dh: usize,
        precision: AttentionPrecision,
    ) -> AttentionKv {
        #[cfg(target_arch = "x86_64")]
        if precision.usable(dh) == AttentionPrecision::Bf16 {
            return AttentionKv::bf16(rows, stride, t, h, dh);
        }
        let _ = precision;
        #[cfg(target_arch = "x86_64")]
        let blocked = dh == attention512::DH && attention512::available();
        #[cfg(not(target_arch = "x86_64"))]
        let blocked = false;
        AttentionKv::with_layout(rows, stride, t, h, dh, blocked)
    }

    fn with_layout(rows: &[f32], stride: usize, t: usize, h: usize, dh: usize, blocked: bool) -> AttentionKv {
        let d = h * dh;
        assert!(t == 0 || rows.len() >= (t - 1) * stride + 2 * d, "kv size");
        let head_keys = if blocked { key_block_len(t) } else { t * dh };
        let (mut k, mut v) = (vec![0.0f32; h * head_keys], vec![0.0f32; h * t * dh]);
        k.par_chunks_mut(head_keys).zip(v.par_chunks_mut(t * dh)).enumerate().for_each(|(head, (k, v))| {
            for j in 0..t {
                let row = &rows[j * stride..j * stride + 2 * d];
                let keys = &row[head * dh..(head + 1) * dh];
                if blocked {
                    keys.iter().enumerate().for_each(|(c, &x)| k[key_block_index(j, c)] = x);
                } else {
                    k[j * dh..(j + 1) * dh].copy_from_slice(keys);
                }
                v[j * dh..(j + 1) * dh].copy_from_slice(&row[d + head * dh..d + (head + 1) * dh]);
            }
        });
        AttentionKv { store: KvStore::F32 { k, v, blocked }, t, h, dh }
    }

    /// The bf16 layouts of `attention_bf16` (heads of 64, a CPU with AVX-512 BF16).
    #[cfg(target_arch = "x86_64")]
    fn bf16(rows: &[f32], stride: usize, t: usize, h: usize, dh: usize) -> AttentionKv {
        use attention_bf16 as bf;
        let d = h * dh;
        assert!(t == 0 || rows.len() >= (t - 1) * stride + 2 * d, "kv size");
        let (head_keys, head_values) = (bf::keys_len(t), bf::values_len(t));
        let (mut k, mut v) = (vec![0u32; h * head_keys], vec![0u32; h * head_values]);
        let zeros = [0.0f32; attention_bf16::DH];
        k.par_chunks_mut(head_keys).zip(v.par_chunks_mut(head_values)).enumerate().for_each(|(head, (k, v))| {
            let key = |j: usize| &rows[j * stride + head * dh..][..dh];
            let value = |j: usize| if j < t { &rows[j * stride + d + head * dh..][..dh] } else { &zeros[..] };
            // SAFETY: a bf16 store is only built where the CPU has AVX-512 F and BF16.
            unsafe {
                for j in 0..t {
                    bf::put_key(key(j), j, k);
                }
                for (m, pairs) in v.chunks_exact_mut(dh).enumerate() {
                    bf::put_values(value(2 * m), value(2 * m + 1), pairs);
                }
            }
        });
        AttentionKv { store: KvStore::Bf16 { k, v }, t, h, dh }
    }

    /// Head `head`'s part of a store of keys or values.
    fn head<'a, T>(&self, kv: &'a [T], head: usize) -> &'a [T] {
        let len = kv.len() / self.h.max(1);
        &kv[head * len..(head + 1) * len]
    }

    /// Into `s` (`rows` × `t`): scores `q·kᵀ/√dh` of query rows `i0..i0 + rows` of `q`
    /// (rows `ldq` apart, heads side by side) against head `head`, on this thread.
    fn head_scores(&self, q: &[f32], ldq: usize, i0: usize, rows: usize, head: usize, s: &mut [f32]) {
        let dh = self.dh;
        let scale = 1.0 / (dh as f32).sqrt();
        let qh: Vec<f32> = (i0..i0 + rows)
            .flat_map(|i| q[i * ldq + head * dh..i * ldq + (head + 1) * dh].iter().map(|x| x * scale))
            .collect();
        match &self.store {
            #[cfg(target_arch = "x86_64")]
            KvStore::Bf16 { k, .. } => {
                let mut pairs = vec![0u32; rows * dh / 2];
                // SAFETY: a bf16 store is only built where the CPU has AVX-512 F and BF16.
                unsafe {
                    attention_bf16::to_pairs(&qh, &mut pairs);
                    attention_bf16::scores(&pairs, rows, self.head(k, head), self.t, s)
                };
            }
            #[cfg(target_arch = "x86_64")]
            KvStore::F32 { k, blocked: true, .. } => {
                // SAFETY: `blocked` is only set where the CPU has AVX-512 F.
                unsafe { attention512::scores(&qh, rows, self.head(k, head), self.t, s) };
            }
            KvStore::F32 { k, .. } => {
                let keys = View::columns(self.head(k, head), dh, self.t, dh);
                matmul(View::rows(&qh, rows, dh, dh), keys, s, false, false);
            }
            #[cfg(not(target_arch = "x86_64"))]
            KvStore::Bf16 { .. } => unreachable!("no bf16 store off x86-64"),
        }
    }

    /// Into `o` (`rows` × `dh`): the attention weights `p` (`rows` × `t`) times head `head`'s
    /// values, on this thread.
    fn head_values(&self, p: &[f32], rows: usize, head: usize, o: &mut [f32]) {
        match &self.store {
            #[cfg(target_arch = "x86_64")]
            KvStore::Bf16 { v, .. } => {
                let lanes = attention_bf16::weights_len(self.t);
                let mut pairs = vec![0u32; rows * lanes];
                // SAFETY: a bf16 store is only built where the CPU has AVX-512 F and BF16.
                unsafe {
                    for (row, out) in p.chunks_exact(self.t).zip(pairs.chunks_exact_mut(lanes)) {
                        attention_bf16::to_pairs(row, out);
                    }
                    attention_bf16::weighted_values(&pairs, rows, self.head(v, head), self.t, o)
                };
            }
            #[cfg(target_arch = "x86_64")]
            KvStore::F32 { v, blocked: true, .. } => {
                // SAFETY: `blocked` is only set where the CPU has AVX-512 F.
                unsafe { attention512::weighted_values(p, rows, self.head(v, head), self.t, o) };
            }
            KvStore::F32 { v, .. } => {
                let values = View::rows(self.head(v, head), self.t, self.dh, self.dh);
                matmul(View::rows(p, rows, self.t, self.t), values, o, false, false);
            }
            #[cfg(not(target_arch = "x86_64"))]
            KvStore::Bf16 { .. } => unreachable!("no bf16 store off x86-64"),
        }
    }

    /// Scaled scores `q·kᵀ/√dh` of `n` query rows (`[n, h·dh]`) against head `head`: `[n, t]`.
    pub fn scores(&self, q: &[f32], n: usize, head: usize) -> Vec<f32> {
        let mut s = vec![0.0f32; n * self.t];
        self.head_scores(q, self.h * self.dh, 0, n, head, &mut s);
        s
    }

    /// Attention of `n` query rows, `ldq` apart (heads side by side), over all positions:
    /// `[n, h·dh]`. Each (head, block of queries) is one rayon task, which writes its rows
    /// of its head's columns of the result.
    pub fn attend(&self, q: &[f32], ldq: usize, n: usize) -> Vec<f32> {
        let (t, dh, d) = (self.t, self.dh, self.h * self.dh);
        let mut merged = vec![0.0f32; n * d];
        let out = SharedResult::of(&mut merged);
        let blocks = n.div_ceil(QUERY_BLOCK);
        (0..self.h * blocks).into_par_iter().for_each(|task| {
            let (head, i0) = (task / blocks, task % blocks * QUERY_BLOCK);
            let rows = QUERY_BLOCK.min(n - i0);
            SCRATCH.with_borrow_mut(|(s, o)| {
                s.resize(rows * t, 0.0);
                o.resize(rows * dh, 0.0);
                self.head_scores(q, ldq, i0, rows, head, s);
                softmax_rows(s, rows, t);
                self.head_values(s, rows, head, o);
                for (i, values) in o.chunks_exact(dh).enumerate() {
                    // SAFETY: row `i0 + i` of head `head` is this task's alone, and `merged`
                    // outlives the loop.
                    unsafe { out.slice((i0 + i) * d + head * dh, dh) }.copy_from_slice(values);
                }
            });
        });
        merged
    }
}

/// A result its parallel tasks share, each writing elements no other task touches: in
/// [`AttentionKv::attend`] the `dh` columns of a task's head in its block of rows, in
/// [`Matrix::forward`] the columns of a task's weight rows.
#[derive(Clone, Copy)]
struct SharedResult {
    base: *mut f32,
    len: usize,
}

// SAFETY: the tasks holding a copy write disjoint elements (see `slice` and `put`), and the
// buffer outlives them (its owner returns it after the parallel loop ends).
unsafe impl Send for SharedResult {}
// SAFETY: as for `Send`; no element is read through this handle.
unsafe impl Sync for SharedResult {}

impl SharedResult {
    fn of(result: &mut [f32]) -> SharedResult {
        SharedResult { base: result.as_mut_ptr(), len: result.len() }
    }

    /// The `len` elements from `start`.
    ///
    /// # Safety
    /// No other task writes them, and no other live slice overlaps them.
    #[allow(clippy::mut_from_ref)]
    unsafe fn slice(&self, start: usize, len: usize) -> &mut [f32] {
        assert!(start + len <= self.len, "a task's part out of the result");
        // SAFETY: in bounds (checked above); exclusive by the caller's promise.
        unsafe { std::slice::from_raw_parts_mut(self.base.add(start), len) }
    }

    /// Writes `value` at `index`.
    ///
    /// # Safety
    /// No other task writes that element, and no live slice covers it.
    unsafe fn put(&self, index: usize, value: f32) {
        assert!(index < self.len, "a task's element out of the result");
        // SAFETY: in bounds (checked above); exclusive by the caller's promise.
        unsafe { self.base.add(index).write(value) }
    }
}

#[cfg(target_arch = "x86_64")]
use attention512::{blocked_index as key_block_index, blocked_len as key_block_len};

#[cfg(not(target_arch = "x86_64"))]
fn key_block_len(_: usize) -> usize {
    unreachable!("no blocked keys without AVX-512")
}

#[cfg(not(target_arch = "x86_64"))]
fn key_block_index(_: usize, _: usize) -> usize {
    unreachable!("no blocked keys without AVX-512")
}

/// Non-causal multi-head self-attention over one window, as the encoder needs it.
/// `qkv` is `[t, 3·h·dh]` (the fused q, k, v projections, heads side by side); returns
/// `[t, h·dh]`, heads merged. Score rows are made a block of queries at a time and never
/// leave the cache (burn-flex's flash attention, or materialising all `h·t·t` scores, is
/// several times slower at t = 1500).
pub fn window_attention(qkv: &[f32], t: usize, h: usize, dh: usize) -> Vec<f32> {
    let d = h * dh;
    assert_eq!(qkv.len(), t * 3 * d, "qkv size");
    AttentionKv::new(&qkv[d..], 3 * d, t, h, dh, AttentionPrecision::F32).attend(qkv, 3 * d, t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::properties::{attention_definition, plain_matmul};

    #[test]
    fn matrix_matches_a_plain_matmul_for_every_row_count() {
        // An odd row count (a single last row), k with a tail past the 8-wide steps.
        let (n, k) = (37, 68);
        let w: Vec<f32> = (0..n * k).map(|i| f16::from_f32(((i * 7919) % 101) as f32 / 50.0 - 1.0).to_f32()).collect();
        let b: Vec<f32> = (0..n).map(|i| i as f32 * 0.01).collect();
        let w16: Vec<f16> = w.iter().map(|&v| f16::from_f32(v)).collect();
        for m in [1, 2, 5, 6, 7, 13] {
            let x: Vec<f32> = (0..m * k).map(|i| ((i * 31) % 17) as f32 / 8.0 - 1.0).collect();
            let want = plain_matmul(&w, Some(&b), &x, m, n, k);
            let mut plain = vec![0.0; n * m];
            dot_rows_scalar(&w16, &x, m, k, &mut plain, (1, n));
            plain.iter_mut().enumerate().for_each(|(i, v)| *v += b[i % n]);
            for got in [
                Matrix::f16(w16.clone(), n, k, Some(b.clone())).forward(&x, m),
                Matrix::f32(w.clone(), n, k, Some(b.clone())).forward(&x, m),
                plain,
            ] {
                for (g, e) in got.iter().zip(&want) {
                    assert!((g - e).abs() < 1e-4, "m={m}: {g} vs {e}");
                }
            }
        }
    }

    #[test]
    fn a_product_split_among_tasks_is_the_kernels_row_by_row_bit_for_bit() {
        // given enough weight rows for several tasks, with scales and a bias
        let (n, k) = (3001, 72);
        let w: Vec<f32> = (0..n * k).map(|i| ((i * 7919) % 201) as f32 / 37.0 - 2.7).collect();
        let b: Vec<f32> = (0..n).map(|i| i as f32 * 0.001 - 0.5).collect();
        let matrix = Matrix::quantize(&w, n, k, Some(b.clone()));
        let Weights::I8 { q, row_scale } = &matrix.w else { panic!("not int8") };
        for m in [1, 5, 15] {
            assert!(n.div_ceil(rows_per_task(n, k, m)) > 1, "m={m}: one task only");
            let x: Vec<f32> = (0..m * k).map(|i| ((i * 31) % 17) as f32 / 8.0 - 1.0).collect();
            // when it is computed by the tasks
            let got = matrix.forward(&x, m);
            // then each value is the kernel's dot product of its rows, scaled, plus the bias
            let mut want = vec![0.0; n * m];
            dot_rows(q, &x, m, k, &mut want, (1, n));
            want.iter_mut().enumerate().for_each(|(i, v)| *v = *v * row_scale[i % n] + b[i % n]);
            assert!(got.iter().zip(&want).all(|(g, e)| g.to_bits() == e.to_bits()), "m={m}");
        }
    }

    #[test]
    fn int8_matrix_matches_a_plain_matmul_of_its_dequantized_weights() {
        // Odd row counts and widths with tails past the 8-wide steps; one row of zeros.
        for (n, k) in [(37, 68), (5, 8), (130, 333)] {
            let mut w: Vec<f32> = (0..n * k).map(|i| ((i * 7919) % 201) as f32 / 37.0 - 2.7).collect();
            w[k..2 * k].fill(0.0);
            let b: Vec<f32> = (0..n).map(|i| i as f32 * 0.01 - 0.1).collect();
            let matrix = Matrix::quantize(&w, n, k, Some(b.clone()));
            let dequantized: Vec<f32> = (0..n).flat_map(|r| matrix.row(r)).collect();
            // Quantization error is at most half a step (max|row| / 254) per weight.
            for (r, (row, orig)) in dequantized.chunks(k).zip(w.chunks(k)).enumerate() {
                let amax = orig.iter().fold(0.0f32, |m, v| m.max(v.abs()));
                for (d, o) in row.iter().zip(orig) {
                    assert!((d - o).abs() <= amax / 254.0 * 1.0001 + 1e-7, "row {r}: {d} vs {o}");
                }
            }
            let Weights::I8 { q, row_scale } = &matrix.w else { panic!("not int8") };
            for m in [1, 2, 5, 6, 7, 13] {
                let x: Vec<f32> = (0..m * k).map(|i| ((i * 31) % 17) as f32 / 8.0 - 1.0).collect();
                let want = plain_matmul(&dequantized, Some(&b), &x, m, n, k);
                let mut plain = vec![0.0; n * m];
                dot_rows_scalar(q, &x, m, k, &mut plain, (1, n));
                plain.iter_mut().enumerate().for_each(|(i, v)| *v = *v * row_scale[i % n] + b[i % n]);
                for got in [matrix.forward(&x, m), plain] {
                    for (g, e) in got.iter().zip(&want) {
                        assert!((g - e).abs() < 1e-4 * e.abs().max(1.0), "({n},{k}) m={m}: {g} vs {e}");
                    }
                }
            }
        }
    }

    #[test]
    fn quantize_row_matches_ctranslate2() {
        // numpy: np.rint(w * (127 / max|w|)).astype(int8) with w = [0.5, -1.0, 0.25, 0.0].
        let mut q = Vec::new();
        let back = quantize_row(&[0.5, -1.0, 0.25, 0.0], &mut q);
        assert_eq!(q, vec![64, -127, 32, 0]); // 63.5 rounds half to even: 64
        assert!((back - 1.0 / 127.0).abs() < 1e-9);
        q.clear();
        assert_eq!(quantize_row(&[0.0; 3], &mut q), 1.0);
        assert_eq!(q, vec![0, 0, 0]);
    }

    #[test]
    fn round_small_rounds_half_to_even_like_round_ties_even() {
        // Every quarter step over the int8 range, halves included, and values near them.
        for i in -1100..=1100 {
            for x in [i as f32 / 8.0, i as f32 / 8.0 + 1e-4, i as f32 / 8.0 - 1e-4] {
                assert_eq!(round_small(x), x.round_ties_even(), "{x}");
            }
        }
    }

    #[test]
    fn erf_is_accurate() {
        // erf values from Python's math.erf.
        for (x, e) in [
            (0.0f32, 0.0f32),
            (0.5, 0.520_499_9),
            (1.0, 0.842_700_8),
            (-2.0, -0.995_322_3),
            (3.5, 0.999_999_3),
            (9.0, 1.0),
        ] {
            assert!((erf(x) - e).abs() < 1e-6, "erf({x}) = {} not {e}", erf(x));
        }
    }

    #[test]
    fn window_attention_matches_the_definition() {
        // t not a multiple of 16 (padded keys) and above GEMM_DEPTH (several depth passes).
        for (t, h, dh) in [(45, 2, 16), (301, 2, 32), (45, 2, 64), (301, 3, 64)] {
            let d = h * dh;
            let qkv: Vec<f32> = (0..t * 3 * d).map(|i| ((i * 7919) % 23) as f32 / 11.0 - 1.0).collect();
            let got = window_attention(&qkv, t, h, dh);
            for head in 0..h {
                for i in 0..t {
                    let want = attention_definition(&qkv, 3 * d, &qkv[d..], 3 * d, t, d, dh, i, head);
                    for (c, w) in want.iter().enumerate() {
                        let g = got[i * d + head * dh + c];
                        assert!((g - w).abs() < 1e-5, "t {t} head {head} row {i} col {c}: {g} vs {w}");
                    }
                }
            }
        }
    }

    #[test]
    fn both_key_layouts_attend_as_the_definition_says() {
        // Heads of 64 take the AVX-512 kernels where the CPU has them; key counts around the
        // 32-key blocks and query counts around their 8- and 6-row tiles and past a block.
        let (h, dh) = (2, 64);
        let d = h * dh;
        for t in [1, 31, 33, 100] {
            let kv: Vec<f32> = (0..t * 2 * d).map(|i| ((i * 7919) % 29) as f32 / 13.0 - 1.0).collect();
            for n in [1, 5, 7, 9, 13, 50] {
                let q: Vec<f32> = (0..n * d).map(|i| ((i * 31) % 17) as f32 / 8.0 - 1.0).collect();
                for blocked in [false, true] {
                    #[cfg(target_arch = "x86_64")]
                    if blocked && !attention512::available() {
                        continue;
                    }
                    #[cfg(not(target_arch = "x86_64"))]
                    if blocked {
                        continue;
                    }
                    let att = AttentionKv::with_layout(&kv, 2 * d, t, h, dh, blocked);
                    let got = att.attend(&q, d, n);
                    for head in 0..h {
                        let scores = att.scores(&q, n, head);
                        for i in 0..n {
                            let want = attention_definition(&q, d, &kv, 2 * d, t, d, dh, i, head);
                            for (c, w) in want.iter().enumerate() {
                                let g = got[i * d + head * dh + c];
                                assert!(
                                    (g - w).abs() < 1e-5,
                                    "blocked {blocked} t {t} n {n} [{i},{head},{c}]: {g} vs {w}"
                                );
                            }
                            for j in 0..t {
                                let want = (0..dh).map(|c| q[i * d + head * dh + c] * kv[j * 2 * d + head * dh + c]);
                                let want = want.sum::<f32>() / (dh as f32).sqrt();
                                let g = scores[i * t + j];
                                assert!((g - want).abs() < 1e-5, "blocked {blocked} t {t} n {n} score [{i},{j}]");
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn bf16_attention_is_the_definition_on_rounded_factors() {
        // Scores are exact dot products of the bf16-rounded query (scaled) and key; outputs
        // are the bf16-rounded weights times the bf16-rounded values. Key counts around the
        // 32-key blocks (odd ones pad the last value pair), query counts around the tiles.
        if AttentionPrecision::Bf16.usable(64) != AttentionPrecision::Bf16 {
            return;
        }
        let bf = |x: f32| half::bf16::from_f32(x).to_f32() as f64;
        let (h, dh) = (2, 64);
        let d = h * dh;
        let scale = 1.0 / (dh as f32).sqrt();
        for t in [1, 31, 33, 100] {
            let kv: Vec<f32> = (0..t * 2 * d).map(|i| ((i * 7919) % 29) as f32 / 13.0 - 1.0).collect();
            let att = AttentionKv::new(&kv, 2 * d, t, h, dh, AttentionPrecision::Bf16);
            assert!(matches!(att.store, KvStore::Bf16 { .. }));
            for n in [1, 5, 7, 9, 13, 50] {
                let q: Vec<f32> = (0..n * d).map(|i| ((i * 31) % 17) as f32 / 8.0 - 1.0).collect();
                let got = att.attend(&q, d, n);
                for head in 0..h {
                    let scores = att.scores(&q, n, head);
                    for i in 0..n {
                        let want: Vec<f64> = (0..t)
                            .map(|j| {
                                (0..dh)
                                    .map(|c| bf(q[i * d + head * dh + c] * scale) * bf(kv[j * 2 * d + head * dh + c]))
                                    .sum()
                            })
                            .collect();
                        for (j, w) in want.iter().enumerate() {
                            let g = f64::from(scores[i * t + j]);
                            assert!((g - w).abs() < 1e-5 * w.abs().max(1.0), "t {t} n {n} score [{i},{j}]: {g} vs {w}");
                        }
                        let max = want.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                        let sum: f64 = want.iter().map(|w| (w - max).exp()).sum();
                        let p: Vec<f64> = want.iter().map(|w| bf((((w - max).exp()) / sum) as f32)).collect();
                        for c in 0..dh {
                            let w: f64 = (0..t).map(|j| p[j] * bf(kv[j * 2 * d + d + head * dh + c])).sum();
                            let g = f64::from(got[i * d + head * dh + c]);
                            assert!((g - w).abs() < 1e-3, "t {t} n {n} [{i},{head},{c}]: {g} vs {w}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn attention_kv_scores_are_scaled_dot_products() {
        let (t, h, dh, n) = (37, 3, 16, 5);
        let d = h * dh;
        let kv: Vec<f32> = (0..t * 2 * d).map(|i| ((i * 7919) % 29) as f32 / 13.0 - 1.0).collect();
        let q: Vec<f32> = (0..n * d).map(|i| ((i * 31) % 17) as f32 / 8.0 - 1.0).collect();
        let att = AttentionKv::new(&kv, 2 * d, t, h, dh, AttentionPrecision::F32);
        for head in 0..h {
            let got = att.scores(&q, n, head);
            assert_eq!(got.len(), n * t);
            for i in 0..n {
                for j in 0..t {
                    let want = (0..dh).map(|c| q[i * d + head * dh + c] * kv[j * 2 * d + head * dh + c]).sum::<f32>()
                        / (dh as f32).sqrt();
                    assert!((got[i * t + j] - want).abs() < 1e-5, "head {head} [{i},{j}]");
                }
            }
        }
    }

    #[test]
    fn cached_attention_matches_the_definition_on_both_paths() {
        // dh 64 takes the AVX2 path when the CPU has it, dh 24 the scalar one.
        for (n, h, dh) in [(1, 2, 64), (37, 3, 64), (9, 2, 24)] {
            let d = h * dh;
            let kv: Vec<f32> = (0..n * 2 * d).map(|i| ((i * 7919) % 29) as f32 / 13.0 - 1.0).collect();
            let q: Vec<f32> = (0..d).map(|i| ((i * 31) % 17) as f32 / 8.0 - 1.0).collect();
            let scale = 1.0 / (dh as f32).sqrt();
            let mut scores = Vec::new();
            for head in 0..h {
                let want = attention_definition(&q, d, &kv, 2 * d, n, d, dh, 0, head);
                let (keys, values) = (&kv[head * dh..], &kv[d + head * dh..]);
                let qh = &q[head * dh..(head + 1) * dh];
                let (mut fast, mut plain) = (vec![0.0; dh], vec![0.0; dh]);
                attend_cached(qh, keys, values, 2 * d, n, scale, &mut scores, &mut fast);
                attend_cached_scalar(qh, keys, values, 2 * d, n, scale, &mut scores, &mut plain);
                for ((f, p), w) in fast.iter().zip(&plain).zip(&want) {
                    assert!(
                        (f - w).abs() < 1e-5 && (p - w).abs() < 1e-5,
                        "n {n} dh {dh} head {head}: {f} / {p} vs {w}"
                    );
                }
            }
        }
    }

    #[test]
    fn vector_exp_is_within_a_few_ulp() {
        if !simd_available() {
            return;
        }
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::*;
            let mut worst = 0.0f64;
            let mut x = -87.0f32;
            while x < 87.8 {
                let xs: [f32; 8] = std::array::from_fn(|i| x + i as f32 * 0.0123);
                let mut got = [0.0f32; 8];
                // SAFETY: features detected above.
                unsafe { _mm256_storeu_ps(got.as_mut_ptr(), avx2::exp8(_mm256_loadu_ps(xs.as_ptr()))) };
                for (g, x) in got.iter().zip(xs) {
                    let want = (x as f64).exp();
                    worst = worst.max(((*g as f64) - want).abs() / want);
                }
                x += 0.0917;
            }
            // f32 ulp is 2^-23 ≈ 1.19e-7 relative at worst.
            assert!(worst < 3.0e-7, "worst relative error {worst}");
        }
    }

    #[test]
    fn log_sum_exp_matches_the_scalar_one() {
        for len in [0, 1, 7, 8, 9, 37, 51865] {
            let row: Vec<f32> = (0..len)
                .map(|i| if i % 5 == 1 { f32::NEG_INFINITY } else { ((i * 7919) % 97) as f32 / 7.0 - 6.0 })
                .collect();
            let (got, want) = (log_sum_exp(&row), log_sum_exp_scalar(&row));
            assert!(got == want || (got - want).abs() <= 4e-6 * want.abs().max(1.0), "len {len}: {got} vs {want}");
        }
        assert_eq!(log_sum_exp(&[f32::NEG_INFINITY; 9]), f32::NEG_INFINITY);
    }

    #[test]
    fn softmax_rows_are_the_row_softmax_bit_for_bit() {
        // Rows with tails of every kind past the 16- and 8-wide steps, one below -1000, one
        // with a masked score: the same bits as `softmax` row by row, so no text moves.
        for t in [1, 7, 8, 9, 15, 16, 17, 24, 25, 1500] {
            let rows = 3;
            let mut got: Vec<f32> = (0..rows * t).map(|i| ((i * 7919) % 97) as f32 / 7.0 - 6.0).collect();
            got[t..2 * t].iter_mut().for_each(|v| *v -= 1000.0);
            if t > 1 {
                got[2 * t] = f32::NEG_INFINITY;
            }
            let mut want = got.clone();
            want.chunks_exact_mut(t).for_each(softmax);
            softmax_rows(&mut got, rows, t);
            for (j, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g.to_bits(), w.to_bits(), "t {t} value {j}: {g} vs {w}");
            }
        }
    }

    #[test]
    fn softmax_matches_the_scalar_one() {
        for len in [1, 7, 8, 9, 37, 1500] {
            let row: Vec<f32> = (0..len).map(|i| ((i * 7919) % 97) as f32 / 7.0 - 6.0).collect();
            let (mut got, mut want) = (row.clone(), row.clone());
            softmax(&mut got);
            softmax_scalar(&mut want);
            for (g, w) in got.iter().zip(&want) {
                // (sums of 1500 terms in another order: a few ulp apart)
                assert!((g - w).abs() <= 4e-6 * w.max(1e-3), "len {len}: {g} vs {w}");
            }
        }
        // A row far below zero and one with a -inf entry (a masked score).
        let mut row = vec![-1000.0f32, -1001.0, f32::NEG_INFINITY, -999.0, -1000.5, -1002.0, -998.0, -1000.0, -1003.0];
        let mut want = row.clone();
        softmax(&mut row);
        softmax_scalar(&mut want);
        for (g, w) in row.iter().zip(&want) {
            assert!((g - w).abs() < 1e-6, "{g} vs {w}");
        }
    }

    #[test]
    fn dense_matches_a_plain_matmul() {
        // Row counts across thread splits, an odd width, a tiny and a deep product.
        for (m, n, k) in [(1, 16, 8), (7, 30, 300), (53, 48, 600), (100, 16, 33)] {
            let w: Vec<f32> = (0..n * k).map(|i| ((i * 7919) % 101) as f32 / 50.0 - 1.0).collect();
            let b: Vec<f32> = (0..n).map(|i| i as f32 * 0.01).collect();
            let x: Vec<f32> = (0..m * k).map(|i| ((i * 31) % 17) as f32 / 8.0 - 1.0).collect();
            let want = plain_matmul(&w, Some(&b), &x, m, n, k);
            let dense = Dense::new(w, n, k, Some(b));
            for (g, e) in dense.forward(&x, m, false).iter().zip(&want) {
                assert!((g - e).abs() < 1e-3 * e.abs().max(1.0), "({m},{n},{k}): {g} vs {e}");
            }
            let mut gelu_want = want.clone();
            gelu(&mut gelu_want);
            for (g, e) in dense.forward(&x, m, true).iter().zip(&gelu_want) {
                assert!((g - e).abs() < 1e-3 * e.abs().max(1.0), "gelu ({m},{n},{k}): {g} vs {e}");
            }
        }
    }
}
