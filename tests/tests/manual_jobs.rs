//! Manual (`perfect`) jobs end to end on a real server, with customer and staff keys over HTTP:
//! the machine draft opens a task, a transcriber claims, reads, saves and submits it, the job
//! ends `DONE` with its callback, and the exports carry the people's document; leases that
//! expire return a task with its draft, and a restart loses no lease or draft; translated
//! subtitles ordered later (`POST /jobs/translatedSubtitles`, `BUSY` → `DONE`) or at submission
//! (transcribe, then translate); every refusal of the translation order; refunds on deletion.

use std::time::{Duration, Instant};

use scribe_tests::{ASR_TIMEOUT, FileServer, Options, TestServer, clips, paths};
use serde_json::{Value, json};

/// How long a task may take to appear after an upload (the machine draft is real ASR).
const DRAFT_TIMEOUT: Duration = ASR_TIMEOUT;

fn upload_perfect(server: &TestServer, key: &str, clip: &str, query: &[(&str, &str)]) -> String {
    let mut q = vec![("jobType", "perfect")];
    q.extend_from_slice(query);
    let job = server.upload_ok(key, &paths::corpus_file(clip), &q);
    assert_eq!(job["status"], "OPEN", "{job}");
    job["jobId"].as_str().unwrap().to_owned()
}

/// The caller's task list.
fn tasks(server: &TestServer, key: &str) -> Vec<Value> {
    match server.get("/work/tasks", key, &[]).ok() {
        Value::Array(tasks) => tasks,
        other => panic!("GET /work/tasks answered a non-array: {other}"),
    }
}

/// Waits until `key`'s task list shows a task of `job_id`; returns it.
fn wait_for_task(server: &TestServer, key: &str, job_id: &str) -> Value {
    let deadline = Instant::now() + DRAFT_TIMEOUT;
    loop {
        if let Some(task) = tasks(server, key).into_iter().find(|t| t["jobId"] == job_id) {
            return task;
        }
        assert!(Instant::now() < deadline, "no task for job {job_id} within {DRAFT_TIMEOUT:?}\n{}", server.logs());
        std::thread::sleep(Duration::from_millis(250));
    }
}

fn task_path(task_id: &str, action: &str) -> String {
    if action.is_empty() { format!("/work/tasks/{task_id}") } else { format!("/work/tasks/{task_id}/{action}") }
}

fn claim(server: &TestServer, key: &str, task_id: &str) -> Value {
    server.post(&task_path(task_id, "claim"), key, &[]).ok()
}

fn detail(server: &TestServer, key: &str, task_id: &str) -> Value {
    server.get(&task_path(task_id, ""), key, &[]).ok()
}

fn save(server: &TestServer, key: &str, task_id: &str, document: &Value) -> Value {
    server.put_json(&task_path(task_id, "document"), key, document).ok()
}

fn submit(server: &TestServer, key: &str, task_id: &str) -> Value {
    server.post(&task_path(task_id, "submit"), key, &[]).ok()
}

fn export(server: &TestServer, key: &str, format: &str, job_id: &str, query: &[(&str, &str)]) -> String {
    let mut q = vec![("jobId", job_id)];
    q.extend_from_slice(query);
    let reply = server.get(&format!("/jobs/export-{format}"), key, &q);
    assert_eq!(reply.status, 200, "export-{format}: {}", reply.text);
    reply.text
}

/// A translation of every source cue: one segment per cue, one "word" holding the whole text
/// (the service splits it into timed words).
fn translation_of(cues: &[Value], text: impl Fn(usize) -> String) -> Value {
    let segments: Vec<Value> = cues
        .iter()
        .enumerate()
        .map(|(i, c)| json!({"speaker": c["speaker"], "words": [{"start": c["start"], "end": c["end"], "text": text(i)}]}))
        .collect();
    let mut speakers: Vec<String> = cues.iter().map(|c| c["speaker"].as_str().unwrap().to_owned()).collect();
    speakers.dedup();
    let speakers: Vec<Value> = speakers.iter().map(|s| json!({"spkid": s, "name": s})).collect();
    json!({"speakers": speakers, "segments": segments})
}

