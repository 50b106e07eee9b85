//! A live final's encoder: the window fitted to the utterance's speech, and the whole 30 s window
//! only to decode again a fitted decoding that failed its checks. The passes after the first
//! window (the rest of a window decoded again, a stretch of speech left without words) read what
//! exists too: encoding the whole window there cost a final half a second for no word.
//! One test in its own binary: it reads the engine's global profile counters.

use scribe_whisper::audio;
use scribe_whisper::engine::FITTED_MARGIN_FRAMES;
use scribe_whisper::utterances::{self, UtteranceEvent};
use scribe_whisper::{ComputeType, EngineError, mel, profile};

mod common;

#[test]
fn a_final_encodes_the_whole_window_only_to_decode_a_failed_fitted_decoding_again() {
    // Given each utterance of the corpus's short real English clips, cut as a live session cuts them
    let engine = common::engine("whisper-base", ComputeType::Int8);
    let vad = engine.vad().expect("loaded with the VAD");
    let options = common::live_final_options();
    // (an utterance whose speech and margin fill a window is encoded whole from the start)
    let longest = (mel::N_FRAMES - FITTED_MARGIN_FRAMES - 2) * mel::HOP;
    profile::enable();
    let (mut finals, mut encoded, mut redone, mut dropped) = (0, 0, 0, 0);
    for (clip, _) in common::short_english_clips() {
        let samples = audio::decode_all(&common::corpus().join("audio").join(&clip)).unwrap();
        for event in utterances::of_recording(vad, &samples) {
            let UtteranceEvent::Ended { range, .. } = event else { continue };
            if range.len() > longest {
                continue;
            }
            // When it is decoded as a final
            let _ = profile::take();
            match engine.transcribe_samples(&samples[range.clone()], &options) {
                Ok(_) | Err(EngineError::NoSpeech) => {}
                Err(e) => panic!("{clip} {range:?}: {e}"),
            }
            let stages = profile::take();
            let windows = common::counter(&stages, "encoder windows");
            let fitted = common::counter(&stages, "fitted windows");
            let again_whole = common::counter(&stages, "fitted windows decoded again whole");
            // Then every whole window it encodes decodes a failed fitted decoding again
            let at = format!("{clip} {:.2}–{:.2} s", range.start as f64 / 16e3, range.end as f64 / 16e3);
            assert_eq!(windows - fitted, again_whole, "{at}: {windows} windows, {fitted} fitted");
            finals += 1;
            encoded += fitted;
            redone += again_whole;
            dropped += common::counter(&stages, "fitted windows dropped as failed");
        }
    }
    // And some finals took more than one pass, so the passes after the first were tried
    eprintln!("{finals} finals: {encoded} fitted windows, {redone} decoded again whole, {dropped} rests dropped");
    assert!(finals >= 30 && encoded > finals, "{finals} finals, {encoded} fitted windows");
}
