//! The engine never writes down twice what was said once.
//!
//! A decoder that loops ("… to prevent infection of others to prevent infection of others …")
//! or that reads back the sentence before it when a window's rest is decoded again puts text
//! nobody said into subtitles. These tests hold the default engine (base, int8, voice
//! detection) to the corpus's references: no run of four words may come back more often than
//! its reference holds it, and no segment may repeat text written before it that the speaker
//! did not repeat; on every clip alone, on recordings joined from them (both decoding paths),
//! and wherever a window happens to end inside a sentence.

use std::path::Path;
use std::sync::OnceLock;

use scribe_whisper::audio::{self, SAMPLE_RATE};
use scribe_whisper::repetition::{self, repeated_insertions};
use scribe_whisper::vad::VadParams;
use scribe_whisper::{ComputeType, Engine, TranscribeOptions, Transcript};

mod common;
use common::{corpus, write_wav};

/// A clip of the corpus with its reference.
struct Clip {
    file: String,
    language: String,
    reference: String,
}

/// The corpus's speech clips with a transcript (not the format variants, not the long-form
/// recordings, not the synthetic voices), in manifest order.
fn clips() -> Vec<Clip> {
    common::manifest()
        .into_iter()
        .filter(|r| {
            r.tasks.iter().any(|t| t == "asr") && !r.tasks.iter().any(|t| t == "longform") && r.is_real_with_reference()
        })
        .map(|r| Clip { file: r.file, language: r.language, reference: r.transcript })
        .collect()
}

/// The default engine: base at the default compute type, with voice detection.
fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| common::engine("whisper-base", ComputeType::Int8))
}

