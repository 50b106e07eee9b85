//! Hand-written CPU kernels for the shapes where burn's general-purpose ops are slow.
//!
//! Whisper's decoder runs one token per beam per step: its linear layers and the 51865-token
//! logits projection are matrix × few-vectors products whose cost is reading the weights.
//! [`Matrix`] keeps them as the model file stores them (float16, `[out, in]` row-major, half
//! the bytes of f32; widening f16 to f32 is exact, so results equal an f32 matmul up to
//! summation order) and multiplies with AVX2/FMA/F16C when the CPU has them (detected at
//! run time, so the binary still runs on any x86-64), on rayon's pool. The encoder's
//! self-attention ([`window_attention`]) and [`gelu`] replace burn-flex ops that are slow for
//! these shapes (flash attention; a scalar, single-threaded libm erf).

use half::f16;
use rayon::prelude::*;

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

    /// Row `r` of `W` as f32 (an embedding lookup when `W` is the token embedding).
    pub fn row(&self, r: usize) -> Vec<f32> {
        let range = r * self.inp..(r + 1) * self.inp;
        match &self.w {
            Weights::F16(w) => w[range].iter().map(|v| v.to_f32()).collect(),
            Weights::F32(w) => w[range].to_vec(),
        }
    }

    /// `x` holds `m` rows of `inp` values; returns `m` rows of `out` values.
    pub fn forward(&self, x: &[f32], m: usize) -> Vec<f32> {
        let (n, k) = (self.out, self.inp);
        assert_eq!(x.len(), m * k, "input size");
        // Computed transposed, `[out, m]`, so each task writes one contiguous piece.
        let mut yt = vec![0.0f32; n * m];
        let rows = rows_per_task(n, k, m);
        yt.par_chunks_mut(rows * m).enumerate().for_each(|(i, out)| {
            let r0 = i * rows;
            let r1 = r0 + out.len() / m;
            match &self.w {
                Weights::F16(w) => dot_rows(&w[r0 * k..r1 * k], x, m, k, out, (m, 1)),
                Weights::F32(w) => dot_rows(&w[r0 * k..r1 * k], x, m, k, out, (m, 1)),
            }
        });
        let mut y = vec![0.0f32; m * n];
        for (r, col) in yt.chunks_exact(m).enumerate() {
            let b = self.bias.as_ref().map_or(0.0, |b| b[r]);
            for (i, v) in col.iter().enumerate() {
                y[i * n + r] = v + b;
            }
        }
        y
    }
}

/// Output columns per packed panel of [`Packed`] (two AVX2 registers).
const PANEL: usize = 16;
/// Rows of `x` per rayon task of [`Packed::forward`].
const GEMM_ROWS: usize = 48;
/// Depth (input features) per pass of [`Packed::forward`]: a panel's slice (`GEMM_DEPTH` × 16
/// f32, 16 KiB) stays in L1, the task's rows of `x` for it in L2.
const GEMM_DEPTH: usize = 256;

/// A linear layer `y = x·Wᵀ + b` for many rows (the encoder's 1500 frames): `W` (`[out, in]`)
/// packed at load time into panels of 16 output columns, `[out/16][in][16]` f32 (widening
/// f16 is exact, so results equal an f32 matmul up to summation order), multiplied with a
/// blocked 6×16 register-tile GEMM on rayon's pool.
pub struct Packed {
    panels: Vec<f32>,
    bias: Vec<f32>,
    /// Output features.
    pub out: usize,
    /// Input features.
    pub inp: usize,
}

impl Packed {
    /// From a row-major `[out, in]` weight and its bias (zero when absent).
    pub fn new(w: &[f32], out: usize, inp: usize, bias: Option<Vec<f32>>) -> Packed {
        assert_eq!(w.len(), out * inp, "weight size");
        let np = out.div_ceil(PANEL);
        let mut panels = vec![0.0f32; np * inp * PANEL];
        for r in 0..out {
            let (p, j) = (r / PANEL, r % PANEL);
            for c in 0..inp {
                panels[(p * inp + c) * PANEL + j] = w[r * inp + c];
            }
        }
        let bias = bias.unwrap_or_else(|| vec![0.0; out]);
        assert_eq!(bias.len(), out, "bias size");
        Packed { panels, bias, out, inp }
    }

