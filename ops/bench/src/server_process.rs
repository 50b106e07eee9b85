//! A `scribe serve` child process for the benchmarks: this same binary on a free loopback port,
//! its stderr in a file, its address and (on a first start) its admin key read from stdout.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

/// A running server. Dropping it kills the process.
pub struct ServerProcess {
    child: Child,
    /// `host:port` it listens on.
    pub addr: String,
    /// The key printed on a first start; empty on later starts.
    pub first_key: String,
}

impl ServerProcess {
    /// Starts `scribe serve --data-dir DATA_DIR --models-dir MODELS_DIR EXTRA...` and waits
    /// until it prints the address it listens on.
    pub fn start(data_dir: &Path, models_dir: &Path, extra: &[String], stderr: &Path) -> anyhow::Result<ServerProcess> {
        let exe = crate::scribe_exe()?;
        let log = File::options().create(true).append(true).open(stderr)?;
        let mut child = Command::new(exe)
            .args(["serve", "--bind", "127.0.0.1", "--port", "0"])
            .arg("--data-dir")
            .arg(data_dir)
            .arg("--models-dir")
            .arg(models_dir)
            .args(extra)
            // The benchmarks read some of its info lines; SCRIBE_NODE_LOG adds directives
            // (e.g. `scribe_actors=debug`) for looking into a failed run.
            .env(
                "SCRIBE_LOG",
                std::env::var("SCRIBE_NODE_LOG").map_or_else(|_| "info".to_owned(), |extra| format!("info,{extra}")),
            )
            // The benchmark's own embedded store, never the operator's configured one.
            .env_remove("SCRIBE_EVENT_STORE")
            .env_remove("SCRIBE_CONFIG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .context("starting scribe serve")?;
        let stdout = child.stdout.take().expect("piped stdout");
        let mut lines = BufReader::new(stdout).lines();
        let mut first_key = String::new();
        let mut addr = None;
        while let Some(line) = lines.next() {
            let line = line?;
            if line.contains("Its API key, shown only this once:") {
                first_key = lines.next().transpose()?.map(|k| k.trim().to_owned()).unwrap_or_default();
            } else if let Some(rest) = line.strip_prefix("scribe listening on http://") {
                addr = rest.split_whitespace().next().map(str::to_owned);
                break;
            }
        }
        // Keep draining stdout so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        let mut server = ServerProcess { child, addr: addr.unwrap_or_default(), first_key };
        if server.addr.is_empty() {
            server.kill();
            bail!("scribe serve did not start (see {})", stderr.display());
        }
        Ok(server)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL: the crash a power cut or the OOM killer would cause.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM, then waits up to `grace` for a clean exit (killing it after that).
    pub fn terminate(&mut self, grace: Duration) -> anyhow::Result<()> {
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let deadline = Instant::now() + grace;
        loop {
            if let Some(status) = self.child.try_wait()? {
                if !status.success() {
                    bail!("scribe serve exited with {status} after SIGTERM");
                }
                return Ok(());
            }
            if Instant::now() > deadline {
                self.kill();
                bail!("scribe serve did not stop within {grace:?} of SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.kill();
    }
}
