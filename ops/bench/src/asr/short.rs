//! Short-clip mode of `scribe-bench asr`: the corpus's English clips one by one (not the
//! long-form recordings), our engine at each compute type against faster-whisper at each of its
//! compute types, with the goals beside each of our runs (at least 2.0× faster-whisper
//! int8, WER at most faster-whisper float32's + 0.3, no text repeated where nothing was said),
//! the clips more than 5 points above faster-whisper float32, and the corpus's other languages.

use std::path::PathBuf;

use scribe_whisper::profile::StageTime;

use super::faster_whisper::{FwRun, FwSetup};
use super::ours::{OurSetup, Ours};
use super::share::{Limits, Share, percent};
use super::{BenchAsrArgs, Clip, Setup, english_clips, ratio, score_per_clip, shortest};
use scribe_bench::corpus::other_languages;
use scribe_whisper::repetition::repeated_insertions;

/// The speed goal against faster-whisper int8 on short clips.
pub const SPEED_GOAL: f64 = 2.0;
/// How far above faster-whisper float32's WER ours may be, in points.
pub const WER_MARGIN: f64 = 0.3;

/// How far above faster-whisper float32's WER one clip's may be, in points.
pub const CLIP_MARGIN: f64 = 5.0;

struct Row {
    label: String,
    wall_s: f64,
    wer: f64,
    /// Each clip's WER (%), in the clips' order.
    per_clip: Vec<f64>,
    /// Clips whose text repeats a run of four words where the reference has no words
    /// ([`repeated_insertions`]), with the first such run: text the decoder repeated.
    loops: Vec<(String, String)>,
    share: Option<Share>,
}

/// The clips among `hyps` whose text repeats a run of four words where the reference has none.
fn loops(clips: &[Clip], hyps: &[(String, String)]) -> Vec<(String, String)> {
    clips
        .iter()
        .zip(hyps)
        .filter_map(|(clip, (_, text))| {
            let first = repeated_insertions(text, &clip.transcript).into_iter().next()?;
            Some((clip.file.clone(), format!("\"{}\" {}× (said {}×)", first.0, first.1, first.2)))
        })
        .collect()
}

pub fn run(args: &BenchAsrArgs, setup: &Setup) -> anyhow::Result<()> {
    let (header, mut clips) = english_clips(&setup.corpus)?;
    clips.retain(|c| !c.long_form); // `--long` measures those
    let audio_s: f64 = clips.iter().map(|c| c.duration_s).sum();
    let warmup = shortest(&clips)?;
    eprintln!(
        "{} English clips, {audio_s:.1} s of audio; beam {}, {} threads, VAD {}",
        clips.len(),
        args.beam,
        args.threads,
        if args.no_vad { "off" } else { "on" }
    );
    let limits = Limits::measure(args.threads);
    println!("{}", limits.describe(args.threads));
    let files: Vec<PathBuf> = clips.iter().map(|c| setup.corpus.join(&c.file)).collect();
    // The other languages' clips: their WER only, on multilingual models.
    let others = other_languages(&setup.corpus)?;

    for model in &args.models {
        let model_dir = setup.models_dir.join(model);
        let mut ours_rows = Vec::new();
        let mut multilingual = false;
        let mut by_language: Vec<(String, String, f64, usize)> = Vec::new(); // language, run, WER, loops
        for ct in &args.our_compute_types {
            let ours = match Ours::load(&model_dir, ct, args.threads, args.device) {
                Ok(o) => o,
                Err(e) => {
                    println!("{model}: scribe {ct} skipped: {e:#}");
                    continue;
                }
            };
            let our = OurSetup { compute_type: ct.clone(), batch_size: None };
            ours.transcribe(&setup.corpus.join(&warmup.file), &our, args.beam, !args.no_vad)?;
            let (mut wall_s, mut hyps, mut stages) = (0.0, Vec::new(), Vec::<StageTime>::new());
            for (clip, file) in clips.iter().zip(&files) {
                let d = ours.transcribe(file, &our, args.beam, !args.no_vad)?;
                eprintln!("  {} {:<50} {:6.2} s  {}", our.label(), clip.file, d.wall_s, d.text);
                wall_s += d.wall_s;
                hyps.push((clip.file.clone(), d.text));
                Share::add_stages(&mut stages, d.stages);
            }
            let (wer, per_clip) = score_per_clip(&setup.python, &setup.corpus, &header, &clips, &hyps)?;
            let share = Share::of(ours.cost, &stages, &limits);
            let loops = loops(&clips, &hyps);
            ours_rows.push(Row { label: our.label(), wall_s, wer, per_clip, loops, share: Some(share) });
            multilingual = ours.engine.info().multilingual;
            for (language, lang_clips) in others.iter().filter(|_| multilingual) {
                let mut hyps = Vec::new();
                for clip in lang_clips {
                    let d =
                        ours.transcribe_in(language, &setup.corpus.join(&clip.file), &our, args.beam, !args.no_vad)?;
                    eprintln!("  {} {:<50} {:6.2} s  {}", our.label(), clip.file, d.wall_s, d.text);
                    hyps.push((clip.file.clone(), d.text));
                }
                let (wer, _) = score_per_clip(&setup.python, &setup.corpus, &header, lang_clips, &hyps)?;
                by_language.push((language.clone(), our.label(), wer, self::loops(lang_clips, &hyps).len()));
            }
        }
        let fw = FwRun::english(setup, &model_dir, args);
        let mut fw_rows = Vec::new();
        for ct in &args.compute_types {
            let fw_setup = FwSetup { compute_type: ct.clone(), batch_size: 0 };
            let decoded = fw.run(&fw_setup, &setup.corpus.join(&warmup.file), &files)?;
            let mut hyps = Vec::new();
            for (clip, d) in clips.iter().zip(&decoded) {
                eprintln!("  {} {:<50} {:6.2} s  {}", fw_setup.label(), clip.file, d.wall_s, d.text);
                hyps.push((clip.file.clone(), d.text.clone()));
            }
            let (wer, per_clip) = score_per_clip(&setup.python, &setup.corpus, &header, &clips, &hyps)?;
            let wall_s = decoded.iter().map(|d| d.wall_s).sum();
            let loops = loops(&clips, &hyps);
            fw_rows.push(Row { label: fw_setup.label(), wall_s, wer, per_clip, loops, share: None });
            for (language, lang_clips) in others.iter().filter(|_| multilingual) {
                let files: Vec<PathBuf> = lang_clips.iter().map(|c| setup.corpus.join(&c.file)).collect();
                let decoded =
                    FwRun { language, ..fw }.run(&fw_setup, &setup.corpus.join(&lang_clips[0].file), &files)?;
                let hyps: Vec<(String, String)> =
                    lang_clips.iter().zip(decoded).map(|(c, d)| (c.file.clone(), d.text)).collect();
                let (wer, _) = score_per_clip(&setup.python, &setup.corpus, &header, lang_clips, &hyps)?;
                by_language.push((language.clone(), fw_setup.label(), wer, self::loops(lang_clips, &hyps).len()));
            }
        }
        print_table(model, audio_s, &args.compute_types, &ours_rows, &fw_rows);
        print_clips(&clips, &ours_rows, &fw_rows);
        for (language, run, wer, loops) in &by_language {
            let n = others.iter().find(|o| &o.0 == language).map_or(0, |o| o.1.len());
            println!("{model} {language} ({n} clips): {run:<26} WER {wer:6.2} %, {loops} loops");
        }
    }
    Ok(())
}

