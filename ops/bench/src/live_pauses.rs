//! `scribe-bench live --pauses`: how long a pause must last to end a live utterance.
//!
//! A live final goes out once its utterance's pause has lasted `min_silence_ms` (0.5 s by
//! default): the floor under a final's latency. A shorter pause sends finals sooner but cuts
//! speech into more and shorter utterances, each decoded without the words around it. In this
//! process (no server), every real English clip of the corpus is cut as a live session cuts it,
//! once per pause length tried, and each utterance is decoded with the live finals' settings;
//! the clips' texts are scored by the corpus's `score_wer.py`; with how many finals failed the
//! checks over their fitted window (and were decoded again whole) and what a final costs.
//!
//! Then the clips are cut as a session holding mid-sentence pauses would cut them: each pause
//! is decoded once it has lasted the padding (as a session decodes its early final), and when
//! those words do not end a sentence the pause must last longer before it ends the utterance.
//! Each such row says how many pauses were held, how many of those the speaker broke (the cut
//! saved) and how many ended the utterance anyway (the final later by the hold). Decodings are
//! taken as instant: a session holds each pause until its early final is known, so the cuts
//! are the same on a loaded machine. Last, the recordings with cased references are read as a
//! direct job reads them (the anchor), then cut each way and scored as written (case and
//! punctuation), with the seams' casing rules over them, and the finals as a session that asks
//! for revisions leaves them (each read again with its neighbours).

use std::ops::Range;
use std::path::Path;
use std::time::Instant;

use anyhow::Context;
use scribe_domain::live::endpoint::holds_pause;
use scribe_domain::live::revision::Revision;
use scribe_whisper::audio::{self, SAMPLE_RATE};
use scribe_whisper::utterances::{self, UtteranceEvent, UtteranceParams};
use scribe_whisper::vad::SileroVad;
use scribe_whisper::{EncoderWindow, Engine, EngineError, TranscribeOptions, profile};

use crate::asr::{score, score_per_clip};
use crate::live_encoder::{case_errors, formatted_wer, load, seams};
use scribe_bench::corpus::{Clip, english_clips, real_english_clips};

/// Pauses tried (ms); the default is the anchor.
const PAUSES_MS: [u32; 6] = [500, 300, 400, 600, 700, 1000];
/// How long a held pause must last (ms), in the rows of pauses held mid-sentence.
const HOLDS_MS: [u32; 2] = [700, 1000];

pub fn run(models_dir: &Path, corpus: &Path, python: &Path) -> anyhow::Result<()> {
    let engine = load(models_dir)?;
    let cutter = Cutter {
        engine: &engine,
        vad: engine.vad().context("loaded with the VAD")?,
        options: TranscribeOptions {
            language: Some("en".into()),
            use_vad: true,
            temperature_fallback: false,
            encoder_window: EncoderWindow::fitted(),
            ..Default::default()
        },
    };
    let (header, clips) = real_english_clips(corpus)?;
    let recordings = decode_all(corpus, &clips)?;
    println!("pauses that end an utterance: {} real English clips, Whisper base, finals' settings", clips.len());
    println!(
        "{:>10}{:>12}{:>10}{:>10}{:>10}{:>10}{:>10}",
        "pause ms", "utterances", "mean s", "failed", "ms each", "WER %", "vs 500"
    );
    let mut anchor = None;
    let rows = PAUSES_MS.iter().map(|&p| (p, None)).chain(HOLDS_MS.iter().map(|&h| (500, Some(h))));
    for (pause, hold) in rows {
        let mut tally = Tally::default();
        let mut hyps = Vec::new();
        for (clip, samples) in clips.iter().zip(&recordings) {
            let finals = cutter.finals(samples, pause, hold, &mut tally).with_context(|| clip.file.clone())?;
            hyps.push((clip.file.clone(), joined(&finals)));
        }
        let (wer, per_clip) = score_per_clip(python, corpus, &header, &clips, &hyps)?;
        let delta = anchor.as_ref().map_or("anchor".to_string(), |(a, _)| format!("{:+.2}", wer - a));
        let moved = anchor.as_ref().map(|(_, before): &(f64, Vec<f64>)| {
            clips
                .iter()
                .zip(before.iter().zip(&per_clip))
                .filter(|(_, (b, a))| (*a - *b).abs() > 1e-9)
                .map(|(c, (b, a))| format!("{} {:+.1}", c.file.trim_start_matches("audio/"), a - b))
                .collect::<Vec<_>>()
        });
        anchor.get_or_insert((wer, per_clip));
        let n = tally.lengths.len().max(1) as f64;
        let mean = tally.lengths.iter().sum::<f64>() / n;
        let ms = 1000.0 * tally.seconds / n;
        let name = row_name(pause, hold);
        println!(
            "{name:>10}{:>12}{mean:>10.1}{:>10}{ms:>10.0}{wer:>10.2}{delta:>10}",
            tally.lengths.len(),
            tally.failed
        );
        if let Some(moved) = moved.filter(|m| !m.is_empty()) {
            println!("{:>10}  clips whose WER moved (points): {}", "", moved.join(", "));
        }
        if hold.is_some() {
            println!("{:>10}  {}", "", tally.holds);
        }
    }
    println!("(500/h: a pause ends an utterance after 500 ms, or after h ms when the words decoded");
    println!(" once it has lasted the padding do not end a sentence)");
    cased(&cutter, corpus, python)
}

