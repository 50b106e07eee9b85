//! The API over the real stack (SQLite event store, job actors, media store, read models and
//! their projection) without the speech engine: jobs stay `OPEN`. Requests go through the whole
//! application (`scribe_api::app`) in process, except where a real socket matters (a client
//! that disconnects mid-upload).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use poem::http::StatusCode;
use poem::test::{TestClient, TestForm, TestFormField, TestResponse};
use scribe_actors::billing::Billing;
use scribe_actors::command;
use scribe_actors::jobs::Jobs;
use scribe_actors::live::LiveSessions;
use scribe_actors::media::{AddressGuard, MediaStore};
use scribe_actors::speech_model::{EngineConfig, SpeechModel, SpeechModels};
use scribe_api::{ApiSettings, ApiState, hash_api_key};
use scribe_domain::account::{AccountAggregate, AccountCommand, Prices};
use scribe_domain::ids::{UserName, account_stream};
use scribe_domain::job::MaxDuration;
use scribe_eventstore::{EventStore, SqliteEventStore};
use scribe_projections::{Projection, ReadModels};
use serde_json::{Value, json};

const ANN_KEY: &str = "ann-secret-key";
const BOB_KEY: &str = "bob-secret-key";

struct Stack {
    _dir: tempfile::TempDir,
    data_dir: PathBuf,
    state: ApiState,
    _projection: Projection,
}

async fn open_account(store: &dyn EventStore, user: &str, key: &str) {
    let user_name = UserName::parse(user).unwrap();
    let stream = account_stream(&user_name);
    let open = AccountCommand::Open {
        user_name,
        webhook_secret: "s".into(),
        role: Default::default(),
        languages: Vec::new(),
        at_ms: 1,
    };
    command::execute::<AccountAggregate>(store, &stream, open).await.unwrap();
    let issue = AccountCommand::IssueKey { key_id: "k1".into(), key_hash: hash_api_key(key), at_ms: 2 };
    command::execute::<AccountAggregate>(store, &stream, issue).await.unwrap();
}

async fn stack(settings: ApiSettings, allow_private: bool) -> Stack {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().to_owned();
    let store: Arc<dyn EventStore> = Arc::new(SqliteEventStore::open_in(&data_dir).unwrap());
    open_account(store.as_ref(), "ann", ANN_KEY).await;
    open_account(store.as_ref(), "bob", BOB_KEY).await;
    let read = ReadModels::open(&data_dir).unwrap();
    let projection = Projection::start(store.clone(), read.clone()).await.unwrap();
    let head = store.head_position().await.unwrap();
    assert!(read.wait_for(head, Duration::from_secs(10)).await, "projection caught up");
    let jobs = Jobs::start(store.clone(), Duration::from_secs(60)).await.unwrap();
    let media = MediaStore::open(&data_dir).await.unwrap();
    // No live session runs here: the model is never loaded.
    let model = SpeechModel::new(
        EngineConfig {
            model_dir: data_dir.join("no-model"),
            vad_path: None,
            threads: None,
            compute_type: Default::default(),
            device: Default::default(),
        },
        Duration::from_secs(60),
        None,
    );
    let models = Arc::new(SpeechModels::single(model.clone()));
    let billing = Billing::new(store.clone(), jobs.clone(), Prices::FREE, MaxDuration::NONE);
    let live = LiveSessions::new(
        model,
        store.clone(),
        jobs.clone(),
        media.clone(),
        data_dir.clone(),
        "local".into(),
        billing.clone(),
        Default::default(),
        None,
    );
    let state = ApiState {
        node: "local".into(),
        data_dir: data_dir.clone(),
        store: store.clone(),
        jobs: jobs.clone(),
        media,
        guard: AddressGuard::new(allow_private),
        billing,
        read,
        asr_queue: Arc::new(AtomicUsize::new(0)),
        pipeline_dispatches: Default::default(),
        live,
        models,
        feed: Default::default(),
        settings,
        connections: Default::default(),
    };
    Stack { _dir: dir, data_dir, state, _projection: projection }
}

