//! The editor on long media and for keyboard and screen-reader users, in a real headless
//! Chromium against a real server: a 60-minute recording (corpus clips and silence, built with
//! ffmpeg) with a 9,000-word transcript saved through the editor's own API; the test measures in
//! the page (performance.now) and PRINTS how long the words take to appear, typing a word,
//! splitting, highlighting, the waveform, and the worst stall while playback moves the current
//! word (timings are printed, never asserted). The waveform comes from the server's peaks, made
//! when the job is processed (or, for older media, on the first request). The
//! subtitle preview shows the cues the SRT export lays out for the same unsaved document and
//! knobs; the word area is one tab stop with arrow keys inside, and an edited word's accessible
//! name is its new text. Only the segments near the view are rendered: the transcript's DOM
//! stays the same size for 9,000 and 18,000 words, and typing, find, keyboard navigation and undo
//! reach segments that are not rendered (frame times while scrolling, on a quiet machine, while
//! the server prepares an hour of media and while it transcribes 13 minutes of speech, first
//! paint, typing and the JS heap are printed); the segment holding the cursor stays rendered when the page scrolls away
//! from it. A translation of the hour's 900 cues likewise renders only the rows near the view and
//! the one being typed in. axe-core finds nothing on either long document.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use scribe_tests::{ASR_TIMEOUT, Browser, TestServer, clips, paths, web_app};
use serde_json::{Value, json};

const CTRL: &str = "\u{E009}";
const SHIFT: &str = "\u{E008}";
const NO_MODIFIERS: &str = "\u{E000}";
const TAB: &str = "\u{E004}";
const ESCAPE: &str = "\u{E00C}";
const ENTER: &str = "\u{E007}";
const LEFT: &str = "\u{E012}";
const UP: &str = "\u{E013}";
const RIGHT: &str = "\u{E014}";
const DOWN: &str = "\u{E015}";
const HOME: &str = "\u{E011}";
const END: &str = "\u{E010}";

/// The long recording: 60 minutes.
const MEDIA_SECONDS: f64 = 3600.0;
/// Words of the long transcript, one every [`WORD_STEP`] seconds.
const WORDS: usize = 9_000;
const WORD_STEP: f64 = 0.399;
/// Words per segment of the long transcript (speaker turns alternate).
const WORDS_PER_SEGMENT: usize = 30;

fn sign_in(browser: &mut Browser, server: &TestServer, key: &str, expect_heading: &str) {
    browser.goto(&server.url("/"));
    browser.type_into("#key", key);
    browser.click("#signin-btn");
    browser.wait_for_text("h1", expect_heading, Duration::from_secs(15));
}

/// Reads a value from the page.
fn js(browser: &Browser, expr: &str) -> Value {
    browser.script(&format!("return {expr};"), vec![])
}

/// A 60-minute MP3 (mono, 16 kHz, 32 kb/s): the JFK clip, silence, the weather question at the
/// half hour, silence. Speech is short so the machine transcript is quick; the editor gets the
/// long transcript from the test.
fn sixty_minute_media(dir: &Path) -> PathBuf {
    let out = dir.join("sixty-minutes.mp3");
    let half = MEDIA_SECONDS / 2.0;
    let filter = format!(
        "[0:a]aresample=16000,aformat=channel_layouts=mono,apad=whole_dur={half}[a];\
         [1:a]aresample=16000,aformat=channel_layouts=mono,apad=whole_dur={half}[b];\
         [a][b]concat=n=2:v=0:a=1[out]"
    );
    let status = Command::new("ffmpeg")
        .args(["-hide_banner", "-loglevel", "error", "-y", "-i"])
        .arg(paths::corpus_file(clips::JFK))
        .arg("-i")
        .arg(paths::corpus_file(clips::SHORT))
        .args(["-filter_complex", &filter, "-map", "[out]", "-c:a", "libmp3lame", "-b:a", "32k"])
        .arg(&out)
        .status()
        .expect("running ffmpeg");
    assert!(status.success(), "ffmpeg could not build the 60-minute file");
    out
}

