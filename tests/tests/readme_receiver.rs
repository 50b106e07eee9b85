//! The README's callback receiver check works as written: the Python block under "Callbacks" is
//! run, unchanged, in a real receiver on a loopback port; it must accept the server's delivery
//! and refuse the same delivery with its body altered by one byte.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use scribe_tests::{ASR_TIMEOUT, TestServer, clips, paths};

/// The one receiver: serves a single POST, prints what the README's check said of it.
const RECEIVER: &str = r#"
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
exec(open(sys.argv[1]).read())
secret = sys.argv[2]
class Once(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["content-length"]))
        print(f"genuine={is_genuine(secret, self.headers, body)} altered={is_genuine(secret, self.headers, body + b' ')}", flush=True)
        self.send_response(204)
        self.end_headers()
    def log_message(self, *args):
        pass
server = HTTPServer(("127.0.0.1", 0), Once)
print(server.server_address[1], flush=True)
server.handle_request()
"#;

/// The fenced Python block of the README's "Callbacks" section.
fn readme_snippet() -> String {
    let readme = std::fs::read_to_string(paths::repo().join("README.md")).expect("README.md");
    let section = readme.split("## Callbacks").nth(1).expect("a Callbacks section in the README");
    let block = section.split("```python").nth(1).expect("a python block in the Callbacks section");
    block.split("```").next().expect("a closed block").to_string()
}

#[test]
fn the_readme_receiver_accepts_a_real_delivery_and_refuses_an_altered_one() {
    let server = TestServer::start();
    let work = tempfile::tempdir().expect("a temp dir");
    let snippet = work.path().join("snippet.py");
    std::fs::write(&snippet, readme_snippet()).unwrap();
    let receiver_py = work.path().join("receiver.py");
    std::fs::write(&receiver_py, RECEIVER).unwrap();

    let issued = server.scribe(&["keys", "create", "--user", "dora"]);
    assert!(issued.status.success(), "{issued:?}");
    let key = String::from_utf8_lossy(&issued.stdout).trim().to_string();
    let stderr = String::from_utf8_lossy(&issued.stderr);
    let secret = stderr
        .split_whitespace()
        .find(|w| w.starts_with("whsec_"))
        .unwrap_or_else(|| panic!("`scribe keys create` showed no signing secret: {stderr}"))
        .to_string();
    server.wait_for_key(&key);

    let mut receiver = Command::new(paths::venv_bin("python"))
        .arg(&receiver_py)
        .arg(&snippet)
        .arg(&secret)
        .stdout(Stdio::piped())
        .spawn()
        .expect("starting the receiver");
    let mut lines = BufReader::new(receiver.stdout.take().unwrap()).lines();
    let port = lines.next().expect("the receiver's port").unwrap();

    // Silence ends in ERROR quickly (no speech found), which is a callback like any other.
    let callback = format!("http://127.0.0.1:{}/hook", port.trim());
    let job = server.upload_ok(&key, &paths::corpus_file(clips::SILENCE), &[("callbackUrl", &callback)]);
    let job_id = job["jobId"].as_str().unwrap();
    server.wait_for_status(&key, job_id, &["DONE", "ERROR"], ASR_TIMEOUT);

    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(lines.next()));
    let verdict = rx.recv_timeout(Duration::from_secs(120));
    let _ = receiver.kill();
    let _ = receiver.wait();
    let verdict = match verdict {
        Ok(Some(Ok(line))) => line,
        other => panic!("the receiver got no callback ({other:?})\n{}", server.logs()),
    };
    assert_eq!(verdict, "genuine=True altered=False", "{}", server.logs());
}