fn corpus() -> PathBuf {
    match std::env::var_os("SCRIBE_CORPUS_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into()))
            .join("../../shared/corpus"),
    }
}

fn corpus_file(name: &str) -> Vec<u8> {
    let path = corpus().join("audio").join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("corpus file {} ({e}); set SCRIBE_CORPUS_DIR", path.display()))
}

async fn body(resp: TestResponse) -> (StatusCode, Value) {
    let status = resp.0.status();
    let bytes = resp.0.into_body().into_bytes().await.unwrap();
    let value = if bytes.is_empty() { Value::Null } else { serde_json::from_slice(&bytes).unwrap_or(Value::Null) };
    (status, value)
}

fn upload_form(name: &str, bytes: Vec<u8>) -> TestForm {
    TestForm::new().field(TestFormField::bytes(bytes).name("file").filename(name))
}

/// Files under `media/` (temp files included).
fn media_files(data_dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![data_dir.join("media")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            if entry.path().is_dir() {
                dirs.push(entry.path());
            } else {
                found.push(entry.path());
            }
        }
    }
    found
}

#[tokio::test]
async fn an_upload_is_a_job_with_its_duration_until_deleted() {
    let s = stack(ApiSettings::default(), false).await;
    let cli = TestClient::new(scribe_api::app(s.state.clone()));

    let resp = cli
        .post("/api/jobs/upload-media")
        .query("apiKey", &ANN_KEY)
        .query("language", &"en")
        .query("transcriptionStyle", &"verbatim")
        .multipart(upload_form("jfk.wav", corpus_file("en_jfk.wav")))
        .send()
        .await;
    let (status, created) = body(resp).await;
    assert_eq!(status, StatusCode::OK, "{created}");
    let job = &created["jobStatus"];
    assert_eq!(job["status"], "OPEN");
    assert_eq!(job["nrAudioSeconds"], 11);
    assert_eq!(job["filename"], "jfk.wav");
    assert_eq!(job["jobOptions"], json!({"transcriptionStyle": "verbatim"}));
    assert!(job["notes"].is_null() && job.as_object().unwrap().contains_key("notes"));
    let job_id = job["jobId"].as_str().unwrap().to_owned();
    assert_eq!(media_files(&s.data_dir).len(), 1, "one media file stored");

    // Read-your-writes: status and list show the job at once.
    let (status, shown) =
        body(cli.get("/api/jobs/status").query("apiKey", &ANN_KEY).query("jobId", &job_id).send().await).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(shown["jobStatus"], *job);
    let (_, list) = body(cli.get("/api/jobs").query("apiKey", &ANN_KEY).send().await).await;
    assert_eq!(list.as_array().unwrap().len(), 1);
    let (_, bobs) = body(cli.get("/api/jobs").query("apiKey", &BOB_KEY).send().await).await;
    assert_eq!(bobs, json!([]));

    // Another account: 403, for reading and deleting.
    let resp = cli.get("/api/jobs/status").query("apiKey", &BOB_KEY).query("jobId", &job_id).send().await;
    assert_eq!(body(resp).await.0, StatusCode::FORBIDDEN);
    let resp = cli.delete("/api/jobs").query("apiKey", &BOB_KEY).query("jobId", &job_id).send().await;
    assert_eq!(body(resp).await.0, StatusCode::FORBIDDEN);

    let (status, deleted) =
        body(cli.delete("/api/jobs").query("apiKey", &ANN_KEY).query("jobId", &job_id).send().await).await;
    assert_eq!((status, deleted), (StatusCode::OK, json!({"message": "Job deleted"})));
    assert!(media_files(&s.data_dir).is_empty(), "media removed");
    let (status, gone) =
        body(cli.get("/api/jobs/status").query("apiKey", &ANN_KEY).query("jobId", &job_id).send().await).await;
    assert_eq!((status, gone["error"].as_str()), (StatusCode::GONE, Some("GONE")));
    let resp = cli.delete("/api/jobs").query("apiKey", &ANN_KEY).query("jobId", &job_id).send().await;
    assert_eq!(body(resp).await.0, StatusCode::GONE);
    let (_, list) = body(cli.get("/api/jobs").query("apiKey", &ANN_KEY).send().await).await;
    assert_eq!(list, json!([]));
}

