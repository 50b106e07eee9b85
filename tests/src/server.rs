//! A real `scribe serve` process for one test: its own temporary data directory, a free loopback
//! port, stdout and stderr captured to files (shown when something fails), the admin key it
//! prints on first start, and `stop`/`restart` on the same data directory. Other subcommands
//! (`keys create`, `replay`, `rebuild`) run against the same data directory through [`TestServer::scribe`].

use std::fs::File;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

use crate::paths;

/// How long a server may take to load the speech model and listen.
const START_TIMEOUT: Duration = Duration::from_secs(180);
/// How long a stopped server may take to exit after SIGTERM (its grace period is 8 s).
const STOP_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a key issued beside a running server may take to reach its read model.
/// The line `scribe serve` prints before the first-start key.
const KEY_BANNER: &str = "Its API key, shown only this once:";
const LISTENING: &str = "scribe listening on http://";

/// How to start the server.
#[derive(Debug, Clone)]
pub struct Options {
    /// `--allow-private-urls`: tests fetch from and call back to loopback, so on by default.
    pub allow_private_urls: bool,
    /// More `scribe serve` arguments (e.g. `--task-lease 3s`).
    pub extra_args: Vec<String>,
    /// `SCRIBE_LOG` (default `info`).
    pub log_filter: Option<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options { allow_private_urls: true, extra_args: Vec::new(), log_filter: None }
    }
}

/// A running (or stopped) `scribe serve`. Dropping it kills the process and removes its data.
pub struct TestServer {
    home: TempDir,
    options: Options,
    child: Option<Child>,
    addr: Option<SocketAddr>,
    admin_key: String,
    starts: u32,
    http: reqwest::blocking::Client,
}

impl TestServer {
    /// Starts a server on a fresh data directory and waits until `/health` answers.
    pub fn start() -> TestServer {
        TestServer::start_with(Options::default())
    }

    /// A server whose speech model runs in float16 instead of the default int8. Whisper base in
    /// float16 hears the JFK clip as two segments (a pause after "for you,"), in int8 as one: the
    /// browser tests that move between segments start from the two-segment document.
    pub fn start_float16() -> TestServer {
        TestServer::start_with(Options {
            extra_args: vec!["--compute-type".into(), "float16".into()],
            ..Options::default()
        })
    }

    /// A server whose direct jobs use the speech model `name` of the models directory (e.g.
    /// `whisper-tiny.en`, the cheapest, where the model does not matter).
    pub fn start_with_model(name: &str) -> TestServer {
        let model = paths::models_dir().join(name);
        TestServer::start_with(Options {
            extra_args: vec!["--model".into(), model.to_str().expect("a UTF-8 models path").into()],
            ..Options::default()
        })
    }

    pub fn start_with(options: Options) -> TestServer {
        let home = tempfile::Builder::new().prefix("scribe-test-").tempdir().expect("a temp dir");
        std::fs::create_dir_all(home.path().join("data")).expect("the data dir");
        // Owner-only, as the server wants it (it repairs and warns about anything else).
        std::fs::set_permissions(home.path().join("data"), std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .expect("the data dir is ours");
        let http =
            reqwest::blocking::Client::builder().timeout(Duration::from_secs(120)).build().expect("an HTTP client");
        let mut server =
            TestServer { home, options, child: None, addr: None, admin_key: String::new(), starts: 0, http };
        server.launch();
        server
    }

    /// The admin account's API key, printed on the first start.
    pub fn key(&self) -> &str {
        &self.admin_key
    }

    /// `http://127.0.0.1:PORT` + `path` (e.g. `/api/jobs`).
    pub fn url(&self, path: &str) -> String {
        let addr = self.addr.expect("the server is running");
        format!("http://{addr}{path}")
    }

    /// `ws://127.0.0.1:PORT` + `path` (e.g. `/api/real-time`).
    pub fn ws_url(&self, path: &str) -> String {
        let addr = self.addr.expect("the server is running");
        format!("ws://{addr}{path}")
    }

    /// The listening address.
    pub fn addr(&self) -> SocketAddr {
        self.addr.expect("the server is running")
    }

    pub fn data_dir(&self) -> PathBuf {
        self.home.path().join("data")
    }

    /// The server's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The blocking HTTP client the helpers use (120 s timeout).
    pub fn http(&self) -> &reqwest::blocking::Client {
        &self.http
    }

    /// Stops the server with SIGTERM and waits for it to exit (killing it if it does not).
    pub fn stop(&mut self) {
        let Some(mut child) = self.child.take() else { return };
        self.addr = None;
        let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
        let deadline = Instant::now() + STOP_TIMEOUT;
        loop {
            match child.try_wait() {
                Ok(Some(status)) => {
                    assert!(status.success(), "scribe serve exited with {status} after SIGTERM\n{}", self.logs());
                    return;
                }
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!("scribe serve did not stop within {STOP_TIMEOUT:?} of SIGTERM\n{}", self.logs());
                }
            }
        }
    }

