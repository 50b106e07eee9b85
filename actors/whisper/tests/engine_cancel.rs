//! A decoding stops between two decoder steps when it is cancelled: a live final pre-empts the
//! partial in flight without waiting for it to finish. Its own test binary, because it counts
//! the engine's decoder steps with the process-wide stage timings.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use scribe_whisper::audio::{self, SAMPLE_RATE};
use scribe_whisper::{ComputeType, EngineError, TranscribeOptions, profile};

mod common;
use common::corpus;

fn decoder_steps() -> u64 {
    profile::take().iter().find(|s| s.stage == "decoder step").map_or(0, |s| s.calls)
}

#[test]
fn a_cancelled_decoding_stops_between_decoder_steps() {
    let engine = common::engine("whisper-base", ComputeType::Int8);
    // Given 28 s of continuous reading, whose decoding takes many decoder steps
    let reading = audio::decode_all(&corpus().join("audio/en_dctts_reader_lj003_longform.wav")).unwrap();
    let speech = &reading[SAMPLE_RATE as usize * 30..SAMPLE_RATE as usize * 58];
    let options = TranscribeOptions { language: Some("en".into()), use_vad: false, ..Default::default() };
    profile::enable();
    let _ = profile::take();
    engine.transcribe_samples(speech, &options).expect("the reading decodes");
    let whole = decoder_steps();
    assert!(whole >= 50, "only {whole} decoder steps");

    // When the same decoding is cancelled from another thread once it has begun
    let cancel = Arc::new(AtomicBool::new(false));
    let cancelled = TranscribeOptions { cancel: Some(cancel.clone()), ..options };
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        cancel.store(true, Ordering::Relaxed);
    });
    let result = engine.transcribe_samples(speech, &cancelled);
    canceller.join().unwrap();

    // Then it answers Cancelled after a fraction of the decoder steps
    assert!(matches!(result, Err(EngineError::Cancelled)), "{result:?}");
    let steps = decoder_steps();
    assert!(steps * 10 < whole, "{steps} of {whole} decoder steps ran after the cancel");
}
