//! Speed of the engine on corpus clips (a benchmark, not a check: it prints, never asserts).
//! Run: `cargo test --release -p scribe-whisper --test engine_bench -- --ignored --nocapture`
//! Optional env: SCRIBE_BENCH_MODELS=tiny.en,base  SCRIBE_BENCH_FILES=en_jfk.wav,...

use std::path::PathBuf;
use std::time::Instant;

use scribe_whisper::{Engine, EngineConfig, TranscribeOptions};

#[test]
#[ignore = "benchmark; run with --ignored --nocapture"]
fn rtf() {
    let repo = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into()))
        .join("../..");
    let models = std::env::var_os("SCRIBE_MODELS_DIR").map(PathBuf::from).unwrap_or_else(|| repo.join("models"));
    let corpus =
        std::env::var_os("SCRIBE_CORPUS_DIR").map(PathBuf::from).unwrap_or_else(|| repo.join("../shared/corpus"));
    let model_names = std::env::var("SCRIBE_BENCH_MODELS").unwrap_or_else(|_| "tiny.en,base".into());
    let files =
        std::env::var("SCRIBE_BENCH_FILES").unwrap_or_else(|_| "en_jfk.wav,en_synth_gettysburg_2voices.wav".into());
    for name in model_names.split(',') {
        let t0 = Instant::now();
        let engine = Engine::load(&EngineConfig {
            model_dir: models.join(format!("whisper-{name}")),
            vad_path: Some(models.join("silero_vad_16k.safetensors")),
            threads: Some(2),
        })
        .unwrap();
        println!("{name}: load {:.2} s", t0.elapsed().as_secs_f64());
        for file in files.split(',') {
            let opts = TranscribeOptions { language: Some("en".into()), ..Default::default() };
            let t0 = Instant::now();
            let t = engine.transcribe(&corpus.join("audio").join(file), &opts, &mut |_| {}).unwrap();
            let wall = t0.elapsed().as_secs_f64();
            let text: String = t.segments.iter().map(|s| s.text.as_str()).collect();
            println!(
                "{name}\t{file}\taudio {:.1} s\twall {wall:.2} s\tRTF {:.3}\t{}",
                t.duration_s,
                wall / t.duration_s,
                text.trim()
            );
        }
    }
}
