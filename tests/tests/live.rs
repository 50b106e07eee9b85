//! Live transcription over a real WebSocket (`/api/real-time`, Amberscript's real-time protocol),
//! with a plain client (`scribe_tests::live`), real corpus speech made into raw PCM by ffmpeg, and
//! the real engine: finals against the direct job of the same clip, partials before finals with
//! their id, sessions at once sharing the decoder, the operator's partials model, every encoding
//! and several rates, every refusal, the balance running out, capacity, a session saved as a job,
//! and a crash in the middle of one. Every message the server sends in them is checked against its schema in the
//! server's AsyncAPI document (`live::ServerMessages`).

use std::time::Duration;

use scribe_tests::live::{self, LiveRun, Pace, Session, init, pcm, wer};
use scribe_tests::{ASR_TIMEOUT, FileServer, Options, TestServer, clips, paths};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

const JFK_TEXT: &str =
    "And so my fellow Americans, ask not what your country can do for you, ask what you can do for your country.";
const SHORT_TEXT: &str = "what's the weather like in New York";
const GETTYSBURG: &str = "audio/en_synth_gettysburg_2voices.wav";

/// The tests here run one at a time: each streams speech at the pace of speech into its own
/// server, and several at once on two cores would measure the machine, not the sessions.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The words of a TXT export, without its timestamp lines and speaker labels.
fn spoken(txt: &str) -> String {
    txt.lines()
        .filter(|l| !l.trim().is_empty() && !l.chars().all(|c| c.is_ascii_digit() || c == ':'))
        .map(|l| l.split_once(": ").map_or(l, |(_, said)| said))
        .collect::<Vec<_>>()
        .join(" ")
}

fn session<'a>(server: &TestServer, init: Value, audio: &'a [u8], rate: u32, encoding: &'a str) -> Session<'a> {
    Session::new(server.ws_url("/api/real-time"), init, audio, rate, encoding)
}

fn assert_ended_normally(run: &LiveRun) {
    assert!(live::is_normal(run.close_code()), "close {:?}; messages {:?}", run.close, run.messages);
    assert!(run.error().is_none(), "an error: {:?}", run.error());
}