/// The recordings of many utterances whose references are cased and punctuated (jfk, the
/// Gettysburg Address, the 13-minute reading) cut each way that matters here: does holding
/// mid-sentence pauses make the finals read as one text (formatted WER, words miscased,
/// finals that end without a sentence mark) without costing words?
fn cased(cutter: &Cutter, corpus: &Path, python: &Path) -> anyhow::Result<()> {
    let (header, clips) = english_clips(corpus)?;
    let clips: Vec<Clip> = clips.into_iter().filter(|c| c.long_form || c.file.ends_with("en_jfk.wav")).collect();
    let recordings = decode_all(corpus, &clips)?;
    println!();
    println!(
        "the same on {} recordings with cased references ({}):",
        clips.len(),
        clips.iter().map(|c| c.file.trim_start_matches("audio/")).collect::<Vec<_>>().join(", ")
    );
    println!(
        "{:>10}{:>12}{:>10}{:>18}{:>10}{:>14}",
        "pause ms", "utterances", "WER %", "formatted WER %", "miscased", "mid-sentence"
    );
    // The anchor: each recording as a direct job reads it (30 s windows, the jobs' settings).
    let direct = TranscribeOptions { language: Some("en".into()), ..Default::default() };
    let mut written = Written::default();
    for (clip, samples) in clips.iter().zip(&recordings) {
        let t = cutter.engine.transcribe_samples(samples, &direct).with_context(|| clip.file.clone())?;
        written.add(clip, t.segments.iter().map(|s| s.text.trim()).collect::<Vec<_>>().join(" "));
    }
    let wer = score(python, corpus, &header, &clips, &written.hyps)?;
    let (formatted, miscased) = (written.formatted_wer(), written.miscased);
    println!("{:>10}{:>12}{wer:>10.2}{formatted:>18.2}{miscased:>10}{:>14}", "direct", "-", "-");
    let mut seams_of = Vec::new();
    let mut revised_rows: Vec<(&Clip, &Vec<f32>, Vec<(Range<usize>, String)>)> = Vec::new();
    for (pause, hold) in [(500, None), (700, None), (500, Some(700)), (500, Some(1000))] {
        let mut tally = Tally::default();
        let mut texts: Vec<Vec<String>> = Vec::new();
        let (mut written, mut open_ended) = (Written::default(), 0);
        for (clip, samples) in clips.iter().zip(&recordings) {
            let finals = cutter.finals(samples, pause, hold, &mut tally).with_context(|| clip.file.clone())?;
            open_ended += finals.iter().filter(|(_, text)| holds_pause(text.split_whitespace())).count();
            texts.push(finals.iter().map(|(_, t)| t.clone()).filter(|t| !t.is_empty()).collect());
            written.add(clip, joined(&finals));
            if hold == Some(1000) {
                revised_rows.push((clip, samples, finals.clone()));
            }
        }
        let wer = score(python, corpus, &header, &clips, &written.hyps)?;
        let (formatted, miscased) = (written.formatted_wer(), written.miscased);
        let name = row_name(pause, hold);
        println!("{name:>10}{:>12}{wer:>10.2}{formatted:>18.2}{miscased:>10}{open_ended:>14}", tally.lengths.len());
        if hold.is_some() {
            println!("{:>10}  {}", "", tally.holds);
        }
        if pause == 500 && hold != Some(700) {
            seams_of.push((name, texts));
        }
    }
    println!("(mid-sentence: finals whose last word has no sentence mark)");
    // The finals as revised (`outputConfig.revisions`): each read again with its neighbours.
    let mut written = Written::default();
    let mut tally = Revisions::default();
    for (clip, samples, finals) in &revised_rows {
        written.add(clip, cutter.revised(samples, finals, &mut tally)?);
    }
    let wer = score(python, corpus, &header, &clips, &written.hyps)?;
    let (formatted, miscased) = (written.formatted_wer(), written.miscased);
    println!(
        "{:>10}{:>12}{wer:>10.2}{formatted:>18.2}{miscased:>10}{:>14}",
        "revised",
        revised_rows.iter().map(|r| r.2.len()).sum::<usize>(),
        "-"
    );
    println!("{:>10}  {tally}", "");
    println!("(revised: the 500/1000 finals, each read again with the finals before and after it, as a");
    println!(" session with outputConfig.revisions sends them)");
    // Fewer seams, and fewer of them mid-sentence: do the casing rules at the seams help now?
    for (name, texts) in seams_of {
        println!();
        println!("cut at {name} ms:");
        seams(&clips, &texts);
    }
    Ok(())
}