    /// `x` holds `m` rows of `inp` values; returns `m` rows of `out` values, through
    /// [`gelu`] when `with_gelu`.
    pub fn forward(&self, x: &[f32], m: usize, with_gelu: bool) -> Vec<f32> {
        let (n, k) = (self.out, self.inp);
        assert_eq!(x.len(), m * k, "input size");
        let mut y = vec![0.0f32; m * n];
        y.par_chunks_mut(GEMM_ROWS * n).enumerate().for_each(|(b, out)| {
            let rows = out.len() / n;
            let xs = &x[b * GEMM_ROWS * k..(b * GEMM_ROWS + rows) * k];
            #[cfg(target_arch = "x86_64")]
            if simd_available() && n % PANEL == 0 {
                // SAFETY: features detected; `xs` is `rows × k`, `out` is `rows × n`, the
                // panels hold `n/16 × k × 16` values.
                unsafe { avx2::gemm(xs, &self.panels, &self.bias, rows, k, n, out) };
                if with_gelu {
                    gelu_serial(out);
                }
                return;
            }
            self.forward_scalar(xs, rows, out);
            if with_gelu {
                gelu_serial(out);
            }
        });
        y
    }

    /// The plain loop over the packed weights (no SIMD, or `out` not a multiple of 16).
    fn forward_scalar(&self, x: &[f32], m: usize, out: &mut [f32]) {
        let (n, k) = (self.out, self.inp);
        for i in 0..m {
            for r in 0..n {
                let (p, j) = (r / PANEL, r % PANEL);
                let dot: f32 = (0..k).map(|c| self.panels[(p * k + c) * PANEL + j] * x[i * k + c]).sum();
                out[i * n + r] = dot + self.bias[r];
            }
        }
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
        unsafe { _mm256_cvtph_ps(_mm_loadu_si128(p as *const __m128i)) }
    }
}

impl Weight for f32 {
    fn to_f32(self) -> f32 {
        self
    }
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn load8(p: *const Self) -> std::arch::x86_64::__m256 {
        unsafe { std::arch::x86_64::_mm256_loadu_ps(p) }
    }
}

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
    for (r, wr) in w.chunks_exact(k).enumerate() {
        for (i, xr) in x.chunks_exact(k).take(m).enumerate() {
            out[r * stride.0 + i * stride.1] = wr.iter().zip(xr).map(|(a, b)| a.to_f32() * b).sum();
        }
    }
}

/// `out = a · b` for `a` `[m, k]` and `b` `[k, n]`, both row-major; `out` is `[m, n]`. One
/// thread. For short `k` (attention scores over 64-wide heads), where the dot-product form
/// spends its time on horizontal sums.
pub fn matmul(a: &[f32], b: &[f32], m: usize, k: usize, n: usize, out: &mut [f32]) {
    assert!(a.len() >= m * k && b.len() >= k * n && out.len() >= m * n);
    #[cfg(target_arch = "x86_64")]
    if simd_available() {
        // SAFETY: features detected; the assertion bounds every access.
        unsafe { avx2::matmul(a, b, m, k, n, out) };
        return;
    }
    for i in 0..m {
        let row = &mut out[i * n..(i + 1) * n];
        row.fill(0.0);
        for c in 0..k {
            let x = a[i * k + c];
            for (o, &y) in row.iter_mut().zip(&b[c * n..(c + 1) * n]) {
                *o += x * y;
            }
        }
    }
}

