//! `scribe-bench live --encoder`: what reading only an utterance's speech costs and saves.
//!
//! A live final is one utterance, usually a few seconds, and Whisper's encoder reads 30 s
//! whatever the utterance's length. In this process (no server), every real English clip of the
//! corpus is cut into utterances as a live session cuts it (the VAD and the segmenter, 100 ms
//! at a time), and each utterance is decoded with the finals' settings, once over the whole
//! window (the anchor) and once per margin over a window fitted to its speech
//! ([`EncoderWindow::Fitted`]), with the file path's temperature fallback; then with the live
//! finals' settings (no sampling fallback). All are scored by the corpus's `score_wer.py`. Then
//! the encoder alone on 1 to 29 s of speech, whole and fitted; then the utterances decoded in
//! batches, as sessions share the decoder, against one after another; last, finals decoded alone
//! against finals prompted with the previous final, on the recordings of many utterances, and
//! the finals alone joined at their seams by each casing rule of `live_seams`, and by the
//! decoder over the audio of each seam.

use std::path::Path;
use std::time::Instant;

use anyhow::Context;
use scribe_whisper::audio::{self, SAMPLE_RATE};
use scribe_whisper::engine::FITTED_MARGIN_FRAMES;
use scribe_whisper::utterances::{self, UtteranceEvent};
use scribe_whisper::{EncoderWindow, Engine, EngineConfig, EngineError, TranscribeOptions};
use scribe_whisper::{mel, profile};

use crate::asr::score;
use crate::live_seams::{self, SeamRules, TimedWord};
use scribe_bench::corpus::{Clip, english_clips, real_english_clips};

/// Margins tried, in mel frames (10 ms).
const MARGINS: [usize; 5] = [300, 200, 128, 64, 32];
/// Lengths of speech whose encoding is timed (seconds).
const LENGTHS: [f64; 6] = [1.0, 2.0, 4.0, 8.0, 16.0, 29.0];
/// Encodings timed per length and window.
const REPEATS: usize = 5;

/// The corpus's real English clips, each with the utterances a live session cuts it into.
type Cut = Vec<(Vec<f32>, Vec<std::ops::Range<usize>>)>;

pub fn run(models_dir: &Path, corpus: &Path, python: &Path) -> anyhow::Result<()> {
    let engine = load(models_dir)?;
    let (header, clips) = real_english_clips(corpus)?;
    let cut = cut_clips(&engine, corpus, &clips)?;
    let n_utterances: usize = cut.iter().map(|c| c.1.len()).sum();
    let mean_s = cut.iter().flat_map(|c| &c.1).map(|r| r.len()).sum::<usize>() as f64
        / n_utterances.max(1) as f64
        / SAMPLE_RATE as f64;
    println!(
        "fitted encoder windows: {} real English clips cut into {n_utterances} utterances (mean {mean_s:.1} s), \
         Whisper base, finals' settings",
        clips.len()
    );
    println!(
        "{:<34}{:>8}{:>10}{:>16}{:>14}{:>14}",
        "encoder window", "WER %", "vs whole", "encode ms/utt", "decode s", "redone whole"
    );
    // The file path's settings (sampling at higher temperatures when a decoding fails) over each
    // window, then the live finals' own (no sampling: the fitted window, then the whole one).
    let runs = std::iter::once((EncoderWindow::Whole, true))
        .chain(
            MARGINS.iter().map(|&m| (EncoderWindow::Fitted { margin_frames: m, if_failed: Default::default() }, true)),
        )
        .chain([(EncoderWindow::Whole, false), (EncoderWindow::fitted(), false)]);
    let mut anchor = None;
    for (window, sampling) in runs {
        let _ = profile::take();
        let started = Instant::now();
        let hyps = decode_all(&engine, &clips, &cut, window, sampling)?;
        let wall = started.elapsed().as_secs_f64();
        let stages = profile::take();
        let stage = |name: &str| stages.iter().find(|s| s.stage == name);
        let encode_ms = stage("encode").map_or(0.0, |s| s.total.as_secs_f64() * 1000.0) / n_utterances.max(1) as f64;
        let redone = stage("fitted windows decoded again whole").map_or(0, |s| s.calls);
        let wer = score(python, corpus, &header, &clips, &hyps)?;
        let delta = anchor.map_or("anchor".to_string(), |a: f64| format!("{:+.2}", wer - a));
        anchor.get_or_insert(wer);
        let name = match window {
            EncoderWindow::Whole => "whole (30 s)".to_string(),
            EncoderWindow::Fitted { margin_frames, .. } => format!("fitted, margin {margin_frames}"),
        };
        let name = if sampling { name } else { format!("{name}, no sampling") };
        let name = if !sampling && window == EncoderWindow::fitted() { format!("{name}*") } else { name };
        println!("{name:<34}{wer:>8.2}{delta:>10}{encode_ms:>16.1}{wall:>14.1}{redone:>14}");
    }
    println!("(* live finals' settings; margins in mel frames of 10 ms)");
    encoder_times(&engine, corpus)?;
    together(&engine, &cut)?;
    context(&engine, corpus, python)
}

