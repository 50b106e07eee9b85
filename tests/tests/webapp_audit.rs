//! axe-core (vendored in `tests/vendor/`, test-only) on every screen of the web app, at 1280 px
//! and on a 390 px phone: sign in, the job list empty and full, upload, a job processing, done
//! and deleted, the customer's editor, glossaries (list, new, edit), live, and for staff the task
//! queue, the transcriber's editor and its submit dialog, and the translator's editor (with the
//! job's glossary: a panel above the cues on the phone). The customer's editor is also checked
//! zoomed in and with find and replace open. No screen may have a violation of any impact (each
//! is printed). Screenshots of every screen land in `tests/screenshots/audit/`.

use std::time::{Duration, Instant};

use scribe_tests::web_app::wait_for_task;
use scribe_tests::{ASR_TIMEOUT, Browser, TestServer, clips, paths};
use serde_json::{Value, json};

const WIDE: (u32, u32) = (1280, 1000);
const PHONE: (u32, u32) = (390, 844);

/// The screens seen so far, with the violations axe-core found on each.
struct Audit {
    browser: Browser,
    found: Vec<(String, Vec<Value>)>,
}

impl Audit {
    /// Runs axe-core on the screen as it is, at both widths, and keeps what it found.
    fn check(&mut self, screen: &str, ready: &str) {
        for (label, (w, h)) in [("1280", WIDE), ("390", PHONE)] {
            if label == "390" {
                self.browser.phone(w, h);
            } else {
                self.browser.zoom(100, w, h);
            }
            self.browser.find(ready);
            std::thread::sleep(Duration::from_millis(300)); // the layout of the new width settles
            let started = Instant::now();
            let violations = self.browser.axe();
            println!("{screen} at {label} px: axe-core took {} ms", started.elapsed().as_millis());
            self.browser.screenshot(&format!("{screen}-{label}"));
            self.found.push((format!("{screen} at {label} px"), violations));
        }
        self.browser.zoom(100, WIDE.0, WIDE.1);
    }

    fn go(&mut self, server: &TestServer, hash: &str, ready: &str) {
        self.browser.goto(&server.url(&format!("/{hash}")));
        self.browser.find(ready);
    }
}

fn sign_in(browser: &Browser, key: &str, heading: &str) {
    browser.type_into("#key", key);
    browser.click("#signin-btn");
    browser.wait_for_text("h1", heading, Duration::from_secs(15));
}

