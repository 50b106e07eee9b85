//! `scribe-bench asr`: our Whisper engine against faster-whisper on the same weights.
//!
//! A benchmark, not a test: it prints figures and asserts nothing. For each model (tiny.en and
//! base by default) it transcribes the corpus's English clips with our engine and with
//! faster-whisper (the project venv's Python; CPU, 2 threads, beam 5, word timestamps, English
//! fixed, the same VAD setting on both sides) at each compute type (float32 and int8), and
//! prints audio seconds, wall time, real-time factor, the speed ratio (faster-whisper time ÷
//! ours; above 1 means we are faster) and word error rates from the corpus's `score_wer.py`.
//! Model loading is outside the timing on both sides, and each side first transcribes the
//! shortest clip once untimed, so one-time start-up costs (thread pools, allocations) are not
//! billed to the first clip.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};
use scribe_whisper::engine::{Engine, EngineConfig, TranscribeOptions};

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
    /// faster-whisper compute types to compare against.
    #[arg(long, value_delimiter = ',', default_value = "float32,int8")]
    pub compute_types: Vec<String>,
    /// Beam size on both sides.
    #[arg(long, default_value_t = 5)]
    pub beam: usize,
    /// Threads on both sides.
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    /// Run without voice activity detection on both sides (faster-whisper's default).
    #[arg(long)]
    pub no_vad: bool,
}

/// One side's run over the clips.
struct Run {
    label: String,
    wall_s: f64,
    hyps: Vec<(String, String)>, // manifest path, text
}

/// faster-whisper side: loads the model (untimed), warms up, then prints one JSON line per clip.
const FASTER_WHISPER: &str = r#"
import json, sys, time
from faster_whisper import WhisperModel
model_dir, compute_type, beam, threads, vad, warmup = sys.argv[1:7]
files = sys.argv[7:]
model = WhisperModel(model_dir, device="cpu", compute_type=compute_type, cpu_threads=int(threads), num_workers=1)
def run(path):
    segments, _ = model.transcribe(path, language="en", beam_size=int(beam), word_timestamps=True, vad_filter=vad == "1")
    return " ".join(s.text.strip() for s in segments)
run(warmup)
for path in files:
    start = time.perf_counter()
    text = run(path)
    print(json.dumps({"file": path, "wall_s": time.perf_counter() - start, "text": text}), flush=True)
"#;

pub fn run(args: BenchAsrArgs) -> anyhow::Result<()> {
    let models_dir = args.models_dir.clone().unwrap_or_else(crate::default_models_dir);
    let corpus = args.corpus.clone().unwrap_or_else(|| PathBuf::from("../shared/corpus"));
    let python = args.venv.join("bin/python");
    if !python.exists() {
        bail!("no Python venv at {} (run `bash ops/setup.sh` or pass --venv)", args.venv.display());
    }
    let (header, rows) = english_clips(&corpus)?;
    let audio_s: f64 = rows.iter().map(|r| r.duration_s).sum();
    let warmup = rows.iter().min_by(|a, b| a.duration_s.total_cmp(&b.duration_s)).context("no English clips")?;
    eprintln!(
        "{} English clips, {audio_s:.1} s of audio; beam {}, {} threads, VAD {}",
        rows.len(),
        args.beam,
        args.threads,
        if args.no_vad { "off" } else { "on" }
    );

    let mut table = Vec::new();
    for model in &args.models {
        let model_dir = models_dir.join(model);
        let mut runs = vec![ours(&args, &model_dir, &corpus, &rows, warmup)?];
        for ct in &args.compute_types {
            runs.push(faster_whisper(&args, &python, &model_dir, ct, &corpus, &rows, warmup)?);
        }
        for run in &runs {
            let wer = score(&python, &corpus, &header, &rows, &run.hyps)?;
            table.push((model.clone(), run.label.clone(), run.wall_s, wer, runs[0].wall_s));
        }
    }

    println!();
    println!(
        "{:<18}{:<24}{:>9}{:>9}{:>8}{:>14}{:>8}",
        "model", "engine", "audio s", "wall s", "RTF", "ratio fw/ours", "WER %"
    );
    for (model, label, wall, wer, ours_wall) in table {
        let ratio = if label == "scribe (burn)" { "-".to_string() } else { format!("{:.2}", wall / ours_wall) };
        println!("{model:<18}{label:<24}{audio_s:>9.1}{wall:>9.2}{:>8.3}{ratio:>14}{wer:>8.2}", wall / audio_s);
    }
    Ok(())
}

pub(crate) struct Clip {
    pub(crate) file: String, // manifest path, e.g. audio/en_jfk.wav
    pub(crate) duration_s: f64,
    pub(crate) line: String, // the manifest row, for the scoring manifest
}

/// The English speech clips of the corpus, long-form ones included (not the format variants of jfk).
pub(crate) fn english_clips(corpus: &Path) -> anyhow::Result<(String, Vec<Clip>)> {
    let manifest = corpus.join("manifest.tsv");
    let text = std::fs::read_to_string(&manifest)
        .with_context(|| format!("cannot read {} (pass --corpus or set SCRIBE_CORPUS_DIR)", manifest.display()))?;
    let mut lines = text.lines();
    let header = lines.next().context("empty manifest")?.to_string();
    let cols: Vec<&str> = header.split('\t').collect();
    let col =
        |name: &str| cols.iter().position(|c| *c == name).with_context(|| format!("manifest has no `{name}` column"));
    let (file, lang, dur, task) = (col("file")?, col("language")?, col("duration_s")?, col("task")?);
    let mut clips = Vec::new();
    for line in lines {
        let f: Vec<&str> = line.split('\t').collect();
        // "asr", "asr+longform+...": speech to transcribe; the variants repeat jfk in other formats.
        let is_asr = f.get(task).is_some_and(|t| t.split('+').any(|t| t == "asr"));
        if !is_asr || f[lang] != "en" || f[file].starts_with("audio/variants/") {
            continue;
        }
        clips.push(Clip {
            file: f[file].to_string(),
            duration_s: f[dur].parse().unwrap_or(0.0),
            line: line.to_string(),
        });
    }
    Ok((header, clips))
}

