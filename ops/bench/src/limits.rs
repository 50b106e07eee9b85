//! This machine's limits, measured in the same run as the benchmark they judge: how many bytes
//! per second all cores can stream from memory (the decoder's ceiling: each step reads the
//! decoder's weights once), and how many single-precision floating-point operations per second
//! they can do (the encoder's ceiling: large f32 matrix products).
//!
//! Peak flops come from a register-resident loop of fused multiply-adds on independent
//! accumulators (AVX-512 or AVX2+FMA when the CPU has them, checked at run time; plain scalar
//! code otherwise), not from a large GEMM: the loop touches no memory, so it measures the
//! arithmetic units' ceiling itself, which no kernel can exceed, while a GEMM's figure depends
//! on its blocking and would be the `gemm` crate's, the very code the encoder's share is meant
//! to judge.

use std::hint::black_box;
use std::time::Instant;

/// Bytes per second that `threads` threads read together, streaming over `buffer_bytes` of
/// memory (one slice each, summed); the best of `reps` passes after one untimed pass. Make the
/// buffer far larger than the last-level cache (the benchmark uses 1 GiB).
pub fn memory_bandwidth(threads: usize, buffer_bytes: usize, reps: usize) -> f64 {
    let threads = threads.max(1);
    let words = (buffer_bytes / 8).max(threads * 64);
    // Written once here, so every page is mapped before the timing.
    let buffer: Vec<u64> = (0..words as u64).collect();
    let per_thread = words.div_ceil(threads);
    let pass = || {
        std::thread::scope(|s| {
            let handles: Vec<_> = buffer.chunks(per_thread).map(|part| s.spawn(move || sum(part))).collect();
            handles.into_iter().map(|h| h.join().unwrap_or(0)).fold(0u64, u64::wrapping_add)
        })
    };
    black_box(pass());
    let mut best = f64::INFINITY;
    for _ in 0..reps.max(1) {
        let start = Instant::now();
        black_box(pass());
        best = best.min(start.elapsed().as_secs_f64());
    }
    (words * 8) as f64 / best
}

/// The wrapping sum of `words` with eight independent accumulators (vectorized by the compiler,
/// so the loop waits on memory, not on additions).
fn sum(words: &[u64]) -> u64 {
    let mut acc = [0u64; 8];
    let chunks = words.chunks_exact(8);
    let rest: u64 = chunks.remainder().iter().fold(0, |a, &w| a.wrapping_add(w));
    for c in chunks {
        for i in 0..8 {
            acc[i] = acc[i].wrapping_add(c[i]);
        }
    }
    acc.iter().fold(rest, |a, &w| a.wrapping_add(w))
}

/// Which instructions [`peak_flops`] used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FmaKind {
    Avx512,
    Avx2Fma,
    Scalar,
}

impl std::fmt::Display for FmaKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FmaKind::Avx512 => "AVX-512 FMA",
            FmaKind::Avx2Fma => "AVX2 FMA",
            FmaKind::Scalar => "scalar",
        })
    }
}

/// Independent accumulators per thread: enough to cover the FMA latency (4–5 cycles) on two
/// FMA ports.
const ACCUMULATORS: usize = 12;

/// Single-precision flops per second (a multiply-add counts 2) of `threads` threads each
/// running `iterations` rounds of twelve independent multiply-adds in registers; the
/// best of three timed runs after one untimed.
pub fn peak_flops(threads: usize, iterations: u64) -> (f64, FmaKind) {
    let threads = threads.max(1);
    let kind = fma_kind();
    let lanes = match kind {
        FmaKind::Avx512 => 16,
        FmaKind::Avx2Fma => 8,
        FmaKind::Scalar => 1,
    };
    let run = || {
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads).map(|_| s.spawn(move || fma_loop(kind, iterations))).collect();
            handles.into_iter().map(|h| h.join().unwrap_or(0.0)).sum::<f32>()
        })
    };
    black_box(run());
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let start = Instant::now();
        black_box(run());
        best = best.min(start.elapsed().as_secs_f64());
    }
    let flops = threads as f64 * iterations as f64 * (ACCUMULATORS * lanes * 2) as f64;
    (flops / best, kind)
}

fn fma_kind() -> FmaKind {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            return FmaKind::Avx512;
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            return FmaKind::Avx2Fma;
        }
    }
    FmaKind::Scalar
}

fn fma_loop(kind: FmaKind, iterations: u64) -> f32 {
    #[cfg(target_arch = "x86_64")]
    match kind {
        // SAFETY: `fma_kind` chose this only after `is_x86_feature_detected!("avx512f")`.
        FmaKind::Avx512 => return unsafe { x86::fma_avx512(iterations) },
        // SAFETY: `fma_kind` chose this only after detecting both avx2 and fma.
        FmaKind::Avx2Fma => return unsafe { x86::fma_avx2(iterations) },
        FmaKind::Scalar => {}
    }
    let _ = kind;
    fma_scalar(iterations)
}

/// acc = acc·m + a on [`ACCUMULATORS`] scalars (a multiply and an add where the target has no
/// FMA: the fallback's figure is a lower bound).
fn fma_scalar(iterations: u64) -> f32 {
    let (m, a) = (black_box(0.999_999_f32), black_box(1e-7_f32));
    let mut acc = [1.0f32; ACCUMULATORS];
    for _ in 0..iterations {
        for x in &mut acc {
            *x = *x * m + a;
        }
    }
    acc.iter().sum()
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;
    use std::hint::black_box;

    use super::ACCUMULATORS;

    /// acc = acc·m + a on [`ACCUMULATORS`] registers of 8 floats: every instruction in the loop
    /// is an FMA, and no two in a row depend on each other.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn fma_avx2(iterations: u64) -> f32 {
        let m = _mm256_set1_ps(black_box(0.999_999));
        let a = _mm256_set1_ps(black_box(1e-7));
        let mut acc = [_mm256_set1_ps(1.0); ACCUMULATORS];
        for _ in 0..iterations {
            for x in &mut acc {
                *x = _mm256_fmadd_ps(*x, m, a);
            }
        }
        let mut total = _mm256_setzero_ps();
        for x in acc {
            total = _mm256_add_ps(total, x);
        }
        let mut lanes = [0f32; 8];
        // SAFETY: `lanes` is 8 floats, the 32 bytes an unaligned store writes.
        unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), total) };
        lanes.iter().sum()
    }

    /// The same on registers of 16 floats.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn fma_avx512(iterations: u64) -> f32 {
        let m = _mm512_set1_ps(black_box(0.999_999));
        let a = _mm512_set1_ps(black_box(1e-7));
        let mut acc = [_mm512_set1_ps(1.0); ACCUMULATORS];
        for _ in 0..iterations {
            for x in &mut acc {
                *x = _mm512_fmadd_ps(*x, m, a);
            }
        }
        let mut total = _mm512_setzero_ps();
        for x in acc {
            total = _mm512_add_ps(total, x);
        }
        _mm512_reduce_add_ps(total)
    }
}