/// `scribe-bench live --together`: only the table of utterances decoded together.
pub fn run_together(models_dir: &Path, corpus: &Path) -> anyhow::Result<()> {
    let engine = load(models_dir)?;
    let (_, clips) = real_english_clips(corpus)?;
    together(&engine, &cut_clips(&engine, corpus, &clips)?)
}

/// `scribe-bench live --context`: only the tables of finals with context and joined at seams.
pub fn run_context(models_dir: &Path, corpus: &Path, python: &Path) -> anyhow::Result<()> {
    context(&load(models_dir)?, corpus, python)
}

pub(crate) fn load(models_dir: &Path) -> anyhow::Result<Engine> {
    let engine = Engine::load(&EngineConfig {
        model_dir: models_dir.join("whisper-base"),
        vad_path: Some(models_dir.join("silero_vad_16k.safetensors")),
        threads: None,
        compute_type: Default::default(),
        device: Default::default(),
    })
    .context("loading whisper-base and the VAD")?;
    profile::enable();
    Ok(engine)
}

pub(crate) fn cut_clips(engine: &Engine, corpus: &Path, clips: &[Clip]) -> anyhow::Result<Cut> {
    let mut cut = Vec::new();
    for clip in clips {
        let samples = audio::decode_all(&corpus.join(&clip.file)).with_context(|| clip.file.clone())?;
        let utterances = utterances(engine, &samples);
        cut.push((samples, utterances));
    }
    Ok(cut)
}

/// Utterances decoded together, as a server's live sessions share the decoder
/// ([`Engine::transcribe_together`]), against the same utterances decoded one after another
/// (the anchor, timed group by group in turn with the batches so that a drift of the machine's
/// speed touches both alike): the 46 utterances in groups of `k` consecutive ones (most groups
/// mix clips, as the utterances of different sessions), with the finals' and the partials'
/// settings. Also counts the utterances whose text differs between the two.
fn together(engine: &Engine, cut: &Cut) -> anyhow::Result<()> {
    let utterances: Vec<&[f32]> =
        cut.iter().flat_map(|(samples, ranges)| ranges.iter().map(move |r| &samples[r.clone()])).collect();
    let finals = TranscribeOptions {
        language: Some("en".into()),
        encoder_window: EncoderWindow::fitted(),
        temperature_fallback: false,
        ..Default::default()
    };
    let partials = TranscribeOptions { beam_size: 1, word_timestamps: false, use_vad: false, ..finals.clone() };
    println!();
    println!("utterances decoded together (one batch of k, as k sessions' at once) against one after another:");
    println!("{:<12}{:>4}{:>16}{:>14}{:>10}{:>12}", "settings", "k", "one by one s", "together s", "ratio", "differ");
    let text = |r: Result<scribe_whisper::Transcript, EngineError>| -> anyhow::Result<String> {
        match r {
            Ok(t) => Ok(t.segments.iter().map(|s| s.text.trim()).collect::<Vec<_>>().join(" ")),
            Err(EngineError::NoSpeech) => Ok(String::new()),
            Err(e) => Err(e.into()),
        }
    };
    for (name, options) in [("finals", &finals), ("partials", &partials)] {
        for k in [2usize, 4, 8] {
            let (mut alone_s, mut together_s, mut differ) = (0.0, 0.0, 0);
            for group in utterances.chunks(k) {
                let started = Instant::now();
                let alone: Vec<String> =
                    group.iter().map(|u| text(engine.transcribe_samples(u, options))).collect::<anyhow::Result<_>>()?;
                alone_s += started.elapsed().as_secs_f64();
                let items: Vec<(&[f32], &TranscribeOptions)> = group.iter().map(|&u| (u, options)).collect();
                let started = Instant::now();
                let results = engine.transcribe_together(&items);
                together_s += started.elapsed().as_secs_f64();
                for (a, r) in alone.iter().zip(results) {
                    differ += usize::from(*a != text(r)?);
                }
            }
            println!(
                "{name:<12}{k:>4}{alone_s:>16.2}{together_s:>14.2}{:>9.2}×{differ:>12}",
                alone_s / together_s.max(1e-9)
            );
        }
    }
    println!("(ratio: one by one ÷ together, above 1 together is faster; differ: of {} utterances)", utterances.len());
    Ok(())
}

