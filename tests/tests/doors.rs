//! One way in: the file API, the OpenAI door and the live door translate their protocols onto
//! one path (one key check, one rate limit per key, the billing saga), so whichever door a
//! request takes, a key spends the same rate limit and a started minute of audio costs the
//! same. (The failed-key budget the three doors share is `security.rs`'s
//! `one_budget_of_failed_keys_per_address_on_every_door`.)

use std::time::Duration;

use reqwest::blocking::multipart;
use scribe_tests::live::{self, LiveRun, Session, init};
use scribe_tests::server::{Options, TestServer};
use scribe_tests::{ASR_TIMEOUT, Reply, paths};
use serde_json::json;
use tokio_tungstenite::tungstenite::Message;

/// Requests a key may make in a burst in the rate-limit test (refilled at one a second).
const BURST: usize = 4;
/// 100 s of English in two voices: two started minutes.
const GETTYSBURG: &str = "audio/en_synth_gettysburg_2voices.wav";
/// The default price of a started minute of a direct job, in cents.
const CENTS_PER_MINUTE: u64 = 10;

#[derive(Debug, Clone, Copy)]
enum Door {
    Http,
    OpenAi,
    Live,
}

const DOORS: [Door; 3] = [Door::Http, Door::OpenAi, Door::Live];

/// An INIT answered and closed at once, the key checked first: it names a glossary that does
/// not exist.
fn live_refused_init(server: &TestServer, key: &str) -> LiveRun {
    let first = init(key, json!({"glossaryId": "no-such-glossary"}));
    live::exchange(&server.ws_url("/api/real-time"), Message::text(first.to_string()), vec![])
}

/// One request through `door` that passes the key check (and spends a request of the key's
/// rate limit): true when it was let through, false when the rate limit refused it.
fn knock(server: &TestServer, key: &str, door: Door) -> bool {
    match door {
        Door::Http => {
            let reply = server.get("/jobs", key, &[]);
            if reply.status == 429 {
                assert!(reply.header("retry-after").is_some(), "{}", reply.text);
                return false;
            }
            reply.ok();
            true
        }
        Door::OpenAi => {
            let reply = Reply::send(server.http().get(server.url("/v1/models")).bearer_auth(key));
            match reply.status {
                200 => true,
                429 => {
                    assert!(reply.header("retry-after").is_some(), "{}", reply.text);
                    assert_eq!(reply.json()["error"]["code"], "rate_limit_exceeded", "{}", reply.text);
                    false
                }
                other => panic!("the OpenAI door answered {other}: {}", reply.text),
            }
        }
        Door::Live => {
            let run = live_refused_init(server, key);
            let error = run.error().unwrap_or_else(|| panic!("no Error: {:?}", run.messages));
            match error["code"].as_str() {
                Some("INVALID_PARAMETER") => {
                    assert_eq!(error["field"], "glossaryId", "{error}");
                    true
                }
                Some("CAPACITY") => {
                    assert_eq!(run.close_code(), Some(1013), "{:?}", run.messages);
                    false
                }
                _ => panic!("the live door answered {error}"),
            }
        }
    }
}

#[test]
fn a_key_spends_one_rate_limit_whichever_door_it_knocks_on() {
    let server = TestServer::start_with(Options {
        extra_args: ["--rate-per-second", "1", "--rate-burst", &BURST.to_string()].map(String::from).to_vec(),
        ..Options::default()
    });
    let key = server.create_key("dora", None);
    for spender in DOORS {
        // given a full burst (it refills at one a second), spent on one door
        std::thread::sleep(Duration::from_secs(BURST as u64 + 1));
        for n in 0..BURST {
            assert!(knock(&server, &key, spender), "request {n} of the burst on {spender:?} was refused");
        }
        // then every door refuses the key at once
        for door in DOORS {
            assert!(!knock(&server, &key, door), "{door:?} let the key through after its burst on {spender:?}");
        }
    }
}

fn balance(server: &TestServer, key: &str) -> u64 {
    server.get("/me", key, &[]).ok()["balance"].as_u64().expect("a balance")
}

