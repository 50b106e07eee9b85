//! The error statuses of the API that are not about one resource's parameters, each provoked by
//! a real request and checked for the one JSON error body: 401 (missing and wrong key), 402
//! (an account with no credit), 404 (unknown endpoint), 405 (wrong method, with `Allow`), 406
//! (an `Accept` that excludes JSON), 413 (a body over the cap), 429 (past the burst), and the
//! refusals of the HTTP layer itself: 431 (headers too large), 414 (URL too long) and 400 (not
//! HTTP), which hyper answers before any handler runs.
//! 400/403/404/410 on jobs and glossaries are in `jobs_*.rs` and `glossary.rs`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use scribe_tests::{Reply, TestServer, clips, paths};
use serde_json::json;

/// Every endpoint in scope, as (method, path) with a valid-looking query but for the key.
const ENDPOINTS: &[(&str, &str)] = &[
    ("GET", "/api/jobs/status?jobId=0b9c6a1e-6a43-4b7e-9d0e-3f3c0c0c0c0c"),
    ("GET", "/api/jobs"),
    ("DELETE", "/api/jobs?jobId=0b9c6a1e-6a43-4b7e-9d0e-3f3c0c0c0c0c"),
    ("POST", "/api/jobs/upload-media"),
    ("POST", "/api/jobs/upload-media-from-url"),
    ("GET", "/api/glossary"),
    ("POST", "/api/glossary"),
    ("PUT", "/api/glossary/5f0e4a51-7d0c-4c55-9a43-2b1b0f0f0f0f"),
    ("DELETE", "/api/glossary/5f0e4a51-7d0c-4c55-9a43-2b1b0f0f0f0f"),
];

fn request(server: &TestServer, method: &str, path_and_query: &str) -> reqwest::blocking::RequestBuilder {
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    server.http().request(method, server.url(path_and_query))
}

#[test]
fn a_missing_or_wrong_key_is_401_on_every_endpoint() {
    let server = TestServer::start();
    for (method, path) in ENDPOINTS {
        let body = Reply::send(request(&server, method, path).json(&json!({"name": "x", "sourceUrl": "http://a.b/c"})));
        body.error(401, Some("apiKey"));
        let sep = if path.contains('?') { '&' } else { '?' };
        let wrong = format!("{path}{sep}apiKey=sk_not_a_key");
        Reply::send(request(&server, method, &wrong).json(&json!({"name": "x"}))).error(401, Some("apiKey"));
        let empty = format!("{path}{sep}apiKey=");
        Reply::send(request(&server, method, &empty).json(&json!({"name": "x"}))).error(401, Some("apiKey"));
    }
    // A key of another data directory's admin is just as unknown.
    let other = TestServer::start();
    server.get("/jobs", other.key(), &[]).error(401, Some("apiKey"));
}

