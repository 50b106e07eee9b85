//! Attention's two products with bfloat16 factors for heads of width 64, on AVX-512 BF16:
//! the decoder's cross-attention under int8.
//!
//! Every decoder step reads each window's cross-attention keys and values (37 MB for base in
//! f32, half the 75 MB of its int8 weights and logits). `vdpbf16ps` multiplies two pairs of
//! bf16 values into each f32 lane, twice the multiply-adds of an f32 FMA per instruction,
//! from half the bytes. Only the factors are rounded (8 significant bits); every sum is f32.
//! The encoder's self-attention does not use them: there the rounding moved the encoder's
//! output three times further from CTranslate2's int8 output than the int8 layers alone do.
//!
//! The layouts are `attention512`'s with a pair of bf16 in each 32-bit lane, low half first:
//! a head's keys in blocks of 32 positions, `[32 dimension pairs][32 keys]` (a lane holds one
//! key's dimensions `2c, 2c + 1`); its values `[⌈t/2⌉ position pairs][64 dimensions]` (a lane
//! holds one dimension of positions `2m, 2m + 1`); queries and attention weights in natural
//! order, so a lane of theirs pairs with a lane of the keys or values.

use std::arch::x86_64::*;

/// Head width the kernels take.
pub(super) const DH: usize = 64;
/// Dimension pairs of a head.
const PAIRS: usize = DH / 2;
use super::attention512::BLOCK;

