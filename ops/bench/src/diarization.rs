//! `scribe-bench diarization`: our diarization (burn, `scribe-diarize`) against senko itself
//! on the corpus clips that have reference speaker turns.
//!
//! A benchmark, not a test: it prints figures and asserts nothing. For every manifest row whose
//! `task` column includes `diarization`, both sides diarize the clip and are scored against the
//! reference turns in `audio/ref/` (the row's `sidecars` column) with the same DER code
//! (`scribe_diarize::der`: missed + false alarm + confusion over the reference speech, best
//! one-to-one speaker mapping, no collar, overlap scored, the whole clip as the scored region).
//! Ours runs twice: estimating the number of speakers (as `numberOfSpeakers=0`; senko always
//! estimates), and told the reference's number (as a client giving `numberOfSpeakers`, which
//! asks for exactly that many); `--max-speakers N` makes the first run "at most N" instead.
//! Wall time covers diarization only (model loading is outside on both sides, and each side
//! first diarizes the shortest clip once untimed); each clip is diarized `--rounds` times per
//! side and the fastest run counts.
//!
//! senko (PyPI `senko==0.2.2`, CPU) runs from its own venv, created on first use (it pulls
//! torch, several GB, which is why neither `ops/setup.sh` nor the tests install it). When it
//! cannot be installed the bench says so and prints our side alone.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};
use scribe_diarize::der::{self, DerParts, Turn};
use scribe_diarize::{DiarizeOptions, Diarizer, Speakers};

#[derive(clap::Args, Debug, Clone)]
pub struct BenchDiarizationArgs {
    /// Directory holding the models installed by `ops/setup.sh` [default: ./models].
    #[arg(long, env = "SCRIBE_MODELS_DIR")]
    pub models_dir: Option<PathBuf>,
    /// Speech corpus with manifest.tsv and audio/ref/ [default: ../shared/corpus].
    #[arg(long, env = "SCRIBE_CORPUS_DIR")]
    pub corpus: Option<PathBuf>,
    /// The venv senko runs from; created (python3 -m venv, pip install senko==0.2.2) when missing.
    #[arg(long, env = "SCRIBE_SENKO_VENV", default_value = ".venv-senko")]
    pub senko_venv: PathBuf,
    /// Run ours with at most this many speakers (default: estimate, like senko).
    #[arg(long)]
    pub max_speakers: Option<usize>,
    /// Our side only.
    #[arg(long)]
    pub no_senko: bool,
    /// Frames (of 270 samples) between segmentation windows [default: the service's].
    #[arg(long)]
    pub step_frames: Option<usize>,
    /// Each side diarizes each clip this many times; the fastest run counts (the machine may
    /// be busy with other work during some of them).
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
}

struct Clip {
    file: String,
    reference: Vec<Turn>,
    duration_s: f64,
}

