//! How likely the model finds each of several written readings of the same speech.
//!
//! Some choices about a text are best left to the model that hears the audio: whether a
//! sentence ends where two live finals meet, or goes on. Decoding cannot be asked that (it
//! writes what it writes); scoring can. The speech is encoded once, the words every reading
//! shares are decoded once as their prefix, and then each reading's tokens are fed side by side
//! and the log-probability the decoder gives them summed. No timestamps: only the words count.

use super::{EncoderWindow, Engine, EngineError, LanguagePlan, TranscribeOptions, on_pool};
use crate::decode::log_softmax;
use crate::mel;
use crate::model::AudioContext;
use crate::profile;
use crate::speech::{Media, Windows};

impl Engine {
    /// The log-likelihood of each of `readings` (texts, each starting with a space) after
    /// `prefix` (the words they all share before them; may be empty), spoken in `samples`
    /// (16 kHz mono, at most 30 s) in `language` (a code, not `auto`).
    pub fn likelihoods_of_readings(
        &self,
        samples: &[f32],
        language: &str,
        prefix: &str,
        readings: &[String],
    ) -> Result<Vec<f32>, EngineError> {
        assert!(
            !samples.is_empty() && samples.len() <= mel::N_FRAMES * mel::HOP && !readings.is_empty(),
            "readings are scored over 1 sample to 30 s of audio"
        );
        let fixed = TranscribeOptions { language: Some(language.to_string()), ..Default::default() };
        let LanguagePlan::Fixed(language) = self.plan_languages(&fixed)? else {
            return Err(EngineError::UnsupportedLanguage { code: language.to_string(), model: self.info.name.clone() });
        };
        // The features as a transcription of these samples has them (one window, its level).
        let all = 0..samples.len();
        let mut windows =
            Windows::open(Media::Samples(samples), std::slice::from_ref(&all), samples.len(), self.info.n_mels)?;
        let (window, frames) = windows.window(0)?;
        let audio = self.encode_window(&window, frames, EncoderWindow::fitted());
        let setup = self.decode_setup(language, &Default::default());
        let mut prompt = setup.sot_sequence;
        prompt.push(self.tokenizer.specials.no_timestamps);
        if !prefix.trim().is_empty() {
            prompt.extend(self.tokenizer.encode(&format!(" {}", prefix.trim())));
        }
        let tokens: Vec<Vec<u32>> = readings.iter().map(|r| self.tokenizer.encode(r)).collect();
        Ok(profile::time("readings scored", || on_pool(|| self.log_likelihoods(&audio, &prompt, &tokens))))
    }

    /// The log-likelihood of each of `readings` (text tokens) after `prompt`, over `audio`:
    /// the prompt is decoded once, then the readings side by side, padded with end-of-text.
    fn log_likelihoods(&self, audio: &AudioContext, prompt: &[u32], readings: &[Vec<u32>]) -> Vec<f32> {
        let eot = self.tokenizer.specials.eot;
        let vocab = self.model.dims.n_vocab;
        let mut cache = self.model.new_cache(1);
        let mut first = self.model.decode(audio, &mut cache, prompt, &[prompt.len() - 1]);
        log_softmax(&mut first, None);
        let mut scores: Vec<f32> = readings.iter().map(|r| r.first().map_or(0.0, |&t| first[t as usize])).collect();
        let longest = readings.iter().map(Vec::len).max().unwrap_or(0);
        if longest < 2 {
            return scores;
        }
        // Each row feeds its reading but its last token, and reads the odds of the next one.
        let steps = longest - 1;
        cache.select(&vec![0; readings.len()]);
        let tokens: Vec<u32> =
            readings.iter().flat_map(|r| (0..steps).map(move |i| r.get(i).copied().unwrap_or(eot))).collect();
        let rows: Vec<usize> = (0..steps).collect();
        let logits = self.model.decode(audio, &mut cache, &tokens, &rows);
        for (row, reading) in readings.iter().enumerate() {
            for (i, &next) in reading.iter().enumerate().skip(1) {
                let at = (row * steps + i - 1) * vocab;
                let mut position = logits[at..at + vocab].to_vec();
                log_softmax(&mut position, None);
                scores[row] += position[next as usize];
            }
        }
        scores
    }
}
