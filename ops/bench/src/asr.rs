//! `scribe-bench asr`: our Whisper engine against faster-whisper on the same weights.
//!
//! A benchmark, not a test: it prints figures and asserts nothing. Three modes:
//! - short clips (the default, [`short`]): the corpus's English clips one by one;
//! - `--long` ([`long`]): one recording of `--long-minutes` built from the corpus's real clips
//!   joined by 0.7 s pauses, and the corpus's long-form reading, with faster-whisper's
//!   `BatchedInferencePipeline` as a third anchor, and the WER of the same clips (takes) decoded
//!   one by one beside it;
//! - `--memory-hours H` ([`memory`]): the peak resident memory of `scribe transcribe` on an
//!   H-hour recording built the same way.
//!
//! Both sides run on the CPU with the same threads, beam, word timestamps, English fixed and
//! VAD setting; model loading is outside the timing and each side first transcribes one clip
//! untimed. Our engine runs once per `--our-compute-types`; each of our runs also prints the
//! share of this machine's limit it reaches ([`share`]), both limits measured in the same run.
//! Word error rates come from the corpus's `score_wer.py`.

mod errors_by_clip;
mod faster_whisper;
mod long;
mod memory;
mod ours;
mod share;
mod short;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
pub(crate) use scribe_bench::corpus::{Clip, english_clips};

#[derive(clap::Args, Debug, Clone)]
pub struct BenchAsrArgs {
    /// Model directories to compare, by name under the models directory.
    #[arg(long, value_delimiter = ',', default_value = "whisper-tiny.en,whisper-base")]
    pub models: Vec<String>,
    /// Directory holding the models installed by `ops/setup.sh` [default: ./models].
    #[arg(long, env = "SCRIBE_MODELS_DIR")]
    pub models_dir: Option<PathBuf>,
    /// Speech corpus with manifest.tsv and score_wer.py [default: ../shared/corpus].
    #[arg(long, env = "SCRIBE_CORPUS_DIR")]
    pub corpus: Option<PathBuf>,
    /// Python venv with faster-whisper (installed by `ops/setup.sh`).
    #[arg(long, env = "SCRIBE_VENV", default_value = ".venv")]
    pub venv: PathBuf,
    /// faster-whisper compute types to compare against (sequential `WhisperModel`).
    #[arg(long, value_delimiter = ',', default_value = "float32,int8")]
    pub compute_types: Vec<String>,
    /// Our engine's compute types: one run each [default: float32,float16,int8 on the CPU,
    /// float32 on any other device].
    #[arg(long, value_delimiter = ',')]
    pub our_compute_types: Vec<String>,
    /// The processor our engine runs on: cpu, vulkan or vulkan:N, wgpu, cuda or cuda:N (a build
    /// with `--features wgpu` or `cuda`), flex. faster-whisper, the anchor, runs on the CPU.
    #[arg(long, default_value_t = scribe_whisper::DeviceChoice::default())]
    pub device: scribe_whisper::DeviceChoice,
    /// Beam size on both sides.
    #[arg(long, default_value_t = 5)]
    pub beam: usize,
    /// Threads on both sides.
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    /// Run without voice activity detection on both sides (faster-whisper's default).
    #[arg(long)]
    pub no_vad: bool,
    /// Long-recording mode: one recording built from the corpus's real English clips.
    #[arg(long)]
    pub long: bool,
    /// Minimum length of the long recording, in minutes.
    #[arg(long, default_value_t = 10.0)]
    pub long_minutes: f64,
    /// Batch size of faster-whisper's `BatchedInferencePipeline` anchor (int8) in --long mode.
    #[arg(long, default_value_t = 8)]
    pub fw_batch: usize,
    /// Memory mode: peak resident memory of `scribe transcribe` on a recording of this many
    /// hours built from the corpus's real clips (nothing else is measured).
    #[arg(long)]
    pub memory_hours: Option<f64>,
    /// Where the built recordings are written [default: the temp directory]; removed afterwards.
    #[arg(long)]
    pub scratch_dir: Option<PathBuf>,
}

/// What every mode needs: where things are.
pub(crate) struct Setup {
    pub models_dir: PathBuf,
    pub corpus: PathBuf,
    pub python: PathBuf,
}

