//! The web app in a real headless Chromium (WebDriver, fantoccini) against a real server: a
//! customer uploads the JFK clip, follows it to DONE, corrects a word, highlights a sentence
//! (a reload keeps the unsaved work as a draft), saves, and downloads SRT with the correction;
//! a transcriber claims a perfect job's task, edits, submits, and the customer's export shows
//! the edit; a translator translates the source cues and submits; the job list and the job page
//! show a long job's progress while it is transcribed, and its end. Screenshots of every screen
//! land in `tests/screenshots/<test>/`.

use std::time::{Duration, Instant};

use scribe_tests::web_app::{retype_word, translation_for_translator, wait_for_task, word_selector};
use scribe_tests::{ASR_TIMEOUT, Browser, FileServer, TestServer, clips, paths};
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
    assert_eq!(
        browser.find_all("#transcript .w.low").len(),
        low,
        "every low-confidence word is marked, and only those"
    );
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
    let words: Vec<&Value> =
        json["segments"].as_array().unwrap().iter().flat_map(|s| s["words"].as_array().unwrap()).collect();
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
    let overflow =
        browser.script("return document.documentElement.scrollWidth - document.documentElement.clientWidth", vec![]);
    assert!(overflow.as_i64().unwrap() <= 0, "the page scrolls sideways at 200 % zoom by {overflow}px");

    // The editor's endpoints refuse what they must, with the usual error body.
    let bob = server.create_key("bob", None);
    server.get("/jobs/document", &bob, &[("jobId", &job_id)]).error(403, Some("jobId"));
    let tina = server.create_staff_key("tina", "transcriber", &[]);
    server.get("/jobs/document", &tina, &[("jobId", &job_id)]).error(403, Some("apiKey"));
    assert_eq!(server.get("/me", &tina, &[]).ok()["role"], "transcriber");
    let mut bad = document["document"].clone();
    bad["segments"][0]["words"][0]["text"] = json!(" ");
    let reply = server
        .http()
        .put(server.url("/api/jobs/document"))
        .query(&[("apiKey", ann.as_str()), ("jobId", job_id.as_str())])
        .json(&bad)
        .send()
        .unwrap();
    assert_eq!(reply.status().as_u16(), 400);
    let body: Value = reply.json().unwrap();
    assert_eq!(body["field"], "document.segments[0].words[0].text", "{body}");
}

#[test]
fn a_transcriber_claims_edits_and_submits_and_the_customer_export_shows_it() {
    let server = TestServer::start();
    let customer = server.key().to_owned();
    let tina = server.create_staff_key("tina", "transcriber", &["en"]);
    let tom = server.create_staff_key("tom", "translator", &[]);
    let job = server.upload_ok(
        &customer,
        &paths::corpus_file(clips::JFK),
        &[("jobType", "perfect"), ("transcriptionType", "captions"), ("numberOfSpeakers", "1")],
    );
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
    browser.click("#submit-confirm-submit");
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

    // The customer orders translated subtitles of the finished manual captions.
    browser.find("#translate-form");
    wait_for_option(&browser, "#t-target", "nl");
    browser.click("#order-translation");
    browser.wait_for_text("#translate-error", "Target language", Duration::from_secs(10)); // not `targetLanguage`
    browser.select("#t-target", "nl");
    browser.select("#t-turnaround", "TEN_DAYS");
    browser.type_into("#t-notes", "Keep the rhetoric");
    browser.screenshot("order-translation");
    browser.click("#order-translation");
    browser.wait_for_text("#job-status", "BUSY", Duration::from_secs(15));
    browser.wait_for_text("#source-job", &job_id, Duration::from_secs(5));
    browser.screenshot("translation-ordered");
    let order_id = browser.script("return location.hash.split('/')[2]", vec![]).as_str().unwrap().to_owned();
    let order = server.status(&customer, &order_id);
    assert_eq!(
        (order["targetLanguage"].as_str(), order["notes"].as_str()),
        (Some("nl"), Some("Keep the rhetoric")),
        "{order}"
    );
    let translate = wait_for_task(&server, &tom, &order_id);
    assert_eq!(translate["kind"], "translate", "{translate}");
    assert_eq!(
        translate["deadline"].as_u64().unwrap() - order["created"].as_u64().unwrap(),
        10 * 86_400_000,
        "TEN_DAYS: {translate}"
    );
}