#[test]
fn a_started_minute_costs_the_same_whichever_door_brings_it() {
    let server = TestServer::start();
    let key = server.create_key("paula", Some(1_000));
    let clip = paths::corpus_file(GETTYSBURG);
    let paid = |door: Door, before: u64| {
        let after = balance(&server, &key);
        assert_eq!(before - after, 2 * CENTS_PER_MINUTE, "100 s through {door:?} costs two started minutes");
        after
    };
    let mut left = balance(&server, &key);

    // The file API: charged when the upload is accepted.
    let job = server.upload_ok(&key, &clip, &[("language", "en")]);
    let id = job["jobId"].as_str().unwrap().to_owned();
    left = paid(Door::Http, left);
    assert_eq!(server.wait_for_status(&key, &id, &["DONE", "ERROR"], ASR_TIMEOUT)["status"], "DONE");

    // The OpenAI door: the same job, answered when it is done.
    let form = multipart::Form::new()
        .text("model", "whisper-1")
        .text("language", "en")
        .text("response_format", "text")
        .file("file", &clip)
        .unwrap();
    let reply = Reply::send(
        server
            .http()
            .post(server.url("/v1/audio/transcriptions"))
            .bearer_auth(&key)
            .timeout(ASR_TIMEOUT)
            .multipart(form),
    );
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert!(live::words(&reply.text).len() > 100, "{}", reply.text);
    left = paid(Door::OpenAi, left);

    // The live door, kept as a job: each minute paid as its first sample arrives.
    let audio = live::pcm(GETTYSBURG, 16_000, "s16le");
    let session = Session::new(
        server.ws_url("/api/real-time"),
        init(&key, json!({"outputConfig": {"saveAsJob": true}})),
        &audio,
        16_000,
        "s16le",
    );
    let run = session.run();
    assert!(run.error().is_none(), "{:?}", run.messages);
    assert!(live::is_normal(run.close_code()), "{:?}", run.close_code());
    paid(Door::Live, left);

    // Three jobs, each of its door, each 100 s long, none refunded.
    let jobs = server.list_jobs(&key, &[]);
    assert_eq!(jobs.len(), 3, "{jobs:?}");
    for job in &jobs {
        let id = job["jobId"].as_str().unwrap();
        let done = server.wait_for_status(&key, id, &["DONE", "ERROR"], ASR_TIMEOUT);
        assert_eq!(done["status"], "DONE", "{done}");
        assert_eq!(done["nrAudioSeconds"].as_u64().map(|s| s.abs_diff(100) <= 1), Some(true), "{done}");
    }
    assert_eq!(balance(&server, &key), 1_000 - 3 * 2 * CENTS_PER_MINUTE, "nothing refunded or charged late");
}

#[test]
fn a_balance_short_of_a_minute_is_refused_before_any_audio_on_every_door() {
    let server = TestServer::start();
    let key = server.create_key("penny", Some(CENTS_PER_MINUTE - 1));
    let clip = paths::corpus_file(GETTYSBURG);
    server.upload(&key, &clip, &[]).error(402, None);
    let form = multipart::Form::new().text("model", "whisper-1").file("file", &clip).unwrap();
    let reply =
        Reply::send(server.http().post(server.url("/v1/audio/transcriptions")).bearer_auth(&key).multipart(form));
    assert_eq!(reply.status, 402, "{}", reply.text);
    assert_eq!(reply.json()["error"]["code"], "insufficient_balance", "{}", reply.text);
    let run =
        live::exchange(&server.ws_url("/api/real-time"), Message::text(init(&key, json!({})).to_string()), vec![]);
    let error = run.error().unwrap_or_else(|| panic!("no Error: {:?}", run.messages));
    assert_eq!(error["code"], "INSUFFICIENT_BALANCE", "{error}");
    assert!(run.of_type("Info").is_empty(), "refused before the session started: {:?}", run.messages);
    assert_eq!(run.close_code(), Some(1008));
    assert!(server.list_jobs(&key, &[]).is_empty());
    assert_eq!(balance(&server, &key), CENTS_PER_MINUTE - 1);
}
