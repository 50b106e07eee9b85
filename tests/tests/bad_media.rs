//! Bad media, made here by the test itself: empty files, random bytes under media names, text
//! and images renamed, lying headers, truncated containers, a compression bomb, degenerate but
//! valid audio (one sample, minutes of digital silence, 8 kHz stereo) and a video without sound.
//! Each upload must end in a clear 400 (field `file`) or a job in `ERROR` whose `errorMsg` says
//! what is wrong in words a person understands, or, for audio that is odd but valid, a
//! transcript. Never a 5xx, never a job that hangs, and the server stays healthy.
//!
//! All cases run against one server; the outcomes are collected and every deviation is reported
//! together.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use scribe_tests::files::FileServer;
use scribe_tests::paths;
use scribe_tests::server::TestServer;
use serde_json::Value;

/// What a case must come to.
#[derive(Debug, Clone)]
enum Expect {
    /// 400 on `file` at upload or `ERROR`; the message contains one of these (lowercase).
    Refused(&'static [&'static str]),
    /// `DONE`, with a transcript containing this word (lowercase).
    Transcribed(&'static str),
}

struct Case {
    name: String,
    file: PathBuf,
    expect: Expect,
}

const NOT_MEDIA: &[&str] = &["not a recognised audio or video format"];
const EMPTY: &[&str] = &["contains no audio", "empty"];
const NO_AUDIO_TRACK: &[&str] = &["no audio track"];
const CUT_SHORT: &[&str] = &["cut short"];
const NO_SPEECH: &[&str] = &["no speech", "contains no audio"];
const BROKEN: &[&str] = &["not a recognised audio or video format", "could not be decoded", "cut short", "no audio"];

/// Words that mean a message was written for a programmer, not for the person who uploaded.
const JARGON: &[&str] = &[
    "symphonia",
    "panick",
    "unwrap",
    "error {",
    "os error",
    "backtrace",
    "stream #",
    "0:a:0",
    "errno",
    "invalid data found",
];

/// Deterministic noise (xorshift), so a failure can be reproduced.
fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// A RIFF/WAVE header for 16-bit PCM; `data_bytes` is what the header claims.
fn wav_header(rate: u32, channels: u16, bits: u16, format: u16, data_bytes: u32) -> Vec<u8> {
    let block = channels.saturating_mul(bits / 8);
    let mut h = Vec::new();
    h.extend_from_slice(b"RIFF");
    h.extend_from_slice(&data_bytes.saturating_add(36).to_le_bytes());
    h.extend_from_slice(b"WAVEfmt ");
    h.extend_from_slice(&16u32.to_le_bytes());
    h.extend_from_slice(&format.to_le_bytes());
    h.extend_from_slice(&channels.to_le_bytes());
    h.extend_from_slice(&rate.to_le_bytes());
    h.extend_from_slice(&(rate.saturating_mul(u32::from(block))).to_le_bytes());
    h.extend_from_slice(&block.to_le_bytes());
    h.extend_from_slice(&bits.to_le_bytes());
    h.extend_from_slice(b"data");
    h.extend_from_slice(&data_bytes.to_le_bytes());
    h
}

fn wav(rate: u32, channels: u16, samples: &[i16]) -> Vec<u8> {
    let mut bytes = wav_header(rate, channels, 16, 1, (samples.len() * 2) as u32);
    bytes.extend(samples.iter().flat_map(|s| s.to_le_bytes()));
    bytes
}

fn ffmpeg(args: &[&str], out: &Path) {
    let status = Command::new("ffmpeg")
        .args(["-nostdin", "-hide_banner", "-loglevel", "error", "-y"])
        .args(args)
        .arg(out)
        .status()
        .expect("ffmpeg runs (installed by ops/setup.sh)");
    assert!(status.success(), "ffmpeg {args:?} {} failed", out.display());
}

