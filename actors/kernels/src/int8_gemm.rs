//! The encoder's linear layers in int8, as CTranslate2 runs them under `int8`: weights
//! quantized per output row, each input row quantized on the fly with its own scale, the
//! products summed in 32-bit integers and scaled back to f32 once per output.
//!
//! The encoder's products are 1500 rows per 30 s window, compute-bound: the f32 GEMM of the
//! `gemm` crate does 16 multiply-adds per AVX-512 instruction, `vpdpbusd` (AVX-512 VNNI) does
//! 64 of u8 × i8. The input is shifted by +128 to u8 (VNNI's unsigned operand) and the shift
//! is taken back with one precomputed sum per weight row, the way oneDNN and CTranslate2 do.
//! [`Int8Gemm::available`] says whether this CPU has the instructions; without them the model
//! keeps the encoder in f32. [`Int8Gemm::forward_scalar`] computes the same integers with
//! plain loops: the tests hold the two equal (integer sums are exact, and both scale back
//! with the same float operations in the same order).

use rayon::prelude::*;

use crate::{int8_scale, quantize_row, quantize_rows};

/// Output columns one AVX-512 register holds (16 × i32).
const LANES: usize = 16;
/// Registers of output columns per strip: a tile is [`MR`] rows × `STRIP_VECS · 16` columns,
/// 24 accumulators plus three weight registers and one broadcast input.
const STRIP_VECS: usize = 3;
/// Input rows per register tile.
const MR: usize = 8;
/// Input rows per rayon task (a multiple of [`MR`]): their quantized copy stays in L2
/// while each weight strip streams past them.
const ROWS_PER_TASK: usize = 64;

/// A linear layer `y = x·Wᵀ + b`, `W` int8 `[out, in]` with one scale per row, packed for
/// the VNNI kernel: strips of up to 48 output columns, each `[in/4][columns][4]` bytes, so
/// one step of the kernel reads 4 inputs of every column of the strip as whole registers.
pub struct Int8Gemm {
    packed: Vec<i8>,
    /// `(first column, columns, offset in packed)` of each strip; the last may be narrower.
    strips: Vec<(usize, usize, usize)>,
    /// Per output: `max|w| / 127` (the row's int8 step); this and the next two are padded
    /// with zeros to whole registers.
    w_scale: Vec<f32>,
    /// Per output: `128 · Σ q`, the shift of the input to u8 taken back.
    shift: Vec<i32>,
    bias: Vec<f32>,
    /// Input features, padded to a multiple of 4 in `packed`.
    k: usize,
    k4: usize,
    /// Output features.
    pub out: usize,
}

