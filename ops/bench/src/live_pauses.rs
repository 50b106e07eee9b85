//! `scribe-bench live --pauses`: how long a pause must last to end a live utterance.
//!
//! A live final goes out once its utterance's pause has lasted `min_silence_ms` (0.5 s by
//! default): the floor under a final's latency. A shorter pause sends finals sooner but cuts
//! speech into more and shorter utterances, each decoded without the words around it. In this
//! process (no server), every real English clip of the corpus is cut as a live session cuts it,
//! once per pause length tried, and each utterance is decoded with the live finals' settings;
//! the clips' texts are scored by the corpus's `score_wer.py`; with how many finals failed the
//! checks over their fitted window (and were decoded again whole) and what a final costs.

use std::path::Path;
use std::time::Instant;

use anyhow::Context;
use scribe_whisper::audio::{self, SAMPLE_RATE};
use scribe_whisper::utterances::{self, UtteranceEvent, UtteranceParams};
use scribe_whisper::{EncoderWindow, EngineError, TranscribeOptions, profile};

use crate::asr::score;
use crate::live_encoder::load;
use scribe_bench::corpus::real_english_clips;

/// Pauses tried (ms); the default is the anchor.
const PAUSES_MS: [u32; 6] = [500, 300, 400, 600, 700, 1000];

pub fn run(models_dir: &Path, corpus: &Path, python: &Path) -> anyhow::Result<()> {
    let engine = load(models_dir)?;
    let vad = engine.vad().context("loaded with the VAD")?;
    let (header, clips) = real_english_clips(corpus)?;
    let recordings = clips
        .iter()
        .map(|c| audio::decode_all(&corpus.join(&c.file)).with_context(|| c.file.clone()))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let options = TranscribeOptions {
        language: Some("en".into()),
        use_vad: true,
        temperature_fallback: false,
        encoder_window: EncoderWindow::fitted(),
        ..Default::default()
    };
    println!("pauses that end an utterance: {} real English clips, Whisper base, finals' settings", clips.len());
    println!(
        "{:>10}{:>12}{:>10}{:>10}{:>10}{:>10}{:>10}",
        "pause ms", "utterances", "mean s", "failed", "ms each", "WER %", "vs 500"
    );
    let mut anchor = None;
    for pause in PAUSES_MS {
        let defaults = UtteranceParams::default();
        let params = UtteranceParams { min_silence_ms: pause, padding_ms: defaults.padding_ms.min(pause), ..defaults };
        let (mut hyps, mut lengths, mut failed, mut seconds) = (Vec::new(), Vec::new(), 0, 0.0);
        for (clip, samples) in clips.iter().zip(&recordings) {
            let mut text = Vec::new();
            for event in utterances::of_recording_with(vad, samples, params.clone()) {
                let UtteranceEvent::Ended { range, .. } = event else { continue };
                lengths.push(range.len() as f64 / SAMPLE_RATE as f64);
                let _ = profile::take();
                let started = Instant::now();
                match engine.transcribe_samples(&samples[range.clone()], &options) {
                    Ok(t) => text.extend(t.segments.iter().map(|s| s.text.trim().to_string())),
                    Err(EngineError::NoSpeech) => {}
                    Err(e) => return Err(e).with_context(|| format!("{} {range:?}", clip.file)),
                }
                seconds += started.elapsed().as_secs_f64();
                failed += profile::take().iter().any(|s| s.stage == "fitted windows decoded again whole") as usize;
            }
            hyps.push((clip.file.clone(), text.join(" ")));
        }
        let wer = score(python, corpus, &header, &clips, &hyps)?;
        let delta = anchor.map_or("anchor".to_string(), |a: f64| format!("{:+.2}", wer - a));
        anchor.get_or_insert(wer);
        let n = lengths.len().max(1) as f64;
        let mean = lengths.iter().sum::<f64>() / n;
        let ms = 1000.0 * seconds / n;
        println!("{pause:>10}{:>12}{mean:>10.1}{failed:>10}{ms:>10.0}{wer:>10.2}{delta:>10}", lengths.len());
    }
    Ok(())
}
