//! `POST /jobs/upload-media` against a real server: a speech clip goes OPEN → DONE through the
//! real speech engine with its duration, silence and broken files end in a clear error, the
//! options come back as the spec shows them, and every request parameter is checked (400
//! naming it) before anything is stored.

use std::time::Duration;

use scribe_tests::{ASR_TIMEOUT, FileServer, TestServer, clips, paths, speech};
use serde_json::{Value, json};

#[test]
fn jfk_upload_is_open_then_done_with_11_audio_seconds() {
    let server = TestServer::start();
    let files = FileServer::start();
    let key = server.key();
    let callback = files.callback_url();
    let job = server.upload_ok(key, &paths::corpus_file(clips::JFK), &[("language", "en"), ("callbackUrl", &callback)]);
    assert_eq!(job["status"], "OPEN", "{job}");
    assert_eq!(job["nrAudioSeconds"], 11, "{job}");
    assert_eq!(job["filename"], "en_jfk.wav", "{job}");
    assert_eq!(job["language"], "en");
    assert_eq!(job["jobType"], "direct");
    assert_eq!(job["transcriptionType"], "transcription");
    assert_eq!(job["notes"], Value::Null, "notes is present and null: {job}");
    assert!(job.get("jobOptions").is_none(), "no options were requested: {job}");
    assert!(job["created"].as_u64().is_some_and(|c| c > 1_600_000_000_000), "created in ms: {job}");
    let job_id = job["jobId"].as_str().expect("a jobId").to_owned();

    // Read your writes: the job is there at once.
    let seen = server.status(key, &job_id);
    assert_eq!(seen["jobId"], job_id);
    assert!(["OPEN", "DONE"].contains(&seen["status"].as_str().unwrap()), "{seen}");

    let done = server.wait_for_status(key, &job_id, &["DONE", "ERROR"], ASR_TIMEOUT);
    assert_eq!(done["status"], "DONE", "{done}");
    assert_eq!(done["nrAudioSeconds"], 11);
    assert_eq!(done["created"], job["created"]);

    let payload = files.wait_for_callback(&job_id, Duration::from_secs(60));
    assert_eq!(payload["status"], "DONE", "{payload}");
    assert_eq!(payload["nrAudioSeconds"], 11, "{payload}");
    assert!(payload.get("errorMsg").is_none() || payload["errorMsg"].is_null(), "{payload}");
}

#[test]
fn french_hyphenated_words_stay_whole_in_the_exports() {
    // Whisper writes "est-il" as the pieces "est" and "-il"; exports must not read "est -il".
    let server = TestServer::start();
    let key = server.key();
    let job =
        server.upload_ok(key, &paths::corpus_file("audio/fr_command_quelle_heure_est_il.wav"), &[("language", "fr")]);
    let id = job["jobId"].as_str().expect("a jobId").to_owned();
    let done = server.wait_for_status(key, &id, &["DONE", "ERROR"], ASR_TIMEOUT);
    assert_eq!(done["status"], "DONE", "{done}");
    let txt = server.get("/jobs/export-txt", key, &[("jobId", &id)]).text.to_lowercase();
    assert!(txt.contains("est-il"), "the inverted question reads as one word: {txt}");
    assert!(!txt.contains(" -"), "no hyphen hangs apart from its word: {txt}");
    let json = server.get("/jobs/export-json", key, &[("jobId", &id)]).ok();
    let words: Vec<String> = json["segments"]
        .as_array()
        .expect("segments")
        .iter()
        .flat_map(|s| {
            s["words"].as_array().expect("words").iter().map(|w| w["text"].as_str().unwrap_or_default().to_lowercase())
        })
        .collect();
    assert!(words.iter().any(|w| w.trim_end_matches(['?', '.']) == "est-il"), "one timed word: {words:?}");
}

/// `language=auto` detects among every language Whisper and the spec share, not just the five the
/// spec names. The corpus has no Spanish clip, so espeak-ng speaks one.
#[test]
fn spanish_speech_sent_with_auto_comes_back_spanish() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let text = "Buenos días. Hoy vamos a hablar del tiempo en Madrid. Mañana hará sol por la mañana \
                y lloverá por la tarde, así que no olvides el paraguas.";
    let wav = speech::spoken(dir.path(), "es_el_tiempo.wav", "es", text);

    let server = TestServer::start();
    let key = server.key();
    let job = server.upload_ok(key, &wav, &[("language", "auto")]);
    let id = job["jobId"].as_str().expect("a jobId").to_owned();
    let done = server.wait_for_status(key, &id, &["DONE", "ERROR"], ASR_TIMEOUT);
    assert_eq!(done["status"], "DONE", "{done}");
    assert_eq!(done["language"], "es", "the detected language is in the job: {done}");
    let txt = server.get("/jobs/export-txt", key, &[("jobId", &id)]).text.to_lowercase();
    assert!(txt.contains("buenos días") && txt.contains("madrid"), "a Spanish transcript, not a translation: {txt}");
    assert!(!txt.contains("good morning") && !txt.contains("weather"), "not translated to English: {txt}");

    // The command line detects by the same rule.
    let model = paths::models_dir().join("whisper-base");
    let out = std::process::Command::new(paths::scribe_bin())
        .args(["transcribe", "--language", "auto", "--model"])
        .arg(&model)
        .arg(&wav)
        .output()
        .expect("scribe transcribe runs");
    let cli = String::from_utf8_lossy(&out.stdout).to_lowercase();
    assert!(out.status.success(), "scribe transcribe failed: {}", String::from_utf8_lossy(&out.stderr));
    assert!(
        cli.contains("buenos días") && cli.contains("madrid"),
        "scribe transcribe --language auto heard Spanish: {cli}"
    );
}