fn make_cases(dir: &Path) -> Vec<Case> {
    let jfk = paths::corpus_dir().join("audio/en_jfk.wav");
    let jfk_s = jfk.to_str().unwrap();
    let mut cases = Vec::new();
    let mut add = |name: &str, bytes: Vec<u8>, expect: Expect| {
        let file = dir.join(name);
        std::fs::write(&file, bytes).unwrap();
        cases.push(Case { name: name.to_owned(), file, expect });
    };

    add("empty.mp3", Vec::new(), Expect::Refused(EMPTY));
    add("empty.wav", Vec::new(), Expect::Refused(EMPTY));
    for (i, ext) in
        ["mp3", "wav", "mp4", "flac", "ogg", "m4a", "aac", "opus", "wma", "mov", "webm", "mkv"].iter().enumerate()
    {
        add(&format!("random.{ext}"), noise(64 * 1024, i as u64 + 1), Expect::Refused(NOT_MEDIA));
    }
    add("one-byte.wav", vec![0x52], Expect::Refused(NOT_MEDIA));
    add(
        "text.flac",
        b"This is not audio. It is a shopping list: milk, eggs, bread.\n".repeat(200),
        Expect::Refused(NOT_MEDIA),
    );
    add(
        "page.mp3",
        b"<!doctype html><html><head><title>404</title></head><body>Not found</body></html>".to_vec(),
        Expect::Refused(NOT_MEDIA),
    );
    add(
        "subtitles.wav",
        b"1\n00:00:01,000 --> 00:00:02,000\nHello\n\n2\n00:00:03,000 --> 00:00:04,000\nWorld\n".to_vec(),
        Expect::Refused(NOT_MEDIA),
    );
    add("zeros.ogg", vec![0u8; 100_000], Expect::Refused(NOT_MEDIA));
    // Magic numbers followed by garbage.
    let with_magic = |magic: &[u8], seed| [magic, &noise(32 * 1024, seed)[..]].concat();
    add("garbage-after-magic.flac", with_magic(b"fLaC", 21), Expect::Refused(BROKEN));
    add("garbage-after-magic.ogg", with_magic(b"OggS", 22), Expect::Refused(BROKEN));
    add("garbage-after-id3.mp3", with_magic(b"ID3\x03\x00\x00\x00\x00\x00\x10", 23), Expect::Refused(BROKEN));
    add("ftyp-only.mp4", b"\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2".to_vec(), Expect::Refused(BROKEN));
    add(
        "atom-claims-4gb.mp4",
        [&b"\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2\xff\xff\xff\xffmoov"[..], &noise(4096, 24)].concat(),
        Expect::Refused(BROKEN),
    );
    // WAV headers that lie.
    add("header-only.wav", wav_header(16_000, 1, 16, 1, 0), Expect::Refused(EMPTY));
    let mut claims_gigabytes = wav_header(16_000, 1, 16, 1, 0xFFFF_FF00);
    claims_gigabytes.extend(noise(32_000, 25));
    add("claims-4gb.wav", claims_gigabytes, Expect::Refused(CUT_SHORT));
    let mut zero_channels = wav_header(16_000, 0, 16, 1, 32_000);
    zero_channels.extend(vec![0u8; 32_000]);
    add("zero-channels.wav", zero_channels, Expect::Refused(BROKEN));
    let mut zero_rate = wav_header(0, 1, 16, 1, 32_000);
    zero_rate.extend(noise(32_000, 26));
    add("zero-rate.wav", zero_rate, Expect::Refused(BROKEN));
    let mut bad_codec = wav_header(16_000, 1, 16, 0x7777, 32_000);
    bad_codec.extend(noise(32_000, 27));
    add("unknown-codec.wav", bad_codec, Expect::Refused(BROKEN));
    let mut huge_rate = wav_header(u32::MAX / 4, 1, 16, 1, 32_000);
    huge_rate.extend(noise(32_000, 28));
    add("absurd-rate.wav", huge_rate, Expect::Refused(BROKEN));
    // Degenerate but valid audio.
    add("one-sample.wav", wav(16_000, 1, &[1000]), Expect::Refused(NO_SPEECH));
    add("silence-3min.wav", wav(16_000, 1, &vec![0i16; 16_000 * 180]), Expect::Refused(NO_SPEECH));

    // Made with ffmpeg from the corpus.
    let mut made = |name: &str, args: &[&str], expect: Expect| {
        let file = dir.join(name);
        ffmpeg(args, &file);
        cases.push(Case { name: name.to_owned(), file, expect });
    };
    made("speech-8khz-stereo.wav", &["-i", jfk_s, "-ar", "8000", "-ac", "2"], Expect::Transcribed("country"));
    made(
        "video-no-audio.mp4",
        &["-f", "lavfi", "-i", "testsrc=duration=2:size=160x120:rate=10", "-pix_fmt", "yuv420p"],
        Expect::Refused(NO_AUDIO_TRACK),
    );
    made(
        "video-no-audio.mkv",
        &["-f", "lavfi", "-i", "testsrc=duration=2:size=160x120:rate=10", "-c:v", "mpeg4"],
        Expect::Refused(NO_AUDIO_TRACK),
    );
    made(
        "image.m4a",
        &["-f", "lavfi", "-i", "color=c=red:size=64x64", "-frames:v", "1", "-f", "image2", "-c:v", "png"],
        Expect::Refused(NOT_MEDIA),
    );
    let full_m4a = dir.join("full.m4a");
    ffmpeg(&["-i", jfk_s, "-c:a", "aac", "-b:a", "64k"], &full_m4a);
    let full_mp3 = dir.join("full.mp3");
    ffmpeg(&["-i", jfk_s, "-c:a", "libmp3lame", "-b:a", "64k"], &full_mp3);

    let mut cut = |name: &str, from: &Path, keep: f64, expect: Expect| {
        let bytes = std::fs::read(from).unwrap();
        let file = dir.join(name);
        std::fs::write(&file, &bytes[..(bytes.len() as f64 * keep) as usize]).unwrap();
        cases.push(Case { name: name.to_owned(), file, expect });
    };
    cut("truncated.m4a", &full_m4a, 0.4, Expect::Refused(BROKEN));
    cut("truncated.mp3", &full_mp3, 0.3, Expect::Refused(CUT_SHORT));
    cut("truncated.wav", &jfk, 0.3, Expect::Refused(CUT_SHORT));
    // A compression bomb: two hours of digital silence in about a megabyte (last, as it keeps
    // the recognition worker longest).
    let bomb = dir.join("bomb-2h-silence.flac");
    ffmpeg(&["-f", "lavfi", "-i", "anullsrc=r=8000:cl=mono", "-t", "7200", "-c:a", "flac"], &bomb);
    cut("header-of.flac", &bomb, 0.001, Expect::Refused(BROKEN));
    cases.push(Case { name: "bomb-2h-silence.flac".into(), file: bomb, expect: Expect::Refused(NO_SPEECH) });
    cases
}

