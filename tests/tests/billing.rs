//! Jobs are paid from the account balance (10 cents per started minute for direct jobs by
//! default): a URL job is charged once its media is in and its duration known, a URL job the
//! balance does not cover ends in `ERROR` saying so, and a job that ends in `ERROR` gets its charge
//! back. The balance is seen the way a client sees it: whether the next submission gets a 402.

use std::time::{Duration, Instant};

use scribe_tests::{ASR_TIMEOUT, FileServer, TestServer, clips, paths};
use serde_json::json;

/// How long a charge or refund may take to reach the balance the edge checks.
const BALANCE_TIMEOUT: Duration = Duration::from_secs(20);

/// Uploads the short clip until the answer is `status` (200 or 402); returns the job id when it
/// was accepted.
fn upload_until(server: &TestServer, key: &str, status: u16) -> Option<String> {
    let deadline = Instant::now() + BALANCE_TIMEOUT;
    loop {
        let reply = server.upload(key, &paths::corpus_file(clips::SHORT), &[]);
        if reply.status == status {
            return reply.json()["jobStatus"]["jobId"].as_str().map(str::to_owned);
        }
        assert!(Instant::now() < deadline, "uploads still answer {} instead of {status}: {}", reply.status, reply.json());
        std::thread::sleep(Duration::from_millis(250));
    }
}

#[test]
fn a_url_job_is_charged_for_its_duration_once_its_media_is_in() {
    let server = TestServer::start();
    let files = FileServer::start();
    // 15 cents: one started minute (10) is affordable, two are not.
    let key = server.create_key("urluser", Some(15));
    let job = server.upload_url_ok(&key, &files.corpus_url(clips::JFK), &json!({"language": "en"}));
    let id = job["jobId"].as_str().unwrap();
    let done = server.wait_for_status(&key, id, &["DONE", "ERROR"], ASR_TIMEOUT);
    assert_eq!(done["status"], "DONE", "{done}");
    // 5 cents are left: less than the least a job costs.
    let refused = server.post_json("/jobs/upload-media-from-url", &key, &json!({"sourceUrl": files.corpus_url(clips::JFK)}));
    let deadline = Instant::now() + BALANCE_TIMEOUT;
    let mut refused = refused;
    while refused.status != 402 {
        assert!(Instant::now() < deadline, "the URL job's charge never reached the balance: {}", refused.json());
        std::thread::sleep(Duration::from_millis(250));
        refused = server.post_json("/jobs/upload-media-from-url", &key, &json!({"sourceUrl": files.corpus_url(clips::JFK)}));
    }
    refused.error(402, None);
}

#[test]
fn a_url_job_the_balance_does_not_cover_ends_in_error_saying_so() {
    let server = TestServer::start();
    let files = FileServer::start();
    // 10 cents pass the check at submission (one minute), but the clip is 100 s: two minutes.
    let key = server.create_key("shortofmoney", Some(10));
    let job = server.upload_url_ok(
        &key,
        &files.corpus_url("audio/en_synth_gettysburg_2voices.wav"),
        &json!({"callbackUrl": files.callback_url()}),
    );
    let id = job["jobId"].as_str().unwrap();
    let ended = server.wait_for_status(&key, id, &["DONE", "ERROR"], ASR_TIMEOUT);
    assert_eq!(ended["status"], "ERROR", "{ended}");
    // The reason travels in the callback's errorMsg, as the spec has it.
    let payload = files.wait_for_callback(id, ASR_TIMEOUT);
    let msg = payload["errorMsg"].as_str().unwrap_or_default();
    assert!(msg.contains("Insufficient balance") && msg.contains("0.20") && msg.contains("0.10"), "{msg}");
    // Nothing was taken: the 10 cents still pay for an upload of a few seconds.
    assert!(upload_until(&server, &key, 200).is_some());
}

#[test]
fn a_job_that_ends_in_error_gets_its_charge_back() {
    let server = TestServer::start();
    // 10 cents: exactly one upload of a short clip.
    let key = server.create_key("unlucky", Some(10));
    let silent = server.upload_ok(&key, &paths::corpus_file(clips::SILENCE), &[]);
    let id = silent["jobId"].as_str().unwrap();
    let ended = server.wait_for_status(&key, id, &["DONE", "ERROR"], ASR_TIMEOUT);
    assert_eq!(ended["status"], "ERROR", "{ended}");
    // No speech, no charge: the refund pays for the next upload.
    let next = upload_until(&server, &key, 200).expect("an accepted upload");
    server.wait_for_status(&key, &next, &["DONE", "ERROR"], ASR_TIMEOUT);
}