#[test]
fn silent_clip_ends_in_error_saying_no_speech() {
    let server = TestServer::start();
    let files = FileServer::start();
    let key = server.key();
    let callback = files.callback_url();
    let job = server.upload_ok(key, &paths::corpus_file(clips::SILENCE), &[("callbackUrl", &callback)]);
    assert_eq!(job["status"], "OPEN");
    assert_eq!(job["nrAudioSeconds"], 10);
    let job_id = job["jobId"].as_str().unwrap().to_owned();
    let failed = server.wait_for_status(key, &job_id, &["DONE", "ERROR"], ASR_TIMEOUT);
    assert_eq!(failed["status"], "ERROR", "{failed}");

    let payload = files.wait_for_callback(&job_id, Duration::from_secs(60));
    assert_eq!(payload["status"], "ERROR", "{payload}");
    let msg = payload["errorMsg"].as_str().unwrap_or_else(|| panic!("no errorMsg: {payload}"));
    assert!(msg.to_lowercase().contains("no speech"), "errorMsg {msg:?}");

    // The audit log says the same.
    let history = server.scribe_ok(&["replay", &job_id]);
    assert!(history.contains("JobFailed"), "{history}");
}

/// A corrupt file is refused at upload (400 naming `file`) or ends in `ERROR` with a message;
/// either way the message says what is wrong with the file.
#[test]
fn corrupt_files_are_refused_with_a_clear_message() {
    let server = TestServer::start();
    let files = FileServer::start();
    let key = server.key();
    let callback = files.callback_url();
    for clip in [clips::CORRUPT_RANDOM, clips::CORRUPT_TRUNCATED] {
        let reply = server.upload(key, &paths::corpus_file(clip), &[("callbackUrl", &callback)]);
        let message = if reply.status == 400 {
            let body = reply.error(400, Some("file"));
            body["message"].as_str().unwrap().to_owned()
        } else {
            let job = reply.ok()["jobStatus"].clone();
            let job_id = job["jobId"].as_str().unwrap().to_owned();
            let failed = server.wait_for_status(key, &job_id, &["DONE", "ERROR"], ASR_TIMEOUT);
            assert_eq!(failed["status"], "ERROR", "{clip}: {failed}");
            let payload = files.wait_for_callback(&job_id, Duration::from_secs(60));
            payload["errorMsg"].as_str().unwrap_or_default().to_owned()
        };
        let lower = message.to_lowercase();
        assert!(
            ["audio", "media", "decode", "format", "cut short"].iter().any(|w| lower.contains(w)),
            "{clip}: the message does not say what is wrong: {message:?}"
        );
    }
}

#[test]
fn a_text_file_named_wav_is_refused_by_its_content() {
    let server = TestServer::start();
    let key = server.key();
    let reply = server.upload_bytes(key, "notes.wav", b"this is a text file, not a RIFF/WAVE file\n".repeat(100), &[]);
    reply.error(400, Some("file"));
    assert!(server.list_jobs(key, &[]).is_empty(), "a refused upload creates no job");
    let media = server.data_dir().join("media");
    let leftovers: Vec<_> = std::fs::read_dir(&media)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_file() || scribe_tests::server::dir_has_entries(p))
                .collect()
        })
        .unwrap_or_default();
    assert!(leftovers.is_empty(), "files left in {}: {leftovers:?}", media.display());
}

#[test]
fn a_body_without_the_file_part_is_refused_naming_file() {
    let server = TestServer::start();
    let send = |form, query: &[(&str, &str)]| {
        let url = server.url("/api/jobs/upload-media");
        scribe_tests::Reply::send(
            server.http().post(url).query(&[("apiKey", server.key())]).query(query).multipart(form),
        )
    };
    send(reqwest::blocking::multipart::Form::new(), &[]).error(400, Some("file"));
    // A part that is not `file` is named, not skipped.
    send(reqwest::blocking::multipart::Form::new().text("other", "value"), &[]).error(400, Some("other"));
    // A malformed body is told before what its parameters name (here a deleted glossary, 410).
    let glossary = server.post_json("/glossary", server.key(), &json!({"name": "gone"})).ok();
    let glossary_id = glossary["id"].as_str().expect("a glossary id").to_owned();
    server.delete(&format!("/glossary/{glossary_id}"), server.key(), &[]).ok();
    let with_glossary = [("glossaryId", glossary_id.as_str())];
    send(reqwest::blocking::multipart::Form::new(), &with_glossary).error(400, Some("file"));
    let file = || reqwest::blocking::multipart::Part::bytes(b"RIFF".to_vec()).file_name("a.wav");
    send(reqwest::blocking::multipart::Form::new().part("file", file()), &with_glossary).error(410, Some("glossaryId"));
}

