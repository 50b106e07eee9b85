//! A running job's progress (a Scribe extension of the Job object): a real server transcribes
//! the corpus's 13-minute reading with whisper-tiny.en while the test follows it on
//! `GET /jobs/status` and `GET /jobs`. The percent only grows and stays within 0..=100, an
//! estimate of the time left comes with every percent past 0, the finished job has no progress,
//! and the job's log (`scribe replay`) holds the recorded steps in order, at most ten of them.

use std::time::{Duration, Instant};

use scribe_tests::{ASR_TIMEOUT, TestServer, clips, paths};
use serde_json::Value;

#[test]
fn a_long_job_shows_growing_progress_with_an_estimate_until_it_is_done() {
    // The model does not matter here, the length of the recognition does: the cheapest one.
    let server = TestServer::start_with_model("whisper-tiny.en");
    let key = server.key().to_owned();
    let clip = paths::corpus_file(clips::LONG_READING);
    let job = server.upload_ok(&key, &clip, &[("language", "en"), ("numberOfSpeakers", "1")]);
    let id = job["jobId"].as_str().expect("a jobId").to_owned();

    // Follow the job; every progress seen (on the job and in the list) is kept in order.
    let mut seen: Vec<Value> = Vec::new();
    let mut listed: Vec<Value> = Vec::new();
    let deadline = Instant::now() + ASR_TIMEOUT;
    let done = loop {
        let job = server.status(&key, &id);
        if job["status"] != "OPEN" {
            break job;
        }
        if !job["progress"].is_null() {
            seen.push(job["progress"].clone());
        }
        let list = server.list_jobs(&key, &[("jobId", &id)]);
        if let Some(p) = list.first().map(|j| j["progress"].clone()).filter(|p| !p.is_null()) {
            listed.push(p);
        }
        assert!(Instant::now() < deadline, "job {id} still OPEN after {ASR_TIMEOUT:?}: {job}\n{}", server.logs());
        std::thread::sleep(Duration::from_millis(150));
    };
    assert_eq!(done["status"], "DONE", "{done}\n{}", server.logs());
    assert!(done.get("progress").is_none(), "a finished job has no progress: {done}");
    let in_list = server.list_jobs(&key, &[("jobId", &id)]);
    assert!(in_list[0].get("progress").is_none(), "nor in the list: {}", in_list[0]);

    let percent = |p: &Value| p["percent"].as_u64().unwrap_or_else(|| panic!("percent is a whole number: {p}"));
    for progress in [&seen, &listed] {
        assert!(progress.iter().all(|p| percent(p) <= 100), "{progress:?}");
        assert!(progress.windows(2).all(|w| percent(&w[0]) <= percent(&w[1])), "the percent went back: {progress:?}");
        for p in progress.iter().filter(|p| percent(p) > 0) {
            assert!(p["etaSeconds"].is_u64(), "an estimate comes with every percent past 0: {p}");
        }
    }
    let mut distinct: Vec<u64> = seen.iter().map(percent).filter(|p| *p > 0).collect();
    distinct.dedup();
    assert!(distinct.len() >= 2, "the job showed fewer than two steps while it ran: {seen:?}");
    assert!(!listed.is_empty(), "the list never showed the job's progress");
    let mut estimates: Vec<u64> = seen.iter().filter_map(|p| p["etaSeconds"].as_u64()).collect();
    estimates.dedup();
    println!("percents seen on the job: {distinct:?}; estimated seconds left: {estimates:?}");

    // The log holds the steps, in order, between the start of the recognition and its transcript.
    let json = server.scribe_ok(&["replay", &id, "--json"]);
    let events: Vec<Value> =
        json.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect();
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap_or_default()).collect();
    let steps: Vec<&Value> =
        events.iter().filter(|e| e["type"] == "TranscriptionProgressed").map(|e| &e["data"]).collect();
    assert!((2..=10).contains(&steps.len()), "between 2 and 10 progress events: {types:?}");
    let position = |t: &str| types.iter().position(|x| *x == t).unwrap_or_else(|| panic!("no {t}: {types:?}"));
    let first_step = position("TranscriptionProgressed");
    let last_step = types.iter().rposition(|x| *x == "TranscriptionProgressed").unwrap();
    assert!(position("TranscriptionStarted") < first_step && last_step < position("TranscriptProduced"), "{types:?}");
    let done_ms: Vec<u64> = steps.iter().map(|s| s["done_ms"].as_u64().expect("done_ms")).collect();
    assert!(done_ms.windows(2).all(|w| w[0] < w[1]), "the steps go forward: {done_ms:?}");
    assert!(steps.iter().all(|s| s["attempt"] == 1 && s["total_ms"].as_u64() >= s["done_ms"].as_u64()), "{steps:?}");
    let history = server.scribe_ok(&["replay", &id]);
    assert!(history.contains("TranscriptionProgressed") && history.contains("done_ms="), "{history}");
}
