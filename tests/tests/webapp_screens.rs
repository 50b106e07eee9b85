//! The web app's screens as a browser audit found them (issue 24), in a real headless Chromium
//! against a real server: errors where people look (focus, marked fields, the form's labels),
//! the job list (a total, no empty "Next page", sorting, the state in the address, the focus
//! after paging), phones 390 px wide (nothing cut off, labelled term boxes, Play within reach),
//! and the smaller ones (Cancel editing, the balance after an upload, sorted targets, the
//! language list from the server, deleting a job or a glossary (asked in the page), a deleted
//! job's page, the favicon, no API key in the console or a URL), and the job list refreshing
//! itself while a job is open. Screenshots land in `tests/screenshots/<test>/`.

use std::time::Duration;

use scribe_tests::web_app::sign_in;
use scribe_tests::{ASR_TIMEOUT, Browser, TestServer, clips, paths};
use serde_json::{Value, json};

const PHONE: (u32, u32) = (390, 844);

/// Reads a value from the page.
fn js(browser: &Browser, expr: &str) -> Value {
    browser.script(&format!("return {expr};"), vec![])
}

/// The id of the focused element.
fn focused(browser: &Browser) -> Value {
    js(browser, "document.activeElement && document.activeElement.id")
}

/// Elements whose box reaches past the right edge of the viewport (the ones inside a box that
/// scrolls sideways on purpose excepted), as `tag#id.class` strings.
fn past_the_right_edge(browser: &Browser) -> Vec<String> {
    let found = browser.script(
        "const width = document.documentElement.clientWidth;
         const scrolls = (e) => { for (let p = e.parentElement; p; p = p.parentElement) {
           const o = getComputedStyle(p).overflowX; if (o === 'auto' || o === 'scroll') return true; } return false; };
         return [...document.querySelectorAll('body *')].filter((e) => {
           const r = e.getBoundingClientRect();
           return r.width > 0 && r.height > 0 && r.right > width + 1 && !scrolls(e) && getComputedStyle(e).position !== 'fixed';
         }).map((e) => `${e.tagName.toLowerCase()}#${e.id}.${e.className}`);",
        vec![],
    );
    found.as_array().unwrap().iter().map(|v| v.as_str().unwrap_or_default().to_owned()).collect()
}

/// The box of the element matching `css`: `{left, top, right, bottom, width, height}`.
fn rect(browser: &Browser, css: &str) -> Value {
    browser.find(css);
    browser.script(
        "const r = document.querySelector(arguments[0]).getBoundingClientRect();
         return { left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width, height: r.height };",
        vec![json!(css)],
    )
}

fn num(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("{key} of {v}"))
}

