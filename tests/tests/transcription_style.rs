//! `transcriptionStyle` over HTTP on the corpus's real disfluent speech (the manifest rows whose
//! reference is kept verbatim): `verbatim` keeps more of the reference's fillers than
//! `cleanread`, and the clean-read text has none. Clean read removes only the spoken language's
//! own hesitations: German and Dutch speech keeps its "er" and "um", which are English fillers.

use std::collections::HashMap;

use scribe_domain::fillers::is_filler;
use scribe_domain::languages::Language;
use scribe_tests::{ASR_TIMEOUT, TestServer, paths, speech};

/// `(file, reference)` of every corpus clip whose notes say the reference is verbatim.
fn verbatim_clips() -> Vec<(String, String)> {
    let manifest = std::fs::read_to_string(paths::corpus_dir().join("manifest.tsv")).unwrap();
    let mut lines = manifest.lines();
    let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no {name} column"));
    let (file, transcript, notes) = (col("file"), col("transcript"), col("notes"));
    lines
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .filter(|r| r.len() > notes && r[notes].to_lowercase().contains("verbatim") && !r[transcript].is_empty())
        .map(|r| (r[file].to_owned(), r[transcript].to_owned()))
        .collect()
}

/// One spelling per hesitation sound ("umm" counts as "um", "hmm" as "hm").
fn family(word: &str) -> String {
    let w: String = word.to_lowercase().chars().filter(|c| c.is_alphabetic()).collect();
    match w.as_str() {
        "umm" | "ummm" | "uhm" => "um".into(),
        "uhh" => "uh".into(),
        "hmm" | "hmmm" => "hm".into(),
        "mmm" => "mm".into(),
        "erm" | "ehm" => "er".into(),
        _ => w,
    }
}

fn filler_counts<'a>(words: impl Iterator<Item = &'a str>) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    let english = Language::from_whisper("en").expect("English");
    for w in words.filter(|w| is_filler(w, english)) {
        *counts.entry(family(w)).or_insert(0) += 1;
    }
    counts
}

/// Fillers of the reference that the transcript also has (per kind, at most as many as said).
fn kept(reference: &HashMap<String, usize>, transcript: &HashMap<String, usize>) -> usize {
    reference.iter().map(|(k, n)| (*n).min(transcript.get(k).copied().unwrap_or(0))).sum()
}

fn transcript_words(server: &TestServer, file: &str, style: &str) -> Vec<String> {
    words_of(server, &paths::corpus_file(file), "en", style)
}

/// The words of the transcript of `file` spoken in `language`, in `style`.
fn words_of(server: &TestServer, file: &std::path::Path, language: &str, style: &str) -> Vec<String> {
    let key = server.key();
    let job = server.upload_ok(key, file, &[("language", language), ("transcriptionStyle", style)]);
    let id = job["jobId"].as_str().unwrap();
    let done = server.wait_for_status(key, id, &["DONE", "ERROR"], ASR_TIMEOUT);
    assert_eq!(done["status"], "DONE", "{style}: {done}");
    let json = server.get("/jobs/export-json", key, &[("jobId", id)]).ok();
    json["segments"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["words"].as_array().unwrap().iter().map(|w| w["text"].as_str().unwrap().to_owned()))
        .collect()
}

#[test]
fn verbatim_keeps_the_fillers_that_cleanread_removes() {
    let clips = verbatim_clips();
    assert!(!clips.is_empty(), "the corpus has clips with verbatim references");
    let server = TestServer::start();
    for (file, reference) in clips {
        let said = filler_counts(reference.split_whitespace());
        assert!(!said.is_empty(), "{file}: the verbatim reference has fillers");
        let verbatim = transcript_words(&server, &file, "verbatim");
        let cleanread = transcript_words(&server, &file, "cleanread");
        let verbatim_kept = kept(&said, &filler_counts(verbatim.iter().map(String::as_str)));
        let clean_fillers = filler_counts(cleanread.iter().map(String::as_str));
        eprintln!(
            "{file}\n  reference fillers {said:?}\n  verbatim:  {}\n  cleanread: {}",
            verbatim.join(" "),
            cleanread.join(" ")
        );
        assert!(clean_fillers.is_empty(), "{file}: clean read has fillers {clean_fillers:?}: {}", cleanread.join(" "));
        assert!(
            verbatim_kept > kept(&said, &clean_fillers),
            "{file}: verbatim keeps {verbatim_kept} of the reference's fillers {said:?}, no more than clean read: {}",
            verbatim.join(" ")
        );
    }
}

/// How often `word` (any case, without punctuation) occurs in `words`.
fn count(words: &[String], word: &str) -> usize {
    words.iter().filter(|w| w.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase() == word).count()
}

#[test]
fn cleanread_keeps_german_and_dutch_words_that_english_says_as_fillers() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let server = TestServer::start();
    let german = speech::spoken(
        dir.path(),
        "de_ecke.wav",
        "de",
        "Er ging um die Ecke und er wartete dort um acht Uhr auf seinen Freund.",
    );
    let words = words_of(&server, &german, "de", "cleanread");
    eprintln!("German clean read: {}", words.join(" "));
    assert!(
        count(&words, "er") >= 2 && count(&words, "um") >= 1,
        "German \"er\" (he) and \"um\" (around) are kept: {words:?}"
    );
    // espeak-ng's default Dutch voice is hard for Whisper base to follow; its third male voice is not.
    let dutch = speech::spoken(
        dir.path(),
        "nl_probleem.wav",
        "nl+m3",
        "Er is een probleem. Er staat een man voor de deur. Is er nog koffie?",
    );
    let words = words_of(&server, &dutch, "nl", "cleanread");
    eprintln!("Dutch clean read: {}", words.join(" "));
    assert!(count(&words, "er") >= 2, "Dutch \"er\" (there) is kept: {words:?}");
}