/// Cue start times of an SRT file, in seconds.
fn srt_starts(srt: &str) -> Vec<f64> {
    srt.lines()
        .filter_map(|l| l.split_once(" --> "))
        .map(|(start, _)| {
            let (hms, ms) = start.trim().split_at(8);
            let p: Vec<f64> = hms.split(':').map(|x| x.parse().unwrap()).collect();
            p[0] * 3600.0 + p[1] * 60.0 + p[2] + ms[1..].parse::<f64>().unwrap() / 1000.0
        })
        .collect()
}

fn replay(server: &TestServer, job_id: &str) -> String {
    server.scribe_ok(&["replay", job_id])
}

#[test]
fn a_transcriber_finishes_a_perfect_job_and_its_exports_carry_the_edit() {
    let mut server = TestServer::start();
    let receiver = FileServer::start();
    let customer = server.key().to_owned();
    let tina = server.create_staff_key("tina", "transcriber", &["en"]);
    let otto = server.create_staff_key("otto", "transcriber", &[]);
    let nel = server.create_staff_key("nel", "transcriber", &["nl"]);
    let tom = server.create_staff_key("tom", "translator", &["pt"]);
    let glossary = server.create_glossary(
        &customer,
        &json!({"name": "Inauguration", "names": ["Kennedy"], "items": [{"name": "ask not", "description": "the famous line"}]}),
    );
    let callback = receiver.callback_url();
    let job_id = upload_perfect(
        &server,
        &customer,
        clips::JFK,
        &[
            ("transcriptionType", "captions"),
            ("callbackUrl", &callback),
            ("glossaryId", glossary["id"].as_str().unwrap()),
        ],
    );

    // Keys stay in their lanes.
    server.get("/work/tasks", &customer, &[]).error(403, Some("apiKey"));
    server.get("/jobs", &tina, &[]).error(403, Some("apiKey"));

    let task = wait_for_task(&server, &tina, &job_id);
    let task_id = task["taskId"].as_str().unwrap().to_owned();
    assert_eq!(task["kind"], "transcribe");
    assert_eq!(task["language"], "en");
    assert_eq!(task["nrAudioSeconds"], 11);
    assert_eq!(task["overdue"], false);
    assert_eq!(task["claimedByYou"], false);
    assert_eq!(task["glossaryName"], "Inauguration");
    assert_eq!(task["transcriptionType"], "captions");
    let deadline = task["deadline"].as_u64().unwrap();
    let created = server.status(&customer, &job_id)["created"].as_u64().unwrap();
    assert_eq!(deadline, created + 5 * 86_400_000, "FIVE_DAYS by default, in calendar days");
    assert!(
        tasks(&server, &nel).iter().all(|t| t["jobId"] != job_id.as_str()),
        "a Dutch transcriber does not see English work"
    );
    assert!(tasks(&server, &tom).is_empty(), "translators see no transcription");
    server.post(&task_path(&task_id, "claim"), &tom, &[]).error(403, Some("taskId"));
    server.post(&task_path(&task_id, "claim"), &nel, &[]).error(403, Some("taskId"));

    let claimed = claim(&server, &tina, &task_id);
    assert_eq!(claimed["claimedByYou"], true);
    assert!(claimed["leaseUntil"].as_u64().unwrap() > created);
    server.post(&task_path(&task_id, "claim"), &otto, &[]).error(409, None);
    assert!(
        tasks(&server, &otto).iter().all(|t| t["taskId"] != task_id.as_str()),
        "a held task leaves the others' queue"
    );

    let work = detail(&server, &tina, &task_id);
    assert_eq!(work["glossary"]["names"], json!(["Kennedy"]));
    assert_eq!(work["glossary"]["items"][0]["description"], "the famous line");
    assert_eq!(work["instructions"]["transcriptionStyle"], "cleanread");
    let mut document = work["document"].clone();
    let words: Vec<&Value> =
        document["segments"].as_array().unwrap().iter().flat_map(|s| s["words"].as_array().unwrap()).collect();
    assert!(words.len() > 15, "the machine draft has the speech: {document}");
    assert!(words.iter().all(|w| w["pristine"] == true && w["conf"].as_f64().unwrap() > 0.0));
    let last_end = words.last().unwrap()["end"].as_f64().unwrap();

    // The media answers Range requests for an audio player, without an apiKey.
    let media_url = work["mediaUrl"].as_str().unwrap();
    let part = server.http().get(media_url).header("Range", "bytes=0-99").send().unwrap();
    assert_eq!(part.status().as_u16(), 206);
    assert_eq!(part.bytes().unwrap().len(), 100);
    let tampered = media_url.replace("sig=", "sig=x");
    assert_eq!(server.http().get(&tampered).send().unwrap().status().as_u16(), 403);

    // A document that breaks a rule is refused, naming the place.
    let mut broken = document.clone();
    broken["segments"][0]["words"][0]["end"] = json!(999.0);
    server
        .put_json(&task_path(&task_id, "document"), &tina, &broken)
        .error(400, Some("document.segments[0].words[0].end"));
    let mut undeclared = document.clone();
    undeclared["segments"][0]["speaker"] = json!("nobody");
    server
        .put_json(&task_path(&task_id, "document"), &tina, &undeclared)
        .error(400, Some("document.segments[0].speaker"));
    server.put_json(&task_path(&task_id, "document"), &otto, &document).error(409, Some("taskId"));

    // Correct one word, and highlight the famous sentence.
    let first = &mut document["segments"][0]["words"][0];
    let (start, end) = (first["start"].as_f64().unwrap(), first["end"].as_f64().unwrap());
    first["text"] = json!("Therefore,");
    let highlight_start = last_end - 3.0;
    document["highlights"] = json!([{"start": highlight_start, "end": last_end, "text": "the famous line"}]);
    let saved = save(&server, &tina, &task_id, &document);
    assert_eq!(saved["revision"], 1);
    assert!(
        saved["leaseUntil"].as_u64().unwrap() >= claimed["leaseUntil"].as_u64().unwrap(),
        "a save renews the lease"
    );
    // A restart loses neither the lease nor the draft.
    server.restart();
    let again = detail(&server, &tina, &task_id);
    assert_eq!(again["task"]["claimedByYou"], true);
    assert_eq!(again["task"]["leaseUntil"], saved["leaseUntil"]);
    assert_eq!(again["task"]["revision"], 1);
    assert_eq!(again["document"]["segments"][0]["words"][0]["text"], "Therefore,");

    server.get("/jobs/export-srt", &customer, &[("jobId", &job_id)]).error(409, Some("jobId"));
    assert_eq!(submit(&server, &tina, &task_id)["message"], "Task submitted; the job is done");
    let done = server.wait_for_status(&customer, &job_id, &["DONE", "ERROR"], Duration::from_secs(30));
    assert_eq!(done["status"], "DONE");
    let delivered = receiver.wait_for_callback(&job_id, Duration::from_secs(30));
    assert_eq!(delivered["status"], "DONE");
    assert_eq!(delivered["jobType"], "perfect");

    let srt = export(&server, &customer, "srt", &job_id, &[]);
    assert!(srt.contains("Therefore,"), "the SRT carries the correction:\n{srt}");
    let doc: Value = serde_json::from_str(&export(&server, &customer, "json", &job_id, &[])).unwrap();
    let out_words: Vec<&Value> =
        doc["segments"].as_array().unwrap().iter().flat_map(|s| s["words"].as_array().unwrap()).collect();
    let edited = out_words.iter().find(|w| w["text"] == "Therefore,").expect("the edited word");
    assert_eq!(edited["pristine"], false);
    assert_eq!((edited["start"].as_f64().unwrap(), edited["end"].as_f64().unwrap()), (start, end));
    assert!(
        out_words.iter().filter(|w| w["text"] != "Therefore,").all(|w| w["pristine"] == true),
        "untouched words stay pristine"
    );
    let highlighted =
        export(&server, &customer, "txt", &job_id, &[("highlightsOnly", "true"), ("includeTimestamps", "false")]);
    let highlighted_words: Vec<&str> = out_words
        .iter()
        .filter(|w| {
            let mid = (w["start"].as_f64().unwrap() + w["end"].as_f64().unwrap()) / 2.0;
            mid >= highlight_start && mid <= last_end
        })
        .map(|w| w["text"].as_str().unwrap())
        .collect();
    assert!(!highlighted_words.is_empty());
    for word in &highlighted_words {
        assert!(highlighted.contains(word), "highlightsOnly keeps {word:?}:\n{highlighted}");
    }
    assert!(!highlighted.contains("Therefore,"), "highlightsOnly leaves the rest out:\n{highlighted}");

    // The submitted task is gone from every queue and closed for good.
    assert!(tasks(&server, &tina).is_empty());
    server.post(&task_path(&task_id, "claim"), &tina, &[]).error(409, None);

    let history = replay(&server, &job_id);
    for expected in [
        "TaskOpened",
        "TaskClaimed",
        "by=tina",
        "DraftSaved",
        "revision=1",
        "TaskSubmitted",
        "JobCompleted",
        "CallbackDelivered",
    ] {
        assert!(history.contains(expected), "replay shows {expected}:\n{history}");
    }

    // Translated subtitles of the finished captions job: BUSY until the translator submits.
    let ordered = server
        .post(
            "/jobs/translatedSubtitles",
            &customer,
            &[
                ("sourceJobId", &job_id),
                ("targetLanguage", "pt"),
                ("notes", "Tom: formal register"),
                ("callbackUrl", &callback),
            ],
        )
        .ok()["jobStatus"]
        .clone();
    assert_eq!(ordered["status"], "BUSY");
    assert_eq!(ordered["transcriptionType"], "translatedSubtitles");
    assert_eq!(ordered["jobType"], "perfect");
    assert_eq!(ordered["sourceJobId"], job_id.as_str());
    assert_eq!(ordered["targetLanguage"], "pt");
    assert_eq!(ordered["notes"], "Tom: formal register");
    let translation_id = ordered["jobId"].as_str().unwrap().to_owned();
    assert_eq!(server.status(&customer, &translation_id)["status"], "BUSY");

    let t_task = wait_for_task(&server, &tom, &translation_id);
    assert_eq!((t_task["kind"].as_str(), t_task["targetLanguage"].as_str()), (Some("translate"), Some("pt")));
    assert_eq!(
        t_task["deadline"].as_u64().unwrap(),
        ordered["created"].as_u64().unwrap() + 7 * 86_400_000,
        "SEVEN_DAYS by default"
    );
    let t_task_id = t_task["taskId"].as_str().unwrap().to_owned();
    claim(&server, &tom, &t_task_id);
    let t_work = detail(&server, &tom, &t_task_id);
    assert!(t_work["document"].is_null(), "nothing translated yet");
    assert_eq!(t_work["instructions"]["notes"], "Tom: formal register");
    let cues = t_work["sourceCues"].as_array().unwrap().clone();
    // Source cues are the source's sentences (issue 24): the JFK clip is one 22-word sentence.
    assert!(!cues.is_empty(), "{t_work}");
    assert!(
        cues.iter().any(|c| c["text"].as_str().unwrap().contains("Therefore,")),
        "the source is the people's transcript"
    );
    server.post(&task_path(&t_task_id, "submit"), &tom, &[]).error(409, None);
    save(&server, &tom, &t_task_id, &translation_of(&cues, |i| format!("Frase traduzida número {i}")));
    submit(&server, &tom, &t_task_id);
    assert_eq!(
        server.wait_for_status(&customer, &translation_id, &["DONE", "ERROR"], Duration::from_secs(30))["status"],
        "DONE"
    );
    assert_eq!(receiver.wait_for_callback(&translation_id, Duration::from_secs(30))["status"], "DONE");
    let translated = export(&server, &customer, "srt", &translation_id, &[]);
    assert!(translated.contains("Frase traduzida número 0"), "{translated}");
    assert!(!translated.contains("Therefore,"), "the translation's SRT is in the target language:\n{translated}");
    let source_starts: Vec<f64> = cues.iter().map(|c| c["start"].as_f64().unwrap()).collect();
    for start in srt_starts(&translated) {
        assert!(
            source_starts.iter().any(|s| (s - start).abs() < 0.01),
            "cue at {start} is on a source cue's timing {source_starts:?}"
        );
    }
    let history = replay(&server, &translation_id);
    for expected in ["JobSubmitted", "TaskOpened", "kind=translate", "by=tom", "TranslationProduced", "JobCompleted"] {
        assert!(history.contains(expected), "replay shows {expected}:\n{history}");
    }
}

