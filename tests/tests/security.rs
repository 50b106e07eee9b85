//! Security from outside: an address that guesses API keys is slowed down (429 with
//! `Retry-After`) while the keys that already work from it keep working; the key given as a
//! Bearer token is the same key as `apiKey` (same account, role, rate limit and failed-key
//! budget), and both given with different keys is a 400; no key the test uses
//! ever reaches the server's log; the data directory and every file in it are owner-only, and a
//! data directory left readable by others is repaired at start.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use scribe_tests::Reply;
use scribe_tests::files::FileServer;
use scribe_tests::paths;
use scribe_tests::server::{Options, TestServer};
use serde_json::{Value, json};

/// Unknown keys allowed per address in a burst, for the rate limit test.
const FAILURE_BURST: usize = 30;

fn guarded_server(log_filter: &str, burst: usize) -> TestServer {
    TestServer::start_with(Options {
        extra_args: vec![
            "--auth-failures-burst".into(),
            burst.to_string(),
            "--auth-failures-per-minute".into(),
            "6".into(),
        ],
        log_filter: Some(log_filter.to_owned()),
        ..Options::default()
    })
}

#[test]
fn guessing_keys_from_one_address_is_refused_while_known_keys_keep_working() {
    let server = guarded_server("info", FAILURE_BURST);
    // Used successfully before the guessing starts (create_key waits until it works).
    let alice = server.create_key("alice", None);
    server.get("/jobs", &alice, &[]).ok();

    let mut limited = None;
    let mut refused = 0;
    for n in 0..FAILURE_BURST + 10 {
        let guess = format!("sk_guess{n:04}0000000000000000000000000000000000000000");
        // A forwarding header is not trusted: every guess claims another address.
        let reply = Reply::send(
            server
                .http()
                .get(server.url("/api/jobs"))
                .query(&[("apiKey", guess.as_str())])
                .header("X-Forwarded-For", format!("198.51.100.{n}")),
        );
        if reply.status == 401 {
            reply.error(401, Some("apiKey"));
            assert!(limited.is_none(), "a 401 after the first 429");
            refused += 1;
        } else {
            let body = reply.error(429, Some("apiKey"));
            assert_eq!(body["error"], "RATE_LIMITED", "{body}");
            let retry: u64 = reply
                .header("retry-after")
                .unwrap_or_else(|| panic!("a 429 without Retry-After: {body}"))
                .parse()
                .expect("Retry-After in whole seconds");
            assert!((1..=60).contains(&retry), "Retry-After {retry}");
            limited.get_or_insert(body);
        }
    }
    let body = limited.expect("guessing was limited");
    // The whole burst, and none of it spent by the harness (a new key works at once); one
    // more if the budget refilled during the loop (6 a minute).
    assert!(
        (FAILURE_BURST..=FAILURE_BURST + 1).contains(&refused),
        "{refused} guesses answered 401 before the first 429"
    );
    assert!(body["message"].as_str().unwrap().contains("invalid apiKey"), "{body}");

    // An empty key counts as a failure too, and is limited the same way (no key at all guesses
    // nothing: it stays a 401).
    server.get("/jobs", "", &[]).error(429, Some("apiKey"));
    server.get("/jobs", "  ", &[]).error(429, Some("apiKey"));

    // The key that worked from this address before still works.
    server.get("/jobs", &alice, &[]).ok();
    server.get("/glossary", &alice, &[]).ok();
    // A valid key this address never used is not confirmed while it is blocked: a guess that
    // hits cannot be told from one that misses.
    let out = server.scribe_ok(&["keys", "create", "--user", "bob"]);
    let bob = out.trim();
    server.get("/jobs", bob, &[]).error(429, Some("apiKey"));
}

