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
            compute_type: scribe_whisper::ComputeType::Float16,
            device: Default::default(),
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

/// Time of `transcribe_samples` on utterances of 3, 8 and 20 s (continuous speech from the
/// two-voice Gettysburg clip), with the settings of live finals and of drafts.
/// Run: `cargo test --release --workspace --test engine_bench -- --ignored --nocapture live`
/// Optional env: SCRIBE_BENCH_MODELS=base,tiny.en  SCRIBE_BENCH_RUNS=3
#[test]
#[ignore = "benchmark; run with --ignored --nocapture"]
fn live_utterances() {
    let repo = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into()))
        .join("../..");
    let models = std::env::var_os("SCRIBE_MODELS_DIR").map(PathBuf::from).unwrap_or_else(|| repo.join("models"));
    let corpus =
        std::env::var_os("SCRIBE_CORPUS_DIR").map(PathBuf::from).unwrap_or_else(|| repo.join("../shared/corpus"));
    let model_names = std::env::var("SCRIBE_BENCH_MODELS").unwrap_or_else(|_| "base,tiny.en".into());
    let runs: usize = std::env::var("SCRIBE_BENCH_RUNS").ok().and_then(|r| r.parse().ok()).unwrap_or(3);
    let audio = scribe_whisper::audio::decode_all(&corpus.join("audio/en_synth_gettysburg_2voices.wav")).unwrap();
    for name in model_names.split(',') {
        let engine = Engine::load(&EngineConfig {
            model_dir: models.join(format!("whisper-{name}")),
            vad_path: Some(models.join("silero_vad_16k.safetensors")),
            threads: Some(2),
            compute_type: scribe_whisper::ComputeType::Float16,
            device: Default::default(),
        })
        .unwrap();
        // Continuous speech: from the first speech the VAD finds.
        let probs = engine.vad().unwrap().speech_probabilities(&audio);
        let first = probs.iter().position(|&p| p >= 0.5).unwrap() * 512;
        let settings = [
            ("final (beam 5, words)", TranscribeOptions { language: Some("en".into()), ..Default::default() }),
            (
                "draft (beam 1, no words, no fallback)",
                TranscribeOptions {
                    language: Some("en".into()),
                    beam_size: 1,
                    word_timestamps: false,
                    temperature_fallback: false,
                    ..Default::default()
                },
            ),
        ];
        let _ = engine.transcribe_samples(&audio[first..first + 48_000], &settings[0].1); // warm up
        for seconds in [3usize, 8, 20] {
            let utterance = &audio[first..first + seconds * 16_000];
            for (label, opts) in &settings {
                let mut times: Vec<f64> = (0..runs)
                    .map(|_| {
                        let t0 = Instant::now();
                        engine.transcribe_samples(utterance, opts).unwrap();
                        t0.elapsed().as_secs_f64()
                    })
                    .collect();
                times.sort_by(f64::total_cmp);
                let text: String = engine
                    .transcribe_samples(utterance, opts)
                    .unwrap()
                    .segments
                    .iter()
                    .map(|s| s.text.clone())
                    .collect();
                println!(
                    "{name}\t{seconds:>2} s\t{label:<38}\tmin {:.3} s\tmedian {:.3} s\tmax {:.3} s\t{}",
                    times[0],
                    times[times.len() / 2],
                    times[times.len() - 1],
                    text.trim()
                );
            }
        }
    }
}
