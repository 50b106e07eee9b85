//! The web app's Live page in a real headless Chromium whose fake microphone plays the JFK clip
//! in a loop (`--use-file-for-fake-audio-capture`), against a real server's live door
//! (`/api/real-time`): a wrong key gets the server's Error in red; a funded customer presses
//! Start and sees partials, then the clip's words as finals, with the clock running and the
//! level meter moving; Stop ends the session; with "save as job" the page links the finished
//! job's editor, which shows the words. Screenshots land in `tests/screenshots/live/`.

use std::time::{Duration, Instant};

use scribe_tests::{Browser, TestServer, clips, paths};
use serde_json::{Value, json};

/// Words of the clip every correct transcript has, in order.
const JFK_WORDS: &str = "ask not what your country can do for you";

/// How long real-time ASR of the first pass through the clip may take on a busy machine.
const FINALS_TIMEOUT: Duration = Duration::from_secs(240);

/// Lower case letters and digits, words separated by one space: punctuation and case aside.
fn normalized(text: &str) -> String {
    let kept: String =
        text.to_lowercase().chars().map(|c| if c.is_alphanumeric() || c == '\'' { c } else { ' ' }).collect();
    kept.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn live_browser(test: &str) -> Browser {
    let clip = paths::corpus_file(clips::JFK).canonicalize().expect("the JFK clip");
    Browser::start_with_flags(
        test,
        &[
            "--use-fake-ui-for-media-stream".to_owned(),
            "--use-fake-device-for-media-stream".to_owned(),
            format!("--use-file-for-fake-audio-capture={}", clip.display()),
        ],
    )
}

fn wait_for_option(browser: &Browser, css: &str, value: &str) {
    let deadline = Instant::now() + Duration::from_secs(15);
    let probe = "const s = document.querySelector(arguments[0]); return !!s && [...s.options].some(o => o.value === arguments[1]);";
    while browser.script(probe, vec![json!(css), json!(value)]) != json!(true) {
        assert!(Instant::now() < deadline, "{css} does not offer {value}: {}", browser.page_text());
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn wait_until(browser: &Browser, what: &str, timeout: Duration, js: &str) -> Value {
    let deadline = Instant::now() + timeout;
    loop {
        let value = browser.script(js, vec![]);
        if value != Value::Null && value != json!(false) {
            return value;
        }
        assert!(Instant::now() < deadline, "{what} within {timeout:?}; the page says:\n{}", browser.page_text());
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// Makes the page remember what passes too fast to poll: whether a partial line was ever
/// shown, the highest level the meter showed, and each final's delay (by its id).
fn watch_captions_and_meter(browser: &Browser) {
    browser.script(
        "window.liveSeen = { partial: false, level: 0, delays: {} };
         const captions = document.getElementById('live-captions');
         const level = document.getElementById('live-level');
         new MutationObserver(() => {
           if (captions.querySelector('.partial')) window.liveSeen.partial = true;
           for (const f of captions.querySelectorAll('.final[data-delay]')) window.liveSeen.delays[f.dataset.id] = Number(f.dataset.delay);
           window.liveSeen.level = Math.max(window.liveSeen.level, Number(level.getAttribute('aria-valuenow')));
         }).observe(document.getElementById('main'), { childList: true, subtree: true, characterData: true, attributes: true });",
        vec![],
    );
}

fn seen(browser: &Browser) -> Value {
    browser.script("return window.liveSeen", vec![])
}

/// The finals shown so far, as one normalized text.
fn finals(browser: &Browser) -> String {
    let text = browser.script(
        "return [...document.querySelectorAll('#live-captions .final')].map(p => p.textContent).join(' ')",
        vec![],
    );
    normalized(text.as_str().unwrap_or_default())
}

fn wait_for_finals_with(browser: &Browser, server: &TestServer, words: &str) -> String {
    let deadline = Instant::now() + FINALS_TIMEOUT;
    loop {
        let text = finals(browser);
        if text.contains(words) {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "the finals do not show {words:?} within {FINALS_TIMEOUT:?}: {text:?}\nthe page says:\n{}\n{}",
            browser.page_text(),
            server.logs()
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

fn balance(server: &TestServer, key: &str) -> i64 {
    server.get("/me", key, &[]).ok()["balance"].as_i64().expect("a balance")
}

#[test]
fn the_live_page_captions_the_microphone_and_saves_the_session_as_a_job() {
    let server = TestServer::start();
    let ann = server.create_key("ann", Some(100_000));
    let glossary = server.create_glossary(&ann, &json!({"name": "Speeches", "names": ["Kennedy"], "items": []}));
    let glossary_id = glossary["id"].as_str().expect("a glossary id").to_owned();
    let mut browser = live_browser("live");

    // The Live page, from the navigation: the server's languages plus auto, the glossaries.
    browser.goto(&server.url("/"));
    browser.type_into("#key", &ann);
    browser.click("#signin-btn");
    browser.wait_for_text("h1", "Your jobs", Duration::from_secs(15));
    browser.click("#nav a[href='#/live']");
    browser.wait_for_text("h1", "Live transcription", Duration::from_secs(10));
    wait_for_option(&browser, "#live-language", "en");
    wait_for_option(&browser, "#live-language", "auto");
    wait_for_option(&browser, "#live-glossary", &glossary_id);
    browser.wait_for_attr("#nav a[href='#/live']", "aria-current", "page", Duration::from_secs(5));
    browser.screenshot("live-ready");

    // A wrong key: the server's Error, in red, and Start works again.
    browser.script("sessionStorage.setItem('scribe.apiKey', 'not-a-key')", vec![]);
    browser.click("#live-start");
    let refusal = wait_until(
        &browser,
        "the refusal shows and Start works again",
        Duration::from_secs(30),
        "const e = document.getElementById('live-error').textContent.trim();
         return e.length > 0 && !document.getElementById('live-start').disabled && e;",
    );
    browser.screenshot("live-refused");
    assert!(finals(&browser).is_empty(), "no captions for a refused session: {refusal}");
    browser.script("sessionStorage.setItem('scribe.apiKey', arguments[0])", vec![json!(ann)]);

    // Start: partials, then the clip's words as finals; the clock runs, the meter moves.
    let before = balance(&server, &ann);
    browser.select("#live-language", "en");
    browser.click("#live-revise");
    watch_captions_and_meter(&browser);
    browser.click("#live-start");
    browser.wait_for_text("#live-status", "Session started", Duration::from_secs(30));
    assert_eq!(browser.text(&browser.find("#live-error")), "", "no error for a funded customer");
    wait_until(&browser, "a partial shows", FINALS_TIMEOUT, "return window.liveSeen.partial");
    browser.screenshot("live-partial");
    let shown = wait_for_finals_with(&browser, &server, JFK_WORDS);
    browser.screenshot("live-finals");
    let seen_now = seen(&browser);
    assert!(seen_now["level"].as_f64().unwrap() > 20.0, "the level meter moved with the speech: {seen_now}");
    let clock = browser.text(&browser.find("#live-clock"));
    assert!(clock.len() == 5 && clock != "00:00", "the clock runs: {clock:?}");
    assert!(!shown.contains("speaker"), "captions are speaker-neutral: {shown}");
    // Each final tells how long after its last word it came: measured, reported, never timed
    // here (`scribe-bench live` holds the goals). It cannot come before the pause that ends
    // its utterance (half a second) has begun.
    let delays: Vec<f64> =
        seen(&browser)["delays"].as_object().expect("delays").values().filter_map(Value::as_f64).collect();
    assert!(!delays.is_empty(), "no final's delay was shown: {}", browser.page_text());
    assert!(delays.iter().all(|d| (0.2..600.0).contains(d)), "{delays:?}");
    let readout = browser.text(&browser.find("#live-delay"));
    assert!(readout.starts_with("Delay ") && readout.ends_with(" s"), "{readout:?}");
    let mut sorted = delays.clone();
    sorted.sort_by(f64::total_cmp);
    eprintln!(
        "Live page: {} finals, delay after the last word p50 {:.2} s, max {:.2} s",
        sorted.len(),
        sorted[sorted.len() / 2],
        sorted[sorted.len() - 1]
    );
    let partial_style = browser.script(
        "const p = document.createElement('p'); p.className = 'partial'; document.getElementById('live-captions').append(p);
         const grey = getComputedStyle(p).color; p.remove();
         const f = document.querySelector('#live-captions .final'); return [grey, getComputedStyle(f).color];",
        vec![],
    );
    assert_ne!(partial_style[0], partial_style[1], "partials are greyed, finals are not");

    // Stop: END, the last finals, the close; nothing unconfirmed stays.
    browser.click("#live-stop");
    browser.wait_for_text("#live-status", "Session ended", Duration::from_secs(90));
    assert!(browser.find_all("#live-captions .partial").is_empty(), "no partial outlives the session");
    assert_eq!(browser.text(&browser.find("#live-error")), "", "a stopped session is no error");
    assert!(finals(&browser).contains(JFK_WORDS));
    // Revise captions was ticked: each final read again with its neighbours replaces its line,
    // so the sentence Whisper cut with a full stop at the pause goes on in small letters.
    let captions = browser.text(&browser.find("#live-captions"));
    assert!(captions.contains("ask not what"), "the captions as revised: {captions:?}");
    browser.screenshot("live-stopped");
    assert!(balance(&server, &ann) < before, "the session was paid");

    // Save as job, with the glossary: after Stop, a link to the finished job's editor.
    browser.select("#live-glossary", &glossary_id);
    browser.click("#live-save");
    browser.click("#live-start");
    browser.wait_for_text("#live-status", "Session started", Duration::from_secs(30));
    wait_for_finals_with(&browser, &server, JFK_WORDS);
    browser.screenshot("live-saving-finals");
    browser.click("#live-stop");
    browser.wait_for_text("#live-status", "Session ended", Duration::from_secs(90));
    browser.find("#live-job-link");
    browser.screenshot("live-saved-link");
    let href = browser.attr(&browser.find("#live-job-link"), "href").expect("a link");
    let job_id = href.rsplit('/').next().unwrap().to_owned();
    let status = server.get("/jobs/status", &ann, &[("jobId", &job_id)]).ok();
    assert_eq!(status["jobStatus"]["status"], "DONE", "{status}");
    assert_eq!(status["jobStatus"]["jobType"], "direct", "{status}");
    assert_eq!(status["jobStatus"]["transcriptionType"], "transcription", "{status}");
    browser.click("#live-job-link");
    browser.find("#transcript .w");
    let editor_words = browser
        .script("return [...document.querySelectorAll('#transcript .w')].map(w => w.textContent).join(' ')", vec![]);
    assert!(
        normalized(editor_words.as_str().unwrap()).contains(JFK_WORDS),
        "the editor shows the session's words: {editor_words}"
    );
    browser.wait_for_attr("#waveform", "data-ready", "true", Duration::from_secs(30));
    browser.screenshot("live-job-editor");
}