/// The recordings' texts of one row, scored as written (case and punctuation count).
#[derive(Default)]
struct Written {
    /// Each recording and its text, for `score_wer.py`.
    hyps: Vec<(String, String)>,
    /// Word edits as written, and the references' words.
    errors: usize,
    words: usize,
    /// Words the reference has, written in another case.
    miscased: usize,
}

impl Written {
    fn add(&mut self, clip: &Clip, text: String) {
        let (errors, words) = formatted_wer(&clip.transcript, &text);
        let written: Vec<String> = text.split_whitespace().map(str::to_owned).collect();
        self.errors += errors;
        self.words += words;
        self.miscased += case_errors(&clip.transcript, &written).0;
        self.hyps.push((clip.file.clone(), text));
    }

    fn formatted_wer(&self) -> f64 {
        self.errors as f64 * 100.0 / self.words.max(1) as f64
    }
}

fn row_name(pause: u32, hold: Option<u32>) -> String {
    hold.map_or(format!("{pause}"), |h| format!("{pause}/{h}"))
}

fn decode_all(corpus: &Path, clips: &[Clip]) -> anyhow::Result<Vec<Vec<f32>>> {
    clips.iter().map(|c| audio::decode_all(&corpus.join(&c.file)).with_context(|| c.file.clone())).collect()
}

/// A recording's finals as one text.
fn joined(finals: &[(Range<usize>, String)]) -> String {
    finals.iter().map(|(_, t)| t.as_str()).filter(|t| !t.is_empty()).collect::<Vec<_>>().join(" ")
}

/// Cuts recordings as a live session does and decodes each utterance as its final.
struct Cutter<'a> {
    engine: &'a Engine,
    vad: &'a SileroVad,
    options: TranscribeOptions,
}

/// What a row's decodings cost and did.
#[derive(Default)]
struct Tally {
    /// Each final's utterance (s).
    lengths: Vec<f64>,
    /// Decodings whose fitted window failed its checks and were decoded again whole.
    failed: usize,
    /// Seconds spent decoding (early finals included).
    seconds: f64,
    holds: Holds,
}

impl Cutter<'_> {
    /// The finals of `samples` (stream ranges and texts) cut at pauses of `pause` ms, or, with
    /// `hold`, as a session that holds mid-sentence pauses for `hold` ms cuts them.
    fn finals(
        &self,
        samples: &[f32],
        pause: u32,
        hold: Option<u32>,
        tally: &mut Tally,
    ) -> anyhow::Result<Vec<(Range<usize>, String)>> {
        let params = UtteranceParams::with_pause(pause);
        let mut decode = |range: Range<usize>| -> anyhow::Result<String> {
            let _ = profile::take();
            let started = Instant::now();
            let text = match self.engine.transcribe_samples(&samples[range.clone()], &self.options) {
                Ok(t) => t.segments.iter().map(|s| s.text.trim()).collect::<Vec<_>>().join(" "),
                Err(EngineError::NoSpeech) => String::new(),
                Err(e) => return Err(e).with_context(|| format!("{range:?}")),
            };
            tally.seconds += started.elapsed().as_secs_f64();
            tally.failed += profile::take().iter().any(|s| s.stage == "fitted windows decoded again whole") as usize;
            Ok(text)
        };
        let finals = match hold {
            None => utterances::of_recording_with(self.vad, samples, params)
                .into_iter()
                .filter_map(|e| match e {
                    UtteranceEvent::Ended { range, .. } => Some(range),
                    _ => None,
                })
                .map(|range| Ok((range.clone(), decode(range)?)))
                .collect::<anyhow::Result<Vec<_>>>()?,
            Some(hold_ms) => {
                let mut holds = std::mem::take(&mut tally.holds);
                let finals = cut_holding(self.vad, samples, params, hold_ms, &mut holds, &mut decode);
                tally.holds = holds;
                finals?
            }
        };
        tally.lengths.extend(finals.iter().map(|(range, _)| range.len() as f64 / SAMPLE_RATE as f64));
        Ok(finals)
    }

    /// A recording's `finals` as a session with revisions leaves them: each final with words
    /// read again over [`Revision::plan`]'s window (its neighbours with words), and replaced by
    /// the words that reading puts in its stretch when there are any.
    fn revised(
        &self,
        samples: &[f32],
        finals: &[(Range<usize>, String)],
        tally: &mut Revisions,
    ) -> anyhow::Result<String> {
        let said: Vec<&(Range<usize>, String)> = finals.iter().filter(|(_, t)| !t.is_empty()).collect();
        let mut texts = Vec::new();
        for (i, (own, text)) in said.iter().enumerate() {
            let before = i.checked_sub(1).map(|b| &said[b].0);
            let Some(plan) = Revision::plan(before, own, said.get(i + 1).map(|a| &a.0)) else {
                texts.push(text.clone());
                continue;
            };
            let started = Instant::now();
            let reading = match self.engine.transcribe_samples(&samples[plan.window.clone()], &self.options) {
                Ok(t) => t,
                Err(EngineError::NoSpeech) => {
                    texts.push(text.clone());
                    continue;
                }
                Err(e) => return Err(e).with_context(|| format!("{:?}", plan.window)),
            };
            tally.seconds += started.elapsed().as_secs_f64();
            tally.read += 1;
            if reading.failed_checks() {
                tally.failed += 1;
                texts.push(text.clone());
                continue;
            }
            let offset = plan.window.start as f64 / SAMPLE_RATE as f64;
            let words: Vec<&str> = reading
                .segments
                .iter()
                .flat_map(|s| &s.words)
                .filter(|w| plan.keeps(w.start + offset, w.end + offset))
                .map(|w| w.text.trim())
                .collect();
            let revised = words.join(" ");
            if revised.is_empty() || revised == *text {
                texts.push(text.clone());
            } else {
                tally.changed += 1;
                texts.push(revised);
            }
        }
        Ok(texts.join(" "))
    }
}

