//! The web app in a real headless Chromium (WebDriver, fantoccini) against a real server: a
//! customer uploads the JFK clip, follows it to DONE, corrects a word, highlights a sentence
//! (a reload keeps the unsaved work as a draft), saves, and downloads SRT with the correction;
//! a transcriber claims a perfect job's task, edits, submits, and the customer's export shows
//! the edit; a translator translates the source cues and submits. Screenshots of every screen
//! land in `tests/screenshots/<test>/`.

use std::time::{Duration, Instant};

use scribe_tests::{ASR_TIMEOUT, Browser, TestServer, clips, paths};
use serde_json::{Value, json};

const CTRL: &str = "\u{E009}";
const NO_MODIFIERS: &str = "\u{E000}";

fn sign_in(browser: &mut Browser, server: &TestServer, key: &str, expect_heading: &str) {
    browser.goto(&server.url("/"));
    browser.find("#key");
    browser.screenshot("sign-in");
    browser.type_into("#key", key);
    browser.click("#signin-btn");
    browser.wait_for_text("h1", expect_heading, Duration::from_secs(15));
}

/// The CSS selector of the first word of the editor whose letters are `word` (any case).
fn word_selector(browser: &Browser, word: &str) -> String {
    let found = browser.script(
        "const want = arguments[0]; const w = [...document.querySelectorAll('.w')].find(e => e.textContent.replace(/[^a-z]/gi, '').toLowerCase() === want); return w ? [w.dataset.s, w.dataset.w] : null;",
        vec![json!(word)],
    );
    let pair = found.as_array().unwrap_or_else(|| panic!("no word {word:?} in the editor: {}", browser.page_text()));
    format!(".w[data-s=\"{}\"][data-w=\"{}\"]", pair[0].as_str().unwrap(), pair[1].as_str().unwrap())
}

/// Replaces the text of the word at `css` by typing, as a person would.
fn retype_word(browser: &Browser, css: &str, text: &str) {
    browser.click(css);
    browser.type_into(css, &format!("{CTRL}a{NO_MODIFIERS}{text}"));
}