fn transcribe(path: &Path, opts: &TranscribeOptions) -> Transcript {
    engine().transcribe(path, opts, &mut |_| {}).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn text(t: &Transcript) -> String {
    t.segments.iter().map(|s| s.text.trim()).collect::<Vec<_>>().join(" ")
}

/// What `t` writes again where its audio holds nothing (by the reference): runs of four words
/// repeated among inserted words ([`repeated_insertions`]), and segments of four words or more
/// that repeat text written before them and align with no word of the reference.
fn invented_repeats(t: &Transcript, reference: &str) -> Vec<String> {
    let mut found: Vec<String> = repeated_insertions(&text(t), reference)
        .into_iter()
        .map(|(g, hyp, refs)| format!("\"{g}\" {hyp}× (said {refs}×)"))
        .collect();
    let all = repetition::words(&text(t));
    let inserted = repetition::insertions(&all, &repetition::words(reference));
    let mut at = 0;
    for (i, s) in t.segments.iter().enumerate() {
        let w = repetition::words(&s.text);
        let earlier = &all[..at];
        let repeats = w.len() >= repetition::N && earlier.windows(w.len()).any(|e| e == w.as_slice());
        if repeats && inserted[at..at + w.len()].iter().all(|&x| x) {
            found.push(format!(
                "segment {i} ({:.2}–{:.2} s) \"{}\" repeats earlier text",
                s.start,
                s.end,
                s.text.trim()
            ));
        }
        at += w.len();
    }
    found
}

#[test]
fn no_clip_comes_back_with_text_its_speaker_did_not_repeat() {
    // given every clip of the corpus, transcribed as `scribe transcribe --language auto` does
    let opts = TranscribeOptions::default();
    let mut failures = Vec::new();
    for clip in clips() {
        // when it is transcribed alone
        let t = transcribe(&corpus().join(&clip.file), &opts);
        // then nothing in it is repeated beyond what its reference repeats
        let repeats = invented_repeats(&t, &clip.reference);
        if !repeats.is_empty() {
            failures.push(format!("{} ({}): {}\n  {}", clip.file, clip.language, repeats.join("; "), text(&t)));
        }
    }
    assert!(failures.is_empty(), "text written more often than it was said:\n{}", failures.join("\n"));
}

/// The English clips joined by 0.7 s pauses into one recording at `path`; its reference.
fn joined(path: &Path, clips: &[Clip]) -> String {
    let pause = vec![0.0f32; SAMPLE_RATE as usize * 7 / 10];
    let mut samples = Vec::new();
    for clip in clips {
        samples.extend(audio::decode_all(&corpus().join(&clip.file)).unwrap());
        samples.extend_from_slice(&pause);
    }
    write_wav(path, &samples);
    clips.iter().map(|c| c.reference.as_str()).collect::<Vec<_>>().join(" ")
}

#[test]
fn a_recording_joined_from_the_clips_repeats_nothing_on_either_path() {
    // given the English clips joined into one recording of about five minutes
    let english: Vec<Clip> = clips().into_iter().filter(|c| c.language == "en").collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("joined.wav");
    let reference = joined(&path, &english);
    for batch_size in [1, 0] {
        // when it is decoded sequentially, and in batches (the engine's choice for it)
        let opts = TranscribeOptions { language: Some("en".into()), batch_size, ..Default::default() };
        let t = transcribe(&path, &opts);
        // then nothing is written more often than it was said
        let repeats = invented_repeats(&t, &reference);
        assert!(repeats.is_empty(), "batch_size {batch_size}: {}\n{}", repeats.join("\n"), text(&t));
    }
}

/// Seconds of speech (by the engine's voice detection) in `path` before `t` seconds: where `t`
/// falls on the timeline the windows are cut from.
fn speech_before(path: &Path, t: f64) -> f64 {
    let spans = engine().speech_spans(path, &VadParams::default()).unwrap();
    spans.iter().map(|s| (s.end.min(t) - s.start).max(0.0)).sum()
}

#[test]
fn a_sentence_reads_the_same_wherever_a_window_ends_inside_it() {
    // given a read sentence of 9.4 s after 20.5 s of other speech and before more, the pauses between the
    // first three clips (under the 2 s that end a stretch of speech) lengthened so that the
    // first 30 s window ends at a different place inside the sentence each time
    let sentence = "audio/en_dctts_reader_LJ002-0025.wav";
    let reference = clips().into_iter().find(|c| c.file == sentence).expect("the sentence is in the corpus").reference;
    let lead: Vec<Vec<f32>> =
        ["audio/en_jfk.wav", "audio/en_librispeech_1272-128104-0000.wav", "audio/en_dctts_reader_LJ002-0007.wav"]
            .iter()
            .map(|f| audio::decode_all(&corpus().join(f)).unwrap())
            .collect();
    let clip = audio::decode_all(&corpus().join(sentence)).unwrap();
    let after = audio::decode_all(&corpus().join("audio/en_dctts_reader_LJ002-0039.wav")).unwrap();
    let sr = SAMPLE_RATE as f64;
    let dir = tempfile::tempdir().unwrap();
    let mut readings: Vec<(f64, Vec<String>)> = Vec::new();
    for pause_s in [0.1, 0.7, 1.3] {
        let mut samples = Vec::new();
        for (i, l) in lead.iter().enumerate() {
            samples.extend_from_slice(l);
            // (the last clip's own silence and the sentence's make a pause the VAD takes out)
            let pause = if i + 1 < lead.len() { pause_s } else { 0.2 };
            samples.extend(std::iter::repeat_n(0.0, (pause * sr) as usize));
        }
        let start = samples.len() as f64 / sr;
        let end = start + clip.len() as f64 / sr;
        samples.extend_from_slice(&clip);
        samples.extend(std::iter::repeat_n(0.0, (0.2 * sr) as usize));
        samples.extend_from_slice(&after);
        let path = dir.path().join(format!("pauses_{pause_s}s.wav"));
        write_wav(&path, &samples);
        let window_end_in = 30.0 - speech_before(&path, start);
        let inside = window_end_in > 0.5 && window_end_in < clip.len() as f64 / sr - 0.2;
        assert!(inside, "the first window ends {window_end_in:.2} s into the sentence");
        // when each is transcribed, in 30 s windows each prompted with the text before it
        // (and in chunks cut at the VAD's pauses, the engine's choice for it)
        for batch_size in [1, 0] {
            let opts = TranscribeOptions { language: Some("en".into()), batch_size, ..Default::default() };
            let t = transcribe(&path, &opts);
            let said: Vec<String> = t
                .segments
                .iter()
                .flat_map(|s| &s.words)
                .filter(|w| (start..end).contains(&((w.start + w.end) / 2.0)))
                .flat_map(|w| repetition::words(&w.text))
                .collect();
            // then the sentence repeats nothing of itself
            let repeats = repeated_insertions(&said.join(" "), &reference);
            let place = format!("batch_size {batch_size}, window ending {window_end_in:.2} s in");
            assert!(repeats.is_empty(), "{place}: {repeats:?}\n{}", said.join(" "));
            if batch_size == 1 {
                readings.push((window_end_in, said));
            }
        }
    }
    // and in windows it reads the same words wherever the first window ended (in chunks it
    // does not yet: a chunk cut at a comma's pause hears "six thousand, four hundred
    // thirty-nine" as "6000" and "439")
    let (first_in, first) = &readings[0];
    for (window_end_in, said) in &readings[1..] {
        assert!(
            (window_end_in - first_in).abs() > 1.0,
            "the windows end {first_in:.2} and {window_end_in:.2} s into the sentence: move them apart"
        );
        // (letters compared, not where the words break: "new gate" and "Newgate" read alike)
        assert_eq!(said.concat(), first.concat(), "a window ending {window_end_in:.2} s in against {first_in:.2} s in");
    }
}