/// Finals decoded alone against finals prompted with the session's previous final, on the
/// recordings of several utterances whose references are cased and punctuated (the long
/// reading, Gettysburg, jfk): the WER (words, by the corpus's scorer), the formatted WER (the
/// same edit distance over the words as written, case and punctuation included), and how many
/// finals read back their prompt.
fn context(engine: &Engine, corpus: &Path, python: &Path) -> anyhow::Result<()> {
    let (header, clips) = english_clips(corpus)?;
    let clips: Vec<Clip> = clips.into_iter().filter(|c| c.long_form || c.file.ends_with("en_jfk.wav")).collect();
    let mut cut = Vec::new();
    for clip in &clips {
        let samples = audio::decode_all(&corpus.join(&clip.file)).with_context(|| clip.file.clone())?;
        let utterances = utterances(engine, &samples);
        cut.push((samples, utterances));
    }
    let n: usize = cut.iter().map(|c| c.1.len()).sum();
    println!();
    println!(
        "finals with the previous final as context: {} recordings ({}), {n} utterances, live finals' settings",
        clips.len(),
        clips.iter().map(|c| c.file.trim_start_matches("audio/")).collect::<Vec<_>>().join(", ")
    );
    println!("{:<34}{:>8}{:>16}{:>12}", "finals", "WER %", "formatted WER %", "read back");
    let mut alone: Vec<Vec<String>> = Vec::new();
    let mut timed: Vec<Vec<Vec<TimedWord>>> = Vec::new();
    for with_context in [false, true] {
        let options = TranscribeOptions {
            language: Some("en".into()),
            encoder_window: EncoderWindow::fitted(),
            temperature_fallback: false,
            ..Default::default()
        };
        let (mut hyps, mut formatted, mut read_back) = (Vec::new(), Vec::new(), 0);
        for (clip, (samples, utterances)) in clips.iter().zip(&cut) {
            let mut finals: Vec<String> = Vec::new();
            let mut words_of_finals: Vec<Vec<TimedWord>> = Vec::new();
            for range in utterances {
                let prompt = finals.last().filter(|_| with_context).cloned();
                let options = TranscribeOptions { initial_prompt: prompt.clone(), ..options.clone() };
                let text = match engine.transcribe_samples(&samples[range.clone()], &options) {
                    Ok(t) => {
                        let offset = range.start as f64 / SAMPLE_RATE as f64;
                        words_of_finals.push(
                            t.segments
                                .iter()
                                .flat_map(|s| &s.words)
                                .map(|w| TimedWord {
                                    text: w.text.trim().to_string(),
                                    start: offset + w.start,
                                    end: offset + w.end,
                                })
                                .filter(|w| !w.text.is_empty())
                                .collect(),
                        );
                        t.segments.iter().map(|s| s.text.trim()).collect::<Vec<_>>().join(" ")
                    }
                    Err(EngineError::NoSpeech) => continue,
                    Err(e) => return Err(e).with_context(|| format!("{} {range:?}", clip.file)),
                };
                if prompt.is_some_and(|p| reads_back(&p, &text)) {
                    read_back += 1;
                }
                finals.push(text);
            }
            let text = finals.join(" ");
            formatted.push(formatted_wer(&clip.transcript, &text));
            hyps.push((clip.file.clone(), text));
            if !with_context {
                alone.push(finals);
                timed.push(words_of_finals);
            }
        }
        let wer = score(python, corpus, &header, &clips, &hyps)?;
        let (errors, words) = formatted.iter().fold((0, 0), |(e, w), (a, b)| (e + a, w + b));
        let name = if with_context { "prompted with the previous final" } else { "alone (today)" };
        println!("{name:<34}{wer:>8.2}{:>16.2}{read_back:>12}", errors as f64 * 100.0 / words.max(1) as f64);
    }
    seams(&clips, &alone);
    seams_by_decoder(engine, &clips, &cut, &timed)?;
    Ok(())
}

