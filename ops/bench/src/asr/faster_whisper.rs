//! faster-whisper's side of `scribe-bench asr`, run by the project venv's Python: `WhisperModel`
//! (sequential) or `BatchedInferencePipeline` at a compute type, loaded untimed and warmed up on
//! one file, then each file timed, with its text and word times.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

/// Loads the model, warms up on `warmup`, then prints one JSON line per file.
const SCRIPT: &str = r#"
import json, sys, time
from faster_whisper import WhisperModel, BatchedInferencePipeline
cfg = json.loads(sys.argv[1])
model = WhisperModel(cfg["model_dir"], device="cpu", compute_type=cfg["compute_type"], cpu_threads=cfg["threads"], num_workers=1)
batched = cfg["batch_size"] > 0
pipeline = BatchedInferencePipeline(model) if batched else model
def run(path):
    kw = dict(language="en", beam_size=cfg["beam"], word_timestamps=True)
    if batched:
        kw["batch_size"] = cfg["batch_size"]  # with its own VAD chunking (it needs one)
    else:
        kw["vad_filter"] = cfg["vad"]
    segments, _ = pipeline.transcribe(path, **kw)
    segments = list(segments)
    text = " ".join(s.text.strip() for s in segments)
    words = [[w.start, w.end] for s in segments for w in (s.words or [])]
    return text, words
run(cfg["warmup"])
for path in cfg["files"]:
    start = time.perf_counter()
    text, words = run(path)
    print(json.dumps({"file": path, "wall_s": time.perf_counter() - start, "text": text, "words": words}), flush=True)
"#;

/// One faster-whisper configuration.
#[derive(Clone, Debug)]
pub struct FwSetup {
    pub compute_type: String,
    /// 0: `WhisperModel.transcribe` (sequential); n: `BatchedInferencePipeline`, batch n.
    pub batch_size: usize,
}

impl FwSetup {
    pub fn label(&self) -> String {
        match self.batch_size {
            0 => format!("faster-whisper {}", self.compute_type),
            n => format!("fw batched {} b{n}", self.compute_type),
        }
    }
}

/// One file's result.
pub struct FwDecoded {
    pub wall_s: f64,
    pub text: String,
    pub words: Vec<(f64, f64)>,
}

/// Everything `run` needs besides the files.
pub struct FwRun<'a> {
    pub python: &'a Path,
    pub model_dir: &'a Path,
    pub beam: usize,
    pub threads: usize,
    pub vad: bool,
}

impl FwRun<'_> {
    /// Transcribes `files` (after an untimed `warmup`) with `setup`, in one Python process.
    pub fn run(&self, setup: &FwSetup, warmup: &Path, files: &[PathBuf]) -> anyhow::Result<Vec<FwDecoded>> {
        let cfg = serde_json::json!({
            "model_dir": self.model_dir,
            "compute_type": setup.compute_type,
            "threads": self.threads,
            "beam": self.beam,
            "vad": self.vad,
            "batch_size": setup.batch_size,
            "warmup": warmup,
            "files": files,
        });
        let out = Command::new(self.python)
            .arg("-c")
            .arg(SCRIPT)
            .arg(cfg.to_string())
            .output()
            .context("cannot run the venv's Python")?;
        if !out.status.success() {
            bail!("{} failed: {}", setup.label(), String::from_utf8_lossy(&out.stderr));
        }
        let mut decoded = Vec::new();
        for line in String::from_utf8(out.stdout)?.lines() {
            let v: serde_json::Value = serde_json::from_str(line)?;
            let words = v["words"]
                .as_array()
                .map(|ws| ws.iter().map(|w| (w[0].as_f64().unwrap_or(0.0), w[1].as_f64().unwrap_or(0.0))).collect())
                .unwrap_or_default();
            decoded.push(FwDecoded {
                wall_s: v["wall_s"].as_f64().unwrap_or(0.0),
                text: v["text"].as_str().unwrap_or_default().to_string(),
                words,
            });
        }
        if decoded.len() != files.len() {
            bail!("{} returned {} of {} transcripts", setup.label(), decoded.len(), files.len());
        }
        Ok(decoded)
    }
}
