//! The speech model stays in memory while it is used and for `keep_alive` after, then is
//! released, and the next job loads it again: with the real tiny.en model from the models
//! directory and a real transcription.

mod common;

use std::time::{Duration, Instant};

use common::{jfk, models_dir};
use scribe_actors::speech_model::SpeechModel;
use scribe_whisper::engine::{EngineConfig, TranscribeOptions};

fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "{what} did not happen within 30 s");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_model_is_released_when_idle_and_loaded_again_for_the_next_job() {
    let config = EngineConfig { model_dir: models_dir().join("whisper-tiny.en"), vad_path: None, threads: None };
    let model = SpeechModel::new(config, Duration::from_millis(300), None);
    assert!(!model.is_loaded(), "nothing loads before the first job");

    let lease = model.lease().expect("the model loads");
    assert!(model.is_loaded());
    let options = TranscribeOptions { language: Some("en".into()), ..TranscribeOptions::default() };
    let text = |t: &scribe_whisper::engine::Transcript| t.segments.iter().map(|s| s.text.as_str()).collect::<String>();
    let first = lease.transcribe(&jfk(), &options, &mut |_| {}).expect("a transcript");
    assert!(text(&first).contains("ask not what your country"), "{}", text(&first));

    // A second job while the first lease lives shares the loaded engine.
    let second = model.lease().expect("the same engine");
    drop(lease);
    std::thread::sleep(Duration::from_millis(600));
    assert!(model.is_loaded(), "released while still leased");
    drop(second);
    eventually("releasing the idle model", || !model.is_loaded());

    let again = model.lease().expect("the model loads again");
    let third = again.transcribe(&jfk(), &options, &mut |_| {}).expect("a transcript");
    assert_eq!(text(&third), text(&first));
}