#[test]
fn options_given_at_upload_come_back_in_the_job() {
    let server = TestServer::start();
    let key = server.key();
    let short = paths::corpus_file(clips::SHORT);

    let verbatim = server.upload_ok(key, &short, &[("transcriptionStyle", "verbatim"), ("numberOfSpeakers", "1")]);
    assert_eq!(verbatim["jobOptions"], json!({"transcriptionStyle": "verbatim"}), "{verbatim}");
    let id = verbatim["jobId"].as_str().unwrap();
    assert_eq!(server.status(key, id)["jobOptions"], json!({"transcriptionStyle": "verbatim"}));
    let listed = server.list_jobs(key, &[("jobId", id)]);
    assert_eq!(listed[0]["jobOptions"], json!({"transcriptionStyle": "verbatim"}), "list shows jobOptions too");

    let captions = server.upload_ok(key, &short, &[("transcriptionType", "captions"), ("language", "en-us")]);
    assert_eq!(
        (captions["transcriptionType"].as_str(), captions["language"].as_str()),
        (Some("captions"), Some("en-us"))
    );
    assert!(captions.get("jobOptions").is_none());

    let manual = server.upload_ok(key, &short, &[("jobType", "perfect"), ("turnaroundTime", "THREE_DAYS")]);
    assert_eq!(manual["jobType"], "perfect");
    assert_eq!(manual["status"], "OPEN");

    let translated =
        server.upload_ok(key, &short, &[("transcriptionType", "translatedSubtitles"), ("targetLanguage", "pt")]);
    assert_eq!(translated["transcriptionType"], "translatedSubtitles");
    assert_eq!(translated["targetLanguage"], "pt", "{translated}");
}

/// Every kind of invalid parameter of upload-media: 400 with the common body naming the
/// parameter, and no job created.
#[test]
fn invalid_upload_parameters_are_refused_naming_the_field() {
    let server = TestServer::start();
    let key = server.key();
    let short = paths::corpus_file(clips::SHORT);
    let cases: &[(&[(&str, &str)], &str)] = &[
        (&[("language", "xx-yy")], "language"),
        (&[("transcriptionType", "poem")], "transcriptionType"),
        (&[("jobType", "robot")], "jobType"),
        (&[("numberOfSpeakers", "6")], "numberOfSpeakers"),
        (&[("numberOfSpeakers", "-1")], "numberOfSpeakers"),
        (&[("numberOfSpeakers", "two")], "numberOfSpeakers"),
        (&[("transcriptionStyle", "verbatim"), ("transcriptionType", "captions")], "transcriptionStyle"),
        (&[("transcriptionStyle", "poetic")], "transcriptionStyle"),
        (&[("turnaroundTime", "FIVE_DAYS")], "turnaroundTime"),
        (&[("turnaroundTime", "YESTERDAY"), ("jobType", "perfect")], "turnaroundTime"),
        (&[("targetLanguage", "fr")], "targetLanguage"),
        (&[("transcriptionType", "translatedSubtitles")], "targetLanguage"),
        (&[("transcriptionType", "translatedSubtitles"), ("targetLanguage", "ja")], "targetLanguage"),
        // In the spec's direct list, but this server has no English→Finnish model.
        (&[("transcriptionType", "translatedSubtitles"), ("targetLanguage", "fi")], "targetLanguage"),
        (&[("callbackUrl", "not a url")], "callbackUrl"),
        (&[("callbackUrl", "ftp://example.com/x")], "callbackUrl"),
    ];
    for (query, field) in cases {
        let reply = server.upload(key, &short, query);
        let body = reply.error(400, Some(field));
        assert!(body["message"].as_str().unwrap().len() > 10, "{query:?}: message too terse: {body}");
    }
    assert!(server.list_jobs(key, &[]).is_empty(), "no invalid upload may create a job");
}

/// The language table of the spec: every code is accepted (`direct` where Whisper knows the
/// language, `perfect` for all).
#[test]
fn every_language_code_of_the_spec_is_accepted_for_manual_jobs() {
    let server = TestServer::start();
    let key = server.key();
    let short = paths::corpus_file(clips::SHORT);
    for code in ["auto", "en", "en-uk", "de-ch", "fr-ca", "pa-guru-in", "uk-ua", "cmn", "yue", "iw-il"] {
        let job = server.upload_ok(key, &short, &[("language", code), ("jobType", "perfect")]);
        assert_eq!(job["language"], code, "{job}");
    }
}
