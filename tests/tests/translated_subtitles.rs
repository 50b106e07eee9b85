//! Direct translatedSubtitles jobs over HTTP with real speech: French speech into English
//! subtitles (Whisper's translate task), English speech into Portuguese subtitles (the Bergamot
//! model `ops/setup.sh` installs), a target the server has no model for refused at submission,
//! every export saying the language of its text, and a Spanish dialogue whose English subtitles
//! keep its two speakers.

use scribe_tests::{ASR_TIMEOUT, TestServer, clips, paths, speech};
use serde_json::{Value, json};

const FRENCH: &str = "audio/fr_command_quelle_heure_est_il.wav";

/// Lower case letters, digits and single spaces only.
fn words_of(text: &str) -> String {
    let cleaned: String =
        text.to_lowercase().chars().map(|c| if c.is_alphanumeric() || c == '\'' { c } else { ' ' }).collect();
    cleaned.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The cues of an SRT file: (start s, end s, rows).
fn srt_cues(srt: &str) -> Vec<(f64, f64, Vec<String>)> {
    let time = |t: &str| -> f64 {
        let (hms, ms) = t.trim().split_once(',').expect("HH:MM:SS,mmm");
        let parts: Vec<f64> = hms.split(':').map(|p| p.parse().unwrap()).collect();
        parts[0] * 3600.0 + parts[1] * 60.0 + parts[2] + ms.parse::<f64>().unwrap() / 1000.0
    };
    srt.replace("\r\n", "\n")
        .split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .map(|block| {
            let mut lines = block.lines();
            lines.next().expect("cue number");
            let (start, end) = lines.next().expect("timing line").split_once(" --> ").expect("-->");
            (time(start), time(end), lines.map(str::to_owned).collect())
        })
        .collect()
}

fn srt_text(srt: &str) -> String {
    srt_cues(srt).into_iter().flat_map(|(_, _, rows)| rows).collect::<Vec<_>>().join(" ")
}

/// Submits `clip` for translated subtitles into `target` and waits for DONE.
fn translate(server: &TestServer, clip: &str, language: &str, target: &str) -> (String, Value) {
    let key = server.key();
    let job = server.upload_ok(
        key,
        &paths::corpus_file(clip),
        &[("language", language), ("transcriptionType", "translatedSubtitles"), ("targetLanguage", target)],
    );
    let id = job["jobId"].as_str().unwrap().to_owned();
    let done = server.wait_for_status(key, &id, &["DONE", "ERROR"], ASR_TIMEOUT);
    assert_eq!(done["status"], "DONE", "{done}\n{}", server.logs());
    assert_eq!(done["targetLanguage"], target, "{done}");
    (id, done)
}

/// Every export of a finished job says `language`: the `Content-Language` header, the JSON
/// document's `language`, the VTT `Language:` line and the EBU-STL language code.
fn assert_exports_say(server: &TestServer, id: &str, language: &str, ebu_code: &str) {
    let key = server.key();
    for format in ["srt", "vtt", "txt", "json"] {
        let reply = server.get(&format!("/jobs/export-{format}"), key, &[("jobId", id)]);
        assert_eq!(reply.status, 200, "{format}: {}", reply.text);
        assert_eq!(reply.header("content-language"), Some(language), "{format} Content-Language");
    }
    let json = server.get("/jobs/export-json", key, &[("jobId", id)]).ok();
    assert_eq!(json["language"], language, "export-json language");
    assert!(json["segments"].as_array().is_some_and(|s| !s.is_empty()), "{json}");
    let vtt = server.get("/jobs/export-vtt", key, &[("jobId", id)]).text;
    assert_eq!(vtt.lines().nth(1), Some(format!("Language: {language}").as_str()), "{vtt}");
    let link = server.get("/jobs/export-stl", key, &[("jobId", id)]).ok();
    let url = link["downloadUrl"].as_str().expect("downloadUrl");
    let stl = server.http().get(url).send().unwrap().bytes().unwrap();
    assert_eq!(&stl[3..11], b"STL25.01", "an EBU-STL file");
    assert_eq!(&stl[14..16], ebu_code.as_bytes(), "GSI language code");
}

#[test]
fn french_speech_becomes_english_subtitles_that_keep_the_meaning() {
    let server = TestServer::start();
    let (id, done) = translate(&server, FRENCH, "fr", "en");
    assert_eq!(done["language"], "fr", "the job's language stays the spoken one: {done}");
    let srt = server.get("/jobs/export-srt", server.key(), &[("jobId", &id)]);
    assert_eq!(srt.status, 200, "{}", srt.text);
    let text = words_of(&srt_text(&srt.text));
    assert!(text.contains("what time is it"), "English subtitles of 'quelle heure est-il': {:?}", srt.text);
    for (start, end, rows) in srt_cues(&srt.text) {
        assert!(0.0 <= start && start < end && end <= 2.44 + 1.5, "cue {start}..{end} {rows:?} outside the clip");
    }
    assert_exports_say(&server, &id, "en", "09");

    // Into Portuguese, through Whisper's English: "what time is it" -> "que horas são".
    let (id, _) = translate(&server, FRENCH, "auto", "pt");
    let srt = server.get("/jobs/export-srt", server.key(), &[("jobId", &id)]);
    assert!(words_of(&srt_text(&srt.text)).contains("horas"), "{:?}", srt.text);
}

#[test]
fn english_speech_becomes_portuguese_subtitles_laid_out_like_captions() {
    let server = TestServer::start();
    let (id, _) = translate(&server, clips::JFK, "en", "pt");
    let key = server.key();
    let srt =
        server.get("/jobs/export-srt", key, &[("jobId", &id), ("maxCharsPerRow", "37"), ("maxNumberOfRows", "2")]);
    assert_eq!(srt.status, 200, "{}", srt.text);
    let text = words_of(&srt_text(&srt.text));
    assert!(text.contains("país"), "Portuguese for 'your country': {:?}", srt.text);
    assert!(
        !text.contains("country") && !text.contains("americans"),
        "the translation, not the transcript: {:?}",
        srt.text
    );
    let cues = srt_cues(&srt.text);
    assert!(cues.len() >= 2, "{}", srt.text);
    let mut previous_end = 0.0;
    for (start, end, rows) in &cues {
        assert!((1..=2).contains(&rows.len()), "{rows:?}");
        assert!(rows.iter().all(|r| r.chars().count() <= 37), "a row over 37 characters: {rows:?}");
        assert!(
            *start >= previous_end && start < end && *end <= 11.0 + 1.5,
            "cue {start}..{end} out of order or outside the speech"
        );
        previous_end = *end;
    }
    // The source transcript of the job is still English; its exports are the translation.
    let json = server.get("/jobs/export-json", key, &[("jobId", &id)]).ok();
    let words: Vec<&str> =
        json["segments"][0]["words"].as_array().unwrap().iter().map(|w| w["text"].as_str().unwrap()).collect();
    assert!(words.iter().any(|w| w.to_lowercase().starts_with("país")), "{words:?}");
    assert_exports_say(&server, &id, "pt", "21");
}

#[test]
fn a_target_without_a_model_is_refused_naming_what_the_server_can_do() {
    let server = TestServer::start();
    let key = server.key();
    let caps = server.get("/capabilities", key, &[]).ok();
    assert_eq!(caps["directTranslationTargets"], json!(["en", "pt"]), "{caps}");
    let auto = caps["autoDetectLanguages"].as_array().unwrap();
    for code in ["en", "nl", "de", "fr", "it", "es", "af-za"] {
        assert!(auto.iter().any(|l| l == code), "{code} missing from {caps}");
    }
    assert_eq!(caps["multilingualSpeech"], true);
    // The speech models by name, the default (base) first, and the precision they run at.
    let models = caps["speechModels"].as_array().unwrap();
    assert_eq!(models[0]["name"], "whisper-base", "{caps}");
    assert_eq!(models[0]["default"], true);
    assert_eq!(models[0]["weights"], "float16");
    assert!(models.iter().any(|m| m["name"] == "whisper-tiny.en" && m["multilingual"] == false), "{caps}");
    assert_eq!(caps["computeType"], "int8");
    assert_eq!(caps["device"], "cpu");
    assert!(caps["asrLanguages"].as_array().unwrap().iter().any(|l| l == "fr"), "{caps}");

    let query = [("transcriptionType", "translatedSubtitles"), ("targetLanguage", "fr")];
    let refused = server.upload(key, &paths::corpus_file(clips::SHORT), &query);
    let body = refused.error(400, Some("targetLanguage"));
    let message = body["message"].as_str().unwrap();
    assert!(message.contains("fr") && message.contains("en, pt"), "{message}");
    let by_url = server.post_json(
        "/jobs/upload-media-from-url",
        key,
        &json!({"sourceUrl": "http://127.0.0.1:9/a.wav", "transcriptionType": "translatedSubtitles", "targetLanguage": "sv"}),
    );
    by_url.error(400, Some("targetLanguage"));
    assert!(server.list_jobs(key, &[]).is_empty(), "a refused job is never accepted");
    // Manual (human) translation is not limited by the models.
    let manual = server.upload_ok(
        key,
        &paths::corpus_file(clips::SHORT),
        &[("jobType", "perfect"), ("transcriptionType", "translatedSubtitles"), ("targetLanguage", "fr")],
    );
    assert_eq!(manual["targetLanguage"], "fr");
}

#[test]
fn a_transcript_export_says_its_language_too() {
    let server = TestServer::start();
    let key = server.key();
    let job = server.upload_ok(key, &paths::corpus_file(FRENCH), &[("language", "auto")]);
    let id = job["jobId"].as_str().unwrap();
    let done = server.wait_for_status(key, id, &["DONE", "ERROR"], ASR_TIMEOUT);
    assert_eq!(done["status"], "DONE", "{done}");
    assert_eq!(done["language"], "fr", "detected: {done}");
    assert_exports_say(&server, id, "fr", "0F");
}

/// The English subtitles of a Spanish dialogue keep who said what: Whisper's translation takes
/// the speakers of the diarized transcript by time. The corpus has no dialogue in another
/// language, so espeak-ng speaks one in two voices (Pedro 0–6.4 s and 13.7–19 s, María
/// 7.2–12.9 s and 19.8–23.9 s).
#[test]
fn a_spanish_dialogue_keeps_its_two_speakers_in_english() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let turns = [
        ("es", "Buenos días a todos. Me llamo Pedro y trabajo en la estación de Madrid desde hace diez años."),
        ("es+f3", "Mucho gusto, Pedro. Yo soy María y vivo en Barcelona, cerca del puerto."),
        ("es", "Barcelona es una ciudad muy bonita. Voy allí cada verano con mi familia."),
        ("es+f3", "Entonces venid a vernos el año que viene y comeremos una paella."),
    ];
    let wav = speech::dialogue(dir.path(), "es_dialogue.wav", &turns, 0.8);
    let server = TestServer::start();
    let key = server.key();
    let query = [("language", "es"), ("transcriptionType", "translatedSubtitles"), ("targetLanguage", "en")];
    let job = server.upload_ok(key, &wav, &query);
    let id = job["jobId"].as_str().unwrap().to_owned();
    let done = server.wait_for_status(key, &id, &["DONE", "ERROR"], ASR_TIMEOUT);
    assert_eq!(done["status"], "DONE", "{done}");

    let json = server.get("/jobs/export-json", key, &[("jobId", &id)]).ok();
    assert_eq!(json["language"], "en", "the English subtitles: {json}");
    let speakers: Vec<&str> =
        json["speakers"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(speakers, ["Speaker 1", "Speaker 2"], "{json}");
    // (time of the word's middle, speaker) for every English word
    let words: Vec<(f64, &str)> = json["segments"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| {
            let speaker = s["speaker"].as_str().unwrap();
            s["words"]
                .as_array()
                .unwrap()
                .iter()
                .map(move |w| ((w["start"].as_f64().unwrap() + w["end"].as_f64().unwrap()) / 2.0, speaker))
        })
        .collect();
    let speaker_at = |t: f64| words.iter().min_by(|a, b| (a.0 - t).abs().total_cmp(&(b.0 - t).abs())).expect("words").1;
    let (pedro, maria) = (speaker_at(3.0), speaker_at(10.0));
    assert_ne!(pedro, maria, "two voices, two speakers: {words:?}");
    assert_eq!((speaker_at(16.0), speaker_at(22.0)), (pedro, maria), "each keeps their voice: {words:?}");
    let txt = server.get("/jobs/export-txt", key, &[("jobId", &id)]).text;
    assert!(txt.contains("Speaker 1:") && txt.contains("Speaker 2:"), "{txt}");
}