fn ours(args: &BenchAsrArgs, model_dir: &Path, corpus: &Path, clips: &[Clip], warmup: &Clip) -> anyhow::Result<Run> {
    let vad = model_dir.parent().unwrap_or(Path::new(".")).join("silero_vad_16k.safetensors");
    let engine = Engine::load(&EngineConfig {
        model_dir: model_dir.to_path_buf(),
        vad_path: Some(vad),
        threads: Some(args.threads),
        compute_type: std::env::var("SCRIBE_COMPUTE_TYPE").ok().and_then(|c| c.parse().ok()).unwrap_or_default(),
    })
    .with_context(|| format!("cannot load {}", model_dir.display()))?;
    let opts = TranscribeOptions {
        language: Some("en".into()),
        beam_size: args.beam,
        word_timestamps: true,
        use_vad: !args.no_vad,
        ..TranscribeOptions::default()
    };
    let transcribe = |clip: &Clip| -> anyhow::Result<String> {
        let t = engine.transcribe(&corpus.join(&clip.file), &opts, &mut |_| {});
        match t {
            Ok(t) => Ok(t.segments.iter().map(|s| s.text.trim()).collect::<Vec<_>>().join(" ")),
            Err(scribe_whisper::engine::EngineError::NoSpeech) => Ok(String::new()),
            Err(e) => Err(e).with_context(|| format!("transcribing {}", clip.file)),
        }
    };
    transcribe(warmup)?;
    let mut run = Run { label: "scribe (burn)".into(), wall_s: 0.0, hyps: Vec::new() };
    for clip in clips {
        let start = Instant::now();
        let text = transcribe(clip)?;
        let wall = start.elapsed().as_secs_f64();
        eprintln!("  ours {:<55} {wall:6.2} s  {text}", clip.file);
        run.wall_s += wall;
        run.hyps.push((clip.file.clone(), text));
    }
    Ok(run)
}

fn faster_whisper(
    args: &BenchAsrArgs,
    python: &Path,
    model_dir: &Path,
    compute_type: &str,
    corpus: &Path,
    clips: &[Clip],
    warmup: &Clip,
) -> anyhow::Result<Run> {
    let out = Command::new(python)
        .arg("-c")
        .arg(FASTER_WHISPER)
        .arg(model_dir)
        .arg(compute_type)
        .arg(args.beam.to_string())
        .arg(args.threads.to_string())
        .arg(if args.no_vad { "0" } else { "1" })
        .arg(corpus.join(&warmup.file))
        .args(clips.iter().map(|c| corpus.join(&c.file)))
        .output()
        .context("cannot run the venv's Python")?;
    if !out.status.success() {
        bail!("faster-whisper ({compute_type}) failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let mut run = Run { label: format!("faster-whisper {compute_type}"), wall_s: 0.0, hyps: Vec::new() };
    for (line, clip) in String::from_utf8(out.stdout)?.lines().zip(clips) {
        let v: serde_json::Value = serde_json::from_str(line)?;
        let wall = v["wall_s"].as_f64().unwrap_or(0.0);
        let text = v["text"].as_str().unwrap_or_default().to_string();
        eprintln!("  fw {compute_type:<7} {:<48} {wall:6.2} s  {text}", clip.file);
        run.wall_s += wall;
        run.hyps.push((clip.file.clone(), text));
    }
    if run.hyps.len() != clips.len() {
        bail!("faster-whisper ({compute_type}) returned {} of {} transcripts", run.hyps.len(), clips.len());
    }
    Ok(run)
}

/// Pooled WER (%) of `hyps` over exactly these clips, by the corpus's own scorer.
pub(crate) fn score(
    python: &Path,
    corpus: &Path,
    header: &str,
    clips: &[Clip],
    hyps: &[(String, String)],
) -> anyhow::Result<f64> {
    let dir = std::env::temp_dir().join(format!("scribe-bench-asr-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let manifest = dir.join("manifest.tsv");
    let mut m = std::fs::File::create(&manifest)?;
    writeln!(m, "{header}")?;
    for clip in clips {
        writeln!(m, "{}", clip.line)?;
    }
    let hyp_path = dir.join("hyps.tsv");
    let mut h = std::fs::File::create(&hyp_path)?;
    for (file, text) in hyps {
        writeln!(h, "{file}\t{}", text.replace(['\t', '\n'], " "))?;
    }
    let out = Command::new(python).arg(corpus.join("score_wer.py")).arg(&manifest).arg(&hyp_path).output()?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let overall = stdout.lines().find(|l| l.starts_with("overall")).context("score_wer.py printed no overall line")?;
    let rate = overall.split_whitespace().last().unwrap_or_default().trim_end_matches('%');
    rate.parse().with_context(|| format!("unreadable WER line: {overall}"))
}
