//! The README's live transcription client works as written: the Python block under "Live
//! transcription" is run, unchanged, with the venv's Python (`websockets` comes from
//! `ops/setup.sh`) against a real server and a funded key; streaming the JFK clip at the pace of
//! speech, it must print the clip's words.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use scribe_tests::{TestServer, clips, paths};

/// The 11 s clip streamed at real-time pace, then its last utterance finalized, on a busy machine.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(300);

/// The fenced Python block of the README's "Live transcription" section.
fn readme_client() -> String {
    let readme = std::fs::read_to_string(paths::repo().join("README.md")).expect("README.md");
    let section = readme.split("## Live transcription").nth(1).expect("a Live transcription section in the README");
    let section = section.split("\n## ").next().expect("the section");
    let block = section.split("```python").nth(1).expect("a python block in the Live transcription section");
    block.split("```").next().expect("a closed block").to_string()
}

/// Lower case, letters and digits only, one space between words.
fn words(text: &str) -> String {
    let kept: String = text.chars().map(|c| if c.is_alphanumeric() { c.to_ascii_lowercase() } else { ' ' }).collect();
    kept.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn the_readme_live_client_prints_the_words_of_the_clip() {
    let server = TestServer::start();
    let key = server.create_key("lena", Some(10_000));
    let work = tempfile::tempdir().expect("a temp dir");
    let client = work.path().join("live.py");
    std::fs::write(&client, readme_client()).unwrap();

    let url = format!("ws://{}/api/real-time", server.addr());
    let mut child = Command::new(paths::venv_bin("python"))
        .arg(&client)
        .arg(&url)
        .arg(&key)
        .arg(paths::corpus_file(clips::JFK))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting the README's client");
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let err = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let deadline = Instant::now() + CLIENT_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for the client") {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let printed = out.join().unwrap();
    let complaints = err.join().unwrap();
    let report = format!("stdout:\n{printed}\nstderr:\n{complaints}\n{}", server.logs());
    let status = status.unwrap_or_else(|| panic!("the client did not finish within {CLIENT_TIMEOUT:?}\n{report}"));
    assert!(status.success(), "the client exited with {status}\n{report}");
    assert!(complaints.contains("[Info] Session started"), "no Info after INIT\n{report}");
    assert!(
        words(&printed).contains("ask not what your country can do for you"),
        "the finals miss the clip's words\n{report}"
    );
}