#[test]
fn finals_match_the_direct_job_and_partials_come_first_with_their_ids() {
    let _serial = one_at_a_time();
    let server = TestServer::start();
    let key = server.key();
    let audio = pcm(clips::JFK, 16_000, "s16le");
    let mut live = session(&server, init(key, json!({"outputConfig": {"partials": true}})), &audio, 16_000, "s16le");
    live.pace = Pace::RealTime;
    let run = live.run();
    assert_ended_normally(&run);

    let first = &run.messages[0].1;
    assert_eq!(first["type"], "Info", "the first message says which configuration is in force: {first}");
    assert_eq!(first["message"]["audioConfig"], json!({"sample_rate": 16000, "encoding": "s16le"}));
    assert_eq!(first["message"]["outputConfig"]["partials"], true);

    let finals = run.of_type("FinalResult");
    assert!(!finals.is_empty(), "no finals: {:?}", run.messages);
    let partials = run.of_type("PartialResult");
    assert!(!partials.is_empty(), "partials were asked for: {:?}", run.messages);
    for (i, (_, m)) in run.messages.iter().enumerate().filter(|(_, (_, m))| m["type"] == "PartialResult") {
        let id = &m["message"]["id"];
        assert!(m["message"]["segments"][0]["words"][0].get("start").is_none(), "partials have words only: {m}");
        let final_at = run.messages.iter().position(|(_, f)| f["type"] == "FinalResult" && f["message"]["id"] == *id);
        assert!(final_at.is_some_and(|f| f > i), "partial {i} ({id}) has no later final of the same id");
    }
    let mut last_end = 0.0;
    for f in &finals {
        let message = &f["message"];
        assert_eq!(message["version"], "1.0");
        let segment = &message["segments"][0];
        for w in segment["words"].as_array().unwrap() {
            let (start, end) = (w["start"].as_f64().unwrap(), w["end"].as_f64().unwrap());
            assert!(start >= last_end - 0.5 && end >= start && end <= 11.5, "word times in order: {w}");
            assert!((w["length"].as_f64().unwrap() - (end - start)).abs() < 0.011, "{w}");
            assert!((0.0..=1.0).contains(&w["confidence"].as_f64().unwrap()), "{w}");
            last_end = end;
        }
        assert!(segment["start"].as_f64().unwrap() <= segment["end"].as_f64().unwrap());
    }

    // The server counts what it decoded: every final sent came from a decoding after its pause
    // or from one begun when the pause began, and every partial from a decoding.
    let metrics = server.http().get(server.url("/metrics")).send().unwrap().text().unwrap();
    let decodes = |kind: &str| -> usize {
        let prefix = format!("scribe_live_decodes_total{{kind=\"{kind}\"}} ");
        let line = metrics.lines().find_map(|l| l.strip_prefix(&prefix));
        line.unwrap_or_else(|| panic!("no {prefix}in /metrics:\n{metrics}")).trim().parse().unwrap()
    };
    assert!(decodes("final") + decodes("early_kept") >= finals.len(), "{metrics}");
    assert!(decodes("early_kept") <= decodes("early"), "{metrics}");
    assert!(decodes("partial") >= partials.len() && decodes("partial_cancelled") <= decodes("partial"), "{metrics}");

    // The same clip as a direct job: the finals say what it says.
    let job = server.upload_ok(key, &paths::corpus_file(clips::JFK), &[("language", "en")]);
    let id = job["jobId"].as_str().unwrap().to_owned();
    server.wait_for_status(key, &id, &["DONE"], ASR_TIMEOUT);
    let direct = spoken(&server.get("/jobs/export-txt", key, &[("jobId", &id)]).text);
    let text = run.final_text();
    let against_direct = wer(&direct, &text);
    let against_reference = wer(JFK_TEXT, &text);
    eprintln!("live: {text}\ndirect: {direct}\nWER vs direct {against_direct:.3}, vs reference {against_reference:.3}");
    assert!(against_direct <= 0.10, "live finals differ from the direct job: {text:?} vs {direct:?}");
    assert!(against_reference <= 0.10, "{text:?}");
}

#[test]
fn every_encoding_and_several_rates_give_the_same_words() {
    let _serial = one_at_a_time();
    let server = TestServer::start();
    let key = server.key();
    for encoding in [
        "f32be", "f32le", "s16be", "s16le", "s24be", "s24le", "s32be", "s32le", "u16be", "u16le", "u24be", "u24le",
        "u32be", "u32le",
    ] {
        let audio = pcm(clips::SHORT, 16_000, encoding);
        let mut s =
            session(&server, init(key, json!({"audioConfig": {"encoding": encoding}})), &audio, 16_000, encoding);
        s.pace = Pace::Burst;
        let run = s.run();
        assert_ended_normally(&run);
        let text = run.final_text();
        assert!(wer(SHORT_TEXT, &text) <= 0.15, "{encoding}: {text:?}");
    }
    for rate in [8_000, 22_050, 44_100, 48_000] {
        let audio = pcm(clips::JFK, rate, "s16le");
        let mut s = session(&server, init(key, json!({"audioConfig": {"sample_rate": rate}})), &audio, rate, "s16le");
        s.pace = Pace::Burst;
        let run = s.run();
        assert_ended_normally(&run);
        let text = run.final_text();
        assert!(wer(JFK_TEXT, &text) <= 0.15, "{rate} Hz: {text:?}");
    }
}

/// One refusal: what the server answered and how it closed.
fn refused(run: &LiveRun, code: &str, close: u16) -> Value {
    let error = run.error().unwrap_or_else(|| panic!("no Error message: {:?}", run.messages)).clone();
    assert_eq!(error["code"], code, "{error}");
    assert!(error["message"].as_str().is_some_and(|m| m.len() > 10), "a sentence: {error}");
    assert_eq!(run.close_code(), Some(close), "{:?}", run.close);
    error
}

