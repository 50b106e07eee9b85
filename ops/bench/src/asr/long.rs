//! Long-recording mode of `scribe-bench asr --long`: one recording of `--long-minutes` built
//! from the corpus's real English clips joined by 0.7 s pauses ([`scribe_bench::long_recording`]),
//! then each long-form reading of the corpus against its takes cut out of it (`from_takes`),
//! transcribed by our engine (sequential `batch_size: 1` and the engine's choice `batch_size: 0`,
//! at each compute type) and by faster-whisper (sequential at its compute types, and
//! `BatchedInferencePipeline` int8 as the third anchor). For each run: wall time, real-time
//! factor, speed ratio against each anchor, the WER of the recording against its joined reference
//! beside the WER of the same clips decoded one by one (the clips' texts joined in the
//! recording's order, against the same reference), and the speech the run left without words:
//! VAD speech regions and clips with no word inside them. Then the goals next to what
//! was reached, and where the time goes: our engine's stages, and faster-whisper's CTranslate2
//! calls (windows encoded, decoded and aligned).
//!
//! The VAD regions are our engine's `speech_spans` with the chunking of faster-whisper's batched
//! pipeline (160 ms of silence ends a region, at most 30 s), the same regions for every run:
//! the default chunking (2 s of silence) would merge the whole recording into a few regions.

use std::collections::HashMap;
use std::ops::Range;
use std::path::PathBuf;

use scribe_bench::corpus::{Clip, english_clips, manifest_row, real_english_clips};
use scribe_bench::long_recording::{self, GAP_S, LongRecording};
use scribe_whisper::audio::SAMPLE_RATE;
use scribe_whisper::profile::StageTime;
use scribe_whisper::vad::VadParams;

use super::errors_by_clip;
use super::faster_whisper::{FwRun, FwSetup};
use super::ours::{OurSetup, Ours};
use super::share::{Limits, Share, percent};
use super::short::goal;
use super::{BenchAsrArgs, Setup, ratio, score_rows, shortest};

/// How far the recording's WER may be above the clips' decoded one by one, in points.
pub const JOINED_MARGIN: f64 = 1.0;

/// The speed goal against faster-whisper's batched pipeline on a long recording.
pub const LONG_SPEED_GOAL: f64 = 1.5;

/// One run over the recording and over its clips one by one.
struct Row {
    label: String,
    wall_s: f64,
    wer_long: f64,
    wer_clips: f64,
    wordless: Wordless,
    /// VAD regions without words when the clips are decoded one by one ([`wordless_alone`]).
    wordless_alone: usize,
    /// Which clips' errors the joining changed ([`errors_by_clip::describe`]).
    errors_by_clip: String,
    /// Ours only: the share of the limits, and the stage timings of the long run.
    ours: Option<(Share, Vec<StageTime>)>,
    /// faster-whisper only: its CTranslate2 calls on the long run, described.
    anchor_stages: Option<String>,
}

pub fn run(args: &BenchAsrArgs, setup: &Setup) -> anyhow::Result<()> {
    let (header, clips) = real_english_clips(&setup.corpus)?;
    let warmup = shortest(&clips)?.clone();
    let limits = Limits::measure(args.threads);
    println!("{}", limits.describe(args.threads));
    crate::env::in_scratch_dir(args.scratch_dir.clone(), "asr-long", |dir| {
        let name = format!("long_{}min.wav", args.long_minutes);
        let rec = long_recording::build(&setup.corpus, &clips, args.long_minutes * 60.0, GAP_S, &dir.join(&name))?;
        println!(
            "long recording: {:.1} s, {} clips ({} distinct, real English) joined by {GAP_S} s pauses, {} reference words; beam {}, {} threads",
            rec.duration_s(),
            rec.clips.len(),
            clips.len(),
            rec.reference.split_whitespace().count(),
            args.beam,
            args.threads,
        );
        measure(args, setup, &limits, &warmup, &header, &name, &rec, &clips)?;
        // The corpus's long-form readings, against their takes decoded one by one.
        let (_, all) = english_clips(&setup.corpus)?;
        for reading in all.iter().filter(|c| c.long_form && c.is_real() && c.sidecar.is_some()) {
            let takes_dir = dir.join("takes");
            std::fs::create_dir_all(&takes_dir)?;
            let (rec, takes) = long_recording::from_takes(&setup.corpus, reading, &takes_dir)?;
            println!();
            println!(
                "long-form reading {}: {:.1} s, {} takes, {} reference words; beam {}, {} threads",
                reading.file,
                rec.duration_s(),
                takes.len(),
                rec.reference.split_whitespace().count(),
                args.beam,
                args.threads,
            );
            let name = reading.file.rsplit('/').next().unwrap_or(&reading.file);
            measure(args, setup, &limits, &warmup, &header, name, &rec, &takes)?;
        }
        Ok(())
    })
}