#[tokio::test]
async fn a_file_that_is_not_media_is_refused_and_leaves_nothing() {
    let s = stack(ApiSettings::default(), false).await;
    let cli = TestClient::new(scribe_api::app(s.state.clone()));
    let resp = cli
        .post("/api/jobs/upload-media")
        .query("apiKey", &ANN_KEY)
        .multipart(upload_form("notes.wav", b"this is plain text, not audio at all".repeat(100)))
        .send()
        .await;
    let (status, error) = body(resp).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{error}");
    assert_eq!(error["field"], "file");
    assert_eq!(error["message"], "The file is not a recognised audio or video format");
    assert!(media_files(&s.data_dir).is_empty());
    let (_, list) = body(cli.get("/api/jobs").query("apiKey", &ANN_KEY).send().await).await;
    assert_eq!(list, json!([]));

    // A part other than `file` is refused naming it, never skipped.
    let resp = cli
        .post("/api/jobs/upload-media")
        .query("apiKey", &ANN_KEY)
        .multipart(TestForm::new().text("other", "x"))
        .send()
        .await;
    let (status, error) = body(resp).await;
    assert_eq!((status, error["field"].as_str()), (StatusCode::BAD_REQUEST, Some("other")), "{error}");
    assert!(error["message"].as_str().unwrap().contains("query string"), "{error}");
}

#[tokio::test]
async fn an_upload_past_the_cap_is_413_and_leaves_nothing() {
    let settings = ApiSettings { max_upload_bytes: 100_000, ..ApiSettings::default() };
    let s = stack(settings, false).await;
    let cli = TestClient::new(scribe_api::app(s.state.clone()));
    let resp = cli
        .post("/api/jobs/upload-media")
        .query("apiKey", &ANN_KEY)
        .multipart(upload_form("jfk.wav", corpus_file("en_jfk.wav")))
        .send()
        .await;
    let (status, error) = body(resp).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{error}");
    assert_eq!(error["error"], "PAYLOAD_TOO_LARGE");
    assert!(media_files(&s.data_dir).is_empty());
}

#[tokio::test]
async fn a_client_that_disconnects_mid_upload_leaves_no_job_and_no_file() {
    use tokio::io::AsyncWriteExt;
    let s = stack(ApiSettings::default(), false).await;
    let acceptor =
        poem::listener::Listener::into_acceptor(poem::listener::TcpListener::bind("127.0.0.1:0")).await.unwrap();
    let addr = poem::listener::Acceptor::local_addr(&acceptor)[0].as_socket_addr().cloned().unwrap();
    let app = scribe_api::app(s.state.clone());
    let server = tokio::spawn(poem::Server::new_with_acceptor(acceptor).run(app));

    let mut socket = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /api/jobs/upload-media?apiKey={ANN_KEY} HTTP/1.1\r\nHost: x\r\n\
         Content-Type: multipart/form-data; boundary=XyZ\r\nContent-Length: 10000000\r\n\r\n\
         --XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\n\r\n"
    );
    socket.write_all(head.as_bytes()).await.unwrap();
    socket.write_all(&vec![0u8; 3_000_000]).await.unwrap();
    // Wait until the partial file exists, then hang up.
    for _ in 0..100 {
        if !media_files(&s.data_dir).is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!media_files(&s.data_dir).is_empty(), "the upload was being written");
    drop(socket);
    let mut left = media_files(&s.data_dir);
    for _ in 0..100 {
        if left.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        left = media_files(&s.data_dir);
    }
    assert!(left.is_empty(), "partial files left: {left:?}");
    let cli = TestClient::new(scribe_api::app(s.state.clone()));
    let (_, list) = body(cli.get("/api/jobs").query("apiKey", &ANN_KEY).send().await).await;
    assert_eq!(list, json!([]));
    server.abort();
}

