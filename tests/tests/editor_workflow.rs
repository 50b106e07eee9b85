//! The task editor's handling of people's work, in a real headless Chromium against a real
//! server (issue 24): local drafts belong to the signed-in account and the revision they were
//! made on, and sign-out leaves no transcript text in the browser; Release with unsaved edits
//! asks (save, discard, cancel) in the page; a lease that runs out shows at once (in the fixed
//! bar, with the focus; the countdown ticks every second) and can be claimed again keeping the
//! edits; the draft is auto-saved to the server and comes back in a
//! fresh browser; translators see whole sentences with speaker names, the job's glossary (on
//! narrow screens a panel above the cues that stays in reach), and a warning naming the empty cues
//! before they submit; Submit asks in the page. Screenshots land in `tests/screenshots/<test>/`.

use std::time::{Duration, Instant};

use scribe_tests::web_app::{retype_word, sign_in, wait_for_task, word_selector};
use scribe_tests::{Browser, Options, TestServer, clips, paths};
use serde_json::{Value, json};

const ESCAPE: &str = "\u{E00C}";

/// Retypes `word` as `text` and waits until the local draft is stored (400 ms after a change).
fn edit_word(browser: &Browser, word: &str, text: &str) {
    let css = word_selector(browser, word);
    retype_word(browser, &css, text);
    browser.wait_for_text("#editor-status", "Unsaved", Duration::from_secs(5));
    wait_until(
        browser,
        "the local draft is stored",
        "Object.keys(localStorage).some(k => k.startsWith('scribe.draft.'))",
    );
}

/// A perfect JFK transcription job and its task id, once the task is open.
fn jfk_task(server: &TestServer, transcriber: &str) -> String {
    let job = server.upload_ok(
        server.key(),
        &paths::corpus_file(clips::JFK),
        &[("jobType", "perfect"), ("transcriptionType", "captions"), ("numberOfSpeakers", "1")],
    );
    let job_id = job["jobId"].as_str().unwrap().to_owned();
    wait_for_task(server, transcriber, &job_id)["taskId"].as_str().unwrap().to_owned()
}

/// The task as its holder (or anyone of the role) reads it over HTTP.
fn task(server: &TestServer, key: &str, task_id: &str) -> Value {
    server.get(&format!("/work/tasks/{task_id}"), key, &[]).ok()
}

