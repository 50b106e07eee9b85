//! The API keeps the promises of its OpenAPI document, seen from outside: bodies of the wrong
//! JSON type are refused (not coerced), an upload body holds exactly one part `file`, parameters
//! the framework cannot read are answered in a person's words, an unauthenticated request hears
//! 401 before 406, every enumerated value is matched in its documented spelling, a failed job
//! says why in `GET /jobs/status` and `GET /jobs`, and the document states the bounds and enums
//! the server enforces. (The schemathesis run in `schemathesis.rs` checks the whole document.)

use std::time::Duration;

use reqwest::blocking::multipart;
use scribe_tests::{Reply, TestServer, clips, paths};
use serde_json::{Value, json};

#[test]
fn glossary_fields_of_the_wrong_json_type_are_refused_naming_them() {
    let server = TestServer::start();
    let key = server.key();
    let body = server.post_json("/glossary", key, &json!({"name": false})).error(400, Some("name"));
    assert!(body["message"].as_str().unwrap().contains("expected a string"), "{body}");
    server.post_json("/glossary", key, &json!({"name": "x", "names": ["a", 1]})).error(400, Some("names[1]"));
    server
        .post_json("/glossary", key, &json!({"name": "x", "items": [{"name": "a", "description": true}]}))
        .error(400, Some("items[0].description"));
    server
        .post_json("/jobs/upload-media-from-url", key, &json!({"sourceUrl": "http://127.0.0.1:9/a.wav", "numberOfSpeakers": "2"}))
        .error(400, Some("numberOfSpeakers"));
    // Nothing was created by the refused bodies; a right one still works.
    let listed = server.get("/glossary", key, &[]).ok();
    assert_eq!(listed, json!([]));
    server.create_glossary(key, &json!({"name": "ok", "names": ["Ada"]}));
}

fn upload_form(server: &TestServer, form: multipart::Form) -> Reply {
    Reply::send(
        server.http().post(server.url("/api/jobs/upload-media")).query(&[("apiKey", server.key())]).multipart(form),
    )
}

fn media_part() -> multipart::Part {
    let bytes = std::fs::read(paths::corpus_file(clips::SHORT)).unwrap();
    multipart::Part::bytes(bytes).file_name("short.wav")
}

#[test]
fn an_upload_body_holds_exactly_one_file_part() {
    let server = TestServer::start();
    let twice = upload_form(&server, multipart::Form::new().part("file", media_part()).part("file", media_part()));
    let body = twice.error(400, Some("file"));
    assert!(body["message"].as_str().unwrap().contains("twice"), "{body}");

    let language_in_body = upload_form(&server, multipart::Form::new().text("language", "fr").part("file", media_part()));
    let body = language_in_body.error(400, Some("language"));
    assert!(body["message"].as_str().unwrap().contains("query"), "{body}");
    let after = upload_form(&server, multipart::Form::new().part("file", media_part()).text("jobType", "perfect"));
    after.error(400, Some("jobType"));

    assert!(server.list_jobs(server.key(), &[]).is_empty(), "a refused upload leaves no job");
    upload_form(&server, multipart::Form::new().part("file", media_part())).ok();
}

#[test]
fn unreadable_parameters_are_explained_in_words() {
    let server = TestServer::start();
    let key = server.key();
    let body = server.get("/jobs/export-srt", key, &[("jobId", "abc"), ("maxCharsPerRow", "wide")]).error(400, Some("maxCharsPerRow"));
    assert_eq!(body["message"], "maxCharsPerRow must be a whole number between 30 and 45");
    let body = server.get("/jobs/status", key, &[]).error(400, Some("jobId"));
    assert_eq!(body["message"], "jobId is required");
    let body = server.get("/jobs", key, &[("pageSize", "1.5")]).error(400, Some("pageSize"));
    assert_eq!(body["message"], "pageSize must be a whole number between 1 and 100");
    let body = server.get("/jobs/export-txt", key, &[("jobId", "abc"), ("includeSpeakers", "maybe")]).error(400, Some("includeSpeakers"));
    assert_eq!(body["message"], "includeSpeakers must be true or false");
    let body = server.get("/jobs/export-stl", key, &[("jobId", "abc"), ("maxScreenTimePerRowSeconds", "long")]);
    let body = body.error(400, Some("maxScreenTimePerRowSeconds"));
    assert_eq!(body["message"], "maxScreenTimePerRowSeconds must be a number between 1 and 10");
}