#[test]
fn errors_take_the_focus_name_the_form_labels_and_mark_the_field() {
    let server = TestServer::start();
    let ann = server.create_key("ann", Some(100_000));
    let done = server.upload_ok(&ann, &paths::corpus_file(clips::SHORT), &[]);
    let done_id = done["jobId"].as_str().unwrap().to_owned();
    let mut browser = Browser::start("screens-errors");
    sign_in(&mut browser, &server, &ann, "Your jobs");

    // Upload without a file: the error takes the focus and the file input is marked.
    browser.click("#nav a[href='#/upload']");
    browser.find("#drop-zone");
    browser.click("#upload-btn");
    browser.wait_for_text("#upload-error", "Choose a media file first.", Duration::from_secs(5));
    assert_eq!(focused(&browser), json!("upload-error"), "the error takes the focus");
    assert_eq!(js(&browser, "document.querySelector('#upload-error').getAttribute('role')"), json!("alert"));
    browser.wait_for_attr("#file-input", "aria-invalid", "true", Duration::from_secs(2));
    browser.wait_for_attr("#file-input", "aria-describedby", "upload-error", Duration::from_secs(2));

    // The API refuses 9 speakers: the message names the form's label, not `numberOfSpeakers`.
    let speakers = browser.find("#o-numberOfSpeakers");
    browser.clear(&speakers);
    browser.send_keys(&speakers, "9");
    let clip = paths::corpus_file(clips::SHORT).canonicalize().unwrap();
    browser.type_into("#file-input", clip.to_str().unwrap());
    browser.wait_for_text("#chosen-file", "weather", Duration::from_secs(5));
    browser.click("#upload-btn");
    let message = browser.wait_for_text("#upload-error", "Speakers must be between 0 and 5", Duration::from_secs(15));
    assert!(!message.contains("numberOfSpeakers"), "{message}");
    assert_eq!(focused(&browser), json!("upload-error"));
    browser.wait_for_attr("#o-numberOfSpeakers", "aria-invalid", "true", Duration::from_secs(2));
    browser.wait_for_attr("#o-numberOfSpeakers", "aria-describedby", "upload-error", Duration::from_secs(2));
    assert_eq!(
        js(&browser, "document.querySelector('#file-input').getAttribute('aria-invalid')"),
        Value::Null,
        "the field of the earlier error is no longer marked"
    );
    browser.screenshot("upload-error");

    // A URL the API refuses: "Media URL", not `sourceUrl`.
    browser.script("document.querySelector('#source-url').type = 'text'", vec![]);
    browser.type_into("#source-url", "ftp://example.com/talk.mp3");
    browser.click("#url-btn");
    let message = browser.wait_for_text("#url-error", "Media URL", Duration::from_secs(10));
    assert!(!message.contains("sourceUrl"), "{message}");
    assert_eq!(focused(&browser), json!("url-error"));
    browser.wait_for_attr("#source-url", "aria-invalid", "true", Duration::from_secs(2));

    // Exports: "Max characters per row", not `maxCharsPerRow`; the TXT box of the same name is
    // the one marked for TXT.
    server.wait_for_status(&ann, &done_id, &["DONE"], ASR_TIMEOUT);
    browser.goto(&server.url(&format!("/#/job/{done_id}")));
    browser.find("#export-srt");
    browser.type_into("#x-chars", "50");
    browser.click("#export-srt");
    let message = browser.wait_for_text(
        "#export-error",
        "Max characters per row must be between 30 and 45",
        Duration::from_secs(10),
    );
    assert!(!message.contains("maxCharsPerRow"), "{message}");
    assert_eq!(focused(&browser), json!("export-error"));
    browser.wait_for_attr("#x-chars", "aria-invalid", "true", Duration::from_secs(2));
    browser.screenshot("export-error");
    browser.type_into("#x-txt-chars", "5");
    browser.click("#export-txt");
    browser.wait_for_attr("#x-txt-chars", "aria-invalid", "true", Duration::from_secs(10));
    assert_eq!(js(&browser, "document.querySelector('#x-chars').getAttribute('aria-invalid')"), Value::Null);

    // Glossaries: "Term 2", not `items[1].name`.
    browser.click("#nav a[href='#/glossaries']");
    browser.type_into("#g-name", "Weather");
    browser.type_into(".item-row:nth-child(1) .g-term", "New York");
    browser.click("#g-add-item");
    browser.type_into(".item-row:nth-child(2) .g-desc", "a term without a name");
    browser.click("#g-save");
    let message = browser.wait_for_text("#glossary-error", "Term 2 is required", Duration::from_secs(10));
    assert!(!message.contains("items["), "{message}");
    assert_eq!(focused(&browser), json!("glossary-error"));
    browser.wait_for_attr(".item-row:nth-child(2) .g-term", "aria-invalid", "true", Duration::from_secs(2));
    browser.screenshot("glossary-error");
}