    /// Kills the server with SIGKILL (a crash: nothing is flushed or finished) and starts it
    /// again on the same data directory.
    pub fn crash_and_restart(&mut self) {
        self.kill();
        self.launch();
    }

    /// [`TestServer::crash_and_restart`] on the same port, so that a client's retry reaches the
    /// new process.
    pub fn crash_and_restart_on_the_same_port(&mut self) {
        let port = self.addr().port();
        self.kill();
        self.launch_on(port);
    }

    /// SIGKILL, and the process reaped.
    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            self.addr = None;
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Stops the server and starts it again on the same data directory (a new port).
    pub fn restart(&mut self) {
        self.stop();
        self.launch();
    }

    /// Runs `scribe ARGS --data-dir <this server's data dir>` and returns what it printed.
    pub fn scribe(&self, args: &[&str]) -> Output {
        let data_dir = self.data_dir();
        Command::new(paths::scribe_bin())
            .args(args)
            .arg("--data-dir")
            .arg(&data_dir)
            .env("SCRIBE_MODELS_DIR", paths::models_dir())
            .stdin(Stdio::null())
            .output()
            .expect("running the scribe binary")
    }

    /// Like [`TestServer::scribe`], but the command must succeed; returns its stdout.
    pub fn scribe_ok(&self, args: &[&str]) -> String {
        let out = self.scribe(args);
        assert!(
            out.status.success(),
            "scribe {args:?} failed with {}\nstdout: {}\nstderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Issues a key for `user` with `scribe keys create` (opening the account with
    /// `initial_credit_cents`, or the default credit) and, if the server runs, waits until the
    /// server accepts it.
    pub fn create_key(&self, user: &str, initial_credit_cents: Option<u64>) -> String {
        let credit = initial_credit_cents.map(|c| c.to_string());
        let mut args = vec!["keys", "create", "--user", user];
        if let Some(c) = &credit {
            args.extend(["--initial-credit-cents", c.as_str()]);
        }
        let stdout = self.scribe_ok(&args);
        let key = stdout.trim().to_owned();
        assert!(!key.is_empty() && !key.contains(char::is_whitespace), "scribe keys create printed {stdout:?}");
        if self.addr.is_some() {
            self.wait_for_key(&key);
        }
        key
    }

    /// Issues a key for a staff account (`role` transcriber or translator, working in
    /// `languages`, empty for all) and waits until the server accepts it.
    pub fn create_staff_key(&self, user: &str, role: &str, languages: &[&str]) -> String {
        let joined = languages.join(",");
        let mut args = vec!["keys", "create", "--user", user, "--role", role];
        if !languages.is_empty() {
            args.extend(["--languages", joined.as_str()]);
        }
        let key = self.scribe_ok(&args).trim().to_owned();
        if self.addr.is_some() {
            self.wait_for_key(&key);
        }
        key
    }

    /// Checks that `key`, just printed by `scribe keys create` beside the running server, is
    /// accepted by the very first request (the server catches up with the log on a key it does
    /// not know yet).
    pub fn wait_for_key(&self, key: &str) {
        let status = self
            .http
            .get(self.url("/api/glossary"))
            .query(&[("apiKey", key)])
            .send()
            .expect("GET /api/glossary")
            .status()
            .as_u16();
        assert_ne!(status, 401, "the server refused a key `scribe keys create` had printed\n{}", self.logs());
    }

    /// Everything the server printed so far (every start), for failure messages.
    pub fn logs(&self) -> String {
        let mut text = String::new();
        for n in 1..=self.starts {
            for stream in ["out", "err"] {
                let path = self.log_path(n, stream);
                let content = std::fs::read_to_string(&path).unwrap_or_default();
                let tail: String = tail(&content, 60);
                text.push_str(&format!("--- scribe serve #{n} std{stream} (last lines) ---\n{tail}\n"));
            }
        }
        text
    }

    /// Everything the server printed on stdout and stderr, every start, whole.
    pub fn full_logs(&self) -> String {
        let mut text = String::new();
        for n in 1..=self.starts {
            for stream in ["out", "err"] {
                text.push_str(&std::fs::read_to_string(self.log_path(n, stream)).unwrap_or_default());
            }
        }
        text
    }

    fn log_path(&self, start: u32, stream: &str) -> PathBuf {
        self.home.path().join(format!("serve-{start}.std{stream}"))
    }

    fn launch(&mut self) {
        self.launch_on(0);
    }

    /// Starts `scribe serve` on `port` (0: any free port).
    fn launch_on(&mut self, port: u16) {
        self.starts += 1;
        let n = self.starts;
        let stdout = File::create(self.log_path(n, "out")).expect("the stdout log");
        let stderr = File::create(self.log_path(n, "err")).expect("the stderr log");
        let child = Command::new(paths::scribe_bin())
            .arg("serve")
            .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
            .arg("--data-dir")
            .arg(self.data_dir())
            .arg("--models-dir")
            .arg(paths::models_dir())
            .args(["--allow-private-urls", if self.options.allow_private_urls { "true" } else { "false" }])
            .args(&self.options.extra_args)
            .env("SCRIBE_LOG", self.options.log_filter.as_deref().unwrap_or("info"))
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr)
            .spawn()
            .expect("starting scribe serve");
        self.child = Some(child);

        let deadline = Instant::now() + START_TIMEOUT;
        let addr = loop {
            let out = std::fs::read_to_string(self.log_path(n, "out")).unwrap_or_default();
            if let Some(addr) = listening_addr(&out) {
                if n == 1 {
                    self.admin_key = first_start_key(&out)
                        .unwrap_or_else(|| panic!("no first-start key on stdout:\n{out}\n{}", self.logs()));
                }
                break addr;
            }
            if let Some(status) = self.child.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                self.child = None;
                panic!("scribe serve exited with {status} before listening\n{}", self.logs());
            }
            assert!(Instant::now() < deadline, "scribe serve did not listen within {START_TIMEOUT:?}\n{}", self.logs());
            std::thread::sleep(Duration::from_millis(50));
        };
        self.addr = Some(addr);
        self.wait_for_health();
    }