/// The finals decoded alone, joined where each meets the next by the decoder
/// ([`live_seams::join_by_decoder`]): formatted WER and miscased words pooled, against the
/// same finals' words as decoded.
fn seams_by_decoder(engine: &Engine, clips: &[Clip], cut: &Cut, timed: &[Vec<Vec<TimedWord>>]) -> anyhow::Result<()> {
    // Per row (as decoded, joined): formatted WER per recording, errors and words pooled, miscased.
    let mut rows = [(String::new(), 0, 0, 0), (String::new(), 0, 0, 0)];
    let mut joins = live_seams::Joins::default();
    let log = std::env::var_os("SCRIBE_SEAM_DEBUG").is_some();
    for ((clip, (samples, _)), finals) in clips.iter().zip(cut).zip(timed) {
        let before: Vec<String> = finals.iter().flatten().map(|w| w.text.clone()).collect();
        let joined = live_seams::join_by_decoder(engine, samples, finals, &mut joins, log)?;
        for (row, text) in rows.iter_mut().zip([before, joined]) {
            let (e, w) = formatted_wer(&clip.transcript, &text.join(" "));
            row.0.push_str(&format!("{:>14.2}", e as f64 * 100.0 / w.max(1) as f64));
            (row.1, row.2, row.3) = (row.1 + e, row.2 + w, row.3 + case_errors(&clip.transcript, &text).0);
        }
    }
    for ((each, errors, words, miscased), (name, changed)) in
        rows.iter().zip([("as decoded (their timed words)", 0), ("joined by the decoder", joins.changed)])
    {
        println!(
            "{name:<30}{each}{:>10.2}{changed:>10}{miscased:>10}",
            *errors as f64 * 100.0 / (*words).max(1) as f64
        );
    }
    println!(
        "(the decoder scored {} seams, {:.0} ms each)",
        joins.seams,
        joins.took_s * 1000.0 / joins.seams.max(1) as f64
    );
    Ok(())
}

