//! The API keeps the promises of its OpenAPI document, seen from outside: bodies of the wrong
//! JSON type are refused (not coerced), an upload body holds exactly one part `file`, parameters
//! the framework cannot read are answered in a person's words, an unauthenticated request hears
//! 401 before 406, every enumerated value is matched in its documented spelling, a failed job
//! says why in `GET /jobs/status` and `GET /jobs`, and the document states the bounds and enums
//! the server enforces, which parameters are required, and in words the rules between
//! parameters that OpenAPI cannot state (each also enforced here). Query strings and JSON bodies
//! are strict: a parameter an operation does not take, a field a body does not have, or a
//! parameter given twice is a 400 naming it. (The schemathesis run in `schemathesis.rs` checks
//! the whole document.)

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
        .post_json(
            "/jobs/upload-media-from-url",
            key,
            &json!({"sourceUrl": "http://127.0.0.1:9/a.wav", "numberOfSpeakers": "2"}),
        )
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

    let language_in_body =
        upload_form(&server, multipart::Form::new().text("language", "fr").part("file", media_part()));
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
    let body = server
        .get("/jobs/export-srt", key, &[("jobId", "abc"), ("maxCharsPerRow", "wide")])
        .error(400, Some("maxCharsPerRow"));
    assert_eq!(body["message"], "maxCharsPerRow must be a whole number between 30 and 45");
    let body = server.get("/jobs/status", key, &[]).error(400, Some("jobId"));
    assert_eq!(body["message"], "jobId is required");
    let body = server.get("/jobs", key, &[("pageSize", "1.5")]).error(400, Some("pageSize"));
    assert_eq!(body["message"], "pageSize must be a whole number between 1 and 100");
    let body = server
        .get("/jobs/export-txt", key, &[("jobId", "abc"), ("includeSpeakers", "maybe")])
        .error(400, Some("includeSpeakers"));
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
    let done =
        server.wait_for_status(key, done["jobId"].as_str().unwrap(), &["DONE", "ERROR"], Duration::from_secs(300));
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
    assert_eq!(resolve(&doc, &param("/jobs/upload-media", "post", "jobType"))["enum"], json!(["perfect", "direct"]));
    assert_eq!(param("/jobs/upload-media", "post", "numberOfSpeakers")["type"], "integer");
    let schemas = &doc["components"]["schemas"];
    assert_eq!(schemas["UploadFromUrl"]["properties"]["numberOfSpeakers"]["type"], "integer");
    assert_eq!(schemas["Job"]["properties"]["notes"]["nullable"], true, "{}", schemas["Job"]);
    assert!(schemas["Job"]["properties"]["errorMsg"].is_object());
    // Scribe's `progress` extension is documented, optional, with its two fields.
    let progress = resolve(&doc, &schemas["Job"]["properties"]["progress"]);
    assert!(progress["description"].as_str().is_some_and(|d| d.contains("recognition")), "{progress}");
    assert_eq!(progress["required"], json!(["percent"]), "{progress}");
    assert!(progress["properties"]["etaSeconds"]["description"].is_string(), "{progress}");
    let required = schemas["Job"]["required"].as_array().unwrap();
    assert!(!required.contains(&json!("progress")), "{required:?}");
    assert_eq!(schemas["UserGlossary"]["properties"]["name"]["maxLength"], 60);
    let form = &doc["paths"]["/jobs/upload-media"]["post"]["requestBody"]["content"]["multipart/form-data"]["schema"];
    assert_eq!(form["additionalProperties"], false);
}

/// `schema`, or the component its `$ref` (or lone `allOf` reference) names.
fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    let reference = schema["$ref"].as_str().or_else(|| schema["allOf"][0]["$ref"].as_str());
    match reference {
        Some(r) => doc.pointer(r.trim_start_matches('#')).unwrap_or_else(|| panic!("{r} resolves")),
        None => schema,
    }
}

fn openapi(server: &TestServer) -> Value {
    Reply::send(server.http().get(server.url("/api/openapi.json"))).json()
}

