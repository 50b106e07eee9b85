//! `scribe-bench live --first-partials`: which encoder window an utterance's first partials
//! should read.
//!
//! A live session asks for its first partial once the utterance holds about half a second, and
//! a window fitted to so little speech often fails the decoding's checks. Decoding it again over
//! the whole 30 s window made the first partial 0.7 s later; partials now keep a failed decoding,
//! a repetitive one up to its loop (`EncoderWindow::fitted_for_partials`, `ops/bench/live.md`).
//! In this process (no server), every real English clip of the corpus is cut into utterances as
//! a live session cuts it; each utterance's first half second, second, ... (from its start, the
//! pre-roll included) is decoded with the partials' settings over each window tried, taking
//! turns, and compared with the utterance's final (its whole audio with the finals' settings):
//! how often the partial is empty, how often the fitted window was decoded again whole (or its
//! repetitive decoding cut at its loop, or dropped), how many
//! of its words begin the final and how many do not, and what one partial costs.

use std::path::Path;
use std::time::Instant;

use scribe_whisper::audio::SAMPLE_RATE;
use scribe_whisper::{EncoderWindow, Engine, EngineError, TranscribeOptions, profile};

use crate::live_encoder::{cut_clips, load};
use scribe_bench::corpus::real_english_clips;

/// Lengths of an utterance's beginning decoded as a partial (seconds, the pre-roll included).
const PREFIXES: [f64; 5] = [0.5, 0.7, 1.0, 1.5, 2.0];
/// The padding after an utterance's speech: a prefix reaching into it is not a partial.
const PADDING_S: f64 = 0.2;

/// What one window gave for one prefix length, over all utterances.
#[derive(Default)]
struct Cell {
    partials: usize,
    empty: usize,
    redone: usize,
    cut: usize,
    dropped: usize,
    kept: usize,
    /// Words that begin the final, and words after the first that does not.
    right: usize,
    wrong: usize,
    seconds: f64,
}

pub fn run(models_dir: &Path, corpus: &Path) -> anyhow::Result<()> {
    let engine = load(models_dir)?;
    let (_, clips) = real_english_clips(corpus)?;
    let cut = cut_clips(&engine, corpus, &clips)?;
    let utterances: Vec<&[f32]> =
        cut.iter().flat_map(|(samples, ranges)| ranges.iter().map(move |r| &samples[r.clone()])).collect();
    let windows = [
        ("fitted, failed: whole", EncoderWindow::fitted()),
        ("fitted, failed: kept*", EncoderWindow::fitted_for_partials()),
        ("whole (30 s)", EncoderWindow::Whole),
    ];
    let finals: Vec<Vec<String>> =
        utterances.iter().map(|u| decode(&engine, u, &final_options()).map(|t| words(&t))).collect::<Result<_, _>>()?;
    println!(
        "first partials: {} utterances of {} real English clips, Whisper base, partials' settings",
        utterances.len(),
        clips.len()
    );
    println!(
        "{:<24}{:>8}{:>10}{:>9}{:>10}{:>6}{:>9}{:>8}{:>13}{:>13}{:>10}",
        "encoder window",
        "prefix",
        "partials",
        "empty",
        "redone",
        "cut",
        "dropped",
        "kept",
        "right words",
        "wrong words",
        "ms each"
    );
    for prefix in PREFIXES {
        let len = (prefix * SAMPLE_RATE as f64) as usize;
        let mut cells: Vec<Cell> = windows.iter().map(|_| Cell::default()).collect();
        for (utterance, last) in utterances.iter().zip(&finals) {
            if len + (PADDING_S * SAMPLE_RATE as f64) as usize >= utterance.len() {
                continue;
            }
            for ((_, window), cell) in windows.iter().zip(&mut cells) {
                let options = TranscribeOptions { encoder_window: *window, ..partial_options() };
                let _ = profile::take();
                let started = Instant::now();
                let text = decode(&engine, &utterance[..len], &options)?;
                cell.seconds += started.elapsed().as_secs_f64();
                let stages = profile::take();
                let counted = |name: &str| stages.iter().any(|s| s.stage == name) as usize;
                cell.redone += counted("fitted windows decoded again whole");
                cell.cut += counted("fitted windows cut where they loop");
                cell.dropped += counted("fitted windows dropped as repetitive");
                cell.kept += counted("fitted windows kept though failed");
                cell.partials += 1;
                let said = words(&text);
                cell.empty += said.is_empty() as usize;
                let right = said.iter().zip(last).take_while(|(a, b)| a == b).count();
                cell.right += right;
                cell.wrong += said.len() - right;
            }
        }
        for ((name, _), cell) in windows.iter().zip(&cells) {
            let n = cell.partials.max(1) as f64;
            println!(
                "{name:<24}{:>7.1}s{:>10}{:>8.0}%{:>9.0}%{:>5.0}%{:>8.0}%{:>7.0}%{:>13.2}{:>13.2}{:>10.0}",
                prefix,
                cell.partials,
                100.0 * cell.empty as f64 / n,
                100.0 * cell.redone as f64 / n,
                100.0 * cell.cut as f64 / n,
                100.0 * cell.dropped as f64 / n,
                100.0 * cell.kept as f64 / n,
                cell.right as f64 / n,
                cell.wrong as f64 / n,
                1000.0 * cell.seconds / n
            );
        }
    }
    println!("(right words: a partial's words that begin its utterance's final; wrong: the words after them;");
    println!(" a fitted decoding that fails the checks is decoded again whole, or kept*: a repetitive one cut at its");
    println!(" loop, or dropped when nothing repeats in a row; kept counts every kept failure, cut ones included)");
    Ok(())
}

/// A live session's partials' settings (`actors/src/live/session.rs`), English.
fn partial_options() -> TranscribeOptions {
    TranscribeOptions {
        language: Some("en".into()),
        beam_size: 1,
        word_timestamps: false,
        use_vad: false,
        temperature_fallback: false,
        encoder_window: EncoderWindow::fitted_for_partials(),
        ..Default::default()
    }
}

/// A live session's finals' settings, English.
fn final_options() -> TranscribeOptions {
    TranscribeOptions {
        language: Some("en".into()),
        use_vad: true,
        temperature_fallback: false,
        encoder_window: EncoderWindow::fitted(),
        ..Default::default()
    }
}

fn decode(engine: &Engine, samples: &[f32], options: &TranscribeOptions) -> anyhow::Result<String> {
    match engine.transcribe_samples(samples, options) {
        Ok(t) => Ok(t.segments.iter().map(|s| s.text.trim()).collect::<Vec<_>>().join(" ")),
        Err(EngineError::NoSpeech) => Ok(String::new()),
        Err(e) => Err(e.into()),
    }
}

/// Lower-case words without their punctuation.
fn words(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase())
        .filter(|w| !w.is_empty())
        .collect()
}