/// One answer of the signed media link: status, the headers a player reads, and the body.
struct MediaReply {
    status: u16,
    content_range: Option<String>,
    content_length: Option<u64>,
    content_type: String,
    accept_ranges: Option<String>,
    body: Vec<u8>,
}

fn get_media(server: &TestServer, url: &str, headers: &[(&str, &str)]) -> MediaReply {
    let mut request = server.http().get(url);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let reply = request.send().expect("the media link answers");
    let header = |name: &str| reply.headers().get(name).map(|v| v.to_str().unwrap().to_owned());
    let (status, content_range, accept_ranges) =
        (reply.status().as_u16(), header("content-range"), header("accept-ranges"));
    let content_length = header("content-length").map(|v| v.parse().unwrap());
    let content_type = header("content-type").unwrap_or_default();
    MediaReply {
        status,
        content_range,
        content_length,
        content_type,
        accept_ranges,
        body: reply.bytes().unwrap().to_vec(),
    }
}

#[test]
fn the_media_link_answers_ranges_as_rfc_9110_says() {
    let server = TestServer::start();
    let customer = server.key().to_owned();
    let tina = server.create_staff_key("tina", "transcriber", &["en"]);
    let job_id = upload_perfect(&server, &customer, clips::SHORT, &[]);
    let task_id = wait_for_task(&server, &tina, &job_id)["taskId"].as_str().unwrap().to_owned();
    let media_url = detail(&server, &tina, &task_id)["mediaUrl"].as_str().unwrap().to_owned();
    let file = std::fs::read(paths::corpus_file(clips::SHORT)).unwrap();
    let n = file.len() as u64;

    let whole = |range: &str, reply: &MediaReply| {
        assert_eq!(reply.status, 200, "{range}: the whole file");
        assert_eq!(reply.content_range, None, "{range}");
        assert_eq!(reply.content_length, Some(n), "{range}");
        assert!(reply.body == file, "{range}: the body is the file");
    };
    let part = |range: &str, reply: &MediaReply, first: u64, last: u64| {
        assert_eq!(reply.status, 206, "{range}");
        assert_eq!(reply.content_range.as_deref(), Some(format!("bytes {first}-{last}/{n}").as_str()), "{range}");
        assert_eq!(reply.content_length, Some(last - first + 1), "{range}");
        assert!(reply.body == file[first as usize..=last as usize], "{range}: the body is those bytes of the file");
    };
    let unsatisfiable = |range: &str, reply: &MediaReply| {
        assert_eq!(reply.status, 416, "{range}");
        assert_eq!(reply.content_range.as_deref(), Some(format!("bytes */{n}").as_str()), "{range}");
        assert!(reply.content_type.starts_with("application/json"), "{range}: {}", reply.content_type);
        let body: Value = serde_json::from_slice(&reply.body).unwrap();
        assert_eq!(
            (body["status"].as_u64(), body["error"].as_str()),
            (Some(416), Some("RANGE_NOT_SATISFIABLE")),
            "{range}: {body}"
        );
        assert!(body["message"].as_str().unwrap().contains(&format!("{n} bytes")), "{range}: {body}");
    };

    // No Range: the whole file, saying ranges are accepted, with the media's type.
    let plain = get_media(&server, &media_url, &[]);
    whole("no Range", &plain);
    assert_eq!(plain.accept_ranges.as_deref(), Some("bytes"));
    assert!(plain.content_type.starts_with("audio/"), "{}", plain.content_type);

    for (range, first, last) in [
        ("bytes=0-99".to_owned(), 0, 99),
        // A last position past the end is cut to the last byte.
        ("bytes=0-99999999".to_owned(), 0, n - 1),
        (format!("bytes={}-", n - 10), n - 10, n - 1),
        ("bytes=-100".to_owned(), n - 100, n - 1),
        // A suffix longer than the file selects all of it.
        ("bytes=-99999999".to_owned(), 0, n - 1),
    ] {
        let reply = get_media(&server, &media_url, &[("Range", &range)]);
        part(&range, &reply, first, last);
        assert_eq!(reply.accept_ranges.as_deref(), Some("bytes"), "{range}");
    }
    // Ranges that select no byte: 416 with the size.
    for range in ["bytes=99999999-".to_owned(), format!("bytes={n}-"), "bytes=-0".to_owned()] {
        unsatisfiable(&range, &get_media(&server, &media_url, &[("Range", &range)]));
    }
    // Invalid Range headers are ignored, and several ranges are answered with the whole file.
    for range in ["bytes=5-2", "items=0-1", "bytes=abc", "bytes=0-1,5-9"] {
        whole(range, &get_media(&server, &media_url, &[("Range", range)]));
    }
    // If-Range: the range applies to the version named, else the whole (new) file is sent.
    let etag = server.http().get(&media_url).send().unwrap().headers()["etag"].to_str().unwrap().to_owned();
    part("If-Range: current", &get_media(&server, &media_url, &[("Range", "bytes=0-9"), ("If-Range", &etag)]), 0, 9);
    whole("If-Range: another", &get_media(&server, &media_url, &[("Range", "bytes=0-9"), ("If-Range", "\"other\"")]));
}

