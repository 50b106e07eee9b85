//! A decoding stops between two decoder steps when it is cancelled, and a batch's utterance
//! cancelled before its turn is not encoded: a live final pre-empts the partials in flight
//! without waiting for them to finish. Its own test binary, because it counts the engine's work
//! with the process-wide stage timings (its tests take turns to read them).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use scribe_whisper::audio::{self, SAMPLE_RATE};
use scribe_whisper::{ComputeType, EngineError, TranscribeOptions, profile};

mod common;
use common::corpus;

/// Held by each test while it reads the process-wide counters.
static COUNTERS: Mutex<()> = Mutex::new(());

fn count(stage: &str) -> u64 {
    profile::take().iter().find(|s| s.stage == stage).map_or(0, |s| s.calls)
}

fn decoder_steps() -> u64 {
    count("decoder step")
}

#[test]
fn a_cancelled_decoding_stops_between_decoder_steps() {
    let _turn = COUNTERS.lock().unwrap_or_else(|e| e.into_inner());
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

#[test]
fn utterances_of_a_batch_cancelled_before_their_turn_are_not_encoded() {
    let _turn = COUNTERS.lock().unwrap_or_else(|e| e.into_inner());
    let engine = common::engine("whisper-base", ComputeType::Int8);
    let jfk = audio::decode_all(&corpus().join("audio/en_jfk.wav")).unwrap();
    let live = common::live_final_options();
    profile::enable();
    let _ = profile::take();
    let alone = engine.transcribe_samples(&jfk, &live).expect("jfk decodes");
    let windows_alone = count("encoder windows");
    assert!(windows_alone >= 1);

    // Given three partials whose session has asked them to stop (a final came), batched before a final
    let stop = Arc::new(AtomicBool::new(true));
    let partial = TranscribeOptions { cancel: Some(stop), ..common::live_partial_options() };
    let items: Vec<(&[f32], &TranscribeOptions)> =
        vec![(&jfk, &partial), (&jfk, &partial), (&jfk, &partial), (&jfk, &live)];
    // When the batch is transcribed
    let results = engine.transcribe_together(&items);
    // Then the partials answer Cancelled without being encoded, and the final reads as alone
    for r in &results[..3] {
        assert!(matches!(r, Err(EngineError::Cancelled)), "{:?}", r.as_ref().map(|_| "decoded"));
    }
    let text = |t: &scribe_whisper::Transcript| t.segments.iter().map(|s| s.text.clone()).collect::<String>();
    assert_eq!(text(results[3].as_ref().expect("the final decodes")), text(&alone));
    assert_eq!(count("encoder windows"), windows_alone, "only the final's windows are encoded");
}