#[tokio::test]
async fn every_error_has_the_common_body_and_status() {
    let s = stack(ApiSettings::default(), false).await;
    let cli = TestClient::new(scribe_api::app(s.state.clone()));
    let check = |resp: TestResponse, want: StatusCode, code: &'static str, field: Option<&'static str>| async move {
        let (status, error) = body(resp).await;
        assert_eq!(status, want, "{error}");
        assert_eq!(error["status"], want.as_u16(), "{error}");
        assert_eq!(error["error"], code, "{error}");
        assert!(error["message"].as_str().is_some_and(|m| !m.is_empty()), "{error}");
        assert_eq!(error["field"].as_str(), field, "{error}");
    };

    check(cli.get("/api/jobs").send().await, StatusCode::UNAUTHORIZED, "UNAUTHORIZED", Some("apiKey")).await;
    check(
        cli.get("/api/jobs").query("apiKey", &"wrong").send().await,
        StatusCode::UNAUTHORIZED,
        "UNAUTHORIZED",
        Some("apiKey"),
    )
    .await;
    let resp = cli.get("/api/jobs").query("apiKey", &ANN_KEY).query("pageSize", &500).send().await;
    check(resp, StatusCode::BAD_REQUEST, "INVALID_PARAMETER", Some("pageSize")).await;
    let resp = cli.get("/api/jobs").query("apiKey", &ANN_KEY).query("page", &"two").send().await;
    check(resp, StatusCode::BAD_REQUEST, "INVALID_PARAMETER", Some("page")).await;
    let resp = cli.get("/api/jobs").query("apiKey", &ANN_KEY).query("status", &"BUSY").send().await;
    check(resp, StatusCode::BAD_REQUEST, "INVALID_PARAMETER", Some("status")).await;
    let resp = cli
        .post("/api/jobs/upload-media")
        .query("apiKey", &ANN_KEY)
        .query("numberOfSpeakers", &9)
        .multipart(upload_form("jfk.wav", vec![0; 10]))
        .send()
        .await;
    check(resp, StatusCode::BAD_REQUEST, "INVALID_PARAMETER", Some("numberOfSpeakers")).await;
    let resp = cli.get("/api/jobs/status").query("apiKey", &ANN_KEY).send().await;
    check(resp, StatusCode::BAD_REQUEST, "INVALID_PARAMETER", Some("jobId")).await;
    let resp = cli.get("/api/jobs/status").query("apiKey", &ANN_KEY).query("jobId", &"nope").send().await;
    check(resp, StatusCode::NOT_FOUND, "NOT_FOUND", Some("jobId")).await;
    check(cli.get("/api/nothing").send().await, StatusCode::NOT_FOUND, "NOT_FOUND", None).await;

    let resp = cli.put("/api/jobs").query("apiKey", &ANN_KEY).send().await;
    assert_eq!(resp.0.headers().get("allow").map(|v| v.to_str().unwrap().to_owned()), Some("DELETE, GET".into()));
    check(resp, StatusCode::METHOD_NOT_ALLOWED, "METHOD_NOT_ALLOWED", None).await;

    let resp = cli.get("/api/jobs").query("apiKey", &ANN_KEY).header("Accept", "text/html").send().await;
    check(resp, StatusCode::NOT_ACCEPTABLE, "NOT_ACCEPTABLE", None).await;
    let resp = cli.get("/api/jobs").query("apiKey", &ANN_KEY).header("Accept", "text/html, */*;q=0.1").send().await;
    assert_eq!(resp.0.status(), StatusCode::OK);

    let resp =
        cli.post("/api/glossary").query("apiKey", &ANN_KEY).content_type("text/plain").body("name=x").send().await;
    check(resp, StatusCode::UNSUPPORTED_MEDIA_TYPE, "UNSUPPORTED_MEDIA_TYPE", None).await;
    let resp = cli
        .post("/api/jobs/upload-media")
        .query("apiKey", &ANN_KEY)
        .content_type("application/json")
        .body("{}")
        .send()
        .await;
    check(resp, StatusCode::UNSUPPORTED_MEDIA_TYPE, "UNSUPPORTED_MEDIA_TYPE", None).await;
    let resp = cli
        .post("/api/glossary")
        .query("apiKey", &ANN_KEY)
        .content_type("application/json")
        .body("{not json")
        .send()
        .await;
    check(resp, StatusCode::BAD_REQUEST, "INVALID_BODY", None).await;
    let huge = json!({"name": "x", "names": vec!["y".repeat(20); 60_000]});
    let resp = cli.post("/api/glossary").query("apiKey", &ANN_KEY).body_json(&huge).send().await;
    check(resp, StatusCode::PAYLOAD_TOO_LARGE, "PAYLOAD_TOO_LARGE", None).await;

    let private = json!({"sourceUrl": "http://127.0.0.1:9/a.wav"});
    let resp = cli.post("/api/jobs/upload-media-from-url").query("apiKey", &ANN_KEY).body_json(&private).send().await;
    check(resp, StatusCode::BAD_REQUEST, "INVALID_PARAMETER", Some("sourceUrl")).await;
    let callback = json!({"sourceUrl": "http://8.8.8.8/a.wav", "callbackUrl": "http://169.254.169.254/latest"});
    let resp = cli.post("/api/jobs/upload-media-from-url").query("apiKey", &ANN_KEY).body_json(&callback).send().await;
    check(resp, StatusCode::BAD_REQUEST, "INVALID_PARAMETER", Some("callbackUrl")).await;
}

