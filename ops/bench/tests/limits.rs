//! The machine limits `scribe-bench asr` divides by: plausible positive figures, whatever the
//! machine (no timing is asserted, only orders of magnitude no computer is outside of).

use scribe_bench::limits::{FmaKind, memory_bandwidth, peak_flops};

#[test]
fn memory_bandwidth_is_a_plausible_positive_rate() {
    // 64 MiB: larger than the caches of most machines, small enough for a test.
    let bytes_per_s = memory_bandwidth(2, 64 << 20, 2);
    assert!(bytes_per_s.is_finite(), "{bytes_per_s}");
    assert!((1e8..1e13).contains(&bytes_per_s), "{:.3} GB/s", bytes_per_s / 1e9);
}

#[test]
fn peak_flops_is_a_plausible_positive_rate_on_the_best_instructions() {
    let (flops, kind) = peak_flops(2, 2_000_000);
    assert!(flops.is_finite(), "{flops}");
    assert!((1e8..1e14).contains(&flops), "{:.3} GFLOP/s with {kind}", flops / 1e9);
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        assert_ne!(kind, FmaKind::Scalar, "the CPU has FMA units: the loop uses them");
    }
    let _ = FmaKind::Scalar;
}