/// A transcript of `count` words over the hour (export-json shape): two speakers taking turns,
/// sentences of 6 to 14 words, every 17th word of low confidence.
fn long_document(count: usize) -> Value {
    let step = WORD_STEP * WORDS as f64 / count as f64;
    const VOCABULARY: &[&str] = &[
        "the",
        "council",
        "agreed",
        "that",
        "our",
        "budget",
        "for",
        "next",
        "year",
        "should",
        "cover",
        "schools",
        "roads",
        "and",
        "libraries",
        "we",
        "will",
        "meet",
        "again",
        "in",
        "spring",
        "to",
        "review",
        "what",
        "residents",
        "told",
        "us",
        "about",
        "parking",
        "near",
        "station",
        "market",
        "every",
        "Thursday",
    ];
    let mut segments = Vec::new();
    let mut words = Vec::new();
    let mut sentence = 0;
    for i in 0..count {
        let start = 0.05 + i as f64 * step;
        let mut text = VOCABULARY[(i * 7 + i / 13) % VOCABULARY.len()].to_owned();
        sentence += 1;
        if sentence >= 6 + i % 9 {
            text.push('.');
            sentence = 0;
        }
        let conf = if i % 17 == 0 { 0.42 } else { 0.93 };
        words.push(json!({"start": round3(start), "end": round3(start + step * 0.75), "text": text, "conf": conf}));
        if words.len() == WORDS_PER_SEGMENT || i == count - 1 {
            let speaker = if segments.len() % 2 == 0 { "spk1" } else { "spk2" };
            segments.push(json!({"speaker": speaker, "words": std::mem::take(&mut words)}));
        }
    }
    json!({
        "speakers": [{"spkid": "spk1", "name": "Chair"}, {"spkid": "spk2", "name": "Clerk"}],
        "segments": segments,
        "highlights": [],
    })
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// A finished direct job of `media` whose document is `document` (saved through
/// `PUT /jobs/document`, as the editor saves).
fn done_job_with(server: &TestServer, key: &str, media: &Path, document: Option<&Value>) -> String {
    let job = server.upload_ok(key, media, &[("numberOfSpeakers", "1"), ("language", "en")]);
    let job_id = job["jobId"].as_str().unwrap().to_owned();
    server.wait_for_status(key, &job_id, &["DONE"], ASR_TIMEOUT);
    if let Some(document) = document {
        let reply = server
            .http()
            .put(server.url("/api/jobs/document"))
            .query(&[("apiKey", key), ("jobId", job_id.as_str())])
            .json(document)
            .send()
            .unwrap();
        let status = reply.status().as_u16();
        assert_eq!(status, 200, "saving the document: {}", reply.text().unwrap_or_default());
    }
    job_id
}

/// Page-side instruments: when the words and the waveform appear after opening the editor, how
/// long a key takes until the transcript has changed and the next frame is painted, and the
/// longest frame while playback runs.
const INSTRUMENTS: &str = r#"
const P = window.__perf = { results: {} };
P.afterPaint = (cb) => requestAnimationFrame(() => setTimeout(cb, 0));
P.open = (hash) => {
  const t0 = performance.now();
  let wordsSeen = false;
  const obs = new MutationObserver(() => {
    if (!wordsSeen && document.querySelector('#transcript .w')) {
      wordsSeen = true;
      P.afterPaint(() => { P.results.words = performance.now() - t0; });
    }
    const wave = document.querySelector('#waveform');
    if (P.results.wave == null && wave && wave.dataset.ready) {
      P.results.wave = performance.now() - t0;
      P.results.waveState = wave.dataset.ready;
      obs.disconnect();
    }
  });
  obs.observe(document.body, { childList: true, subtree: true, attributes: true, attributeFilter: ['data-ready'] });
  location.hash = hash;
};
P.arm = (name) => {
  P.results[name] = null;
  let start = null;
  const onKey = (e) => { if (start === null) start = e.timeStamp; };
  document.addEventListener('keydown', onKey, true);
  const obs = new MutationObserver(() => {
    if (start === null) return;
    obs.disconnect();
    document.removeEventListener('keydown', onKey, true);
    P.afterPaint(() => { P.results[name] = performance.now() - start; });
  });
  obs.observe(document.querySelector('#transcript'), { childList: true, subtree: true, attributes: true, characterData: true });
};
P.watchPlayback = (ms) => {
  P.results.playback = null;
  let last = performance.now();
  const end = last + ms;
  let worst = 0, frames = 0, longTask = 0, changes = 0;
  let current = document.querySelector('#transcript .w.cur');
  let po = null;
  try {
    po = new PerformanceObserver((list) => { for (const e of list.getEntries()) longTask = Math.max(longTask, e.duration); });
    po.observe({ type: 'longtask' });
  } catch (_) { po = null; }
  const tick = (now) => {
    worst = Math.max(worst, now - last);
    last = now;
    frames++;
    const cur = document.querySelector('#transcript .w.cur');
    if (cur !== current) { changes++; current = cur; }
    if (now < end) requestAnimationFrame(tick);
    else {
      if (po) po.disconnect();
      P.results.playback = { worstFrame: worst, longTask, frames, changes };
    }
  };
  requestAnimationFrame(tick);
};
"#;

/// Waits for `__perf.results[name]` (milliseconds, or an object) and returns it.
fn result(browser: &Browser, name: &str, timeout: Duration) -> Option<Value> {
    let deadline = Instant::now() + timeout;
    loop {
        let v = browser.script("return window.__perf.results[arguments[0]];", vec![json!(name)]);
        if !v.is_null() {
            return Some(v);
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn ms(v: &Option<Value>) -> String {
    match v.as_ref().and_then(Value::as_f64) {
        Some(x) => format!("{x:.0} ms"),
        None => "not within the wait".to_owned(),
    }
}

/// Scrolls the page until segment `s` (of about `count`) is rendered, and puts it mid-screen:
/// a jump to where it should be in proportion, then the editor renders what is near the view.
fn show_segment(browser: &Browser, s: usize, count: usize) {
    let mut seen = Value::Null;
    for _ in 0..40 {
        seen = browser.script(
            "const [s, n] = arguments;
             const t = document.querySelector(`#transcript section[data-seg=\"${s}\"]`);
             if (t) { t.scrollIntoView({ block: 'center' }); return 'shown'; }
             const shown = [...document.querySelectorAll('#transcript section[data-seg]')].map((x) => +x.dataset.seg);
             const r = document.querySelector('#transcript').getBoundingClientRect();
             window.scrollTo(0, window.scrollY + r.top + (r.height * s) / n - innerHeight / 2);
             return shown.length ? `${Math.min(...shown)}-${Math.max(...shown)}` : 'none';",
            vec![json!(s), json!(count)],
        );
        std::thread::sleep(Duration::from_millis(150));
        if seen == json!("shown") {
            return;
        }
    }
    panic!("segment {s} was never rendered by scrolling (the last window rendered: {seen})");
}

/// The CSS selector of word `w` of segment `s`.
/// Clicks the word at `target`, selects its text and types `text` over it key by key,
/// returning each key's milliseconds until the next frame (NaN where none came).
fn retype_timed(browser: &Browser, target: &str, text: &str) -> Vec<f64> {
    browser.click(target);
    browser.type_into(target, &format!("{CTRL}a{NO_MODIFIERS}"));
    text.chars()
        .map(|c| {
            browser.script("window.__perf.arm('key');", vec![]);
            browser.press(&c.to_string());
            result(browser, "key", Duration::from_secs(30)).and_then(|v| v.as_f64()).unwrap_or(f64::NAN)
        })
        .collect()
}

fn word(s: usize, w: usize) -> String {
    format!("#transcript .w[data-s=\"{s}\"][data-w=\"{w}\"]")
}

#[test]
fn a_sixty_minute_document_opens_edits_and_plays_smoothly() {
    let server = TestServer::start();
    let ann = server.create_key("ann", Some(10_000_000));
    let media_dir = tempfile::tempdir().unwrap();
    let media = sixty_minute_media(media_dir.path());
    let document = long_document(WORDS);
    let job_id = done_job_with(&server, &ann, &media, Some(&document));
    let segments = document["segments"].as_array().unwrap().len();

    let mut browser = Browser::start("editor-scale-long");
    sign_in(&mut browser, &server, &ann, "Your jobs");
    browser.script(INSTRUMENTS, vec![]);
    browser.script("window.__perf.open(arguments[0]);", vec![json!(format!("#/edit/{job_id}"))]);
    let words_ms = result(&browser, "words", Duration::from_secs(120));
    let rendered = js(&browser, "document.querySelectorAll('#transcript .w').length").as_u64().unwrap();
    assert!(rendered > 0 && rendered < WORDS as u64 / 5, "only the words near the view are rendered: {rendered}");
    browser.screenshot("long-editor");
    let wave_ms = result(&browser, "wave", Duration::from_secs(300));
    let wave_state = js(&browser, "window.__perf.results.waveState");
    browser.screenshot("long-editor-waveform");

    // Typing a word in the middle: each key until the next frame.
    let middle = segments / 2;
    let target = word(middle, 3);
    show_segment(&browser, middle, segments);
    let keys = retype_timed(&browser, &target, "hello");
    assert_eq!(browser.text(&browser.find(&target)), "hello");
    let typing_worst = keys.iter().copied().fold(0.0, f64::max);

    // Split the segment at that word (Ctrl+Enter), then highlight its sentence (Ctrl+M).
    browser.script("window.__perf.arm('split');", vec![]);
    browser.press(&format!("{CTRL}{ENTER}"));
    let split_ms = result(&browser, "split", Duration::from_secs(60));
    browser.wait_for_text("#editor-status", "split", Duration::from_secs(10));
    assert_eq!(browser.text(&browser.find(&word(middle + 1, 0))), "hello", "the new segment starts at the word");
    assert_eq!(js(&browser, "document.activeElement.dataset.s"), json!((middle + 1).to_string()));
    browser.script("window.__perf.arm('highlight');", vec![]);
    browser.press(&format!("{CTRL}m"));
    let highlight_ms = result(&browser, "highlight", Duration::from_secs(60));
    browser.wait_for_text("#editor-status", "Highlighted", Duration::from_secs(10));
    assert!(!browser.find_all("#transcript .w.hl").is_empty(), "the sentence is highlighted");
    browser.screenshot("long-split-and-highlight");

    // Ten seconds of playback from the half hour: the current word follows.
    let half = word(segments / 2 + 10, 0);
    show_segment(&browser, segments / 2 + 10, segments + 1);
    browser.click(&half);
    browser.script("window.__perf.watchPlayback(10000);", vec![]);
    browser.press(ESCAPE);
    let playback = result(&browser, "playback", Duration::from_secs(60)).unwrap_or(Value::Null);
    browser.press(ESCAPE);
    browser.screenshot("long-playback");

    println!("60-minute document, {WORDS} words, {segments} segments:");
    println!("  first render of the words: {}", ms(&words_ms));
    println!("  typing a word: worst key {typing_worst:.0} ms ({keys:.0?} ms)");
    println!("  split: {}", ms(&split_ms));
    println!("  highlight: {}", ms(&highlight_ms));
    println!("  waveform ready: {} ({wave_state})", ms(&wave_ms));
    println!(
        "  10 s of playback: worst frame {:.0} ms, longest task {:.0} ms, {} frames, the current word changed {} times",
        playback["worstFrame"].as_f64().unwrap_or(f64::NAN),
        playback["longTask"].as_f64().unwrap_or(f64::NAN),
        playback["frames"],
        playback["changes"],
    );
    assert!(playback["changes"].as_u64().unwrap_or(0) >= 5, "the current word follows playback: {playback}");
    assert_eq!(wave_state, json!("true"), "the waveform of the hour is drawn");

    // The waveform came from the server's peaks, not from decoding the file in the page.
    let peaks_fetched = js(
        &browser,
        "performance.getEntriesByType('resource').filter(e => e.name.includes('/api/work/media/peaks')).length",
    );
    assert_eq!(peaks_fetched, json!(1), "the editor fetched the peaks once");
    let peaks_url = web_app::peaks_url(&server, &ann, &job_id);
    let peaks: Value = server.http().get(&peaks_url).send().unwrap().json().unwrap();
    let duration = peaks["duration"].as_f64().unwrap();
    assert!((duration - MEDIA_SECONDS).abs() < 1.0, "{duration}");
    let per_second = peaks["peaksPerSecond"].as_f64().unwrap();
    let (min, max) = (peaks["min"].as_array().unwrap(), peaks["max"].as_array().unwrap());
    assert_eq!(min.len(), max.len());
    assert!(((min.len() as f64) - duration * per_second).abs() <= 2.0, "{} pairs for {duration} s", min.len());
    // The JFK clip is loud in the first seconds; the silence after it is flat.
    let loudest = max[..(10.0 * per_second) as usize].iter().map(|v| v.as_f64().unwrap()).fold(0.0, f64::max);
    let quiet = max[(60.0 * per_second) as usize..(120.0 * per_second) as usize]
        .iter()
        .map(|v| v.as_f64().unwrap().abs())
        .fold(0.0, f64::max);
    assert!(loudest > 0.1 && quiet < 0.01, "speech {loudest}, silence {quiet}");
    assert!(min.iter().zip(max).all(|(a, b)| a.as_f64().unwrap() <= b.as_f64().unwrap()));
    // A changed signature is refused like the media's.
    let forged = peaks_url.replace("sig=", "sig=A");
    let reply = server.http().get(&forged).send().unwrap();
    assert_eq!(reply.status().as_u16(), 403);
    let body: Value = reply.json().unwrap();
    assert_eq!(body["field"], "sig", "{body}");
}

#[test]
fn the_waveform_peaks_are_made_when_the_job_is_processed_and_on_request_for_older_media() {
    let server = TestServer::start();
    let ann = server.create_key("ann", Some(100_000));
    let job_id = done_job_with(&server, &ann, &paths::corpus_file(clips::JFK), None);
    // Processed, and nobody asked for the waveform: the peaks are beside the media already.
    let cache = web_app::peaks_file(&server, &job_id);
    let listing = || web_app::media_files(&server, &job_id);
    assert!(cache.is_file(), "no peaks beside the processed media: {:?}", listing());
    let prepared: Value = serde_json::from_slice(&std::fs::read(&cache).unwrap()).unwrap();

    // The editor's request is answered with them.
    let peaks_url = web_app::peaks_url(&server, &ann, &job_id);
    let served = web_app::served_peaks_match(&server, &peaks_url, &prepared);
    let duration = served["duration"].as_f64().unwrap();
    assert!((duration - 11.0).abs() < 0.5, "the JFK clip lasts about 11 s: {duration}");
    let pairs = served["min"].as_array().unwrap().len() as f64;
    assert!((pairs - duration * 20.0).abs() <= 1.0, "{pairs} pairs for {duration} s");

    // Media processed before peaks were made with the job has none: the first request makes them.
    std::fs::remove_file(&cache).unwrap();
    let again: Value = server.http().get(&peaks_url).send().unwrap().json().unwrap();
    assert_eq!(again, served);
    assert!(cache.is_file(), "cached by the request: {:?}", listing());
}

/// The CSS selector of the first word of the editor whose letters are `word` (any case).
fn word_selector(browser: &Browser, word: &str) -> String {
    let found = browser.script(
        "const want = arguments[0]; const w = [...document.querySelectorAll('#transcript .w')].find(e => e.textContent.replace(/[^a-z]/gi, '').toLowerCase() === want); return w ? [w.dataset.s, w.dataset.w] : null;",
        vec![json!(word)],
    );
    let pair = found.as_array().unwrap_or_else(|| panic!("no word {word:?} in the editor: {}", browser.page_text()));
    format!("#transcript .w[data-s=\"{}\"][data-w=\"{}\"]", pair[0].as_str().unwrap(), pair[1].as_str().unwrap())
}

/// The cues of an SRT file: (start, end, rows joined by newlines).
fn srt_cues(srt: &str) -> Vec<(f64, f64, String)> {
    let seconds = |clock: &str| {
        let (hms, ms) = clock.trim().split_once(',').unwrap();
        let parts: Vec<f64> = hms.split(':').map(|p| p.parse().unwrap()).collect();
        ((parts[0] * 3600.0 + parts[1] * 60.0 + parts[2]) * 1000.0 + ms.parse::<f64>().unwrap()) / 1000.0
    };
    srt.split("\n\n")
        .filter(|block| block.contains("-->"))
        .map(|block| {
            let mut lines = block.lines().skip_while(|l| !l.contains("-->"));
            let (a, b) = lines.next().unwrap().split_once("-->").unwrap();
            (seconds(a), seconds(b), lines.collect::<Vec<_>>().join("\n"))
        })
        .collect()
}

/// Sets a number field the way a person does: empty it, type the value.
fn set_number(browser: &Browser, css: &str, value: &str) {
    let input = browser.find(css);
    browser.clear(&input);
    browser.send_keys(&input, value);
}

#[test]
fn the_subtitle_preview_shows_the_cues_the_srt_export_lays_out() {
    let server = TestServer::start();
    let ann = server.create_key("ann", Some(100_000));
    let job_id = done_job_with(&server, &ann, &paths::corpus_file(clips::JFK), None);
    let mut browser = Browser::start("editor-scale-preview");
    sign_in(&mut browser, &server, &ann, "Your jobs");
    browser.goto(&server.url(&format!("/#/edit/{job_id}")));
    browser.find("#transcript .w");
    browser.wait_for_attr("#caption-preview", "data-preview", "ready", Duration::from_secs(30));

    // An unsaved correction holding a space (two timed words once saved), and knobs of the export.
    let fellow = word_selector(&browser, "fellow");
    browser.click(&fellow);
    browser.type_into(&fellow, &format!("{CTRL}a{NO_MODIFIERS}dear friends"));
    set_number(&browser, "#knob-chars", "30");
    set_number(&browser, "#knob-rows", "1");
    browser.wait_for_attr("#caption-preview", "data-preview", "ready", Duration::from_secs(30));
    assert_eq!(js(&browser, "document.querySelector('#preview-error').textContent"), json!(""));

    // Every word, clicked: the cue the preview shows then (its text and times).
    let count = js(&browser, "document.querySelectorAll('#transcript .w').length").as_u64().unwrap();
    let mut shown: Vec<(f64, f64, String)> = Vec::new();
    for i in 0..count {
        let span = browser.find_all("#transcript .w").remove(i as usize);
        browser.click_element(&span);
        let cue = browser.script(
            "const c = document.querySelector('#caption-preview'); return [c.textContent, c.dataset.start || null, c.dataset.end || null];",
            vec![],
        );
        let text = cue[0].as_str().unwrap().to_owned();
        if text.is_empty() {
            continue;
        }
        let time = |v: &Value| v.as_str().unwrap().parse::<f64>().unwrap();
        let cue = (time(&cue[1]), time(&cue[2]), text);
        if !shown.contains(&cue) {
            shown.push(cue);
        }
    }
    browser.screenshot("preview-knobs");

    // Saved, the SRT export with the same knobs has exactly those cues.
    browser.press(&format!("{CTRL}s"));
    browser.wait_for_text("#editor-notice", "Saved revision 1", Duration::from_secs(15));
    let reply =
        server.get("/jobs/export-srt", &ann, &[("jobId", &job_id), ("maxCharsPerRow", "30"), ("maxNumberOfRows", "1")]);
    assert_eq!(reply.status, 200, "{}", reply.text);
    let exported = srt_cues(&reply.text);
    println!("preview cues: {shown:#?}\nexported: {exported:#?}");
    for cue in &shown {
        assert!(
            exported.contains(cue),
            "the preview showed {cue:?}, which the SRT export does not have:\n{}",
            reply.text
        );
    }
    assert_eq!(shown.len(), exported.len(), "every cue of the export was shown by the preview:\n{}", reply.text);
    let all: String = shown.iter().map(|c| c.2.as_str()).collect::<Vec<_>>().join(" ");
    assert!(all.contains("dear") && all.contains("friends") && !all.contains("fellow"), "{all}");
    assert!(exported.iter().all(|c| c.2.lines().count() == 1 && c.2.chars().count() <= 30), "{exported:?}");

    // A knob out of the export's bounds is named by its label, and the preview keeps its cues.
    set_number(&browser, "#knob-chars", "50");
    browser.wait_for_text("#preview-error", "Max characters per row", Duration::from_secs(5));
    assert_eq!(js(&browser, "document.querySelector('#knob-chars').getAttribute('aria-invalid')"), json!("true"));
    browser.screenshot("preview-knob-out-of-bounds");

    // The endpoint itself: the same layout over HTTP, and a knob out of bounds is a 400 naming it.
    let document = server.get("/jobs/document", &ann, &[("jobId", &job_id)]).ok()["document"].clone();
    let preview = server
        .http()
        .post(server.url("/api/subtitles/preview"))
        .query(&[("apiKey", ann.as_str()), ("maxCharsPerRow", "30"), ("maxNumberOfRows", "1")])
        .json(&document)
        .send()
        .unwrap();
    assert_eq!(preview.status().as_u16(), 200);
    let preview: Value = preview.json().unwrap();
    let over_http: Vec<(f64, f64, String)> = preview["cues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let lines: Vec<&str> = c["lines"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
            (c["start"].as_f64().unwrap(), c["end"].as_f64().unwrap(), lines.join("\n"))
        })
        .collect();
    assert_eq!(over_http, exported);
    let refused = server
        .http()
        .post(server.url("/api/subtitles/preview"))
        .query(&[("apiKey", ann.as_str()), ("maxCharsPerRow", "50")])
        .json(&document)
        .send()
        .unwrap();
    assert_eq!(refused.status().as_u16(), 400);
    let body: Value = refused.json().unwrap();
    assert_eq!(body["field"], "maxCharsPerRow", "{body}");
    let anonymous = server.http().post(server.url("/api/subtitles/preview")).json(&document).send().unwrap();
    assert_eq!(anonymous.status().as_u16(), 401);
}

#[test]
fn the_word_area_is_one_tab_stop_with_arrow_keys_and_an_edited_word_is_named_by_its_text() {
    let server = TestServer::start_float16(); // the JFK clip in two segments
    let ann = server.create_key("ann", Some(100_000));
    let job_id = done_job_with(&server, &ann, &paths::corpus_file(clips::JFK), None);
    let mut browser = Browser::start("editor-scale-keyboard");
    sign_in(&mut browser, &server, &ann, "Your jobs");
    browser.goto(&server.url(&format!("/#/edit/{job_id}")));
    browser.find("#transcript .w");
    let active = |browser: &Browser| {
        let pair = js(browser, "[document.activeElement.dataset.s ?? null, document.activeElement.dataset.w ?? null]");
        let n = |v: &Value| v.as_str().map(|s| s.parse::<i64>().unwrap()).unwrap_or(-1);
        (n(&pair[0]), n(&pair[1]))
    };
    let segment_words = |browser: &Browser, s: i64| {
        js(browser, &format!("document.querySelectorAll('#transcript .w[data-s=\"{s}\"]').length")).as_i64().unwrap()
    };
    assert_eq!(
        js(&browser, "document.querySelectorAll('#transcript .w[tabindex=\"0\"]').length"),
        json!(1),
        "one word is in the tab order"
    );

    // From the first word, Tab leaves the transcript: the speaker names are next.
    browser.click(&word(0, 0));
    let mut tabs = 0;
    while js(&browser, "document.activeElement.id") != json!("speaker-0") {
        browser.press(TAB);
        tabs += 1;
        assert!(
            tabs <= 40,
            "40 presses of Tab did not reach the first speaker name; focus is on {:?}",
            active(&browser)
        );
    }
    println!("Tab presses from the first word to the first speaker name: {tabs}");
    assert!(tabs <= 3, "{tabs} presses of Tab from the first word to the first speaker name");
    browser.screenshot("speaker-name-after-one-tab");

    // Shift+Tab comes back to the word, then reaches its segment's speaker.
    browser.press(&format!("{SHIFT}{TAB}"));
    assert_eq!(active(&browser), (0, 0), "Shift+Tab returns to the word area's word");
    browser.press(&format!("{SHIFT}{TAB}"));
    assert_eq!(js(&browser, "document.activeElement.id"), json!("seg-speaker-0"));
    browser.press(TAB);
    assert_eq!(active(&browser), (0, 0));

    // Arrows: a word reached by keyboard is chosen whole, so ← / → move by word; ↑ / ↓ by
    // segment; Home / End to the segment's ends.
    browser.press(RIGHT);
    assert_eq!(active(&browser), (0, 1));
    browser.press(RIGHT);
    assert_eq!(active(&browser), (0, 2));
    browser.press(LEFT);
    assert_eq!(active(&browser), (0, 1));
    assert!(segment_words(&browser, 1) > 0, "the JFK transcript has two segments");
    browser.press(DOWN);
    assert_eq!(active(&browser), (1, 0));
    browser.press(UP);
    assert_eq!(active(&browser), (0, 0));
    browser.press(END);
    assert_eq!(active(&browser), (0, segment_words(&browser, 0) - 1));
    browser.press(HOME);
    assert_eq!(active(&browser), (0, 0));
    assert_eq!(
        js(&browser, "document.querySelectorAll('#transcript .w[tabindex=\"0\"]').length"),
        json!(1),
        "still one tab stop"
    );
    assert_eq!(js(&browser, "document.activeElement.getAttribute('tabindex')"), json!("0"), "the tab stop follows");
    browser.screenshot("arrow-keys");

    // Typing replaces the chosen word; its accessible name is the new text.
    browser.press(RIGHT);
    let before = js(&browser, "document.activeElement.getAttribute('aria-label')");
    for c in "nation".chars() {
        browser.press(&c.to_string());
    }
    let (text, label) = {
        let v = js(&browser, "[document.activeElement.textContent, document.activeElement.getAttribute('aria-label')]");
        (v[0].as_str().unwrap().to_owned(), v[1].as_str().unwrap().to_owned())
    };
    assert_eq!(text, "nation");
    assert!(label == "nation" || label.starts_with("nation,"), "the name follows the text: {label:?} (was {before})");
    // At the end of the word → moves on; the word keyboard actions still work (split).
    browser.press(RIGHT);
    assert_eq!(active(&browser), (0, 2));
    let third = js(&browser, "document.activeElement.textContent");
    let segments = js(&browser, "document.querySelectorAll('#transcript section.segment').length").as_i64().unwrap();
    browser.press(&format!("{CTRL}{ENTER}"));
    browser.wait_for_text("#editor-status", "split", Duration::from_secs(5));
    assert_eq!(
        js(&browser, "document.querySelectorAll('#transcript section.segment').length").as_i64().unwrap(),
        segments + 1
    );
    assert_eq!(active(&browser), (1, 0), "the cursor starts the new segment");
    assert_eq!(js(&browser, "document.activeElement.getAttribute('tabindex')"), json!("0"));
    browser.screenshot("edited-and-split");
    browser.press(&format!("{CTRL}s"));
    browser.wait_for_text("#editor-notice", "Saved revision 1", Duration::from_secs(15));
    let json: Value = serde_json::from_str(&server.get("/jobs/export-json", &ann, &[("jobId", &job_id)]).text).unwrap();
    assert_eq!(json["segments"][0]["words"][1]["text"], "nation", "{json}");
    assert_eq!(json["segments"][1]["words"][0]["text"], third, "{json}");

    // On a phone: the word area and the preview knobs.
    browser.set_window_size(390, 844);
    // The player bar is fixed at the bottom on phones: bring the word above it, as a thumb would.
    browser.script("document.querySelector(arguments[0]).scrollIntoView({ block: 'center' })", vec![json!(word(0, 0))]);
    browser.click(&word(0, 0));
    browser.screenshot("phone-words");
    browser.script("document.querySelector('#preview-knobs').scrollIntoView()", vec![]);
    browser.screenshot("phone-preview-knobs");
}

/// Frames while the page scrolls through the whole transcript, a step each frame: p95 and the
/// worst of the requestAnimationFrame deltas.
const SCROLL_THROUGH: &str = r#"
window.__perf.results.scroll = null;
const deltas = [];
let last = null;
const step = (now) => {
  if (last !== null) deltas.push(now - last);
  last = now;
  const before = window.scrollY;
  window.scrollBy(0, arguments[0]);
  if (window.scrollY > before) requestAnimationFrame(step);
  else {
    deltas.sort((a, b) => a - b);
    window.__perf.results.scroll = { p95: deltas[Math.floor(deltas.length * 0.95)] || 0, worst: deltas[deltas.length - 1] || 0, frames: deltas.length };
  }
};
window.scrollTo(0, 0);
requestAnimationFrame(step);
"#;

/// Elements in the transcript area now.
fn transcript_nodes(browser: &Browser) -> u64 {
    js(browser, "document.querySelectorAll('#transcript *').length").as_u64().unwrap()
}

/// Opens job `job_id` in the editor, returns the time to the first paint of its words.
fn open_editor(browser: &Browser, job_id: &str) -> Option<Value> {
    browser.script(INSTRUMENTS, vec![]);
    browser.script("window.__perf.open(arguments[0]);", vec![json!(format!("#/edit/{job_id}"))]);
    let first_paint = result(browser, "words", Duration::from_secs(120));
    browser.wait_for_count("#transcript section[data-seg=\"0\"]", 1, Duration::from_secs(30));
    first_paint
}

/// The elements in the transcript with the page scrolled to the middle and to the end.
fn nodes_in_middle_and_at_end(browser: &Browser) -> (u64, u64) {
    browser.script("window.scrollTo(0, document.documentElement.scrollHeight / 2);", vec![]);
    std::thread::sleep(Duration::from_millis(400));
    let middle = transcript_nodes(browser);
    for _ in 0..5 {
        browser.script("window.scrollTo(0, document.documentElement.scrollHeight);", vec![]);
        std::thread::sleep(Duration::from_millis(300));
    }
    (middle, transcript_nodes(browser))
}

#[test]
fn only_the_segments_near_the_view_are_rendered_and_edits_far_away_are_saved() {
    let server = TestServer::start();
    let ann = server.create_key("ann", Some(10_000_000));
    let media_dir = tempfile::tempdir().unwrap();
    let media = sixty_minute_media(media_dir.path());
    let short_doc = long_document(WORDS);
    let long_words = 2 * WORDS;
    let long_doc = long_document(long_words);
    let short_job = done_job_with(&server, &ann, &media, Some(&short_doc));
    let long_job = done_job_with(&server, &ann, &media, Some(&long_doc));
    let segments = long_doc["segments"].as_array().unwrap().len();

    let mut browser = Browser::start("editor-scale-window");
    sign_in(&mut browser, &server, &ann, "Your jobs");
    let short_paint = open_editor(&browser, &short_job);
    let short_first = transcript_nodes(&browser);
    let (short_middle, short_end) = nodes_in_middle_and_at_end(&browser);
    browser.goto(&server.url("/"));
    browser.wait_for_text("h1", "Your jobs", Duration::from_secs(15));
    let long_paint = open_editor(&browser, &long_job);
    let (long_middle, long_end) = nodes_in_middle_and_at_end(&browser);
    let last = segments - 1;
    assert_eq!(
        js(&browser, &format!("!!document.querySelector('#transcript section[data-seg=\"{last}\"]')")),
        json!(true)
    );
    browser.screenshot("window-end");
    assert_eq!(browser.axe(), Vec::<Value>::new(), "axe-core on the long transcript, scrolled to its end");
    let counts = [short_first, short_middle, short_end, long_middle, long_end];
    println!(
        "Elements in the transcript: {WORDS} words {short_first} at the top, {short_middle} in the middle, {short_end} at the end; {long_words} words {long_middle} in the middle, {long_end} at the end"
    );
    let (least, most) = (*counts.iter().min().unwrap(), *counts.iter().max().unwrap());
    assert!(most < WORDS as u64 / 4, "the transcript's DOM is far below the word count: {counts:?}");
    assert!(most - least <= most / 2, "the transcript's DOM does not grow with the document: {counts:?}");

    // Scrolling through the whole 18,000 words, a step each frame.
    browser.script(SCROLL_THROUGH, vec![json!(120)]);
    let scroll = result(&browser, "scroll", Duration::from_secs(300)).unwrap_or(Value::Null);
    // Again while the server prepares an hour of media beside the browser (decoding, the
    // waveform's peaks, finding the speech)...
    let preparing = server.upload_ok(&ann, &media, &[("numberOfSpeakers", "1"), ("language", "en")]);
    let preparing_id = preparing["jobId"].as_str().unwrap().to_owned();
    std::thread::sleep(Duration::from_millis(500));
    browser.script(SCROLL_THROUGH, vec![json!(120)]);
    let preparing_scroll = result(&browser, "scroll", Duration::from_secs(300)).unwrap_or(Value::Null);
    let preparing_status = server.status(&ann, &preparing_id)["status"].clone();
    // ...and while it transcribes 13 minutes of speech, which keeps both cores busy for longer
    // than the scroll takes (it starts once the words are being decoded; the job is deleted
    // after).
    let busy = server.upload_ok(&ann, &paths::corpus_file(clips::LONG_READING), &[("language", "en")]);
    let busy_id = busy["jobId"].as_str().unwrap().to_owned();
    let deadline = Instant::now() + ASR_TIMEOUT;
    while server.status(&ann, &busy_id)["progress"].is_null() {
        assert!(Instant::now() < deadline, "the transcription beside the browser never started");
        std::thread::sleep(Duration::from_millis(200));
    }
    browser.script(SCROLL_THROUGH, vec![json!(120)]);
    let busy_scroll = result(&browser, "scroll", Duration::from_secs(300)).unwrap_or(Value::Null);
    let busy_status = server.status(&ann, &busy_id);
    let busy_status = format!("{} {}", busy_status["status"], busy_status["progress"]);
    server.delete("/jobs", &ann, &[("jobId", busy_id.as_str())]).ok();
    let heap = js(&browser, "performance.memory ? performance.memory.usedJSHeapSize : null");

    // Typing in a segment reached by scrolling far down.
    let far = segments - 5;
    show_segment(&browser, far, segments);
    browser.screenshot("window-far-down");
    let (first, second) = (word(far, 2), word(far, 4));
    let second_before = browser.text(&browser.find(&second));
    let keys = retype_timed(&browser, &first, "faraway");
    assert_eq!(browser.text(&browser.find(&first)), "faraway");
    browser.click(&second);
    browser.type_into(&second, &format!("{CTRL}a{NO_MODIFIERS}undone"));
    assert_eq!(browser.text(&browser.find(&second)), "undone");

    // Scrolled away to the top with the cursor in that word: its segment stays in the DOM (alone,
    // between spacers), the word keeps the focus and typing goes on into it.
    let focused = |browser: &Browser| {
        js(browser, "[document.activeElement.dataset.s ?? null, document.activeElement.dataset.w ?? null]")
    };
    let shown = |browser: &Browser, css: &str| {
        js(browser, &format!("!!document.querySelector('{}')", css.replace('\'', "\\'")))
    };
    browser.script("window.scrollTo(0, 0);", vec![]);
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(shown(&browser, "#transcript section[data-seg=\"0\"]"), json!(true), "the top is rendered");
    assert_eq!(focused(&browser), json!([far.to_string(), "4"]), "the word keeps the focus");
    let with_island = transcript_nodes(&browser);
    assert!(with_island < WORDS as u64 / 4, "the top and the focused segment only: {with_island} elements");
    browser.press("s");
    assert_eq!(browser.text(&browser.find(&second)), "undones", "typing went on into the word");

    // The cursor at the top, the far segment leaves the DOM; undo still reaches it.
    browser.script("window.scrollTo(0, 0);", vec![]);
    std::thread::sleep(Duration::from_millis(400));
    browser.click(&word(0, 0));
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(shown(&browser, &first), json!(false), "the edited segment left the DOM with the focus");
    browser.press(&format!("{CTRL}z"));
    browser.wait_for_text("#editor-status", "Undone", Duration::from_secs(10));
    show_segment(&browser, far, segments);
    assert_eq!(browser.text(&browser.find(&second)), second_before, "the undo reached the segment off screen");
    assert_eq!(browser.text(&browser.find(&first)), "faraway");

    // Keyboard: Ctrl+Home to the first word, Ctrl+End to the last, both rendered and focused.
    browser.click(&second);
    browser.press(&format!("{CTRL}{HOME}"));
    assert_eq!(focused(&browser), json!(["0", "0"]));
    let last_words = long_doc["segments"][last]["words"].as_array().unwrap().len();
    browser.press(&format!("{CTRL}{END}"));
    assert_eq!(focused(&browser), json!([last.to_string(), (last_words - 1).to_string()]));
    assert_eq!(
        js(&browser, "document.querySelectorAll('#transcript .w[tabindex=\"0\"]').length"),
        json!(1),
        "one tab stop"
    );
    browser.press(UP);
    assert_eq!(focused(&browser), json!([(last - 1).to_string(), "0"]));
    browser.press(&format!("{CTRL}{HOME}"));
    assert_eq!(focused(&browser), json!(["0", "0"]));
    browser.press(DOWN);
    assert_eq!(focused(&browser), json!(["1", "0"]));

    // Find from the top: "next" goes to the match in a segment not rendered and shows it.
    browser.press(&format!("{CTRL}h"));
    browser.type_into("#find-text", "faraway");
    browser.click("#find-next");
    let found = js(
        &browser,
        "(() => { const f = document.querySelector('#transcript .w.found'); if (!f) return null; const r = f.getBoundingClientRect(); return [f.textContent, f.dataset.s, f.dataset.w, r.top >= 0 && r.bottom <= innerHeight]; })()",
    );
    assert_eq!(found, json!(["faraway", far.to_string(), "2", true]), "the match is rendered, marked and on screen");
    browser.screenshot("window-find-far");
    // Scrolled away and back, the match is still marked (its segment is drawn anew).
    browser.script("window.scrollTo(0, 0);", vec![]);
    std::thread::sleep(Duration::from_millis(400));
    show_segment(&browser, far, segments);
    assert_eq!(
        js(&browser, "[...document.querySelectorAll('#transcript .w.found')].map((f) => f.textContent)"),
        json!(["faraway"])
    );

    // Saved: the far edit is in the document the server keeps, the undone one is not.
    browser.press(&format!("{CTRL}s"));
    browser.wait_for_text("#editor-notice", "Saved revision", Duration::from_secs(30));
    let saved = server.get("/jobs/document", &ann, &[("jobId", long_job.as_str())]).ok()["document"].clone();
    let saved_segments = saved["segments"].as_array().unwrap();
    assert_eq!(saved_segments.len(), segments);
    let words_of = |s: usize| {
        saved_segments[s]["words"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["text"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(words_of(far)[2], "faraway");
    assert_eq!(words_of(far)[4], second_before);
    let total: usize = saved_segments.iter().map(|s| s["words"].as_array().unwrap().len()).sum();
    assert_eq!(total, long_words);
    let expected_far = long_doc["segments"][far]["words"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["text"].as_str().unwrap().to_owned())
        .collect::<Vec<_>>();
    assert_eq!(
        words_of(far).iter().enumerate().filter(|(i, w)| **w != expected_far[*i]).count(),
        1,
        "one word changed"
    );

    println!("{WORDS} words: first paint {}; {long_words} words: first paint {}", ms(&short_paint), ms(&long_paint));
    println!(
        "Scrolling through {long_words} words: p95 frame {:.1} ms, worst {:.1} ms, {} frames",
        scroll["p95"].as_f64().unwrap_or(f64::NAN),
        scroll["worst"].as_f64().unwrap_or(f64::NAN),
        scroll["frames"],
    );
    println!(
        "The same while the server prepares an hour of media (its status after: {preparing_status}): p95 frame {:.1} ms, worst {:.1} ms, {} frames",
        preparing_scroll["p95"].as_f64().unwrap_or(f64::NAN),
        preparing_scroll["worst"].as_f64().unwrap_or(f64::NAN),
        preparing_scroll["frames"],
    );
    println!(
        "The same while it transcribes 13 minutes of speech (its status after: {busy_status}): p95 frame {:.1} ms, worst {:.1} ms, {} frames",
        busy_scroll["p95"].as_f64().unwrap_or(f64::NAN),
        busy_scroll["worst"].as_f64().unwrap_or(f64::NAN),
        busy_scroll["frames"],
    );
    println!("Typing far down: worst key {:.0} ms ({keys:.0?} ms)", keys.iter().copied().fold(0.0, f64::max));
    println!("Scrolled to the top with the cursor far down: {with_island} elements");
    println!("JS heap after scrolling: {:.1} MB", heap.as_f64().unwrap_or(f64::NAN) / 1e6);
}

#[test]
fn a_long_translation_renders_only_the_cues_near_the_view_and_keeps_the_one_being_typed() {
    let server = TestServer::start();
    let ann = server.create_key("ann", Some(10_000_000));
    let tina = server.create_staff_key("tina", "transcriber", &[]);
    let tom = server.create_staff_key("tom", "translator", &["nl"]);
    let media_dir = tempfile::tempdir().unwrap();
    let media = sixty_minute_media(media_dir.path());
    let job = server.upload_ok(
        &ann,
        &media,
        &[
            ("jobType", "perfect"),
            ("transcriptionType", "translatedSubtitles"),
            ("targetLanguage", "nl"),
            ("numberOfSpeakers", "1"),
            ("language", "en"),
        ],
    );
    let job_id = job["jobId"].as_str().unwrap().to_owned();
    // The transcriber hands in the hour's 9,000 words (over HTTP).
    let transcribe = web_app::wait_for_task(&server, &tina, &job_id)["taskId"].as_str().unwrap().to_owned();
    server.post(&format!("/work/tasks/{transcribe}/claim"), &tina, &[]).ok();
    server.put_json(&format!("/work/tasks/{transcribe}/document"), &tina, &long_document(WORDS)).ok();
    server.post(&format!("/work/tasks/{transcribe}/submit"), &tina, &[]).ok();
    let translate = web_app::wait_for_task(&server, &tom, &job_id)["taskId"].as_str().unwrap().to_owned();
    let source = server.get(&format!("/work/tasks/{translate}"), &tom, &[]).ok();
    let cues = source["sourceCues"].as_array().unwrap().len();
    assert!(cues > 500, "a cue a sentence: {cues}");
    let last = cues - 1;
    let last_start = source["sourceCues"][last]["start"].as_f64().unwrap();

    let mut browser = Browser::start("editor-scale-translate");
    sign_in(&mut browser, &server, &tom, "Translation tasks");
    let opening = Instant::now();
    browser.click(".claim");
    browser.find("#transcript tr[data-cue=\"0\"] textarea.target");
    let opened = opening.elapsed();
    let rows = |browser: &Browser| {
        js(browser, "document.querySelectorAll('#transcript tr[data-cue]').length").as_u64().unwrap()
    };
    let first_rows = rows(&browser);
    assert!(first_rows > 0 && first_rows < cues as u64 / 5, "only the cues near the view are rendered: {first_rows}");
    let top = transcript_nodes(&browser);
    let (middle, end) = nodes_in_middle_and_at_end(&browser);
    let shown = |browser: &Browser, css: &str| js(browser, &format!("!!document.querySelector('{css}')"));
    assert_eq!(
        shown(&browser, &format!("#transcript tr[data-cue=\"{last}\"]")),
        json!(true),
        "the last cue at the end"
    );
    browser.screenshot("translate-window-end");
    println!(
        "A translation of {cues} cues: the editor opened in {} ms (WebDriver's round trips included); {first_rows} rows and {top} elements at the top, {middle} in the middle, {end} at the end",
        opened.as_millis()
    );
    let (least, most) = ([top, middle, end].into_iter().min().unwrap(), [top, middle, end].into_iter().max().unwrap());
    assert!(most < cues as u64 * 2, "the table's DOM is far below ten elements a cue: {top}, {middle}, {end}");
    assert!(most - least <= most / 2, "the table's DOM does not grow as it scrolls: {top}, {middle}, {end}");

    // Typing in the last cue, then scrolled to the top: its row stays with the focus, typing goes
    // on into it.
    let target = format!("#target-{last}");
    let value = |browser: &Browser, css: &str| js(browser, &format!("document.querySelector('{css}').value"));
    browser.click(&target);
    browser.type_into(&target, "Tot ziens");
    browser.script("window.scrollTo(0, 0);", vec![]);
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(shown(&browser, "#transcript tr[data-cue=\"0\"]"), json!(true), "the top is rendered");
    assert_eq!(js(&browser, "document.activeElement.id"), json!(format!("target-{last}")), "the field keeps the focus");
    let with_island = rows(&browser);
    assert!(with_island < cues as u64 / 5, "the top and the focused cue only: {with_island} rows");
    browser.press(".");
    assert_eq!(value(&browser, &target), json!("Tot ziens."), "typing went on into the field");

    // The cursor at the top: the last row leaves; find brings it back, marked and on screen.
    browser.script("window.scrollTo(0, 0);", vec![]);
    std::thread::sleep(Duration::from_millis(400));
    browser.click("#target-0");
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(shown(&browser, &target), json!(false), "the row left the DOM with the focus");
    browser.press(&format!("{CTRL}h"));
    browser.type_into("#find-text", "ziens");
    browser.click("#find-next");
    let found = js(
        &browser,
        "(() => { const f = document.querySelector('#transcript textarea.found'); if (!f) return null; const r = f.getBoundingClientRect(); return [f.id, f.value, r.top >= 0 && r.bottom <= innerHeight + 1]; })()",
    );
    assert_eq!(
        found,
        json!([format!("target-{last}"), "Tot ziens.", true]),
        "the match is rendered, marked and on screen"
    );
    browser.screenshot("translate-window-find");
    assert_eq!(browser.axe(), Vec::<Value>::new(), "axe-core on the long translation, find open");

    // Saved: the translation of the last cue is in the task's document, at that cue's time.
    browser.press(&format!("{CTRL}s"));
    browser.wait_for_text("#editor-notice", "Saved revision", Duration::from_secs(30));
    let saved = server.get(&format!("/work/tasks/{translate}"), &tom, &[]).ok()["document"].clone();
    let words: Vec<(f64, String)> = saved["segments"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["words"].as_array().unwrap().iter())
        .map(|w| (w["start"].as_f64().unwrap(), w["text"].as_str().unwrap().to_owned()))
        .collect();
    let texts: Vec<&str> = words.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(texts, ["Tot", "ziens."], "only the typed translation: {words:?}");
    assert!(words[0].0 >= last_start - 0.01, "at the last cue ({last_start} s): {words:?}");
}