#[tokio::test]
async fn a_url_job_is_open_at_once_and_the_rate_limit_answers_429() {
    let settings = ApiSettings {
        rate_per_second: std::num::NonZeroU32::new(1).unwrap(),
        rate_burst: std::num::NonZeroU32::new(3).unwrap(),
        ..ApiSettings::default()
    };
    let s = stack(settings, true).await;
    let cli = TestClient::new(scribe_api::app(s.state.clone()));
    let req = json!({"sourceUrl": "http://127.0.0.1:9/talk.mp3", "language": "fr", "numberOfSpeakers": 1});
    let (status, created) =
        body(cli.post("/api/jobs/upload-media-from-url").query("apiKey", &ANN_KEY).body_json(&req).send().await).await;
    assert_eq!(status, StatusCode::OK, "{created}");
    assert_eq!(created["jobStatus"]["status"], "OPEN");
    assert_eq!(created["jobStatus"]["filename"], "talk.mp3");
    assert_eq!(created["jobStatus"]["language"], "fr");
    let job_id = created["jobStatus"]["jobId"].as_str().unwrap();
    let (status, _) =
        body(cli.get("/api/jobs/status").query("apiKey", &ANN_KEY).query("jobId", &job_id).send().await).await;
    assert_eq!(status, StatusCode::OK);
    let mut statuses = Vec::new();
    for _ in 0..3 {
        let resp = cli.get("/api/jobs").query("apiKey", &ANN_KEY).send().await;
        statuses.push(resp.0.status());
        if resp.0.status() == StatusCode::TOO_MANY_REQUESTS {
            assert!(resp.0.headers().contains_key("retry-after"));
        }
    }
    assert!(statuses.contains(&StatusCode::TOO_MANY_REQUESTS), "{statuses:?}");
    // Other keys are not limited by ann's use.
    assert_eq!(cli.get("/api/jobs").query("apiKey", &BOB_KEY).send().await.0.status(), StatusCode::OK);
}

