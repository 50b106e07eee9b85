//! Channels as speakers (beyond the spec) over real HTTP: a stereo call built here from two corpus
//! clips, one party per channel and one after the other (left: JFK at 0–11 s; right: a LibriSpeech
//! reader at 12–17.9 s), uploaded with `speakerChannels=true` has two speakers, JFK's words on
//! Speaker 1 and the reader's on Speaker 2; the same file without it follows `numberOfSpeakers`
//! as before. `speakerChannels=true` with a `numberOfSpeakers` is refused naming
//! `speakerChannels`, as is a value that is not a boolean, in the query and in a URL job's body.
//! The operator's `--speaker-channels true` makes channels the default for jobs that leave the
//! parameter out, and `GET /capabilities` says which default a server has.

use std::path::{Path, PathBuf};

use scribe_tests::{ASR_TIMEOUT, Options, TestServer, paths};
use serde_json::{Value, json};

const JFK: &str = "audio/en_jfk.wav";
const READER: &str = "audio/en_librispeech_1272-128104-0000.wav";
/// Where the reader starts on the right channel, and how long the call is.
const READER_AT_S: f64 = 12.0;
const CALL_S: f64 = 19.0;

fn samples(clip: &str) -> Vec<i16> {
    let mut reader = hound::WavReader::open(paths::corpus_file(clip)).expect("a corpus WAV");
    let spec = reader.spec();
    assert_eq!((spec.channels, spec.sample_rate, spec.bits_per_sample), (1, 16_000, 16), "{clip}");
    reader.samples::<i16>().map(|s| s.expect("a sample")).collect()
}

