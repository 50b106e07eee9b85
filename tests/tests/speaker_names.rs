//! Names everywhere (issue 43): a speaker renamed through the editor's API (`PUT
//! /api/jobs/document`) is printed by name in export-txt, in export-srt and export-vtt when
//! `includeSpeakers=true` (`Name: ` on the row in SRT, a `<v Name>` voice span in VTT, escaped),
//! and listed by name in export-json; the spec's default SRT and VTT stay without names.

use scribe_tests::{ASR_TIMEOUT, Reply, TestServer, clips, paths};
use serde_json::{Value, json};

/// The new name: `&` must be escaped in WebVTT, and printed as is elsewhere.
const NAME: &str = "Ada & Grace";

fn export(server: &TestServer, key: &str, format: &str, job_id: &str, query: &[(&str, &str)]) -> String {
    let mut query = query.to_vec();
    query.push(("jobId", job_id));
    let reply = server.get(&format!("/jobs/export-{format}"), key, &query);
    assert_eq!(reply.status, 200, "export-{format} {query:?}: {}", reply.text);
    reply.text
}

/// The cues' text rows of an SRT or VTT export (no numbers, times or header).
fn rows(subtitles: &str) -> Vec<&str> {
    subtitles
        .split("\n\n")
        .filter(|cue| cue.contains("-->"))
        .flat_map(|cue| cue.lines().skip_while(|l| !l.contains("-->")).skip(1))
        .collect()
}

/// The first row of each cue.
fn first_rows(subtitles: &str) -> Vec<&str> {
    subtitles.split("\n\n").filter_map(|cue| cue.lines().skip_while(|l| !l.contains("-->")).nth(1)).collect()
}

#[test]
fn a_speaker_renamed_in_the_editor_is_named_in_txt_srt_vtt_and_json() {
    // Given a finished job, its words split by the editor between two speakers: the first
    // renamed, the second left as `Speaker 2`
    let server = TestServer::start();
    let key = server.key().to_owned();
    let job = server.upload_ok(&key, &paths::corpus_file(clips::SHORT), &[("numberOfSpeakers", "1")]);
    let job_id = job["jobId"].as_str().unwrap().to_owned();
    let done = server.wait_for_status(&key, &job_id, &["DONE", "ERROR"], ASR_TIMEOUT);
    assert_eq!(done["status"], "DONE", "{done}");
    let mut document = server.get("/jobs/document", &key, &[("jobId", &job_id)]).ok()["document"].clone();
    let words: Vec<Value> =
        document["segments"].as_array().unwrap().iter().flat_map(|s| s["words"].as_array().unwrap().clone()).collect();
    assert!(words.len() >= 2, "the clip has words for two speakers: {document}");
    let half = words.len() / 2;
    document["speakers"] = json!([{"spkid": "spk1", "name": NAME}, {"spkid": "spk2", "name": "Speaker 2"}]);
    document["segments"] = json!([
        {"speaker": "spk1", "words": words[..half]},
        {"speaker": "spk2", "words": words[half..]},
    ]);

    // When the editor saves it
    let put = server
        .http()
        .put(server.url("/api/jobs/document"))
        .query(&[("apiKey", key.as_str()), ("jobId", job_id.as_str())])
        .json(&document);
    assert_eq!(Reply::send(put).ok()["revision"], 1);

    // Then TXT prints the name, and `Speaker 2` for the other
    let txt = export(&server, &key, "txt", &job_id, &[]);
    let lines: Vec<&str> = txt.lines().filter(|l| l.contains(": ")).collect();
    assert_eq!(lines.len(), 2, "{txt}");
    assert!(lines[0].starts_with(&format!("{NAME}: ")), "{txt}");
    assert!(lines[1].starts_with("Speaker 2: "), "{txt}");

    // SRT: no names by default (the spec's SRT), `Name: ` at each change of speaker when asked,
    // within the 42 characters a row may hold
    let plain = export(&server, &key, "srt", &job_id, &[]);
    assert!(!plain.contains("Ada") && !plain.contains("Speaker"), "{plain}");
    assert_eq!(export(&server, &key, "srt", &job_id, &[("includeSpeakers", "false")]), plain);
    let srt = export(&server, &key, "srt", &job_id, &[("includeSpeakers", "true")]);
    let firsts = first_rows(&srt);
    assert!(firsts[0].starts_with(&format!("{NAME}: ")), "{srt}");
    assert_eq!(firsts.iter().filter(|r| r.starts_with("Speaker 2: ")).count(), 1, "{srt}");
    assert_eq!(firsts.iter().filter(|r| r.contains(": ")).count(), 2, "one label per change of speaker:\n{srt}");
    assert!(rows(&srt).iter().all(|r| r.chars().count() <= 42), "{srt}");

    // VTT: every cue in a voice span naming its speaker, `&` escaped; none by default
    let plain = export(&server, &key, "vtt", &job_id, &[]);
    assert!(!plain.contains("<v "), "{plain}");
    let vtt = export(&server, &key, "vtt", &job_id, &[("includeSpeakers", "true")]);
    let firsts = first_rows(&vtt);
    assert!(firsts[0].starts_with("<v Ada &amp; Grace>"), "{vtt}");
    assert!(firsts.last().unwrap().starts_with("<v Speaker 2>"), "{vtt}");
    assert!(firsts.iter().all(|r| r.starts_with("<v ")), "{vtt}");

    // JSON lists the speakers by name
    let json: Value = serde_json::from_str(&export(&server, &key, "json", &job_id, &[])).unwrap();
    assert_eq!(json["speakers"][0], json!({"spkid": "spk1", "name": NAME}), "{json}");
    assert_eq!(json["speakers"][1]["name"], "Speaker 2");

    // A value that is not a boolean is refused, naming the parameter
    let reply = server.get("/jobs/export-srt", &key, &[("jobId", &job_id), ("includeSpeakers", "maybe")]);
    reply.error(400, Some("includeSpeakers"));
}