#[test]
fn leases_expire_back_to_the_queue_and_a_restart_keeps_leases_and_drafts() {
    let mut server =
        TestServer::start_with(Options { extra_args: vec!["--task-lease".into(), "3s".into()], ..Options::default() });
    let customer = server.key().to_owned();
    let tina = server.create_staff_key("tina", "transcriber", &[]);
    let otto = server.create_staff_key("otto", "transcriber", &[]);
    let job_id = upload_perfect(&server, &customer, clips::SHORT, &[]);
    let task_id = wait_for_task(&server, &tina, &job_id)["taskId"].as_str().unwrap().to_owned();

    claim(&server, &tina, &task_id);
    let mut document = detail(&server, &tina, &task_id)["document"].clone();
    document["segments"][0]["words"][0]["text"] = json!("Hey,");
    save(&server, &tina, &task_id, &document);
    server.post(&task_path(&task_id, "claim"), &otto, &[]).error(409, None);

    // The lease runs out: the task is back in the queue, with tina's draft.
    std::thread::sleep(Duration::from_millis(3_500));
    server.put_json(&task_path(&task_id, "document"), &tina, &document).error(409, Some("taskId"));
    assert!(tasks(&server, &otto).iter().any(|t| t["taskId"] == task_id.as_str() && t["claimedByYou"] == false));
    let taken = claim(&server, &otto, &task_id);
    assert_eq!((taken["claimedByYou"].as_bool(), taken["revision"].as_u64()), (Some(true), Some(1)));
    let work = detail(&server, &otto, &task_id);
    assert_eq!(work["document"]["segments"][0]["words"][0]["text"], "Hey,", "the saved draft came back with the task");
    let mut document = work["document"].clone();
    document["segments"][0]["words"][0]["text"] = json!("Hey there,");
    assert_eq!(save(&server, &otto, &task_id, &document)["revision"], 2);

    // After a restart the draft is still there (the lease may have run out meanwhile: otto
    // takes the task again; the restart within a lease is checked with the default lease).
    server.restart();
    claim(&server, &otto, &task_id);
    let work = detail(&server, &otto, &task_id);
    assert_eq!(work["task"]["revision"], 2);
    assert_eq!(work["document"]["segments"][0]["words"][0]["text"], "Hey");
    assert_eq!(work["document"]["segments"][0]["words"][1]["text"], "there,");

    // Nobody claims it again: the sweeper records the expiry in the job's history.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let history = replay(&server, &job_id);
        let released = history.lines().filter(|l| l.contains("TaskReleased") && l.contains("expired=true")).count();
        if released >= 2 {
            assert!(history.contains("by=otto") && history.contains("by=tina"), "{history}");
            break;
        }
        assert!(Instant::now() < deadline, "the expiries were not recorded:\n{history}");
        std::thread::sleep(Duration::from_millis(500));
    }
    assert!(tasks(&server, &tina).iter().any(|t| t["taskId"] == task_id.as_str()));
    let metrics = server.http().get(server.url("/metrics")).send().unwrap().text().unwrap();
    assert!(metrics.contains("scribe_tasks{state=\"open\"} 1"), "{metrics}");
    assert!(metrics.contains("scribe_tasks{state=\"claimed\"} 0"), "{metrics}");
    assert!(server.scribe_ok(&["work", "overdue"]).contains("no overdue tasks"));
}