/// `out = x · Wᵀ` for f32 `w` `[n, k]` and `x` `[m, k]`; `out` is `[m, n]`. One thread.
pub fn matmul_transposed(x: &[f32], w: &[f32], m: usize, k: usize, out: &mut [f32]) {
    let n = w.len() / k;
    dot_rows(w, x, m, k, out, (1, n));
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::Weight;

    /// Input rows handled per pass over the weights (accumulators live in registers).
    const BLOCK: usize = 6;

    #[target_feature(enable = "avx2,fma,f16c")]
    pub unsafe fn dot_rows<W: Weight>(w: &[W], x: &[f32], m: usize, k: usize, out: &mut [f32], stride: (usize, usize)) {
        let mut i0 = 0;
        while i0 < m {
            let mb = (m - i0).min(BLOCK);
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

    /// Input rows `i0..i0 + B` against every weight row.
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn block<W: Weight, const B: usize>(w: &[W], x: &[f32], i0: usize, k: usize, out: &mut [f32], stride: (usize, usize)) {
        let xp = unsafe { x.as_ptr().add(i0 * k) };
        for (r, wr) in w.chunks_exact(k).enumerate() {
            let mut acc = [_mm256_setzero_ps(); B];
            let wp = wr.as_ptr();
            let mut c = 0;
            while c + 8 <= k {
                unsafe {
                    let wv = W::load8(wp.add(c));
                    for (i, a) in acc.iter_mut().enumerate() {
                        *a = _mm256_fmadd_ps(_mm256_loadu_ps(xp.add(i * k + c)), wv, *a);
                    }
                }
                c += 8;
            }
            for (i, a) in acc.iter().enumerate() {
                let xr = &x[(i0 + i) * k..(i0 + i + 1) * k];
                let tail: f32 = (c..k).map(|j| wr[j].to_f32() * xr[j]).sum();
                out[r * stride.0 + (i0 + i) * stride.1] = hsum(*a) + tail;
            }
        }
    }

    /// Rows of `a` per register tile of [`matmul`] (6 rows × 16 columns = 12 accumulators).
    const TILE_ROWS: usize = 6;

    /// Column panels (16 wide) outermost, so one panel of `b` (`k` × 16) stays in L1 while
    /// every row tile of `a` passes over it.
    #[target_feature(enable = "avx2,fma,f16c")]
    pub unsafe fn matmul(a: &[f32], b: &[f32], m: usize, k: usize, n: usize, out: &mut [f32]) {
        let mut j = 0;
        while j + 16 <= n {
            let mut i0 = 0;
            while i0 < m {
                let rows = (m - i0).min(TILE_ROWS);
                unsafe {
                    match rows {
                        1 => tile::<1>(a, b, i0, j, k, n, out),
                        2 => tile::<2>(a, b, i0, j, k, n, out),
                        3 => tile::<3>(a, b, i0, j, k, n, out),
                        4 => tile::<4>(a, b, i0, j, k, n, out),
                        5 => tile::<5>(a, b, i0, j, k, n, out),
                        _ => tile::<6>(a, b, i0, j, k, n, out),
                    }
                }
                i0 += rows;
            }
            j += 16;
        }
        for i in 0..m {
            for jj in j..n {
                out[i * n + jj] = (0..k).map(|c| a[i * k + c] * b[c * n + jj]).sum();
            }
        }
    }

    /// Rows `i0..i0 + R`, columns `j..j + 16` of `a · b`, with broadcast `a` values.
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn tile<const R: usize>(a: &[f32], b: &[f32], i0: usize, j: usize, k: usize, n: usize, out: &mut [f32]) {
        let (ap, bp) = (a.as_ptr(), b.as_ptr());
        let mut acc = [[_mm256_setzero_ps(); 2]; R];
        for c in 0..k {
            unsafe {
                let b0 = _mm256_loadu_ps(bp.add(c * n + j));
                let b1 = _mm256_loadu_ps(bp.add(c * n + j + 8));
                for (r, acc) in acc.iter_mut().enumerate() {
                    let x = _mm256_set1_ps(*ap.add((i0 + r) * k + c));
                    acc[0] = _mm256_fmadd_ps(x, b0, acc[0]);
                    acc[1] = _mm256_fmadd_ps(x, b1, acc[1]);
                }
            }
        }
        for (r, acc) in acc.iter().enumerate() {
            let o = &mut out[(i0 + r) * n + j..(i0 + r) * n + j + 16];
            unsafe {
                _mm256_storeu_ps(o.as_mut_ptr(), acc[0]);
                _mm256_storeu_ps(o.as_mut_ptr().add(8), acc[1]);
            }
        }
    }

    /// `out = x · W + bias` for `m` rows of `x` (`[m, k]`) and `W` packed in 16-column panels
    /// (see [`super::Packed`]); `n` is a multiple of 16. Depth blocks outermost (the partial
    /// sums are reloaded from `out`), then panels, then 6-row tiles.
    #[target_feature(enable = "avx2,fma,f16c")]
    pub unsafe fn gemm(x: &[f32], panels: &[f32], bias: &[f32], m: usize, k: usize, n: usize, out: &mut [f32]) {
        assert!(x.len() >= m * k && out.len() >= m * n && panels.len() >= n * k && bias.len() >= n && n % 16 == 0);
        let mut k0 = 0;
        while k0 < k {
            let kc = (k - k0).min(super::GEMM_DEPTH);
            for p in 0..n / 16 {
                let w = unsafe { panels.as_ptr().add((p * k + k0) * 16) };
                let mut i0 = 0;
                while i0 < m {
                    let rows = (m - i0).min(6);
                    let first = k0 == 0;
                    unsafe {
                        let xp = x.as_ptr().add(i0 * k + k0);
                        let op = out.as_mut_ptr().add(i0 * n + p * 16);
                        let bp = bias.as_ptr().add(p * 16);
                        match rows {
                            1 => gemm_tile::<1>(xp, w, bp, op, kc, k, n, first),
                            2 => gemm_tile::<2>(xp, w, bp, op, kc, k, n, first),
                            3 => gemm_tile::<3>(xp, w, bp, op, kc, k, n, first),
                            4 => gemm_tile::<4>(xp, w, bp, op, kc, k, n, first),
                            5 => gemm_tile::<5>(xp, w, bp, op, kc, k, n, first),
                            _ => gemm_tile::<6>(xp, w, bp, op, kc, k, n, first),
                        }
                    }
                    i0 += rows;
                }
            }
            k0 += kc;
        }
    }

    /// `R` rows × 16 columns over `kc` depth: starts from the bias when `first`, else from `out`.
    #[target_feature(enable = "avx2,fma,f16c")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn gemm_tile<const R: usize>(x: *const f32, w: *const f32, bias: *const f32, out: *mut f32, kc: usize, k: usize, n: usize, first: bool) {
        unsafe {
            let mut acc = [[_mm256_setzero_ps(); 2]; R];
            for (r, a) in acc.iter_mut().enumerate() {
                let src = if first { bias } else { out.add(r * n) as *const f32 };
                a[0] = _mm256_loadu_ps(src);
                a[1] = _mm256_loadu_ps(src.add(8));
            }
            for c in 0..kc {
                let w0 = _mm256_loadu_ps(w.add(c * 16));
                let w1 = _mm256_loadu_ps(w.add(c * 16 + 8));
                for (r, a) in acc.iter_mut().enumerate() {
                    let xv = _mm256_set1_ps(*x.add(r * k + c));
                    a[0] = _mm256_fmadd_ps(xv, w0, a[0]);
                    a[1] = _mm256_fmadd_ps(xv, w1, a[1]);
                }
            }
            for (r, a) in acc.iter().enumerate() {
                _mm256_storeu_ps(out.add(r * n), a[0]);
                _mm256_storeu_ps(out.add(r * n + 8), a[1]);
            }
        }
    }

    /// `exp` of eight lanes: Cephes `expf` (range reduction `x = n·ln2 + r`, |r| ≤ ln2/2,
    /// degree-7 polynomial, scaled by 2ⁿ through the exponent bits); within 2 ulp of the
    /// true value for x in [−87.3, 88]. Inputs are clamped to that range (below it the
    /// result is ~1e−38 instead of a denormal or 0, which no softmax sum can notice).
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    pub fn exp8(x: __m256) -> __m256 {
        let x = _mm256_min_ps(x, _mm256_set1_ps(88.0));
        let x = _mm256_max_ps(x, _mm256_set1_ps(-87.336_55));
        let n = _mm256_round_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(_mm256_mul_ps(x, _mm256_set1_ps(std::f32::consts::LOG2_E)));
        let r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693_359_4), x);
        let r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.121_944_4e-4), r);
        let mut y = _mm256_set1_ps(1.987_569_1e-4);
        y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.398_199_9e-3));
        y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(8.333_452e-3));
        y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(4.166_579_6e-2));
        y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.666_666_5e-1));
        y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(5.000_000_1e-1));
        y = _mm256_fmadd_ps(y, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0)));
        let e = _mm256_slli_epi32::<23>(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)));
        _mm256_mul_ps(y, _mm256_castsi256_ps(e))
    }

    /// [`super::softmax`] with [`exp8`]: max, exp and sum, scale; the tail (< 8 values)
    /// goes through a padded register.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn softmax(row: &mut [f32]) {
        let len = row.len();
        let full = len / 8 * 8;
        let p = row.as_mut_ptr();
        let mut mv = _mm256_set1_ps(f32::NEG_INFINITY);
        for i in (0..full).step_by(8) {
            mv = _mm256_max_ps(mv, unsafe { _mm256_loadu_ps(p.add(i)) });
        }
        let mut lanes = [0.0f32; 8];
        unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), mv) };
        let max = lanes.iter().chain(&row[full..]).copied().fold(f32::NEG_INFINITY, f32::max);
        let mx = _mm256_set1_ps(max);
        let mut sv = _mm256_setzero_ps();
        for i in (0..full).step_by(8) {
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
            unsafe { _mm256_storeu_ps(tail.as_mut_ptr(), exp8(_mm256_sub_ps(_mm256_loadu_ps(tail.as_ptr()), mx))) };
            row[full..].copy_from_slice(&tail[..len - full]);
            sum += tail[..len - full].iter().sum::<f32>();
        }
        let inv = _mm256_set1_ps(1.0 / sum);
        for i in (0..full).step_by(8) {
            unsafe { _mm256_storeu_ps(p.add(i), _mm256_mul_ps(_mm256_loadu_ps(p.add(i)), inv)) };
        }
        let inv = 1.0 / sum;
        row[full..].iter_mut().for_each(|v| *v *= inv);
    }

    #[inline(always)]
    fn hsum(v: __m256) -> f32 {
        unsafe {
            let s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
            let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
            let s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
            _mm_cvtss_f32(s)
        }
    }
}