/// Every run over the recording `rec` and over its `clips` one by one, then the table.
fn measure(
    args: &BenchAsrArgs,
    setup: &Setup,
    limits: &Limits,
    warmup: &Clip,
    header: &str,
    name: &str,
    rec: &LongRecording,
    clips: &[Clip],
) -> anyhow::Result<()> {
    let references = clips.iter().map(|c| (c.file.clone(), c.transcript.clone())).collect();
    let scoring = Scoring { setup, header, name, rec, references };
    let clip_files: Vec<PathBuf> = clips.iter().map(|c| setup.corpus.join(&c.file)).collect();
    for model in &args.models {
        let model_dir = setup.models_dir.join(model);
        let mut rows = Vec::new();
        let mut regions: Option<Vec<Range<f64>>> = None;
        let mut clip_regions: HashMap<String, Vec<Range<f64>>> = HashMap::new();
        for ct in &args.our_compute_types {
            let ours = match Ours::load(&model_dir, ct, args.threads, args.device) {
                Ok(o) => o,
                Err(e) => {
                    println!("{model}: scribe {ct} skipped: {e:#}");
                    continue;
                }
            };
            if regions.is_none() {
                regions = Some(ours.engine.speech_spans(&rec.path, &region_params())?);
                for (clip, file) in clips.iter().zip(&clip_files) {
                    clip_regions.insert(clip.file.clone(), ours.engine.speech_spans(file, &region_params())?);
                }
            }
            for batch_size in [1, 0] {
                let our = OurSetup { compute_type: ct.clone(), batch_size: Some(batch_size) };
                ours.transcribe(&setup.corpus.join(&warmup.file), &our, args.beam, !args.no_vad)?;
                let long = ours.transcribe(&rec.path, &our, args.beam, !args.no_vad)?;
                eprintln!("  {} {:.2} s: {}", our.label(), long.wall_s, long.text);
                let (mut by_clip, mut words_by_clip) = (HashMap::new(), HashMap::new());
                for (clip, file) in clips.iter().zip(&clip_files) {
                    let decoded = ours.transcribe(file, &our, args.beam, !args.no_vad)?;
                    by_clip.insert(clip.file.clone(), decoded.text);
                    words_by_clip.insert(clip.file.clone(), decoded.words);
                }
                let share = Share::of(ours.cost, &long.stages, limits);
                let regions = regions.as_deref().unwrap_or_default();
                rows.push(Row {
                    label: our.label(),
                    wall_s: long.wall_s,
                    wer_long: scoring.long(&long.text)?,
                    wer_clips: scoring.clips(&by_clip)?,
                    errors_by_clip: scoring.errors_by_clip(&long.text, &by_clip)?,
                    wordless: Wordless::of(rec, regions, &long.words),
                    wordless_alone: wordless_alone(rec, &clip_regions, &words_by_clip),
                    ours: Some((share, long.stages)),
                    anchor_stages: None,
                });
            }
        }
        let fw = FwRun::english(setup, &model_dir, args);
        let fw_setups = args
            .compute_types
            .iter()
            .map(|ct| FwSetup { compute_type: ct.clone(), batch_size: 0 })
            .chain([FwSetup { compute_type: "int8".into(), batch_size: args.fw_batch }]);
        let files: Vec<PathBuf> = std::iter::once(rec.path.clone()).chain(clip_files.iter().cloned()).collect();
        for fw_setup in fw_setups {
            let decoded = fw.run(&fw_setup, &setup.corpus.join(&warmup.file), &files)?;
            let (long, per_clip) = decoded.split_first().expect("one result per file");
            eprintln!("  {} {:.2} s: {}", fw_setup.label(), long.wall_s, long.text);
            let by_clip = clips.iter().map(|c| c.file.clone()).zip(per_clip.iter().map(|d| d.text.clone())).collect();
            let words_by_clip =
                clips.iter().map(|c| c.file.clone()).zip(per_clip.iter().map(|d| d.words.clone())).collect();
            rows.push(Row {
                label: fw_setup.label(),
                wall_s: long.wall_s,
                wer_long: scoring.long(&long.text)?,
                wer_clips: scoring.clips(&by_clip)?,
                errors_by_clip: scoring.errors_by_clip(&long.text, &by_clip)?,
                wordless: Wordless::of(rec, regions.as_deref().unwrap_or_default(), &long.words),
                wordless_alone: wordless_alone(rec, &clip_regions, &words_by_clip),
                ours: None,
                anchor_stages: Some(long.stages.iter().map(|s| s.describe()).collect::<Vec<_>>().join(", ")),
            });
        }
        let n_regions = regions.as_ref().map_or(0, Vec::len);
        print_table(model, rec, n_regions, args, &rows);
    }
    Ok(())
}