impl Int8Gemm {
    /// Whether this CPU runs the VNNI kernel (checked once).
    pub fn available() -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            use std::sync::OnceLock;
            static OK: OnceLock<bool> = OnceLock::new();
            *OK.get_or_init(|| {
                std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512bw")
                    && std::arch::is_x86_feature_detected!("avx512vnni")
            })
        }
        #[cfg(not(target_arch = "x86_64"))]
        false
    }

    /// Quantizes f32 weights `[out, in]` per row, as CTranslate2 does at load time.
    pub fn quantize(w: &[f32], out: usize, inp: usize, bias: Option<Vec<f32>>) -> Int8Gemm {
        assert_eq!(w.len(), out * inp, "weight size");
        let (q, row_scale) = quantize_rows(w, inp);
        Int8Gemm::new(&q, row_scale, out, inp, bias)
    }

    /// From int8 weights `[out, in]` and each row's dequantization factor (row `r` is
    /// `q[r] · row_scale[r]`), as a CTranslate2 int8 file stores them.
    pub fn new(q: &[i8], row_scale: Vec<f32>, out: usize, inp: usize, bias: Option<Vec<f32>>) -> Int8Gemm {
        assert_eq!(q.len(), out * inp, "weight size");
        assert_eq!(row_scale.len(), out, "one scale per row");
        let bias = bias.unwrap_or_else(|| vec![0.0; out]);
        assert_eq!(bias.len(), out, "bias size");
        let k4 = inp.div_ceil(4);
        let mut packed = Vec::with_capacity(out.div_ceil(LANES) * LANES * k4 * 4);
        let mut strips = Vec::new();
        for n0 in (0..out).step_by(STRIP_VECS * LANES) {
            let cols = (out - n0).min(STRIP_VECS * LANES);
            let width = cols.div_ceil(LANES) * LANES;
            strips.push((n0, cols, packed.len()));
            for kk in 0..k4 {
                for c in 0..width {
                    for j in 0..4 {
                        let (n, k) = (n0 + c, 4 * kk + j);
                        packed.push(if c < cols && k < inp { q[n * inp + k] } else { 0 });
                    }
                }
            }
        }
        // Padded to whole registers for the kernel's epilogue.
        let padded = out.div_ceil(LANES) * LANES;
        let mut shift: Vec<i32> =
            q.chunks(inp.max(1)).map(|row| 128 * row.iter().map(|&v| v as i32).sum::<i32>()).collect();
        shift.resize(padded, 0);
        let (mut w_scale, mut bias) = (row_scale, bias);
        w_scale.resize(padded, 0.0);
        bias.resize(padded, 0.0);
        Int8Gemm { packed, strips, w_scale, shift, bias, k: inp, k4, out }
    }

    /// `x` holds `m` rows of `inp` values; returns `m` rows of `out` values, on rayon's pool.
    ///
    /// # Panics
    /// When the CPU lacks the VNNI kernel ([`Int8Gemm::available`]).
    pub fn forward(&self, x: &[f32], m: usize) -> Vec<f32> {
        assert!(Int8Gemm::available(), "the int8 GEMM needs AVX-512 VNNI");
        self.run(x, m, true)
    }

    /// The same products with plain loops (any CPU): the VNNI kernel's reference.
    pub fn forward_scalar(&self, x: &[f32], m: usize) -> Vec<f32> {
        self.run(x, m, false)
    }

    fn run(&self, x: &[f32], m: usize, simd: bool) -> Vec<f32> {
        assert_eq!(x.len(), m * self.k, "input size");
        let n = self.out;
        let mut y = vec![0.0f32; m * n];
        if n == 0 {
            return y;
        }
        y.par_chunks_mut(ROWS_PER_TASK * n).enumerate().for_each(|(task, y)| {
            let rows = y.len() / n;
            let x = &x[task * ROWS_PER_TASK * self.k..][..rows * self.k];
            let input = QuantizedRows::new(x, rows, self.k, self.k4, simd);
            if simd {
                #[cfg(target_arch = "x86_64")]
                // SAFETY: `forward` checked that the CPU has AVX-512 F, BW and VNNI.
                unsafe {
                    self.tiles_vnni(&input, y)
                }
                #[cfg(not(target_arch = "x86_64"))]
                unreachable!("the int8 GEMM needs AVX-512 VNNI");
            } else {
                self.tiles_scalar(&input, y)
            }
        });
        y
    }

    /// Scales one output back to f32: the integer sum minus the input's shift, times the
    /// input row's and the weight row's steps, plus the bias. The VNNI kernel's epilogue does
    /// the same operations, lane by lane, unfused.
    fn finish(&self, acc: i32, row_step: f32, col: usize) -> f32 {
        (acc - self.shift[col]) as f32 * (row_step * self.w_scale[col]) + self.bias[col]
    }

    fn tiles_scalar(&self, input: &QuantizedRows, y: &mut [f32]) {
        let n = self.out;
        for &(n0, cols, offset) in &self.strips {
            let width = cols.div_ceil(LANES) * LANES;
            for r in 0..input.rows {
                let a = input.row(r);
                for c in 0..cols {
                    let mut acc = 0i32;
                    for kk in 0..self.k4 {
                        let b = &self.packed[offset + (kk * width + c) * 4..][..4];
                        for j in 0..4 {
                            acc += a[4 * kk + j] as i32 * b[j] as i32;
                        }
                    }
                    y[r * n + n0 + c] = self.finish(acc, input.step[r], n0 + c);
                }
            }
        }
    }

    /// # Safety
    /// The CPU has AVX-512 F, BW and VNNI.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    unsafe fn tiles_vnni(&self, input: &QuantizedRows, y: &mut [f32]) {
        for &(n0, cols, offset) in &self.strips {
            let vecs = cols.div_ceil(LANES);
            for r0 in (0..input.rows).step_by(MR) {
                let rows = (input.rows - r0).min(MR);
                let tile = Tile { gemm: self, input, r0, n0, cols, b: &self.packed[offset..] };
                // SAFETY: the caller promises the CPU features; `Tile::run` checks the
                // tile's bounds.
                unsafe {
                    match (rows, vecs) {
                        (8, 3) => tile.run::<8, 3>(y),
                        (8, 2) => tile.run::<8, 2>(y),
                        (8, 1) => tile.run::<8, 1>(y),
                        (r, 3) => tile.run_rows::<3>(r, y),
                        (r, 2) => tile.run_rows::<2>(r, y),
                        (r, _) => tile.run_rows::<1>(r, y),
                    }
                }
            }
        }
    }
}

