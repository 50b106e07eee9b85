//! The speech model stays in memory while it is used and for `keep_alive` after, then is
//! released, and the next job loads it again: with the real tiny.en model from the models
//! directory and a real transcription.

mod common;

use std::time::{Duration, Instant};

use common::{jfk, models_dir};
use scribe_actors::speech_model::{SpeechModel, SpeechModels};
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
    let config = EngineConfig {
        model_dir: models_dir().join("whisper-tiny.en"),
        vad_path: None,
        threads: None,
        compute_type: scribe_whisper::ComputeType::Float16,
        device: Default::default(),
    };
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

/// The server offers its default model and every other model folder of the models directory,
/// read from their tokenizers without loading weights: base is multilingual, tiny.en is not, a
/// folder that is not a model is not offered, and `whisper-1` names the default.
#[test]
fn the_installed_models_are_the_default_and_every_model_folder_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["whisper-base", "whisper-tiny.en"] {
        std::os::unix::fs::symlink(models_dir().join(name), dir.path().join(name)).unwrap();
    }
    // An operator's own model: any folder with the CTranslate2 files.
    std::os::unix::fs::symlink(models_dir().join("whisper-tiny.en"), dir.path().join("my-model")).unwrap();
    std::fs::create_dir(dir.path().join("translation")).unwrap();
    let config = EngineConfig {
        model_dir: dir.path().join("whisper-base"),
        vad_path: None,
        threads: None,
        compute_type: scribe_whisper::ComputeType::Float16,
        device: Default::default(),
    };
    let models = SpeechModels::discover(SpeechModel::new(config, Duration::from_secs(60), None), dir.path());
    let names: Vec<&str> = models.list().iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["whisper-base", "my-model", "whisper-tiny.en"]);
    let (base, _) = models.get("whisper-1").expect("the alias");
    assert_eq!(base.name, "whisper-base");
    assert!(base.multilingual);
    assert!(base.languages.iter().any(|l| l == "fr") && base.languages.len() >= 99);
    let (tiny, _) = models.get("whisper-tiny.en").expect("tiny.en");
    assert!(!tiny.multilingual);
    assert_eq!(tiny.languages, ["en"]);
    assert!(models.get("translation").is_none());
    assert!(models.get("nope").is_none());
}
