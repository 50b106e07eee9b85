//! Short-clip mode of `scribe-bench asr`: the corpus's English clips one by one, our engine at
//! each compute type against faster-whisper at each of its compute types, with the goal
//! beside each of our runs (at least 2.0× faster-whisper int8, WER at most faster-whisper
//! float32's + 0.3).

use std::path::PathBuf;

use scribe_whisper::profile::StageTime;

use super::faster_whisper::{FwRun, FwSetup};
use super::ours::{OurSetup, Ours};
use super::share::{Limits, Share, percent};
use super::{BenchAsrArgs, Setup, english_clips, ratio, score, shortest};

/// The speed goal against faster-whisper int8 on short clips.
pub const SPEED_GOAL: f64 = 2.0;
/// How far above faster-whisper float32's WER ours may be, in points.
pub const WER_MARGIN: f64 = 0.3;

struct Row {
    label: String,
    wall_s: f64,
    wer: f64,
    share: Option<Share>,
}

pub fn run(args: &BenchAsrArgs, setup: &Setup) -> anyhow::Result<()> {
    let (header, clips) = english_clips(&setup.corpus)?;
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

    for model in &args.models {
        let model_dir = setup.models_dir.join(model);
        let mut ours_rows = Vec::new();
        for ct in &args.our_compute_types {
            let ours = match Ours::load(&model_dir, ct, args.threads) {
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
            let wer = score(&setup.python, &setup.corpus, &header, &clips, &hyps)?;
            let share = Share::of(ours.cost, &stages, &limits);
            ours_rows.push(Row { label: our.label(), wall_s, wer, share: Some(share) });
        }
        let fw = FwRun {
            python: &setup.python,
            model_dir: &model_dir,
            beam: args.beam,
            threads: args.threads,
            vad: !args.no_vad,
        };
        let mut fw_rows = Vec::new();
        for ct in &args.compute_types {
            let fw_setup = FwSetup { compute_type: ct.clone(), batch_size: 0 };
            let decoded = fw.run(&fw_setup, &setup.corpus.join(&warmup.file), &files)?;
            let mut hyps = Vec::new();
            for (clip, d) in clips.iter().zip(&decoded) {
                eprintln!("  {} {:<50} {:6.2} s  {}", fw_setup.label(), clip.file, d.wall_s, d.text);
                hyps.push((clip.file.clone(), d.text.clone()));
            }
            let wer = score(&setup.python, &setup.corpus, &header, &clips, &hyps)?;
            let wall_s = decoded.iter().map(|d| d.wall_s).sum();
            fw_rows.push(Row { label: fw_setup.label(), wall_s, wer, share: None });
        }
        print_table(model, audio_s, &args.compute_types, &ours_rows, &fw_rows);
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
    head += &format!("{:>14}{:>14}{:>10}{:>10}", "2.0× fw int8", "WER ≤ f32+0.3", "dec lim", "enc lim");
    println!("{head}");
    for r in ours.iter().chain(fw) {
        let mut line = format!("{:<26}{:>9.2}{:>8.3}{:>8.2}", r.label, r.wall_s, r.wall_s / audio_s, r.wer);
        let Some(share) = r.share else {
            println!("{line}");
            continue;
        };
        for ct in fw_types {
            line += &format!("{:>12}", ratio(fw_row(ct).map(|f| f.wall_s), r.wall_s));
        }
        let speed = fw_int8.map_or("-".to_string(), |f| goal(f / r.wall_s >= SPEED_GOAL));
        let wer = fw_f32_wer.map_or("-".to_string(), |f| goal(r.wer <= f + WER_MARGIN));
        line += &format!("{speed:>14}{wer:>14}{:>10}{:>10}", percent(share.decoder), percent(share.encoder));
        println!("{line}");
    }
    println!(
        "goals: ≥ {SPEED_GOAL:.1}× faster-whisper int8, WER ≤ faster-whisper float32 + {WER_MARGIN} points; \
         dec/enc lim: share of the memory bandwidth / peak flops measured above"
    );
}

pub(crate) fn goal(met: bool) -> String {
    if met { "met" } else { "NOT met" }.to_string()
}
