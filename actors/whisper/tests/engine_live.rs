//! The engine pieces of a live session, on real speech: samples in memory decode as the file
//! does, and a clip streamed in 100 ms pieces through the VAD and the utterance segmenter, each
//! utterance decoded on its own, reads like the file path's transcript of the same clip.

use std::ops::Range;
use std::path::PathBuf;
use std::sync::OnceLock;

use scribe_whisper::audio::{self, SAMPLE_RATE};
use scribe_whisper::utterances::{self, UtteranceEvent};
use scribe_whisper::{EncoderWindow, Engine, EngineConfig, EngineError, TranscribeOptions, Transcript, Word};

mod common;

fn repo() -> PathBuf {
    PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into()))
        .join("../..")
}

fn clip_path(name: &str) -> PathBuf {
    let dir =
        std::env::var_os("SCRIBE_CORPUS_DIR").map(PathBuf::from).unwrap_or_else(|| repo().join("../shared/corpus"));
    assert!(dir.join("manifest.tsv").is_file(), "speech corpus not found in {} (set SCRIBE_CORPUS_DIR)", dir.display());
    dir.join("audio").join(name)
}

fn engine() -> &'static Engine {
    static BASE: OnceLock<Engine> = OnceLock::new();
    BASE.get_or_init(|| {
        let models = std::env::var_os("SCRIBE_MODELS_DIR").map(PathBuf::from).unwrap_or_else(|| repo().join("models"));
        Engine::load(&EngineConfig {
            model_dir: models.join("whisper-base"),
            vad_path: Some(models.join("silero_vad_16k.safetensors")),
            threads: None,
            compute_type: scribe_whisper::ComputeType::Float16,
            device: Default::default(),
        })
        .unwrap_or_else(|e| panic!("loading whisper-base from {} (set SCRIBE_MODELS_DIR): {e}", models.display()))
    })
}

fn final_options() -> TranscribeOptions {
    TranscribeOptions { language: Some("en".into()), beam_size: 5, word_timestamps: true, ..Default::default() }
}

fn text(t: &Transcript) -> String {
    t.segments.iter().map(|s| s.text.as_str()).collect::<String>().trim().to_string()
}