/// The words of a task's current document, joined by spaces.
fn document_text(detail: &Value) -> String {
    detail["document"]["segments"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["words"].as_array().unwrap().iter().map(|w| w["text"].as_str().unwrap().to_owned()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Waits until the JavaScript expression `expr` is true in the page.
fn wait_until(browser: &Browser, what: &str, expr: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while browser.script(&format!("return !!({expr});"), vec![]) != json!(true) {
        assert!(Instant::now() < deadline, "{what}: never true ({expr})\n{}", browser.page_text());
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Every localStorage entry, keys and values, as one string.
fn local_storage(browser: &Browser) -> String {
    browser.script("return JSON.stringify(Object.entries(localStorage));", vec![]).as_str().unwrap().to_owned()
}

/// Reads a value from the page.
fn js_value(browser: &Browser, expr: &str) -> Value {
    browser.script(&format!("return {expr};"), vec![])
}

fn open_dialog(browser: &Browser) -> Value {
    browser.script("const d = document.querySelector('dialog[open]'); return d ? d.id : null;", vec![])
}

/// Whether the focused element is inside the open dialog.
fn focus_in_dialog(browser: &Browser) -> bool {
    browser.script("return !!document.activeElement.closest('dialog[open]');", vec![]) == json!(true)
}

#[test]
fn drafts_belong_to_their_account_and_revision_and_sign_out_leaves_no_transcript_text() {
    let server = TestServer::start();
    let tina = server.create_staff_key("tina", "transcriber", &["en"]);
    let tess = server.create_staff_key("tess", "transcriber", &["en"]);
    let task_id = jfk_task(&server, &tina);
    let mut browser = Browser::start("editor_drafts");

    sign_in(&mut browser, &server, &tina, "Transcription tasks");
    browser.click(".claim");
    browser.find(".w");
    edit_word(&browser, "country", "nation");
    let keys = browser.script("return Object.keys(localStorage).filter(k => k.startsWith('scribe.draft.'));", vec![]);
    assert_eq!(
        keys,
        json!([format!("scribe.draft.tina.task.{task_id}.r0")]),
        "the draft names its account, task and revision"
    );

    // Tina leaves the editor (the edit stays a local draft) and saves revision 1 on another
    // device: back in the editor, the draft of revision 0 is offered saying so.
    browser.click("#main a[href='#/tasks']");
    browser.find(&format!("a[href='#/task/{task_id}']"));
    let mut other = task(&server, &tina, &task_id)["document"].clone();
    other["segments"][0]["words"][0]["text"] = json!("Therefore,");
    server.put_json(&format!("/work/tasks/{task_id}/document"), &tina, &other).ok();
    browser.click(&format!("a[href='#/task/{task_id}']"));
    let offer = browser.wait_for_text("#draft-offer", "revision 0", Duration::from_secs(15));
    assert!(offer.contains("the server now has revision 1"), "the offer says what the draft was based on: {offer}");
    browser.screenshot("stale-draft-offer");
    browser.click("#discard-draft");

    // Signing out with unsaved edits asks; saving them leaves no transcript text behind.
    edit_word(&browser, "country", "nation");
    browser.click("#sign-out");
    assert_eq!(open_dialog(&browser), json!("unsaved"));
    assert!(focus_in_dialog(&browser), "the dialog takes the focus");
    browser.screenshot("sign-out-unsaved");
    browser.click("#unsaved-save");
    browser.find("#key");
    let stored = local_storage(&browser);
    assert!(
        !stored.contains("scribe.draft") && !stored.contains("nation") && !stored.contains("Americans"),
        "{stored}"
    );
    let saved = task(&server, &tina, &task_id);
    assert_eq!(saved["task"]["revision"], 2);
    assert!(document_text(&saved).contains("nation"), "the edits were saved at sign-out");

    // Tina comes back, edits, releases discarding the edit, and signs out.
    sign_in(&mut browser, &server, &tina, "Transcription tasks");
    browser.click(&format!("a[href='#/task/{task_id}']"));
    browser.find(".w");
    edit_word(&browser, "ask", "tell");
    browser.click("#release-task");
    browser.click("#unsaved-discard");
    browser.wait_for_text("#tasks-notice", "discarded", Duration::from_secs(15));
    browser.click("#sign-out");
    browser.find("#key");
    assert!(!local_storage(&browser).contains("scribe.draft"));

    // Tess claims it in the same browser: no draft is offered, and she sees the saved revision.
    sign_in(&mut browser, &server, &tess, "Transcription tasks");
    browser.click(".claim");
    browser.find(".w");
    assert!(browser.find_all("#draft-offer").is_empty(), "Tess is not offered Tina's draft");
    let text = browser.text(&browser.find("#transcript"));
    assert!(text.contains("nation") && !text.contains("tell"), "{text}");
    browser.screenshot("tess-no-draft");
}

#[test]
fn release_with_unsaved_edits_asks_to_save_discard_or_cancel_and_says_what_happened() {
    let server = TestServer::start();
    let tina = server.create_staff_key("tina", "transcriber", &["en"]);
    let task_id = jfk_task(&server, &tina);
    let mut browser = Browser::start("editor_release");
    sign_in(&mut browser, &server, &tina, "Transcription tasks");
    browser.click(".claim");
    browser.find(".w");

    // Cancel (Escape): nothing happens, the edit stays.
    edit_word(&browser, "country", "nation");
    browser.click("#release-task");
    assert_eq!(open_dialog(&browser), json!("unsaved"));
    assert!(focus_in_dialog(&browser), "the dialog takes the focus");
    let labels = browser.text(&browser.find("dialog[open]"));
    for label in ["Save and release", "Discard and release", "Cancel"] {
        assert!(labels.contains(label), "{labels}");
    }
    browser.screenshot("release-dialog");
    browser.set_window_size(390, 844);
    browser.screenshot("release-dialog-phone");
    browser.set_window_size(1280, 1000);
    browser.press(ESCAPE);
    wait_until(&browser, "the dialog closed", "!document.querySelector('dialog[open]')");
    browser.wait_for_text("#editor-status", "Not released", Duration::from_secs(5));
    assert_eq!(browser.text(&browser.find(&word_selector(&browser, "nation"))), "nation");
    assert_eq!(task(&server, &tina, &task_id)["task"]["claimedByYou"], true);

    // Discard and release: back in the queue, nothing saved.
    browser.click("#release-task");
    browser.click("#unsaved-discard");
    browser.wait_for_text(
        "#tasks-notice",
        "Your unsaved edits were discarded and the task released",
        Duration::from_secs(15),
    );
    browser.screenshot("released-discarded");
    let released = task(&server, &tina, &task_id);
    assert_eq!(
        (released["task"]["claimedByYou"].clone(), released["task"]["revision"].clone()),
        (json!(false), json!(0))
    );
    assert!(!document_text(&released).contains("nation"));

    // Save and release: the edit is revision 1.
    browser.click(".claim");
    browser.find(".w");
    edit_word(&browser, "country", "nation");
    browser.click("#release-task");
    browser.click("#unsaved-save");
    browser.wait_for_text("#tasks-notice", "saved as revision 1 and the task released", Duration::from_secs(15));
    let released = task(&server, &tina, &task_id);
    assert_eq!(
        (released["task"]["claimedByYou"].clone(), released["task"]["revision"].clone()),
        (json!(false), json!(1))
    );
    assert!(document_text(&released).contains("nation"));

    // Nothing unsaved: Release does not ask.
    browser.click(".claim");
    browser.find(".w");
    browser.click("#release-task");
    browser.wait_for_text("#tasks-notice", "Task released with revision 1", Duration::from_secs(15));
    assert!(local_storage(&browser).find("scribe.draft").is_none());
}

#[test]
fn a_lease_that_runs_out_shows_at_once_and_is_claimed_again_keeping_the_edits() {
    const LEASE: &str = "12s";
    let server =
        TestServer::start_with(Options { extra_args: vec!["--task-lease".into(), LEASE.into()], ..Options::default() });
    let tina = server.create_staff_key("tina", "transcriber", &["en"]);
    let tess = server.create_staff_key("tess", "transcriber", &["en"]);
    let task_id = jfk_task(&server, &tina);
    let mut browser = Browser::start("editor_lease");
    sign_in(&mut browser, &server, &tina, "Transcription tasks");
    browser.click(".claim");
    let claimed = Instant::now();
    browser.find(".w");
    browser.wait_for_text("#lease", "You hold this task until", Duration::from_secs(5));
    // The lease is in the editor's fixed bar and counts down every second.
    assert_eq!(browser.script("return !!document.querySelector('.editor-top #lease');", vec![]), json!(true));
    let before = browser.text(&browser.find("#lease"));
    std::thread::sleep(Duration::from_millis(1300));
    let after = browser.text(&browser.find("#lease"));
    assert_ne!(before, after, "the countdown ticks every second");
    edit_word(&browser, "country", "nation");

    // The lease runs out with nobody else waiting: the page says so and offers to claim again,
    // in the fixed bar, on screen, with the focus.
    browser.wait_for_text("#lease-state", "ran out", Duration::from_secs(40));
    println!("lease of {LEASE}: shown as run out {:.1} s after the claim", claimed.elapsed().as_secs_f64());
    let placed = browser.script(
        "const n = document.querySelector('#lease-state'); const r = n.getBoundingClientRect();
         return [!!n.closest('.editor-top'), document.activeElement === n, r.top >= 0 && r.bottom <= innerHeight];",
        vec![],
    );
    assert_eq!(placed, json!([true, true, true]), "the notice is in the fixed bar, focused and on screen");
    assert_eq!(browser.attr(&browser.find("#lease-state"), "role").as_deref(), Some("alert"));
    assert!(browser.text(&browser.find("#lease-state")).contains("Nobody else holds it"));
    browser.screenshot("lease-ran-out");
    browser.set_window_size(390, 844);
    browser.screenshot("lease-ran-out-phone");
    browser.set_window_size(1280, 1000);
    browser.click("#reclaim");
    let again = browser.wait_for_text("#lease-state", "You hold this task again", Duration::from_secs(10));
    assert!(!again.contains("null"), "a notice without buttons prints nothing more: {again}");
    assert_eq!(browser.attr(&browser.find("#lease-state"), "role").as_deref(), Some("status"));
    assert_eq!(browser.text(&browser.find(&word_selector(&browser, "nation"))), "nation", "the edit is kept");
    browser.screenshot("lease-claimed-again");
    browser.click("#save");
    browser.wait_for_text("#editor-notice", "Saved revision 1", Duration::from_secs(15));
    assert!(document_text(&task(&server, &tina, &task_id)).contains("nation"));

    // It runs out again and Tess claims it first: the page says someone else holds it.
    browser.wait_for_text("#lease-state", "ran out", Duration::from_secs(40));
    server.post(&format!("/work/tasks/{task_id}/claim"), &tess, &[]).ok();
    browser.click("#reclaim");
    browser.wait_for_text("#lease-state", "Someone else holds this task now", Duration::from_secs(10));
    browser.screenshot("lease-someone-else");
    edit_word(&browser, "ask", "tell");
    browser.refresh();
    browser.wait_for_text("#lease", "Someone else holds this task now", Duration::from_secs(15));
    browser.find("#draft-offer");

    // Tina closes the tab without signing out; Tess signs in in the same browser: Tina's draft
    // stays hers, and Tess's sign-out removes every draft.
    browser.script("sessionStorage.clear();", vec![]);
    assert!(local_storage(&browser).contains("scribe.draft.tina."));
    sign_in(&mut browser, &server, &tess, "Transcription tasks");
    browser.click(&format!("a[href='#/task/{task_id}']"));
    browser.find(".w");
    assert!(browser.find_all("#draft-offer").is_empty(), "Tess is not offered Tina's draft");
    browser.click("#sign-out");
    browser.find("#key");
    let stored = local_storage(&browser);
    assert!(!stored.contains("scribe.draft") && !stored.contains("tell"), "{stored}");
}

#[test]
fn the_draft_is_auto_saved_and_comes_back_in_a_fresh_browser() {
    let server = TestServer::start();
    let tina = server.create_staff_key("tina", "transcriber", &["en"]);
    let task_id = jfk_task(&server, &tina);
    let mut browser = Browser::start("editor_autosave");
    sign_in(&mut browser, &server, &tina, "Transcription tasks");
    browser.click(".claim");
    browser.find(".w");
    edit_word(&browser, "country", "nation");
    let edited = Instant::now();
    browser.wait_for_text("#editor-status", "auto-saved", Duration::from_secs(60));
    println!("auto-saved {:.1} s after the last change", edited.elapsed().as_secs_f64());
    browser.screenshot("auto-saved");
    let saved = task(&server, &tina, &task_id);
    assert_eq!(saved["task"]["revision"], 1);
    assert!(document_text(&saved).contains("nation"));

    // A fresh profile (another computer) with the same key: the edit is there.
    let mut fresh = Browser::start("editor_autosave_fresh");
    sign_in(&mut fresh, &server, &tina, "Transcription tasks");
    fresh.click(&format!("a[href='#/task/{task_id}']"));
    fresh.find(".w");
    assert!(fresh.find_all("#draft-offer").is_empty());
    assert_eq!(fresh.text(&fresh.find(&word_selector(&fresh, "nation"))), "nation");
    fresh.screenshot("fresh-browser");

    // Leaving the page (closing the laptop's browser) auto-saves at once.
    edit_word(&fresh, "ask", "tell");
    fresh.goto(&server.url("/health"));
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let now = task(&server, &tina, &task_id);
        if now["task"]["revision"] == 2 {
            assert!(document_text(&now).contains("tell"), "{now}");
            break;
        }
        assert!(Instant::now() < deadline, "leaving the page did not save the edit: {now}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A translation of source cue `i` as long as a real one (words spread over the sentence).
fn translation(i: usize) -> String {
    format!(
        "Zin {}: en dus, mijn mede-Amerikanen, vraag niet wat uw land voor u kan doen, vraag wat u voor uw land kunt doen.",
        i + 1
    )
}

#[test]
fn translators_see_sentences_with_speaker_names_the_glossary_and_a_warning_for_empty_cues() {
    let server = TestServer::start();
    let customer = server.key().to_owned();
    let tina = server.create_staff_key("tina", "transcriber", &[]);
    let tom = server.create_staff_key("tom", "translator", &["nl"]);
    let glossary = server.create_glossary(
        &customer,
        &json!({"name": "Inauguration", "names": ["Kennedy"], "items": [{"name": "fellow Americans", "description": "medeburgers"}]}),
    );
    let job = server.upload_ok(
        &customer,
        &paths::corpus_file(clips::JFK),
        &[
            ("jobType", "perfect"),
            ("transcriptionType", "translatedSubtitles"),
            ("targetLanguage", "nl"),
            ("numberOfSpeakers", "1"),
            ("glossaryId", glossary["id"].as_str().unwrap()),
        ],
    );
    let job_id = job["jobId"].as_str().unwrap().to_owned();
    // The transcriber names the speaker and hands in (over HTTP).
    let transcribe = wait_for_task(&server, &tina, &job_id)["taskId"].as_str().unwrap().to_owned();
    server.post(&format!("/work/tasks/{transcribe}/claim"), &tina, &[]).ok();
    let mut doc = task(&server, &tina, &transcribe)["document"].clone();
    let spkid = doc["segments"][0]["speaker"].as_str().unwrap().to_owned();
    doc["speakers"] = json!([{"spkid": spkid, "name": "John F. Kennedy"}]);
    server.put_json(&format!("/work/tasks/{transcribe}/document"), &tina, &doc).ok();
    server.post(&format!("/work/tasks/{transcribe}/submit"), &tina, &[]).ok();
    let translate = wait_for_task(&server, &tom, &job_id)["taskId"].as_str().unwrap().to_owned();

    let mut browser = Browser::start("editor_translate");
    sign_in(&mut browser, &server, &tom, "Translation tasks");
    browser.click(".claim");
    browser.find("textarea.target");
    let cues = task(&server, &tom, &translate)["sourceCues"].as_array().unwrap().clone();
    println!("{} source cues: {:?}", cues.len(), cues.iter().map(|c| c["text"].as_str().unwrap()).collect::<Vec<_>>());
    // Cues are sentences: each ends at a sentence end, else at a long pause before the next.
    for pair in cues.windows(2) {
        let text = pair[0]["text"].as_str().unwrap().trim_end_matches(['"', '\'', ')']);
        let pause = pair[1]["start"].as_f64().unwrap() - pair[0]["end"].as_f64().unwrap();
        assert!(text.ends_with(['.', '?', '!', '…']) || pause >= 1.5, "cue cut inside a sentence: {pair:?}");
    }
    let sources = browser.find_all("td.source");
    assert_eq!(sources.len(), cues.len());
    for (cell, cue) in sources.iter().zip(&cues) {
        let shown = browser.text(cell);
        assert_eq!(shown, format!("John F. Kennedy: {}", cue["text"].as_str().unwrap()), "speaker names, not ids");
        assert!(!shown.contains(&spkid));
    }
    // The job's glossary beside the work, read-only.
    let glossary_text = browser.wait_for_text("#glossary", "fellow Americans", Duration::from_secs(5));
    assert!(glossary_text.contains("medeburgers") && glossary_text.contains("Kennedy"), "{glossary_text}");
    assert!(browser.find_all("#glossary input, #glossary textarea").is_empty(), "the glossary is read-only");
    browser.screenshot("translate-editor");

    // Under 60rem the side column goes below every cue: the glossary is a panel above the cues
    // instead, closed until asked for, that stays at the top of the screen while the cues scroll.
    for width in [800, 390] {
        browser.set_window_size(width, 844);
        wait_until(
            &browser,
            &format!("the glossary is above the cues at {width} px"),
            "(() => { const b = document.querySelector('#glossary-box'), c = document.querySelector('#target-0');
               return !!b && !!c && !!(b.compareDocumentPosition(c) & Node.DOCUMENT_POSITION_FOLLOWING)
                 && b.getBoundingClientRect().bottom <= c.getBoundingClientRect().top + 1; })()",
        );
        let state = browser.script(
            "const b = document.querySelector('#glossary-box');
             return [document.querySelector('#glossary-toggle').getAttribute('aria-expanded'), getComputedStyle(b).position,
                     document.querySelector('#glossary').hidden];",
            vec![],
        );
        assert_eq!(state, json!(["false", "sticky", true]), "closed, pinned at the top, at {width} px");
        browser.screenshot(&format!("glossary-closed-{width}px"));
        browser.click("#glossary-toggle");
        browser.wait_for_text("#glossary", "medeburgers", Duration::from_secs(5));
        assert_eq!(
            browser.script("return document.querySelector('#glossary-toggle').getAttribute('aria-expanded');", vec![]),
            json!("true")
        );
        // At the last cue of a long job the glossary is still on the screen (the JFK job has few
        // cues: room below them stands in for the cues of an hour).
        browser.script(
            "const room = document.createElement('div'); room.id = 'long-job'; room.style.height = '4000px';
             document.querySelector('#transcript').append(room);
             room.scrollIntoView({ block: 'end' });",
            vec![],
        );
        assert!(browser.script("return scrollY;", vec![]).as_f64().unwrap() > 3000.0, "the page scrolled far down");
        wait_until(
            &browser,
            &format!("the glossary is on the screen far down the cues at {width} px"),
            "(() => { const r = document.querySelector('#glossary-toggle').getBoundingClientRect();
               return r.top >= 0 && r.bottom <= innerHeight; })()",
        );
        browser.screenshot(&format!("glossary-open-far-down-{width}px"));
        browser.click("#glossary-toggle");
        browser.script("document.querySelector('#long-job').remove(); window.scrollTo(0, 0);", vec![]);
    }
    browser.set_window_size(1280, 1000);

    // Submit with empty cues: a warning in the page names them and leads to them.
    let targets = browser.find_all("textarea.target");
    let filled = if targets.len() > 1 { 1 } else { 0 };
    for (i, t) in targets.iter().enumerate().take(filled) {
        browser.send_keys(t, &translation(i));
    }
    browser.click("#submit-task");
    assert_eq!(open_dialog(&browser), json!("empty-cues"));
    assert!(focus_in_dialog(&browser));
    let warning = browser.text(&browser.find("#empty-cues"));
    for n in filled + 1..=targets.len() {
        assert!(warning.contains(&format!("Go to cue {n}")), "cue {n} is named: {warning}");
    }
    browser.screenshot("empty-cues-warning");
    browser.set_window_size(390, 844);
    browser.screenshot("empty-cues-warning-phone");
    browser.set_window_size(1280, 1000);
    browser.click(&format!("#empty-cues button[data-cue=\"{}\"]", filled + 1));
    wait_until(&browser, "the empty cue has the focus", &format!("document.activeElement.id === 'target-{filled}'"));
    assert_eq!(task(&server, &tom, &translate)["task"]["claimedByYou"], true, "nothing was submitted");
    for (i, t) in targets.iter().enumerate().skip(filled) {
        browser.send_keys(t, &translation(i));
    }
    // Submit asks in the page (not window.confirm); Cancel keeps the task and the edits.
    let last_cue = cues.len() - 1;
    browser.click("#submit-task");
    assert_eq!(open_dialog(&browser), json!("submit-confirm"));
    assert!(focus_in_dialog(&browser));
    let asked = browser.text(&browser.find("#submit-confirm"));
    assert!(asked.contains("cannot change it afterwards"), "{asked}");
    browser.screenshot("submit-confirm");
    browser.set_window_size(390, 844);
    browser.screenshot("submit-confirm-phone");
    browser.set_window_size(1280, 1000);
    browser.click("#submit-confirm-cancel");
    assert_eq!(open_dialog(&browser), Value::Null);
    browser.wait_for_text("#editor-status", "Not submitted", Duration::from_secs(5));
    assert_eq!(js_value(&browser, "document.activeElement.id"), json!("submit-task"), "focus goes back to Submit");
    assert_eq!(task(&server, &tom, &translate)["task"]["claimedByYou"], true, "Cancel keeps the task");
    assert_eq!(
        js_value(&browser, &format!("document.querySelector('#target-{last_cue}').value")),
        json!(translation(last_cue)),
        "and the edits"
    );
    // Confirmed: the edits are saved and the task handed in.
    browser.click("#submit-task");
    assert_eq!(open_dialog(&browser), json!("submit-confirm"));
    browser.click("#submit-confirm-submit");
    browser.wait_for_text("#tasks", "No tasks", Duration::from_secs(15));
    server.wait_for_status(&customer, &job_id, &["DONE"], Duration::from_secs(30));
    let srt = server.get("/jobs/export-srt", &customer, &[("jobId", &job_id)]).text;
    assert!(srt.contains("mede-Amerikanen"), "{srt}");
}