#[test]
fn an_unauthenticated_request_hears_401_before_406() {
    let server = TestServer::start();
    let get = |query: &[(&str, &str)]| {
        Reply::send(server.http().get(server.url("/api/jobs")).query(query).header("Accept", "text/csv"))
    };
    get(&[]).error(401, Some("apiKey"));
    get(&[("apiKey", "sk_not_a_key")]).error(401, Some("apiKey"));
    get(&[("apiKey", server.key())]).error(406, None);
}

#[test]
fn enumerated_values_are_matched_in_their_documented_spelling() {
    let server = TestServer::start();
    let key = server.key();
    let short = paths::corpus_file(clips::SHORT);
    server.upload(key, &short, &[("language", "EN")]).error(400, Some("language"));
    server.upload(key, &short, &[("jobType", "DIRECT")]).error(400, Some("jobType"));
    server.get("/jobs", key, &[("status", "done")]).error(400, Some("status"));
    server.get("/glossary", key, &[("sortDirection", "asc")]).error(400, Some("sortDirection"));
    assert_eq!(server.upload_ok(key, &short, &[("language", "en"), ("jobType", "direct")])["language"], "en");
}

#[test]
fn a_failed_job_says_why_in_its_status_and_in_the_list() {
    let server = TestServer::start();
    let key = server.key();
    let closed_port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let job = server.upload_url_ok(key, &format!("http://127.0.0.1:{closed_port}/talk.mp3"), &json!({}));
    assert!(job.get("errorMsg").is_none(), "an OPEN job has no errorMsg: {job}");
    let job_id = job["jobId"].as_str().unwrap().to_owned();
    let failed = server.wait_for_status(key, &job_id, &["DONE", "ERROR"], Duration::from_secs(120));
    assert_eq!(failed["status"], "ERROR", "{failed}");
    let msg = failed["errorMsg"].as_str().unwrap_or_else(|| panic!("no errorMsg in {failed}"));
    assert!(!msg.trim().is_empty());
    let listed = server.list_jobs(key, &[("status", "ERROR")]);
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["errorMsg"], msg);

    let done = server.upload_ok(key, &paths::corpus_file(clips::SHORT), &[]);
    let done = server.wait_for_status(key, done["jobId"].as_str().unwrap(), &["DONE", "ERROR"], Duration::from_secs(300));
    assert!(done.get("errorMsg").is_none(), "{done}");
}

/// The document states what the server enforces: the bounds and enums above, `notes` nullable,
/// `numberOfSpeakers` an integer in both submission operations.
#[test]
fn the_document_states_the_rules_the_server_enforces() {
    let server = TestServer::start();
    let doc: Value = Reply::send(server.http().get(server.url("/api/openapi.json"))).json();
    let param = |path: &str, method: &str, name: &str| -> Value {
        let params = doc["paths"][path][method]["parameters"].as_array().unwrap_or_else(|| panic!("{path}"));
        params.iter().find(|p| p["name"] == name).unwrap_or_else(|| panic!("{path} {name}"))["schema"].clone()
    };
    assert_eq!(param("/jobs/export-srt", "get", "maxCharsPerRow")["minimum"], 30);
    assert_eq!(param("/jobs/export-srt", "get", "maxCharsPerRow")["maximum"], 45);
    assert_eq!(param("/jobs", "get", "pageSize")["maximum"], 100);
    assert_eq!(param("/jobs/upload-media", "post", "jobType")["enum"], json!(["perfect", "direct"]));
    assert_eq!(param("/jobs/upload-media", "post", "numberOfSpeakers")["type"], "integer");
    let schemas = &doc["components"]["schemas"];
    assert_eq!(schemas["UploadFromUrl"]["properties"]["numberOfSpeakers"]["type"], "integer");
    assert_eq!(schemas["Job"]["properties"]["notes"]["nullable"], true, "{}", schemas["Job"]);
    assert!(schemas["Job"]["properties"]["errorMsg"].is_object());
    assert_eq!(schemas["UserGlossary"]["properties"]["name"]["maxLength"], 60);
    let form = &doc["paths"]["/jobs/upload-media"]["post"]["requestBody"]["content"]["multipart/form-data"]["schema"];
    assert_eq!(form["additionalProperties"], false);
}