/// faster-whisper's batched pipeline's chunking: 160 ms of silence ends a region, at most 30 s.
fn region_params() -> VadParams {
    VadParams { min_silence_ms: 160, max_speech_s: 30.0, ..VadParams::default() }
}

/// The speech a run left without words.
struct Wordless {
    /// VAD regions without a word, and where they are ([`by_clip`]).
    regions: usize,
    regions_by_clip: String,
    /// Clips without a word.
    clips: usize,
}

impl Wordless {
    /// For a run whose words (start, end in seconds) are `words`, against the VAD `regions`.
    fn of(rec: &LongRecording, regions: &[Range<f64>], words: &[(f64, f64)]) -> Wordless {
        let empty_regions = empty(regions, words);
        Wordless {
            regions: empty_regions.len(),
            regions_by_clip: by_clip(rec, &empty_regions, words),
            clips: empty(&rec.clip_spans(), words).len(),
        }
    }
}

/// The VAD regions left without words when the clips are decoded one by one: each clip's own
/// regions (`regions`, by manifest path; the same chunking) that hold no word of its own
/// transcript (`words`), counted at each place the clip has in the recording. What the
/// recording's run leaves beyond that is speech the joining lost.
fn wordless_alone(
    rec: &LongRecording,
    regions: &HashMap<String, Vec<Range<f64>>>,
    words: &HashMap<String, Vec<(f64, f64)>>,
) -> usize {
    rec.clips
        .iter()
        .map(|p| {
            let spans = regions.get(&p.file).map_or(&[][..], Vec::as_slice);
            empty(spans, words.get(&p.file).map_or(&[][..], Vec::as_slice)).len()
        })
        .sum()
}

/// The `spans` (seconds) that hold no word of `words` (a word counts where it overlaps).
fn empty(spans: &[Range<f64>], words: &[(f64, f64)]) -> Vec<Range<f64>> {
    spans.iter().filter(|r| !words.iter().any(|&(s, e)| e > r.start && s < r.end)).cloned().collect()
}

/// Which clip each of `regions` lies in (by its middle), counted per clip file, most first,
/// with how far the words nearest to those regions are: "en_childes….wav ×6 (nearest word
/// 0.00–4.31 s away)". A word a few hundredths of a second away is a word timing that ends
/// or starts just short of the region's speech; seconds away, speech without text.
fn by_clip(rec: &LongRecording, regions: &[Range<f64>], words: &[(f64, f64)]) -> String {
    let spans = rec.clip_spans();
    let mut found: Vec<(String, Vec<f64>)> = Vec::new();
    for r in regions {
        let middle = (r.start + r.end) / 2.0;
        let name = spans
            .iter()
            .zip(&rec.clips)
            .find(|(s, _)| s.contains(&middle))
            .map_or("a pause", |(_, c)| c.file.rsplit('/').next().unwrap_or(&c.file));
        let nearest = words.iter().map(|&(s, e)| (s - r.end).max(r.start - e).max(0.0)).fold(f64::INFINITY, f64::min);
        match found.iter_mut().find(|(n, _)| n == name) {
            Some((_, d)) => d.push(nearest),
            None => found.push((name.to_string(), vec![nearest])),
        }
    }
    found.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(&b.0)));
    found
        .iter()
        .map(|(name, d)| {
            let (lo, hi) = d.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &x| (lo.min(x), hi.max(x)));
            format!("{name} ×{} (nearest word {lo:.2}–{hi:.2} s away)", d.len())
        })
        .collect::<Vec<_>>()
        .join(", ")
}

trait ClipSpans {
    fn clip_spans(&self) -> Vec<Range<f64>>;
}

impl ClipSpans for LongRecording {
    /// Where each clip sits, in seconds.
    fn clip_spans(&self) -> Vec<Range<f64>> {
        let sr = SAMPLE_RATE as f64;
        self.clips.iter().map(|c| c.start as f64 / sr..c.end() as f64 / sr).collect()
    }
}

/// WER against the recording's joined reference, for the recording's text and for the clips'.
struct Scoring<'a> {
    setup: &'a Setup,
    header: &'a str,
    name: &'a str,
    rec: &'a LongRecording,
    /// Each clip's reference, by manifest path.
    references: HashMap<String, String>,
}