#[test]
fn no_api_key_reaches_the_server_log() {
    // debug shows the access log line of every request too.
    let server = guarded_server("debug", 100);
    let files = FileServer::start();
    let alice = server.create_key("alice", None);
    let mut keys = vec![alice.clone()];

    // A successful request, an upload, an export of an unknown job, a refused parameter.
    server.get("/jobs", &alice, &[]).ok();
    let job = server.upload_ok(&alice, &paths::corpus_dir().join("audio/en_jfk.wav"), &[("language", "en")]);
    let job_id = job["jobId"].as_str().unwrap().to_owned();
    server.get("/jobs/export-srt", &alice, &[("jobId", "00000000-0000-0000-0000-000000000000")]);
    server.get("/jobs", &alice, &[("pageSize", "-3")]);
    // A sourceUrl that carries a key (here this server's own export link): the fetch is logged.
    let leaky = format!("{}?apiKey={alice}&jobId={job_id}", server.url("/api/jobs/export-txt"));
    let url_job = server.upload_url_ok(&alice, &leaky, &serde_json::json!({"language": "en"}));
    server.wait_for_status(&alice, url_job["jobId"].as_str().unwrap(), &["ERROR", "DONE"], Duration::from_secs(60));
    // A media URL with credentials in the user part.
    let with_user = files.corpus_url("audio/en_jfk.wav").replacen("http://", &format!("http://{alice}:pw@"), 1);
    let with_user =
        server.post_json("/jobs/upload-media-from-url", &alice, &serde_json::json!({"sourceUrl": with_user}));
    assert!(with_user.status < 500, "{}", with_user.text);
    // Wrong keys, in the query and elsewhere.
    for n in 0..3 {
        let wrong = format!("sk_wrong{n}abcdefabcdefabcdefabcdefabcdefabcdef01");
        server.get("/jobs/status", &wrong, &[("jobId", &job_id)]).error(401, Some("apiKey"));
        keys.push(wrong);
    }
    server.wait_for_status(&alice, &job_id, &["DONE", "ERROR"], Duration::from_secs(120));

    let admin = server.key().to_owned();
    let logs = server.full_logs();
    // The admin key is printed once, on purpose, on the first start: nowhere else.
    assert_eq!(logs.matches(admin.as_str()).count(), 1, "the admin key appears beyond its first-start line");
    for key in &keys {
        assert!(
            !logs.contains(key.as_str()),
            "a key used in this test is in the server's log:\n{}",
            lines_with(&logs, key)
        );
    }
    assert!(logs.contains("fetching media"), "the fetch line is logged (its URL redacted):\n{}", server.logs());
}

fn lines_with(logs: &str, needle: &str) -> String {
    logs.lines().filter(|l| l.contains(needle)).map(|l| l.replace(needle, "<KEY>")).collect::<Vec<_>>().join("\n")
}

#[test]
fn the_data_directory_is_owner_only_and_repaired_at_start() {
    let mut server = TestServer::start();
    let key = server.key().to_owned();
    let job = server.upload_ok(&key, &paths::corpus_dir().join("audio/en_jfk.wav"), &[("language", "en")]);
    let job_id = job["jobId"].as_str().unwrap().to_owned();
    server.wait_for_status(&key, &job_id, &["DONE"], Duration::from_secs(180));
    let srt = server.get("/jobs/export-srt", &key, &[("jobId", &job_id)]);
    assert_eq!(srt.status, 200, "{}", srt.text);
    server.get("/jobs/export-stl", &key, &[("jobId", &job_id)]).ok();
    server.create_glossary(&key, &serde_json::json!({"name": "Names", "names": ["Kennedy"]}));
    server.scribe_ok(&["keys", "create", "--user", "carol"]);

    let data = server.data_dir();
    let open = readable_by_others(&data);
    assert!(open.is_empty(), "readable by group or others after a run:\n{}", open.join("\n"));
    let files = count_files(&data);
    assert!(files >= 4, "the run left {files} files to check");

    // Left readable by an operator (or an older version): repaired, with a warning, at start.
    server.stop();
    let db = data.join("events.sqlite3");
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
    server.restart();
    let open = readable_by_others(&data);
    assert!(open.is_empty(), "still readable by others after a restart:\n{}", open.join("\n"));
    let logs = server.full_logs();
    assert!(logs.contains("made owner-only"), "the repair is reported:\n{}", server.logs());
    server.status(&key, &job_id);
}

/// Every entry under `root` (and `root`) with a group or other permission bit, as `mode path`.
fn readable_by_others(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    walk(root, &mut |path, mode| {
        if mode & 0o077 != 0 {
            found.push(format!("{mode:o} {}", path.display()));
        }
    });
    found
}