#[test]
fn translated_subtitles_orders_are_refused_with_the_right_codes_and_run_at_submission_too() {
    let server = TestServer::start();
    let customer = server.key().to_owned();
    let tina = server.create_staff_key("tina", "transcriber", &[]);
    let tom = server.create_staff_key("tom", "translator", &[]);
    let bob = server.create_key("bob", None);
    let order = |key: &str, source: &str| {
        server.post("/jobs/translatedSubtitles", key, &[("sourceJobId", source), ("targetLanguage", "nl")])
    };

    server.post("/jobs/translatedSubtitles", &customer, &[("targetLanguage", "nl")]).error(400, Some("sourceJobId"));
    order(&customer, "0192f6a4-0000-7000-8000-000000000000").error(404, Some("sourceJobId"));
    let direct =
        server.upload_ok(&customer, &paths::corpus_file(clips::SHORT), &[("transcriptionType", "captions")])["jobId"]
            .as_str()
            .unwrap()
            .to_owned();
    order(&customer, &direct).error(400, Some("sourceJobId"));
    let transcription = upload_perfect(&server, &customer, clips::SHORT, &[]);
    order(&customer, &transcription).error(400, Some("sourceJobId"));
    let captions = upload_perfect(&server, &customer, clips::SHORT, &[("transcriptionType", "captions")]);
    order(&customer, &captions).error(409, Some("sourceJobId"));
    server
        .post("/jobs/translatedSubtitles", &customer, &[("sourceJobId", &captions), ("targetLanguage", "xx")])
        .error(400, Some("targetLanguage"));

    // Finish the captions job.
    let task_id = wait_for_task(&server, &tina, &captions)["taskId"].as_str().unwrap().to_owned();
    claim(&server, &tina, &task_id);
    submit(&server, &tina, &task_id);
    server.wait_for_status(&customer, &captions, &["DONE"], Duration::from_secs(30));
    order(&bob, &captions).error(403, Some("sourceJobId"));

    // A balance that does not cover the translation: 402, and nothing is created.
    let poor = server.create_key("poor", Some(180));
    let poor_captions = upload_perfect(&server, &poor, clips::SHORT, &[("transcriptionType", "captions")]);
    let poor_task = wait_for_task(&server, &tina, &poor_captions)["taskId"].as_str().unwrap().to_owned();
    claim(&server, &tina, &poor_task);
    submit(&server, &tina, &poor_task);
    server.wait_for_status(&poor, &poor_captions, &["DONE"], Duration::from_secs(30));
    order(&poor, &poor_captions).error(402, None);
    assert_eq!(server.list_jobs(&poor, &[]).len(), 1);

    // Deleting the source of a BUSY translation ends the translation in ERROR.
    let busy = order(&customer, &captions).ok()["jobStatus"]["jobId"].as_str().unwrap().to_owned();
    server.delete("/jobs", &customer, &[("jobId", &captions)]).ok();
    let failed = server.wait_for_status(&customer, &busy, &["ERROR"], Duration::from_secs(30));
    assert_eq!(failed["status"], "ERROR");
    order(&customer, &captions).error(410, Some("sourceJobId"));

    // Translated subtitles ordered at submission: transcription first, then translation.
    let both = upload_perfect(
        &server,
        &customer,
        clips::SHORT,
        &[("transcriptionType", "translatedSubtitles"), ("targetLanguage", "nl")],
    );
    assert!(tasks(&server, &tom).iter().all(|t| t["jobId"] != both.as_str()));
    let first = wait_for_task(&server, &tina, &both)["taskId"].as_str().unwrap().to_owned();
    claim(&server, &tina, &first);
    assert_eq!(submit(&server, &tina, &first)["message"], "Task submitted; the translation task is open");
    assert_eq!(server.status(&customer, &both)["status"], "OPEN");
    let second = wait_for_task(&server, &tom, &both);
    assert_eq!(second["targetLanguage"], "nl");
    let second = second["taskId"].as_str().unwrap().to_owned();
    claim(&server, &tom, &second);
    let cues = detail(&server, &tom, &second)["sourceCues"].as_array().unwrap().clone();
    save(&server, &tom, &second, &translation_of(&cues, |_| "Hoe is het weer in New York?".into()));
    submit(&server, &tom, &second);
    assert_eq!(server.wait_for_status(&customer, &both, &["DONE", "ERROR"], Duration::from_secs(30))["status"], "DONE");
    assert!(export(&server, &customer, "srt", &both, &[]).contains("Hoe is het weer"));
}