impl Clip {
    /// Speakers with at least one reference turn.
    fn voices(&self) -> usize {
        let mut names: Vec<&str> = self.reference.iter().map(|t| t.speaker.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        names.len()
    }
}

struct Side {
    der: Vec<DerParts>,
    speakers: Vec<usize>,
    wall_s: Vec<f64>,
}

const SENKO: &str = r#"
import json, sys, time, warnings
warnings.filterwarnings("ignore")
import senko
diarizer = senko.Diarizer(device="cpu", warmup=True, quiet=True)
rounds, warmup, files = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
diarizer.diarize(warmup)
for path in files:
    wall = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        result = diarizer.diarize(path)
        wall = min(wall, time.perf_counter() - start)
    segs = (result or {}).get("merged_segments") or []
    turns = [[float(s["start"]), float(s["end"]), str(s["speaker"])] for s in segs]
    print(json.dumps({"file": path, "wall_s": wall, "turns": turns}), flush=True)
"#;

pub fn run(args: BenchDiarizationArgs) -> anyhow::Result<()> {
    let models_dir = args.models_dir.clone().unwrap_or_else(crate::default_models_dir);
    let corpus = args.corpus.clone().unwrap_or_else(|| PathBuf::from("../shared/corpus"));
    let clips = clips(&corpus)?;
    let audio_s: f64 = clips.iter().map(|c| c.duration_s).sum();
    eprintln!("{} clips with reference turns, {audio_s:.1} s of audio", clips.len());

    let diarizer = Diarizer::load(&models_dir)?;
    let mut audio = Vec::new();
    for c in &clips {
        let path = corpus.join(&c.file);
        audio.push(scribe_whisper::audio::decode_all(&path).with_context(|| format!("decoding {}", path.display()))?);
    }
    let estimated = args.max_speakers.map_or(Speakers::Estimate, Speakers::AtMost);
    let ours = ours(&args, &diarizer, &audio, &clips, |_| estimated)?;
    let given = ours_given(&args, &diarizer, &audio, &clips)?;
    let senko = if args.no_senko {
        None
    } else {
        match senko_venv(&args.senko_venv) {
            Ok(python) => match senko(&python, &corpus, &clips, args.rounds.max(1)) {
                Ok(side) => Some(side),
                Err(e) => {
                    println!("senko could not run: {e:#}; printing our side only");
                    None
                }
            },
            Err(e) => {
                println!("senko is not available: {e:#}; printing our side only");
                None
            }
        }
    };

    println!();
    println!(
        "{:<42}{:>8}{:>4} | {:>7}{:>6}{:>9} | {:>9}{:>6} | {:>7}{:>6}{:>9}",
        "clip", "audio s", "ref", "ours DER", "spk", "wall s", "given DER", "spk", "senko DER", "spk", "wall s"
    );
    let mut total_ours = DerParts::default();
    let mut total_given = DerParts::default();
    let mut total_senko = DerParts::default();
    for (i, c) in clips.iter().enumerate() {
        total_ours = total_ours.add(&ours.der[i]);
        total_given = total_given.add(&given.der[i]);
        let theirs = match &senko {
            Some(s) => {
                total_senko = total_senko.add(&s.der[i]);
                format!("{:>8.1}%{:>6}{:>9.2}", 100.0 * s.der[i].der(), s.speakers[i], s.wall_s[i])
            }
            None => format!("{:>8}{:>6}{:>9}", "-", "-", "-"),
        };
        let name = Path::new(&c.file).file_name().map_or(c.file.clone(), |n| n.to_string_lossy().into_owned());
        println!(
            "{name:<42}{:>8.1}{:>4} | {:>7.1}%{:>6}{:>9.2} | {:>8.1}%{:>6} | {theirs}",
            c.duration_s,
            c.voices(),
            100.0 * ours.der[i].der(),
            ours.speakers[i],
            ours.wall_s[i],
            100.0 * given.der[i].der(),
            given.speakers[i],
        );
    }
    let ours_wall: f64 = ours.wall_s.iter().sum();
    let theirs = match &senko {
        Some(s) => {
            let w: f64 = s.wall_s.iter().sum();
            format!("{:>8.1}%{:>6}{:>9.2}", 100.0 * total_senko.der(), "", w)
        }
        None => format!("{:>8}{:>6}{:>9}", "-", "", "-"),
    };
    println!(
        "{:<42}{audio_s:>8.1}{:>4} | {:>7.1}%{:>6}{ours_wall:>9.2} | {:>8.1}%{:>6} | {theirs}",
        "total (DER over all reference speech)",
        "",
        100.0 * total_ours.der(),
        "",
        100.0 * total_given.der(),
        "",
    );
    println!();
    println!("where the error lies, seconds of the reference speech missed / false alarm / confused:");
    println!("{:<42}{:>7} | {:>20} | {:>20} | {:>20}", "clip", "speech", "ours", "given", "senko");
    let parts = |p: &DerParts| format!("{:>6.1}{:>7.1}{:>7.1}", p.missed, p.false_alarm, p.confusion);
    for (i, c) in clips.iter().enumerate() {
        let name = Path::new(&c.file).file_name().map_or(c.file.clone(), |n| n.to_string_lossy().into_owned());
        let theirs = senko.as_ref().map_or(format!("{:>20}", "-"), |s| parts(&s.der[i]));
        println!(
            "{name:<42}{:>7.1} | {} | {} | {theirs}",
            ours.der[i].reference,
            parts(&ours.der[i]),
            parts(&given.der[i])
        );
    }
    let right = clips.iter().zip(&given.speakers).filter(|(c, n)| c.voices() == **n).count();
    println!("given the reference's number: the right number of speakers on {right} of {} recordings", clips.len());
    println!(
        "ours: real-time factor {:.3} (miss {:.1} s, false alarm {:.1} s, confusion {:.1} s of {:.1} s)",
        ours_wall / audio_s,
        total_ours.missed,
        total_ours.false_alarm,
        total_ours.confusion,
        total_ours.reference
    );
    if let Some(s) = &senko {
        let w: f64 = s.wall_s.iter().sum();
        println!(
            "senko: real-time factor {:.3} (miss {:.1} s, false alarm {:.1} s, confusion {:.1} s of {:.1} s); speed ratio senko/ours {:.2}",
            w / audio_s,
            total_senko.missed,
            total_senko.false_alarm,
            total_senko.confusion,
            total_senko.reference,
            w / ours_wall
        );
    }
    Ok(())
}

/// Manifest rows whose task includes `diarization`, with their reference turns.
fn clips(corpus: &Path) -> anyhow::Result<Vec<Clip>> {
    let manifest = corpus.join("manifest.tsv");
    let text = std::fs::read_to_string(&manifest)
        .with_context(|| format!("cannot read {} (pass --corpus or set SCRIBE_CORPUS_DIR)", manifest.display()))?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().context("empty manifest")?.split('\t').collect();
    let col =
        |name: &str| header.iter().position(|c| *c == name).with_context(|| format!("manifest has no `{name}` column"));
    let (file, dur, task, side) = (col("file")?, col("duration_s")?, col("task")?, col("sidecars")?);
    let mut out = Vec::new();
    for line in lines {
        let f: Vec<&str> = line.split('\t').collect();
        if !f.get(task).is_some_and(|t| t.split('+').any(|t| t == "diarization")) {
            continue;
        }
        let Some(refs) =
            f.get(side).and_then(|s| s.split(',').map(str::trim).find(|s| s.ends_with(".rttm") || s.ends_with(".tsv")))
        else {
            continue;
        };
        let path = corpus.join(refs);
        let reference = der::read_turns(
            &std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?,
        );
        out.push(Clip { file: f[file].to_string(), reference, duration_s: f[dur].parse().unwrap_or(0.0) });
    }
    if out.is_empty() {
        bail!("no manifest row has `diarization` in its task column");
    }
    Ok(out)
}

/// Ours on every clip, told `speakers(clip)`; timed over `--rounds`.
fn ours(
    args: &BenchDiarizationArgs,
    diarizer: &Diarizer,
    audio: &[Vec<f32>],
    clips: &[Clip],
    speakers: impl Fn(&Clip) -> Speakers,
) -> anyhow::Result<Side> {
    let shortest = audio.iter().min_by_key(|a| a.len()).context("no clips")?;
    let defaults = DiarizeOptions::default();
    let defaults = DiarizeOptions { step_frames: args.step_frames.unwrap_or(defaults.step_frames), ..defaults };
    diarizer.diarize(shortest, &defaults); // warm-up, untimed
    let mut side = Side { der: Vec::new(), speakers: Vec::new(), wall_s: Vec::new() };
    for (c, samples) in clips.iter().zip(audio) {
        let opts = DiarizeOptions { speakers: speakers(c), ..defaults.clone() };
        let mut wall = f64::INFINITY;
        let mut d = Default::default();
        for _ in 0..args.rounds.max(1) {
            let t0 = Instant::now();
            d = diarizer.diarize(samples, &opts);
            wall = wall.min(t0.elapsed().as_secs_f64());
        }
        let d: scribe_diarize::Diarization = d;
        side.wall_s.push(wall);
        let hyp: Vec<Turn> =
            d.turns.iter().map(|t| Turn { start: t.start, end: t.end, speaker: t.speaker.to_string() }).collect();
        side.der.push(der::score(&c.reference, &hyp, 0.0, samples.len() as f64 / 16_000.0));
        side.speakers.push(d.speakers);
    }
    Ok(side)
}

/// Ours told each clip's number of reference speakers (as `numberOfSpeakers` given), run once.
fn ours_given(
    args: &BenchDiarizationArgs,
    diarizer: &Diarizer,
    audio: &[Vec<f32>],
    clips: &[Clip],
) -> anyhow::Result<Side> {
    let once = BenchDiarizationArgs { rounds: 1, ..args.clone() };
    ours(&once, diarizer, audio, clips, |c| Speakers::Exactly(c.voices().clamp(1, 5)))
}

/// The senko venv's Python, creating the venv first if needed.
fn senko_venv(venv: &Path) -> anyhow::Result<PathBuf> {
    let python = venv.join("bin/python");
    let ready = python.exists()
        && Command::new(&python).args(["-c", "import senko"]).output().is_ok_and(|o| o.status.success());
    if ready {
        return Ok(python);
    }
    eprintln!("creating {} with senko==0.2.2 (pulls torch; several GB, only for this bench)", venv.display());
    let status = Command::new("python3").args(["-m", "venv"]).arg(venv).status().context("running python3 -m venv")?;
    if !status.success() {
        bail!("python3 -m venv {} failed", venv.display());
    }
    // CPU torch from PyTorch's own index when it is reachable (a fraction of the size), else PyPI.
    let cpu = Command::new(venv.join("bin/pip"))
        .args(["install", "-q", "--index-url", "https://download.pytorch.org/whl/cpu", "torch>=2.8,<3"])
        .status();
    if !cpu.is_ok_and(|s| s.success()) {
        eprintln!("PyTorch's CPU index is not reachable; senko's torch comes from PyPI");
    }
    let status =
        Command::new(venv.join("bin/pip")).args(["install", "-q", "senko==0.2.2"]).status().context("running pip")?;
    if !status.success() {
        bail!("pip install senko==0.2.2 into {} failed", venv.display());
    }
    Ok(python)
}

fn senko(python: &Path, corpus: &Path, clips: &[Clip], rounds: usize) -> anyhow::Result<Side> {
    let files: Vec<PathBuf> = clips.iter().map(|c| corpus.join(&c.file)).collect();
    let shortest = clips
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.duration_s.total_cmp(&b.1.duration_s))
        .map(|(i, _)| &files[i])
        .context("no clips")?;
    let out = Command::new(python)
        .arg("-c")
        .arg(SENKO)
        .arg(rounds.to_string())
        .arg(shortest)
        .args(&files)
        .output()
        .context("running senko")?;
    if !out.status.success() {
        bail!(
            "senko failed: {}",
            String::from_utf8_lossy(&out.stderr).lines().rev().take(5).collect::<Vec<_>>().join(" | ")
        );
    }
    let mut side = Side { der: Vec::new(), speakers: Vec::new(), wall_s: Vec::new() };
    let lines: Vec<serde_json::Value> =
        String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    for (c, line) in clips.iter().zip(&lines) {
        let turns: Vec<Turn> = line["turns"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|t| Turn {
                        start: t[0].as_f64().unwrap_or(0.0),
                        end: t[1].as_f64().unwrap_or(0.0),
                        speaker: t[2].as_str().unwrap_or("").to_string(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut names: Vec<&str> = turns.iter().map(|t| t.speaker.as_str()).collect();
        names.sort();
        names.dedup();
        side.speakers.push(names.len());
        side.der.push(der::score(&c.reference, &turns, 0.0, c.duration_s));
        side.wall_s.push(line["wall_s"].as_f64().unwrap_or(0.0));
    }
    if side.der.len() != clips.len() {
        bail!("senko answered {} of {} clips", side.der.len(), clips.len());
    }
    Ok(side)
}
