//! Fair and bounded under load: one account's slow `sourceUrl`s or long line of uploads must not
//! make another account wait behind them, a download has an overall deadline, media longer than
//! the operator accepts is refused at probe (and refunded), and deleting a job while it is
//! transcribed stops the work and leaves no file of it on disk, also after a restart.
//!
//! The slow server is real: a loopback TCP server started by the test that promises a megabyte
//! and sends one byte a second. Order is observed through statuses and the job's history, never
//! through timings.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use scribe_tests::{ASR_TIMEOUT, FileServer, Options, TestServer, clips, paths};
use serde_json::{Value, json};

/// A loopback HTTP server whose every answer is a 200 `audio/wav` of a promised megabyte, sent
/// one byte a second. Dropping it stops the drip.
struct DripServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
}

impl DripServer {
    fn start() -> DripServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let addr = listener.local_addr().expect("its address");
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if stopped.load(Ordering::Relaxed) {
                    return;
                }
                let Ok(conn) = conn else { continue };
                let stopped = stopped.clone();
                std::thread::spawn(move || drip(conn, &stopped));
            }
        });
        DripServer { addr, stop }
    }

    fn url(&self, name: &str) -> String {
        format!("http://{}/{name}.wav", self.addr)
    }
}

impl Drop for DripServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.addr);
    }
}