#[test]
fn sessions_at_once_share_the_decoder_and_each_reads_as_alone() {
    let _serial = one_at_a_time();
    let server = TestServer::start_with(Options {
        extra_args: ["--live-sessions-per-account", "3"].map(String::from).to_vec(),
        ..Options::default()
    });
    let key = server.key().to_owned();
    let url = server.ws_url("/api/real-time");
    // Three sessions stream JFK at once, each starting a little later into its audio than the
    // one before (leading silence), faster than real time so their decodings wait together.
    let clip = pcm(clips::JFK, 16_000, "s16le");
    let runs: Vec<_> = (0..3)
        .map(|i| {
            let mut audio = vec![0u8; i * 16_000 * 2 * 7 / 10];
            audio.extend_from_slice(&clip);
            let (url, key) = (url.clone(), key.clone());
            std::thread::spawn(move || {
                let mut s =
                    Session::new(url, init(&key, json!({"outputConfig": {"partials": true}})), &audio, 16_000, "s16le");
                s.pace = Pace::Faster(3.0);
                s.run()
            })
        })
        .collect();
    for run in runs {
        let run = run.join().expect("a session's thread");
        assert_ended_normally(&run);
        assert!(wer(JFK_TEXT, &run.final_text()) <= 0.10, "{}", run.final_text());
    }
    // The server decoded some of their utterances in one batch.
    let metrics = server.http().get(server.url("/metrics")).send().unwrap().text().unwrap();
    let shared = metrics.lines().find_map(|l| l.strip_prefix("scribe_live_decodes_total{kind=\"shared\"} "));
    let shared: u64 =
        shared.unwrap_or_else(|| panic!("no shared count in /metrics:\n{metrics}")).trim().parse().unwrap();
    assert!(shared >= 2, "no decoding was shared:\n{metrics}");
}

#[test]
fn the_operators_partials_model_decodes_partials_in_its_languages_and_finals_stay_with_the_model() {
    let _serial = one_at_a_time();
    let server = TestServer::start_with(Options {
        extra_args: ["--live-partials-model", "whisper-tiny.en"].map(String::from).to_vec(),
        ..Options::default()
    });
    let key = server.key();
    // English with partials: tiny.en (loaded for it) decodes the partials, base the finals.
    let audio = pcm(clips::JFK, 16_000, "s16le");
    let mut live = session(&server, init(key, json!({"outputConfig": {"partials": true}})), &audio, 16_000, "s16le");
    live.pace = Pace::RealTime;
    let run = live.run();
    assert_ended_normally(&run);
    assert_eq!(run.messages[0].1["message"]["partialsModel"], "whisper-tiny.en", "{:?}", run.messages[0]);
    assert!(!run.of_type("PartialResult").is_empty(), "partials were asked for: {:?}", run.messages);
    assert!(wer(JFK_TEXT, &run.final_text()) <= 0.10, "{}", run.final_text());
    let logs = server.full_logs();
    let loaded = logs.lines().any(|l| l.contains("loading the speech model") && l.contains("whisper-tiny.en"));
    assert!(loaded, "tiny.en was never loaded:\n{logs}");

    // tiny.en knows no German, and a session without partials has none to decode.
    let silence = vec![0u8; 16_000 * 2];
    for extra in [json!({"language": "de", "outputConfig": {"partials": true}}), json!({})] {
        let run = session(&server, init(key, extra.clone()), &silence, 16_000, "s16le").run();
        assert_ended_normally(&run);
        assert_eq!(run.messages[0].1["message"]["partialsModel"], Value::Null, "{extra}: {:?}", run.messages[0]);
    }

    // A model that is not installed stops the server at start, naming what is.
    let home = tempfile::tempdir().expect("a temp dir");
    let out = std::process::Command::new(paths::scribe_bin())
        .args(["serve", "--port", "0", "--live-partials-model", "whisper-huge"])
        .arg("--data-dir")
        .arg(home.path())
        .env("SCRIBE_MODELS_DIR", paths::models_dir())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("running scribe serve");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("--live-partials-model whisper-huge: no such speech model is installed")
            && stderr.contains("whisper-tiny.en"),
        "{stderr}"
    );
}

