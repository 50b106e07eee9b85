//! faster-whisper's side of `scribe-bench asr`, run by the project venv's Python: `WhisperModel`
//! (sequential) or `BatchedInferencePipeline` at a compute type, loaded untimed and warmed up on
//! one file, then each file timed, with its text, word times and the time of its CTranslate2
//! calls (encoder, beam search, word alignment), to set beside where our time goes.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

/// Loads the model, warms up on `warmup`, then prints one JSON line per file.
const SCRIPT: &str = r#"
import json, sys, time
from faster_whisper import WhisperModel, BatchedInferencePipeline
cfg = json.loads(sys.argv[1])
model = WhisperModel(cfg["model_dir"], device="cpu", compute_type=cfg["compute_type"], cpu_threads=cfg["threads"], num_workers=1)
class Timed:
    """The CTranslate2 model, with its encode, generate and align calls timed."""
    def __init__(self, inner):
        self.inner, self.stages = inner, {}
    def __getattr__(self, name):
        attr = getattr(self.inner, name)
        if name not in ("encode", "generate", "align"):
            return attr
        def timed(*args, **kwargs):
            start = time.perf_counter()
            out = attr(*args, **kwargs)
            stage = self.stages.setdefault(name, [0.0, 0, 0])
            stage[0] += time.perf_counter() - start
            stage[1] += 1
            stage[2] += args[0].shape[0] if args and hasattr(args[0], "shape") else 0
            return out
        return timed
model.model = Timed(model.model)
batched = cfg["batch_size"] > 0
pipeline = BatchedInferencePipeline(model) if batched else model
def run(path):
    kw = dict(language=cfg["language"], beam_size=cfg["beam"], word_timestamps=True)
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
    model.model.stages = {}
    start = time.perf_counter()
    text, words = run(path)
    wall_s = time.perf_counter() - start
    print(json.dumps({"file": path, "wall_s": wall_s, "text": text, "words": words, "stages": model.model.stages}), flush=True)
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
    /// Its CTranslate2 calls: `encode`, `generate` and `align`, in that order, those made.
    pub stages: Vec<FwStage>,
}

/// The time of one kind of CTranslate2 call while a file was transcribed.
pub struct FwStage {
    pub name: &'static str,
    pub seconds: f64,
    pub calls: u64,
    /// The batch rows of those calls: windows encoded, windows decoded or aligned.
    pub rows: u64,
}

impl FwStage {
    /// "encode 9.6 s/3 (18 windows, 0.53 s a window)".
    pub fn describe(&self) -> String {
        let head = format!("{} {:.1} s/{}", self.name, self.seconds, self.calls);
        match self.rows {
            0 => head,
            n => format!("{head} ({n} windows, {:.2} s a window)", self.seconds / n as f64),
        }
    }
}

/// Everything `run` needs besides the files.
pub struct FwRun<'a> {
    pub python: &'a Path,
    /// The speech's language (Whisper's code).
    pub language: &'a str,
    pub model_dir: &'a Path,
    pub beam: usize,
    pub threads: usize,
    pub vad: bool,
}

impl<'a> FwRun<'a> {
    /// English, with the benchmark's beam, threads and voice detection.
    pub fn english(setup: &'a super::Setup, model_dir: &'a Path, args: &super::BenchAsrArgs) -> FwRun<'a> {
        FwRun {
            python: &setup.python,
            language: "en",
            model_dir,
            beam: args.beam,
            threads: args.threads,
            vad: !args.no_vad,
        }
    }

    /// Transcribes `files` (after an untimed `warmup`) with `setup`, in one Python process.
    pub fn run(&self, setup: &FwSetup, warmup: &Path, files: &[PathBuf]) -> anyhow::Result<Vec<FwDecoded>> {
        let cfg = serde_json::json!({
            "model_dir": self.model_dir,
            "compute_type": setup.compute_type,
            "language": self.language,
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
            let stages = ["encode", "generate", "align"]
                .into_iter()
                .filter_map(|name| {
                    let s = v["stages"][name].as_array()?;
                    Some(FwStage {
                        name,
                        seconds: s.first()?.as_f64()?,
                        calls: s.get(1)?.as_u64()?,
                        rows: s.get(2)?.as_u64()?,
                    })
                })
                .collect();
            decoded.push(FwDecoded {
                wall_s: v["wall_s"].as_f64().unwrap_or(0.0),
                text: v["text"].as_str().unwrap_or_default().to_string(),
                words,
                stages,
            });
        }
        if decoded.len() != files.len() {
            bail!("{} returned {} of {} transcripts", setup.label(), decoded.len(), files.len());
        }
        Ok(decoded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stage_is_told_with_its_time_a_window() {
        let encode = FwStage { name: "encode", seconds: 9.42, calls: 3, rows: 18 };
        assert_eq!(encode.describe(), "encode 9.4 s/3 (18 windows, 0.52 s a window)");
        let none = FwStage { name: "align", seconds: 0.0, calls: 0, rows: 0 };
        assert_eq!(none.describe(), "align 0.0 s/0");
    }
}
