//! Our engine's side of `scribe-bench asr`: one loaded engine per compute type, transcribing a
//! file with the stage timings on, so the share of the machine's limit can be computed.

use std::path::Path;
use std::time::Instant;

use anyhow::Context;
use scribe_whisper::DeviceChoice;
use scribe_whisper::engine::{ComputeType, Engine, EngineConfig, EngineError, TranscribeOptions};
use scribe_whisper::profile::{self, StageTime};

use super::share::Cost;

/// One of our configurations: a compute type and a batch size.
#[derive(Clone, Debug)]
pub struct OurSetup {
    pub compute_type: String,
    /// `None`: the engine's default options (short clips); `Some(n)`: `batch_size: n`.
    pub batch_size: Option<usize>,
}

impl OurSetup {
    pub fn label(&self) -> String {
        match self.batch_size {
            None => format!("scribe {}", self.compute_type),
            Some(0) => format!("scribe {} batch auto", self.compute_type),
            Some(1) => format!("scribe {} sequential", self.compute_type),
            Some(n) => format!("scribe {} batch {n}", self.compute_type),
        }
    }
}

/// What one transcription gave.
pub struct Decoded {
    pub wall_s: f64,
    pub text: String,
    /// Each word's (start, end) in seconds.
    pub words: Vec<(f64, f64)>,
    /// The engine's stage timings during this transcription.
    pub stages: Vec<StageTime>,
}

/// The engine loaded at one compute type.
pub struct Ours {
    pub engine: Engine,
    pub cost: Option<Cost>,
}

impl Ours {
    pub fn load(model_dir: &Path, compute_type: &str, threads: usize, device: DeviceChoice) -> anyhow::Result<Ours> {
        let vad = model_dir.parent().unwrap_or(Path::new(".")).join("silero_vad_16k.safetensors");
        let mut config = engine_config(model_dir, vad.exists().then_some(vad.as_path()), threads, compute_type)?;
        config.device = device;
        let engine = Engine::load(&config).with_context(|| format!("cannot load {}", model_dir.display()))?;
        profile::enable();
        let cost = model_cost(&engine);
        Ok(Ours { engine, cost })
    }

    /// Transcribes `media` in English with `setup`'s batch size, timing it (wall and stages).
    pub fn transcribe(&self, media: &Path, setup: &OurSetup, beam: usize, vad: bool) -> anyhow::Result<Decoded> {
        self.transcribe_in("en", media, setup, beam, vad)
    }

    /// [`Ours::transcribe`] with the speech's language given.
    pub fn transcribe_in(
        &self,
        language: &str,
        media: &Path,
        setup: &OurSetup,
        beam: usize,
        vad: bool,
    ) -> anyhow::Result<Decoded> {
        let mut opts = TranscribeOptions {
            language: Some(language.into()),
            beam_size: beam,
            word_timestamps: true,
            use_vad: vad,
            ..TranscribeOptions::default()
        };
        if let Some(n) = setup.batch_size {
            opts.batch_size = n;
        }
        drop(profile::take());
        let start = Instant::now();
        let result = self.engine.transcribe(media, &opts, &mut |_| {});
        let wall_s = start.elapsed().as_secs_f64();
        let stages = profile::take();
        let segments = match result {
            Ok(t) => t.segments,
            Err(EngineError::NoSpeech) => Vec::new(),
            Err(e) => return Err(e).with_context(|| format!("transcribing {}", media.display())),
        };
        Ok(Decoded {
            wall_s,
            text: segments.iter().map(|s| s.text.trim()).collect::<Vec<_>>().join(" "),
            words: segments.iter().flat_map(|s| s.words.iter().map(|w| (w.start, w.end))).collect(),
            stages,
        })
    }
}

/// The engine's configuration at `compute_type` (float32, float16, int8).
fn engine_config(
    model_dir: &Path,
    vad: Option<&Path>,
    threads: usize,
    compute_type: &str,
) -> anyhow::Result<EngineConfig> {
    Ok(EngineConfig {
        model_dir: model_dir.to_path_buf(),
        vad_path: vad.map(Path::to_path_buf),
        threads: Some(threads),
        compute_type: compute_type.parse::<ComputeType>()?,
        device: Default::default(),
    })
}

/// The weight bytes a decoder step reads and the flops of one encoder window.
fn model_cost(engine: &Engine) -> Option<Cost> {
    let cost = engine.cost();
    Some(Cost {
        decoder_bytes_per_step: cost.decoder_bytes_per_step,
        encoder_flops_per_window: cost.encoder_flops_per_window,
    })
}
