//! Attention's two products for heads of width 64 (every Whisper model's), on AVX-512.
//!
//! The `gemm` crate reaches about half the machine's peak on `q·kᵀ` (its depth is only 64),
//! and for the decoder's few queries (one per beam) it packs all 1500 keys for a handful of
//! rows. Here the keys of a head are stored in blocks of 32 positions, each block `[64][32]`
//! (a dimension's 32 keys side by side), so a tile of up to 8 queries × 32 keys reads two
//! registers per dimension and does 16 multiply-adds with them; the values stay `[t][64]`, so
//! a tile of up to 6 queries reads a value row as four registers and does 24. Both products
//! stream each head's keys and values once per tile of queries, which for the decoder is
//! once per step. Between them, the softmax of the score rows runs sixteen lanes a step.

use std::arch::x86_64::*;

/// Head width the kernels take.
pub(super) const DH: usize = 64;
/// Keys per block of the key layout.
pub(super) const BLOCK: usize = 32;

/// Whether this CPU runs these kernels (checked once).
pub(super) fn available() -> bool {
    use std::sync::OnceLock;
    static OK: OnceLock<bool> = OnceLock::new();
    *OK.get_or_init(|| std::arch::is_x86_feature_detected!("avx512f"))
}

/// Floats of one head's blocked keys for `t` positions.
pub(super) fn blocked_len(t: usize) -> usize {
    t.div_ceil(BLOCK) * DH * BLOCK
}

/// Index of key `j`'s dimension `c` in a head's blocked keys.
pub(super) fn blocked_index(j: usize, c: usize) -> usize {
    (j / BLOCK) * DH * BLOCK + c * BLOCK + j % BLOCK
}

/// `s[i·t + j] = q_i · k_j` for the `rows` queries of `q` (`[rows][64]`, already scaled)
/// against a head's `t` blocked keys.
///
/// # Safety
/// The CPU has AVX-512 F.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn scores(q: &[f32], rows: usize, keys: &[f32], t: usize, s: &mut [f32]) {
    assert!(q.len() >= rows * DH && keys.len() >= blocked_len(t) && s.len() >= rows * t, "scores sizes");
    for r0 in (0..rows).step_by(8) {
        // SAFETY: the CPU features are the caller's promise; sizes are checked above.
        unsafe {
            match rows - r0 {
                1 => scores_tile::<1>(q, r0, keys, t, s),
                2 => scores_tile::<2>(q, r0, keys, t, s),
                3 => scores_tile::<3>(q, r0, keys, t, s),
                4 => scores_tile::<4>(q, r0, keys, t, s),
                5 => scores_tile::<5>(q, r0, keys, t, s),
                6 => scores_tile::<6>(q, r0, keys, t, s),
                7 => scores_tile::<7>(q, r0, keys, t, s),
                _ => scores_tile::<8>(q, r0, keys, t, s),
            }
        }
    }
}

/// Queries `r0..r0 + R` against every block of keys.
///
/// # Safety
/// The CPU has AVX-512 F; the sizes [`scores`] checks hold and `r0 + R ≤ rows`.
#[target_feature(enable = "avx512f")]
unsafe fn scores_tile<const R: usize>(q: &[f32], r0: usize, keys: &[f32], t: usize, s: &mut [f32]) {
    assert!((r0 + R) * DH <= q.len() && (r0 + R) * t <= s.len(), "tile rows");
    let (qp, kp, sp) = (q[r0 * DH..].as_ptr(), keys.as_ptr(), s[r0 * t..].as_mut_ptr());
    for b in 0..t.div_ceil(BLOCK) {
        let mut acc = [[_mm512_setzero_ps(); 2]; R];
        // SAFETY: block `b` is inside `keys` (`blocked_len(t)` floats), query row `i < R` of
        // 64 floats inside `q`.
        unsafe {
            let block = kp.add(b * DH * BLOCK);
            for c in 0..DH {
                let k0 = _mm512_loadu_ps(block.add(c * BLOCK));
                let k1 = _mm512_loadu_ps(block.add(c * BLOCK + 16));
                for (i, acc) in acc.iter_mut().enumerate() {
                    let x = _mm512_set1_ps(*qp.add(i * DH + c));
                    acc[0] = _mm512_fmadd_ps(x, k0, acc[0]);
                    acc[1] = _mm512_fmadd_ps(x, k1, acc[1]);
                }
            }
        }
        // SAFETY: `sp` is row `r0` of `s`, which holds rows `r0..r0 + R` of `t` scores.
        unsafe { store_block(&acc, sp, t, b) };
    }
}