/// Lowercase words without punctuation.
fn normalized_words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .chars()
        .map(|c| if c.is_alphanumeric() || c == '\'' { c } else { ' ' })
        .collect::<String>()
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// Word error rate of `hyp` against `reference`: word-level edit distance / reference words.
fn wer(reference: &str, hyp: &str) -> f64 {
    let (r, h) = (normalized_words(reference), normalized_words(hyp));
    let mut row: Vec<usize> = (0..=h.len()).collect();
    for (i, rw) in r.iter().enumerate() {
        let mut prev_diag = row[0];
        row[0] = i + 1;
        for (j, hw) in h.iter().enumerate() {
            let substitution = prev_diag + usize::from(rw != hw);
            prev_diag = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[h.len()] as f64 / r.len().max(1) as f64
}

#[test]
fn wer_helper_counts_word_edits() {
    assert_eq!(wer("And so, my fellow Americans", "and so my fellow americans!"), 0.0);
    assert_eq!(wer("a b c d", "a x c"), 0.5);
    assert_eq!(wer("a b", "a b c d"), 1.0);
}

#[test]
fn samples_in_memory_decode_exactly_as_the_file() {
    // Given clips decoded into memory
    for (clip, language) in [("en_jfk.wav", Some("en")), ("en_librispeech_1272-128104-0000.wav", None)] {
        let path = clip_path(clip);
        let samples = audio::decode_all(&path).unwrap();
        let opts = TranscribeOptions { language: language.map(str::to_string), ..final_options() };
        // When transcribed from the file and from memory
        let from_file = engine().transcribe(&path, &opts, &mut |_| {}).unwrap();
        let from_memory = engine().transcribe_samples(&samples, &opts).unwrap();
        // Then every segment, word, time and probability is the same
        assert_eq!(format!("{from_file:?}"), format!("{from_memory:?}"), "{clip}");
        assert_eq!(from_memory.language, "en");
    }
}

#[test]
fn samples_without_speech_or_without_samples_are_errors() {
    let silence = vec![0.0f32; SAMPLE_RATE as usize * 2];
    assert!(matches!(engine().transcribe_samples(&silence, &final_options()), Err(EngineError::NoSpeech)));
    assert!(matches!(
        engine().transcribe_samples(&[], &final_options()),
        Err(EngineError::Audio(audio::AudioError::Empty))
    ));
}

/// Streams `samples` through the engine's VAD and the segmenter in 100 ms pieces, as a live
/// session does; returns the utterances, checking that events come in pairs.
fn utterances_of(samples: &[f32]) -> Vec<Range<usize>> {
    let events = utterances::of_recording(engine().vad().expect("the engine has a VAD"), samples);
    let mut ranges = Vec::new();
    let mut open = None;
    // A pause announced: taken back when speech resumes, or ended with exactly its range.
    let mut pausing = None;
    for event in events {
        match event {
            UtteranceEvent::Started { at_sample } => {
                assert_eq!(open.replace(at_sample), None, "two starts in a row");
            }
            UtteranceEvent::Pausing { range, .. } => {
                assert_eq!(open, Some(range.start), "a pause outside an utterance");
                assert_eq!(pausing.replace(range), None, "two pauses without a resume");
            }
            UtteranceEvent::Resumed => {
                assert!(open.is_some(), "speech resumed outside an utterance");
                assert!(pausing.take().is_some(), "a resume without a pause");
            }
            UtteranceEvent::Ended { range, speech_end } => {
                if let Some(announced) = pausing.take() {
                    // Within the stream (the VAD's last chunk is padded past its end), as a
                    // session holds both.
                    let announced = announced.start..announced.end.min(samples.len());
                    assert_eq!(announced, range, "the pause announced another range than the end's");
                }
                assert_eq!(open.take(), Some(range.start), "an end without its start");
                assert!(range.start < speech_end && speech_end <= range.end, "{range:?} {speech_end}");
                ranges.push(range);
            }
        }
    }
    assert_eq!(open, None);
    ranges
}

/// Decodes each utterance on its own; returns the text and the words on the stream's timeline.
fn decode_live(samples: &[f32], utterances: &[Range<usize>]) -> (String, Vec<Word>) {
    let mut text = String::new();
    let mut words = Vec::new();
    for range in utterances {
        let offset = range.start as f64 / SAMPLE_RATE as f64;
        let t = match engine().transcribe_samples(&samples[range.clone()], &final_options()) {
            Ok(t) => t,
            Err(EngineError::NoSpeech) => continue,
            Err(e) => panic!("{range:?}: {e}"),
        };
        let length = range.len() as f64 / SAMPLE_RATE as f64;
        for w in t.segments.iter().flat_map(|s| &s.words) {
            assert!(w.start >= 0.0 && w.end <= length + 0.02, "{w:?} outside the utterance of {length} s");
            words.push(Word { start: w.start + offset, end: w.end + offset, ..w.clone() });
        }
        text.push(' ');
        text.push_str(&self::text(&t));
    }
    (text.trim().to_string(), words)
}

#[test]
fn a_streamed_clip_reads_like_the_file_path() {
    for clip in ["en_librivox_sense_sensibility_0880.wav", "en_jfk.wav"] {
        // Given a clip, transcribed by the file path
        let path = clip_path(clip);
        let samples = audio::decode_all(&path).unwrap();
        let file_text = text(&engine().transcribe(&path, &final_options(), &mut |_| {}).unwrap());
        // When it is streamed in 100 ms pieces, cut into utterances, and each one decoded
        let utterances = utterances_of(&samples);
        let (live_text, words) = decode_live(&samples, &utterances);
        let rate = wer(&file_text, &live_text);
        eprintln!("{clip}: utterances {utterances:?}\n  file: {file_text}\n  live: {live_text}\n  WER {rate:.3}");
        // Then the words are those of the file path
        assert!(!utterances.is_empty(), "{clip}: no utterance");
        assert!(rate <= 0.05, "{clip}: WER {rate:.3} between\n  file: {file_text}\n  live: {live_text}");
        // And their times run forward inside the clip
        let duration = samples.len() as f64 / SAMPLE_RATE as f64;
        assert!(!words.is_empty());
        for pair in words.windows(2) {
            assert!(pair[1].start >= pair[0].start, "{clip}: {:?} then {:?}", pair[0], pair[1]);
        }
        for w in &words {
            assert!(0.0 <= w.start && w.start <= w.end && w.end <= duration + 0.02, "{clip}: {w:?}");
        }
    }
}

#[test]
fn drafts_read_like_finals_on_clean_speech() {
    // Given the cheap settings meant for partials
    let draft =
        TranscribeOptions { beam_size: 1, word_timestamps: false, temperature_fallback: false, ..final_options() };
    let samples = audio::decode_all(&clip_path("en_jfk.wav")).unwrap();
    // When a clip is decoded with them and with the final settings
    let draft_text = text(&engine().transcribe_samples(&samples, &draft).unwrap());
    let final_text = text(&engine().transcribe_samples(&samples, &final_options()).unwrap());
    // Then the text is nearly the same
    let rate = wer(&final_text, &draft_text);
    assert!(rate <= 0.1, "WER {rate:.3}\n  final: {final_text}\n  draft: {draft_text}");
}

/// Read or clearly spoken speech by adult native speakers: where Whisper base is sure of the
/// words, so another encoding of the same audio must not change them.
const CLEAR_SPEECH: [&str; 6] =
    ["en_librivox", "en_librispeech", "en_jfk", "en_dctts", "en_command", "en_pocketsphinx"];

#[test]
fn a_window_fitted_to_each_utterance_reads_like_the_whole_window() {
    // Given the corpus's real English clips of up to 30 s, cut into utterances as a live session cuts them
    let clips = common::short_english_clips();
    assert!(clips.len() >= 30, "{} clips", clips.len());
    let whole = final_options();
    let fitted = TranscribeOptions { encoder_window: EncoderWindow::fitted(), ..final_options() };
    let (mut references, mut whole_texts, mut fitted_texts) = (Vec::new(), Vec::new(), Vec::new());
    let (mut clear_whole, mut clear_fitted) = (Vec::new(), Vec::new());
    let mut differing = Vec::new();
    for (clip, reference) in &clips {
        let samples = audio::decode_all(&clip_path(clip)).unwrap();
        let clear = CLEAR_SPEECH.iter().any(|c| clip.starts_with(c));
        for range in utterances_of(&samples) {
            // When each utterance is decoded over the whole window and over a window fitted to its speech
            let length = range.len() as f64 / SAMPLE_RATE as f64;
            let decode =
                |options: &TranscribeOptions| match engine().transcribe_samples(&samples[range.clone()], options) {
                    Ok(t) => {
                        for w in t.segments.iter().flat_map(|s| &s.words) {
                            assert!(w.start >= 0.0 && w.end <= length + 0.02, "{clip}: {w:?} outside {length} s");
                        }
                        text(&t)
                    }
                    Err(EngineError::NoSpeech) => String::new(),
                    Err(e) => panic!("{clip} {range:?}: {e}"),
                };
            let (w, f) = (decode(&whole), decode(&fitted));
            if normalized_words(&w) != normalized_words(&f) {
                differing.push(format!("{clip}\n    whole:  {w}\n    fitted: {f}"));
            }
            if clear {
                clear_whole.push(w.clone());
                clear_fitted.push(f.clone());
            }
            whole_texts.push(w);
            fitted_texts.push(f);
        }
        references.push(reference.clone());
    }
    let (reference, whole_text, fitted_text) = (references.join(" "), whole_texts.join(" "), fitted_texts.join(" "));
    let (whole_wer, fitted_wer) = (wer(&reference, &whole_text), wer(&reference, &fitted_text));
    let clear_between = wer(&clear_whole.join(" "), &clear_fitted.join(" "));
    eprintln!(
        "{} clips, {} utterances: WER whole {:.2} %, fitted {:.2} %; on clear speech ({} utterances) fitted \
         against whole {:.2} %; {} utterances differ:\n  {}",
        clips.len(),
        whole_texts.len(),
        whole_wer * 100.0,
        fitted_wer * 100.0,
        clear_whole.len(),
        clear_between * 100.0,
        differing.len(),
        differing.join("\n  ")
    );
    // Then on clear speech the fitted windows give the whole windows' words
    assert!(clear_whole.len() >= 10, "{} utterances of clear speech", clear_whole.len());
    assert!(clear_between <= 0.05, "clear speech, fitted against whole: WER {:.2} %", clear_between * 100.0);
    // And over every clip (non-native speakers and a child included, where any change of the
    // audio changes Whisper's guesses) they lose no accuracy against the references
    assert!(fitted_wer <= whole_wer + 0.01, "WER fitted {fitted_wer:.4} against whole {whole_wer:.4}");
}

#[test]
fn readings_of_speech_are_scored_by_how_likely_the_model_hears_them() {
    // Given jfk's speech
    let samples = audio::decode_all(&clip_path("en_jfk.wav")).unwrap();
    let engine = engine();
    let prefix = "And so my fellow Americans, ask not what your";
    let readings: Vec<String> =
        [" country can do for you", " county can do for you", " country can do for me"].map(String::from).to_vec();
    // When each reading of its end is scored after the words they share
    let scores = engine.likelihoods_of_readings(&samples, "en", prefix, &readings).unwrap();
    // Then the words spoken are likelier than either with a word changed
    assert!(scores[0] > scores[1] && scores[0] > scores[2], "{scores:?}");
    assert!(scores.iter().all(|s| s.is_finite() && *s < 0.0), "{scores:?}");
    // And a reading scores the same alone as beside others (rows of one batch are independent)
    let alone = engine.likelihoods_of_readings(&samples, "en", prefix, &readings[1..2]).unwrap();
    assert!((alone[0] - scores[1]).abs() < 1e-2, "{} against {}", alone[0], scores[1]);
    // And a language the model lacks is an error, not a score
    assert!(matches!(
        engine.likelihoods_of_readings(&samples, "xx", prefix, &readings),
        Err(EngineError::UnsupportedLanguage { .. })
    ));
}