/// What the revisions of a row cost and changed.
#[derive(Default)]
struct Revisions {
    /// Finals read again, and those whose reading differed (sent again).
    read: usize,
    changed: usize,
    /// Readings that failed the decoder's checks (the final kept).
    failed: usize,
    seconds: f64,
}

impl std::fmt::Display for Revisions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = 1000.0 * self.seconds / self.read.max(1) as f64;
        write!(
            f,
            "finals read again {}, sent again (changed) {}, failing the decoder's checks {}, {ms:.0} ms each",
            self.read, self.changed, self.failed
        )
    }
}

/// What the held pauses did over a row's clips.
#[derive(Default)]
struct Holds {
    /// Pauses decoded early (every `Pausing`).
    decoded: usize,
    /// Of those, pauses held because their words did not end a sentence.
    held: usize,
    /// Held pauses that speech broke (the utterance went on).
    resumed: usize,
    /// Held pauses that ended their utterance, later than an unheld pause would have.
    ended: usize,
}

impl std::fmt::Display for Holds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "pauses decoded {}, held {} (mid-sentence), broken by speech {}, ended by the hold {}",
            self.decoded, self.held, self.resumed, self.ended
        )
    }
}

/// The finals of `samples` streamed as a session that holds mid-sentence pauses streams them
/// (100 ms pieces): each `Pausing` range is decoded as it is announced, a pause whose words do
/// not end a sentence is held for `hold_ms`, and an `Ended` with the range announced keeps its
/// early words.
fn cut_holding(
    vad: &SileroVad,
    samples: &[f32],
    params: UtteranceParams,
    hold_ms: u32,
    holds: &mut Holds,
    decode: &mut impl FnMut(Range<usize>) -> anyhow::Result<String>,
) -> anyhow::Result<Vec<(Range<usize>, String)>> {
    let (mut finals, mut early, mut held) = (Vec::new(), None::<(Range<usize>, String)>, false);
    // As a session does: a range never reaches past the samples received.
    let clamp = |r: Range<usize>| r.start.min(samples.len())..r.end.min(samples.len());
    utterances::stream_recording(vad, samples, params, |segmenter, event| {
        match event {
            UtteranceEvent::Pausing { range, .. } => {
                let range = clamp(range);
                let text = decode(range.clone())?;
                holds.decoded += 1;
                if holds_pause(text.split_whitespace()) && segmenter.hold_pause(hold_ms) {
                    holds.held += 1;
                    held = true;
                }
                early = Some((range, text));
            }
            UtteranceEvent::Resumed => {
                holds.resumed += std::mem::take(&mut held) as usize;
                early = None;
            }
            UtteranceEvent::Ended { range, .. } => {
                let range = clamp(range);
                holds.ended += std::mem::take(&mut held) as usize;
                let text = match early.take() {
                    Some((r, text)) if r == range => text,
                    _ => decode(range.clone())?,
                };
                finals.push((range, text));
            }
            UtteranceEvent::Started { .. } => {}
        }
        anyhow::Ok(())
    })?;
    Ok(finals)
}