/// Stores the scores of key block `b` (two registers of 16 keys per query row) into rows of
/// `t` scores starting at `sp`, only the block's keys below `t`.
///
/// # Safety
/// The CPU has AVX-512 F; `sp` points at `R` rows of `t` writable floats.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn store_block<const R: usize>(acc: &[[__m512; 2]; R], sp: *mut f32, t: usize, b: usize) {
    let j0 = b * BLOCK;
    let lanes = (t - j0).min(BLOCK);
    let (m0, m1) = (mask(lanes.min(16)), mask(lanes.saturating_sub(16)));
    for (i, acc) in acc.iter().enumerate() {
        // SAFETY: the masks write only positions `j0..j0 + lanes < t` of row `i`.
        unsafe {
            _mm512_mask_storeu_ps(sp.add(i * t + j0), m0, acc[0]);
            _mm512_mask_storeu_ps(sp.add(i * t + j0 + 16), m1, acc[1]);
        }
    }
}

/// `out[i] = Σ_j p[i·t + j] · v_j` for `rows` rows of weights `p` over a head's `t` values
/// (`[t][64]`); `out` is `[rows][64]`.
///
/// # Safety
/// The CPU has AVX-512 F.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn weighted_values(p: &[f32], rows: usize, values: &[f32], t: usize, out: &mut [f32]) {
    assert!(p.len() >= rows * t && values.len() >= t * DH && out.len() >= rows * DH, "values sizes");
    for r0 in (0..rows).step_by(6) {
        // SAFETY: the CPU features are the caller's promise; sizes are checked above.
        unsafe {
            match rows - r0 {
                1 => values_tile::<1>(p, r0, values, t, out),
                2 => values_tile::<2>(p, r0, values, t, out),
                3 => values_tile::<3>(p, r0, values, t, out),
                4 => values_tile::<4>(p, r0, values, t, out),
                5 => values_tile::<5>(p, r0, values, t, out),
                _ => values_tile::<6>(p, r0, values, t, out),
            }
        }
    }
}

/// Rows `r0..r0 + R` of [`weighted_values`].
///
/// # Safety
/// The CPU has AVX-512 F; the sizes [`weighted_values`] checks hold and `r0 + R ≤ rows`.
#[target_feature(enable = "avx512f")]
unsafe fn values_tile<const R: usize>(p: &[f32], r0: usize, values: &[f32], t: usize, out: &mut [f32]) {
    assert!((r0 + R) * t <= p.len() && (r0 + R) * DH <= out.len(), "tile rows");
    let (pp, vp, op) = (p[r0 * t..].as_ptr(), values.as_ptr(), out[r0 * DH..].as_mut_ptr());
    let mut acc = [[_mm512_setzero_ps(); 4]; R];
    for j in 0..t {
        // SAFETY: value row `j < t` (64 floats) is inside `values`; weight `(i, j)` with
        // `i < R` inside `p`.
        unsafe {
            let v = [0, 16, 32, 48].map(|c| _mm512_loadu_ps(vp.add(j * DH + c)));
            for (i, acc) in acc.iter_mut().enumerate() {
                let x = _mm512_set1_ps(*pp.add(i * t + j));
                for c in 0..4 {
                    acc[c] = _mm512_fmadd_ps(x, v[c], acc[c]);
                }
            }
        }
    }
    for (i, acc) in acc.iter().enumerate() {
        for (c, &a) in acc.iter().enumerate() {
            // SAFETY: row `r0 + i` of `out` has 64 floats.
            unsafe { _mm512_storeu_ps(op.add(i * DH + 16 * c), a) };
        }
    }
}

fn mask(lanes: usize) -> __mmask16 {
    ((1u32 << lanes) - 1) as __mmask16
}