fn wait_for_task(server: &TestServer, key: &str, job_id: &str) -> Value {
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

fn export(server: &TestServer, key: &str, format: &str, job_id: &str, query: &[(&str, &str)]) -> String {
    let mut q = vec![("jobId", job_id)];
    q.extend_from_slice(query);
    let reply = server.get(&format!("/jobs/export-{format}"), key, &q);
    assert_eq!(reply.status, 200, "export-{format}: {}", reply.text);
    reply.text
}

#[test]
fn a_customer_uploads_corrects_highlights_and_downloads_srt_with_the_correction() {
    let server = TestServer::start();
    let ann = server.create_key("ann", Some(100_000));
    let mut browser = Browser::start("customer");

    sign_in(&mut browser, &server, &ann, "Your jobs");
    browser.wait_for_text("#jobs", "No jobs match", Duration::from_secs(10));
    browser.screenshot("jobs-empty");

    // Upload through the form: the file input, with options.
    browser.click("#nav a[href='#/upload']");
    browser.find("#drop-zone");
    browser.select("#o-language", "en");
    let speakers = browser.find("#o-numberOfSpeakers");
    browser.clear(&speakers);
    browser.send_keys(&speakers, "1");
    let clip = paths::corpus_file(clips::JFK).canonicalize().expect("the JFK clip");
    browser.type_into("#file-input", clip.to_str().unwrap());
    browser.wait_for_text("#chosen-file", "en_jfk.wav", Duration::from_secs(5));
    browser.screenshot("upload-form");
    browser.click("#upload-btn");

    // The job page follows the status to DONE.
    browser.wait_for_text("#job-status", "", Duration::from_secs(30));
    browser.screenshot("job-processing");
    browser.wait_for_text("#job-status", "DONE", ASR_TIMEOUT);
    let job_id = browser.script("return location.hash.split('/')[2]", vec![]).as_str().unwrap().to_owned();
    browser.find("#export-srt");
    browser.screenshot("job-done");

    // The editor: words with confidence marks, the waveform, the subtitle preview.
    browser.click("#open-editor");
    browser.find(".w");
    let document = server.get("/jobs/document", &ann, &[("jobId", &job_id)]).ok();
    let low = document["document"]["segments"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["words"].as_array().unwrap().iter())
        .filter(|w| w["conf"].as_f64().unwrap() < 0.6)
        .count();
    assert_eq!(browser.find_all("#transcript .w.low").len(), low, "every low-confidence word is marked, and only those");
    browser.wait_for_attr("#waveform", "data-ready", "true", Duration::from_secs(30));
    browser.screenshot("editor");

    // Correct "fellow" to "dear", keyboard only; a reload offers the unsaved draft back.
    let fellow = word_selector(&browser, "fellow");
    retype_word(&browser, &fellow, "dear");
    browser.wait_for_text("#editor-status", "Unsaved", Duration::from_secs(5));
    std::thread::sleep(Duration::from_millis(800)); // the draft is stored 400 ms after the last change
    browser.refresh();
    browser.find("#draft-offer");
    browser.screenshot("draft-offer");
    browser.click("#restore-draft");
    assert_eq!(browser.text(&browser.find(&fellow)), "dear");

    // Highlight the sentence around "country" (Ctrl+M), then save (Ctrl+S).
    let country = word_selector(&browser, "country");
    browser.click(&country);
    browser.type_into(&country, &format!("{CTRL}m{NO_MODIFIERS}"));
    browser.wait_for_text("#editor-status", "Highlighted", Duration::from_secs(5));
    assert!(!browser.find_all("#transcript .w.hl").is_empty(), "highlighted words are marked");
    browser.type_into(&country, &format!("{CTRL}s{NO_MODIFIERS}"));
    browser.wait_for_text("#editor-notice", "Saved revision 1", Duration::from_secs(15));
    browser.screenshot("editor-saved");

    // Exports: SRT in the page and as a download, with the correction.
    browser.click("a[href^='#/job/']");
    browser.find("#export-srt");
    browser.type_into("#x-chars", "37");
    browser.click("#export-srt");
    let srt = browser.wait_for_text("#export-preview", "dear", Duration::from_secs(15));
    assert!(srt.contains("-->"), "{srt}");
    browser.screenshot("export-srt");
    browser.click("#download-link");
    let downloaded = String::from_utf8(browser.downloaded(&format!("{job_id}.srt"), Duration::from_secs(15))).unwrap();
    assert!(downloaded.contains("dear") && !downloaded.to_lowercase().contains("fellow"), "{downloaded}");
    for line in downloaded.lines().filter(|l| !l.contains("-->") && !l.trim().is_empty() && l.parse::<u32>().is_err()) {
        assert!(line.chars().count() <= 37, "maxCharsPerRow 37 reached the export: {line:?}");
    }

    // The service agrees: the edit is an event, JSON marks it, TXT highlightsOnly has the sentence.
    let json: Value = serde_json::from_str(&export(&server, &ann, "json", &job_id, &[])).unwrap();
    let words: Vec<&Value> = json["segments"].as_array().unwrap().iter().flat_map(|s| s["words"].as_array().unwrap()).collect();
    let dear = words.iter().find(|w| w["text"].as_str().unwrap().contains("dear")).expect("the corrected word");
    assert_eq!(dear["pristine"], false);
    assert_eq!(json["highlights"].as_array().unwrap().len(), 1, "{json}");
    let highlights = export(&server, &ann, "txt", &job_id, &[("highlightsOnly", "true")]);
    assert!(highlights.to_lowercase().contains("ask not what your country"), "{highlights}");
    let history = server.scribe_ok(&["replay", &job_id]);
    assert!(history.contains("DocumentEdited") && history.contains("by=ann"), "{history}");

    // The job list shows the job.
    browser.click("#nav a[href='#/jobs']");
    browser.wait_for_text("#jobs", "en_jfk.wav", Duration::from_secs(10));
    browser.screenshot("jobs-list");

    // At 200 % zoom (half the CSS width) the editor reflows to one column.
    browser.set_window_size(640, 1000);
    browser.goto(&server.url(&format!("/#/edit/{job_id}")));
    browser.find("#transcript .w");
    browser.screenshot("editor-200-percent");
    let overflow = browser.script("return document.documentElement.scrollWidth - document.documentElement.clientWidth", vec![]);
    assert!(overflow.as_i64().unwrap() <= 0, "the page scrolls sideways at 200 % zoom by {overflow}px");

    // The editor's endpoints refuse what they must, with the usual error body.
    let bob = server.create_key("bob", None);
    server.get("/jobs/document", &bob, &[("jobId", &job_id)]).error(403, Some("jobId"));
    let tina = server.create_staff_key("tina", "transcriber", &[]);
    server.get("/jobs/document", &tina, &[("jobId", &job_id)]).error(403, Some("apiKey"));
    assert_eq!(server.get("/me", &tina, &[]).ok()["role"], "transcriber");
    let mut bad = document["document"].clone();
    bad["segments"][0]["words"][0]["text"] = json!(" ");
    let reply = server.http().put(server.url("/api/jobs/document")).query(&[("apiKey", ann.as_str()), ("jobId", job_id.as_str())]).json(&bad).send().unwrap();
    assert_eq!(reply.status().as_u16(), 400);
    let body: Value = reply.json().unwrap();
    assert_eq!(body["field"], "document.segments[0].words[0].text", "{body}");
}

#[test]
fn a_transcriber_claims_edits_and_submits_and_the_customer_export_shows_it() {
    let server = TestServer::start();
    let customer = server.key().to_owned();
    let tina = server.create_staff_key("tina", "transcriber", &["en"]);
    let job = server.upload_ok(&customer, &paths::corpus_file(clips::JFK), &[("jobType", "perfect"), ("numberOfSpeakers", "1")]);
    let job_id = job["jobId"].as_str().unwrap().to_owned();
    let glossary_free_task = wait_for_task(&server, &tina, &job_id);
    let task_id = glossary_free_task["taskId"].as_str().unwrap().to_owned();

    let mut browser = Browser::start("transcriber");
    sign_in(&mut browser, &server, &tina, "Transcription tasks");
    browser.find(".claim");
    browser.screenshot("tasks");
    browser.click(".claim");
    browser.find(".w");
    browser.find("#instructions");
    browser.wait_for_attr("#waveform", "data-ready", "true", Duration::from_secs(30));
    browser.screenshot("task-editor");

    let country = word_selector(&browser, "country");
    retype_word(&browser, &country, "nation");
    browser.click("#save");
    browser.wait_for_text("#editor-notice", "Saved revision 1", Duration::from_secs(15));
    browser.wait_for_text("#lease", "You hold this task", Duration::from_secs(5));
    browser.screenshot("task-saved");
    browser.click("#submit-task");
    browser.accept_dialog();
    browser.wait_for_text("h1", "Transcription tasks", Duration::from_secs(15));
    browser.wait_for_text("#tasks", "No tasks", Duration::from_secs(10));
    browser.screenshot("task-submitted");
    let status = server.wait_for_status(&customer, &job_id, &["DONE"], Duration::from_secs(30));
    assert_eq!(status["status"], "DONE");
    let replay = server.scribe_ok(&["replay", &job_id]);
    assert!(replay.contains("TaskSubmitted") && replay.contains("by=tina"), "{replay}");
    let _ = task_id;

    // The customer sees the edit in the export, in the app.
    browser.click("#sign-out");
    sign_in(&mut browser, &server, &customer, "Your jobs");
    browser.goto(&server.url(&format!("/#/job/{job_id}")));
    browser.click("#export-srt");
    browser.wait_for_text("#export-preview", "nation", Duration::from_secs(15));
    browser.screenshot("customer-export");
    assert!(export(&server, &customer, "srt", &job_id, &[]).contains("nation"));
}

#[test]
fn a_translator_translates_the_source_cues_and_submits() {
    let server = TestServer::start();
    let customer = server.key().to_owned();
    let tina = server.create_staff_key("tina", "transcriber", &[]);
    let tom = server.create_staff_key("tom", "translator", &["nl"]);
    let job = server.upload_ok(
        &customer,
        &paths::corpus_file(clips::SHORT),
        &[("jobType", "perfect"), ("transcriptionType", "translatedSubtitles"), ("targetLanguage", "nl")],
    );
    let job_id = job["jobId"].as_str().unwrap().to_owned();
    // The transcription task first (over HTTP: the transcriber's screens have their own test).
    let transcribe = wait_for_task(&server, &tina, &job_id);
    let transcribe_id = transcribe["taskId"].as_str().unwrap();
    server.post(&format!("/work/tasks/{transcribe_id}/claim"), &tina, &[]).ok();
    server.post(&format!("/work/tasks/{transcribe_id}/submit"), &tina, &[]).ok();
    wait_for_task(&server, &tom, &job_id);

    let mut browser = Browser::start("translator");
    sign_in(&mut browser, &server, &tom, "Translation tasks");
    browser.find(".claim");
    browser.screenshot("tasks");
    browser.click(".claim");
    browser.find("textarea.target");
    browser.wait_for_attr("#waveform", "data-ready", "true", Duration::from_secs(30));
    let sources = browser.find_all("td.source");
    assert!(!sources.is_empty());
    assert!(browser.text(&sources[0]).to_lowercase().contains("weather"), "the source cue is shown beside the target");
    browser.screenshot("translate-editor");
    let targets = browser.find_all("textarea.target");
    for (i, t) in targets.iter().enumerate() {
        browser.send_keys(t, &format!("Hoe is het weer in New York, deel {}?", i + 1));
    }
    browser.click("#save");
    browser.wait_for_text("#editor-notice", "Saved revision 1", Duration::from_secs(15));
    browser.screenshot("translate-saved");
    browser.click("#submit-task");
    browser.accept_dialog();
    browser.wait_for_text("#tasks", "No tasks", Duration::from_secs(15));
    browser.screenshot("translate-submitted");

    server.wait_for_status(&customer, &job_id, &["DONE"], Duration::from_secs(30));
    let srt = export(&server, &customer, "srt", &job_id, &[]);
    assert!(srt.contains("Hoe is het weer") && srt.contains("deel 1"), "{srt}");
}