/// Whether this CPU runs these kernels (checked once).
pub(super) fn available() -> bool {
    use std::sync::OnceLock;
    static OK: OnceLock<bool> = OnceLock::new();
    *OK.get_or_init(|| is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bf16"))
}

/// `a` and `b` rounded to bf16 (to nearest, ties to even, as `vcvtneps2bf16`), `a` in the low
/// half.
pub(super) fn pair(a: f32, b: f32) -> u32 {
    u32::from(half::bf16::from_f32(a).to_bits()) | (u32::from(half::bf16::from_f32(b).to_bits()) << 16)
}

/// Lanes of one head's keys for `t` positions.
pub(super) fn keys_len(t: usize) -> usize {
    t.div_ceil(BLOCK) * PAIRS * BLOCK
}

/// Index of key `j`'s dimension pair `c` in a head's keys.
pub(super) fn key_index(j: usize, c: usize) -> usize {
    (j / BLOCK) * PAIRS * BLOCK + c * BLOCK + j % BLOCK
}

/// Lanes of one head's values for `t` positions.
pub(super) fn values_len(t: usize) -> usize {
    t.div_ceil(2) * DH
}

/// Lanes of a row of `t` attention weights (the last one padded with a zero when `t` is odd).
pub(super) fn weights_len(t: usize) -> usize {
    t.div_ceil(2)
}

/// `x` rounded to bf16 in natural order, two to a lane of `out` (`⌈x.len()/2⌉` lanes; an odd
/// last value gets a zero beside it).
///
/// # Safety
/// The CPU has AVX-512 F and BF16.
#[target_feature(enable = "avx512f,avx512bf16")]
pub(super) unsafe fn to_pairs(x: &[f32], out: &mut [u32]) {
    assert!(out.len() >= x.len().div_ceil(2), "pairs size");
    let full = x.len() / 16 * 16;
    let op = out.as_mut_ptr().cast::<__m256i>();
    for i in (0..full).step_by(16) {
        // SAFETY: floats `i..i + 16` are inside `x`; lanes `i/2..i/2 + 8` (32 bytes) inside
        // `out`; bf16 vectors are 16-bit integers bit for bit.
        unsafe {
            let h: __m256i = std::mem::transmute(_mm512_cvtneps_pbh(_mm512_loadu_ps(x.as_ptr().add(i))));
            _mm256_storeu_si256(op.add(i / 16), h);
        }
    }
    for (i, lane) in out.iter_mut().enumerate().take(x.len().div_ceil(2)).skip(full / 2) {
        *lane = pair(x[2 * i], x.get(2 * i + 1).copied().unwrap_or(0.0));
    }
}

/// Key `j`'s 64 dimensions (`key`) into a head's keys.
///
/// # Safety
/// The CPU has AVX-512 F and BF16.
#[target_feature(enable = "avx512f,avx512bf16")]
pub(super) unsafe fn put_key(key: &[f32], j: usize, keys: &mut [u32]) {
    let mut lanes = [0u32; PAIRS];
    // SAFETY: the caller's CPU features.
    unsafe { to_pairs(&key[..DH], &mut lanes) };
    for (c, lane) in lanes.into_iter().enumerate() {
        keys[key_index(j, c)] = lane;
    }
}

/// Position pair `m`'s values (`a` for position `2m`, `b` for `2m + 1`, 64 each) as the
/// 64 lanes of `out`.
///
/// # Safety
/// The CPU has AVX-512 F and BF16.
#[target_feature(enable = "avx512f,avx512bf16")]
pub(super) unsafe fn put_values(a: &[f32], b: &[f32], out: &mut [u32]) {
    let (mut la, mut lb) = ([0u32; PAIRS], [0u32; PAIRS]);
    // SAFETY: the caller's CPU features.
    unsafe {
        to_pairs(&a[..DH], &mut la);
        to_pairs(&b[..DH], &mut lb);
    }
    // Lane `c` of a natural-order pair holds dimensions `2c` (low) and `2c + 1` (high).
    for (c, (x, y)) in la.into_iter().zip(lb).enumerate() {
        out[2 * c] = (x & 0xffff) | (y << 16);
        out[2 * c + 1] = (x >> 16) | (y & 0xffff_0000);
    }
}

/// `s[i·t + j] = q_i · k_j` for the `rows` queries of `q` (`[rows][32]` lanes, already
/// scaled) against a head's `t` keys.
///
/// # Safety
/// The CPU has AVX-512 F and BF16.
#[target_feature(enable = "avx512f,avx512bf16")]
pub(super) unsafe fn scores(q: &[u32], rows: usize, keys: &[u32], t: usize, s: &mut [f32]) {
    assert!(q.len() >= rows * PAIRS && keys.len() >= keys_len(t) && s.len() >= rows * t, "scores sizes");
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
/// The CPU has AVX-512 F and BF16; the sizes [`scores`] checks hold and `r0 + R ≤ rows`.
#[target_feature(enable = "avx512f,avx512bf16")]
unsafe fn scores_tile<const R: usize>(q: &[u32], r0: usize, keys: &[u32], t: usize, s: &mut [f32]) {
    assert!((r0 + R) * PAIRS <= q.len() && (r0 + R) * t <= s.len(), "tile rows");
    let (qp, kp, sp) = (q[r0 * PAIRS..].as_ptr(), keys.as_ptr(), s[r0 * t..].as_mut_ptr());
    for b in 0..t.div_ceil(BLOCK) {
        let mut acc = [[_mm512_setzero_ps(); 2]; R];
        // SAFETY: block `b` is inside `keys` (`keys_len(t)` lanes), query row `i < R` of 32
        // lanes inside `q`; bf16 vectors are 32-bit lanes bit for bit.
        unsafe {
            let block = kp.add(b * PAIRS * BLOCK);
            for c in 0..PAIRS {
                let k0: __m512bh = std::mem::transmute(_mm512_loadu_si512(block.add(c * BLOCK).cast()));
                let k1: __m512bh = std::mem::transmute(_mm512_loadu_si512(block.add(c * BLOCK + 16).cast()));
                for (i, acc) in acc.iter_mut().enumerate() {
                    let x: __m512bh = std::mem::transmute(_mm512_set1_epi32(*qp.add(i * PAIRS + c) as i32));
                    acc[0] = _mm512_dpbf16_ps(acc[0], x, k0);
                    acc[1] = _mm512_dpbf16_ps(acc[1], x, k1);
                }
            }
        }
        // SAFETY: `sp` is row `r0` of `s`, which holds rows `r0..r0 + R` of `t` scores.
        unsafe { super::attention512::store_block(&acc, sp, t, b) };
    }
}

/// `out[i] = Σ_j p_ij · v_j` for `rows` rows of weights (`p`, rows of [`weights_len`]`(t)`
/// lanes) over a head's `t` values; `out` is `[rows][64]`.
///
/// # Safety
/// The CPU has AVX-512 F and BF16.
#[target_feature(enable = "avx512f,avx512bf16")]
pub(super) unsafe fn weighted_values(p: &[u32], rows: usize, values: &[u32], t: usize, out: &mut [f32]) {
    let lanes = weights_len(t);
    assert!(p.len() >= rows * lanes && values.len() >= values_len(t) && out.len() >= rows * DH, "values sizes");
    for r0 in (0..rows).step_by(6) {
        // SAFETY: the CPU features are the caller's promise; sizes are checked above.
        unsafe {
            match rows - r0 {
                1 => values_tile::<1>(p, r0, values, lanes, out),
                2 => values_tile::<2>(p, r0, values, lanes, out),
                3 => values_tile::<3>(p, r0, values, lanes, out),
                4 => values_tile::<4>(p, r0, values, lanes, out),
                5 => values_tile::<5>(p, r0, values, lanes, out),
                _ => values_tile::<6>(p, r0, values, lanes, out),
            }
        }
    }
}

/// Rows `r0..r0 + R` of [`weighted_values`], over `pairs` position pairs.
///
/// # Safety
/// The CPU has AVX-512 F and BF16; the sizes [`weighted_values`] checks hold and
/// `r0 + R ≤ rows`.
#[target_feature(enable = "avx512f,avx512bf16")]
unsafe fn values_tile<const R: usize>(p: &[u32], r0: usize, values: &[u32], pairs: usize, out: &mut [f32]) {
    assert!((r0 + R) * pairs <= p.len() && (r0 + R) * DH <= out.len(), "tile rows");
    let (pp, vp, op) = (p[r0 * pairs..].as_ptr(), values.as_ptr(), out[r0 * DH..].as_mut_ptr());
    let mut acc = [[_mm512_setzero_ps(); 4]; R];
    for m in 0..pairs {
        // SAFETY: value pair `m < pairs` (64 lanes) is inside `values`; weight lane `(i, m)`
        // with `i < R` inside `p`; bf16 vectors are 32-bit lanes bit for bit.
        unsafe {
            let v: [__m512bh; 4] =
                [0, 16, 32, 48].map(|c| std::mem::transmute(_mm512_loadu_si512(vp.add(m * DH + c).cast())));
            for (i, acc) in acc.iter_mut().enumerate() {
                let x: __m512bh = std::mem::transmute(_mm512_set1_epi32(*pp.add(i * pairs + m) as i32));
                for c in 0..4 {
                    acc[c] = _mm512_dpbf16_ps(acc[c], x, v[c]);
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
