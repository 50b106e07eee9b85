//! Memory mode of `scribe-bench asr --memory-hours H`: the peak resident memory of one
//! `scribe transcribe` of an H-hour recording built from the corpus's real clips (joined by
//! 0.7 s pauses), per model. The engine streams the media, so the peak should not grow with the
//! recording's length; the figure is printed for comparison with another build's.
//!
//! The peak is the child's own `ru_maxrss`, read by `wait4` when it exits (exact, no sampling).

use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, bail};
use scribe_bench::corpus::real_english_clips;
use scribe_bench::long_recording::{self, GAP_S};

use super::{BenchAsrArgs, Setup};

pub fn run(args: &BenchAsrArgs, setup: &Setup) -> anyhow::Result<()> {
    let hours = args.memory_hours.unwrap_or(2.0);
    let (_, clips) = real_english_clips(&setup.corpus)?;
    let scribe = crate::scribe_exe()?;
    crate::env::in_scratch_dir(args.scratch_dir.clone(), "asr-memory", |dir| {
        let path = dir.join(format!("long_{hours}h.wav"));
        let rec = long_recording::build(&setup.corpus, &clips, hours * 3600.0, GAP_S, &path)?;
        println!(
            "recording: {:.0} s ({} clips), {} MB on disk",
            rec.duration_s(),
            rec.clips.len(),
            std::fs::metadata(&path)?.len() >> 20
        );
        println!("{:<18}{:>12}{:>10}{:>8}", "model", "peak RSS MB", "wall s", "RTF");
        for model in &args.models {
            let model_dir = setup.models_dir.join(model);
            let mut cmd = Command::new(&scribe);
            cmd.arg("transcribe").arg(&path).arg("--model").arg(&model_dir).arg("--language").arg("en");
            let start = Instant::now();
            let peak_kb = peak_rss_kb(cmd).with_context(|| format!("scribe transcribe with {model}"))?;
            let wall = start.elapsed().as_secs_f64();
            println!("{model:<18}{:>12.0}{wall:>10.1}{:>8.3}", peak_kb as f64 / 1024.0, wall / rec.duration_s());
        }
        Ok(())
    })
}

/// Runs `cmd` (output discarded) and returns its peak resident memory in KiB.
fn peak_rss_kb(mut cmd: Command) -> anyhow::Result<u64> {
    let child =
        cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().context("cannot start scribe")?;
    let pid = child.id() as libc::pid_t;
    // The stderr pipe is drained on a thread so a chatty child cannot block on a full pipe.
    let mut stderr = child.stderr.expect("piped");
    let drain = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
        text
    });
    let mut status = 0;
    // SAFETY: an all-zero `rusage` is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our child, not yet waited for (the `Child` is never waited on: it is
    // consumed above); `status` and `usage` are valid for writes for the call's duration.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    if waited != pid {
        bail!("wait4 failed: {}", std::io::Error::last_os_error());
    }
    let stderr = drain.join().unwrap_or_default();
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        bail!("exited with status {status}: {}", stderr.trim());
    }
    // Linux gives ru_maxrss in KiB.
    Ok(usage.ru_maxrss as u64)
}