#[test]
fn an_account_without_credit_gets_402_and_no_job() {
    let server = TestServer::start();
    let key = server.create_key("broke", Some(0));
    let reply = server.upload(&key, &paths::corpus_file(clips::SHORT), &[]);
    let body = reply.error(402, None);
    assert!(body["message"].as_str().unwrap().to_lowercase().contains("balance"), "{body}");
    server
        .post_json("/jobs/upload-media-from-url", &key, &json!({"sourceUrl": "http://127.0.0.1:9/a.wav"}))
        .error(402, None);
    assert!(server.list_jobs(&key, &[]).is_empty());

    // Credit makes the same upload pass.
    server.scribe_ok(&["balance", "credit", "--user", "broke", "--cents", "100000"]);
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        let reply = server.upload(&key, &paths::corpus_file(clips::SHORT), &[]);
        if reply.status == 200 {
            break;
        }
        reply.error(402, None);
        assert!(std::time::Instant::now() < deadline, "the credit did not reach the running server");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn unknown_endpoints_are_404_with_the_error_body() {
    let server = TestServer::start();
    let key = server.key();
    server.get("/nothing-here", key, &[]).error(404, None);
    server.get("/jobs/export-everything", key, &[("jobId", "x")]).error(404, None);
}

#[test]
fn a_wrong_method_is_405_with_allow() {
    let server = TestServer::start();
    let key = server.key();
    let cases = [
        ("PUT", "/api/jobs/status", vec!["GET"]),
        ("POST", "/api/jobs", vec!["DELETE", "GET"]),
        ("GET", "/api/jobs/upload-media", vec!["POST"]),
        ("GET", "/api/jobs/upload-media-from-url", vec!["POST"]),
        ("DELETE", "/api/glossary", vec!["GET", "POST"]),
        ("GET", "/api/glossary/5f0e4a51-7d0c-4c55-9a43-2b1b0f0f0f0f", vec!["DELETE", "PUT"]),
    ];
    for (method, path, allowed) in cases {
        let reply = Reply::send(request(&server, method, path).query(&[("apiKey", key)]));
        reply.error(405, None);
        let allow = reply.header("allow").unwrap_or_else(|| panic!("{method} {path}: no Allow header"));
        let mut got: Vec<String> = allow.split(',').map(|m| m.trim().to_uppercase()).collect();
        got.sort();
        assert_eq!(got, allowed, "{method} {path}: Allow {allow:?}");
    }
}

#[test]
fn an_accept_header_excluding_json_is_406() {
    let server = TestServer::start();
    let key = server.key();
    for path in ["/api/jobs", "/api/jobs/status?jobId=0b9c6a1e-6a43-4b7e-9d0e-3f3c0c0c0c0c", "/api/glossary"] {
        let reply = Reply::send(request(&server, "GET", path).query(&[("apiKey", key)]).header("accept", "text/html"));
        reply.error(406, None);
        // Browsers' usual header admits JSON through */*.
        let ok = Reply::send(
            request(&server, "GET", "/api/jobs")
                .query(&[("apiKey", key)])
                .header("accept", "text/html,application/xhtml+xml,*/*;q=0.8"),
        );
        assert_eq!(ok.status, 200, "{}", ok.text);
    }
    let reply = Reply::send(
        request(&server, "POST", "/api/glossary")
            .query(&[("apiKey", key)])
            .header("accept", "application/xml")
            .json(&json!({"name": "x"})),
    );
    reply.error(406, None);
    assert!(server.get("/glossary", key, &[]).ok().as_array().unwrap().is_empty(), "a 406 writes nothing");
}

#[test]
fn a_json_body_over_the_cap_is_413() {
    let server = TestServer::start();
    let key = server.key();
    let huge = json!({"name": "big", "names": vec!["x".repeat(20); 60_000]});
    server.post_json("/glossary", key, &huge).error(413, None);
}

/// A client that announces an over-cap body and is still sending it when the refusal is ready
/// hears the 413: the server reads the rest of the body first rather than resetting a
/// connection the client is writing to.
#[test]
fn a_client_still_sending_an_over_cap_body_hears_the_413() {
    let server = TestServer::start();
    let body = vec![b' '; 3 << 20];
    let mut stream = TcpStream::connect(server.addr()).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let head = format!(
        "POST /api/glossary?apiKey={} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        server.key(),
        server.addr(),
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    // Long enough for the refusal to be decided from the head alone.
    std::thread::sleep(Duration::from_millis(300));
    for piece in body.chunks(64 << 10) {
        stream.write_all(piece).unwrap_or_else(|e| panic!("the server stopped reading the body: {e}"));
    }
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.lines().next().unwrap_or("").contains(" 413 "), "answer: {answer}");
    let json_text = &answer[answer.find('{').unwrap_or(0)..=answer.rfind('}').unwrap_or(0)];
    let body: serde_json::Value = serde_json::from_str(json_text).unwrap_or_else(|e| panic!("{e}: {answer}"));
    assert_eq!(body["status"].as_u64(), Some(413), "{body}");
}

/// The upload cap (6 GB) is enforced from `Content-Length` before the body is read, so a request
/// that only announces 7 GB is enough to provoke the 413.
#[test]
fn an_upload_announced_over_6_gb_is_413_naming_file() {
    let server = TestServer::start();
    let mut stream = TcpStream::connect(server.addr()).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let head = format!(
        "POST /api/jobs/upload-media?apiKey={} HTTP/1.1\r\nHost: {}\r\nContent-Type: multipart/form-data; boundary=XyZ\r\n\
         Content-Length: 7000000000\r\nConnection: close\r\n\r\n--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.wav\"\r\n\r\nRIFF",
        server.key(),
        server.addr()
    );
    stream.write_all(head.as_bytes()).unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer);
    let status_line = answer.lines().next().unwrap_or("");
    assert!(status_line.contains(" 413 "), "answer: {answer}");
    let body_start = answer.find("\r\n\r\n").map(|i| i + 4).unwrap_or(0);
    let body_text = &answer[body_start..];
    // The body may be chunked; find the JSON object in it.
    let json_text = &body_text[body_text.find('{').unwrap_or(0)..=body_text.rfind('}').unwrap_or(0)];
    let body: serde_json::Value = serde_json::from_str(json_text).unwrap_or_else(|e| panic!("{e}: {answer}"));
    assert_eq!((body["status"].as_u64(), body["field"].as_str()), (Some(413), Some("file")), "{body}");
    assert!(server.list_jobs(server.key(), &[]).is_empty());
}