/// Reads the request head, then sends the body a byte a second until told to stop.
fn drip(mut conn: TcpStream, stop: &AtomicBool) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match conn.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    let answer = "HTTP/1.1 200 OK\r\nContent-Type: audio/wav\r\nContent-Length: 1000000\r\n\r\n";
    if conn.write_all(answer.as_bytes()).is_err() {
        return;
    }
    while !stop.load(Ordering::Relaxed) {
        if conn.write_all(b"R").and_then(|()| conn.flush()).is_err() {
            return;
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

fn job_id(job: &Value) -> String {
    job["jobId"].as_str().unwrap_or_else(|| panic!("no jobId in {job}")).to_owned()
}

fn is_finished(job: &Value) -> bool {
    job["status"] == "DONE" || job["status"] == "ERROR"
}

#[test]
fn one_accounts_slow_urls_do_not_hold_up_another_accounts_url() {
    let server = TestServer::start();
    let files = FileServer::start();
    let drip = DripServer::start();
    let alice = server.create_key("alice", Some(10_000));
    let bob = server.create_key("bob", Some(10_000));
    // Four slow downloads: as many as the server runs at once.
    let slow: Vec<String> =
        (0..4).map(|n| job_id(&server.upload_url_ok(&alice, &drip.url(&format!("slow{n}")), &json!({})))).collect();
    let quick = job_id(&server.upload_url_ok(&bob, &files.corpus_url(clips::SHORT), &json!({"language": "en"})));
    // Bob's job is fetched, probed and transcribed while alice's servers still drip.
    let done = server.wait_for_status(&bob, &quick, &["DONE", "ERROR"], Duration::from_secs(300));
    assert_eq!(done["status"], "DONE", "{done}");
    for id in &slow {
        let job = server.status(&alice, id);
        assert_eq!(job["status"], "OPEN", "alice's slow download {id} is still under way: {job}");
        let history = server.scribe_ok(&["replay", id]);
        assert!(!history.contains("MediaStored"), "a dripping download cannot have finished: {history}");
    }
}

#[test]
fn a_download_past_its_deadline_fails_saying_what_the_server_sent() {
    let server = TestServer::start_with(Options {
        extra_args: vec!["--download-deadline".into(), "4s".into()],
        ..Options::default()
    });
    let files = FileServer::start();
    let drip = DripServer::start();
    let key = server.key();
    let job = server.upload_url_ok(key, &drip.url("slow"), &json!({"callbackUrl": files.callback_url()}));
    let id = job_id(&job);
    let ended = server.wait_for_status(key, &id, &["DONE", "ERROR"], Duration::from_secs(120));
    assert_eq!(ended["status"], "ERROR", "{ended}");
    let payload = files.wait_for_callback(&id, Duration::from_secs(60));
    let msg = payload["errorMsg"].as_str().unwrap_or_else(|| panic!("no errorMsg: {payload}"));
    assert!(msg.contains("did not finish within the limit of 4 seconds"), "{msg}");
    // A byte a second for four seconds: a handful of bytes, said as such.
    assert!(msg.contains("the server sent ") && msg.contains(" bytes in 4 seconds"), "{msg}");
    // The partial download left nothing behind.
    assert!(paths::files_named_after(&server.data_dir(), &id).is_empty());
}

#[test]
fn recognition_takes_turns_between_accounts() {
    let server = TestServer::start();
    let alice = server.create_key("alice", Some(10_000));
    let bob = server.create_key("bob", Some(10_000));
    // Alice's first job keeps the only worker busy while her others and bob's one queue.
    let mut alices = vec![job_id(&server.upload_ok(&alice, &paths::corpus_file(clips::JFK), &[("language", "en")]))];
    for _ in 0..3 {
        alices.push(job_id(&server.upload_ok(&alice, &paths::corpus_file(clips::SHORT), &[("language", "en")])));
    }
    let bobs = job_id(&server.upload_ok(&bob, &paths::corpus_file(clips::SHORT), &[("language", "en")]));
    let done = server.wait_for_status(&bob, &bobs, &["DONE", "ERROR"], ASR_TIMEOUT);
    assert_eq!(done["status"], "DONE", "{done}");
    // Read after bob's job was seen done: alice's last jobs were still waiting then.
    let alice_status: Vec<Value> = alices.iter().map(|id| server.status(&alice, id)).collect();
    assert!(
        !is_finished(&alice_status[3]) && !is_finished(&alice_status[2]),
        "bob's one job waited behind alice's whole line: {alice_status:?}"
    );
    for id in &alices {
        let job = server.wait_for_status(&alice, id, &["DONE", "ERROR"], ASR_TIMEOUT);
        assert_eq!(job["status"], "DONE", "{job}");
    }
}

#[test]
fn media_longer_than_the_operator_allows_is_refused_at_upload_and_fails_a_url_job_at_probe() {
    let server = TestServer::start_with(Options {
        extra_args: vec!["--max-duration".into(), "1m".into()],
        ..Options::default()
    });
    let files = FileServer::start();
    let key = server.create_key("carol", Some(100));
    let long_clip = "audio/en_synth_gettysburg_2voices.wav"; // 100 s
    let msg = "The media is 1 min 40 s long; this server accepts media of at most 1 minute";

    // A new job is OPEN: an upload that long is no job, refused naming the file and both
    // lengths, before it is charged, and nothing of it stays on disk.
    let refused = server
        .upload(&key, &paths::corpus_file(long_clip), &[("callbackUrl", &files.callback_url())])
        .error(400, Some("file"));
    assert_eq!(refused["error"], "INVALID_PARAMETER", "{refused}");
    assert_eq!(refused["message"], msg, "{refused}");
    assert!(server.list_jobs(&key, &[]).is_empty(), "a refused upload is no job");
    assert_eq!(server.get("/me", &key, &[]).ok()["balance"], 100, "nothing was charged");
    let media_dir = server.data_dir().join("media");
    let left: Vec<_> = std::fs::read_dir(&media_dir).into_iter().flatten().flatten().map(|e| e.path()).collect();
    assert!(
        left.iter().all(|p| !p.is_file() && !scribe_tests::server::dir_has_entries(p)),
        "files of the refused upload remain: {left:?}"
    );
    // Media within the limit is accepted as before.
    let short = server.upload_ok(&key, &paths::corpus_file(clips::JFK), &[]);
    assert_eq!(short["status"], "OPEN", "{short}");

    // A URL job's length is known once it is fetched: it is answered OPEN, then fails at probe
    // before it is charged, and its status shows the probed length.
    let balance = server.get("/me", &key, &[]).ok()["balance"].as_u64().unwrap();
    let accepted =
        server.upload_url_ok(&key, &files.corpus_url(long_clip), &json!({"callbackUrl": files.callback_url()}));
    assert_eq!(accepted["status"], "OPEN", "{accepted}");
    let url_job = job_id(&accepted);
    let ended = server.wait_for_status(&key, &url_job, &["DONE", "ERROR"], ASR_TIMEOUT);
    assert_eq!(ended["status"], "ERROR", "{ended}");
    assert_eq!(ended["errorMsg"], msg, "{ended}");
    assert_eq!(ended["nrAudioSeconds"], 100, "the status shows the probed length: {ended}");
    let payload = files.wait_for_callback(&url_job, Duration::from_secs(60));
    assert_eq!(payload["errorMsg"], msg, "{payload}");
    let history = server.scribe_ok(&["replay", &url_job]);
    assert!(
        history.contains("MediaProbed") && history.contains("JobFailed") && !history.contains("TranscriptionStarted"),
        "{history}"
    );
    server.wait_for_balance(&key, balance);
}

#[test]
fn a_url_job_the_balance_does_not_cover_shows_its_probed_length() {
    let server = TestServer::start();
    let files = FileServer::start();
    // One minute's price is enough to submit; the 100 s clip costs two.
    let key = server.create_key("dave", Some(10));
    let accepted = server.upload_url_ok(&key, &files.corpus_url("audio/en_synth_gettysburg_2voices.wav"), &json!({}));
    assert_eq!(accepted["status"], "OPEN", "{accepted}");
    let url_job = job_id(&accepted);
    let ended = server.wait_for_status(&key, &url_job, &["DONE", "ERROR"], ASR_TIMEOUT);
    assert_eq!(ended["status"], "ERROR", "{ended}");
    assert!(ended["errorMsg"].as_str().unwrap_or_default().starts_with("Insufficient balance"), "{ended}");
    assert_eq!(ended["nrAudioSeconds"], 100, "the status shows the probed length: {ended}");
    server.wait_for_balance(&key, 10);
}

/// What the server printed so far (the harness keeps each start's output beside the data dir).
fn server_output(server: &TestServer) -> String {
    let home = server.data_dir().parent().expect("the test home").to_owned();
    let mut text = String::new();
    for entry in std::fs::read_dir(home).into_iter().flatten().flatten() {
        if entry.file_name().to_string_lossy().starts_with("serve-") {
            text.push_str(&std::fs::read_to_string(entry.path()).unwrap_or_default());
        }
    }
    text
}

#[test]
fn deleting_a_job_being_transcribed_stops_it_and_leaves_nothing() {
    let mut server = TestServer::start();
    let key = server.key().to_owned();
    let long_clip = paths::corpus_file("audio/en_synth_gettysburg_2voices.wav"); // 100 s
    let id = job_id(&server.upload_ok(&key, &long_clip, &[("language", "en")]));
    let deadline = Instant::now() + ASR_TIMEOUT;
    while !server.scribe_ok(&["replay", &id]).contains("TranscriptionStarted") {
        assert!(Instant::now() < deadline, "transcription never started\n{}", server.logs());
        std::thread::sleep(Duration::from_millis(200));
    }
    server.delete("/jobs", &key, &[("jobId", &id)]).ok();
    // One worker: the next job runs only once the deleted one's recognition has ended.
    let next = job_id(&server.upload_ok(&key, &paths::corpus_file(clips::SHORT), &[("language", "en")]));
    let done = server.wait_for_status(&key, &next, &["DONE", "ERROR"], ASR_TIMEOUT);
    assert_eq!(done["status"], "DONE", "{done}");
    let left = paths::files_named_after(&server.data_dir(), &id);
    assert!(left.is_empty(), "files of the deleted job left on disk: {left:?}");
    let output = server_output(&server);
    assert!(
        output.lines().any(|l| l.contains(&id) && l.contains("recognition stopped: the job was deleted")),
        "the recognition of the deleted job was not stopped\n{}",
        server.logs()
    );

    server.restart();
    server.get("/jobs/status", &key, &[("jobId", &id)]).error(410, Some("jobId"));
    server.get("/jobs/export-json", &key, &[("jobId", &id)]).error(410, Some("jobId"));
    let history = server.scribe_ok(&["replay", &id]);
    assert!(!history.contains("TranscriptProduced"), "{history}");
    assert!(history.lines().last().is_some_and(|l| l.contains("JobDeleted")), "{history}");
    assert!(paths::files_named_after(&server.data_dir(), &id).is_empty());
}