    fn wait_for_health(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(r) = self.http.get(self.url("/health")).send()
                && r.status().is_success()
            {
                return;
            }
            assert!(Instant::now() < deadline, "/health did not answer 200\n{}", self.logs());
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if std::thread::panicking() {
            eprintln!("{}", self.logs());
        }
    }
}

/// The address of the `scribe listening on http://ADDR ...` line.
fn listening_addr(stdout: &str) -> Option<SocketAddr> {
    let rest = stdout.lines().find_map(|l| l.trim().strip_prefix(LISTENING))?;
    rest.split_whitespace().next()?.trim_end_matches('/').parse().ok()
}

/// The line after the first-start banner.
fn first_start_key(stdout: &str) -> Option<String> {
    let mut lines = stdout.lines();
    lines.find(|l| l.contains(KEY_BANNER))?;
    let key = lines.next()?.trim();
    (!key.is_empty()).then(|| key.to_owned())
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Whether `path` exists and holds at least one entry.
pub fn dir_has_entries(path: &Path) -> bool {
    std::fs::read_dir(path).map(|mut d| d.next().is_some()).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_listening_line_and_the_key() {
        let out = "Created account 'admin'. Its API key, shown only this once:\nsk_abc123\nCallback signing secret: whs\n\
                   scribe listening on http://127.0.0.1:40123 (API under /api, Swagger UI at /api/docs)\n";
        assert_eq!(listening_addr(out), Some("127.0.0.1:40123".parse().unwrap()));
        assert_eq!(first_start_key(out).as_deref(), Some("sk_abc123"));
        assert_eq!(listening_addr("starting\n"), None);
        assert_eq!(first_start_key("scribe listening on http://127.0.0.1:1\n"), None);
    }
}