/// The stereo call, written to `dir`: JFK on the left from 0 s, the reader on the right from 12 s.
fn stereo_call(dir: &Path) -> PathBuf {
    let (left, right) = (samples(JFK), samples(READER));
    let offset = (READER_AT_S * 16_000.0) as usize;
    let frames = (CALL_S * 16_000.0) as usize;
    assert!(left.len() < offset && offset + right.len() < frames);
    let path = dir.join("call.wav");
    let spec = hound::WavSpec {
        channels: 2,
        sample_rate: 16_000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut w = hound::WavWriter::create(&path, spec).expect("a WAV file");
    for k in 0..frames {
        w.write_sample(left.get(k).copied().unwrap_or(0)).unwrap();
        w.write_sample(k.checked_sub(offset).and_then(|i| right.get(i)).copied().unwrap_or(0)).unwrap();
    }
    w.finalize().unwrap();
    path
}

/// Uploads `file` with `params`, waits for it, and returns its JSON document and TXT export.
fn transcribe(server: &TestServer, key: &str, file: &Path, params: &[(&str, &str)]) -> (Value, String) {
    let params: Vec<(&str, &str)> = [("language", "en")].into_iter().chain(params.iter().copied()).collect();
    let job = server.upload_ok(key, file, &params);
    let id = job["jobId"].as_str().expect("a jobId").to_owned();
    let done = server.wait_for_status(key, &id, &["DONE", "ERROR"], ASR_TIMEOUT);
    assert_eq!(done["status"], "DONE", "{done}");
    let json = server.get("/jobs/export-json", key, &[("jobId", &id)]).ok();
    let txt = server.get("/jobs/export-txt", key, &[("jobId", &id)]).text;
    for line in server.logs().lines().filter(|l| l.contains("diarized")) {
        eprintln!("{line}");
    }
    (json, txt)
}

/// Each word with its speaker id: (spkid, start, text).
fn words(doc: &Value) -> Vec<(String, f64, String)> {
    let mut all = Vec::new();
    for seg in doc["segments"].as_array().expect("segments") {
        let spk = seg["speaker"].as_str().expect("a speaker").to_owned();
        for w in seg["words"].as_array().expect("words") {
            let text = w["text"].as_str().unwrap_or_default().to_owned();
            all.push((spk.clone(), w["start"].as_f64().expect("a start"), text));
        }
    }
    all
}

/// The call diarized by channel: JFK (left) is Speaker 1, the reader (right) Speaker 2.
fn assert_one_party_per_channel(doc: &Value, txt: &str) {
    let speakers: Vec<(&str, &str)> = doc["speakers"]
        .as_array()
        .expect("speakers")
        .iter()
        .map(|s| (s["spkid"].as_str().unwrap(), s["name"].as_str().unwrap()))
        .collect();
    assert_eq!(speakers, [("spk1", "Speaker 1"), ("spk2", "Speaker 2")], "{}", doc["speakers"]);
    let words = words(doc);
    assert!(words.len() > 25, "{words:?}");
    for (spk, start, text) in &words {
        let expected = if *start < READER_AT_S - 0.5 { "spk1" } else { "spk2" };
        assert_eq!(spk, expected, "{text:?} at {start} s: {words:?}");
    }
    let said = |spk: &str| -> String {
        words.iter().filter(|w| w.0 == spk).map(|w| w.2.to_lowercase()).collect::<Vec<_>>().join(" ")
    };
    assert!(said("spk1").contains("americans") && said("spk1").contains("country"), "{}", said("spk1"));
    assert!(said("spk2").contains("quilter") && said("spk2").contains("gospel"), "{}", said("spk2"));
    let labelled: Vec<&str> = txt.lines().filter(|l| l.starts_with("Speaker ")).collect();
    assert!(labelled.first().is_some_and(|l| l.starts_with("Speaker 1: And so") && l.contains("Americans")), "{txt}");
    assert!(labelled.last().is_some_and(|l| l.starts_with("Speaker 2: ") && l.contains("Quilter")), "{txt}");
}

#[test]
fn a_stereo_call_asked_for_by_channel_has_one_speaker_per_channel() {
    let server = TestServer::start();
    let key = server.key();
    let dir = tempfile::tempdir().unwrap();
    let call = stereo_call(dir.path());
    let capabilities = server.get("/capabilities", key, &[]).ok();
    assert_eq!(capabilities["speakerChannelsByDefault"], false, "{capabilities}");

    // Given the call, when it is uploaded with speakerChannels=true, then each channel is a speaker.
    let (doc, txt) = transcribe(&server, key, &call, &[("speakerChannels", "true")]);
    assert_one_party_per_channel(&doc, &txt);

    // Without it, numberOfSpeakers decides as before: 1 is one speaker.
    let (doc, _) = transcribe(&server, key, &call, &[("numberOfSpeakers", "1")]);
    assert_eq!(doc["speakers"].as_array().expect("speakers").len(), 1, "{}", doc["speakers"]);
    assert!(words(&doc).iter().all(|w| w.0 == "spk1"));
}

#[test]
fn speaker_channels_with_a_number_of_speakers_or_not_a_boolean_is_refused_naming_it() {
    let server = TestServer::start();
    let key = server.key();
    let clip = paths::corpus_file(JFK);
    // The channels are the speakers: a number of speakers beside them is a contradiction.
    for n in ["1", "2"] {
        let body = server
            .upload(key, &clip, &[("speakerChannels", "true"), ("numberOfSpeakers", n)])
            .error(400, Some("speakerChannels"));
        let message = body["message"].as_str().unwrap();
        assert!(message.contains("numberOfSpeakers") && message.contains("the channels are the speakers"), "{message}");
    }
    for bad in ["yes", "1", "TRUE"] {
        let body = server.upload(key, &clip, &[("speakerChannels", bad)]).error(400, Some("speakerChannels"));
        assert_eq!(body["message"], "speakerChannels must be true or false", "{bad}");
    }
    // The same in a URL job's body.
    let url = "http://127.0.0.1:9/call.wav";
    server
        .post_json(
            "/jobs/upload-media-from-url",
            key,
            &json!({"sourceUrl": url, "speakerChannels": true, "numberOfSpeakers": 2}),
        )
        .error(400, Some("speakerChannels"));
    server
        .post_json("/jobs/upload-media-from-url", key, &json!({"sourceUrl": url, "speakerChannels": "true"}))
        .error(400, Some("speakerChannels"));
    // false with a number is voice diarization, as without it; the job records what it was given.
    let job = server.upload_url_ok(key, url, &json!({"speakerChannels": false, "numberOfSpeakers": 2}));
    let id = job["jobId"].as_str().unwrap();
    let replay = server.scribe_ok(&["replay", id]);
    assert!(replay.lines().next().is_some_and(|l| l.contains("speaker_channels=false")), "{replay}");
}

#[test]
fn the_operator_can_make_channels_the_default() {
    let server = TestServer::start_with(Options {
        extra_args: vec!["--speaker-channels".into(), "true".into()],
        ..Options::default()
    });
    let key = server.key();
    let capabilities = server.get("/capabilities", key, &[]).ok();
    assert_eq!(capabilities["speakerChannelsByDefault"], true, "{capabilities}");
    let dir = tempfile::tempdir().unwrap();
    let call = stereo_call(dir.path());
    // Given the call uploaded with neither parameter, then the server's default splits it by channel.
    let (doc, txt) = transcribe(&server, key, &call, &[]);
    assert_one_party_per_channel(&doc, &txt);
}
