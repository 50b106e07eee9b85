//! The editor's tools in a real headless Chromium against a real server, used as a person
//! would (keys, clicks, mouse drags) and checked through the API and the exports: the clock
//! (rounding, hours), playback speed, the forward jump, waveform zoom and the picture of a video
//! job, the timeline whose cue edges are dragged to fix timing (with reading speeds against the
//! exports' rules), undo and redo of every kind of edit, find and replace with the glossary's
//! terms (a phrase across words and across two segments, its replacement spread over the matched
//! words' time with each segment keeping its share), and words that stay plain text whatever is
//! pasted or pressed; the compact fixed bar (at most 150 px at 1280 x 800, one row of named icon
//! buttons, find over the text, the rules as a count with Next problem, Join on hover or focus),
//! Ctrl+wheel zoom, the overview strip as a slider played from the keyboard, rewind on pause,
//! playback paused while typing, and changed shortcuts (a refused key, a pedal's F8, the defaults).
//! Screenshots land in `tests/screenshots/<test>/`.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use scribe_tests::web_app::{sign_in, translation_for_translator};
use scribe_tests::{ASR_TIMEOUT, Browser, TestServer, clips, paths};
use serde_json::{Value, json};

const CTRL: &str = "\u{E009}";
const SHIFT: &str = "\u{E008}";
const ALT: &str = "\u{E00A}";
const ENTER: &str = "\u{E007}";
const HOME: &str = "\u{E011}";
const END: &str = "\u{E010}";
const LEFT: &str = "\u{E012}";
const RIGHT: &str = "\u{E014}";
const NO_MODIFIERS: &str = "\u{E000}";
const SHORT_WAIT: Duration = Duration::from_secs(10);

/// Uploads `file` as `key`, waits for DONE and opens the job's editor with its waveform ready.
fn open_editor(browser: &mut Browser, server: &TestServer, key: &str, file: &Path, query: &[(&str, &str)]) -> String {
    let job = server.upload_ok(key, file, query);
    let job_id = job["jobId"].as_str().unwrap().to_owned();
    server.wait_for_status(key, &job_id, &["DONE"], ASR_TIMEOUT);
    sign_in(browser, server, key, "Your jobs");
    browser.goto(&server.url(&format!("/#/edit/{job_id}")));
    browser.find("#transcript .w");
    browser.wait_for_attr("#waveform", "data-ready", "true", Duration::from_secs(60));
    job_id
}

/// The CSS selector of the `nth` word (0-based) of the editor whose letters are `word`.
fn word_selector(browser: &Browser, word: &str, nth: usize) -> String {
    let found = browser.script(
        "const [want, nth] = arguments; const w = [...document.querySelectorAll('.w')].filter(e => e.textContent.replace(/[^a-z]/gi, '').toLowerCase() === want)[nth]; return w ? [w.dataset.s, w.dataset.w] : null;",
        vec![json!(word), json!(nth)],
    );
    let pair = found.as_array().unwrap_or_else(|| panic!("no word {word:?} in the editor: {}", browser.page_text()));
    format!(".w[data-s=\"{}\"][data-w=\"{}\"]", pair[0].as_str().unwrap(), pair[1].as_str().unwrap())
}

fn js(browser: &Browser, expr: &str) -> Value {
    browser.script(&format!("return {expr};"), vec![])
}

/// The editor's playback clock (`mm:ss.s`) in seconds.
fn time(browser: &Browser) -> f64 {
    let clock = js(browser, "document.querySelector('#time').textContent");
    let (m, s) = clock.as_str().unwrap().split_once(':').unwrap();
    m.parse::<f64>().unwrap() * 60.0 + s.parse::<f64>().unwrap()
}

fn segments(browser: &Browser) -> u64 {
    js(browser, "document.querySelectorAll('#transcript section.segment').length").as_u64().unwrap()
}

fn export(server: &TestServer, key: &str, format: &str, job_id: &str) -> String {
    let reply = server.get(&format!("/jobs/export-{format}"), key, &[("jobId", job_id)]);
    assert_eq!(reply.status, 200, "export-{format}: {}", reply.text);
    reply.text
}

/// The start of the first cue of an SRT or VTT file, in seconds.
fn first_cue_start(subtitles: &str) -> f64 {
    let line = subtitles.lines().find(|l| l.contains("-->")).unwrap_or_else(|| panic!("no cue in {subtitles}"));
    let stamp = line.split("-->").next().unwrap().trim().replace(',', ".");
    let parts: Vec<f64> = stamp.split(':').map(|p| p.parse().unwrap()).collect();
    parts.iter().fold(0.0, |acc, p| acc * 60.0 + p)
}

/// Where to press on an edge of the timeline region `unit` (`left` or `right`), in viewport
/// pixels, checked to be that very handle (not a neighbour's), and how many pixels a second is.
fn edge(browser: &Browser, unit: &str, side: &str) -> (f64, f64, f64) {
    let found = browser.script(
        "const [unit, side] = arguments;
         const root = document.querySelector('#waveform').firstElementChild.shadowRoot;
         const handle = root.querySelector(`[part~=\"${unit}\"] [part~=\"region-handle-${side}\"]`);
         if (!handle) return null;
         const r = handle.getBoundingClientRect();
         const x = side === 'left' ? r.left + 2 : r.right - 2;
         const y = r.top + r.height * 0.75;
         const hit = root.elementFromPoint(x, y);
         const wrapper = root.querySelector('.wrapper');
         const video = document.querySelector('#media-video');
         return [x, y, hit === handle, wrapper.getBoundingClientRect().width / video.duration];",
        vec![json!(unit), json!(side)],
    );
    let v = found.as_array().unwrap_or_else(|| panic!("no {side} edge of {unit} on the waveform"));
    assert_eq!(v[2], json!(true), "the {side} edge of {unit} is covered by something else");
    (v[0].as_f64().unwrap(), v[1].as_f64().unwrap(), v[3].as_f64().unwrap())
}

/// The label of timeline region `unit` (its reading speed) and its title (the rules it breaks).
fn unit_label(browser: &Browser, unit: &str) -> (String, String) {
    let v = browser.script(
        "const root = document.querySelector('#waveform').firstElementChild.shadowRoot;
         const c = root.querySelector(`[part~=\"${arguments[0]}\"] [part~=\"region-content\"]`);
         return c ? [c.textContent, c.title] : null;",
        vec![json!(unit)],
    );
    let v = v.as_array().unwrap_or_else(|| panic!("no label on {unit}"));
    (v[0].as_str().unwrap().to_owned(), v[1].as_str().unwrap().to_owned())
}

/// Every word start of segment `s` as the editor shows it.
fn word_starts(browser: &Browser, s: u32) -> Vec<f64> {
    let v = browser.script(
        "return [...document.querySelectorAll(`.w[data-s=\"${arguments[0]}\"]`)].map(w => Number(w.dataset.start));",
        vec![json!(s)],
    );
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
}

fn text(browser: &Browser, css: &str) -> String {
    js(browser, &format!("document.querySelector('{css}').textContent")).as_str().unwrap().to_owned()
}

fn undo(browser: &Browser) {
    browser.press(&format!("{CTRL}z"));
}

fn redo_shift(browser: &Browser) {
    browser.press(&format!("{CTRL}{SHIFT}z"));
}

fn redo_y(browser: &Browser) {
    browser.press(&format!("{CTRL}y"));
}

/// The waveform's drawn width in CSS pixels (grows with the zoom).
fn width(browser: &Browser) -> f64 {
    js(browser, "document.querySelector('#waveform').firstElementChild.shadowRoot.querySelector('.wrapper').getBoundingClientRect().width")
        .as_f64()
        .unwrap()
}