#[test]
fn every_screen_has_no_axe_violation_at_1280_and_390_px() {
    let server = TestServer::start();
    let ann = server.create_key("ann", Some(1_000_000));
    let tina = server.create_staff_key("tina", "transcriber", &[]);
    let tom = server.create_staff_key("tom", "translator", &[]);
    let mut audit = Audit { browser: Browser::start("audit"), found: Vec::new() };

    // Sign in, then the empty job list (before any upload).
    audit.go(&server, "", "#key");
    audit.check("sign-in", "#key");
    sign_in(&audit.browser, &ann, "Your jobs");
    audit.browser.wait_for_text("#jobs", "No jobs match", Duration::from_secs(10));
    audit.check("jobs-empty", "#jobs p");

    // Jobs for the other screens: a direct one to finish, a manual one that stays open, one to
    // delete, a manual translated-subtitles one for the staff.
    let done = server.upload_ok(&ann, &paths::corpus_file(clips::JFK), &[("numberOfSpeakers", "1")]);
    let done_id = done["jobId"].as_str().unwrap().to_owned();
    let open = server.upload_ok(&ann, &paths::corpus_file(clips::SHORT), &[("jobType", "perfect")]);
    let open_id = open["jobId"].as_str().unwrap().to_owned();
    let gone = server.upload_ok(&ann, &paths::corpus_file(clips::SHORT), &[]);
    let gone_id = gone["jobId"].as_str().unwrap().to_owned();
    let glossary = server.create_glossary(
        &ann,
        &json!({"name": "Speeches", "names": ["Kennedy"], "items": [{"name": "Berliner", "description": "a person from Berlin"}]}),
    );
    let translated = server.upload_ok(
        &ann,
        &paths::corpus_file(clips::SHORT),
        &[
            ("jobType", "perfect"),
            ("transcriptionType", "translatedSubtitles"),
            ("targetLanguage", "nl"),
            ("glossaryId", glossary["id"].as_str().unwrap()),
        ],
    );
    let translated_id = translated["jobId"].as_str().unwrap().to_owned();

    audit.go(&server, "#/jobs", "#jobs tbody tr");
    audit.check("jobs-full", "#jobs tbody tr");
    audit.go(&server, "#/upload", "#drop-zone");
    audit.check("upload", "#drop-zone");
    audit.go(&server, &format!("#/job/{open_id}"), "#job-status");
    audit.check("job-processing", "#job-status");
    server.wait_for_status(&ann, &gone_id, &["DONE", "ERROR"], ASR_TIMEOUT);
    server.delete("/jobs", &ann, &[("jobId", &gone_id)]).ok();
    audit.go(&server, &format!("#/job/{gone_id}"), "#job-gone");
    audit.check("job-deleted", "#job-gone");
    server.wait_for_status(&ann, &done_id, &["DONE"], ASR_TIMEOUT);
    audit.go(&server, &format!("#/job/{done_id}"), "#export-srt");
    audit.browser.click("#export-srt");
    audit.browser.wait_for_text("#export-preview", "-->", Duration::from_secs(15));
    audit.check("job-done", "#export-preview");
    audit.go(&server, &format!("#/edit/{done_id}"), "#transcript .w");
    audit.browser.wait_for_attr("#waveform", "data-ready", "true", Duration::from_secs(30));
    audit.check("editor-customer", "#transcript .w");
    // Zoomed in, the waveform scrolls sideways; then find and replace open over the text.
    audit.browser.click("#zoom-in");
    audit.browser.click("#zoom-in");
    audit.browser.wait_for_text("#editor-status", "pixels per second", Duration::from_secs(5));
    audit.check("editor-zoomed", "#transcript .w");
    audit.browser.click("#find-replace");
    audit.browser.type_into("#find-text", "country");
    audit.browser.wait_for_text("#find-status", "match", Duration::from_secs(5));
    audit.check("editor-find-open", "#find-panel:not([hidden])");
    audit.browser.click("#find-close");
    audit.go(&server, "#/glossaries", "#glossaries tbody tr");
    audit.check("glossaries-new", "#glossaries tbody tr");
    audit.browser.click(".g-edit");
    audit.browser.wait_for_text("#g-form-h", "Edit glossary", Duration::from_secs(5));
    audit.check("glossaries-edit", "#g-cancel");
    audit.go(&server, "#/live", "h1");
    audit.check("live", "h1");
    audit.browser.click("#sign-out");

    // The transcriber: the queue, then the editor of a claimed task.
    audit.browser.find("#key");
    sign_in(&audit.browser, &tina, "Transcription tasks");
    let task = wait_for_task(&server, &tina, &open_id);
    audit.go(&server, "#/tasks", ".claim");
    audit.check("tasks-transcriber", ".claim");
    let task_id = task["taskId"].as_str().unwrap();
    server.post(&format!("/work/tasks/{task_id}/claim"), &tina, &[]).ok();
    audit.go(&server, &format!("#/task/{task_id}"), ".w");
    audit.browser.wait_for_attr("#waveform", "data-ready", "true", Duration::from_secs(30));
    audit.check("editor-transcriber", ".w");
    // Submit asks in the page; Cancel keeps the task.
    audit.browser.click("#submit-task");
    audit.check("submit-confirm", "#submit-confirm");
    audit.browser.click("#submit-confirm-cancel");
    // The translated-subtitles job's transcription, handed in over HTTP.
    let transcribe = wait_for_task(&server, &tina, &translated_id);
    let transcribe_id = transcribe["taskId"].as_str().unwrap();
    server.post(&format!("/work/tasks/{transcribe_id}/claim"), &tina, &[]).ok();
    server.post(&format!("/work/tasks/{transcribe_id}/submit"), &tina, &[]).ok();
    audit.browser.click("#sign-out");

    // The translator.
    audit.browser.find("#key");
    sign_in(&audit.browser, &tom, "Translation tasks");
    let translate = wait_for_task(&server, &tom, &translated_id);
    audit.go(&server, "#/tasks", ".claim");
    audit.check("tasks-translator", ".claim");
    let translate_id = translate["taskId"].as_str().unwrap();
    server.post(&format!("/work/tasks/{translate_id}/claim"), &tom, &[]).ok();
    audit.go(&server, &format!("#/task/{translate_id}"), "textarea.target");
    audit.browser.wait_for_attr("#waveform", "data-ready", "true", Duration::from_secs(30));
    audit.check("editor-translator", "textarea.target");

    // Every violation is printed, and fails the test.
    let mut failing = Vec::new();
    for (screen, violations) in &audit.found {
        for v in violations {
            let impact = v["impact"].as_str().unwrap_or("none");
            let targets: Vec<String> = v["nodes"].as_array().unwrap().iter().map(|n| n["target"].to_string()).collect();
            println!("{screen}: {impact} {} ({}): {}", v["id"], v["help"], targets.join(" "));
            failing.push(format!("{screen}: {} {}: {}\n  {}", impact, v["id"], v["help"], v["nodes"]));
        }
    }
    println!("{} screens checked", audit.found.len());
    assert!(failing.is_empty(), "axe-core violations:\n{}", failing.join("\n"));
}
