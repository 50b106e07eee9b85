//! Several utterances transcribed together: live sessions' finals and partials ready at the
//! same moment share the decoder.
//!
//! A decoder step reads all of the decoder's weights, however many hypotheses it carries; two
//! sessions decoding one after the other read them twice. Here each utterance is prepared as
//! [`Engine::transcribe_samples`] prepares it, and its first window is encoded on its own
//! (fitted to its speech, so each its own length) with its language found; then the first
//! windows that share a prompt are beam-searched side by side ([`decode::beam_search_batch`]),
//! each with its own options (beam size, token budget, cancel flag). From there each utterance
//! is finished on its own as it would be alone: the decoding's checks and fallback, word times,
//! any window after the first. Only the decoder's steps are shared: on a CPU without AVX-512
//! that made a batch of finals 1.03–1.07× faster than one after another, partials 1.11–1.20×
//! (`scribe-bench live --together`, `ops/bench/live.md`).

use std::collections::BTreeMap;

use super::{Engine, EngineError, FirstWindow, Prepared, TranscribeOptions, Transcript, on_pool};
use crate::decode::{self, DecodeOptions};
use crate::model::AudioContext;
use crate::profile;
use crate::speech::Media;

/// An utterance prepared, with its first window encoded when it has one to decode.
struct Started<'m> {
    prepared: Prepared<'m>,
    first: Option<FirstDecoding>,
}

/// The first window and what its first decoding is given.
struct FirstDecoding {
    window: FirstWindow,
    prompt: Vec<u32>,
    dopts: DecodeOptions,
}

/// The first window of a started utterance that was grouped for decoding.
fn first_of<'a>(started: &'a Result<Started<'_>, EngineError>) -> &'a FirstDecoding {
    let started = started.as_ref().expect("grouped when started");
    started.first.as_ref().expect("grouped with a first window")
}

impl Engine {
    /// Transcribes each of `items` (16 kHz samples and their options) as
    /// [`Engine::transcribe_samples`] would, the first windows that share a prompt decoded in
    /// one batch. Results are in the order of `items`; each may fail on its own.
    pub fn transcribe_together(&self, items: &[(&[f32], &TranscribeOptions)]) -> Vec<Result<Transcript, EngineError>> {
        let mut started: Vec<Result<Started<'_>, EngineError>> =
            items.iter().map(|&(samples, opts)| self.start(samples, opts)).collect();
        let mut by_prompt: BTreeMap<Vec<u32>, Vec<usize>> = BTreeMap::new();
        for (i, s) in started.iter().enumerate() {
            if let Ok(Started { first: Some(first), .. }) = s
                && first.dopts.temperatures.first() == Some(&0.0)
            {
                by_prompt.entry(first.prompt.clone()).or_default().push(i);
            }
        }
        for (prompt, members) in by_prompt.into_iter().filter(|(_, m)| m.len() > 1) {
            let firsts: Vec<&FirstDecoding> = members.iter().map(|&i| first_of(&started[i])).collect();
            let audios: Vec<&AudioContext> = firsts.iter().map(|f| &f.window.audio).collect();
            let opts: Vec<&DecodeOptions> = firsts.iter().map(|f| &f.dopts).collect();
            let detok = |t: &[u32]| self.tokenizer.decode(t);
            profile::count("windows decoded together", members.len() as u64);
            let results = profile::time("decode window", || {
                on_pool(|| {
                    decode::beam_search_batch(&self.model, &audios, &opts, &self.tokenizer.specials, &detok, &prompt)
                })
            });
            for (i, result) in members.into_iter().zip(results) {
                if let Ok(Started { first: Some(first), .. }) = &mut started[i] {
                    first.window.result = Some(result);
                }
            }
        }
        started
            .into_iter()
            .zip(items)
            .map(|(s, (_, opts))| {
                let s = s?;
                self.finish_transcription(s.prepared, opts, s.first.map(|f| f.window), &mut |_| {})
            })
            .collect()
    }

    /// Prepares `samples` and, when they are walked window by window, encodes the first
    /// window and finds its language, prompt and first decoding's options.
    fn start<'m>(&self, samples: &'m [f32], opts: &TranscribeOptions) -> Result<Started<'m>, EngineError> {
        let mut prepared = self.prepare(Media::Samples(samples), opts)?;
        if prepared.batch.is_some() || prepared.windows.content_frames() == 0 {
            return Ok(Started { prepared, first: None });
        }
        let (mel, size) = profile::time("mel", || prepared.windows.window(0))?;
        let audio = self.encode_window(&mel, size, opts.encoder_window);
        let (language, language_probability) = self.language_of(&audio, prepared.plan.clone());
        let setup = self.decode_setup(language, opts);
        let prompt = self.prompt(&setup.hotwords, &self.initial_prompt_tokens(language, opts), &setup.sot_sequence);
        let dopts = self.first_decoding(&audio, size, &setup.dopts);
        let window = FirstWindow { audio, result: None, language, language_probability };
        Ok(Started { prepared, first: Some(FirstDecoding { window, prompt, dopts }) })
    }
}