#[test]
fn bad_input_gets_words_and_no_other_session_notices() {
    let _serial = one_at_a_time();
    let server = TestServer::start();
    let key = server.key().to_owned();
    let url = server.ws_url("/api/real-time");
    // A good session runs through all the refusals below.
    let audio = pcm(clips::JFK, 16_000, "s16le");
    let good_url = url.clone();
    let good_key = key.clone();
    let good = std::thread::spawn(move || {
        let mut s = Session::new(good_url, init(&good_key, json!({})), &audio, 16_000, "s16le");
        s.pace = Pace::RealTime;
        s.run()
    });

    let text = |v: Value| Message::text(v.to_string());
    let e = refused(&live::exchange(&url, text(init("not-a-key", json!({}))), vec![]), "UNAUTHORIZED", 1008);
    assert_eq!(e["field"], "apiKey");
    // A client that streams right after its INIT, as most do, still hears the refusal: the
    // server reads on until the client answers its Close, instead of resetting the connection
    // under audio it has not read.
    let eager = (0..2_000).map(|_| Message::binary(vec![0u8; 3_200])).collect();
    refused(&live::exchange(&url, text(init("not-a-key", json!({}))), eager), "UNAUTHORIZED", 1008);
    refused(
        &live::exchange(&url, text(json!({"messageType": "INIT", "language": "en"})), vec![]),
        "UNAUTHORIZED",
        1008,
    );
    refused(&live::exchange(&url, Message::text("{not json"), vec![]), "INVALID_MESSAGE", 1007);
    refused(&live::exchange(&url, Message::binary(vec![0u8; 3200]), vec![]), "INVALID_MESSAGE", 1008);
    let e = refused(
        &live::exchange(&url, text(init(&key, json!({"audioConfig": {"encoding": "mp3"}}))), vec![]),
        "INVALID_PARAMETER",
        1008,
    );
    assert_eq!(e["field"], "audioConfig.encoding");
    assert_eq!(e["allowed"].as_array().map(Vec::len), Some(14), "{e}");
    let e =
        refused(&live::exchange(&url, text(init(&key, json!({"language": "xx"}))), vec![]), "INVALID_PARAMETER", 1008);
    assert_eq!(e["field"], "language");
    assert!(e["allowed"].as_array().unwrap().iter().any(|l| l == "auto"), "{e}");
    let e = refused(
        &live::exchange(&url, text(init(&key, json!({"audioConfig": {"sample_rate": 4000}}))), vec![]),
        "INVALID_PARAMETER",
        1008,
    );
    assert_eq!(e["field"], "audioConfig.sample_rate");
    let e =
        refused(&live::exchange(&url, text(init(&key, json!({"diarize": true}))), vec![]), "INVALID_PARAMETER", 1008);
    assert_eq!(e["field"], "diarize");
    let e = refused(
        &live::exchange(&url, text(init(&key, json!({"glossaryId": "no-such-glossary"}))), vec![]),
        "INVALID_PARAMETER",
        1008,
    );
    assert_eq!(e["field"], "glossaryId");
    // Oversized frames, just over the limit or over the 16 MiB the WebSocket library takes by
    // default: an Error naming the limit, then 1009; before the INIT as after it.
    for size in [(1 << 20) + 1, 17 << 20] {
        let run = live::exchange(&url, text(init(&key, json!({}))), vec![Message::binary(vec![0u8; size])]);
        assert_eq!(run.messages[0].1["type"], "Info");
        let e = refused(&run, "FRAME_TOO_LARGE", 1009);
        assert!(e["message"].as_str().is_some_and(|m| m.contains(&size.to_string())), "{e}");
    }
    refused(&live::exchange(&url, Message::binary(vec![0u8; 17 << 20]), vec![]), "FRAME_TOO_LARGE", 1009);
    // Text that is not the protocol's once the session has started (a second INIT, bad JSON,
    // an unknown messageType) is an INVALID_MESSAGE warning, a code the AsyncAPI document
    // declares for warnings, sent after the first INIT's Info; the session goes on.
    let run = live::exchange(
        &url,
        text(init(&key, json!({}))),
        vec![
            text(init(&key, json!({}))),
            Message::text("{not json"),
            Message::text(json!({"messageType": "PAUSE"}).to_string()),
            Message::text(json!({"messageType": "END"}).to_string()),
        ],
    );
    assert_eq!(run.messages[0].1["message"]["message"], "Session started", "{:?}", run.messages);
    let warnings = run.of_type("Warning");
    assert_eq!(warnings.len(), 3, "{:?}", run.messages);
    let document: Value =
        server.http().get(server.url("/api/asyncapi.json")).send().expect("the AsyncAPI document").json().unwrap();
    let declared = &document["components"]["schemas"]["WarningMessage"]["properties"]["code"]["enum"];
    for warning in warnings {
        assert_eq!(warning["message"]["code"], "INVALID_MESSAGE", "{warning}");
        assert!(declared.as_array().unwrap().contains(&warning["message"]["code"]), "{declared}");
    }
    assert!(live::is_normal(run.close_code()), "{:?}", run.close);
    // A frame that ends inside a sample is a warning, and the session goes on.
    let run = live::exchange(
        &url,
        text(init(&key, json!({}))),
        vec![Message::binary(vec![0u8; 3201]), Message::text(json!({"messageType": "END"}).to_string())],
    );
    let warning = run.of_type("Warning");
    assert_eq!(warning.first().map(|w| &w["message"]["code"]), Some(&json!("PARTIAL_SAMPLE")), "{:?}", run.messages);
    assert!(live::is_normal(run.close_code()), "{:?}", run.close);

    let good = good.join().expect("the good session's thread");
    assert_ended_normally(&good);
    assert!(wer(JFK_TEXT, &good.final_text()) <= 0.15, "{}", good.final_text());
}