/// Exact-form GELU, `x·(1 + erf(x/√2))/2`, in place and in parallel.
pub fn gelu(x: &mut [f32]) {
    x.par_chunks_mut(16 * 1024).for_each(gelu_serial);
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

/// Softmax of one row, in place: vectorised (AVX2 `exp`, see [`avx2::exp8`]) when the CPU
/// allows, else [`softmax_scalar`].
pub fn softmax(row: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if simd_available() {
        // SAFETY: features detected.
        unsafe { avx2::softmax(row) };
        return;
    }
    softmax_scalar(row)
}

/// `a · b` with eight independent partial sums (so it vectorises on any x86-64).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in ca.zip(cb) {
        for l in 0..8 {
            acc[l] += x[l] * y[l];
        }
    }
    acc.iter().sum::<f32>() + tail
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

/// Query rows per attention task: their score rows (× 1500 frames) stay in L2.
const QUERY_BLOCK: usize = 32;

/// Non-causal multi-head self-attention over one window, as the encoder needs it.
/// `qkv` is `[t, 3·h·dh]` (the fused q, k, v projections, heads side by side); returns
/// `[t, h·dh]`, heads merged. Each (head, block of queries) is one rayon task whose score
/// rows never leave the cache (burn-flex's flash attention, or materialising all
/// `h·t·t` scores, is several times slower at t = 1500).
pub fn window_attention(qkv: &[f32], t: usize, h: usize, dh: usize) -> Vec<f32> {
    let d = h * dh;
    assert_eq!(qkv.len(), t * 3 * d, "qkv size");
    let scale = 1.0 / (dh as f32).sqrt();
    let mut per_head = vec![0.0f32; h * t * dh]; // [h, t, dh]
    per_head.par_chunks_mut(t * dh).enumerate().for_each(|(head, out)| {
        let (mut q, mut kt, mut v) = (vec![0.0f32; t * dh], vec![0.0f32; dh * t], vec![0.0f32; t * dh]);
        for i in 0..t {
            let row = &qkv[i * 3 * d..(i + 1) * 3 * d];
            for c in 0..dh {
                q[i * dh + c] = row[head * dh + c] * scale;
                kt[c * t + i] = row[d + head * dh + c];
            }
            v[i * dh..(i + 1) * dh].copy_from_slice(&row[2 * d + head * dh..2 * d + (head + 1) * dh]);
        }
        out.par_chunks_mut(QUERY_BLOCK * dh).enumerate().for_each(|(b, o)| {
            let rows = o.len() / dh;
            let i0 = b * QUERY_BLOCK;
            let mut scores = vec![0.0f32; rows * t];
            matmul(&q[i0 * dh..(i0 + rows) * dh], &kt, rows, dh, t, &mut scores);
            scores.chunks_exact_mut(t).for_each(softmax);
            matmul(&scores, &v, rows, t, dh, o);
        });
    });
    let mut merged = vec![0.0f32; t * d];
    for head in 0..h {
        for i in 0..t {
            merged[i * d + head * dh..i * d + (head + 1) * dh].copy_from_slice(&per_head[(head * t + i) * dh..(head * t + i + 1) * dh]);
        }
    }
    merged
}

