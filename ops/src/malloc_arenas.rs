//! The process allocates from one glibc malloc arena. By default glibc gives each thread that
//! contends for the heap an arena of its own (up to 8 per core); the engine's encoder and
//! decoder threads free buffers of tens of megabytes in one arena and allocate them in another,
//! and the arenas' free space is never shared. Measured with `scribe-bench asr --memory-hours
//! 0.1` (base, float16): peak resident memory 510 MB with glibc's default, 382 MB with one
//! arena (mimalloc: 493 MB; mimalloc without purge delay: 427 MB). The threads allocate a few
//! large buffers per layer, not in their inner loops, so the shared lock costs little: a 601 s
//! recording took 135–136 s with one arena and 132–148 s with glibc's default, on a quiet
//! machine.
//!
//! An operator who sets `MALLOC_ARENA_MAX` keeps their own choice.

/// Limits the process to one malloc arena, unless `MALLOC_ARENA_MAX` says otherwise. Call it
/// first thing in `main`, before any thread starts.
pub fn use_one_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: mallopt only changes glibc's allocator settings; it is called before any
        // other thread exists, and M_ARENA_MAX with a positive value is a documented option.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 1);
        }
    }
}