fn count_files(root: &Path) -> usize {
    let mut n = 0;
    walk(root, &mut |path, _| n += usize::from(path.is_file()));
    n
}

fn walk(path: &Path, visit: &mut dyn FnMut(&Path, u32)) {
    let meta = std::fs::symlink_metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    visit(path, meta.permissions().mode() & 0o7777);
    if meta.is_dir() {
        for entry in std::fs::read_dir(path).unwrap() {
            walk(&entry.unwrap().path(), visit);
        }
    }
}

/// Refused client input is not a server error, and an upload is probed once: neither a refused
/// upload nor an accepted one leaves an ERROR or WARN line in the server's log.
#[test]
fn uploads_refused_or_accepted_log_no_errors_or_warnings() {
    let server = TestServer::start();
    let key = server.key().to_owned();
    server.upload_bytes(&key, "notes.mp3", b"not audio at all\n".repeat(50), &[]).error(400, Some("file"));
    server.upload_bytes(&key, "empty.wav", Vec::new(), &[]).error(400, Some("file"));
    let mut jobs = Vec::new();
    for _ in 0..3 {
        let job = server.upload_ok(&key, &paths::corpus_dir().join("audio/en_jfk.wav"), &[("language", "en")]);
        jobs.push(job["jobId"].as_str().unwrap().to_owned());
    }
    for job_id in &jobs {
        server.wait_for_status(&key, job_id, &["DONE"], Duration::from_secs(180));
    }
    let logs = server.full_logs();
    let noisy: Vec<&str> = logs.lines().filter(|l| l.contains("ERROR") || l.contains("WARN")).collect();
    assert!(noisy.is_empty(), "error or warning lines for ordinary uploads:\n{}", noisy.join("\n"));
}

/// `GET /api{path}` with `token` as `Authorization: Bearer`, no `apiKey`.
fn bearer(server: &TestServer, path: &str, token: &str) -> Reply {
    Reply::send(server.http().get(server.url(&format!("/api{path}"))).bearer_auth(token))
}

#[test]
fn the_key_as_a_bearer_token_is_the_same_key_with_the_same_roles_and_failed_key_budget() {
    let server = guarded_server("info", 10);
    let key = server.key().to_owned();

    // The document offers both ways on every secured operation.
    let doc: Value = Reply::send(server.http().get(server.url("/api/openapi.json"))).json();
    let scheme = &doc["components"]["securitySchemes"]["BearerAuth"];
    assert_eq!((&scheme["type"], &scheme["scheme"]), (&json!("http"), &json!("bearer")), "{scheme}");
    let mut secured = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            if let Some(security) = op.get("security") {
                assert_eq!(security, &json!([{"ApiKeyAuth": []}, {"BearerAuth": []}]), "{method} {path}");
                secured += 1;
            }
        }
    }
    assert!(secured > 20, "{secured} secured operations");

    assert_eq!(bearer(&server, "/me", &key).ok()["userName"], "admin");
    assert_eq!(bearer(&server, "/jobs", &key).ok(), json!([]));
    let both = |token: &str| {
        Reply::send(server.http().get(server.url("/api/jobs")).query(&[("apiKey", key.as_str())]).bearer_auth(token))
    };
    both(&key).ok();
    let body = both("sk_some_other_key").error(400, Some("apiKey"));
    assert!(body["message"].as_str().unwrap().contains("different"), "{body}");

    // The same roles: a staff key is refused on customer endpoints and works on its own.
    let tina = server.create_staff_key("tina", "transcriber", &[]);
    bearer(&server, "/jobs", &tina).error(403, Some("apiKey"));
    assert_eq!(bearer(&server, "/work/tasks", &tina).ok(), json!([]));

    // Guessing with Bearer tokens spends the address's budget of failed keys, as apiKey does.
    let mut limited = None;
    for i in 0..30 {
        let reply = bearer(&server, "/jobs", &format!("sk_guess_{i}"));
        if reply.status == 429 {
            limited = Some(reply);
            break;
        }
        reply.error(401, Some("Authorization"));
    }
    limited.expect("Bearer guesses are limited").error(429, Some("apiKey"));
    server.get("/jobs", "sk_guess_in_the_query", &[]).error(429, Some("apiKey"));
    // The key that worked from this address keeps working, either way.
    bearer(&server, "/jobs", &key).ok();
    server.get("/jobs", &key, &[]).ok();
}

