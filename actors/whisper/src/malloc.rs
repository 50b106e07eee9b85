//! The glibc malloc settings the engine is built and measured for. Both binaries that run it
//! (`scribe` and `scribe-bench`) call [`configure`] first thing in `main`, so the benchmarks
//! measure what the service runs.
//!
//! **One arena.** By default glibc gives each thread that contends for the heap an arena of
//! its own (up to 8 per core); the engine's encoder and decoder threads free buffers of tens of
//! megabytes in one arena and allocate them in another, and the arenas' free space is never
//! shared. Measured with `scribe-bench asr --memory-hours 0.1` (base, float16): peak resident
//! memory 510 MB with glibc's default, 382 MB with one arena (mimalloc: 493 MB; mimalloc
//! without purge delay: 427 MB). The threads allocate a few large buffers per layer, not in
//! their inner loops, so the shared lock costs little: a 601 s recording took 135–136 s with
//! one arena and 132–148 s with glibc's default, on a quiet machine.
//!
//! **Freed buffers stay in the heap.** An encoder window allocates a few dozen buffers of
//! 1–25 MB (a layer's activations). glibc maps a buffer above its mmap threshold on its own
//! and unmaps it when freed, and gives the heap's free top back to the kernel above its trim
//! threshold; the next window then takes the same memory back one 4 KiB page fault at a
//! time. glibc raises both thresholds after the first large buffer is freed, but a
//! transcription's end frees the whole working set, the top is trimmed, and the next
//! transcription starts cold: a 30 s window of base took 0.46 s to encode in a run of short
//! clips against 0.32 s inside a long recording. With the mmap threshold at 32 MiB (glibc's
//! own ceiling for it on 64-bit) and the trim threshold at 512 MiB, every window encodes in
//! 0.31–0.34 s; the price is that up to 512 MB of freed heap stay mapped between
//! transcriptions (the peak is unchanged, see the README).
//!
//! An operator who sets `MALLOC_ARENA_MAX`, `MALLOC_MMAP_THRESHOLD_`, `MALLOC_TRIM_THRESHOLD_`
//! or `GLIBC_TUNABLES` keeps their own choice.

/// Buffers up to this size come from the heap (glibc's ceiling for its dynamic threshold).
const MMAP_THRESHOLD: usize = 32 << 20;
/// Free heap kept at the top before it is given back to the kernel.
const TRIM_THRESHOLD: usize = 512 << 20;

/// Applies the settings above, each unless the operator's environment sets it. Call it first
/// thing in `main`, before any thread starts.
pub fn configure() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let unset = |name: &str| std::env::var_os(name).is_none();
        // SAFETY: mallopt only changes glibc's allocator settings; it is called before any
        // other thread exists, and each option is documented with a positive value.
        unsafe {
            if unset("MALLOC_ARENA_MAX") {
                libc::mallopt(libc::M_ARENA_MAX, 1);
            }
            if unset("GLIBC_TUNABLES") && unset("MALLOC_MMAP_THRESHOLD_") && unset("MALLOC_TRIM_THRESHOLD_") {
                libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD as libc::c_int);
                libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD as libc::c_int);
            }
        }
    }
}