/// An account that cannot pay a minute is told so by the OpenAI door before its upload is read,
/// as by the file API: a request that only announces 100 MB (more than the server reads and
/// drops) is answered 402.
#[test]
fn the_openai_door_answers_402_before_reading_the_upload() {
    let server = TestServer::start();
    let broke = server.create_key("broke", Some(0));
    let mut stream = TcpStream::connect(server.addr()).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let head = format!(
        "POST /v1/audio/transcriptions HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {broke}\r\n\
         Content-Type: multipart/form-data; boundary=XyZ\r\nContent-Length: 100000000\r\nConnection: close\r\n\r\n\
         --XyZ\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper-1\r\n\
         --XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.wav\"\r\n\r\nRIFF",
        server.addr()
    );
    stream.write_all(head.as_bytes()).unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.lines().next().unwrap_or("").contains(" 402 "), "answer: {answer}");
    assert!(answer.contains("insufficient_balance"), "answer: {answer}");
    assert!(server.list_jobs(&broke, &[]).is_empty());
}

#[test]
fn hammering_one_key_past_its_burst_is_429_with_retry_after() {
    let server = TestServer::start();
    let key = server.key().to_owned();
    let other = server.create_key("patient", None);
    let mut limited = None;
    for _ in 0..2_000 {
        let reply = server.get("/jobs", &key, &[]);
        if reply.status == 429 {
            limited = Some(reply);
            break;
        }
        assert_eq!(reply.status, 200, "{}", reply.text);
    }
    let reply = limited.expect("2000 back-to-back requests on one key never got a 429");
    reply.error(429, None);
    let retry_after: u64 = reply.header("retry-after").expect("a Retry-After header").parse().expect("seconds");
    assert!(retry_after >= 1);
    // Other keys are limited separately.
    assert_eq!(server.get("/jobs", &other, &[]).status, 200);
}

