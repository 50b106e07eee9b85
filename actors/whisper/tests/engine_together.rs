//! Utterances transcribed together ([`Engine::transcribe_together`], how the live sessions of
//! one server share the decoder) read as each reads alone, and a cancelled one leaves the
//! others whole. Its own test binary, because it reads the process-wide stage counters.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use scribe_whisper::audio::{self, SAMPLE_RATE};
use scribe_whisper::{ComputeType, Engine, EngineError, TranscribeOptions, Transcript, profile};

mod common;
use common::corpus;

fn engine() -> Engine {
    common::engine("whisper-base", ComputeType::Int8)
}

fn clip(name: &str) -> Vec<f32> {
    audio::decode_all(&corpus().join("audio").join(name)).unwrap()
}

fn text(result: &Result<Transcript, EngineError>) -> String {
    let transcript = result.as_ref().expect("the utterance decodes");
    transcript.segments.iter().map(|s| s.text.trim()).collect::<Vec<_>>().join(" ")
}

#[test]
fn utterances_decoded_together_read_as_each_alone() {
    let engine = engine();
    let reading = clip("en_dctts_reader_lj003_longform.wav");
    let s = SAMPLE_RATE as usize;
    // Given four sessions' utterances of different lengths and speakers, finals and partials
    let jfk = clip("en_jfk.wav");
    let child = clip("en_childes_macwhinney_010411a_18s.wav");
    let learner = clip("en_speechocean762_001220015.wav");
    let piece = &reading[s * 30..s * 38];
    let (fin, partial) = (common::live_final_options(), common::live_partial_options());
    let items: Vec<(&[f32], &TranscribeOptions)> =
        vec![(&jfk, &fin), (piece, &partial), (&child, &fin), (&learner, &fin), (&jfk[..s * 4], &partial)];
    let alone: Vec<String> =
        items.iter().map(|(samples, opts)| text(&engine.transcribe_samples(samples, opts))).collect();

    // When they are transcribed together
    profile::enable();
    let _ = profile::take();
    let together = engine.transcribe_together(&items);
    let stages = profile::take();

    // Then the finals' first windows and the partials' shared the decoder's steps, and every
    // utterance reads as it read alone
    assert_eq!(common::counter(&stages, "windows decoded together"), items.len() as u64);
    let together: Vec<String> = together.iter().map(text).collect();
    for (i, (a, t)) in alone.iter().zip(&together).enumerate() {
        assert_eq!(t, a, "utterance {i} read differently together");
    }
    assert!(together[0].contains("ask not what your country can do for you"), "{}", together[0]);
}

#[test]
fn a_cancelled_utterance_leaves_the_others_whole() {
    let engine = engine();
    let jfk = clip("en_jfk.wav");
    let reading = clip("en_dctts_reader_lj003_longform.wav");
    let s = SAMPLE_RATE as usize;
    let long = &reading[s * 30..s * 58];
    let fin = common::live_final_options();
    let alone = text(&engine.transcribe_samples(&jfk, &fin));

    // Given a long partial beside a final, the partial cancelled once the batch has begun
    let cancel = Arc::new(AtomicBool::new(false));
    let partial = TranscribeOptions { cancel: Some(cancel.clone()), ..common::live_partial_options() };
    let items: Vec<(&[f32], &TranscribeOptions)> = vec![(long, &partial), (&jfk, &fin)];
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        cancel.store(true, Ordering::Relaxed);
    });
    // When they are transcribed together
    let results = engine.transcribe_together(&items);
    canceller.join().unwrap();
    // Then the partial answers Cancelled and the final reads as alone
    assert!(matches!(results[0], Err(EngineError::Cancelled)), "{:?}", results[0].as_ref().map(|_| "decoded"));
    assert_eq!(text(&results[1]), alone);
}