fn print_table(model: &str, audio_s: f64, fw_types: &[String], ours: &[Row], fw: &[Row]) {
    let fw_row = |ct: &str| fw.iter().find(|r| r.label == format!("faster-whisper {ct}"));
    let fw_int8 = fw_row("int8").map(|r| r.wall_s);
    let fw_f32_wer = fw_row("float32").map(|r| r.wer);
    println!();
    println!("{model}: {audio_s:.1} s of audio");
    let mut head = format!("{:<26}{:>9}{:>8}{:>8}", "engine", "wall s", "RTF", "WER %");
    for ct in fw_types {
        head += &format!("{:>12}", format!("×fw {ct}"));
    }
    head += &format!("{:>14}{:>14}{:>7}{:>10}{:>10}", "2.0× fw int8", "WER ≤ f32+0.3", "loops", "dec lim", "enc lim");
    println!("{head}");
    for r in ours.iter().chain(fw) {
        let mut line = format!("{:<26}{:>9.2}{:>8.3}{:>8.2}", r.label, r.wall_s, r.wall_s / audio_s, r.wer);
        let Some(share) = r.share else {
            let pad = 12 * fw_types.len() + 28;
            println!("{line}{:>pad$}{:>7}", "", r.loops.len());
            continue;
        };
        for ct in fw_types {
            line += &format!("{:>12}", ratio(fw_row(ct).map(|f| f.wall_s), r.wall_s));
        }
        let speed = fw_int8.map_or("-".to_string(), |f| goal(f / r.wall_s >= SPEED_GOAL));
        let wer = fw_f32_wer.map_or("-".to_string(), |f| goal(r.wer <= f + WER_MARGIN));
        line += &format!(
            "{speed:>14}{wer:>14}{:>7}{:>10}{:>10}",
            r.loops.len(),
            percent(share.decoder),
            percent(share.encoder)
        );
        println!("{line}");
    }
    println!(
        "goals: ≥ {SPEED_GOAL:.1}× faster-whisper int8, WER ≤ faster-whisper float32 + {WER_MARGIN} points, no loops; \
         loops: clips whose text repeats a run of four words where their reference has none; \
         dec/enc lim: share of the memory bandwidth / peak flops measured above"
    );
}

/// Each run's clips more than [`CLIP_MARGIN`] points above faster-whisper float32's WER, and
/// every run's loops, named.
fn print_clips(clips: &[Clip], ours: &[Row], fw: &[Row]) {
    let Some(anchor) = fw.iter().find(|r| r.label == "faster-whisper float32") else { return };
    for r in ours.iter().chain(fw) {
        let worse: Vec<String> = clips
            .iter()
            .zip(r.per_clip.iter().zip(&anchor.per_clip))
            .filter(|(_, (ours, fw))| **ours > **fw + CLIP_MARGIN)
            .map(|(c, (ours, fw))| format!("{} {ours:.1} % (fw float32 {fw:.1} %)", c.file))
            .collect();
        let verdict = if worse.is_empty() { "none".to_string() } else { worse.join(", ") };
        println!("{}: clips more than {CLIP_MARGIN} points above faster-whisper float32: {verdict}", r.label);
        for (file, run) in &r.loops {
            println!("{}: loop in {file}: {run}", r.label);
        }
    }
}

pub(crate) fn goal(met: bool) -> String {
    if met { "met" } else { "NOT met" }.to_string()
}
