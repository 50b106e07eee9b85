//! Speakers of direct jobs over real HTTP: the corpus's two-voice clip (espeak-ng, two voices
//! taking turns, reference turns in `audio/ref/`) uploaded with `numberOfSpeakers=2` comes back
//! with two speakers whose segments follow the reference turns, in JSON and TXT; with
//! `numberOfSpeakers=1` the same clip is one speaker (diarization skipped). A number given is
//! the number of speakers (a three-speaker meeting excerpt asked for 3 has 3); left out, the
//! default 2 is a bound (a monologue stays one speaker).

use scribe_tests::{ASR_TIMEOUT, TestServer, paths};
use serde_json::Value;

const TWO_VOICES: &str = "audio/en_synth_gettysburg_2voices.wav";

fn transcribe(server: &TestServer, key: &str, speakers: &str) -> (Value, String) {
    transcribe_clip(server, key, TWO_VOICES, &[("numberOfSpeakers", speakers)])
}

fn transcribe_clip(server: &TestServer, key: &str, clip: &str, params: &[(&str, &str)]) -> (Value, String) {
    let params: Vec<(&str, &str)> = [("language", "en")].into_iter().chain(params.iter().copied()).collect();
    let job = server.upload_ok(key, &paths::corpus_file(clip), &params);
    let id = job["jobId"].as_str().expect("a jobId").to_owned();
    let done = server.wait_for_status(key, &id, &["DONE", "ERROR"], ASR_TIMEOUT);
    assert_eq!(done["status"], "DONE", "{done}");
    let json = server.get("/jobs/export-json", key, &[("jobId", &id)]).ok();
    let txt = server.get("/jobs/export-txt", key, &[("jobId", &id)]).text;
    // For the record (`--nocapture`): how long recognition and diarization took.
    for line in server.logs().lines().filter(|l| l.contains("diarized") || l.contains("transcrib")) {
        eprintln!("{line}");
    }
    (json, txt)
}

/// Reference turns: (start, end, speaker label).
fn reference() -> Vec<(f64, f64, String)> {
    let text = std::fs::read_to_string(paths::corpus_file("audio/ref/en_synth_gettysburg_2voices.turns.tsv"))
        .expect("reference turns");
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            Some((f.first()?.parse().ok()?, f.get(1)?.parse().ok()?, f.get(2)?.to_string()))
        })
        .collect()
}

#[test]
fn two_voices_get_two_speakers_in_json_and_txt() {
    let server = TestServer::start();
    let key = server.key();
    let (json, txt) = transcribe(&server, key, "2");

    let speakers = json["speakers"].as_array().expect("speakers");
    assert_eq!(speakers.len(), 2, "{}", json["speakers"]);
    let ids: Vec<&str> = speakers.iter().map(|s| s["spkid"].as_str().unwrap()).collect();
    assert_eq!(speakers[0]["name"], "Speaker 1");
    assert_eq!(speakers[1]["name"], "Speaker 2");

    // Every segment is one declared speaker; the words of a segment lie in one reference turn's
    // speaker, for nearly all the words (the mapping speaker → reference voice is found first).
    let reference = reference();
    let voice_at = |t: f64| reference.iter().find(|r| r.0 - 0.3 <= t && t <= r.1 + 0.3).map(|r| r.2.clone());
    let mut agree = [[0usize; 2]; 2]; // [our speaker][reference S1/S2]
    let segments = json["segments"].as_array().expect("segments");
    let mut changes = 0;
    let mut last: Option<&str> = None;
    for seg in segments {
        let spk = seg["speaker"].as_str().expect("segment speaker");
        let ours = ids.iter().position(|i| *i == spk).expect("segment speaker is declared");
        if last.is_some_and(|l| l != spk) {
            changes += 1;
        }
        last = Some(spk);
        for w in seg["words"].as_array().expect("words") {
            let mid = (w["start"].as_f64().unwrap() + w["end"].as_f64().unwrap()) / 2.0;
            match voice_at(mid).as_deref() {
                Some("S1") => agree[ours][0] += 1,
                Some("S2") => agree[ours][1] += 1,
                _ => {}
            }
        }
    }
    let total: usize = agree.iter().flatten().sum();
    let right = (agree[0][0] + agree[1][1]).max(agree[0][1] + agree[1][0]);
    assert!(total > 200, "words with a reference voice: {total}");
    assert!(right as f64 >= 0.95 * total as f64, "words on the right speaker: {right} of {total} ({agree:?})");
    // The reference has 9 turns, so 8 changes; allow a stray short segment or two.
    assert!((8..=12).contains(&changes), "speaker changes between segments: {changes}");

    let labelled: Vec<&str> = txt.lines().filter(|l| l.starts_with("Speaker ")).collect();
    assert!(labelled.iter().any(|l| l.starts_with("Speaker 1: ")), "{txt}");
    assert!(labelled.iter().any(|l| l.starts_with("Speaker 2: ")), "{txt}");
    assert!(labelled.iter().all(|l| l.starts_with("Speaker 1: ") || l.starts_with("Speaker 2: ")), "{txt}");
    assert!(txt.lines().next().is_some_and(|l| l.len() == 8), "a timestamp line first: {txt}");

    // Subtitles never put two speakers in one cue: each SRT cue's words come from one segment.
    let srt = server.get("/jobs/export-srt", key, &[("jobId", json["id"].as_str().unwrap())]).text;
    assert!(srt.matches(" --> ").count() > 10, "{srt}");
}

#[test]
fn one_speaker_when_the_client_says_so() {
    let server = TestServer::start();
    let key = server.key();
    let (json, txt) = transcribe(&server, key, "1");
    let speakers = json["speakers"].as_array().expect("speakers");
    assert_eq!(speakers.len(), 1, "{}", json["speakers"]);
    let spk = speakers[0]["spkid"].as_str().unwrap();
    assert!(json["segments"].as_array().unwrap().iter().all(|s| s["speaker"] == spk));
    assert!(txt.lines().filter(|l| l.starts_with("Speaker ")).all(|l| l.starts_with("Speaker 1: ")), "{txt}");
}

/// The number given is the number of speakers: the AMI excerpt with three people (two of them
/// briefly) asked for 3 comes back with 3.
#[test]
fn the_number_given_is_the_number_of_speakers() {
    let server = TestServer::start();
    let key = server.key();
    let (json, _) = transcribe_clip(&server, key, "audio/en_ami_pyannote_trn04.wav", &[("numberOfSpeakers", "3")]);
    let speakers = json["speakers"].as_array().expect("speakers");
    assert_eq!(speakers.len(), 3, "{}", json["speakers"]);
}

/// Left out, `numberOfSpeakers` is the spec's default 2, as a bound: one voice is one speaker.
#[test]
fn the_default_is_a_bound_and_a_monologue_stays_one_speaker() {
    let server = TestServer::start();
    let key = server.key();
    let (json, txt) = transcribe_clip(&server, key, scribe_tests::clips::JFK, &[]);
    assert_eq!(json["speakers"].as_array().expect("speakers").len(), 1, "{}", json["speakers"]);
    assert!(txt.lines().filter(|l| l.starts_with("Speaker ")).all(|l| l.starts_with("Speaker 1: ")), "{txt}");
}