#[test]
fn a_translator_translates_the_source_cues_and_submits() {
    let server = TestServer::start();
    let customer = server.key().to_owned();
    let tina = server.create_staff_key("tina", "transcriber", &[]);
    let tom = server.create_staff_key("tom", "translator", &["nl"]);
    // The transcription task first (over HTTP: the transcriber's screens have their own test).
    let (job_id, _) = translation_for_translator(&server, &customer, &tina, &tom);

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
    browser.click("#submit-confirm-submit");
    browser.wait_for_text("#tasks", "No tasks", Duration::from_secs(15));
    browser.screenshot("translate-submitted");

    server.wait_for_status(&customer, &job_id, &["DONE"], Duration::from_secs(30));
    let srt = export(&server, &customer, "srt", &job_id, &[]);
    assert!(srt.contains("Hoe is het weer") && srt.contains("deel 1"), "{srt}");
}

/// Waits until the select matching `css` offers `value` (options load from the API).
fn wait_for_option(browser: &Browser, css: &str, value: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    let probe = "const s = document.querySelector(arguments[0]); return !!s && [...s.options].some(o => o.value === arguments[1]);";
    while browser.script(probe, vec![json!(css), json!(value)]) != json!(true) {
        assert!(Instant::now() < deadline, "{css} does not offer {value}: {}", browser.page_text());
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// How many segments the editor shows.
fn segments(browser: &Browser) -> u64 {
    js(browser, "document.querySelectorAll('#transcript section.segment').length").as_u64().unwrap()
}

/// The editor's playback clock (`mm:ss.s`) in seconds.
fn time(browser: &Browser) -> f64 {
    let clock = js(browser, "document.querySelector('#time').textContent");
    let clock = clock.as_str().unwrap();
    let (m, s) = clock.split_once(':').unwrap();
    m.parse::<f64>().unwrap() * 60.0 + s.parse::<f64>().unwrap()
}

/// Reads a number (or string) from the page.
fn js(browser: &Browser, expr: &str) -> Value {
    browser.script(&format!("return {expr};"), vec![])
}

#[test]
fn a_customer_manages_glossaries_and_uploads_by_drag_and_drop_and_by_url() {
    let server = TestServer::start();
    let files = FileServer::start();
    let ann = server.create_key("ann", Some(100_000));
    let tina = server.create_staff_key("tina", "transcriber", &[]);
    let mut browser = Browser::start("upload");
    sign_in(&mut browser, &server, &ann, "Your jobs");

    // A glossary with two terms, then edited: renamed, a description changed, a term removed
    // and one added.
    browser.click("#nav a[href='#/glossaries']");
    browser.type_into("#g-name", "Berlin");
    browser.type_into("#g-names", "Kennedy, Berlin");
    browser.type_into(".item-row:nth-child(1) .g-term", "Berliner");
    browser.type_into(".item-row:nth-child(1) .g-desc", "a person from Berlin");
    browser.click("#g-add-item");
    browser.type_into(".item-row:nth-child(2) .g-term", "Bundestag");
    browser.type_into(".item-row:nth-child(2) .g-desc", "the parliament");
    browser.screenshot("glossary-new");
    browser.click("#g-save");
    browser.wait_for_text("#glossary-notice", "Glossary Berlin created", Duration::from_secs(10));
    browser.wait_for_text("#glossaries", "the parliament", Duration::from_secs(10));
    browser.click(".g-edit");
    browser.wait_for_text("#g-form-h", "Edit glossary Berlin", Duration::from_secs(5));
    let name = browser.find("#g-name");
    browser.clear(&name);
    browser.send_keys(&name, "JFK speeches");
    let desc = browser.find(".item-row:nth-child(1) .g-desc");
    browser.clear(&desc);
    browser.send_keys(&desc, "someone who lives in Berlin");
    browser.click(".item-row:nth-child(2) button");
    browser.click("#g-add-item");
    browser.type_into(".item-row:nth-child(2) .g-term", "Americans");
    browser.screenshot("glossary-edit");
    browser.click("#g-save");
    browser.wait_for_text("#glossary-notice", "Glossary JFK speeches saved", Duration::from_secs(10));
    browser.wait_for_text("#glossaries", "someone who lives in Berlin", Duration::from_secs(10));
    browser.screenshot("glossaries");
    let glossaries = server.get("/glossary", &ann, &[]).ok();
    let glossary = &glossaries.as_array().unwrap()[0];
    assert_eq!(glossaries.as_array().unwrap().len(), 1, "{glossaries}");
    assert_eq!(glossary["name"], "JFK speeches");
    assert_eq!(glossary["names"], json!(["Kennedy", "Berlin"]));
    assert_eq!(
        glossary["items"],
        json!([{"name": "Berliner", "description": "someone who lives in Berlin"}, {"name": "Americans"}]),
        "{glossary}"
    );
    let glossary_id = glossary["id"].as_str().unwrap().to_owned();

    // Drag and drop, with options only a manual job takes; uploads are throttled so the
    // progress bar can be seen moving.
    browser.click("#nav a[href='#/upload']");
    browser.find("#drop-zone");
    wait_for_option(&browser, "#o-glossaryId", &glossary_id);
    assert_eq!(
        js(&browser, "document.querySelector('#o-turnaroundTime').disabled"),
        json!(true),
        "turnaround is for perfect jobs"
    );
    browser.select("#o-jobType", "perfect");
    browser.select("#o-transcriptionType", "captions");
    assert_eq!(js(&browser, "document.querySelector('#o-turnaroundTime').disabled"), json!(false));
    assert_eq!(
        js(&browser, "document.querySelector('#o-transcriptionStyle').disabled"),
        json!(true),
        "style is for transcripts"
    );
    assert_eq!(js(&browser, "document.querySelector('#o-targetLanguage').disabled"), json!(true));
    browser.select("#o-language", "en-us");
    browser.select("#o-turnaroundTime", "THREE_DAYS");
    browser.select("#o-glossaryId", &glossary_id);
    let speakers = browser.find("#o-numberOfSpeakers");
    browser.clear(&speakers);
    browser.send_keys(&speakers, "1");
    browser.type_into("#o-callbackUrl", &files.callback_url());
    let clip = paths::corpus_file(clips::JFK);
    browser.drop_file("#drop-zone", &clip, "audio/wav");
    browser.wait_for_text("#chosen-file", "en_jfk.wav", Duration::from_secs(5));
    browser.throttle_uploads(Some(64 * 1024));
    browser.click("#upload-btn");
    // The bar moves: a value strictly between 0 and 100 is seen before the job page opens.
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut seen = Vec::new();
    loop {
        let v = js(&browser, "(document.querySelector('#upload-progress') || {}).value");
        if let Some(v) = v.as_f64()
            && v > 0.0
            && v < 100.0
        {
            seen.push(v);
            if seen.len() == 1 {
                browser.screenshot("upload-progress");
            }
        }
        if v.is_null() || Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(!seen.is_empty(), "the progress bar never showed a value between 0 and 100");
    browser.throttle_uploads(None);
    browser.wait_for_text("#job-status", "OPEN", Duration::from_secs(30));
    browser.screenshot("dropped-job");
    let dropped_id = browser.script("return location.hash.split('/')[2]", vec![]).as_str().unwrap().to_owned();
    let status = server.status(&ann, &dropped_id);
    assert_eq!(
        (status["jobType"].as_str(), status["transcriptionType"].as_str(), status["language"].as_str()),
        (Some("perfect"), Some("captions"), Some("en-us")),
        "{status}"
    );
    assert_eq!(status["filename"], "en_jfk.wav");
    let task = wait_for_task(&server, &tina, &dropped_id);
    assert_eq!(task["glossaryName"], "JFK speeches", "{task}");
    assert_eq!(
        task["deadline"].as_u64().unwrap() - status["created"].as_u64().unwrap(),
        3 * 86_400_000,
        "THREE_DAYS: {task}"
    );

    // From a URL, with a style: a bad URL first (the API's error in place), then the short clip.
    browser.click("#nav a[href='#/upload']");
    browser.find("#source-url");
    browser.select("#o-transcriptionStyle", "verbatim");
    let speakers = browser.find("#o-numberOfSpeakers");
    browser.clear(&speakers);
    browser.send_keys(&speakers, "1");
    browser.script("document.querySelector('#source-url').type = 'text'", vec![]);
    browser.type_into("#source-url", "ftp://example.com/talk.mp3");
    browser.click("#url-btn");
    browser.wait_for_text("#url-error", "Media URL", Duration::from_secs(10)); // the form's label, not `sourceUrl`
    browser.screenshot("url-error");
    // A URL that answers 404: the job page follows it to ERROR and says why.
    let url = browser.find("#source-url");
    browser.clear(&url);
    browser.send_keys(&url, &files.url("/missing.wav"));
    browser.click("#url-btn");
    browser.wait_for_text("#job-status", "ERROR", Duration::from_secs(60));
    browser.wait_for_text("#error-msg", "404", Duration::from_secs(10));
    browser.screenshot("url-job-error");
    browser.click("#nav a[href='#/upload']");
    browser.find("#source-url");
    browser.select("#o-transcriptionStyle", "verbatim");
    let speakers = browser.find("#o-numberOfSpeakers");
    browser.clear(&speakers);
    browser.send_keys(&speakers, "1");
    let url = browser.find("#source-url");
    browser.clear(&url);
    browser.send_keys(&url, &files.corpus_url(clips::SHORT));
    browser.screenshot("url-form");
    browser.click("#url-btn");
    browser.wait_for_text("#job-status", "DONE", ASR_TIMEOUT);
    browser.screenshot("url-job-done");
    let url_id = browser.script("return location.hash.split('/')[2]", vec![]).as_str().unwrap().to_owned();
    let status = server.status(&ann, &url_id);
    assert_eq!(status["jobOptions"]["transcriptionStyle"], "verbatim", "{status}");
    assert_eq!(status["jobType"], "direct");
    assert!(export(&server, &ann, "txt", &url_id, &[]).to_lowercase().contains("weather"));

    // The list filters: only the manual job is perfect.
    browser.click("#nav a[href='#/jobs']");
    browser.select("#f-jobtype", "perfect");
    browser.click("#f-apply");
    browser.wait_for_count("#jobs tbody tr", 1, Duration::from_secs(10));
    browser.wait_for_text("#jobs", "perfect captions", Duration::from_secs(10));
    browser.screenshot("jobs-filtered");

    // At 200 % zoom the upload form reflows; keyboard users see where they are.
    browser.click("#nav a[href='#/upload']");
    browser.find("#drop-zone");
    browser.zoom(200, 1280, 1000);
    browser.screenshot("upload-200-percent");
    let overflow = js(&browser, "document.documentElement.scrollWidth - document.documentElement.clientWidth");
    assert!(overflow.as_i64().unwrap() <= 0, "the upload page scrolls sideways at 200 % zoom by {overflow}px");
    browser.zoom(100, 1280, 1000);
    browser.refresh();
    browser.find("#drop-zone");
    browser.press("\u{E004}"); // Tab from the page's start: the first control, with a focus ring
    assert_eq!(js(&browser, "document.activeElement.id"), json!("o-language"), "{}", browser.page_text());
    assert_eq!(js(&browser, "getComputedStyle(document.activeElement).outlineStyle"), json!("solid"));
    browser.screenshot("keyboard-focus");
}

#[test]
fn the_editor_splits_joins_renames_highlights_words_keeps_a_draft_and_answers_the_keyboard() {
    let server = TestServer::start_float16(); // the JFK clip in two segments
    let ann = server.create_key("ann", Some(100_000));
    let job = server.upload_ok(&ann, &paths::corpus_file(clips::JFK), &[("numberOfSpeakers", "1")]);
    let job_id = job["jobId"].as_str().unwrap().to_owned();
    server.wait_for_status(&ann, &job_id, &["DONE"], ASR_TIMEOUT);
    let before = server.get("/jobs/document", &ann, &[("jobId", &job_id)]).ok()["document"].clone();
    let words: Vec<String> = before["segments"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["words"].as_array().unwrap().iter().map(|w| w["text"].as_str().unwrap().to_owned()))
        .collect();
    let mut browser = Browser::start("editor");
    sign_in(&mut browser, &server, &ann, "Your jobs");
    browser.goto(&server.url(&format!("/#/edit/{job_id}")));
    browser.find("#transcript .w");
    browser.wait_for_attr("#waveform", "data-ready", "true", Duration::from_secs(30));
    let n_segments = segments(&browser);

    // Keyboard: Esc plays and pauses; Ctrl+↓/↑ go to the next/previous segment; Ctrl+B goes back 5 s.
    let first = ".w[data-s=\"0\"][data-w=\"0\"]";
    browser.click(first);
    browser.type_into(first, "\u{E00C}");
    browser.wait_for_text("#play", "Pause", Duration::from_secs(10));
    browser.type_into(first, "\u{E00C}");
    browser.wait_for_text("#play", "Play", Duration::from_secs(10));
    browser.type_into(first, &format!("{CTRL}\u{E015}{NO_MODIFIERS}"));
    let second_start = before["segments"][1]["words"][0]["start"].as_f64().unwrap();
    assert!(
        (time(&browser) - second_start).abs() < 0.11,
        "Ctrl+↓ goes to segment 2 at {second_start}, the clock says {}",
        time(&browser)
    );
    assert_eq!(js(&browser, "document.activeElement.dataset.s"), json!("1"), "the cursor moves to segment 2");
    browser.press(&format!("{CTRL}\u{E013}"));
    assert!(time(&browser) < 0.11, "Ctrl+↑ goes back to segment 1: {}", time(&browser));
    let late = word_selector(&browser, "country");
    browser.click(&late);
    let at = time(&browser);
    browser.press(&format!("{CTRL}b"));
    assert!((time(&browser) - (at - 5.0).max(0.0)).abs() < 0.11, "Ctrl+B from {at} goes to {}", time(&browser));

    // Split segment 1 at the first "ask" (Ctrl+Enter), then join the last segment to it.
    let ask = word_selector(&browser, "ask");
    browser.click(&ask);
    browser.press(&format!("{CTRL}\u{E007}"));
    browser.wait_for_text("#editor-status", "split", Duration::from_secs(5));
    assert_eq!(segments(&browser), n_segments + 1);
    browser.screenshot("split");
    let last = segments(&browser) - 1;
    browser.click(&format!(".join[data-seg=\"{last}\"]"));
    browser.wait_for_text("#editor-status", "joined", Duration::from_secs(5));
    assert_eq!(segments(&browser), n_segments);

    // Rename the speaker, add a second one and give it the first segment.
    let speaker = browser.find("#speaker-0");
    browser.clear(&speaker);
    browser.send_keys(&speaker, "John F. Kennedy");
    browser.click("#add-speaker");
    let narrator = browser.find("#speaker-1");
    browser.clear(&narrator);
    browser.send_keys(&narrator, "Narrator");
    let narrator_id = js(&browser, "document.querySelector('#speaker-1').dataset.spkid").as_str().unwrap().to_owned();
    browser.select("#seg-speaker-0", &narrator_id);

    // Highlight words, not sentences: "ask not what your" with Ctrl+Shift+→, "you can do" with
    // Shift+click; then take "not what" out again, which splits the first highlight.
    let ask = word_selector(&browser, "ask");
    browser.click(&ask);
    for _ in 0..3 {
        browser.press(&format!("{CTRL}\u{E008}\u{E014}"));
    }
    browser.wait_for_text("#editor-status", "ask not what your", Duration::from_secs(5));
    browser.press(&format!("{CTRL}m"));
    browser.wait_for_text("#editor-status", "Highlighted", Duration::from_secs(5));
    assert_eq!(browser.find_all("#transcript .w.hl").len(), 4);
    let you = browser.script(
        "const ws = [...document.querySelectorAll('.w')]; const i = ws.findIndex((w, k) => k > 0 && w.textContent.startsWith('you') && ws[k + 1] && ws[k + 1].textContent === 'can'); return [ws[i].dataset.s, ws[i].dataset.w, ws[i + 2].dataset.s, ws[i + 2].dataset.w];",
        vec![],
    );
    let you = you.as_array().unwrap();
    browser.click(&format!(".w[data-s=\"{}\"][data-w=\"{}\"]", you[0].as_str().unwrap(), you[1].as_str().unwrap()));
    browser.shift_click(&format!(
        ".w[data-s=\"{}\"][data-w=\"{}\"]",
        you[2].as_str().unwrap(),
        you[3].as_str().unwrap()
    ));
    browser.wait_for_text("#editor-status", "you can do", Duration::from_secs(5));
    browser.screenshot("words-chosen");
    browser.press(&format!("{CTRL}m"));
    browser.wait_for_text("#editor-status", "Highlighted: “you can do”", Duration::from_secs(5));
    let not = word_selector(&browser, "not");
    browser.click(&not);
    browser.press(&format!("{CTRL}\u{E008}\u{E014}"));
    browser.press(&format!("{CTRL}m"));
    browser.wait_for_text("#editor-status", "Highlight removed from “not what”", Duration::from_secs(5));
    assert_eq!(browser.find_all("#transcript .w.hl").len(), 5, "ask, your, you can do");
    browser.screenshot("word-highlights");

    // Nothing is saved yet: a reload offers the whole draft back.
    std::thread::sleep(Duration::from_millis(800));
    browser.refresh();
    browser.find("#draft-offer");
    browser.screenshot("draft-after-reload");
    browser.click("#restore-draft");
    assert_eq!(browser.find_all("#transcript .w.hl").len(), 5);
    assert_eq!(js(&browser, "document.querySelector('#speaker-1').value"), json!("Narrator"));
    assert_eq!(js(&browser, "document.querySelector('#seg-speaker-0').value"), json!(narrator_id));
    browser.click(first);
    browser.press(&format!("{CTRL}s"));
    browser.wait_for_text("#editor-notice", "Saved revision 1", Duration::from_secs(15));
    browser.screenshot("editor-saved");

    // The exports show all of it.
    let json: Value = serde_json::from_str(&export(&server, &ann, "json", &job_id, &[])).unwrap();
    let names: Vec<&str> = json["speakers"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["John F. Kennedy", "Narrator"], "{json}");
    assert_eq!(json["segments"][0]["speaker"], narrator_id.as_str());
    assert_eq!(json["segments"].as_array().unwrap().len() as u64, n_segments);
    let after: Vec<String> = json["segments"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["words"].as_array().unwrap().iter().map(|w| w["text"].as_str().unwrap().to_owned()))
        .collect();
    assert_eq!(after, words, "no word was lost or changed by splitting and joining");
    let texts: Vec<&str> = json["highlights"].as_array().unwrap().iter().map(|h| h["text"].as_str().unwrap()).collect();
    assert_eq!(texts, ["ask", "your", "you can do"], "{json}");
    let txt = export(&server, &ann, "txt", &job_id, &[("highlightsOnly", "true"), ("includeTimestamps", "false")]);
    assert!(!txt.contains("not") && txt.contains("you can do"), "{txt}");
    let all = export(&server, &ann, "txt", &job_id, &[("includeTimestamps", "false")]);
    assert!(all.starts_with("Narrator:"), "the first segment is the renamed second speaker's, by name: {all}");
    assert!(all.contains("\nJohn F. Kennedy:"), "the other speaker by name: {all}");

    // The editor at 200 % zoom.
    browser.zoom(200, 1280, 1000);
    browser.refresh();
    browser.find("#transcript .w");
    browser.screenshot("editor-200-percent-zoom");
    let overflow = js(&browser, "document.documentElement.scrollWidth - document.documentElement.clientWidth");
    assert!(overflow.as_i64().unwrap() <= 0, "the editor scrolls sideways at 200 % zoom by {overflow}px");
}

/// The value of the `<progress>` under `css`, checked to be a labelled percent. (Read in one
/// script: the page re-renders the bar when it refreshes.)
fn progress_value(browser: &Browser, css: &str) -> u64 {
    let bar = browser.script(
        "const b = document.querySelector(arguments[0]); return b && [b.max, b.value, b.getAttribute('aria-label')];",
        vec![json!(format!("{css} progress"))],
    );
    assert_eq!(bar[0], json!(100), "{css}: {bar}");
    assert!(bar[2].as_str().is_some_and(|l| l.contains("Transcription")), "the bar is labelled: {bar}");
    let value = bar[1].as_f64().unwrap_or_else(|| panic!("{css}: {bar}"));
    assert!((0.0..=100.0).contains(&value) && value.fract() == 0.0, "{bar}");
    value as u64
}

#[test]
fn the_job_list_and_the_job_page_show_a_long_jobs_progress_then_its_end() {
    // The 13-minute reading with the cheapest model: long enough to be seen running.
    let server = TestServer::start_with_model("whisper-tiny.en");
    let ann = server.create_key("ann", Some(1_000_000));
    let mut browser = Browser::start("progress");
    let clip = paths::corpus_file(clips::LONG_READING);
    let job = server.upload_ok(&ann, &clip, &[("language", "en"), ("numberOfSpeakers", "1")]);
    let job_id = job["jobId"].as_str().unwrap().to_owned();
    sign_in(&mut browser, &server, &ann, "Your jobs");

    // The list refreshes itself and shows the percentage in the job's row.
    let row = browser.wait_for_text("#jobs tbody .job-progress", "Transcribing —", ASR_TIMEOUT);
    assert!(row.contains(" %"), "{row}");
    let listed = progress_value(&browser, "#jobs tbody .job-progress");
    browser.screenshot("jobs-progress");
    assert_eq!(browser.axe(), Vec::<Value>::new(), "the list with a running job");

    // The job page follows it.
    browser.click(&format!("#jobs a[href='#/job/{job_id}']"));
    let text = browser.wait_for_text("#job-progress", "Transcribing —", Duration::from_secs(15));
    assert!(text.contains(" %"), "{text}");
    let shown = progress_value(&browser, "#job-progress");
    assert!(shown >= listed, "the page shows {shown} % after the list showed {listed} %");
    browser.screenshot("job-progress");
    assert_eq!(browser.axe(), Vec::<Value>::new(), "the job page of a running job");
    // A later step, while the page stays open (it refreshes itself while the job is OPEN).
    let deadline = Instant::now() + ASR_TIMEOUT;
    loop {
        let status = browser.wait_for_text("#job-status", "", Duration::from_secs(5));
        if status.contains("DONE") {
            break;
        }
        let now =
            browser.script("const b = document.querySelector('#job-progress progress'); return b && b.value;", vec![]);
        if now.as_f64().is_some_and(|v| v > shown as f64) {
            browser.screenshot("job-progress-later");
            break;
        }
        assert!(Instant::now() < deadline, "the job page never moved past {shown} %:\n{}", browser.page_text());
        std::thread::sleep(Duration::from_millis(300));
    }

    // The end: DONE, and no progress any more, on the page and in the list.
    browser.wait_for_text("#job-status", "DONE", ASR_TIMEOUT);
    assert!(browser.find_all("#job-progress").is_empty(), "{}", browser.page_text());
    browser.screenshot("job-done");
    browser.click("#nav a[href='#/jobs']");
    browser.wait_for_text("#jobs tbody", "DONE", Duration::from_secs(15));
    assert!(browser.find_all("#jobs .job-progress").is_empty(), "{}", browser.page_text());
    browser.screenshot("jobs-done");
}