#[test]
fn deleting_a_manual_job_refunds_it_only_while_nobody_has_claimed_it() {
    let server = TestServer::start();
    let tina = server.create_staff_key("tina", "transcriber", &[]);
    let ann = server.create_key("ann", Some(1_000));
    // The operator's tool prints the balance after a credit: credit one cent at a time and
    // subtract what was credited so far.
    let mut credited = 0;
    let mut balance = |server: &TestServer| -> u64 {
        let out = server.scribe_ok(&["balance", "credit", "--user", "ann", "--cents", "1"]);
        credited += 1;
        out.trim().rsplit(' ').nth(1).unwrap().parse::<u64>().unwrap() - credited
    };
    let unclaimed = upload_perfect(&server, &ann, clips::SHORT, &[]);
    let claimed = upload_perfect(&server, &ann, clips::SHORT, &[]);
    assert_eq!(balance(&server), 1_000 - 300, "two manual minutes at 150 cents");
    let task_id = wait_for_task(&server, &tina, &claimed)["taskId"].as_str().unwrap().to_owned();
    wait_for_task(&server, &tina, &unclaimed);
    claim(&server, &tina, &task_id);
    server.delete("/jobs", &ann, &[("jobId", &unclaimed)]).ok();
    server.delete("/jobs", &ann, &[("jobId", &claimed)]).ok();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let now = balance(&server);
        if now >= 1_000 - 150 {
            assert_eq!(now, 1_000 - 150, "the unclaimed job is refunded, the claimed one is not");
            break;
        }
        assert!(Instant::now() < deadline, "no refund of the unclaimed job (balance {now})");
        std::thread::sleep(Duration::from_millis(300));
    }
    assert!(tasks(&server, &tina).is_empty(), "deleted jobs leave the queue");
}