/// The finals decoded alone, joined at their seams by each rule of `live_seams` on its own: the
/// formatted WER per recording and pooled, the finals changed, and the words right but for
/// their case. (The rules change letters' case only, so the WER of the words is the same.)
pub(crate) fn seams(clips: &[Clip], finals: &[Vec<String>]) {
    let only = |f: fn(&mut SeamRules)| {
        let mut rules = SeamRules::NONE;
        f(&mut rules);
        rules
    };
    let variants = [
        ("as decoded", SeamRules::NONE),
        ("capitalize sentence starts", only(|r| r.capitalize_sentence_starts = true)),
        ("lower continuations", only(|r| r.lower_continuations = true)),
        ("unshout", only(|r| r.unshout = true)),
    ];
    println!();
    println!("finals joined at their seams (formatted WER %, per recording and pooled; finals changed):");
    let names: Vec<&str> = clips.iter().map(|c| c.file.trim_start_matches("audio/").trim_end_matches(".wav")).collect();
    // Each recording's column under the start of its name, a space before it.
    let columns: String = names.iter().map(|n| format!("{:>14}", format!(" {n:.13}"))).collect();
    println!("{:<30}{columns}{:>10}{:>10}{:>10}", "rules", "pooled", "changed", "miscased");
    for (name, rules) in variants {
        let (mut errors, mut words, mut changed, mut miscased, mut each) = (0, 0, 0, 0, String::new());
        for (clip, finals) in clips.iter().zip(finals) {
            let mut previous: Option<String> = None;
            let mut joined = Vec::new();
            for text in finals {
                let mut final_words: Vec<String> = text.split_whitespace().map(str::to_owned).collect();
                let before = final_words.clone();
                live_seams::join(previous.as_deref(), &mut final_words, rules);
                changed += usize::from(before != final_words);
                previous = final_words.last().cloned().or(previous);
                joined.extend(final_words);
            }
            let (e, w) = formatted_wer(&clip.transcript, &joined.join(" "));
            each.push_str(&format!("{:>14.2}", e as f64 * 100.0 / w.max(1) as f64));
            (errors, words) = (errors + e, words + w);
            let (c, _) = case_errors(&clip.transcript, &joined);
            miscased += c;
        }
        println!("{name:<30}{each}{:>10.2}{changed:>10}{miscased:>10}", errors as f64 * 100.0 / words.max(1) as f64);
    }
    println!("(miscased: words the reference has, written in another case)");
}

