//! `POST /jobs/upload-media-from-url` against a real server and a loopback file server: the JFK
//! clip fetched by URL goes OPEN → DONE with its duration; a 404, a web page, a non-media body
//! and an unreachable host each end the job in `ERROR` with an `errorMsg` that says which; the
//! body is validated (400 naming the field); private addresses are refused unless allowed.

use std::time::Duration;

use scribe_tests::{ASR_TIMEOUT, FileServer, Options, TestServer, clips};
use serde_json::json;

#[test]
fn jfk_by_url_is_open_then_done_with_11_audio_seconds() {
    let server = TestServer::start();
    let files = FileServer::start();
    let key = server.key();
    let job = server.upload_url_ok(key, &files.corpus_url(clips::JFK), &json!({"language": "en"}));
    assert_eq!(job["status"], "OPEN", "{job}");
    let job_id = job["jobId"].as_str().unwrap().to_owned();
    assert_eq!(server.status(key, &job_id)["jobId"], job_id, "read your writes");

    let done = server.wait_for_status(key, &job_id, &["DONE", "ERROR"], ASR_TIMEOUT);
    assert_eq!(done["status"], "DONE", "{done}");
    assert_eq!(done["nrAudioSeconds"], 11, "{done}");
    assert_eq!(done["filename"], "en_jfk.wav", "{done}");
}

/// Fetch failures end the job in ERROR with a reason naming the failure.
#[test]
fn unfetchable_urls_end_in_error_saying_why() {
    let server = TestServer::start();
    let files = FileServer::start();
    let key = server.key();
    // A port that was free a moment ago: nothing listens there.
    let closed_port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let cases = [
        (files.url("/missing.wav"), vec!["404"]),
        (files.url("/page.html"), vec!["web page", "not a media"]),
        (files.url("/not-media"), vec!["not a recognised audio", "audio or video"]),
        (format!("http://127.0.0.1:{closed_port}/talk.mp3"), vec!["unreachable", "refused", "connect"]),
    ];
    let callback = files.callback_url();
    for (url, expected) in cases {
        let job = server.upload_url_ok(key, &url, &json!({"callbackUrl": callback}));
        assert_eq!(job["status"], "OPEN", "{url}: {job}");
        let job_id = job["jobId"].as_str().unwrap().to_owned();
        let failed = server.wait_for_status(key, &job_id, &["DONE", "ERROR"], Duration::from_secs(120));
        assert_eq!(failed["status"], "ERROR", "{url}: {failed}");
        let payload = files.wait_for_callback(&job_id, Duration::from_secs(60));
        assert_eq!(payload["status"], "ERROR");
        let msg = payload["errorMsg"].as_str().unwrap_or_else(|| panic!("{url}: no errorMsg in {payload}"));
        assert!(
            expected.iter().any(|e| msg.to_lowercase().contains(&e.to_lowercase())),
            "{url}: errorMsg {msg:?} should say one of {expected:?}"
        );
    }
}

#[test]
fn invalid_url_bodies_are_refused_naming_the_field() {
    let server = TestServer::start();
    let files = FileServer::start();
    let key = server.key();
    let jfk = files.corpus_url(clips::JFK);
    let cases = [
        (json!({"sourceUrl": "ftp://example.com/a.mp3"}), "sourceUrl"),
        (json!({"sourceUrl": "not a url"}), "sourceUrl"),
        (json!({"sourceUrl": ""}), "sourceUrl"),
        (json!({"sourceUrl": jfk, "language": "klingon"}), "language"),
        (json!({"sourceUrl": jfk, "numberOfSpeakers": 6}), "numberOfSpeakers"),
        (
            json!({"sourceUrl": jfk, "transcriptionType": "captions", "transcriptionStyle": "verbatim"}),
            "transcriptionStyle",
        ),
        (json!({"sourceUrl": jfk, "turnaroundTime": "FIVE_DAYS"}), "turnaroundTime"),
        (json!({"sourceUrl": jfk, "jobType": "human"}), "jobType"),
        (json!({"sourceUrl": jfk, "callbackUrl": "mailto:me@example.com"}), "callbackUrl"),
        (json!({"sourceUrl": jfk, "targetLanguage": "fr"}), "targetLanguage"),
    ];
    for (body, field) in cases {
        server.post_json("/jobs/upload-media-from-url", key, &body).error(400, Some(field));
    }
    assert!(server.list_jobs(key, &[]).is_empty(), "no invalid request may create a job");
}

/// A body without the required `sourceUrl`, and a body that is not JSON: 400 with the common body.
#[test]
fn missing_source_url_and_malformed_json_are_400() {
    let server = TestServer::start();
    let key = server.key();
    server.post_json("/jobs/upload-media-from-url", key, &json!({"language": "en"})).error(400, Some("sourceUrl"));
    let reply = scribe_tests::Reply::send(
        server
            .http()
            .post(server.url("/api/jobs/upload-media-from-url"))
            .query(&[("apiKey", key)])
            .header("content-type", "application/json")
            .body("{\"sourceUrl\": "),
    );
    reply.error(400, None);
}

#[test]
fn private_addresses_are_refused_unless_the_operator_allows_them() {
    let server = TestServer::start_with(Options { allow_private_urls: false, ..Options::default() });
    let files = FileServer::start();
    let key = server.key();
    let reply =
        server.post_json("/jobs/upload-media-from-url", key, &json!({"sourceUrl": files.corpus_url(clips::JFK)}));
    let body = reply.error(400, Some("sourceUrl"));
    assert!(body["message"].as_str().unwrap().contains("127.0.0.1"), "{body}");
    for url in ["http://169.254.169.254/latest/meta-data/", "http://10.0.0.1/a.wav", "http://[::1]/a.wav"] {
        server.post_json("/jobs/upload-media-from-url", key, &json!({"sourceUrl": url})).error(400, Some("sourceUrl"));
    }
    // The same guard holds for callbackUrl (here on upload-media, checked before the file is read).
    let callback = files.callback_url();
    let short = scribe_tests::paths::corpus_file(clips::SHORT);
    server.upload(key, &short, &[("callbackUrl", &callback)]).error(400, Some("callbackUrl"));
    assert!(server.list_jobs(key, &[]).is_empty());
}