/// Softmax of `rows` rows of `t` scores in place, sixteen lanes a step, with exactly the values
/// of `kernels`'s AVX2 softmax row by row: the same `exp`, and its sum added in the same
/// order (blocks of eight into one register of eight, the last `t % 8` one by one), so the
/// text decoded does not move.
///
/// # Safety
/// The CPU has AVX-512 F.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn softmax_rows(s: &mut [f32], rows: usize, t: usize) {
    assert!(s.len() >= rows * t, "softmax sizes");
    let (full8, full16) = (t / 8 * 8, t / 16 * 16);
    let rest = mask(t - full16);
    for row in s.chunks_exact_mut(t).take(rows) {
        let p = row.as_mut_ptr();
        // SAFETY: every load and store is of lanes `j..j + 16 ≤ full16` or the masked lanes
        // `full16..t` of this row.
        let sum = unsafe {
            let mut mv = _mm512_mask_loadu_ps(_mm512_set1_ps(f32::NEG_INFINITY), rest, p.add(full16));
            for j in (0..full16).step_by(16) {
                mv = _mm512_max_ps(mv, _mm512_loadu_ps(p.add(j)));
            }
            let mx = _mm512_set1_ps(_mm512_reduce_max_ps(mv));
            let mut sv = _mm256_setzero_ps();
            for j in (0..full16).step_by(16) {
                let e = exp16(_mm512_sub_ps(_mm512_loadu_ps(p.add(j)), mx));
                _mm512_storeu_ps(p.add(j), e);
                sv = _mm256_add_ps(sv, low8(e));
                sv = _mm256_add_ps(sv, high8(e));
            }
            let e = exp16(_mm512_sub_ps(_mm512_mask_loadu_ps(mx, rest, p.add(full16)), mx));
            _mm512_mask_storeu_ps(p.add(full16), rest, e);
            if full8 > full16 {
                sv = _mm256_add_ps(sv, low8(e));
            }
            super::avx2::hsum(sv) + row[full8..].iter().sum::<f32>()
        };
        let inv = 1.0 / sum;
        let iv = _mm512_set1_ps(inv);
        for j in (0..full16).step_by(16) {
            // SAFETY: lanes `j..j + 16 ≤ full16` of this row.
            unsafe { _mm512_storeu_ps(p.add(j), _mm512_mul_ps(_mm512_loadu_ps(p.add(j)), iv)) };
        }
        row[full16..].iter_mut().for_each(|v| *v *= inv);
    }
}

/// Lanes 0–7 of a register.
#[target_feature(enable = "avx512f")]
#[inline]
fn low8(v: __m512) -> __m256 {
    _mm512_castps512_ps256(v)
}

/// Lanes 8–15 of a register.
#[target_feature(enable = "avx512f")]
#[inline]
fn high8(v: __m512) -> __m256 {
    _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(v)))
}

/// `exp` of sixteen lanes: the steps and constants (`kernels::expf`) of the AVX2 `exp8`, so
/// both give the same values.
#[target_feature(enable = "avx512f")]
#[inline]
fn exp16(x: __m512) -> __m512 {
    use super::expf::*;
    let x = _mm512_max_ps(_mm512_min_ps(x, _mm512_set1_ps(MAX)), _mm512_set1_ps(MIN));
    let n = _mm512_roundscale_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(_mm512_mul_ps(
        x,
        _mm512_set1_ps(std::f32::consts::LOG2_E),
    ));
    let r = _mm512_fnmadd_ps(n, _mm512_set1_ps(LN2_LO), _mm512_fnmadd_ps(n, _mm512_set1_ps(LN2_HI), x));
    let mut y = _mm512_set1_ps(POLY[0]);
    for c in &POLY[1..] {
        y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(*c));
    }
    y = _mm512_fmadd_ps(y, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0)));
    let e = _mm512_slli_epi32::<23>(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)));
    _mm512_mul_ps(y, _mm512_castsi512_ps(e))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn exp16_is_the_avx2_exp8_bit_for_bit(xs in proptest::array::uniform16(-100.0f32..100.0)) {
            // Sixteen lanes against two calls of the eight-lane `exp`, clamps included: the
            // softmax of `softmax_rows` must give the AVX2 softmax's bits.
            if available() && crate::simd_available() {
                let (mut wide, mut narrow) = ([0.0f32; 16], [0.0f32; 16]);
                // SAFETY: AVX-512 F, AVX2 and FMA detected just above; every pointer is to 16
                // floats, or to 8 from the start or the middle of 16.
                unsafe {
                    _mm512_storeu_ps(wide.as_mut_ptr(), exp16(_mm512_loadu_ps(xs.as_ptr())));
                    for half in [0, 8] {
                        let e = crate::avx2::exp8(_mm256_loadu_ps(xs.as_ptr().add(half)));
                        _mm256_storeu_ps(narrow.as_mut_ptr().add(half), e);
                    }
                }
                for (i, (w, n)) in wide.iter().zip(&narrow).enumerate() {
                    prop_assert_eq!(w.to_bits(), n.to_bits(), "exp({}) lane {}: {} vs {}", xs[i], i, w, n);
                }
            }
        }
    }
}