fn parameter<'a>(doc: &'a Value, path: &str, method: &str, name: &str) -> &'a Value {
    let params = doc["paths"][path][method]["parameters"].as_array().unwrap_or_else(|| panic!("{path}"));
    params.iter().find(|p| p["name"] == name).unwrap_or_else(|| panic!("{path} {name}"))
}

#[test]
fn a_translation_order_requires_its_source_and_target_in_the_document_and_the_server() {
    let server = TestServer::start();
    let doc = openapi(&server);
    for name in ["sourceJobId", "targetLanguage"] {
        let p = parameter(&doc, "/jobs/translatedSubtitles", "post", name);
        assert_eq!(p["required"], true, "{p}");
        assert!(p.get("allowEmptyValue").is_none(), "a required parameter has no empty value: {p}");
    }
    let key = server.key();
    server.post("/jobs/translatedSubtitles", key, &[("targetLanguage", "fr")]).error(400, Some("sourceJobId"));
    server.post("/jobs/translatedSubtitles", key, &[("sourceJobId", "abc")]).error(400, Some("targetLanguage"));
    server
        .post("/jobs/translatedSubtitles", key, &[("sourceJobId", ""), ("targetLanguage", "fr")])
        .error(400, Some("sourceJobId"));
}

/// The rules between a submission's parameters, as (parameter, query that breaks it, a word the
/// document's description of it must hold).
const CROSS_FIELD_RULES: &[(&str, &[(&str, &str)], &str)] = &[
    ("targetLanguage", &[("targetLanguage", "pt")], "translatedSubtitles"),
    ("targetLanguage", &[("transcriptionType", "translatedSubtitles")], "translatedSubtitles"),
    ("targetLanguage", &[("transcriptionType", "captions"), ("targetLanguage", "en")], "translatedSubtitles"),
    ("turnaroundTime", &[("turnaroundTime", "ONE_DAY")], "perfect"),
    ("turnaroundTime", &[("jobType", "direct"), ("turnaroundTime", "TEN_DAYS")], "perfect"),
    ("transcriptionStyle", &[("transcriptionType", "captions"), ("transcriptionStyle", "verbatim")], "transcription"),
    (
        "transcriptionStyle",
        &[("transcriptionType", "translatedSubtitles"), ("targetLanguage", "en"), ("transcriptionStyle", "cleanread")],
        "transcription",
    ),
    ("language", &[("language", "eo")], "perfect"),
];

#[test]
fn each_rule_between_parameters_is_written_in_the_document_and_refused_naming_the_parameter() {
    let server = TestServer::start();
    let doc = openapi(&server);
    let url_job = &doc["components"]["schemas"]["UploadFromUrl"]["properties"];
    for (name, _, word) in CROSS_FIELD_RULES {
        for description in
            [&parameter(&doc, "/jobs/upload-media", "post", name)["description"], &url_job[*name]["description"]]
        {
            let text = description.as_str().unwrap_or_else(|| panic!("{name} has no description"));
            assert!(text.contains("Rule:") && text.contains(word) && text.contains("400"), "{name}: {text}");
        }
    }
    let key = server.key();
    let short = paths::corpus_file(clips::SHORT);
    for (name, query, _) in CROSS_FIELD_RULES {
        let body = server.upload(key, &short, query).error(400, Some(name));
        assert!(body["message"].as_str().unwrap().contains(name), "{query:?}: {body}");
        let mut fields = json!({"sourceUrl": "http://127.0.0.1:9/talk.wav"});
        for (k, v) in *query {
            fields[*k] = json!(v);
        }
        server.post_json("/jobs/upload-media-from-url", key, &fields).error(400, Some(name));
    }
    assert!(server.list_jobs(key, &[]).is_empty(), "no refused submission left a job");
}