#[test]
fn an_idle_session_is_closed_with_a_reason() {
    let _serial = one_at_a_time();
    let server = TestServer::start_with(Options {
        extra_args: vec!["--live-idle-timeout".into(), "2s".into()],
        ..Options::default()
    });
    let run =
        live::exchange(&server.ws_url("/real-time/"), Message::text(init(server.key(), json!({})).to_string()), vec![]);
    let error = refused(&run, "IDLE", 1000);
    assert!(error["message"].as_str().unwrap().contains("2 s"), "{error}");
}

#[test]
fn sessions_over_capacity_are_refused_at_once() {
    let _serial = one_at_a_time();
    let server = TestServer::start_with(Options {
        extra_args: ["--live-sessions", "2", "--live-sessions-per-account", "1"].map(String::from).to_vec(),
        ..Options::default()
    });
    let other = server.create_key("other", None);
    let third = server.create_key("third", None);
    let audio = pcm(clips::JFK, 16_000, "s16le");
    let running = |key: String| {
        let url = server.ws_url("/api/real-time");
        let audio = audio.clone();
        std::thread::spawn(move || {
            let mut s = Session::new(url, init(&key, json!({})), &audio, 16_000, "s16le");
            s.pace = Pace::RealTime;
            s.run()
        })
    };
    let first = running(server.key().to_owned());
    std::thread::sleep(Duration::from_secs(2));
    let url = server.ws_url("/api/real-time");
    let e = refused(
        &live::exchange(&url, Message::text(init(server.key(), json!({})).to_string()), vec![]),
        "CAPACITY",
        1013,
    );
    assert!(e["message"].as_str().unwrap().contains("account"), "{e}");
    let second = running(other);
    std::thread::sleep(Duration::from_secs(2));
    let e =
        refused(&live::exchange(&url, Message::text(init(&third, json!({})).to_string()), vec![]), "CAPACITY", 1013);
    assert!(e["message"].as_str().unwrap().contains("server"), "{e}");
    for run in [first.join().unwrap(), second.join().unwrap()] {
        assert_ended_normally(&run);
        assert!(wer(JFK_TEXT, &run.final_text()) <= 0.15, "{}", run.final_text());
    }
    // Places are freed when sessions end.
    let audio = pcm(clips::SHORT, 16_000, "s16le");
    let run = session(&server, init(&third, json!({})), &audio, 16_000, "s16le").run();
    assert_ended_normally(&run);
}