/// Input rows quantized for the VNNI kernel: per row `step = max|x| / 127` and the values
/// `round(x / step) + 128` as u8, padded with 128 (zero) to whole groups of 4.
struct QuantizedRows {
    data: Vec<u8>,
    step: Vec<f32>,
    rows: usize,
    stride: usize,
}

impl QuantizedRows {
    /// Quantizes `rows` rows of `k` values, with AVX-512 when `simd` (the caller checked the
    /// CPU), else with [`quantize_row`]; both give the same bytes.
    fn new(x: &[f32], rows: usize, k: usize, k4: usize, simd: bool) -> QuantizedRows {
        let stride = 4 * k4;
        let mut data = vec![128u8; rows * stride];
        let mut step = vec![1.0; rows];
        let mut q = Vec::with_capacity(k);
        for (r, row) in x.chunks_exact(k.max(1)).take(rows).enumerate() {
            let out = &mut data[r * stride..][..k];
            #[cfg(target_arch = "x86_64")]
            if simd {
                // SAFETY: the caller checked AVX-512 F and BW; `out` and `row` are `k` long.
                step[r] = unsafe { quantize_row_avx512(row, out) };
                continue;
            }
            q.clear();
            step[r] = quantize_row(row, &mut q);
            for (d, &v) in out.iter_mut().zip(&q) {
                *d = (v as i16 + 128) as u8;
            }
        }
        QuantizedRows { data, step, rows, stride }
    }

    fn row(&self, r: usize) -> &[u8] {
        &self.data[r * self.stride..][..self.stride]
    }
}

/// [`quantize_row`] shifted to u8, 16 values at a time: `vcvtps2dq` rounds half to even
/// (the default rounding mode) as `round_ties_even` does. Returns the row's step.
///
/// # Safety
/// The CPU has AVX-512 F and BW; `out.len() == row.len()`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn quantize_row_avx512(row: &[f32], out: &mut [u8]) -> f32 {
    use std::arch::x86_64::*;
    assert_eq!(row.len(), out.len(), "row and output lengths");
    let (n, tail) = (row.len() / LANES * LANES, row.len() % LANES);
    let tail_mask: __mmask16 = ((1u32 << tail) - 1) as u16;
    let p = row.as_ptr();
    let mut amax = _mm512_setzero_ps();
    for i in (0..n).step_by(LANES) {
        // SAFETY: `i + 16 ≤ n ≤ row.len()`.
        amax = _mm512_max_ps(amax, _mm512_abs_ps(unsafe { _mm512_loadu_ps(p.add(i)) }));
    }
    // SAFETY: the mask reads only the `tail` values from `n` on.
    amax = _mm512_max_ps(amax, _mm512_abs_ps(unsafe { _mm512_maskz_loadu_ps(tail_mask, p.add(n)) }));
    let scale = int8_scale(_mm512_reduce_max_ps(amax));
    let (lo, hi, shift) = (_mm512_set1_epi32(-127), _mm512_set1_epi32(127), _mm512_set1_epi32(128));
    let quantize = |v: __m512| {
        let q = _mm512_cvtps_epi32(_mm512_mul_ps(v, _mm512_set1_ps(scale)));
        _mm512_cvtepi32_epi8(_mm512_add_epi32(_mm512_min_epi32(_mm512_max_epi32(q, lo), hi), shift))
    };
    let o = out.as_mut_ptr();
    for i in (0..n).step_by(LANES) {
        // SAFETY: `i + 16 ≤ n` values are read and as many bytes written.
        unsafe { _mm_storeu_si128(o.add(i) as *mut __m128i, quantize(_mm512_loadu_ps(p.add(i)))) };
    }
    // SAFETY: the masks touch only the `tail` values and bytes from `n` on.
    unsafe {
        _mm_mask_storeu_epi8(o.add(n) as *mut i8, tail_mask, quantize(_mm512_maskz_loadu_ps(tail_mask, p.add(n))))
    };
    1.0 / scale
}