#[test]
fn an_empty_document_is_refused_as_the_schema_says() {
    let server = TestServer::start();
    let doc = openapi(&server);
    let schemas = &doc["components"]["schemas"];
    assert_eq!(schemas["WorkDocument"]["properties"]["segments"]["minItems"], 1, "{}", schemas["WorkDocument"]);
    assert_eq!(schemas["WorkDocument"]["properties"]["speakers"]["minItems"], 1);
    assert_eq!(schemas["WorkSegment"]["properties"]["words"]["minItems"], 1, "{}", schemas["WorkSegment"]);

    let key = server.key();
    let job = server.upload_ok(key, &paths::corpus_file(clips::SHORT), &[]);
    let job_id = job["jobId"].as_str().unwrap();
    let done = server.wait_for_status(key, job_id, &["DONE", "ERROR"], scribe_tests::ASR_TIMEOUT);
    assert_eq!(done["status"], "DONE", "{done}");
    let put = |body: &Value| {
        Reply::send(
            server.http().put(server.url("/api/jobs/document")).query(&[("apiKey", key), ("jobId", job_id)]).json(body),
        )
    };
    let current = server.get("/jobs/document", key, &[("jobId", job_id)]).ok()["document"].clone();
    let speakers = current["speakers"].clone();
    put(&json!({"speakers": speakers, "segments": []})).error(400, Some("document.segments"));
    let mut empty_turn = current.clone();
    let spkid = empty_turn["segments"][0]["speaker"].clone();
    empty_turn["segments"].as_array_mut().unwrap().insert(0, json!({"speaker": spkid, "words": []}));
    put(&empty_turn).error(400, Some("document.segments[0].words"));
    // The document as it is still saves.
    assert_eq!(put(&current).ok()["revision"], 1);

    // The preview takes the same schema and holds an unsaved document to the same outline.
    let preview = |body: &Value| {
        Reply::send(server.http().post(server.url("/api/subtitles/preview")).query(&[("apiKey", key)]).json(body))
    };
    preview(&json!({"speakers": speakers, "segments": []})).error(400, Some("document.segments"));
    preview(&json!({"speakers": [], "segments": current["segments"]})).error(400, Some("document.speakers"));
    preview(&empty_turn).error(400, Some("document.segments[0].words"));
    assert!(!preview(&current).ok()["cues"].as_array().unwrap().is_empty());
}

/// The OpenAI door's `model` is required and not blank, in the document and in the server.
#[test]
fn the_openai_model_may_not_be_blank_in_the_document_or_the_server() {
    let server = TestServer::start();
    let doc = openapi(&server);
    for path in ["/v1/audio/transcriptions", "/v1/audio/translations"] {
        let form = &doc["paths"][path]["post"]["requestBody"]["content"]["multipart/form-data"]["schema"];
        let model = &form["properties"]["model"];
        assert_eq!(model["minLength"], 1, "{path}: {model}");
        assert!(model["pattern"].is_string(), "{path}: {model}");
        assert!(form["required"].as_array().unwrap().contains(&json!("model")), "{path}: {form}");
        for blank in ["", "  "] {
            let form = multipart::Form::new().text("model", blank).part("file", media_part());
            let reply = Reply::send(
                server.http().post(server.url(&format!("/api{path}"))).bearer_auth(server.key()).multipart(form),
            );
            assert_eq!(reply.status, 400, "{path} model {blank:?}: {}", reply.text);
            assert_eq!(reply.json()["error"]["param"], "model", "{path}: {}", reply.text);
        }
    }
    assert!(server.list_jobs(server.key(), &[]).is_empty(), "a refused request leaves no job");
}

