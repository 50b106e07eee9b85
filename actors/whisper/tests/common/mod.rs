//! What the engine's integration tests share: where the models and the corpus are, an engine
//! loaded from them, the corpus's manifest, a live session's decoding options, the profile's
//! counters, a WAV writer for the recordings they build, and the words of a text as the tests
//! compare them.
#![allow(dead_code)] // each test binary uses its own subset

use std::io::Write;
use std::path::{Path, PathBuf};

use scribe_whisper::audio::SAMPLE_RATE;
use scribe_whisper::engine::EncoderWindow;
use scribe_whisper::{ComputeType, Engine, EngineConfig, TranscribeOptions};

/// The repository's root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The installed models (`SCRIBE_MODELS_DIR`, else `./models`).
pub fn models_dir() -> PathBuf {
    std::env::var_os("SCRIBE_MODELS_DIR").map(PathBuf::from).unwrap_or_else(|| repo().join("models"))
}

/// The installed speech model `name` (a folder of the models directory, e.g. `whisper-base`)
/// with the VAD, at `compute_type`.
pub fn engine(name: &str, compute_type: ComputeType) -> Engine {
    let models = models_dir();
    Engine::load(&EngineConfig {
        model_dir: models.join(name),
        vad_path: Some(models.join("silero_vad_16k.safetensors")),
        threads: None,
        compute_type,
        device: Default::default(),
    })
    .unwrap_or_else(|e| panic!("loading {name} and the VAD from {} (set SCRIBE_MODELS_DIR): {e}", models.display()))
}

/// One row of the corpus's `manifest.tsv`, the columns the tests read.
pub struct ManifestRow {
    /// Path under the corpus (`audio/...`).
    pub file: String,
    pub language: String,
    pub duration_s: f64,
    /// The human reference; empty for clips without one.
    pub transcript: String,
    /// The row's tasks (`asr`, `longform`, ...).
    pub tasks: Vec<String>,
}

impl ManifestRow {
    /// Real speech with a reference: not a format variant of another clip, not a synthetic voice.
    pub fn is_real_with_reference(&self) -> bool {
        !self.transcript.is_empty() && !self.file.starts_with("audio/variants/") && !self.file.contains("/en_synth_")
    }
}

/// Every row of the corpus's manifest, in its order.
pub fn manifest() -> Vec<ManifestRow> {
    let manifest = std::fs::read_to_string(corpus().join("manifest.tsv")).expect("the corpus's manifest.tsv");
    let mut lines = manifest.lines();
    let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
    let col = |name: &str| header.iter().position(|c| *c == name).unwrap_or_else(|| panic!("no column {name}"));
    let (file, language, duration, transcript, task) =
        (col("file"), col("language"), col("duration_s"), col("transcript"), col("task"));
    lines
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .map(|f| ManifestRow {
            file: f[file].to_string(),
            language: f[language].to_string(),
            duration_s: f[duration].parse().unwrap_or(f64::INFINITY),
            transcript: f[transcript].to_string(),
            tasks: f[task].split('+').map(str::to_string).collect(),
        })
        .collect()
}

/// The corpus's real English clips of one window or less (paths under its `audio/`), with
/// their references.
pub fn short_english_clips() -> Vec<(String, String)> {
    manifest()
        .into_iter()
        .filter(|r| r.language == "en" && r.is_real_with_reference() && r.duration_s <= 30.0)
        .map(|r| (r.file.trim_start_matches("audio/").to_string(), r.transcript))
        .collect()
}

/// How many times the engine's profile counted `name` in `stages`.
pub fn counter(stages: &[scribe_whisper::profile::StageTime], name: &str) -> u64 {
    stages.iter().find(|s| s.stage == name).map_or(0, |s| s.calls)
}

/// The speech corpus (`SCRIBE_CORPUS_DIR`, else `../shared/corpus`).
pub fn corpus() -> PathBuf {
    std::env::var_os("SCRIBE_CORPUS_DIR").map(PathBuf::from).unwrap_or_else(|| repo().join("../shared/corpus"))
}

/// 16-bit mono 16 kHz WAV.
pub fn write_wav(path: &Path, samples: &[f32]) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let data_len = (samples.len() * 2) as u32;
    f.write_all(b"RIFF").unwrap();
    f.write_all(&(36 + data_len).to_le_bytes()).unwrap();
    f.write_all(b"WAVEfmt ").unwrap();
    f.write_all(&16u32.to_le_bytes()).unwrap();
    f.write_all(&1u16.to_le_bytes()).unwrap(); // PCM
    f.write_all(&1u16.to_le_bytes()).unwrap(); // mono
    f.write_all(&SAMPLE_RATE.to_le_bytes()).unwrap();
    f.write_all(&(SAMPLE_RATE * 2).to_le_bytes()).unwrap();
    f.write_all(&2u16.to_le_bytes()).unwrap();
    f.write_all(&16u16.to_le_bytes()).unwrap();
    f.write_all(b"data").unwrap();
    f.write_all(&data_len.to_le_bytes()).unwrap();
    for &x in samples {
        f.write_all(&((x * 32768.0).round().clamp(-32768.0, 32767.0) as i16).to_le_bytes()).unwrap();
    }
}

/// Lower-cased words without punctuation.
pub fn words(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| w.to_lowercase().chars().filter(|c| c.is_alphanumeric()).collect::<String>())
        .filter(|w| !w.is_empty())
        .collect()
}

/// A live final's options in English: fitted window, beam 5, word times, no sampling fallback.
pub fn live_final_options() -> TranscribeOptions {
    TranscribeOptions {
        language: Some("en".into()),
        encoder_window: EncoderWindow::fitted(),
        temperature_fallback: false,
        ..Default::default()
    }
}

/// A live partial's options: greedy, no word times, no VAD, a failed fitted decoding kept
/// unless it repeats itself.
pub fn live_partial_options() -> TranscribeOptions {
    TranscribeOptions {
        beam_size: 1,
        word_timestamps: false,
        use_vad: false,
        encoder_window: EncoderWindow::fitted_for_partials(),
        ..live_final_options()
    }
}