/// One register tile's inputs: rows `r0..` of the quantized input against the strip of
/// weights starting at column `n0` (`b` is the strip's packed bytes onwards).
#[cfg(target_arch = "x86_64")]
struct Tile<'a> {
    gemm: &'a Int8Gemm,
    input: &'a QuantizedRows,
    r0: usize,
    n0: usize,
    cols: usize,
    b: &'a [i8],
}

#[cfg(target_arch = "x86_64")]
impl Tile<'_> {
    /// A tile of fewer than [`MR`] rows (the task's last).
    ///
    /// # Safety
    /// As [`Tile::run`].
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    unsafe fn run_rows<const V: usize>(&self, rows: usize, y: &mut [f32]) {
        // SAFETY: forwarded from the caller.
        unsafe {
            match rows {
                1 => self.run::<1, V>(y),
                2 => self.run::<2, V>(y),
                3 => self.run::<3, V>(y),
                4 => self.run::<4, V>(y),
                5 => self.run::<5, V>(y),
                6 => self.run::<6, V>(y),
                _ => self.run::<7, V>(y),
            }
        }
    }

    /// `R` rows × `V` registers of columns: the inner loop reads `V` registers of weights and
    /// broadcasts 4 input bytes per row, one `vpdpbusd` per accumulator.
    ///
    /// # Safety
    /// The CPU has AVX-512 F, BW and VNNI.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    unsafe fn run<const R: usize, const V: usize>(&self, y: &mut [f32]) {
        use std::arch::x86_64::*;
        let (g, input) = (self.gemm, self.input);
        let k4 = g.k4;
        assert!(self.r0 + R <= input.rows, "tile rows");
        assert!(self.b.len() >= k4 * V * LANES * 4, "tile weights");
        let mut acc = [[_mm512_setzero_si512(); V]; R];
        let a = input.data[self.r0 * input.stride..].as_ptr();
        let b = self.b.as_ptr();
        for kk in 0..k4 {
            let mut w = [_mm512_setzero_si512(); V];
            for (v, w) in w.iter_mut().enumerate() {
                // SAFETY: the assertion above keeps `(kk·V + v)·64 + 64 ≤ b.len()`.
                *w = unsafe { _mm512_loadu_si512(b.add((kk * V + v) * LANES * 4) as *const __m512i) };
            }
            for (r, acc) in acc.iter_mut().enumerate() {
                // SAFETY: row `r0 + r < rows` of `stride = 4·k4` bytes holds bytes 4kk..4kk+4.
                let four = unsafe { (a.add(r * input.stride + 4 * kk) as *const i32).read_unaligned() };
                let x = _mm512_set1_epi32(four);
                for v in 0..V {
                    acc[v] = _mm512_dpbusd_epi32(acc[v], x, w[v]);
                }
            }
        }
        let n = g.out;
        for (r, acc) in acc.iter().enumerate() {
            let row = self.r0 + r;
            let step = _mm512_set1_ps(input.step[row]);
            let out = y[row * n + self.n0..][..self.cols].as_mut_ptr();
            for (v, &acc) in acc.iter().enumerate() {
                let (c0, col) = (v * LANES, self.n0 + v * LANES);
                if c0 >= self.cols {
                    break;
                }
                let lanes = (self.cols - c0).min(LANES);
                let mask: __mmask16 = if lanes == LANES { !0 } else { (1u16 << lanes) - 1 };
                // SAFETY: the per-column vectors are padded to whole registers
                // (`col + 16 ≤ padded`); the masked store writes `lanes` floats at `c0`,
                // inside this row's `cols` outputs.
                unsafe {
                    let shift = _mm512_loadu_si512(g.shift.as_ptr().add(col) as *const __m512i);
                    let scale = _mm512_mul_ps(step, _mm512_loadu_ps(g.w_scale.as_ptr().add(col)));
                    let bias = _mm512_loadu_ps(g.bias.as_ptr().add(col));
                    let value = _mm512_cvtepi32_ps(_mm512_sub_epi32(acc, shift));
                    _mm512_mask_storeu_ps(out.add(c0), mask, _mm512_add_ps(_mm512_mul_ps(value, scale), bias));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(n: usize, seed: u64) -> Vec<f32> {
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s >> 40) as f32 / (1u64 << 23) as f32 - 1.0
            })
            .collect()
    }

    fn reference(w: &[f32], bias: &[f32], x: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
        let mut y = vec![0.0f32; m * n];
        for i in 0..m {
            for j in 0..n {
                y[i * n + j] = bias[j] + (0..k).map(|t| x[i * k + t] * w[j * k + t]).sum::<f32>();
            }
        }
        y
    }

    /// Shapes with every tail: rows not a multiple of 8 or 64, columns not a multiple of
    /// 16 or 48, inputs not a multiple of 4.
    const SHAPES: [(usize, usize, usize); 5] = [(1, 4, 16), (7, 13, 5), (70, 64, 48), (130, 102, 113), (9, 512, 80)];

    #[test]
    fn the_vnni_kernel_computes_exactly_the_scalar_kernels_numbers() {
        if !Int8Gemm::available() {
            eprintln!("skipped: this CPU has no AVX-512 VNNI");
            return;
        }
        for (m, k, n) in SHAPES {
            let g = Int8Gemm::quantize(&values(n * k, 1), n, k, Some(values(n, 2)));
            let x = values(m * k, 3);
            assert_eq!(g.forward(&x, m), g.forward_scalar(&x, m), "m {m} k {k} n {n}");
        }
    }

    #[test]
    fn int8_products_stay_within_the_quantization_error_of_f32() {
        for (m, k, n) in SHAPES {
            let (w, bias, x) = (values(n * k, 4), values(n, 5), values(m * k, 6));
            let exact = reference(&w, &bias, &x, m, k, n);
            let got = Int8Gemm::quantize(&w, n, k, Some(bias)).forward_scalar(&x, m);
            // Each factor is off by at most half a step (1/254 of its row's largest value),
            // so each product by about 1/127 of |x|·|w| in the worst case.
            let bound = 2.0 * k as f32 / 127.0;
            for (a, b) in exact.iter().zip(&got) {
                assert!((a - b).abs() <= bound, "m {m} k {k} n {n}: {a} vs {b}");
            }
            let err: f32 = exact.iter().zip(&got).map(|(a, b)| (a - b).abs()).sum::<f32>() / exact.len() as f32;
            let size: f32 = exact.iter().map(|a| a.abs()).sum::<f32>() / exact.len() as f32;
            assert!(err < 0.02 * size.max(1e-3), "m {m} k {k} n {n}: mean error {err} against mean size {size}");
        }
    }

    #[test]
    fn a_row_of_zeros_gives_the_bias() {
        let g = Int8Gemm::quantize(&values(8 * 20, 7), 8, 20, Some(values(8, 8)));
        let y = g.forward_scalar(&[0.0; 20], 1);
        assert_eq!(y, values(8, 8));
    }
}