#[test]
fn the_openapi_document_declares_the_error_body() {
    let server = TestServer::start();
    let doc = Reply::send(server.http().get(server.url("/api/openapi.json"))).ok();
    let schemas = &doc["components"]["schemas"];
    let error = schemas.as_object().unwrap().iter().find(|(_, s)| {
        let props = &s["properties"];
        props.get("status").is_some() && props.get("error").is_some() && props.get("message").is_some()
    });
    let (name, _) = error.expect("a schema for the error body");
    let reference = format!("#/components/schemas/{name}");
    // The OpenAI door answers in OpenAI's shape, {"error": {"message", "type", "param", "code"}}.
    let openai = schemas.as_object().unwrap().iter().find(|(_, s)| {
        let error = &s["properties"]["error"];
        error.get("$ref").is_some() && s["properties"].as_object().is_some_and(|p| p.len() == 1)
    });
    let (openai_name, _) = openai.expect("a schema for OpenAI's error body");
    let openai_reference = format!("#/components/schemas/{openai_name}");
    for (path, item) in doc["paths"].as_object().unwrap() {
        let expected = if path.starts_with("/v1/") { &openai_reference } else { &reference };
        for (method, op) in item.as_object().unwrap() {
            for status in ["400", "401", "429"] {
                let schema = &op["responses"][status]["content"]["application/json; charset=utf-8"]["schema"]["$ref"];
                assert_eq!(schema, expected, "{method} {path} declares {status} with the error body");
            }
        }
    }
}

/// Writes `request` on a fresh connection and reads the whole answer (the server closes it):
/// the status code and the JSON error body.
fn raw_exchange(server: &TestServer, request: &[u8]) -> (u16, serde_json::Value) {
    let mut stream = TcpStream::connect(server.addr()).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    stream.write_all(request).unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {answer:.300}"));
    assert!(answer.to_ascii_lowercase().contains("content-type: application/json"), "{answer:.300}");
    let (_, body) = answer.split_once("\r\n\r\n").unwrap_or_else(|| panic!("no head: {answer:.300}"));
    let body = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: the body of {answer:.300}"));
    (status, body)
}

#[test]
fn requests_the_http_layer_cannot_read_get_the_json_error_body_too() {
    let server = TestServer::start();
    let host = server.addr();
    let many_fields: String = (0..150).map(|i| format!("X-Field-{i}: {i}\r\n")).collect();
    let too_many = format!("GET /api/jobs HTTP/1.1\r\nHost: {host}\r\n{many_fields}\r\n");
    let (status, body) = raw_exchange(&server, too_many.as_bytes());
    assert_eq!(
        (status, body["status"].as_u64(), body["error"].as_str()),
        (431, Some(431), Some("HEADERS_TOO_LARGE")),
        "{body}"
    );
    assert!(body["message"].as_str().unwrap().contains("at most 100 header fields"), "{body}");

    let long_url =
        format!("GET /api/jobs?apiKey={}&x={} HTTP/1.1\r\nHost: {host}\r\n\r\n", server.key(), "a".repeat(70_000));
    let (status, body) = raw_exchange(&server, long_url.as_bytes());
    assert_eq!((status, body["error"].as_str()), (414, Some("URI_TOO_LONG")), "{body}");

    let malformed = format!("GET /api/jobs HTTP/1.1\r\nHost: {host}\r\nno colon here\r\n\r\n");
    let (status, body) = raw_exchange(&server, malformed.as_bytes());
    assert_eq!((status, body["error"].as_str()), (400, Some("MALFORMED_REQUEST")), "{body}");
    assert!(body["message"].as_str().unwrap().contains("not valid HTTP"), "{body}");

    // The same on a kept-alive connection after a good request, and the server serves on.
    let mut stream = TcpStream::connect(server.addr()).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let good = format!("GET /health HTTP/1.1\r\nHost: {host}\r\n\r\n");
    stream.write_all(format!("{good}{too_many}").as_bytes()).unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer);
    let second = answer.find("HTTP/1.1 431").unwrap_or_else(|| panic!("{answer:.600}"));
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer:.600}");
    assert!(answer[second..].contains("\"HEADERS_TOO_LARGE\""), "{answer:.600}");
    server.get("/jobs", server.key(), &[]).ok();
}