/// One window's cross-attention keys and values, both transposed: `[h, dh, t]`.
pub struct CrossKv {
    pub kt: Vec<f32>,
    pub vt: Vec<f32>,
    pub t: usize,
    pub h: usize,
    pub dh: usize,
}

impl CrossKv {
    /// From the fused key/value projection of the encoder output, `[t, 2·h·dh]`.
    pub fn new(kv: &[f32], t: usize, h: usize, dh: usize) -> CrossKv {
        let d = h * dh;
        assert_eq!(kv.len(), t * 2 * d, "kv size");
        let (mut kt, mut vt) = (vec![0.0f32; h * dh * t], vec![0.0f32; h * dh * t]);
        for i in 0..t {
            let row = &kv[i * 2 * d..(i + 1) * 2 * d];
            for c in 0..d {
                kt[c * t + i] = row[c]; // head h, column c' is row h·dh + c' of [h, dh, t]
                vt[c * t + i] = row[d + c];
            }
        }
        CrossKv { kt, vt, t, h, dh }
    }

    /// Scaled scores `q·kᵀ/√dh` of `n` query rows (`[n, h·dh]`) against head `head`: `[n, t]`.
    pub fn scores(&self, q: &[f32], n: usize, head: usize) -> Vec<f32> {
        let (t, dh, d) = (self.t, self.dh, self.h * self.dh);
        let scale = 1.0 / (dh as f32).sqrt();
        let qh: Vec<f32> = (0..n).flat_map(|i| q[i * d + head * dh..i * d + (head + 1) * dh].iter().map(|x| x * scale)).collect();
        let mut out = vec![0.0f32; n * t];
        matmul(&qh, &self.kt[head * dh * t..(head + 1) * dh * t], n, dh, t, &mut out);
        out
    }