/// Waits until the first word of segment 1 starts at `expected` seconds.
fn wait_for_start(browser: &Browser, expected: f64) {
    let deadline = std::time::Instant::now() + SHORT_WAIT;
    while (word_starts(browser, 0)[0] - expected).abs() > 0.002 {
        assert!(
            std::time::Instant::now() < deadline,
            "segment 1 starts at {}, not {expected}",
            word_starts(browser, 0)[0]
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_clock_rounds_once_to_tenths_and_shows_hours_for_long_media() {
    let server = TestServer::start();
    let mut browser = Browser::start("editor-clock");
    browser.goto(&server.url("/"));
    browser.find("#key");
    // (seconds, media of an hour or more, expected)
    let cases = [
        (0.0, false, "00:00.0"),
        (59.96, false, "01:00.0"),
        (119.95, false, "02:00.0"),
        (61.25, false, "01:01.3"),
        (3599.96, false, "1:00:00.0"),
        (59.96, true, "0:01:00.0"),
        (3725.25, true, "1:02:05.3"),
        (36_000.0, true, "10:00:00.0"),
    ];
    for (seconds, hours, expected) in cases {
        let shown = browser
            .script("return ScribeEditor.clock(arguments[0], arguments[1]);", vec![json!(seconds), json!(hours)]);
        assert_eq!(shown, json!(expected), "clock({seconds}, hours: {hours})");
    }
    browser.screenshot("page-with-the-clock");
}

#[test]
fn a_video_job_shows_its_picture_plays_from_half_to_double_speed_jumps_forward_and_zooms() {
    let server = TestServer::start();
    let ann = server.create_key("ann", Some(100_000));
    // An mp4 of the JFK clip with a test picture, made by ffmpeg.
    let dir = tempfile::tempdir().unwrap();
    let mp4 = dir.path().join("jfk-video.mp4");
    let jfk = paths::corpus_file(clips::JFK);
    let status = Command::new("ffmpeg")
        .args([
            "-hide_banner",
            "-loglevel",
            "error",
            "-f",
            "lavfi",
            "-i",
            "testsrc=size=320x240:rate=25:duration=11",
            "-i",
        ])
        .arg(&jfk)
        .args([
            "-shortest",
            "-c:v",
            "libx264",
            "-pix_fmt",
            "yuv420p",
            "-c:a",
            "aac",
            "-b:a",
            "96k",
            "-movflags",
            "+faststart",
        ])
        .arg(&mp4)
        .status()
        .expect("ffmpeg runs (installed by ops/setup.sh)");
    assert!(status.success(), "ffmpeg made no mp4");
    let mut browser = Browser::start("editor-video-speed-zoom");
    open_editor(&mut browser, &server, &ann, &mp4, &[("numberOfSpeakers", "1")]);

    // The picture shows (a <video> is wavesurfer's media).
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while js(&browser, "(v => !!v && !v.hidden && v.videoWidth)(document.querySelector('#media-video'))") != json!(320)
    {
        assert!(std::time::Instant::now() < deadline, "the video does not show: {}", browser.page_text());
        std::thread::sleep(Duration::from_millis(200));
    }
    let height =
        js(&browser, "document.querySelector('#media-video').getBoundingClientRect().height").as_f64().unwrap();
    assert!(height > 50.0, "the video is {height}px high");
    browser.screenshot("video-job");

    // Speed: Ctrl+. faster, Ctrl+, slower, or the list; the shortcut help lists the keys.
    let first = ".w[data-s=\"0\"][data-w=\"0\"]";
    browser.click(first);
    let rate = || js(&browser, "document.querySelector('#media-video').playbackRate").as_f64().unwrap();
    browser.press(&format!("{CTRL}."));
    browser.press(&format!("{CTRL}."));
    assert_eq!((rate(), js(&browser, "document.querySelector('#speed').value")), (1.5, json!("1.5")));
    browser.press(&format!("{CTRL},"));
    assert_eq!(rate(), 1.25);
    for _ in 0..6 {
        browser.press(&format!("{CTRL}."));
    }
    assert_eq!(rate(), 2.0, "2× is the fastest");
    browser.select("#speed", "0.5");
    assert_eq!(rate(), 0.5);
    browser.wait_for_text("#editor-status", "Playback speed 0.5×", SHORT_WAIT);
    let help = browser.text(&browser.find("#shortcuts"));
    for want in
        ["Ctrl+B", "Ctrl+F", "forward 5 seconds", "Ctrl+,", "slower", "Ctrl+.", "faster", "Ctrl+Z", "Ctrl+H", "Alt+="]
    {
        assert!(help.contains(want), "the shortcut help lacks {want:?}: {help}");
    }
    // Playing at half speed works (the clock moves on).
    browser.click("#play");
    browser.wait_for_text("#play", "Pause", SHORT_WAIT);
    std::thread::sleep(Duration::from_millis(1500));
    browser.click("#play");
    assert_eq!(rate(), 0.5, "playing keeps the speed");
    println!("after 1.5 s of playing at 0.5×, the clock says {} s", time(&browser));
    browser.screenshot("half-speed");

    // Forward 5 s: Ctrl+F and the button; Ctrl+B back.
    browser.click(first);
    assert!(time(&browser) < 0.11, "{}", time(&browser));
    browser.press(&format!("{CTRL}f"));
    assert!((time(&browser) - 5.0).abs() < 0.11, "Ctrl+F from 0 goes to {}", time(&browser));
    browser.click("#fwd5");
    assert!((time(&browser) - 10.0).abs() < 0.11, "Forward 5 s from 5 goes to {}", time(&browser));
    browser.press(&format!("{CTRL}b"));
    assert!((time(&browser) - 5.0).abs() < 0.11, "Ctrl+B from 10 goes to {}", time(&browser));

    // Zoom: Alt+= and the button double the waveform's width; Zoom out comes back to the whole.
    let whole = width(&browser);
    browser.press(&format!("{ALT}="));
    browser.wait_for_text("#editor-status", "Waveform zoom", SHORT_WAIT);
    let once = width(&browser);
    assert!(once > whole * 1.8, "Alt+= zooms in: {whole} → {once}");
    browser.click("#zoom-in");
    let twice = width(&browser);
    // Doubled, or at the closest zoom, 200 pixels per second.
    let closest = js(&browser, "document.querySelector('#waveform').dataset.zoom") == json!("200");
    assert!(twice > once * 1.8 || (closest && twice > once), "Zoom in again: {once} → {twice}");
    browser.screenshot("zoomed-in");
    browser.press(&format!("{ALT}-"));
    browser.click("#zoom-out");
    assert!((width(&browser) - whole).abs() < 2.0, "zoomed out to the whole media: {whole} vs {}", width(&browser));
    assert_eq!(js(&browser, "document.querySelector('#zoom-out').disabled"), json!(true));

    // On a phone the tools wrap and the video fits.
    browser.set_window_size(390, 844);
    browser.screenshot("phone");
    let overflow = js(&browser, "document.documentElement.scrollWidth - document.documentElement.clientWidth");
    assert!(overflow.as_i64().unwrap() <= 0, "the editor scrolls sideways on a phone by {overflow}px");
}

#[test]
fn dragging_a_segment_edge_retimes_its_words_marks_reading_speed_and_reaches_srt_and_vtt() {
    let server = TestServer::start();
    let ann = server.create_key("ann", Some(100_000));
    let mut browser = Browser::start("editor-timeline");
    let job_id =
        open_editor(&mut browser, &server, &ann, &paths::corpus_file(clips::JFK), &[("numberOfSpeakers", "1")]);
    let before = saved_document(&server, &ann, &job_id);
    let seg0: Vec<&Value> = before["segments"][0]["words"].as_array().unwrap().iter().collect();
    let old_start = seg0[0]["start"].as_f64().unwrap();
    let old_end = seg0.iter().map(|w| w["end"].as_f64().unwrap()).fold(0.0, f64::max);
    let next_start = before["segments"][1]["words"][0]["start"].as_f64();
    let srt_before = first_cue_start(&export(&server, &ann, "srt", &job_id));
    let rules = server.get("/capabilities", &ann, &[]).ok()["subtitleRules"].clone();
    assert_eq!(rules["maxCharsPerSecond"], 20.0, "the exports' reading speed: {rules}");
    browser.wait_for_text("#timeline-summary", "within the subtitle rules", SHORT_WAIT);
    let (label, _) = unit_label(&browser, "unit-0");
    assert!(label.ends_with("cps") && !label.contains('⚠'), "segment 1 reads comfortably: {label}");
    browser.screenshot("timeline");

    // Drag the start of segment 1 one second later with the mouse.
    let (x, y, px_per_s) = edge(&browser, "unit-0", "left");
    browser.drag((x, y), (x + px_per_s, y));
    browser.wait_for_text("#editor-status", "Segment 1 now", SHORT_WAIT);
    let starts = word_starts(&browser, 0);
    let new_start = starts[0];
    assert!((new_start - (old_start + 1.0)).abs() < 0.1, "the start moved from {old_start} by about 1 s: {new_start}");
    assert!(starts.windows(2).all(|p| p[0] <= p[1]), "the words keep their order: {starts:?}");
    browser.screenshot("start-dragged");

    // Squeeze the segment by dragging its end far left: it now reads too fast, and says so.
    let (x, y, _) = edge(&browser, "unit-0", "right");
    let squeeze = (old_end - new_start) * 0.75;
    browser.drag((x, y), (x - squeeze * px_per_s, y));
    browser.wait_for_text("#timeline-summary", "breaks the subtitle rules", SHORT_WAIT);
    let (label, title) = unit_label(&browser, "unit-0");
    assert!(label.starts_with('⚠'), "the squeezed segment is marked: {label}");
    assert!(title.contains("characters per second (at most 20)"), "the rule is the exports' 20 cps: {title}");
    browser.screenshot("too-fast");

    // Undo the squeeze (Ctrl+Z), redo it (Ctrl+Shift+Z), undo again.
    browser.press(&format!("{CTRL}z"));
    browser.wait_for_text("#editor-status", "Undone: Segment 1 now", SHORT_WAIT);
    browser.wait_for_text("#timeline-summary", "within the subtitle rules", SHORT_WAIT);
    browser.press(&format!("{CTRL}{SHIFT}z"));
    browser.wait_for_text("#editor-status", "Redone: Segment 1 now", SHORT_WAIT);
    browser.wait_for_text("#timeline-summary", "breaks the subtitle rules", SHORT_WAIT);
    browser.click("#undo");
    browser.wait_for_text("#timeline-summary", "within the subtitle rules", SHORT_WAIT);
    assert_eq!(word_starts(&browser, 0)[0], new_start);

    // From the keyboard: Alt+] starts the segment of the cursor 0.1 s later, Alt+[ earlier.
    browser.click(".w[data-s=\"0\"][data-w=\"0\"]");
    browser.press(&format!("{ALT}]"));
    wait_for_start(&browser, new_start + 0.1);
    browser.click(".w[data-s=\"0\"][data-w=\"0\"]");
    browser.press(&format!("{ALT}["));
    wait_for_start(&browser, new_start);

    // Save; the document and both subtitle exports have the new times.
    browser.click(".w[data-s=\"0\"][data-w=\"0\"]");
    browser.press(&format!("{CTRL}s"));
    browser.wait_for_text("#editor-notice", "Saved revision 1", Duration::from_secs(15));
    let after = saved_document(&server, &ann, &job_id);
    let words = after["segments"][0]["words"].as_array().unwrap();
    let texts = |d: &Value| -> Vec<String> {
        d["segments"][0]["words"].as_array().unwrap().iter().map(|w| w["text"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(texts(&after), texts(&before), "the same words, in the same order");
    assert!((words[0]["start"].as_f64().unwrap() - new_start).abs() < 0.002, "{}", words[0]);
    let last_end = words.iter().map(|w| w["end"].as_f64().unwrap()).fold(0.0, f64::max);
    assert!((last_end - old_end).abs() < 0.002, "the end stayed at {old_end}: {last_end}");
    if let Some(next) = next_start {
        assert!(last_end <= next + 1e-3 || old_end > next, "no overlap with segment 2 at {next}: {last_end}");
    }
    let srt = export(&server, &ann, "srt", &job_id);
    let vtt = export(&server, &ann, "vtt", &job_id);
    println!("first SRT cue: {srt_before:.3} s before the drag, {:.3} s after", first_cue_start(&srt));
    assert!((first_cue_start(&srt) - new_start).abs() < 0.002, "SRT starts at the dragged time {new_start}:\n{srt}");
    assert!((first_cue_start(&vtt) - new_start).abs() < 0.002, "VTT starts at the dragged time {new_start}:\n{vtt}");
    assert!(first_cue_start(&srt) - srt_before > 0.8, "the export moved: {srt_before} → {}", first_cue_start(&srt));
}

#[test]
fn every_kind_of_edit_is_undone_and_redone_and_the_saved_document_is_what_remains() {
    let server = TestServer::start();
    let ann = server.create_key("ann", Some(100_000));
    let mut browser = Browser::start("editor-undo");
    let job_id =
        open_editor(&mut browser, &server, &ann, &paths::corpus_file(clips::JFK), &[("numberOfSpeakers", "1")]);
    let n = segments(&browser);
    assert_eq!(js(&browser, "document.querySelector('#undo').disabled"), json!(true), "nothing to undo yet");

    // A word's text: one step for the whole word typed.
    let fellow = word_selector(&browser, "fellow", 0);
    browser.click(&fellow);
    browser.type_into(&fellow, &format!("{CTRL}a{NO_MODIFIERS}dear"));
    assert_eq!(text(&browser, &fellow), "dear");
    undo(&browser);
    browser.wait_for_text("#editor-status", "Undone: typing", SHORT_WAIT);
    assert!(text(&browser, &fellow).contains("fellow"), "{}", text(&browser, &fellow));
    redo_shift(&browser);
    assert_eq!(text(&browser, &fellow), "dear");
    browser.screenshot("word-redone");

    // Split, undone with the button and redone with Ctrl+Y.
    let ask = word_selector(&browser, "ask", 0);
    browser.click(&ask);
    browser.press(&format!("{CTRL}{ENTER}"));
    assert_eq!(segments(&browser), n + 1);
    browser.click("#undo");
    browser.wait_for_text("#editor-status", "Undone: splitting segment", SHORT_WAIT);
    assert_eq!(segments(&browser), n);
    redo_y(&browser);
    assert_eq!(segments(&browser), n + 1);

    // Join the split segment back: undone, redone.
    let last = segments(&browser) - 1;
    let joined = word_selector(&browser, "ask", 0);
    let seg_of_ask: u64 =
        js(&browser, &format!("document.querySelector('{joined}').dataset.s")).as_str().unwrap().parse().unwrap();
    browser.click(&format!(".join[data-seg=\"{seg_of_ask}\"]"));
    assert_eq!(segments(&browser), n);
    undo(&browser);
    browser.wait_for_text("#editor-status", "Undone: joining", SHORT_WAIT);
    assert_eq!(segments(&browser), n + 1);
    browser.click("#redo");
    assert_eq!(segments(&browser), n);
    let _ = last;

    // Rename the speaker: undone to the old name, redone.
    let old_name = js(&browser, "document.querySelector('#speaker-0').value").as_str().unwrap().to_owned();
    let speaker = browser.find("#speaker-0");
    browser.clear(&speaker);
    browser.send_keys(&speaker, "John F. Kennedy");
    undo(&browser);
    assert_eq!(js(&browser, "document.querySelector('#speaker-0').value"), json!(old_name));
    redo_shift(&browser);
    assert_eq!(js(&browser, "document.querySelector('#speaker-0').value"), json!("John F. Kennedy"));

    // A new speaker for segment 1: the change is undone and redone.
    browser.click("#add-speaker");
    let narrator = js(&browser, "document.querySelector('#speaker-1').dataset.spkid").as_str().unwrap().to_owned();
    let original = js(&browser, "document.querySelector('#seg-speaker-0').value").as_str().unwrap().to_owned();
    browser.select("#seg-speaker-0", &narrator);
    undo(&browser);
    assert_eq!(js(&browser, "document.querySelector('#seg-speaker-0').value"), json!(original));
    redo_y(&browser);
    assert_eq!(js(&browser, "document.querySelector('#seg-speaker-0').value"), json!(narrator));

    // A highlight: undone, redone.
    let country = word_selector(&browser, "country", 0);
    browser.click(&country);
    browser.press(&format!("{CTRL}m"));
    browser.wait_for_text("#editor-status", "Highlighted", SHORT_WAIT);
    let highlighted = browser.find_all("#transcript .w.hl").len();
    assert!(highlighted > 0);
    undo(&browser);
    browser.wait_for_text("#editor-status", "Undone: Highlighted", SHORT_WAIT);
    assert_eq!(browser.find_all("#transcript .w.hl").len(), 0);
    redo_shift(&browser);
    assert_eq!(browser.find_all("#transcript .w.hl").len(), highlighted);
    browser.screenshot("highlight-redone");

    // A new edit after an undo drops what could be redone.
    let not = word_selector(&browser, "not", 0);
    browser.click(&not);
    browser.type_into(&not, &format!("{CTRL}a{NO_MODIFIERS}never"));
    undo(&browser);
    assert_eq!(js(&browser, "document.querySelector('#redo').disabled"), json!(false));
    let americans = word_selector(&browser, "americans", 0);
    browser.click(&americans);
    browser.type_into(&americans, &format!("{CTRL}a{NO_MODIFIERS}Americans!"));
    assert_eq!(js(&browser, "document.querySelector('#redo').disabled"), json!(true), "the typing dropped the redo");

    // Save what remains: every redone edit, not the undone "never".
    browser.press(&format!("{CTRL}s"));
    browser.wait_for_text("#editor-notice", "Saved revision 1", Duration::from_secs(15));
    browser.screenshot("saved");
    let json: Value = serde_json::from_str(&export(&server, &ann, "json", &job_id)).unwrap();
    let words: Vec<&str> = json["segments"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["words"].as_array().unwrap().iter().map(|w| w["text"].as_str().unwrap()))
        .collect();
    let all = words.join(" ");
    assert!(all.contains("dear") && !all.contains("fellow"), "{all}");
    assert!(all.contains("Americans!") && all.contains("not") && !all.contains("never"), "{all}");
    assert_eq!(json["segments"].as_array().unwrap().len() as u64, n, "split then joined: {json}");
    let names: Vec<&str> = json["speakers"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names[0], "John F. Kennedy", "{json}");
    assert_eq!(json["segments"][0]["speaker"], narrator.as_str());
    assert_eq!(json["highlights"].as_array().unwrap().len(), 1, "{json}");
}

#[test]
fn find_and_replace_all_with_a_glossary_term_reaches_the_export_and_words_stay_plain_text() {
    let server = TestServer::start();
    let ann = server.create_key("ann", Some(100_000));
    let glossary = server.create_glossary(
        &ann,
        &json!({"name": "Speeches", "names": ["Kennedy"], "items": [{"name": "nation", "description": "not country"}]}),
    );
    let glossary_id = glossary["id"].as_str().unwrap().to_owned();
    let mut browser = Browser::start("editor-find-replace");
    let job_id = open_editor(
        &mut browser,
        &server,
        &ann,
        &paths::corpus_file(clips::JFK),
        &[("numberOfSpeakers", "1"), ("glossaryId", &glossary_id)],
    );

    // Ctrl+H opens the panel with the glossary's terms as suggestions.
    browser.click(".w[data-s=\"0\"][data-w=\"0\"]");
    browser.press(&format!("{CTRL}h"));
    browser.find("#find-panel:not([hidden])");
    assert_eq!(js(&browser, "document.activeElement.id"), json!("find-text"));
    let terms = js(&browser, "[...document.querySelectorAll('#glossary-terms option')].map(o => o.value)");
    assert_eq!(terms, json!(["Kennedy", "nation"]));
    assert_eq!(js(&browser, "document.querySelector('#replace-text').getAttribute('list')"), json!("glossary-terms"));

    // Find: two matches; Enter goes to the next, Shift+Enter back; case matters when asked.
    browser.send_keys(&browser.find("#find-text"), "Country");
    browser.wait_for_text("#find-status", "2 matches for “Country”", SHORT_WAIT);
    browser.press(ENTER);
    browser.wait_for_text("#find-status", "Match 1 of 2", SHORT_WAIT);
    assert_eq!(browser.find_all("#transcript .w.found").len(), 1);
    browser.press(ENTER);
    browser.wait_for_text("#find-status", "Match 2 of 2", SHORT_WAIT);
    browser.press(&format!("{SHIFT}{ENTER}"));
    browser.wait_for_text("#find-status", "Match 1 of 2", SHORT_WAIT);
    browser.click("#find-case");
    browser.wait_for_text("#find-status", "No matches for “Country”", SHORT_WAIT);
    browser.click("#find-case");
    browser.wait_for_text("#find-status", "2 matches", SHORT_WAIT);
    browser.screenshot("find");

    // Replace one, undo it, then replace all with the glossary's term.
    browser.type_into("#replace-text", "nation");
    browser.click("#find-next");
    browser.click("#replace-one");
    browser.wait_for_text("#find-status", "Replaced “Country” with “nation”", SHORT_WAIT);
    assert_eq!(browser.find_all("#transcript .w").iter().filter(|w| browser.text(w).contains("nation")).count(), 1);
    browser.click("#undo");
    browser.wait_for_text("#editor-status", "Undone: Replaced", SHORT_WAIT);
    browser.click("#replace-all");
    browser.wait_for_text("#find-status", "Replaced 2 × “Country” with “nation”", SHORT_WAIT);
    browser.screenshot("replaced-all");
    let shown: String =
        browser.find_all("#transcript .w").iter().map(|w| browser.text(w)).collect::<Vec<_>>().join(" ");
    assert!(!shown.to_lowercase().contains("country") && shown.matches("nation").count() == 2, "{shown}");

    // Words stay plain text: HTML pasted into a word arrives as its text; Ctrl+B/I/U format nothing.
    browser.allow_clipboard();
    let not = word_selector(&browser, "not", 0);
    browser.click(&not);
    let written = browser.script(
        "return navigator.clipboard.write([new ClipboardItem({
           'text/html': new Blob(['<b style=\"color:red\">never</b>'], { type: 'text/html' }),
           'text/plain': new Blob(['never'], { type: 'text/plain' }) })]).then(() => true, e => String(e));",
        vec![],
    );
    assert_eq!(written, json!(true), "the clipboard takes HTML");
    browser.type_into(&not, &format!("{CTRL}a{NO_MODIFIERS}"));
    browser.press(&format!("{CTRL}v"));
    browser.wait_for_text(&not, "never", SHORT_WAIT);
    for key in ["i", "u", "b"] {
        browser.press(&format!("{CTRL}{key}"));
    }
    browser.type_into(&not, "!");
    let html = js(&browser, &format!("document.querySelector('{not}').innerHTML"));
    assert_eq!(html, json!("never!"), "the word holds plain text only");
    browser.screenshot("plain-word");

    // Save: the export has the glossary's spelling everywhere.
    browser.press(&format!("{CTRL}s"));
    browser.wait_for_text("#editor-notice", "Saved revision 1", Duration::from_secs(15));
    let txt = export(&server, &ann, "txt", &job_id);
    assert!(txt.matches("nation").count() == 2 && !txt.to_lowercase().contains("country"), "{txt}");
    assert!(txt.contains("never!"), "{txt}");
    let srt = export(&server, &ann, "srt", &job_id);
    assert!(srt.contains("nation") && !srt.contains('<'), "{srt}");
}

/// Every word of a saved document: (text, start, end), in order.
/// The job's document as the server keeps it (the last saved revision).
fn saved_document(server: &TestServer, key: &str, job_id: &str) -> Value {
    server.get("/jobs/document", key, &[("jobId", job_id)]).ok()["document"].clone()
}

fn saved_words(document: &Value) -> Vec<(String, f64, f64)> {
    document["segments"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["words"].as_array().unwrap().iter())
        .map(|w| (w["text"].as_str().unwrap().to_owned(), w["start"].as_f64().unwrap(), w["end"].as_f64().unwrap()))
        .collect()
}

/// A word's letters and digits, lower case (the punctuation attached to it dropped).
fn letters(text: &str) -> String {
    text.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect()
}

/// Where the words `phrase` (lower case, no punctuation) stand in a row among `words`.
fn phrase_at(words: &[(String, f64, f64)], phrase: &[&str]) -> Vec<usize> {
    (0..words.len().saturating_sub(phrase.len() - 1))
        .filter(|&i| phrase.iter().enumerate().all(|(j, p)| letters(&words[i + j].0) == *p))
        .collect()
}

#[test]
fn find_and_replace_match_a_phrase_across_words_and_spread_the_replacement_over_its_time() {
    let server = TestServer::start();
    let ann = server.create_key("ann", Some(100_000));
    let mut browser = Browser::start("editor-find-phrase");
    let job_id =
        open_editor(&mut browser, &server, &ann, &paths::corpus_file(clips::JFK), &[("numberOfSpeakers", "1")]);
    let document = |server: &TestServer| saved_document(server, &ann, &job_id);
    let original = saved_words(&document(&server));
    let country = phrase_at(&original, &["your", "country"]);
    let fellow = phrase_at(&original, &["fellow", "americans"]);
    assert_eq!((country.len(), fellow.len()), (2, 1), "the JFK transcript: {original:?}");

    // A two-word phrase, found across the words (any case, the comma after a word ignored).
    browser.click(".w[data-s=\"0\"][data-w=\"0\"]");
    browser.press(&format!("{CTRL}h"));
    browser.send_keys(&browser.find("#find-text"), "Your Country");
    browser.wait_for_text("#find-status", "2 matches for “Your Country”", SHORT_WAIT);
    browser.press(ENTER);
    browser.wait_for_text("#find-status", "Match 1 of 2", SHORT_WAIT);
    let found: Vec<String> =
        browser.find_all("#transcript .w.found").iter().map(|w| letters(&browser.text(w))).collect();
    assert_eq!(found, ["your", "country"], "both words of the match are marked");
    browser.screenshot("phrase-found");

    // Replace all: two words become three, over the same time span.
    browser.type_into("#replace-text", "the United States");
    browser.click("#replace-all");
    browser.wait_for_text("#find-status", "Replaced 2 × “Your Country” with “the United States”", SHORT_WAIT);
    // One match, two words become one (replace one).
    browser.clear(&browser.find("#find-text"));
    browser.send_keys(&browser.find("#find-text"), "fellow americans");
    browser.wait_for_text("#find-status", "1 match for “fellow americans”", SHORT_WAIT);
    browser.clear(&browser.find("#replace-text"));
    browser.type_into("#replace-text", "friends");
    browser.click("#find-next");
    browser.click("#replace-one");
    browser.wait_for_text("#find-status", "Replaced “fellow americans” with “friends”", SHORT_WAIT);
    browser.screenshot("phrase-replaced");
    browser.press(&format!("{CTRL}s"));
    browser.wait_for_text("#editor-notice", "Saved revision 1", Duration::from_secs(15));

    // Saved: the new words in place of the old, the first starting and the last ending where the
    // matched words did, the times in between spread evenly and in order.
    let saved = saved_words(&document(&server));
    assert_eq!(saved.len(), original.len() + 2 - 1, "{saved:?}");
    let states = phrase_at(&saved, &["the", "united", "states"]);
    assert_eq!(states.len(), 2, "{saved:?}");
    for (&new, &old) in states.iter().zip(&country) {
        let (first, last) = (&original[old], &original[old + 1]);
        let words = &saved[new..new + 3];
        assert!((words[0].1 - first.1).abs() < 0.0005, "the first keeps the start: {words:?}");
        assert!((words[2].2 - last.2).abs() < 0.0005, "the last keeps the end: {words:?}");
        let share = (last.2 - first.1) / 3.0;
        for (i, w) in words.iter().enumerate() {
            assert!((w.1 - (first.1 + share * i as f64)).abs() < 0.002, "spread evenly: {words:?}");
            assert!(w.1 <= w.2, "{words:?}");
        }
        // The punctuation after the matched words stays after the replacement.
        let trail: String = last.0.chars().rev().take_while(|c| !c.is_alphanumeric()).collect();
        assert!(words[2].0.ends_with(&trail.chars().rev().collect::<String>()), "{words:?} for {last:?}");
    }
    let friends = phrase_at(&saved, &["friends"]);
    assert_eq!(friends.len(), 1, "{saved:?}");
    let (f, old) = (&saved[friends[0]], fellow[0]);
    assert!(
        (f.1 - original[old].1).abs() < 0.0005 && (f.2 - original[old + 1].2).abs() < 0.0005,
        "one word over the two words' span: {f:?}"
    );
    assert!(
        phrase_at(&saved, &["your", "country"]).is_empty() && phrase_at(&saved, &["fellow", "americans"]).is_empty()
    );

    // Undone (each replacement is one step), the document is the original again, times and all.
    browser.click("#undo");
    browser.wait_for_text("#editor-status", "Undone: Replaced “fellow americans”", SHORT_WAIT);
    browser.click("#undo");
    browser.wait_for_text("#editor-status", "Undone: Replaced 2 × “Your Country”", SHORT_WAIT);
    browser.screenshot("phrase-undone");
    browser.press(&format!("{CTRL}s"));
    browser.wait_for_text("#editor-notice", "Saved revision 2", Duration::from_secs(15));
    assert_eq!(saved_words(&document(&server)), original, "undo brought back the words and their times");
}

/// Every segment of a saved document: (speaker, its words as `saved_words` gives them).
fn saved_segments(document: &Value) -> Vec<(String, Vec<(String, f64, f64)>)> {
    document["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["speaker"].as_str().unwrap().to_owned(), saved_words(&json!({"segments": [s]}))))
        .collect()
}

#[test]
fn find_and_replace_match_a_phrase_across_two_segments_and_each_segment_keeps_its_share() {
    let server = TestServer::start_float16(); // the JFK clip in two segments
    let ann = server.create_key("ann", Some(100_000));
    let mut browser = Browser::start("editor-find-across");
    let job_id =
        open_editor(&mut browser, &server, &ann, &paths::corpus_file(clips::JFK), &[("numberOfSpeakers", "1")]);
    let document = |server: &TestServer| saved_document(server, &ann, &job_id);
    let original = document(&server);
    let opened = saved_segments(&original);
    assert!(opened.len() >= 2, "the JFK transcript has two segments: {opened:?}");
    // The phrase: the last word of segment 1 and the first of segment 2, as a person types them.
    let (end_of_1, start_of_2) = (opened[0].1.last().unwrap().clone(), opened[1].1[0].clone());
    let (a, b) = (letters(&end_of_1.0), letters(&start_of_2.0));
    let phrase = format!("{a} {b}");
    let words = saved_words(&original);
    let all = phrase_at(&words, &[&a, &b]);
    let across = all
        .iter()
        .position(|&i| i == opened[0].1.len() - 1)
        .unwrap_or_else(|| panic!("{phrase:?} at the boundary in {words:?}"));

    browser.click(".w[data-s=\"0\"][data-w=\"0\"]");
    browser.press(&format!("{CTRL}h"));
    browser.send_keys(&browser.find("#find-text"), &phrase);
    let n = all.len();
    let count = if n == 1 { "1 match".to_owned() } else { format!("{n} matches") };
    browser.wait_for_text("#find-status", &format!("{count} for “{phrase}”"), SHORT_WAIT);
    for _ in 0..=across {
        browser.press(ENTER);
    }
    browser.wait_for_text("#find-status", &format!("Match {} of {n}", across + 1), SHORT_WAIT);
    // Both words are marked, one in each segment.
    let found = browser.script(
        "return [...document.querySelectorAll('#transcript .w.found')].map(w => [w.dataset.s, w.textContent]);",
        vec![],
    );
    assert_eq!(found, json!([["0", end_of_1.0.as_str()], ["1", start_of_2.0.as_str()]]), "the words marked");
    browser.screenshot("found-across");

    // Three words over two: the first segment takes two (its word's place and time), the second
    // one (its word's place and time); the punctuation after each matched word stays.
    browser.type_into("#replace-text", "Mary Anne Smith");
    browser.click("#replace-one");
    browser.wait_for_text("#find-status", &format!("Replaced “{phrase}” with “Mary Anne Smith”"), SHORT_WAIT);
    assert_eq!(segments(&browser), opened.len() as u64);
    browser.screenshot("replaced-across");
    browser.press(&format!("{CTRL}s"));
    browser.wait_for_text("#editor-notice", "Saved revision 1", Duration::from_secs(15));
    let saved = saved_segments(&document(&server));
    assert_eq!(saved.len(), opened.len(), "no segment added or lost: {saved:?}");
    for (i, (now, before)) in saved.iter().zip(&opened).enumerate() {
        assert_eq!(now.0, before.0, "segment {} keeps its speaker", i + 1);
    }
    let trail = |w: &str| {
        w.chars().rev().take_while(|c| !c.is_alphanumeric()).collect::<Vec<_>>().into_iter().rev().collect::<String>()
    };
    let (first, second) = (&saved[0].1, &saved[1].1);
    let kept = opened[0].1.len() - 1;
    assert_eq!(first[..kept], opened[0].1[..kept], "the words before the match stay");
    assert_eq!(first.len(), kept + 2, "{first:?}");
    let (mary, anne) = (&first[kept], &first[kept + 1]);
    assert_eq!((mary.0.as_str(), anne.0.clone()), ("Mary", format!("Anne{}", trail(&end_of_1.0))));
    assert!((mary.1 - end_of_1.1).abs() < 0.0005, "Mary starts where the matched word did: {mary:?} {end_of_1:?}");
    assert!((anne.2 - end_of_1.2).abs() < 0.0005, "Anne ends where it did: {anne:?} {end_of_1:?}");
    assert!(mary.1 <= mary.2 && mary.2 <= anne.1 && anne.1 <= anne.2, "{first:?}");
    assert_eq!(second.len(), opened[1].1.len(), "{second:?}");
    let smith = &second[0];
    assert_eq!(smith.0, format!("Smith{}", trail(&start_of_2.0)));
    assert!((smith.1 - start_of_2.1).abs() < 0.0005 && (smith.2 - start_of_2.2).abs() < 0.0005, "{smith:?}");
    assert_eq!(second[1..], opened[1].1[1..], "the words after the match stay");
    assert_eq!(saved[2..], opened[2..], "the other segments stay");

    // Undone, and saved: the document as it was, words, times and speakers.
    browser.click("#undo");
    browser.wait_for_text("#editor-status", &format!("Undone: Replaced “{phrase}”"), SHORT_WAIT);
    browser.wait_for_text("#find-status", &format!("{count} for “{phrase}”"), SHORT_WAIT);
    // The caption preview is the server's layout: asked again after the undo, it comes back.
    browser.wait_for_attr("#caption-preview", "data-preview", "ready", SHORT_WAIT);
    browser.screenshot("undone-across");
    browser.press(&format!("{CTRL}s"));
    browser.wait_for_text("#editor-notice", "Saved revision 2", Duration::from_secs(15));
    assert_eq!(saved_segments(&document(&server)), opened, "undo brought back both segments as they were");
}

#[test]
fn a_translator_drags_a_cue_edge_and_the_customers_srt_has_the_new_time() {
    let server = TestServer::start();
    let customer = server.key().to_owned();
    let tina = server.create_staff_key("tina", "transcriber", &[]);
    let tom = server.create_staff_key("tom", "translator", &["nl"]);
    let (job_id, translate) = translation_for_translator(&server, &customer, &tina, &tom);
    let source = server.get(&format!("/work/tasks/{}", translate["taskId"].as_str().unwrap()), &tom, &[]).ok();
    let old_start = source["sourceCues"][0]["start"].as_f64().unwrap();

    let mut browser = Browser::start("editor-translate-timeline");
    sign_in(&mut browser, &server, &tom, "Translation tasks");
    browser.click(".claim");
    browser.find("textarea.target");
    browser.wait_for_attr("#waveform", "data-ready", "true", Duration::from_secs(60));
    for t in browser.find_all("textarea.target") {
        browser.send_keys(&t, "Hoe is het weer in New York?");
    }
    browser.wait_for_text("#timeline-summary", "on the timeline", SHORT_WAIT);
    // The cue's reading speed follows the typed translation.
    let deadline = std::time::Instant::now() + SHORT_WAIT;
    while unit_label(&browser, "unit-0").0 == "0.0 cps" {
        assert!(std::time::Instant::now() < deadline, "the reading speed does not follow the typing");
        std::thread::sleep(Duration::from_millis(100));
    }
    let (label, _) = unit_label(&browser, "unit-0");
    assert!(label.ends_with("cps"), "{label}");

    // Drag the first cue's start half a second later.
    let (x, y, px_per_s) = edge(&browser, "unit-0", "left");
    browser.drag((x, y), (x + 0.5 * px_per_s, y));
    browser.wait_for_text("#editor-status", "Cue 1 now", SHORT_WAIT);
    browser.screenshot("cue-dragged");
    // A translator's timeline knows the exports' rules too, and marks what breaks them.
    browser.wait_for_text("#timeline-summary", "subtitle rules", SHORT_WAIT);
    let (label, title) = unit_label(&browser, "unit-0");
    println!("cue 1 after the drag: {label} ({title})");
    let cps: f64 = label.trim_start_matches("⚠ ").trim_end_matches(" cps").parse().unwrap();
    assert_eq!(label.starts_with('⚠'), cps > 20.0 || title.contains("on screen"), "{label}: {title}");
    let shown = browser.text(&browser.find("tr[data-cue=\"0\"] .cue-time"));
    browser.click("#save");
    browser.wait_for_text("#editor-notice", "Saved revision 1", Duration::from_secs(15));
    let saved = server.get(&format!("/work/tasks/{}", translate["taskId"].as_str().unwrap()), &tom, &[]).ok();
    let new_start = saved["document"]["segments"][0]["words"][0]["start"].as_f64().unwrap();
    assert!(
        (new_start - (old_start + 0.5)).abs() < 0.1,
        "the cue starts about 0.5 s after {old_start}: {new_start} ({shown})"
    );

    // A reload keeps the dragged time (the saved words are matched to their cue by overlap).
    browser.refresh();
    browser.find("textarea.target");
    let reloaded = browser.text(&browser.find("tr[data-cue=\"0\"] .cue-time"));
    assert_eq!(reloaded, shown, "the cue's times after a reload");
    assert_eq!(js(&browser, "document.querySelector('#target-0').value"), json!("Hoe is het weer in New York?"));

    browser.click("#submit-task");
    browser.click("#submit-confirm-submit");
    browser.wait_for_text("#tasks", "No tasks", Duration::from_secs(15));
    server.wait_for_status(&customer, &job_id, &["DONE"], Duration::from_secs(30));
    let srt = export(&server, &customer, "srt", &job_id);
    let vtt = export(&server, &customer, "vtt", &job_id);
    println!("source cue 1 starts at {old_start:.3} s; dragged to {new_start:.3} s");
    assert!((first_cue_start(&srt) - new_start).abs() < 0.002, "SRT starts at the dragged {new_start}:\n{srt}");
    assert!((first_cue_start(&vtt) - new_start).abs() < 0.002, "VTT starts at the dragged {new_start}:\n{vtt}");
}

/// The bounding box of the first element matching `css`.
fn rect(browser: &Browser, css: &str) -> Value {
    browser.script(
        "const r = document.querySelector(arguments[0]).getBoundingClientRect(); return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: r.height};",
        vec![json!(css)],
    )
}

fn num(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("no {key} in {v}"))
}

#[test]
fn the_fixed_bar_is_compact_find_opens_over_the_text_next_problem_and_the_typing_settings() {
    let server = TestServer::start();
    let ann = server.create_key("ann", Some(100_000));
    let mut browser = Browser::start("editor-compact");
    browser.set_window_size(1280, 800);
    open_editor(&mut browser, &server, &ann, &paths::corpus_file(clips::JFK), &[("numberOfSpeakers", "1")]);
    browser.wait_for_text("#timeline-summary", "within the subtitle rules", SHORT_WAIT);
    browser.wait_for_attr("#caption-preview", "data-preview", "ready", SHORT_WAIT);
    let viewport = js(&browser, "[innerWidth, innerHeight]");
    let bar = rect(&browser, ".editor-top");
    let parts = js(
        &browser,
        "[...document.querySelector('.editor-top').querySelectorAll(':scope > *, .toolbar, .wave-row > *')].map(e => `${e.className || e.id}: ${e.getBoundingClientRect().height.toFixed(0)}`)",
    );
    println!("at {viewport} the fixed bar is {:.0} px high: {parts}", num(&bar, "height"));
    browser.screenshot("compact-bar");
    assert!(num(&bar, "height") <= 150.0, "the fixed bar takes at most 150 px at 1280 x 800: {bar}");
    // One row of buttons, each with its name (shown on hover and focus).
    let tops = js(
        &browser,
        "[...document.querySelectorAll('.toolbar button')].map(b => Math.round(b.getBoundingClientRect().top))",
    );
    let tops: Vec<i64> = tops.as_array().unwrap().iter().map(|t| t.as_i64().unwrap()).collect();
    assert!(tops.iter().all(|t| (t - tops[0]).abs() <= 4), "the toolbar is one row: {tops:?}");
    for (id, name) in
        [("play", "Play"), ("split", "Split at word"), ("find-replace", "Find and replace"), ("zoom-in", "Zoom in")]
    {
        assert_eq!(js(&browser, &format!("document.querySelector('#{id} .tl').textContent")), json!(name));
    }
    // The rules in one line; the text is left-aligned.
    assert!(num(&rect(&browser, "#timeline-summary"), "height") < 30.0, "the rule summary is one line");
    let align = js(
        &browser,
        "[getComputedStyle(document.querySelector('.words')).textAlign, getComputedStyle(document.querySelector('.w')).paddingLeft]",
    );
    println!("the words: text-align and padding {align}");
    assert_eq!(align[0], json!("left"));
    browser.screenshot("compact-bar");

    // Find and replace opens over the text: the fixed bar keeps its height.
    browser.click("#find-replace");
    browser.find("#find-panel:not([hidden])");
    let open = rect(&browser, ".editor-top");
    assert!((num(&open, "height") - num(&bar, "height")).abs() < 2.0, "find opens over the text: {open} vs {bar}");
    assert!(num(&rect(&browser, "#find-panel"), "top") >= num(&rect(&browser, ".toolbar"), "bottom") - 1.0);
    browser.screenshot("find-open");
    browser.click("#find-close");

    // Ctrl+wheel over the waveform zooms in and out; the zoomed scroll area is a named tab stop.
    let zoom = || js(&browser, "Number(document.querySelector('#waveform').dataset.zoom)").as_f64().unwrap();
    let wheel = |dy: i32| {
        browser.script(
            &format!("document.querySelector('#waveform').dispatchEvent(new WheelEvent('wheel', {{deltaY: {dy}, ctrlKey: true, bubbles: true, cancelable: true}}))"),
            vec![],
        )
    };
    // The overview strip shows the whole media in the waveform and the text on screen.
    let span = |name: &str| -> (f64, f64) {
        let v = js(&browser, &format!("document.querySelector('#overview').dataset.{name}"));
        let (a, b) = v.as_str().unwrap().split_once('-').unwrap_or_else(|| panic!("overview {name}: {v}"));
        (a.parse().unwrap(), b.parse().unwrap())
    };
    let (v0, v1) = span("view");
    let (t0, t1) = span("text");
    println!("overview: the waveform shows {v0}-{v1} s, the text on screen {t0}-{t1} s");
    assert!(v0 < 0.1 && v1 > 10.0 && t0 < 1.0 && t1 > 9.0, "the whole clip and all its text");
    // The strip is a slider over the media's position, played from the keyboard.
    let slider = || {
        js(
            &browser,
            "(() => { const o = document.querySelector('#overview'); return [o.getAttribute('role'), Number(o.getAttribute('aria-valuenow')), Number(o.getAttribute('aria-valuemax')), o.getAttribute('aria-valuetext')]; })()",
        )
    };
    browser.script("document.querySelector('#overview').focus()", vec![]);
    browser.press(END);
    let at_end = slider();
    println!("the overview slider at End: {at_end}");
    assert_eq!(at_end[0], json!("slider"));
    assert!(at_end[2].as_f64().unwrap() >= 10.0 && at_end[1] == at_end[2], "End goes to the end: {at_end}");
    assert!(time(&browser) > 10.0, "End plays from the end");
    browser.press(HOME);
    browser.press(RIGHT);
    let five = slider();
    assert_eq!(five[1].as_f64(), Some(5.0), "Home, then Right: 5 s in: {five}");
    assert!((time(&browser) - 5.0).abs() < 0.01 && five[3].as_str().unwrap().starts_with("00:05.0 of "), "{five}");
    browser.press(LEFT);
    assert!(time(&browser) < 0.01, "Left: back 5 s");
    wheel(-100);
    let closer = zoom();
    std::thread::sleep(Duration::from_millis(200));
    let (z0, z1) = span("view");
    assert!(z1 - z0 < (v1 - v0) * 0.85, "zoomed in, the box narrows: {z0}-{z1}");
    let area = js(
        &browser,
        "(() => { const a = document.querySelector('#waveform').firstElementChild.shadowRoot.querySelector('.wrapper').parentElement; return [a.tabIndex, a.getAttribute('aria-label')]; })()",
    );
    assert_eq!(area[0], json!(0), "the zoomed waveform scrolls from the keyboard: {area}");
    wheel(100);
    let whole = zoom();
    assert!(
        (closer / whole - 1.25).abs() < 0.05,
        "Ctrl+wheel zooms a quarter in, then out to the whole: {closer} / {whole}"
    );
    assert_eq!(js(&browser, "document.querySelector('#zoom-out').disabled"), json!(true));

    // A segment's Join shows on hover or focus only (split first: two segments), then undo.
    browser.click(&word_selector(&browser, "ask", 0));
    browser.press(&format!("{CTRL}{ENTER}"));
    browser.wait_for_text("#editor-status", "split", SHORT_WAIT);
    browser.click("h1");
    browser.script("document.activeElement.blur();", vec![]);
    let opacity = || js(&browser, "getComputedStyle(document.querySelector('.join[data-seg=\"1\"]')).opacity");
    assert_eq!(opacity(), json!("0"), "Join is hidden until needed");
    browser.script("document.querySelector('.w[data-s=\"1\"]').focus()", vec![]);
    assert_eq!(opacity(), json!("1"), "Join shows with the cursor in its segment");
    browser.screenshot("join-on-focus");
    browser.click("#undo");
    browser.wait_for_text("#editor-status", "Undone", SHORT_WAIT);

    // Squeezed to 3 s, the segment reads too fast; "Next problem" goes to it.
    let (x, y, px_per_s) = edge(&browser, "unit-0", "right");
    browser.drag((x, y), (x - 7.0 * px_per_s, y));
    let summary = browser.wait_for_text("#timeline-summary", "⚠ 1 breaks the subtitle rules", SHORT_WAIT);
    println!("summary: {summary}");
    browser.script("document.activeElement.blur();", vec![]);
    browser.click("#next-problem");
    let status = browser.wait_for_text("#editor-status", "characters per second", SHORT_WAIT);
    assert!(status.starts_with("Segment ") && status.contains(" of "), "{status}");
    let seg = js(&browser, "document.activeElement.dataset.s");
    assert!(seg.is_string(), "the cursor is in the segment with the problem: {seg}");
    browser.screenshot("next-problem");

    // The shortcut chips never run into their descriptions.
    let overlaps = js(
        &browser,
        "[...document.querySelectorAll('#shortcuts dt')].filter(dt => dt.getBoundingClientRect().right > dt.nextElementSibling.getBoundingClientRect().left + 1 && dt.getBoundingClientRect().bottom > dt.nextElementSibling.getBoundingClientRect().top + 1).map(dt => dt.textContent)",
    );
    assert_eq!(overlaps, json!([]), "key chips overlapping their descriptions");

    // Rewind on pause: 2 s back when pausing.
    browser.script("document.querySelector('#media-video').currentTime = 0;", vec![]);
    let rewind = browser.find("#set-rewind");
    browser.clear(&rewind);
    browser.send_keys(&rewind, "2");
    browser.click("#play");
    browser.wait_for_text("#play", "Pause", SHORT_WAIT);
    let deadline = std::time::Instant::now() + SHORT_WAIT;
    while time(&browser) < 4.0 {
        assert!(std::time::Instant::now() < deadline, "playback does not reach 4 s");
        std::thread::sleep(Duration::from_millis(100));
    }
    let paused = js(
        &browser,
        "(() => { const a = document.querySelector('#media-video'); const at = a.currentTime; document.querySelector('#play').click(); return [at, a.currentTime]; })()",
    );
    let (at, now) = (paused[0].as_f64().unwrap(), paused[1].as_f64().unwrap());
    println!("paused at {at:.2} s, stepped back to {now:.2} s");
    assert!((at - now - 2.0).abs() < 0.25, "a pause steps back 2 s: {at} -> {now}");

    // Keep playing while I type: off, typing pauses playback, which plays on after a second.
    browser.click("#set-play-typing");
    assert_eq!(js(&browser, "document.querySelector('#set-play-typing').checked"), json!(false));
    browser.click("#play");
    browser.wait_for_text("#play", "Pause", SHORT_WAIT);
    let word = word_selector(&browser, "country", 0);
    // (in view, not under the fixed bar: WebDriver does not scroll what is already in the window)
    browser.script(&format!("document.querySelector('{word}').scrollIntoView({{block: 'center'}})"), vec![]);
    browser.click(&word);
    browser.send_keys(&browser.find(&word), "x");
    assert_eq!(js(&browser, "document.querySelector('#media-video').paused"), json!(true), "typing pauses");
    browser.wait_for_text("#play", "Pause", Duration::from_secs(5));
    browser.click("#play");

    // The settings are kept in this browser.
    browser.click("#save");
    browser.wait_for_text("#editor-notice", "Saved", SHORT_WAIT);
    browser.refresh();
    browser.find("#transcript .w");
    assert_eq!(js(&browser, "document.querySelector('#set-rewind').value"), json!("2"));
    assert_eq!(js(&browser, "document.querySelector('#set-play-typing').checked"), json!(false));

    // A shortcut the user changes: F2 plays and pauses instead of Escape, kept in this browser.
    const F2: &str = "\u{E032}";
    browser.click("#change-key-playPause");
    browser.press(F2);
    browser.wait_for_text("#key-playPause", "F2", SHORT_WAIT);
    browser.click("h1");
    browser.press(F2);
    browser.wait_for_text("#play", "Pause", SHORT_WAIT);
    browser.press(F2);
    browser.wait_for_text("#play", "Play", SHORT_WAIT);
    assert_eq!(js(&browser, "document.querySelector('#play').getAttribute('aria-keyshortcuts')"), json!("F2"));
    browser.refresh();
    browser.wait_for_text("#key-playPause", "F2", SHORT_WAIT);
    browser.screenshot("keys-changed");

    // Every shortcut but undo, redo, timing and moving in the text can change; a key that types
    // or that undo keeps is refused, saying why. A pedal's F8 splits at the word.
    const F8: &str = "\u{E038}";
    browser.click("#change-key-split");
    browser.press("k");
    let refused = browser.wait_for_text("#editor-status", "types or moves in the text", SHORT_WAIT);
    assert!(refused.contains("still Ctrl+Enter"), "{refused}");
    browser.click("#change-key-split");
    browser.press(&format!("{CTRL}z"));
    browser.wait_for_text("#editor-status", "Ctrl+Z is kept for undo", SHORT_WAIT);
    browser.click("#change-key-split");
    browser.press(F8);
    browser.wait_for_text("#key-split", "F8", SHORT_WAIT);
    assert_eq!(js(&browser, "document.querySelector('#split').getAttribute('aria-keyshortcuts')"), json!("F8"));
    let before = segments(&browser);
    let ask = word_selector(&browser, "ask", 0);
    browser.script(&format!("document.querySelector('{ask}').scrollIntoView({{block: 'center'}})"), vec![]);
    browser.click(&ask);
    browser.press(F8);
    browser.wait_for_text("#editor-status", "split", SHORT_WAIT);
    assert_eq!(segments(&browser), before + 1, "F8 split the segment");
    browser.press(&format!("{CTRL}{ENTER}"));
    assert_eq!(segments(&browser), before + 1, "Ctrl+Enter no longer splits");
    undo(&browser);
    // Default keys: Escape plays again, Ctrl+Enter splits.
    browser.click("#reset-keys");
    browser.wait_for_text("#key-playPause", "Escape", SHORT_WAIT);
    browser.wait_for_text("#key-split", "Ctrl+Enter", SHORT_WAIT);
    assert_eq!(js(&browser, "document.querySelector('#play').getAttribute('aria-keyshortcuts')"), json!("Escape"));
    browser.script("document.querySelector('#shortcuts').scrollIntoView({block: 'center'})", vec![]);
    browser.screenshot("keyboard-panel");

    // On a phone the bar's buttons stay in the bottom bar and nothing overlaps the text.
    browser.phone(390, 844);
    browser.find("#transcript .w");
    std::thread::sleep(Duration::from_millis(300));
    browser.screenshot("compact-bar-390");
    browser.zoom(100, 1280, 800);
}