#[tokio::test]
async fn glossaries_are_created_listed_replaced_and_deleted() {
    let s = stack(ApiSettings::default(), false).await;
    let cli = TestClient::new(scribe_api::app(s.state.clone()));
    let new = json!({"name": "Team", "names": ["Ada", "Grace"], "items": [{"name": "ASR", "description": "speech recognition"}]});
    let (status, created) =
        body(cli.post("/api/glossary").query("apiKey", &ANN_KEY).body_json(&new).send().await).await;
    assert_eq!(status, StatusCode::OK, "{created}");
    assert_eq!(created["userName"], "ann");
    assert_eq!(created["items"], new["items"]);
    let id = created["id"].as_str().unwrap().to_owned();

    let (_, list) = body(cli.get("/api/glossary").query("apiKey", &ANN_KEY).send().await).await;
    assert_eq!(list, json!([created.clone()]));

    let too_long = json!({"name": "x".repeat(61)});
    let (status, error) =
        body(cli.post("/api/glossary").query("apiKey", &ANN_KEY).body_json(&too_long).send().await).await;
    assert_eq!((status, error["field"].as_str()), (StatusCode::BAD_REQUEST, Some("name")));

    let path = format!("/api/glossary/{id}");
    let (status, _) = body(cli.put(&path).query("apiKey", &BOB_KEY).body_json(&new).send().await).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, updated) =
        body(cli.put(&path).query("apiKey", &ANN_KEY).body_json(&json!({"name": "Renamed"})).send().await).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        (updated["name"].as_str(), updated["created"].clone(), updated["names"].clone()),
        (Some("Renamed"), created["created"].clone(), json!([]))
    );

    // A glossary is usable by its owner only.
    let resp = cli
        .post("/api/jobs/upload-media-from-url")
        .query("apiKey", &BOB_KEY)
        .body_json(&json!({"sourceUrl": "http://8.8.8.8/a.wav", "glossaryId": id}))
        .send()
        .await;
    let (status, error) = body(resp).await;
    assert_eq!((status, error["field"].as_str()), (StatusCode::FORBIDDEN, Some("glossaryId")));

    let (status, deleted) = body(cli.delete(&path).query("apiKey", &ANN_KEY).send().await).await;
    assert_eq!((status, deleted), (StatusCode::OK, json!({"message": "Glossary deleted"})));
    assert_eq!(body(cli.delete(&path).query("apiKey", &ANN_KEY).send().await).await.0, StatusCode::GONE);
    assert_eq!(body(cli.put(&path).query("apiKey", &ANN_KEY).body_json(&new).send().await).await.0, StatusCode::GONE);
    let (_, list) = body(cli.get("/api/glossary").query("apiKey", &ANN_KEY).send().await).await;
    assert_eq!(list, json!([]));
    assert_eq!(
        body(cli.delete("/api/glossary/unknown").query("apiKey", &ANN_KEY).send().await).await.0,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn docs_spec_metrics_and_health_are_served() {
    let s = stack(ApiSettings::default(), false).await;
    let cli = TestClient::new(scribe_api::app(s.state.clone()));
    let (status, spec) = body(cli.get("/api/openapi.json").send().await).await;
    assert_eq!(status, StatusCode::OK);
    let scheme = &spec["components"]["securitySchemes"]["ApiKeyAuth"];
    assert_eq!(
        (&scheme["type"], &scheme["name"], &scheme["in"]),
        (&json!("apiKey"), &json!("apiKey"), &json!("query"))
    );
    let ops = [
        "/jobs/upload-media",
        "/jobs/upload-media-from-url",
        "/jobs/status",
        "/jobs",
        "/glossary",
        "/glossary/{glossaryId}",
    ];
    for path in ops {
        for (method, op) in spec["paths"][path].as_object().unwrap_or_else(|| panic!("{path} documented")) {
            for code in [
                "200", "400", "401", "402", "403", "404", "405", "406", "410", "413", "414", "415", "429", "431",
                "500", "503",
            ] {
                assert!(op["responses"][code].is_object(), "{method} {path} declares {code}");
            }
        }
    }
    let html = cli.get("/api/docs").send().await.0.into_body().into_string().await.unwrap();
    assert!(html.contains("swagger"), "Swagger UI page");
    let (_, health) = body(cli.get("/health").send().await).await;
    assert_eq!(health, json!({"status": "ok"}));
    let text = cli.get("/metrics").send().await.0.into_body().into_string().await.unwrap();
    for needle in
        ["scribe_jobs{status=\"OPEN\"}", "scribe_asr_queue_length", "scribe_http_request_duration_seconds_bucket"]
    {
        assert!(text.contains(needle), "{needle} in\n{text}");
    }
}