    /// Attention of `n` query rows `[n, h·dh]` over the window: `[n, h·dh]`, heads in parallel.
    pub fn attend(&self, q: &[f32], n: usize) -> Vec<f32> {
        let (t, dh, d) = (self.t, self.dh, self.h * self.dh);
        let per_head: Vec<Vec<f32>> = (0..self.h)
            .into_par_iter()
            .map(|head| {
                let mut p = self.scores(q, n, head);
                p.chunks_exact_mut(t).for_each(softmax);
                let mut out = vec![0.0f32; n * dh];
                matmul_transposed(&p, &self.vt[head * dh * t..(head + 1) * dh * t], n, t, &mut out);
                out
            })
            .collect();
        let mut merged = vec![0.0f32; n * d];
        for (head, out) in per_head.iter().enumerate() {
            for i in 0..n {
                merged[i * d + head * dh..i * d + (head + 1) * dh].copy_from_slice(&out[i * dh..(i + 1) * dh]);
            }
        }
        merged
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(w: &[f32], b: &[f32], x: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
        let mut y = vec![0.0; m * n];
        for i in 0..m {
            for r in 0..n {
                y[i * n + r] = b[r] + (0..k).map(|c| w[r * k + c] * x[i * k + c]).sum::<f32>();
            }
        }
        y
    }

    #[test]
    fn matrix_matches_a_plain_matmul_for_every_row_count() {
        let (n, k) = (37, 64);
        let w: Vec<f32> = (0..n * k).map(|i| f16::from_f32(((i * 7919) % 101) as f32 / 50.0 - 1.0).to_f32()).collect();
        let b: Vec<f32> = (0..n).map(|i| i as f32 * 0.01).collect();
        let w16: Vec<f16> = w.iter().map(|&v| f16::from_f32(v)).collect();
        for m in [1, 2, 5, 6, 7, 13] {
            let x: Vec<f32> = (0..m * k).map(|i| ((i * 31) % 17) as f32 / 8.0 - 1.0).collect();
            let want = reference(&w, &b, &x, m, n, k);
            for got in [
                Matrix::f16(w16.clone(), n, k, Some(b.clone())).forward(&x, m),
                Matrix::f32(w.clone(), n, k, Some(b.clone())).forward(&x, m),
            ] {
                for (g, e) in got.iter().zip(&want) {
                    assert!((g - e).abs() < 1e-4, "m={m}: {g} vs {e}");
                }
            }
        }
    }

    #[test]
    fn matmul_matches_the_definition() {
        for (m, k, n) in [(1, 3, 5), (4, 64, 37), (7, 8, 16), (5, 2, 100)] {
            let a: Vec<f32> = (0..m * k).map(|i| ((i * 13) % 7) as f32 - 3.0).collect();
            let b: Vec<f32> = (0..k * n).map(|i| ((i * 5) % 11) as f32 / 4.0).collect();
            let mut out = vec![0.0; m * n];
            matmul(&a, &b, m, k, n, &mut out);
            for i in 0..m {
                for j in 0..n {
                    let want: f32 = (0..k).map(|c| a[i * k + c] * b[c * n + j]).sum();
                    assert!((out[i * n + j] - want).abs() < 1e-4, "({m},{k},{n}) [{i},{j}]");
                }
            }
        }
    }

    #[test]
    fn erf_is_accurate() {
        // erf values from Python's math.erf.
        for (x, e) in [(0.0f32, 0.0f32), (0.5, 0.520_499_9), (1.0, 0.842_700_8), (-2.0, -0.995_322_3), (3.5, 0.999_999_26), (9.0, 1.0)] {
            assert!((erf(x) - e).abs() < 1e-6, "erf({x}) = {} not {e}", erf(x));
        }
    }

    #[test]
    fn cross_attention_matches_window_attention() {
        // Attending with the window's own queries must equal the self-attention kernel.
        let (t, h, dh) = (37, 3, 8);
        let d = h * dh;
        let qkv: Vec<f32> = (0..t * 3 * d).map(|i| ((i * 7919) % 29) as f32 / 13.0 - 1.0).collect();
        let q: Vec<f32> = (0..t).flat_map(|i| qkv[i * 3 * d..i * 3 * d + d].to_vec()).collect();
        let kv: Vec<f32> = (0..t).flat_map(|i| qkv[i * 3 * d + d..(i + 1) * 3 * d].to_vec()).collect();
        let got = CrossKv::new(&kv, t, h, dh).attend(&q, t);
        for (g, e) in got.iter().zip(window_attention(&qkv, t, h, dh)) {
            assert!((g - e).abs() < 1e-5, "{g} vs {e}");
        }
    }

    #[test]
    fn window_attention_matches_the_definition() {
        let (t, h, dh) = (45, 2, 8);
        let d = h * dh;
        let qkv: Vec<f32> = (0..t * 3 * d).map(|i| ((i * 7919) % 23) as f32 / 11.0 - 1.0).collect();
        let got = window_attention(&qkv, t, h, dh);
        let at = |i: usize, part: usize, head: usize, c: usize| qkv[i * 3 * d + part * d + head * dh + c];
        for head in 0..h {
            for i in 0..t {
                let mut s: Vec<f32> = (0..t).map(|j| (0..dh).map(|c| at(i, 0, head, c) * at(j, 1, head, c)).sum::<f32>() / (dh as f32).sqrt()).collect();
                softmax_scalar(&mut s);
                for c in 0..dh {
                    let want: f32 = (0..t).map(|j| s[j] * at(j, 2, head, c)).sum();
                    let g = got[i * d + head * dh + c];
                    assert!((g - want).abs() < 1e-5, "head {head} row {i} col {c}: {g} vs {want}");
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
    fn matmul_handles_tall_blocks_and_column_tails() {
        for (m, k, n) in [(32, 64, 1500), (13, 1500, 64), (6, 5, 33)] {
            let a: Vec<f32> = (0..m * k).map(|i| ((i * 13) % 7) as f32 / 7.0 - 0.4).collect();
            let b: Vec<f32> = (0..k * n).map(|i| ((i * 5) % 11) as f32 / 11.0 - 0.5).collect();
            let mut out = vec![0.0; m * n];
            matmul(&a, &b, m, k, n, &mut out);
            for i in 0..m {
                for j in 0..n {
                    let want: f32 = (0..k).map(|c| a[i * k + c] * b[c * n + j]).sum();
                    assert!((out[i * n + j] - want).abs() < 1e-3, "({m},{k},{n}) [{i},{j}]");
                }
            }
        }
    }

    #[test]
    fn packed_matches_a_plain_matmul() {
        // k above GEMM_DEPTH (several depth passes), m across task and tile boundaries.
        for (m, n, k) in [(1, 16, 8), (7, 32, 300), (53, 48, 600), (100, 20, 33)] {
            let w: Vec<f32> = (0..n * k).map(|i| ((i * 7919) % 101) as f32 / 50.0 - 1.0).collect();
            let b: Vec<f32> = (0..n).map(|i| i as f32 * 0.01).collect();
            let x: Vec<f32> = (0..m * k).map(|i| ((i * 31) % 17) as f32 / 8.0 - 1.0).collect();
            let want = reference(&w, &b, &x, m, n, k);
            let packed = Packed::new(&w, n, k, Some(b.clone()));
            let got = packed.forward(&x, m, false);
            let mut scalar = vec![0.0; m * n];
            packed.forward_scalar(&x, m, &mut scalar);
            for (g, e) in got.iter().chain(&scalar).zip(want.iter().chain(&want)) {
                assert!((g - e).abs() < 1e-3 * e.abs().max(1.0), "({m},{n},{k}): {g} vs {e}");
            }
            let mut gelu_want = want.clone();
            gelu(&mut gelu_want);
            for (g, e) in packed.forward(&x, m, true).iter().zip(&gelu_want) {
                assert!((g - e).abs() < 1e-3 * e.abs().max(1.0), "gelu ({m},{n},{k}): {g} vs {e}");
            }
        }
    }
}