#[test]
fn the_job_list_knows_its_total_sorts_and_keeps_its_state_in_the_address() {
    let server = TestServer::start();
    let ann = server.create_key("ann", Some(1_000_000));
    // Ten jobs: a multiple of the page size 5. Names and lengths differ.
    let clips_by_length = [clips::SHORT, clips::SILENCE, clips::JFK];
    let mut names = Vec::new();
    for i in 0..10 {
        let clip = clips_by_length[i % 3];
        let name = format!("{}-recording-{i:02}.wav", ["zulu", "alpha", "mike", "bravo", "kilo"][i % 5]);
        let bytes = std::fs::read(paths::corpus_file(clip)).unwrap();
        let reply = server.upload_bytes(&ann, &name, bytes, &[("jobType", "perfect")]);
        assert_eq!(reply.status, 200, "{}", reply.text);
        names.push(name);
    }

    // The API: X-Total-Count counts every page; sortBy and sortDirection order the list.
    let reply = server.get("/jobs", &ann, &[("pageSize", "5"), ("page", "1")]);
    assert_eq!(reply.header("x-total-count"), Some("10"), "{:?}", reply.text);
    assert_eq!(reply.ok().as_array().unwrap().len(), 5);
    let by_name = server.list_jobs(&ann, &[("sortBy", "filename"), ("sortDirection", "ASC"), ("pageSize", "100")]);
    let listed: Vec<&str> = by_name.iter().map(|j| j["filename"].as_str().unwrap()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(listed, sorted);
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let longest = loop {
        let jobs = server.list_jobs(&ann, &[("sortBy", "nrAudioSeconds"), ("pageSize", "100")]);
        if jobs.iter().all(|j| j["nrAudioSeconds"].as_u64().unwrap() > 0) {
            break jobs;
        }
        assert!(std::time::Instant::now() < deadline, "the media was not probed: {jobs:?}");
        std::thread::sleep(Duration::from_millis(300));
    };
    let lengths: Vec<u64> = longest.iter().map(|j| j["nrAudioSeconds"].as_u64().unwrap()).collect();
    assert!(lengths.windows(2).all(|w| w[0] >= w[1]), "longest first: {lengths:?}");
    let doc = server.http().get(server.url("/api/openapi.json")).send().unwrap().json::<Value>().unwrap();
    let list = &doc["paths"]["/jobs"]["get"];
    let params: Vec<&str> =
        list["parameters"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert!(params.contains(&"sortBy") && params.contains(&"sortDirection"), "{params:?}");
    let headers = list["responses"]["200"]["headers"].as_object().expect("the 200 answer's headers");
    assert!(headers.keys().any(|h| h.eq_ignore_ascii_case("x-total-count")), "{headers:?}");
    server.get("/jobs", &ann, &[("sortBy", "name")]).error(400, Some("sortBy"));
    server.get("/jobs", &ann, &[("sortDirection", "up")]).error(400, Some("sortDirection"));

    // The app: 5 per page from the address; page 2 is the last, its Next is off.
    let mut browser = Browser::start("screens-job-list");
    sign_in(&mut browser, &server, &ann, "Your jobs");
    browser.goto(&server.url("/#/jobs?pageSize=5"));
    browser.wait_for_text("#jobs-h", "Jobs 1 to 5 of 10", Duration::from_secs(10));
    browser.wait_for_text("#page-of", "Page 1 of 2", Duration::from_secs(5));
    browser.screenshot("page-1");
    browser.click("#next-page");
    browser.wait_for_text("#jobs-h", "Jobs 6 to 10 of 10", Duration::from_secs(10));
    browser.wait_for_count("#jobs tbody tr", 5, Duration::from_secs(5));
    assert_eq!(focused(&browser), json!("jobs-h"), "after paging the focus is on the list's heading");
    assert_eq!(js(&browser, "location.hash"), json!("#/jobs?pageSize=5&page=1"));
    assert_eq!(
        js(&browser, "document.querySelector('#next-page').disabled"),
        json!(true),
        "10 jobs at 5 a page: no third, empty page"
    );
    browser.screenshot("page-2-last");

    // The back button returns to page 1.
    browser.script("history.back()", vec![]);
    browser.wait_for_text("#jobs-h", "Jobs 1 to 5 of 10", Duration::from_secs(10));

    // Sort by name from the form: the order is the API's, and the address keeps it.
    browser.select("#f-sort", "filename.ASC");
    browser.click("#f-apply");
    browser.wait_for_text("#jobs-h", "Jobs 1 to 5 of 10", Duration::from_secs(10));
    browser.wait_for_text("#jobs tbody tr:first-child", &sorted[0], Duration::from_secs(10));
    let shown = js(&browser, "[...document.querySelectorAll('#jobs tbody td.name')].map((td) => td.innerText.trim())");
    assert_eq!(shown, json!(sorted[..5]));
    assert_eq!(js(&browser, "document.querySelector('th[aria-sort]').textContent"), json!("File"));
    let bookmark = js(&browser, "location.href").as_str().unwrap().to_owned();
    assert!(bookmark.contains("sort=filename.ASC"), "{bookmark}");

    // A bookmark of page 2, longest first, opened afresh: the same list and the same form.
    browser.goto(&server.url("/#/jobs?pageSize=5&sort=nrAudioSeconds.DESC&page=1"));
    browser.refresh();
    browser.wait_for_text("#jobs-h", "Jobs 6 to 10 of 10", Duration::from_secs(10));
    assert_eq!(js(&browser, "document.querySelector('#f-sort').value"), json!("nrAudioSeconds.DESC"));
    assert_eq!(js(&browser, "document.querySelector('#f-size').value"), json!("5"));
    let ids = js(
        &browser,
        "[...document.querySelectorAll('#jobs tbody td.name a')].map((a) => a.getAttribute('href').split('/')[2])",
    );
    let expected: Vec<&str> = longest[5..].iter().map(|j| j["jobId"].as_str().unwrap()).collect();
    assert_eq!(ids, json!(expected));
    browser.screenshot("bookmark-longest-page-2");

    // A filter from the form lives in the address too.
    browser.select("#f-status", "DONE");
    browser.click("#f-apply");
    browser.wait_for_text("#jobs-h", "No jobs", Duration::from_secs(10));
    assert!(js(&browser, "location.hash").as_str().unwrap().contains("status=DONE"));
}

#[test]
fn on_a_phone_nothing_is_cut_off_terms_keep_their_labels_and_play_stays_within_reach() {
    let server = TestServer::start();
    let ann = server.create_key("ann", Some(100_000));
    let tina = server.create_staff_key("tina", "transcriber", &["en"]);
    let long_name = "interview-with-the-mayor-2026-11-26.wav";
    let bytes = std::fs::read(paths::corpus_file(clips::JFK)).unwrap();
    let reply = server.upload_bytes(&ann, long_name, bytes, &[("numberOfSpeakers", "1")]);
    assert_eq!(reply.status, 200, "{}", reply.text);
    let job_id = reply.json()["jobStatus"]["jobId"].as_str().unwrap().to_owned();
    server.upload_ok(&ann, &paths::corpus_file(clips::SHORT), &[("jobType", "perfect")]);

    let mut browser = Browser::start("screens-phone");
    browser.phone(PHONE.0, PHONE.1);
    sign_in(&mut browser, &server, &ann, "Your jobs");
    browser.screenshot("jobs");
    browser.wait_for_text("#jobs", long_name, Duration::from_secs(10));
    // The file name wraps at most once, not every few characters.
    browser.script(
        "[...document.querySelectorAll('#jobs td.name a')].find((a) => a.textContent === arguments[0]).id = 'long-name';",
        vec![json!(long_name)],
    );
    let name = rect(&browser, "#long-name");
    let line = js(&browser, "parseFloat(getComputedStyle(document.querySelector('#long-name')).lineHeight)");
    assert!(
        num(&name, "height") <= 2.0 * line.as_f64().unwrap() + 1.0,
        "the file name takes {} px at a line height of {line}: {name}",
        num(&name, "height")
    );
    assert_eq!(past_the_right_edge(&browser), Vec::<String>::new(), "cut off at the right of the job list");

    // Glossary term boxes keep their labels.
    browser.click("#nav a[href='#/glossaries']");
    browser.find("#g-name");
    browser.click("#g-add-item");
    browser.screenshot("glossary-form");
    for (label, input) in [("g-term-1", "#g-term-1"), ("g-desc-1", "#g-desc-1"), ("g-term-2", "#g-term-2")] {
        let label_box = rect(&browser, &format!("label[for='{label}']"));
        let input_box = rect(&browser, input);
        assert!(
            num(&label_box, "width") > 30.0 && num(&label_box, "height") > 10.0,
            "{label}'s label is not shown: {label_box}"
        );
        assert!(num(&label_box, "bottom") <= num(&input_box, "top") + 1.0, "{label}'s label is above its box");
    }
    assert_eq!(js(&browser, "document.querySelector(\"label[for='g-term-2']\").textContent"), json!("Term 2"));
    assert_eq!(past_the_right_edge(&browser), Vec::<String>::new(), "cut off at the right of the glossary form");

    // The editor: Play stays on screen at the bottom of a long scroll.
    server.wait_for_status(&ann, &job_id, &["DONE"], ASR_TIMEOUT);
    browser.goto(&server.url(&format!("/#/edit/{job_id}")));
    browser.find("#transcript .w");
    browser.wait_for_attr("#waveform", "data-ready", "true", Duration::from_secs(30));
    browser.screenshot("editor-top");
    browser.script("window.scrollTo(0, document.documentElement.scrollHeight)", vec![]);
    let scrolled = js(&browser, "window.scrollY").as_f64().unwrap();
    assert!(scrolled > 300.0, "the editor is longer than the phone's screen (scrolled {scrolled} px)");
    let play = rect(&browser, "#play");
    assert!(
        num(&play, "top") >= 0.0
            && num(&play, "bottom") <= f64::from(PHONE.1)
            && num(&play, "right") <= f64::from(PHONE.0),
        "Play is out of reach after scrolling: {play}"
    );
    let time = rect(&browser, "#time");
    assert!(
        num(&time, "right") <= f64::from(PHONE.0) && num(&time, "bottom") <= f64::from(PHONE.1),
        "the clock too: {time}"
    );
    browser.screenshot("editor-scrolled");
    browser.click("#play");
    browser.wait_for_text("#play", "Pause", Duration::from_secs(10));
    browser.click("#play");
    browser.wait_for_text("#play", "Play", Duration::from_secs(10));
    // Nothing but the player's own sideways-scrolling bar is wider than the phone.
    assert_eq!(past_the_right_edge(&browser), Vec::<String>::new(), "cut off at the right of the editor");

    // A transcriber's queue: the Claim button is on screen.
    let deadline = std::time::Instant::now() + ASR_TIMEOUT;
    while server.get("/work/tasks", &tina, &[]).ok().as_array().unwrap().is_empty() {
        assert!(std::time::Instant::now() < deadline, "no task for tina");
        std::thread::sleep(Duration::from_millis(300));
    }
    browser.click("#sign-out");
    sign_in(&mut browser, &server, &tina, "Transcription tasks");
    browser.find(".claim");
    browser.screenshot("tasks");
    let claim = rect(&browser, ".claim");
    assert!(num(&claim, "right") <= f64::from(PHONE.0) && num(&claim, "left") >= 0.0, "Claim is cut off: {claim}");
    assert_eq!(past_the_right_edge(&browser), Vec::<String>::new(), "cut off at the right of the task queue");
    browser.click(".claim");
    browser.find(".w");
    browser.screenshot("task-editor");
}

#[test]
fn the_smaller_defects_cancel_balance_targets_languages_deleted_job_favicon_and_no_key_in_the_console() {
    let server = TestServer::start();
    let ann = server.create_key("ann", Some(100_000));
    let mut browser = Browser::start("screens-smaller");

    // A wrong key first: the failed request logs nothing of it.
    let wrong = "wrong-key-0123456789abcdef";
    browser.goto(&server.url("/"));
    browser.type_into("#key", wrong);
    browser.click("#signin-btn");
    browser.wait_for_text("#signin-error", "not valid", Duration::from_secs(10));
    browser.wait_for_attr("#key", "aria-invalid", "true", Duration::from_secs(2));
    let key = browser.find("#key");
    browser.clear(&key);
    browser.send_keys(&key, &ann);
    browser.click("#signin-btn");
    browser.wait_for_text("h1", "Your jobs", Duration::from_secs(15));

    // "Cancel editing" only while editing a glossary.
    browser.click("#nav a[href='#/glossaries']");
    browser.find("#g-name");
    assert_eq!(js(&browser, "getComputedStyle(document.querySelector('#g-cancel')).display"), json!("none"));
    browser.screenshot("glossary-new");
    server.create_glossary(&ann, &json!({"name": "Weather", "names": ["New York"]}));
    browser.refresh();
    browser.click(".g-edit");
    browser.wait_for_text("#g-form-h", "Edit glossary Weather", Duration::from_secs(5));
    assert_ne!(js(&browser, "getComputedStyle(document.querySelector('#g-cancel')).display"), json!("none"));
    browser.click("#g-cancel");
    browser.wait_for_text("#g-form-h", "New glossary", Duration::from_secs(5));
    assert_eq!(js(&browser, "getComputedStyle(document.querySelector('#g-cancel')).display"), json!("none"));
    // Deleting a glossary asks in the page first.
    browser.click(".g-delete");
    browser.find("#delete-glossary-confirm[open]");
    browser.click("#delete-glossary-confirm-delete");
    browser.wait_for_text("#glossary-notice", "Glossary Weather deleted.", Duration::from_secs(10));
    assert_eq!(server.get("/glossary", &ann, &[]).ok().as_array().map(Vec::len), Some(0), "the glossary is gone");

    // The language list is the server's (GET /capabilities), with names; targets sorted by name.
    let capabilities = server.get("/capabilities", &ann, &[]).ok();
    let codes: Vec<&str> =
        capabilities["languages"].as_array().unwrap().iter().map(|l| l["code"].as_str().unwrap()).collect();
    assert!(codes.contains(&"en-us") && !codes.contains(&"zh"), "{capabilities}");
    assert_eq!(capabilities["targetOnlyLanguages"][0], json!({"code": "zh", "name": "Chinese"}));
    browser.click("#nav a[href='#/upload']");
    browser.find("#drop-zone");
    let offered = js(&browser, "[...document.querySelector('#o-language').options].map((o) => o.value)");
    assert_eq!(offered, json!(codes), "the upload form offers the server's languages");
    assert_eq!(
        js(&browser, "[...document.querySelector('#o-language').options].find((o) => o.value === 'de-ch').textContent"),
        json!("German (Switzerland) (de-ch)")
    );
    let app_js = server.http().get(server.url("/app/app.js")).send().unwrap().text().unwrap();
    assert!(!app_js.contains("Afrikaans"), "app.js keeps no copy of the language table");
    browser.select("#o-jobType", "perfect");
    browser.select("#o-transcriptionType", "translatedSubtitles");
    let targets =
        js(&browser, "[...document.querySelector('#o-targetLanguage').options].slice(1).map((o) => o.textContent)");
    let targets: Vec<String> = serde_json::from_value(targets).unwrap();
    assert_eq!(targets.len(), capabilities["perfectTranslationTargets"].as_array().unwrap().len());
    let sorted = browser.script(
        "const t = arguments[0]; return t.every((x, i) => i === 0 || t[i - 1].localeCompare(x) <= 0);",
        vec![json!(targets)],
    );
    assert_eq!(sorted, json!(true), "targets sorted by name: {targets:?}");
    assert!(targets[0].starts_with("Catalan") || targets[0].starts_with("Chinese"), "{targets:?}");
    browser.screenshot("targets-sorted");

    // The balance in the header follows an upload.
    browser.select("#o-jobType", "direct");
    browser.select("#o-transcriptionType", "transcription");
    browser.wait_for_text("#who-name", "balance 1000.00", Duration::from_secs(5));
    let clip = paths::corpus_file(clips::JFK).canonicalize().unwrap();
    browser.type_into("#file-input", clip.to_str().unwrap());
    browser.click("#upload-btn");
    browser.wait_for_text("#job-status", "", Duration::from_secs(30));
    let balance = server.get("/me", &ann, &[]).ok()["balance"].as_u64().unwrap();
    assert!(balance < 100_000, "the upload was charged: {balance}");
    browser.wait_for_text("#who-name", &format!("balance {:.2}", balance as f64 / 100.0), Duration::from_secs(10));
    browser.screenshot("balance-after-upload");

    // Deleting a job asks in the page: Cancel keeps it, Delete removes it; its page then says so.
    let job_id = js(&browser, "location.hash.split('/')[2]").as_str().unwrap().to_owned();
    let job_page = js(&browser, "location.hash").as_str().unwrap().to_owned();
    browser.click("#delete-job");
    browser.find("#delete-job-confirm[open]");
    assert_eq!(js(&browser, "document.activeElement.id"), json!("delete-job-confirm-cancel"));
    browser.screenshot("delete-job-confirm");
    browser.click("#delete-job-confirm-cancel");
    assert_eq!(js(&browser, "document.activeElement.id"), json!("delete-job"), "focus goes back to Delete");
    server.get("/jobs/status", &ann, &[("jobId", &job_id)]).ok();
    browser.click("#delete-job");
    browser.click("#delete-job-confirm-delete");
    browser.wait_for_text("h1", "Your jobs", Duration::from_secs(10));
    let gone = server.get("/jobs/status", &ann, &[("jobId", &job_id)]);
    assert!(gone.status >= 400, "the job was deleted: {}", gone.status);
    browser.script("location.hash = arguments[0];", vec![json!(job_page)]);
    browser.wait_for_text("h1", "This job was deleted", Duration::from_secs(10));
    browser.find("#job-gone");
    assert!(!browser.page_text().contains("Loading"), "{}", browser.page_text());
    browser.screenshot("deleted-job");

    // The key travels as a Bearer token, a scheme the OpenAPI document declares beside the
    // apiKey query parameter (which API clients keep using).
    let doc = server.http().get(server.url("/api/openapi.json")).send().unwrap().json::<Value>().unwrap();
    assert_eq!(doc["components"]["securitySchemes"]["BearerAuth"]["scheme"], "bearer", "{}", doc["components"]);
    assert_eq!(doc["components"]["securitySchemes"]["ApiKeyAuth"]["in"], "query");
    assert_eq!(server.get("/me", &ann, &[]).ok()["userName"], "ann", "the query parameter still works");

    // /favicon.ico is an icon.
    let icon = server.http().get(server.url("/favicon.ico")).send().unwrap();
    assert_eq!(icon.status().as_u16(), 200);
    assert_eq!(icon.headers()["content-type"], "image/x-icon");
    assert_eq!(&icon.bytes().unwrap()[..4], &[0, 0, 1, 0], "an ICO file");

    // Failed requests (404, 400, 410) log no key in the console and carry none in a URL.
    browser.goto(&server.url("/#/job/00000000-0000-0000-0000-000000000000"));
    browser.wait_for_text("h1", "No such job", Duration::from_secs(10));
    browser.goto(&server.url(&format!("/#/edit/{job_id}")));
    browser.wait_for_text("#edit-error", "was deleted", Duration::from_secs(10));
    let log = browser.console_log();
    let failures: Vec<&Value> =
        log.iter().filter(|l| l["message"].as_str().unwrap_or("").contains("status of 4")).collect();
    assert!(failures.len() >= 3, "the failed requests are in the console: {log:?}");
    for entry in &log {
        let message = entry["message"].as_str().unwrap_or("");
        assert!(!message.contains(&ann) && !message.contains(wrong), "the console shows a key: {message}");
        assert!(!message.contains("apiKey="), "a URL with the key: {message}");
    }
    let urls = js(&browser, "performance.getEntriesByType('resource').map((e) => e.name)");
    for url in urls.as_array().unwrap() {
        let url = url.as_str().unwrap();
        assert!(!url.contains(&ann) && !url.contains("apiKey"), "the key in a URL: {url}");
    }
    println!("console after the failed requests: {log:#?}");
}

#[test]
fn the_job_list_refreshes_itself_while_a_job_is_open_and_keeps_the_focus() {
    let server = TestServer::start();
    let ann = server.create_key("ann", Some(1_000_000));
    let tina = server.create_staff_key("tina", "transcriber", &[]);
    // A manual job stays OPEN until its transcriber hands it in.
    let job = server.upload_ok(&ann, &paths::corpus_file(clips::SHORT), &[("jobType", "perfect")]);
    let job_id = job["jobId"].as_str().unwrap().to_owned();
    let mut browser = Browser::start("jobs-refresh");
    sign_in(&mut browser, &server, &ann, "Your jobs");
    browser.wait_for_text("#jobs", "OPEN", Duration::from_secs(10));
    // The job's page says how long ago the open job was submitted.
    browser.goto(&server.url(&format!("/#/job/{job_id}")));
    browser.wait_for_text("#job-open-for", "submitted 0 min", Duration::from_secs(10));
    browser.goto(&server.url("/#/jobs"));
    browser.wait_for_text("#jobs", "OPEN", Duration::from_secs(10));
    let link = format!("#jobs a[href='#/job/{job_id}']");
    browser.script(&format!("document.querySelector(\"{link}\").focus()"), vec![]);
    let task = scribe_tests::web_app::wait_for_task(&server, &tina, &job_id);
    let task_id = task["taskId"].as_str().unwrap();
    server.post(&format!("/work/tasks/{task_id}/claim"), &tina, &[]).ok();
    server.post(&format!("/work/tasks/{task_id}/submit"), &tina, &[]).ok();
    server.wait_for_status(&ann, &job_id, &["DONE"], ASR_TIMEOUT);
    // No reload: the list shows DONE within its refresh, the focus still on the job's link.
    browser.wait_for_text("#jobs", "DONE", Duration::from_secs(15));
    assert_eq!(
        js(&browser, "document.activeElement.getAttribute('href')"),
        json!(format!("#/job/{job_id}")),
        "the focus stays on the job's link"
    );
    browser.screenshot("jobs-refreshed");
}