#[test]
fn a_key_has_one_rate_limit_whichever_way_it_is_given() {
    let server = TestServer::start_with(Options {
        extra_args: ["--rate-per-second", "1", "--rate-burst", "4"].map(String::from).to_vec(),
        ..Options::default()
    });
    let key = server.key().to_owned();
    std::thread::sleep(Duration::from_secs(5)); // the burst refills after the harness's own calls
    for _ in 0..4 {
        server.get("/jobs", &key, &[]).ok();
    }
    let reply = bearer(&server, "/jobs", &key);
    reply.error(429, None);
    assert!(reply.header("retry-after").is_some());
}

/// An INIT on the live door, answered by the server's first Error (or Info) and its close code.
fn live_init(server: &TestServer, key: &str) -> scribe_tests::live::LiveRun {
    let init = json!({
        "messageType": "INIT",
        "language": "en",
        "apiKey": key,
        "audioConfig": {"sample_rate": 16000, "encoding": "s16le"},
    });
    scribe_tests::live::exchange(
        &server.ws_url("/api/real-time"),
        tokio_tungstenite::tungstenite::Message::text(init.to_string()),
        vec![tokio_tungstenite::tungstenite::Message::text(json!({"messageType": "END"}).to_string())],
    )
}

#[test]
fn one_budget_of_failed_keys_per_address_on_every_door() {
    let burst = 5;
    let server = guarded_server("info", burst);
    let alice = server.create_key("alice", None);
    server.get("/jobs", &alice, &[]).ok();
    // given an address that spent its budget on the live door's INIT
    for n in 0..burst {
        let run = live_init(&server, &format!("sk_live_guess{n:04}000000000000000000000000000000000000"));
        let error = run.error().unwrap_or_else(|| panic!("no Error for a wrong key: {:?}", run.messages));
        assert_eq!(error["code"], "UNAUTHORIZED", "{error}");
        assert_eq!(run.close_code(), Some(1008));
    }
    // then the next wrong key is refused as over budget there, and on the HTTP and OpenAI doors
    let run = live_init(&server, "sk_live_guess_over_budget00000000000000000000000000000000");
    let error = run.error().expect("an Error");
    assert!(error["message"].as_str().is_some_and(|m| m.contains("retry in")), "{error}");
    server.get("/jobs", "sk_http_guess0000000000000000000000000000000000000000", &[]).error(429, Some("apiKey"));
    // and a valid key never used from this address is not confirmed on any door
    let bob = server.scribe_ok(&["keys", "create", "--user", "bob"]).trim().to_owned();
    let run = live_init(&server, &bob);
    let error = run.error().unwrap_or_else(|| panic!("a valid key confirmed while blocked: {:?}", run.messages));
    assert_eq!(error["code"], "UNAUTHORIZED", "{error}");
    assert!(error["message"].as_str().is_some_and(|m| m.contains("retry in")), "{error}");
    server.get("/jobs", &bob, &[]).error(429, Some("apiKey"));
    let openai = Reply::send(server.http().get(server.url("/v1/models")).bearer_auth(&bob));
    assert_eq!(openai.status, 429, "{}", openai.text);
    // while the key that worked from here before still opens a live session
    let run = live_init(&server, &alice);
    assert!(run.error().is_none(), "{:?}", run.messages);
    assert_eq!(run.messages.first().map(|(_, m)| m["type"].clone()), Some(json!("Info")), "{:?}", run.messages);
}

#[test]
fn a_key_printed_by_keys_create_works_at_once_on_every_door() {
    let server = TestServer::start();
    for n in 0..3 {
        let key = server.scribe_ok(&["keys", "create", "--user", &format!("carol{n}")]).trim().to_owned();
        match n {
            0 => {
                server.get("/jobs", &key, &[]).ok();
            }
            1 => {
                let reply = Reply::send(server.http().get(server.url("/v1/models")).bearer_auth(&key));
                assert_eq!(reply.status, 200, "{}", reply.text);
            }
            _ => {
                let run = live_init(&server, &key);
                assert!(run.error().is_none(), "{:?}", run.messages);
            }
        }
    }
}