pub fn run(mut args: BenchAsrArgs) -> anyhow::Result<()> {
    if args.our_compute_types.is_empty() {
        let defaults: &[&str] = if args.device == scribe_whisper::DeviceChoice::Cpu {
            &["float32", "float16", "int8"]
        } else {
            &["float32", "float16"]
        };
        args.our_compute_types = defaults.iter().map(|c| c.to_string()).collect();
    }
    let setup = Setup {
        models_dir: args.models_dir.clone().unwrap_or_else(crate::default_models_dir),
        corpus: args.corpus.clone().unwrap_or_else(|| PathBuf::from("../shared/corpus")),
        python: args.venv.join("bin/python"),
    };
    if args.memory_hours.is_some() {
        return memory::run(&args, &setup);
    }
    if !setup.python.exists() {
        bail!("no Python venv at {} (run `bash ops/setup.sh` or pass --venv)", args.venv.display());
    }
    if args.long { long::run(&args, &setup) } else { short::run(&args, &setup) }
}

/// Pooled WER (%) of `hyps` over exactly these clips, by the corpus's own scorer.
pub(crate) fn score(
    python: &Path,
    corpus: &Path,
    header: &str,
    clips: &[Clip],
    hyps: &[(String, String)],
) -> anyhow::Result<f64> {
    let rows: Vec<&str> = clips.iter().map(|c| c.line.as_str()).collect();
    score_rows(python, corpus, header, &rows, hyps)
}

/// Pooled WER (%) of `hyps` against the manifest `rows` (under `header`).
pub(crate) fn score_rows(
    python: &Path,
    corpus: &Path,
    header: &str,
    rows: &[&str],
    hyps: &[(String, String)],
) -> anyhow::Result<f64> {
    Ok(score_rows_per_file(python, corpus, header, rows, hyps)?.0)
}

/// Pooled WER (%) of `hyps` over exactly these clips, and each clip's WER (%) in their order.
pub(crate) fn score_per_clip(
    python: &Path,
    corpus: &Path,
    header: &str,
    clips: &[Clip],
    hyps: &[(String, String)],
) -> anyhow::Result<(f64, Vec<f64>)> {
    let rows: Vec<&str> = clips.iter().map(|c| c.line.as_str()).collect();
    let (pooled, per_file) = score_rows_per_file(python, corpus, header, &rows, hyps)?;
    let per_clip = clips
        .iter()
        .map(|c| per_file.iter().find(|(f, _)| *f == c.file).map(|p| p.1).context("the scorer skipped a clip"))
        .collect::<anyhow::Result<_>>()?;
    Ok((pooled, per_clip))
}

/// Pooled WER (%) of `hyps` against the manifest `rows`, and the WER of each file it scored.
pub(crate) fn score_rows_per_file(
    python: &Path,
    corpus: &Path,
    header: &str,
    rows: &[&str],
    hyps: &[(String, String)],
) -> anyhow::Result<(f64, Vec<(String, f64)>)> {
    let dir = std::env::temp_dir().join(format!("scribe-bench-asr-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let manifest = dir.join("manifest.tsv");
    let mut m = std::fs::File::create(&manifest)?;
    writeln!(m, "{header}")?;
    for row in rows {
        writeln!(m, "{row}")?;
    }
    let hyp_path = dir.join("hyps.tsv");
    let mut h = std::fs::File::create(&hyp_path)?;
    for (file, text) in hyps {
        writeln!(h, "{file}\t{}", text.replace(['\t', '\n'], " "))?;
    }
    let out = Command::new(python)
        .arg(corpus.join("score_wer.py"))
        .arg(&manifest)
        .arg(&hyp_path)
        .arg("--per-file")
        .output()?;
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let overall = stdout.lines().find(|l| l.starts_with("overall")).context("score_wer.py printed no overall line")?;
    let rate = overall.split_whitespace().last().unwrap_or_default().trim_end_matches('%');
    let pooled = rate.parse().with_context(|| format!("unreadable WER line: {overall}"))?;
    // Per-file lines: file, language, WER %, ...
    let per_file = stdout
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            Some((f.first()?.to_string(), f.get(2)?.trim_end_matches('%').parse().ok()?))
        })
        .collect();
    Ok((pooled, per_file))
}

/// The shortest clip: each side's untimed warm-up.
pub(crate) fn shortest(clips: &[Clip]) -> anyhow::Result<&Clip> {
    clips.iter().min_by(|a, b| a.duration_s.total_cmp(&b.duration_s)).context("no English clips")
}

/// `anchor ÷ ours` as "1.23×" (above 1: we are faster), or "-".
pub(crate) fn ratio(anchor_s: Option<f64>, ours_s: f64) -> String {
    match anchor_s {
        Some(a) if ours_s > 0.0 => format!("{:.2}×", a / ours_s),
        _ => "-".into(),
    }
}