#[test]
fn a_session_is_paid_per_started_minute_and_ends_when_the_balance_does() {
    let _serial = one_at_a_time();
    let server = TestServer::start();
    // Default price: 10 cents a minute. 15 cents pay the first minute, not the second.
    let key = server.create_key("thrifty", Some(15));
    let audio = pcm(GETTYSBURG, 16_000, "s16le");
    let mut s = session(&server, init(&key, json!({})), &audio, 16_000, "s16le");
    s.pace = Pace::Faster(8.0);
    let run = s.run();
    let error = refused(&run, "INSUFFICIENT_BALANCE", 1008);
    assert!(error["message"].as_str().unwrap().contains("minute 2"), "{error}");
    server.wait_for_balance(&key, 5);
    let finals = run.of_type("FinalResult");
    assert!(!finals.is_empty(), "the paid speech is finalized");
    let last_end = finals.iter().filter_map(|f| f["message"]["segments"][0]["end"].as_f64()).fold(0.0, f64::max);
    assert!(last_end <= 60.0 + 0.01, "nothing past the paid minute: {last_end}");
    assert!(run.final_text().to_lowercase().contains("seven years ago our fathers"), "{}", run.final_text());
}

#[test]
fn a_session_becomes_a_job_with_exports_and_its_callback() {
    let _serial = one_at_a_time();
    let server = TestServer::start();
    let files = FileServer::start();
    let key = server.key();
    let audio = pcm(clips::JFK, 16_000, "s16le");
    let extra = json!({"outputConfig": {"saveAsJob": true}, "callbackUrl": files.callback_url()});
    let run = session(&server, init(key, extra), &audio, 16_000, "s16le").run();
    assert_ended_normally(&run);
    let job_id = run.messages[0].1["message"]["jobId"].as_str().expect("the first Info names the job").to_owned();
    let job = server.wait_for_status(key, &job_id, &["DONE", "ERROR"], ASR_TIMEOUT);
    assert_eq!(job["status"], "DONE", "{job}");
    assert_eq!(job["jobType"], "direct");
    assert_eq!(job["transcriptionType"], "transcription");
    assert!((10..=12).contains(&job["nrAudioSeconds"].as_u64().unwrap()), "{job}");
    // The recording is read again as one text, as a direct job reads the same file: jfk's
    // finals come back as two sentences, the job as one.
    let txt = spoken(&server.get("/jobs/export-txt", key, &[("jobId", &job_id)]).text);
    assert!(wer(JFK_TEXT, &txt) <= 0.15, "{txt}");
    let reply = server.upload(key, &paths::corpus_file(clips::JFK), &[("language", "en")]);
    assert_eq!(reply.status, 200, "{}", reply.text);
    let upload = reply.json()["jobStatus"]["jobId"].as_str().unwrap().to_owned();
    server.wait_for_status(key, &upload, &["DONE"], ASR_TIMEOUT);
    let direct = spoken(&server.get("/jobs/export-txt", key, &[("jobId", &upload)]).text);
    println!("saved job: {txt}\ndirect job: {direct}\nfinals: {}", run.final_text());
    assert_eq!(txt, direct, "the saved session reads as the direct job of its audio");
    let srt = server.get("/jobs/export-srt", key, &[("jobId", &job_id)]).text;
    assert!(srt.contains("-->"), "{srt}");
    let callback = files.wait_for_callback(&job_id, Duration::from_secs(60));
    assert_eq!(callback["status"], "DONE", "{callback}");
    assert!(server.list_jobs(key, &[]).iter().any(|j| j["jobId"] == job_id.as_str()));
    let history = server.scribe_ok(&["replay", &job_id]);
    assert!(history.matches("LiveUtteranceRecorded").count() >= 1, "{history}");
    assert!(history.contains("LiveSessionEnded"), "{history}");
    assert!(history.contains("TranscriptionStarted"), "the recording was read again: {history}");
}

