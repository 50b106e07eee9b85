//! Steps the web app's browser tests share: signing in, finding and retyping a word in the
//! editor, waiting for a job's task to reach the queue, bringing a translation order to its
//! translator, and reading a job's waveform peaks as the editor does.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::{ASR_TIMEOUT, Browser, TestServer, clips, paths};

const CTRL: &str = "\u{E009}";
const NO_MODIFIERS: &str = "\u{E000}";

/// Opens the app, signs in with `key` and waits for the role's first heading.
pub fn sign_in(browser: &mut Browser, server: &TestServer, key: &str, expect_heading: &str) {
    browser.goto(&server.url("/"));
    browser.find("#key");
    browser.type_into("#key", key);
    browser.click("#signin-btn");
    browser.wait_for_text("h1", expect_heading, Duration::from_secs(15));
}

/// The CSS selector of the first word of the editor whose letters are `word` (any case).
pub fn word_selector(browser: &Browser, word: &str) -> String {
    let found = browser.script(
        "const want = arguments[0]; const w = [...document.querySelectorAll('.w')].find(e => e.textContent.replace(/[^a-z]/gi, '').toLowerCase() === want); return w ? [w.dataset.s, w.dataset.w] : null;",
        vec![json!(word)],
    );
    let pair = found.as_array().unwrap_or_else(|| panic!("no word {word:?} in the editor: {}", browser.page_text()));
    format!(".w[data-s=\"{}\"][data-w=\"{}\"]", pair[0].as_str().unwrap(), pair[1].as_str().unwrap())
}

/// Replaces the text of the word at `css` by typing, as a person would.
pub fn retype_word(browser: &Browser, css: &str, text: &str) {
    browser.click(css);
    browser.type_into(css, &format!("{CTRL}a{NO_MODIFIERS}{text}"));
}

/// The task of `job_id` in `key`'s queue, once it is there.
pub fn wait_for_task(server: &TestServer, key: &str, job_id: &str) -> Value {
    let deadline = Instant::now() + ASR_TIMEOUT;
    loop {
        let tasks = server.get("/work/tasks", key, &[]).ok();
        if let Some(t) = tasks.as_array().unwrap().iter().find(|t| t["jobId"] == job_id) {
            return t.clone();
        }
        assert!(Instant::now() < deadline, "no task for {job_id}\n{}", server.logs());
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// Orders a manual Dutch translation of the short clip as `customer`, has `transcriber` claim
/// and submit its transcription task over HTTP, and waits for the translation task in
/// `translator`'s queue: the job's id and that task.
pub fn translation_for_translator(
    server: &TestServer,
    customer: &str,
    transcriber: &str,
    translator: &str,
) -> (String, Value) {
    let job = server.upload_ok(
        customer,
        &paths::corpus_file(clips::SHORT),
        &[("jobType", "perfect"), ("transcriptionType", "translatedSubtitles"), ("targetLanguage", "nl")],
    );
    let job_id = job["jobId"].as_str().unwrap().to_owned();
    let transcribe = wait_for_task(server, transcriber, &job_id);
    let transcribe_id = transcribe["taskId"].as_str().unwrap();
    server.post(&format!("/work/tasks/{transcribe_id}/claim"), transcriber, &[]).ok();
    server.post(&format!("/work/tasks/{transcribe_id}/submit"), transcriber, &[]).ok();
    let translate = wait_for_task(server, translator, &job_id);
    (job_id, translate)
}

/// Where the media worker writes a job's waveform peaks (20 pairs a second), beside its media.
pub fn peaks_file(server: &TestServer, job_id: &str) -> std::path::PathBuf {
    server.data_dir().join("media").join(job_id).join(".peaks-20.json")
}

/// The names of the files beside a job's media (for messages).
pub fn media_files(server: &TestServer, job_id: &str) -> Vec<String> {
    std::fs::read_dir(server.data_dir().join("media").join(job_id))
        .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default()
}

/// The link the editor reads a job's waveform peaks from (beside its document's media link).
pub fn peaks_url(server: &TestServer, key: &str, job_id: &str) -> String {
    let media_url =
        server.get("/jobs/document", key, &[("jobId", job_id)]).ok()["mediaUrl"].as_str().unwrap().to_owned();
    media_url.replacen("/api/work/media?", "/api/work/media/peaks?", 1)
}

/// The peaks served at `peaks_url`, checked to be the numbers of `prepared` (the peaks file
/// written beside the media) at 20 pairs a second; returns the served JSON.
pub fn served_peaks_match(server: &TestServer, peaks_url: &str, prepared: &Value) -> Value {
    let reply = server.http().get(peaks_url).send().unwrap();
    assert_eq!(reply.status().as_u16(), 200, "{peaks_url}");
    let served: Value = reply.json().unwrap();
    // The same numbers (the API writes each f32 as the f64 it widens to).
    for side in ["min", "max"] {
        let (a, b) = (served[side].as_array().unwrap(), prepared[side].as_array().unwrap());
        assert_eq!(a.len(), b.len(), "{side}");
        assert!(a.iter().zip(b).all(|(x, y)| (x.as_f64().unwrap() - y.as_f64().unwrap()).abs() < 1e-6), "{side}");
    }
    assert_eq!(served["peaksPerSecond"], json!(20));
    served
}
