//! What the server benchmarks share: a scratch directory removed afterwards, and an account
//! with ample credit on a fresh data directory.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

/// Runs `bench` in `<base or the temp dir>/scribe-bench-<name>-<pid>`, then removes that directory
/// whatever the outcome.
pub fn in_scratch_dir(
    base: Option<PathBuf>,
    name: &str,
    bench: impl FnOnce(&Path) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let work = base.unwrap_or_else(std::env::temp_dir).join(format!("scribe-bench-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&work).with_context(|| format!("cannot create {}", work.display()))?;
    let result = bench(&work);
    if let Err(e) = std::fs::remove_dir_all(&work) {
        eprintln!("warning: could not remove {}: {e}", work.display());
    }
    result
}

/// Opens the account `bench` with ample credit in `data_dir` (`scribe keys create`) and returns
/// its key.
pub fn bench_key(data_dir: &Path) -> anyhow::Result<String> {
    std::fs::create_dir_all(data_dir)?;
    let output = Command::new(crate::scribe_exe()?)
        .args(["keys", "create", "--user", "bench", "--initial-credit-cents", "1000000000", "--data-dir"])
        .arg(data_dir)
        // The benchmark's own embedded store, never the operator's configured one.
        .env_remove("SCRIBE_EVENT_STORE")
        .env_remove("SCRIBE_CONFIG")
        .output()
        .context("running scribe keys create")?;
    if !output.status.success() {
        bail!("scribe keys create failed: {}", String::from_utf8_lossy(&output.stderr));
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
}