#[test]
fn a_crash_in_the_middle_of_a_saved_session_loses_no_recorded_final() {
    let _serial = one_at_a_time();
    let mut server = TestServer::start();
    let key = server.key().to_owned();
    let audio = pcm(GETTYSBURG, 16_000, "s16le");
    let url = server.ws_url("/api/real-time");
    let init = init(&key, json!({"outputConfig": {"saveAsJob": true}}));
    // The session runs in its own thread; the test kills the server once finals arrived.
    let (tx, rx) = std::sync::mpsc::channel::<Value>();
    let client = std::thread::spawn(move || {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(async move {
            use futures::{SinkExt, StreamExt};
            let declared = live::ServerMessages::of_server(&url).await;
            let (socket, _) = tokio_tungstenite::connect_async(url.as_str()).await.unwrap();
            let (mut sink, mut stream) = socket.split();
            sink.send(Message::text(init.to_string())).await.unwrap();
            let sender = tokio::spawn(async move {
                for frame in audio.chunks(3200) {
                    if sink.send(Message::binary(frame.to_vec())).await.is_err() {
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(25)).await;
                }
            });
            while let Some(Ok(message)) = stream.next().await {
                match message {
                    Message::Text(t) => {
                        let value: Value = serde_json::from_str(&t).expect("server messages are JSON");
                        declared.assert_valid(&value);
                        if tx.send(value).is_err() {
                            break;
                        }
                    }
                    Message::Close(_) => break,
                    _ => {}
                }
            }
            sender.abort();
        })
    });
    let info = rx.recv_timeout(Duration::from_secs(60)).expect("the first Info");
    let job_id = info["message"]["jobId"].as_str().expect("a jobId").to_owned();
    let mut finals = Vec::new();
    while finals.len() < 3 {
        let m = rx.recv_timeout(ASR_TIMEOUT).expect("finals arrive");
        if m["type"] == "FinalResult" {
            finals.push(m["message"]["transcript"].as_str().unwrap().to_owned());
        }
    }
    // Every final the client saw was recorded before it was sent: none may be lost.
    server.crash_and_restart();
    drop(rx);
    // The client ends when the server goes; its panic (a message the document refuses) fails the test.
    if let Err(panic) = client.join() {
        std::panic::resume_unwind(panic);
    }
    let job = server.wait_for_status(&key, &job_id, &["DONE", "ERROR"], ASR_TIMEOUT);
    assert_eq!(job["status"], "DONE", "{job}");
    let notes = job["notes"].as_str().unwrap_or_default();
    assert!(notes.contains("cut short"), "the job says it was interrupted: {job}");
    // Every final the client saw is on the job's stream, and the recording up to the crash is
    // read again: the job's transcript holds their words (it may hold more, the audio after them).
    let history = server.scribe_ok(&["replay", &job_id]);
    assert!(history.matches("LiveUtteranceRecorded").count() >= finals.len(), "{history}");
    let txt = live::words(&spoken(&server.get("/jobs/export-txt", &key, &[("jobId", &job_id)]).text));
    let sent: Vec<String> = finals.iter().flat_map(|f| live::words(f)).collect();
    let found = sent.iter().filter(|w| txt.contains(w)).count();
    assert!(found * 10 >= sent.len() * 9, "the job's transcript {txt:?} misses words of the finals {sent:?}");
}

#[test]
fn a_breath_mid_sentence_does_not_cut_the_sentence() {
    let _serial = one_at_a_time();
    let server = TestServer::start();
    let key = server.key();
    // Given jfk with 0.7 s of silence spliced in after "…what your country can do" (6.82 s):
    // longer than the 0.5 s that ends an utterance, shorter than a held pause
    let audio = pcm(clips::JFK, 16_000, "s16le");
    let cut = 109_120 * 2; // 6.82 s of 16 kHz s16le
    let mut spliced = audio[..cut].to_vec();
    spliced.extend(std::iter::repeat_n(0u8, 16_000 * 7 / 10 * 2));
    spliced.extend_from_slice(&audio[cut..]);
    // When it is streamed at the pace of speech
    let mut live = session(&server, init(key, json!({})), &spliced, 16_000, "s16le");
    live.pace = Pace::RealTime;
    let run = live.run();
    assert_ended_normally(&run);
    // Then the words before the breath do not end a sentence, so the pause is held and the
    // sentence goes on in the same final
    let finals: Vec<String> = run
        .of_type("FinalResult")
        .iter()
        .filter_map(|m| m["message"]["transcript"].as_str())
        .map(|t| t.to_lowercase().replace([',', '.', '?', '!'], ""))
        .collect();
    assert!(finals.iter().any(|f| f.contains("can do for you")), "cut at the breath: {finals:?}");
    assert!(wer(JFK_TEXT, &run.final_text()) <= 0.10, "{finals:?}");
}

