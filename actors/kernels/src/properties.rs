//! Property tests: every SIMD kernel against its scalar twin (or, where the twin is the
//! definition, against the definition) over random shapes and values, with `proptest`.
//!
//! The fixed-size tests beside each kernel pin particular tails and tiles; these draw the
//! shapes (widths not a multiple of the vector width, row counts past the register tiles and
//! the rayon task splits, strides) and the values at random. Each compares whatever path the
//! dispatcher picks on this CPU with the twin, so on a CPU without AVX2 or AVX-512 they still
//! run, and hold the scalar paths to the definition. Tolerances are the fixed tests' own:
//! bit for bit where those say so (integer sums, the same operations in the same order).

use half::f16;
use proptest::prelude::*;

use crate::int8_gemm::Int8Gemm;
use crate::*;

/// Values from a seed (splitmix64): the random values of a case, drawn by proptest through
/// the seed, so large inputs cost no strategy per element.
struct Values(u64);

impl Values {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[lo, hi)`.
    fn f32(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * ((self.next() >> 40) as f32 / (1u64 << 24) as f32)
    }

    fn vec(&mut self, len: usize, lo: f32, hi: f32) -> Vec<f32> {
        (0..len).map(|_| self.f32(lo, hi)).collect()
    }

    /// A row of scores: values in `[lo, hi)`, about one in `masked` −∞ (a masked score) when
    /// `masked > 0`, but never all of them.
    fn scores(&mut self, len: usize, lo: f32, hi: f32, masked: u64) -> Vec<f32> {
        let mut row: Vec<f32> = (0..len)
            .map(
                |_| if masked > 0 && self.next().is_multiple_of(masked) { f32::NEG_INFINITY } else { self.f32(lo, hi) },
            )
            .collect();
        if !row.is_empty() && row.iter().all(|v| *v == f32::NEG_INFINITY) {
            row[0] = lo;
        }
        row
    }
}

/// `y = x·Wᵀ + b`, `W` `[n, k]`, by its definition.
pub(crate) fn plain_matmul(w: &[f32], b: Option<&[f32]>, x: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
    let mut y = vec![0.0; m * n];
    for i in 0..m {
        for r in 0..n {
            y[i * n + r] = b.map_or(0.0, |b| b[r]) + (0..k).map(|c| w[r * k + c] * x[i * k + c]).sum::<f32>();
        }
    }
    y
}

/// Attention by its definition (also the fixed tests' reference): query `i`
/// (`q[i·ldq..]`) against `t` positions of `kv[j·stride..]` (keys, then values at `d`), head
/// `head`: `dh` outputs.
#[allow(clippy::too_many_arguments)]
pub(crate) fn attention_definition(
    q: &[f32],
    ldq: usize,
    kv: &[f32],
    stride: usize,
    t: usize,
    d: usize,
    dh: usize,
    i: usize,
    head: usize,
) -> Vec<f32> {
    let mut s: Vec<f32> = (0..t)
        .map(|j| {
            (0..dh).map(|c| q[i * ldq + head * dh + c] * kv[j * stride + head * dh + c]).sum::<f32>()
                / (dh as f32).sqrt()
        })
        .collect();
    softmax_scalar(&mut s);
    (0..dh).map(|c| (0..t).map(|j| s[j] * kv[j * stride + d + head * dh + c]).sum()).collect()
}

/// erf by its Taylor series in f64 (exact to ~1e-11 on [−4, 4]; beyond, erf is ±1 within
/// 1.6e-8).
fn erf_definition(x: f64) -> f64 {
    if x.abs() > 4.0 {
        return x.signum();
    }
    let (mut term, mut sum) = (x, x);
    for n in 1..200 {
        term *= -x * x / n as f64;
        sum += term / (2 * n + 1) as f64;
    }
    sum * 2.0 / std::f64::consts::PI.sqrt()
}

/// [`dot_rows`] (SIMD where the CPU has it) against [`dot_rows_scalar`]: the same sums in
/// another order, so within the error bound of a `k`-term sum of each side.
fn check_dot_rows<W: Weight>(w: &[W], x: &[f32], m: usize, k: usize, transposed: bool) -> Result<(), TestCaseError> {
    let n = w.len() / k;
    let stride = if transposed { (1, n) } else { (m, 1) };
    let (mut fast, mut plain) = (vec![f32::NAN; n * m], vec![f32::NAN; n * m]);
    dot_rows(w, x, m, k, &mut fast, stride);
    dot_rows_scalar(w, x, m, k, &mut plain, stride);
    for r in 0..n {
        for i in 0..m {
            let at = r * stride.0 + i * stride.1;
            let size: f32 = (0..k).map(|c| (w[r * k + c].to_f32() * x[i * k + c]).abs()).sum();
            let bound = 2.0 * (k as f32 + 1.0) * f32::EPSILON * size;
            prop_assert!(
                (fast[at] - plain[at]).abs() <= bound,
                "row {r} input {i} (n {n} m {m} k {k}): {} vs {}",
                fast[at],
                plain[at]
            );
        }
    }
    Ok(())
}

/// Weight rows: a few (the decoder's odd tails), or enough for several 64 KiB chunks of the
/// AVX2 kernel when `k` is small. (At least one input row is drawn: with none and several
/// chunks, the AVX2 kernel slices its empty output past the end and panics; no caller asks
/// for zero rows.)
fn weight_rows() -> impl Strategy<Value = usize> {
    prop_oneof![1..=13usize, 1000..=2600usize]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn dot_rows_on_f32_weights_is_its_scalar_twin(
        n in weight_rows(), m in 1..=9usize, k in 1..=72usize, transposed: bool, seed: u64,
    ) {
        let mut v = Values(seed);
        let (w, x) = (v.vec(n * k, -1.0, 1.0), v.vec(m * k, -2.0, 2.0));
        check_dot_rows(&w, &x, m, k, transposed)?;
    }

    #[test]
    fn dot_rows_on_f16_weights_is_its_scalar_twin(
        n in weight_rows(), m in 1..=9usize, k in 1..=72usize, transposed: bool, seed: u64,
    ) {
        let mut v = Values(seed);
        let w: Vec<f16> = v.vec(n * k, -1.0, 1.0).into_iter().map(f16::from_f32).collect();
        let x = v.vec(m * k, -2.0, 2.0);
        check_dot_rows(&w, &x, m, k, transposed)?;
    }

    #[test]
    fn dot_rows_on_int8_weights_is_its_scalar_twin(
        n in weight_rows(), m in 1..=9usize, k in 1..=72usize, transposed: bool, seed: u64,
    ) {
        let mut v = Values(seed);
        let w: Vec<i8> = (0..n * k).map(|_| ((v.next() % 255) as i16 - 127) as i8).collect();
        let x = v.vec(m * k, -2.0, 2.0);
        check_dot_rows(&w, &x, m, k, transposed)?;
    }

    #[test]
    fn matrix_forward_is_a_plain_matmul_of_its_weights(
        n in 1..=600usize, m in 1..=9usize, k in 1..=100usize, kind in 0..3u8, with_bias: bool, seed: u64,
    ) {
        // Enough rows, at times, for several rayon tasks; f16 weights are exact in f32, int8
        // weights are compared as the dequantized rows `Matrix::row` gives.
        let mut v = Values(seed);
        let (w, x) = (v.vec(n * k, -1.0, 1.0), v.vec(m * k, -1.0, 1.0));
        let bias = with_bias.then(|| v.vec(n, -0.5, 0.5));
        let matrix = match kind {
            0 => Matrix::f32(w, n, k, bias.clone()),
            1 => Matrix::f16(w.iter().map(|&x| f16::from_f32(x)).collect(), n, k, bias.clone()),
            _ => Matrix::quantize(&w, n, k, bias.clone()),
        };
        let weights: Vec<f32> = (0..n).flat_map(|r| matrix.row(r)).collect();
        let want = plain_matmul(&weights, bias.as_deref(), &x, m, n, k);
        for (j, (g, e)) in matrix.forward(&x, m).iter().zip(&want).enumerate() {
            prop_assert!((g - e).abs() < 1e-4 * e.abs().max(1.0), "{} value {j}: {g} vs {e}", matrix.kind());
        }
    }

    #[test]
    fn dense_forward_is_a_plain_matmul(
        m in 1..=130usize, n in 1..=80usize, k in 1..=200usize, with_bias: bool, with_gelu: bool, seed: u64,
    ) {
        let mut v = Values(seed);
        let (w, x) = (v.vec(n * k, -1.0, 1.0), v.vec(m * k, -1.0, 1.0));
        let bias = with_bias.then(|| v.vec(n, -0.5, 0.5));
        let mut want = plain_matmul(&w, bias.as_deref(), &x, m, n, k);
        if with_gelu {
            gelu(&mut want);
        }
        let got = Dense::new(w, n, k, bias).forward(&x, m, with_gelu);
        for (j, (g, e)) in got.iter().zip(&want).enumerate() {
            prop_assert!((g - e).abs() < 1e-3 * e.abs().max(1.0), "value {j}: {g} vs {e}");
        }
    }

    #[test]
    fn int8_gemm_is_the_scalar_int8_definition_bit_for_bit(
        m in 1..=140usize, k in 1..=130usize, n in 1..=110usize, with_bias: bool, zero_row: bool, seed: u64,
    ) {
        // Rows past the 8-row tiles and the 64-row tasks, columns past the 48-wide strips,
        // inputs not a multiple of 4. The definition: each input row quantized by
        // `quantize_row`, integer dot products with the int8 weights, scaled back by the two
        // steps and the bias, the same float operations in the same order.
        let mut v = Values(seed);
        let q: Vec<i8> = (0..n * k).map(|_| ((v.next() % 255) as i16 - 127) as i8).collect();
        let row_scale = v.vec(n, 1e-3, 0.1);
        let bias = with_bias.then(|| v.vec(n, -1.0, 1.0));
        let mut x = v.vec(m * k, -3.0, 3.0);
        if zero_row {
            x[..k].fill(0.0);
        }
        let mut want = vec![0.0f32; m * n];
        let mut qx = Vec::new();
        for i in 0..m {
            qx.clear();
            let step = quantize_row(&x[i * k..(i + 1) * k], &mut qx);
            for j in 0..n {
                let acc: i32 = (0..k).map(|t| qx[t] as i32 * q[j * k + t] as i32).sum();
                want[i * n + j] = acc as f32 * (step * row_scale[j]) + bias.as_ref().map_or(0.0, |b| b[j]);
            }
        }
        let g = Int8Gemm::new(&q, row_scale.clone(), n, k, bias.clone());
        let plain = g.forward_scalar(&x, m);
        prop_assert!(plain.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()), "scalar kernel vs definition");
        if Int8Gemm::available() {
            prop_assert!(g.forward(&x, m) == plain, "VNNI kernel vs scalar kernel");
            // and `Dense` in int8 is that kernel, GELU after it as in f32
            let mut want = plain;
            gelu(&mut want);
            prop_assert!(Dense::int8(q, row_scale, n, k, bias).forward(&x, m, true) == want, "Dense::int8");
        }
    }

    #[test]
    fn cached_attention_is_its_scalar_twin(
        dh in prop_oneof![Just(64usize), 1..=80usize], n in 1..=48usize, pad in 0..=8usize,
        scale in 0.05f32..0.5, seed: u64,
    ) {
        // Heads of 64 take the AVX2 kernel where the CPU has it, other widths the scalar one.
        let mut v = Values(seed);
        let stride = dh + pad;
        let len = (n - 1) * stride + dh;
        let (q, keys, values) = (v.vec(dh, -1.0, 1.0), v.vec(len, -1.0, 1.0), v.vec(len, -1.0, 1.0));
        let (mut fast, mut plain, mut scores) = (vec![0.0; dh], vec![0.0; dh], Vec::new());
        attend_cached(&q, &keys, &values, stride, n, scale, &mut scores, &mut fast);
        attend_cached_scalar(&q, &keys, &values, stride, n, scale, &mut scores, &mut plain);
        for (c, (f, p)) in fast.iter().zip(&plain).enumerate() {
            prop_assert!((f - p).abs() < 1e-5, "dh {dh} n {n} column {c}: {f} vs {p}");
        }
    }

    #[test]
    fn softmax_is_its_scalar_twin(len in 1..=1500usize, masked in 0..=9u64, shift: bool, seed: u64) {
        let mut v = Values(seed);
        let mut row = v.scores(len, -30.0, 30.0, masked);
        if shift {
            row.iter_mut().for_each(|x| *x -= 1000.0);
        }
        let (mut got, mut want) = (row.clone(), row);
        softmax(&mut got);
        softmax_scalar(&mut want);
        for (j, (g, w)) in got.iter().zip(&want).enumerate() {
            // (sums in another order, and a vector `exp` within 2 ulp: a few ulp apart)
            prop_assert!((g - w).abs() <= 4e-6 * w.max(1e-3), "len {len} value {j}: {g} vs {w}");
        }
    }

    #[test]
    fn softmax_rows_are_the_row_softmax_bit_for_bit(
        rows in 1..=4usize, t in 1..=300usize, masked in 0..=9u64, seed: u64,
    ) {
        // The AVX-512 kernel where the CPU has it, with exactly the AVX2 softmax's values.
        let mut v = Values(seed);
        let mut got: Vec<f32> = (0..rows).flat_map(|_| v.scores(t, -30.0, 30.0, masked)).collect();
        let mut want = got.clone();
        want.chunks_exact_mut(t).for_each(softmax);
        softmax_rows(&mut got, rows, t);
        for (j, (g, w)) in got.iter().zip(&want).enumerate() {
            prop_assert_eq!(g.to_bits(), w.to_bits(), "t {} value {}: {} vs {}", t, j, g, w);
        }
    }

    #[test]
    fn log_sum_exp_is_its_scalar_twin(len in 0..=3000usize, masked in 0..=9u64, all_masked: bool, seed: u64) {
        let mut v = Values(seed);
        let mut row = v.scores(len, -30.0, 30.0, masked);
        if all_masked {
            row.fill(f32::NEG_INFINITY);
        }
        let (got, want) = (log_sum_exp(&row), log_sum_exp_scalar(&row));
        prop_assert!(
            got == want || (got - want).abs() <= 4e-6 * want.abs().max(1.0),
            "len {len}: {got} vs {want}"
        );
    }

    #[test]
    fn vector_exp_is_within_a_few_ulp_of_exp(xs in proptest::array::uniform8(-87.0f32..87.9)) {
        #[cfg(target_arch = "x86_64")]
        if simd_available() {
            use std::arch::x86_64::*;
            let mut got = [0.0f32; 8];
            // SAFETY: AVX2 and FMA detected just above; both pointers are to 8 floats.
            unsafe { _mm256_storeu_ps(got.as_mut_ptr(), avx2::exp8(_mm256_loadu_ps(xs.as_ptr()))) };
            for (g, x) in got.iter().zip(xs) {
                let want = (x as f64).exp();
                // f32 ulp is 2^-23 ≈ 1.19e-7 relative at worst.
                prop_assert!(((*g as f64) - want).abs() / want < 3.0e-7, "exp({x}) = {g}, not {want}");
                let libm = x.exp();
                prop_assert!((g - libm).abs() <= 4.0 * f32::EPSILON * libm, "exp({x}) = {g}, f32::exp {libm}");
            }
        }
        let _ = xs;
    }

    #[test]
    fn erf_is_the_definition_within_its_error(x in -6.0f32..6.0) {
        let want = erf_definition(x as f64);
        prop_assert!((erf(x) as f64 - want).abs() < 1e-6, "erf({x}) = {} not {want}", erf(x));
    }

    #[test]
    fn gelu_is_the_scalar_definition(len in 0..=40_000usize, seed: u64) {
        // Past several parallel chunks; each value the exact GELU within erf's error.
        let mut v = Values(seed);
        let x = v.vec(len, -8.0, 8.0);
        let mut got = x.clone();
        gelu(&mut got);
        let mut serial = x.clone();
        gelu_serial(&mut serial);
        prop_assert!(got == serial, "the parallel chunks differ from one pass");
        for (g, &x) in got.iter().zip(&x) {
            let want = 0.5 * x as f64 * (1.0 + erf_definition(x as f64 * std::f64::consts::FRAC_1_SQRT_2));
            prop_assert!((*g as f64 - want).abs() <= 1e-6 * (x.abs() as f64).max(1.0), "gelu({x}) = {g} not {want}");
        }
    }

    #[test]
    fn round_small_rounds_half_to_even_like_round_ties_even(
        x in prop_oneof![-4_194_304.0f32..4_194_304.0, (-1100..=1100i32).prop_map(|i| i as f32 / 8.0)],
    ) {
        prop_assert_eq!(round_small(x), x.round_ties_even(), "{}", x);
    }
}

/// Head widths of the attention kernels: 64 (every Whisper model's, the AVX-512 and bf16
/// kernels') or another (the `gemm` crate's path).
fn head_width() -> impl Strategy<Value = usize> {
    prop_oneof![Just(64usize), 1..=40usize]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn window_attention_is_the_definition(t in 1..=80usize, h in 1..=3usize, dh in head_width(), seed: u64) {
        // Whatever layout `AttentionKv::new` picks on this CPU.
        let mut v = Values(seed);
        let d = h * dh;
        let qkv = v.vec(t * 3 * d, -1.0, 1.0);
        let got = window_attention(&qkv, t, h, dh);
        for head in 0..h {
            for i in 0..t {
                let want = attention_definition(&qkv, 3 * d, &qkv[d..], 3 * d, t, d, dh, i, head);
                for (c, w) in want.iter().enumerate() {
                    let g = got[i * d + head * dh + c];
                    prop_assert!((g - w).abs() < 1e-5, "t {t} head {head} row {i} col {c}: {g} vs {w}");
                }
            }
        }
    }

    #[test]
    fn both_key_layouts_attend_as_the_definition_says(
        t in 1..=100usize, n in 1..=60usize, h in 1..=2usize, dh in head_width(), seed: u64,
    ) {
        // The `gemm` layout everywhere; the blocked AVX-512 one for heads of 64 where the CPU
        // has it. Keys around the 32-key blocks, queries around the 8- and 6-row tiles.
        #[cfg(target_arch = "x86_64")]
        let blocked_runs = dh == attention512::DH && attention512::available();
        #[cfg(not(target_arch = "x86_64"))]
        let blocked_runs = false;
        let mut v = Values(seed);
        let d = h * dh;
        let (kv, q) = (v.vec(t * 2 * d, -1.0, 1.0), v.vec(n * d, -1.0, 1.0));
        for blocked in [false, true] {
            if blocked && !blocked_runs {
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
                        prop_assert!((g - w).abs() < 1e-5, "blocked {blocked} t {t} n {n} [{i},{head},{c}]: {g} vs {w}");
                    }
                    for j in 0..t {
                        let want = (0..dh).map(|c| q[i * d + head * dh + c] * kv[j * 2 * d + head * dh + c]);
                        let want = want.sum::<f32>() / (dh as f32).sqrt();
                        let g = scores[i * t + j];
                        prop_assert!((g - want).abs() < 1e-5, "blocked {blocked} t {t} n {n} score [{i},{j}]: {g} vs {want}");
                    }
                }
            }
        }
    }

    #[test]
    fn bf16_attention_is_the_definition_on_rounded_factors(
        t in 1..=100usize, n in 1..=60usize, h in 1..=2usize, seed: u64,
    ) {
        // Scores are exact dot products of the bf16-rounded query (scaled) and key; outputs the
        // bf16-rounded weights times the bf16-rounded values. Only where the CPU has AVX-512
        // BF16 (elsewhere `AttentionKv` keeps f32, which the property above covers).
        if AttentionPrecision::Bf16.usable(64) == AttentionPrecision::Bf16 {
            let bf = |x: f32| half::bf16::from_f32(x).to_f32() as f64;
            let mut v = Values(seed);
            let (dh, scale) = (64, 1.0 / 8.0);
            let d = h * dh;
            let (kv, q) = (v.vec(t * 2 * d, -1.0, 1.0), v.vec(n * d, -1.0, 1.0));
            let att = AttentionKv::new(&kv, 2 * d, t, h, dh, AttentionPrecision::Bf16);
            prop_assert!(matches!(att.store, KvStore::Bf16 { .. }), "not a bf16 store");
            let got = att.attend(&q, d, n);
            for head in 0..h {
                let scores = att.scores(&q, n, head);
                for i in 0..n {
                    let want: Vec<f64> = (0..t)
                        .map(|j| {
                            (0..dh).map(|c| bf(q[i * d + head * dh + c] * scale) * bf(kv[j * 2 * d + head * dh + c])).sum()
                        })
                        .collect();
                    for (j, w) in want.iter().enumerate() {
                        let g = f64::from(scores[i * t + j]);
                        prop_assert!((g - w).abs() < 1e-5 * w.abs().max(1.0), "t {t} n {n} score [{i},{j}]: {g} vs {w}");
                    }
                    let max = want.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    let sum: f64 = want.iter().map(|w| (w - max).exp()).sum();
                    let p: Vec<f64> = want.iter().map(|w| bf((((w - max).exp()) / sum) as f32)).collect();
                    for c in 0..dh {
                        let w: f64 = (0..t).map(|j| p[j] * bf(kv[j * 2 * d + d + head * dh + c])).sum();
                        let g = f64::from(got[i * d + head * dh + c]);
                        prop_assert!((g - w).abs() < 1e-3, "t {t} n {n} [{i},{head},{c}]: {g} vs {w}");
                    }
                }
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn bf16_pairs_round_as_the_half_crate_does(len in 0..=100usize, seed: u64) {
        // `vcvtneps2bf16` for whole registers, `pair` (the `half` crate) for the tail: the same
        // rounding to nearest, ties to even (normal values; the instruction flushes denormals).
        if attention_bf16::available() {
            let mut v = Values(seed);
            let x = v.vec(len, -100.0, 100.0);
            let mut got = vec![0u32; len.div_ceil(2)];
            // SAFETY: AVX-512 F and BF16 detected just above.
            unsafe { attention_bf16::to_pairs(&x, &mut got) };
            for (i, lane) in got.iter().enumerate() {
                let want = attention_bf16::pair(x[2 * i], x.get(2 * i + 1).copied().unwrap_or(0.0));
                prop_assert_eq!(*lane, want, "lane {} of {}", i, len);
            }
        }
    }
}