/// What happened to one upload.
#[derive(Debug)]
enum Outcome {
    Refused { status: u16, body: Value },
    Job(String),
}

#[test]
fn malformed_media_is_refused_or_fails_with_a_clear_message() {
    let home = tempfile::tempdir().unwrap();
    let cases = make_cases(home.path());
    assert!(cases.len() >= 30, "{} cases", cases.len());
    let server = TestServer::start();
    let files = FileServer::start();
    let key = server.key().to_owned();
    let callback = files.callback_url();

    let mut outcomes = Vec::new();
    for case in &cases {
        let started = Instant::now();
        let reply = server.upload(&key, &case.file, &[("language", "en"), ("callbackUrl", &callback)]);
        let took = started.elapsed();
        let outcome = if reply.status == 200 {
            Outcome::Job(reply.json()["jobStatus"]["jobId"].as_str().expect("a jobId").to_owned())
        } else {
            let body = serde_json::from_str(&reply.text).unwrap_or(Value::String(reply.text.clone()));
            Outcome::Refused { status: reply.status, body }
        };
        eprintln!("{:<28} {:>6.2} s  {:?}", case.name, took.as_secs_f64(), outcome);
        outcomes.push(outcome);
    }

    // Every job reaches a final status.
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut problems = Vec::new();
    for (case, outcome) in cases.iter().zip(&outcomes) {
        let (status, message, transcript) = match outcome {
            Outcome::Refused { status, body } => {
                if *status != 400 || body["field"] != "file" {
                    problems.push(format!(
                        "{}: answered {status} {body} (expected 400 on field file, or a job)",
                        case.name
                    ));
                    continue;
                }
                ("REFUSED".to_owned(), body["message"].as_str().unwrap_or_default().to_owned(), String::new())
            }
            Outcome::Job(job_id) => {
                let left = deadline.saturating_duration_since(Instant::now()).max(Duration::from_secs(1));
                let job = wait_final(&server, &key, job_id, left);
                let status = job["status"].as_str().unwrap_or_default().to_owned();
                let transcript = if status == "DONE" {
                    server.get("/jobs/export-txt", &key, &[("jobId", job_id)]).text.to_lowercase()
                } else {
                    String::new()
                };
                // The errorMsg, as the callback tells it (the status has it too once it does).
                let message = match job["errorMsg"].as_str() {
                    Some(m) => m.to_owned(),
                    None if status == "ERROR" => {
                        let payload = files.wait_for_callback(job_id, Duration::from_secs(30));
                        payload["errorMsg"].as_str().unwrap_or_default().to_owned()
                    }
                    None => String::new(),
                };
                (status, message, transcript)
            }
        };
        let lower = message.to_lowercase();
        match (&case.expect, status.as_str()) {
            (Expect::Refused(phrases), "REFUSED" | "ERROR") => {
                if !phrases.iter().any(|p| lower.contains(p)) {
                    problems.push(format!(
                        "{}: {status} with {message:?}; expected a message with one of {phrases:?}",
                        case.name
                    ));
                }
                if let Some(j) = JARGON.iter().find(|j| lower.contains(*j)) {
                    problems.push(format!("{}: the message {message:?} speaks jargon ({j:?})", case.name));
                }
                if message.len() > 400 {
                    problems.push(format!("{}: a {}-character message", case.name, message.len()));
                }
            }
            (Expect::Transcribed(word), "DONE") => {
                if !transcript.contains(word) {
                    problems.push(format!("{}: DONE but the transcript lacks {word:?}: {transcript:?}", case.name));
                }
            }
            (expect, other) => problems.push(format!("{}: ended {other} {message:?}; expected {expect:?}", case.name)),
        }
    }
    let health = server.http().get(server.url("/health")).send().map(|r| r.status().as_u16());
    assert_eq!(health.ok(), Some(200), "the server is unhealthy after the suite\n{}", server.logs());
    assert!(
        problems.is_empty(),
        "{} of {} cases went wrong:\n{}\n{}",
        problems.len(),
        cases.len(),
        problems.join("\n"),
        server.logs()
    );
}

/// Waits until the job is DONE or ERROR; a job still running at the deadline is reported as it is.
fn wait_final(server: &TestServer, key: &str, job_id: &str, timeout: Duration) -> Value {
    let deadline = Instant::now() + timeout;
    loop {
        let job = server.status(key, job_id);
        if job["status"] == "DONE" || job["status"] == "ERROR" || Instant::now() >= deadline {
            return job;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}
