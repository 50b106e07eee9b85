//! `scribe transcribe FILE`: the speech engine from the command line, for people and scripts.
//!
//! Prints the transcript (one segment per line) or, with `--json`, the engine's transcript with
//! timed words. A progress bar goes to stderr for long files; bad input ends with a non-zero
//! exit and the engine's user-facing message.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, bail};
use indicatif::{ProgressBar, ProgressStyle};
use scribe_domain::languages::AUTO_DETECT_WHISPER;
use scribe_whisper::engine::{Engine, EngineConfig, Progress, Task, TranscribeOptions};
use scribe_whisper::languages::to_whisper_code;

/// Files at least this long (seconds) get a progress bar.
const PROGRESS_MIN_S: f64 = 30.0;

#[derive(clap::Args, Debug, Clone)]
pub struct TranscribeArgs {
    /// Audio or video file (wav, mp3, m4a, mp4, ogg, opus, flac, wma, avi, ...).
    pub file: PathBuf,
    /// Whisper model directory with model.bin, config.json and tokenizer.json
    /// [default: whisper-base in the models directory].
    #[arg(long, env = "SCRIBE_MODEL_DIR")]
    pub model: Option<PathBuf>,
    /// Precision the model runs at: float32, float16 or int8 (whatever model.bin stores)
    /// [default: int8 on the CPU, float16 on a GPU, float32 on flex].
    #[arg(long, env = "SCRIBE_COMPUTE_TYPE")]
    pub compute_type: Option<scribe_whisper::ComputeType>,
    /// The processor the model runs on: cpu, vulkan or vulkan:N, wgpu, cuda or cuda:N (GPU builds
    /// only), flex.
    #[arg(long, env = "SCRIBE_DEVICE", default_value_t = scribe_whisper::DeviceChoice::default())]
    pub device: scribe_whisper::DeviceChoice,
    /// Spoken language: en-us, nl-be, fr, de, es, cmn, ... or `auto` to detect it, as the service
    /// does, among every language both Whisper and the API know.
    #[arg(long, default_value = "auto")]
    pub language: String,
    /// Print the transcript as JSON with segments and timed words.
    #[arg(long)]
    pub json: bool,
    /// Beam size for decoding.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u16).range(1..=16))]
    pub beam: u16,
    /// Translate the speech to English instead of transcribing it.
    #[arg(long)]
    pub translate: bool,
    /// A term to favour (a name, a product), as a glossary gives it to a job; repeatable.
    #[arg(long = "hotword", value_name = "TERM")]
    pub hotwords: Vec<String>,
}

/// What `--language` asks of the engine: a fixed Whisper language, or detection among some.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LanguageChoice {
    Fixed(String),
    Detect(Vec<String>),
}

/// Maps the spec's language codes (`en-us`, `nl-be`, `cmn`, `iw-il`, `auto`) to Whisper's.
pub fn language_choice(code: &str) -> anyhow::Result<LanguageChoice> {
    if code.trim().eq_ignore_ascii_case("auto") {
        return Ok(LanguageChoice::Detect(AUTO_DETECT_WHISPER.iter().map(|c| c.to_string()).collect()));
    }
    match to_whisper_code(code) {
        Some(whisper) => Ok(LanguageChoice::Fixed(whisper.to_string())),
        None => bail!(
            "Language `{code}` is not supported: Whisper does not know it (use a code like en-us, nl-be, fr, de, cmn or auto)"
        ),
    }
}

pub fn run(args: TranscribeArgs) -> anyhow::Result<()> {
    let model_dir = args.model.clone().unwrap_or_else(|| crate::config::default_models_dir().join("whisper-base"));
    let models_dir = model_dir.parent().map(PathBuf::from).unwrap_or_default();
    let vad = models_dir.join("silero_vad_16k.safetensors");
    let language = language_choice(&args.language)?;
    if !args.file.exists() {
        bail!("{} does not exist", args.file.display());
    }

    let engine = Engine::load(&EngineConfig {
        model_dir: model_dir.clone(),
        vad_path: vad.exists().then_some(vad),
        threads: None,
        compute_type: args.compute_type.unwrap_or_else(|| crate::config::default_compute_type(args.device)),
        device: args.device,
    })
    .with_context(|| format!("cannot load the Whisper model in {}", model_dir.display()))?;

    let (fixed, detect_among) = match language {
        LanguageChoice::Fixed(code) => (Some(code), Vec::new()),
        LanguageChoice::Detect(among) => (None, among),
    };
    let opts = TranscribeOptions {
        language: fixed,
        detect_among,
        task: if args.translate { Task::Translate } else { Task::Transcribe },
        beam_size: args.beam as usize,
        hotwords: args.hotwords.clone(),
        ..TranscribeOptions::default()
    };

    let started = Instant::now();
    let mut bar: Option<ProgressBar> = None;
    let mut on_progress = |p: Progress| {
        if p.total_s < PROGRESS_MIN_S {
            return;
        }
        let bar = bar.get_or_insert_with(|| {
            let b = ProgressBar::new(p.total_s.ceil() as u64);
            b.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} s of audio (eta {eta})",
                )
                .expect("valid template"),
            );
            b
        });
        bar.set_position(p.done_s.min(p.total_s) as u64);
    };
    let result = engine.transcribe(&args.file, &opts, &mut on_progress);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let transcript = result?;
    tracing::info!(
        audio_s = transcript.duration_s,
        wall_s = started.elapsed().as_secs_f64(),
        language = %transcript.language,
        "transcribed"
    );

    if args.json {
        println!("{}", serde_json::to_string_pretty(&transcript)?);
    } else {
        for segment in &transcript.segments {
            println!("{}", segment.text.trim());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_codes_map_to_whisper_codes() {
        assert_eq!(language_choice("en-us").unwrap(), LanguageChoice::Fixed("en".into()));
        assert_eq!(language_choice("nl-be").unwrap(), LanguageChoice::Fixed("nl".into()));
        assert_eq!(language_choice("cmn").unwrap(), LanguageChoice::Fixed("zh".into()));
        assert_eq!(language_choice("iw-il").unwrap(), LanguageChoice::Fixed("he".into()));
        match language_choice("AUTO").unwrap() {
            LanguageChoice::Detect(among) => assert_eq!(among, AUTO_DETECT_WHISPER, "the service's detection set"),
            other => panic!("{other:?}"),
        }
        let err = language_choice("tlh").unwrap_err().to_string();
        assert!(err.contains("tlh"), "{err}");
    }
}
