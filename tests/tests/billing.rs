//! Jobs are paid from the account balance (10 cents per started minute for direct jobs by
//! default): a URL job is charged once its media is in and its duration known, a URL job the
//! balance does not cover ends in `ERROR` saying so, and a job that ends in `ERROR` gets its charge
//! back. The balance is seen the way a client sees it: whether the next submission gets a 402.

use std::time::{Duration, Instant};

use scribe_tests::{ASR_TIMEOUT, FileServer, Options, TestServer, clips, paths};
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
        assert!(
            Instant::now() < deadline,
            "uploads still answer {} instead of {status}: {}",
            reply.status,
            reply.json()
        );
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
    let refused =
        server.post_json("/jobs/upload-media-from-url", &key, &json!({"sourceUrl": files.corpus_url(clips::JFK)}));
    let deadline = Instant::now() + BALANCE_TIMEOUT;
    let mut refused = refused;
    while refused.status != 402 {
        assert!(Instant::now() < deadline, "the URL job's charge never reached the balance: {}", refused.json());
        std::thread::sleep(Duration::from_millis(250));
        refused =
            server.post_json("/jobs/upload-media-from-url", &key, &json!({"sourceUrl": files.corpus_url(clips::JFK)}));
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
fn the_operator_sets_the_prices_and_jobs_are_charged_at_them() {
    // 3 cents a minute of direct transcription instead of the default 10.
    let server = TestServer::start_with(Options {
        extra_args: vec!["--price-direct-per-minute".into(), "3".into()],
        ..Options::default()
    });
    let files = FileServer::start();
    let key = server.create_key("thrifty", Some(100));
    // An upload of the short clip: one started minute, charged when it is accepted.
    server.upload_ok(&key, &paths::corpus_file(clips::SHORT), &[]);
    server.wait_for_balance(&key, 97);
    // A URL job of the 100 s clip: two started minutes, charged once its media is probed.
    server.upload_url_ok(&key, &files.corpus_url("audio/en_synth_gettysburg_2voices.wav"), &json!({}));
    server.wait_for_balance(&key, 91);
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

#[test]
fn parallel_uploads_of_one_account_are_all_accepted_and_charged_once_each() {
    const UPLOADS: u64 = 32;
    let server = TestServer::start();
    // Each upload of the short clip costs 10 cents (one started minute); 5 cents are left over.
    let key = server.create_key("busy", Some(UPLOADS * 10 + 5));
    let clip = std::fs::read(paths::corpus_file(clips::SHORT)).expect("the short clip");
    let replies: Vec<(u16, serde_json::Value)> = std::thread::scope(|scope| {
        let uploads: Vec<_> = (0..UPLOADS)
            .map(|i| {
                let (server, key, clip) = (&server, &key, clip.clone());
                scope.spawn(move || {
                    let reply = server.upload_bytes(key, &format!("clip{i}.wav"), clip, &[]);
                    (reply.status, reply.json())
                })
            })
            .collect();
        uploads.into_iter().map(|u| u.join().expect("an upload thread")).collect()
    });
    let refused: Vec<_> = replies.iter().filter(|(status, _)| *status != 200).collect();
    assert!(refused.is_empty(), "{} of {UPLOADS} parallel uploads were refused: {refused:?}", refused.len());
    let mut ids: Vec<&str> =
        replies.iter().map(|(_, body)| body["jobStatus"]["jobId"].as_str().expect("a job id")).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len() as u64, UPLOADS, "every upload is its own job");
    // Charged exactly once each: 5 cents are left, and the next upload is refused for it.
    server.wait_for_balance(&key, 5);
    server.upload(&key, &paths::corpus_file(clips::SHORT), &[]).error(402, None);
}

#[test]
fn a_direct_job_deleted_before_its_recognition_starts_is_refunded_and_one_deleted_after_is_not() {
    const QUEUED: u64 = 8;
    // One recognition at a time, so the jobs behind the first one wait in the queue.
    let server =
        TestServer::start_with(Options { extra_args: vec!["--asr-workers".into(), "1".into()], ..Options::default() });
    // The 100 s clip costs 20 cents (two started minutes), each short clip 10.
    let key = server.create_key("deleter", Some(20 + QUEUED * 10));
    let long =
        server.upload_ok(&key, &paths::corpus_file("audio/en_synth_gettysburg_2voices.wav"), &[("language", "en")]);
    let long = long["jobId"].as_str().unwrap().to_owned();
    let deadline = Instant::now() + ASR_TIMEOUT;
    while !server.scribe_ok(&["replay", &long]).contains("TranscriptionStarted") {
        assert!(Instant::now() < deadline, "the recognition never started\n{}", server.logs());
        std::thread::sleep(Duration::from_millis(200));
    }
    let queued: Vec<String> = (0..QUEUED)
        .map(|_| {
            server.upload_ok(&key, &paths::corpus_file(clips::SHORT), &[("language", "en")])["jobId"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    server.wait_for_balance(&key, 0);
    for id in &queued {
        server.delete("/jobs", &key, &[("jobId", id)]).ok();
    }
    // The job being recognised is deleted last (before, a queued job would start in its place).
    server.delete("/jobs", &key, &[("jobId", &long)]).ok();
    server.wait_for_balance(&key, QUEUED * 10);
    for id in &queued {
        let history = server.scribe_ok(&["replay", id]);
        assert!(!history.contains("TranscriptionStarted"), "a queued job started after all: {history}");
    }
    // The started job keeps its charge: the balance stays at the queued jobs' refunds.
    std::thread::sleep(Duration::from_secs(2));
    server.wait_for_balance(&key, QUEUED * 10);
}