#[test]
fn a_url_job_takes_nothing_but_its_key_in_the_query_and_no_unknown_body_field() {
    let server = TestServer::start();
    let key = server.key();
    let doc = openapi(&server);
    assert_eq!(doc["components"]["schemas"]["UploadFromUrl"]["additionalProperties"], false);
    let url = json!({"sourceUrl": "http://127.0.0.1:9/talk.wav"});
    let with_query = |query: &[(&str, &str)]| {
        Reply::send(
            server
                .http()
                .post(server.url("/api/jobs/upload-media-from-url"))
                .query(&[("apiKey", key)])
                .query(query)
                .json(&url),
        )
    };
    let body = with_query(&[("language", "fr")]).error(400, Some("language"));
    assert!(body["message"].as_str().unwrap().contains("JSON body"), "{body}");
    with_query(&[("sourceUrl", "http://127.0.0.1:9/other.wav")]).error(400, Some("sourceUrl"));
    let body = with_query(&[("colour", "red")]).error(400, Some("colour"));
    assert!(body["message"].as_str().unwrap().contains("apiKey"), "says what it takes: {body}");
    let body = server
        .post_json(
            "/jobs/upload-media-from-url",
            key,
            &json!({"sourceUrl": "http://127.0.0.1:9/talk.wav", "langauge": "fr"}),
        )
        .error(400, Some("langauge"));
    assert!(body["message"].as_str().unwrap().contains("language"), "lists the fields: {body}");
    server
        .post_json("/glossary", key, &json!({"name": "x", "items": [{"name": "a", "descripton": "typo"}]}))
        .error(400, Some("items[0].descripton"));
    assert!(server.list_jobs(key, &[]).is_empty(), "nothing was submitted");
    assert_eq!(server.get("/glossary", key, &[]).ok(), json!([]));
}

#[test]
fn a_parameter_the_endpoint_does_not_take_or_given_twice_is_refused_on_every_endpoint() {
    let server = TestServer::start();
    let key = server.key();
    let id = "0b9c6a1e-6a43-4b7e-9d0e-3f3c0c0c0c0c";
    let key_twice = format!("apiKey={key}&apiKey={key}");
    // (method, path and query before the key)
    let endpoints: &[(&str, String)] = &[
        ("GET", format!("/api/jobs/status?jobId={id}")),
        ("GET", "/api/jobs?pageSize=5".to_owned()),
        ("DELETE", format!("/api/jobs?jobId={id}")),
        ("POST", "/api/jobs/upload-media?language=en".to_owned()),
        ("POST", "/api/jobs/upload-media-from-url?".to_owned()),
        ("POST", format!("/api/jobs/translatedSubtitles?sourceJobId={id}&targetLanguage=fr")),
        ("GET", format!("/api/jobs/export-srt?jobId={id}")),
        ("GET", format!("/api/jobs/document?jobId={id}")),
        ("GET", "/api/glossary?sortDirection=ASC".to_owned()),
        ("POST", "/api/glossary?".to_owned()),
        ("PUT", format!("/api/glossary/{id}?")),
        ("DELETE", format!("/api/glossary/{id}?")),
        ("GET", "/api/capabilities?".to_owned()),
        ("GET", "/api/me?".to_owned()),
        ("GET", "/api/work/tasks?".to_owned()),
    ];
    let send = |method: &str, url: &str| {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        Reply::send(
            server
                .http()
                .request(method, server.url(url))
                .json(&json!({"name": "x", "sourceUrl": "http://127.0.0.1:9/a.wav"})),
        )
    };
    for (method, url) in endpoints {
        let sep = if url.ends_with('?') { "" } else { "&" };
        send(method, &format!("{url}{sep}{key_twice}")).error(400, Some("apiKey"));
        send(method, &format!("{url}{sep}apiKey={key}&apiKey=sk_other")).error(400, Some("apiKey"));
        send(method, &format!("{url}{sep}apiKey={key}&trace=1")).error(400, Some("trace"));
        // Who is asking comes first: without a valid key, the key is what is wrong.
        send(method, &format!("{url}{sep}trace=1")).error(401, Some("apiKey"));
        send(method, &format!("{url}{sep}apiKey=sk_not_a_key&trace=1")).error(401, Some("apiKey"));
        if let Some((path, query)) = url.split_once('?').filter(|(_, q)| !q.is_empty()) {
            let first = query.split('&').next().unwrap();
            let name = first.split('=').next().unwrap();
            send(method, &format!("{path}?{first}&{first}&apiKey={key}")).error(400, Some(name));
        }
    }
    // The same parameters once each are read as before.
    assert_eq!(server.get("/jobs", key, &[("pageSize", "5")]).ok(), json!([]));
    assert!(server.list_jobs(key, &[]).is_empty(), "no refused request made a job");
}
