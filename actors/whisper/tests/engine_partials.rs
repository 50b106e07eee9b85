//! A live partial's encoder window: a decoding over the window fitted to half a second of speech
//! often fails the checks, and a partial keeps it (the next partial or the final replaces it), a
//! decoding that repeats itself up to its loop, instead of encoding the whole 30 s window again.
//! One test in its own binary: it reads the engine's global profile counters.

use scribe_whisper::audio::{self, SAMPLE_RATE};
use scribe_whisper::utterances::{self, UtteranceEvent};
use scribe_whisper::{ComputeType, EncoderWindow, EngineError, TranscribeOptions, profile, repetition};

mod common;

#[test]
fn a_partials_failed_fitted_decoding_is_kept_without_its_loop_never_decoded_again_whole() {
    // Given the first half second (the pre-roll included) of each utterance of the corpus's real
    // English clips, as a live session's first partial
    let engine = common::engine("whisper-base", ComputeType::Int8);
    let vad = engine.vad().expect("loaded with the VAD");
    let partial = common::live_partial_options();
    let again_whole = TranscribeOptions { encoder_window: EncoderWindow::fitted(), ..partial.clone() };
    let decode = |samples: &[f32], options: &TranscribeOptions| match engine.transcribe_samples(samples, options) {
        Ok(t) => t.segments.iter().map(|s| s.text.trim()).collect::<Vec<_>>().join(" "),
        Err(EngineError::NoSpeech) => String::new(),
        Err(e) => panic!("{e}"),
    };
    profile::enable();
    let (mut prefixes, mut failed, mut kept) = (0, 0, 0);
    for (clip, _) in common::short_english_clips() {
        let samples = audio::decode_all(&common::corpus().join("audio").join(&clip)).unwrap();
        for event in utterances::of_recording(vad, &samples) {
            let UtteranceEvent::Ended { range, .. } = event else { continue };
            let prefix = range.start..range.start + SAMPLE_RATE as usize / 2;
            if prefix.end >= range.end {
                continue;
            }
            prefixes += 1;
            // When it is decoded with a fitted window that decodes a failed decoding again
            // whole, and with the partials' window
            let _ = profile::take();
            let whole_if_failed = decode(&samples[prefix.clone()], &again_whole);
            let redone = common::counter(&profile::take(), "fitted windows decoded again whole");
            let text = decode(&samples[prefix.clone()], &partial);
            let stages = profile::take();
            let (kept_here, dropped_here, redone_here) = (
                common::counter(&stages, "fitted windows kept though failed")
                    + common::counter(&stages, "fitted windows cut where they loop"),
                common::counter(&stages, "fitted windows dropped as repetitive"),
                common::counter(&stages, "fitted windows decoded again whole"),
            );
            // Then the partial never encodes the whole window
            assert_eq!(redone_here, 0, "{clip} {prefix:?}");
            if redone == 0 {
                // And a decoding that passed its checks reads the same either way
                assert_eq!((kept_here, dropped_here), (0, 0), "{clip} {prefix:?}");
                assert_eq!(text, whole_if_failed, "{clip} {prefix:?}");
            } else {
                // And one that failed is kept, never looping (a repetitive one cut where it starts
                // to), or dropped (no words)
                failed += 1;
                assert_eq!(kept_here + dropped_here, 1, "{clip} {prefix:?}");
                if kept_here == 1 {
                    kept += 1;
                    assert!(!repetition::loops(&repetition::words(&text)), "{clip} {prefix:?}: {text:?}");
                } else {
                    assert_eq!(text, "", "{clip} {prefix:?}");
                }
            }
        }
    }
    // And the first partials that fail are common, and most of them are now kept
    eprintln!("{prefixes} first partials, {failed} failed their fitted window's checks, {kept} kept");
    assert!(prefixes >= 30 && failed * 4 >= prefixes, "{prefixes} first partials, {failed} failed");
    assert!(kept * 3 >= failed * 2, "{kept} of {failed} failed partials kept");
}