impl Scoring<'_> {
    fn long(&self, text: &str) -> anyhow::Result<f64> {
        let row = manifest_row(self.header, self.name, self.rec.duration_s(), &self.rec.reference);
        score_rows(
            &self.setup.python,
            &self.setup.corpus,
            self.header,
            &[&row],
            &[(self.name.to_string(), text.into())],
        )
    }

    /// The clips decoded one by one (`by_clip`: manifest path → text), joined in the recording's order.
    fn clips(&self, by_clip: &HashMap<String, String>) -> anyhow::Result<f64> {
        self.long(&self.joined(by_clip))
    }

    fn joined(&self, by_clip: &HashMap<String, String>) -> String {
        let texts: Vec<&str> = self.rec.clips.iter().map(|p| by_clip.get(&p.file).map_or("", |t| t.as_str())).collect();
        texts.join(" ")
    }

    /// Which clips' word errors differ between the recording's `text` and the clips decoded
    /// one by one (`by_clip`).
    fn errors_by_clip(&self, text: &str, by_clip: &HashMap<String, String>) -> anyhow::Result<String> {
        let reference: Vec<(&str, &str)> = self
            .rec
            .clips
            .iter()
            .map(|p| (p.file.as_str(), self.references.get(&p.file).map_or("", String::as_str)))
            .collect();
        let alone = self.joined(by_clip);
        let counts = errors_by_clip::count(&self.setup.python, &self.setup.corpus, &reference, &[text, &alone])?;
        Ok(errors_by_clip::describe(&counts[0], &counts[1]))
    }
}

fn print_table(model: &str, rec: &LongRecording, n_regions: usize, args: &BenchAsrArgs, rows: &[Row]) {
    let audio_s = rec.duration_s();
    let anchor = |label: &str| rows.iter().find(|r| r.label == label);
    let fw_labels: Vec<String> = args
        .compute_types
        .iter()
        .map(|ct| FwSetup { compute_type: ct.clone(), batch_size: 0 }.label())
        .chain([FwSetup { compute_type: "int8".into(), batch_size: args.fw_batch }.label()])
        .collect();
    let batched = fw_labels.last().and_then(|l| anchor(l));
    let fw_f32 = anchor("faster-whisper float32");
    println!();
    println!("{model}: long recording of {audio_s:.1} s, {n_regions} VAD speech regions, {} clips", rec.clips.len());
    let mut head = format!("{:<32}{:>8}{:>7}", "engine", "wall s", "RTF");
    for l in &fw_labels {
        head += &format!("{:>10}", format!("×{}", short_label(l)));
    }
    head += &format!(
        "{:>9}{:>10}{:>7}{:>10}{:>7}{:>11}{:>9}{:>9}",
        "WER long", "WER clips", "Δ", "empty VAD", "alone", "empty clip", "dec lim", "enc lim"
    );
    println!("{head}");
    for r in rows {
        let mut line = format!("{:<32}{:>8.2}{:>7.3}", r.label, r.wall_s, r.wall_s / audio_s);
        for l in &fw_labels {
            let cell = if r.ours.is_some() { ratio(anchor(l).map(|a| a.wall_s), r.wall_s) } else { "-".into() };
            line += &format!("{cell:>10}");
        }
        let (dec, enc) =
            r.ours.as_ref().map_or(("-".into(), "-".into()), |(s, _)| (percent(s.decoder), percent(s.encoder)));
        line += &format!(
            "{:>9.2}{:>10.2}{:>+7.2}{:>10}{:>7}{:>11}{dec:>9}{enc:>9}",
            r.wer_long,
            r.wer_clips,
            r.wer_long - r.wer_clips,
            r.wordless.regions,
            r.wordless_alone,
            r.wordless.clips
        );
        println!("{line}");
    }
    println!(
        "(×anchor: its wall time ÷ ours; Δ: WER long − WER clips in points; empty VAD: the recording's VAD regions without words; alone: the clips' own regions without words when decoded one by one, counted per place in the recording; dec/enc lim: share of the measured memory bandwidth / peak flops)"
    );
    println!("goals (long recording):");
    for r in rows.iter().filter(|r| r.ours.is_some()) {
        let speed = batched.map_or("-".to_string(), |b| {
            format!(
                "{:.2}× batched pipeline (goal ≥ {LONG_SPEED_GOAL:.1}×: {})",
                b.wall_s / r.wall_s,
                goal(b.wall_s / r.wall_s >= LONG_SPEED_GOAL)
            )
        });
        let bound = fw_f32.map_or("-".to_string(), |f| {
            format!(
                "WER {:.2} vs fw float32 {:.2} (goal ≤: {})",
                r.wer_long,
                f.wer_long,
                goal(r.wer_long <= f.wer_long)
            )
        });
        let delta = r.wer_long - r.wer_clips;
        println!(
            "  {:<32} {speed}; {bound}; {delta:+.2} points against the clips one by one (goal ≤ {JOINED_MARGIN}: {}); {} VAD regions without words (goal 0: {})",
            r.label,
            goal(delta <= JOINED_MARGIN),
            r.wordless.regions,
            goal(r.wordless.regions == 0)
        );
    }
    println!(
        "where the recording's word errors differ from the clips one by one (errors in the recording − alone, by clip):"
    );
    for r in rows {
        println!("  {:<32} {}", r.label, r.errors_by_clip);
    }
    println!("where the VAD regions without words are (the clip holding each one's middle):");
    for r in rows.iter().filter(|r| r.wordless.regions > 0) {
        println!("  {:<32} {}", r.label, r.wordless.regions_by_clip);
    }
    println!("where our time goes (long recording):");
    for r in rows {
        let Some((share, stages)) = &r.ours else { continue };
        let top: Vec<String> = stages
            .iter()
            .filter(|s| !s.stage.starts_with("enc ") && !s.stage.starts_with("dec "))
            .map(|s| format!("{} {:.1} s/{}", s.stage, s.total.as_secs_f64(), s.calls))
            .collect();
        println!(
            "  {:<32} {} decoder steps in {:.1} s, {} encoder windows in {:.1} s; {}",
            r.label,
            share.decoder_steps,
            share.decoder_s,
            share.windows,
            share.encoder_s,
            top.join(", ")
        );
    }
    println!("where faster-whisper's time goes (long recording, its CTranslate2 calls):");
    for r in rows {
        if let Some(stages) = &r.anchor_stages {
            println!("  {:<32} {stages}", r.label);
        }
    }
}