/// Of the words `hypothesis` gets right (the same letters as the reference's word it aligns
/// with, whatever their case and punctuation), how many are in another case than the
/// reference's, and how many were aligned.
pub(crate) fn case_errors(reference: &str, hypothesis: &[String]) -> (usize, usize) {
    let letters = |w: &str| w.chars().filter(|c| c.is_alphanumeric() || *c == '\'').collect::<String>();
    let r: Vec<String> = reference.split_whitespace().map(letters).collect();
    let h: Vec<String> = hypothesis.iter().map(|w| letters(w)).collect();
    let (rn, hn): (Vec<String>, Vec<String>) =
        (r.iter().map(|w| w.to_lowercase()).collect(), h.iter().map(|w| w.to_lowercase()).collect());
    // Longest common subsequence of the words without case, then the matched pairs' case.
    let mut table = vec![vec![0usize; hn.len() + 1]; rn.len() + 1];
    for i in (0..rn.len()).rev() {
        for j in (0..hn.len()).rev() {
            table[i][j] = if rn[i] == hn[j] { table[i + 1][j + 1] + 1 } else { table[i + 1][j].max(table[i][j + 1]) };
        }
    }
    let (mut i, mut j, mut miscased, mut aligned) = (0, 0, 0, 0);
    while i < rn.len() && j < hn.len() {
        if rn[i] == hn[j] {
            aligned += 1;
            miscased += usize::from(r[i] != h[j]);
            (i, j) = (i + 1, j + 1);
        } else if table[i + 1][j] >= table[i][j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    (miscased, aligned)
}

/// Word edits between `reference` and `hypothesis` as written (case and punctuation count), and
/// the reference's words.
pub(crate) fn formatted_wer(reference: &str, hypothesis: &str) -> (usize, usize) {
    let (r, h): (Vec<&str>, Vec<&str>) =
        (reference.split_whitespace().collect(), hypothesis.split_whitespace().collect());
    let mut row: Vec<usize> = (0..=h.len()).collect();
    for (i, rw) in r.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, hw) in h.iter().enumerate() {
            let substitution = diagonal + usize::from(rw != hw);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    (row[h.len()], r.len())
}

/// Whether `text` starts with the last words of `prompt` again (the decoder reading its context back).
fn reads_back(prompt: &str, text: &str) -> bool {
    let words = |s: &str| {
        s.split_whitespace().map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase()).collect::<Vec<_>>()
    };
    let (p, t) = (words(prompt), words(text));
    let tail = &p[p.len().saturating_sub(4)..];
    tail.len() >= 3 && t.windows(tail.len()).any(|w| w == tail)
}

/// The utterances a live session cuts `samples` into (stream ranges, padding included).
fn utterances(engine: &Engine, samples: &[f32]) -> Vec<std::ops::Range<usize>> {
    let vad = engine.vad().expect("loaded with the VAD");
    utterances::of_recording(vad, samples)
        .into_iter()
        .filter_map(|e| match e {
            UtteranceEvent::Ended { range, .. } => Some(range),
            _ => None,
        })
        .collect()
}

/// Each clip's text: its utterances decoded one by one with `window`, joined.
fn decode_all(
    engine: &Engine,
    clips: &[Clip],
    cut: &[(Vec<f32>, Vec<std::ops::Range<usize>>)],
    window: EncoderWindow,
    sampling: bool,
) -> anyhow::Result<Vec<(String, String)>> {
    let options = TranscribeOptions {
        language: Some("en".into()),
        encoder_window: window,
        temperature_fallback: sampling,
        ..Default::default()
    };
    let mut hyps = Vec::new();
    for (clip, (samples, utterances)) in clips.iter().zip(cut) {
        let mut text = Vec::new();
        for range in utterances {
            match engine.transcribe_samples(&samples[range.clone()], &options) {
                Ok(t) => text.extend(t.segments.iter().map(|s| s.text.trim().to_string())),
                Err(EngineError::NoSpeech) => {}
                Err(e) => return Err(e).with_context(|| format!("{} {range:?}", clip.file)),
            }
        }
        hyps.push((clip.file.clone(), text.join(" ")));
    }
    Ok(hyps)
}

/// The encoder's time per call (with the cross-attention keys and values it precomputes) for
/// `LENGTHS` seconds of speech: the whole window against the window [`EncoderWindow::fitted`]
/// encodes for that much speech. Whole and fitted take turns, so that a drift of the machine's
/// speed touches both alike. The features are a real reading's (the encoder's work does not
/// depend on them).
fn encoder_times(engine: &Engine, corpus: &Path) -> anyhow::Result<()> {
    let (_, clips) = english_clips(corpus)?;
    let reading = clips.iter().find(|c| c.long_form && c.is_real()).context("no long reading in the corpus")?;
    let samples = audio::decode_all(&corpus.join(&reading.file))?;
    let model = engine.model();
    let n_mels = model.dims.n_mels;
    let whole_frames = mel::N_FRAMES;
    let spectrogram = mel::log_mel(&samples[..whole_frames * mel::HOP], n_mels);
    let features: Vec<f32> =
        spectrogram.data.chunks_exact(spectrogram.n_frames).flat_map(|row| &row[..whole_frames]).copied().collect();
    println!();
    println!("encoder time per call, {REPEATS} calls each (fitted = margin {FITTED_MARGIN_FRAMES}):");
    println!("{:>10}{:>10}{:>12}{:>12}{:>10}", "speech s", "frames", "whole ms", "fitted ms", "ratio");
    for length in LENGTHS {
        let frames = EncoderWindow::fitted().frames((length * 100.0) as usize).unwrap_or(whole_frames);
        let fitted: Vec<f32> = features.chunks_exact(whole_frames).flat_map(|row| &row[..frames]).copied().collect();
        let mut ms = [0.0f64; 2];
        for _ in 0..REPEATS {
            let started = Instant::now();
            std::hint::black_box(model.encode(&features));
            ms[0] += started.elapsed().as_secs_f64() * 1000.0 / REPEATS as f64;
            let started = Instant::now();
            std::hint::black_box(model.encode_frames(&fitted, frames));
            ms[1] += started.elapsed().as_secs_f64() * 1000.0 / REPEATS as f64;
        }
        println!("{length:>10.0}{frames:>10}{:>12.1}{:>12.1}{:>10.2}", ms[0], ms[1], ms[1] / ms[0]);
    }
    Ok(())
}