/// `outputConfig.revisions`: jfk streamed at the pace of speech comes back in two finals, the
/// first ending with a full stop where the sentence goes on ("…my fellow Americans." then "Ask
/// not…"). Each final is sent again once read with its neighbour, with its id and `revised`,
/// and the finals as revised read as one sentence, with the words the finals had.
#[test]
fn revisions_read_each_final_again_with_its_neighbours() {
    let _serial = one_at_a_time();
    let server = TestServer::start();
    let key = server.key();
    let audio = pcm(clips::JFK, 16_000, "s16le");
    let mut live = session(&server, init(key, json!({"outputConfig": {"revisions": true}})), &audio, 16_000, "s16le");
    live.pace = Pace::RealTime;
    let run = live.run();
    assert_ended_normally(&run);
    assert_eq!(run.messages[0].1["message"]["outputConfig"]["revisions"], true, "{:?}", run.messages[0]);

    let (first, revised): (Vec<&Value>, Vec<&Value>) =
        run.of_type("FinalResult").into_iter().partition(|m| m["message"]["revised"] != true);
    assert!(first.len() >= 2, "jfk is cut at its pauses: {first:?}");
    assert!(!revised.is_empty(), "no final was revised: {:?}", run.messages);
    for r in &revised {
        let id = &r["message"]["id"];
        let original = first.iter().find(|f| f["message"]["id"] == *id);
        let original = original.unwrap_or_else(|| panic!("a revision of no final: {r}"));
        assert_eq!(r["message"]["segments"][0]["start"], original["message"]["segments"][0]["start"], "{r}");
        assert_ne!(
            r["message"]["transcript"], original["message"]["transcript"],
            "a revision that changes nothing: {r}"
        );
    }
    let (sent, read_again) = (run.final_text(), run.revised_text());
    eprintln!("finals as sent: {sent}\nas revised: {read_again}");
    assert!(wer(JFK_TEXT, &read_again) <= wer(JFK_TEXT, &sent).max(0.05), "{read_again:?} against {sent:?}");
    // One sentence: a single full stop, at the end, and "ask" in small letters both times.
    assert_eq!(read_again.matches(['.', '?', '!']).count(), 1, "{read_again:?}");
    assert!(read_again.ends_with('.') && !read_again.contains("Ask"), "{read_again:?}");

    let metrics = server.http().get(server.url("/metrics")).send().unwrap().text().unwrap();
    let counted =
        |kind: &str| metrics.lines().any(|l| l.starts_with(&format!("scribe_live_decodes_total{{kind=\"{kind}\"}} ")));
    assert!(counted("revision") && counted("revised"), "{metrics}");
}

/// `--live-pause`: the operator's pause ends utterances. jfk's first pause (after "…my fellow
/// Americans", which Whisper ends with a full stop, so it is not held) ends an utterance at the
/// default 0.5 s; at 2 s no pause of jfk's does, and the speech comes back as one final.
#[test]
fn the_operators_pause_ends_utterances() {
    let _serial = one_at_a_time();
    let audio = pcm(clips::JFK, 16_000, "s16le");
    let finals = |extra_args: Vec<String>| {
        let server = TestServer::start_with(Options { extra_args, ..Options::default() });
        let key = server.key();
        let mut live = session(&server, init(key, json!({})), &audio, 16_000, "s16le");
        live.pace = Pace::RealTime;
        let run = live.run();
        assert_ended_normally(&run);
        assert!(wer(JFK_TEXT, &run.final_text()) <= 0.10, "{}", run.final_text());
        run.of_type("FinalResult").len()
    };
    // Given the same speech streamed at the pace of speech, when the pause is the default, then
    // it is cut at its pauses; when the operator sets 2 s, then it is one final.
    assert!(finals(Vec::new()) >= 2, "jfk at the default pause");
    assert_eq!(finals(vec!["--live-pause".into(), "2s".into()]), 1, "jfk with --live-pause 2s");
}