/// "faster-whisper float32" → "fw f32", "fw batched int8 b8" → "batched".
fn short_label(label: &str) -> String {
    if label.starts_with("fw batched") {
        return "batched".into();
    }
    label.replace("faster-whisper ", "fw ").replace("float32", "f32").replace("float16", "f16")
}

#[cfg(test)]
mod tests {
    use super::*;
    use scribe_bench::long_recording::Placed;

    /// A 3 s recording of 1 s clips, each given as its file and its start in seconds.
    fn recording(clips: &[(&str, usize)]) -> LongRecording {
        let second = SAMPLE_RATE as usize;
        LongRecording {
            path: PathBuf::new(),
            samples: 3 * second,
            reference: String::new(),
            clips: clips
                .iter()
                .map(|&(file, s)| Placed { file: file.into(), start: s * second, len: second })
                .collect(),
        }
    }

    #[test]
    fn regions_without_words_are_told_by_clip_with_their_nearest_word() {
        // given two clips of 1 s, at 0 s and at 2 s, and one word in the first
        let rec = recording(&[("audio/a.wav", 0), ("audio/b.wav", 2)]);
        let words = [(0.1, 0.4)];
        // when the regions are checked for words
        let regions = [0.0..0.5, 0.45..0.9, 1.2..1.6, 2.1..2.9];
        let wordless = empty(&regions, &words);
        // then the word's own region is not among them, and the others are told apart
        assert_eq!(wordless, vec![0.45..0.9, 1.2..1.6, 2.1..2.9]);
        assert_eq!(
            by_clip(&rec, &wordless, &words),
            "a pause ×1 (nearest word 0.80–0.80 s away), a.wav ×1 (nearest word 0.05–0.05 s away), \
             b.wav ×1 (nearest word 1.70–1.70 s away)"
        );
    }

    #[test]
    fn the_clips_alone_count_their_wordless_regions_at_each_place_in_the_recording() {
        // given clip a placed twice and clip b once; a's decoding leaves one of its two
        // regions without words, b's none
        let rec = recording(&[("a.wav", 0), ("b.wav", 1), ("a.wav", 2)]);
        let regions =
            HashMap::from([("a.wav".to_string(), vec![0.0..0.4, 0.6..0.9]), ("b.wav".to_string(), vec![0.1..0.8])]);
        let words = HashMap::from([("a.wav".to_string(), vec![(0.1, 0.3)]), ("b.wav".to_string(), vec![(0.2, 0.5)])]);
        // when they are counted, then a's wordless region counts at both of its places
        assert_eq!(wordless_alone(&rec, &regions, &words), 2);
    }
}
