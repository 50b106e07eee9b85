//! Long recordings decoded in batches, as faster-whisper's `BatchedInferencePipeline` does.
//!
//! The voice detection cuts the speech into spans of at most 30 s (at a pause);
//! consecutive spans are merged into chunks of up to 30 s ([`chunks`]), and each chunk is a
//! window of its own, decoded without the previous text as prompt. `batch_size` chunks are
//! encoded (a few windows per encoder call, [`ENCODER_GROUP`]) and beam-searched side by side ([`decode::decode_batch`]: one
//! read of the decoder's weights per step for every chunk's hypotheses), which is what makes
//! this path faster than the sequential one on a decoder bound by memory bandwidth.
//!
//! Unlike faster-whisper, no speech is left behind, as on the sequential path: when a chunk's
//! decoding ends (its last word) a second or more before the chunk does and the VAD heard a
//! quarter second of speech or more after it, the rest of the chunk is decoded again as a
//! window of its own; and a stretch of a second or more inside the decoded part with no word
//! but with speech the VAD heard (the decoder jumped over a sentence) is decoded again on its
//! own. Those second decodings go one at a time, each prompted with the text before it, and
//! what they give is kept only when it passes the decoding's checks and does not read back its
//! chunk's text (see the engine's module). Segments are handed to the progress callback in
//! media order: each is held back until the speech before it is decoded.

use std::collections::BTreeMap;
use std::ops::Range;

use rand::SeedableRng;

use super::{
    DecodeSetup, Engine, EngineError, FRAMES_PER_SECOND, LanguagePlan, Piece, Progress, REST_SPEECH_MIN_S,
    SKIPPED_SPEECH_MIN_S, Segment, SpeechFound, TimeMap, TranscribeOptions, Transcript, UNDECODED_MIN_S,
    check_cancelled, covered, on_pool, split_around, uncovered,
};
use crate::decode;
use crate::mel;
use crate::model::AudioContext;
use crate::profile;
use crate::repetition;
use crate::speech::Windows;
use crate::vad::VadParams;

/// Frames of a chunk at most (30 s, one window).
const MAX_CHUNK_FRAMES: usize = mel::N_FRAMES;

/// Windows per encoder call. The encoder's products are already 1500 rows a window (bound by
/// arithmetic, not by reading weights), so stacking more gains little, while each window
/// stacked adds about its cross-attention keys and values in working memory.
const ENCODER_GROUP: usize = 2;

/// Speech left in a chunk after its decoding ended, from which it is decoded again (frames).
const REMAINDER_MIN_FRAMES: usize = FRAMES_PER_SECOND;

/// The voice detection settings of the batched path: the caller's, with spans of at most
/// 30 s (split at their last pause before 30 s). faster-whisper's batched pipeline also ends
/// a span at 160 ms of silence; here the pauses the sequential path keeps stay in the audio,
/// so a recording of one window decodes to the same text on both paths.
pub(super) fn vad_params(params: &VadParams) -> VadParams {
    let mut p = params.clone();
    p.max_speech_s = p.max_speech_s.min(MAX_CHUNK_FRAMES as f32 / FRAMES_PER_SECOND as f32);
    p
}

/// Merges speech spans (samples on the media, in order) into chunks of at most 30 s on the
/// speech timeline (mel frames), as faster-whisper's `collect_chunks`: a span joins the
/// current chunk unless that would make it longer than 30 s. A span longer than 30 s (no
/// voice detection) is cut into 30 s pieces first. The chunks cover `0..content_frames`.
pub(super) fn chunks(spans: &[Range<usize>], content_frames: usize) -> Vec<Range<usize>> {
    let max = MAX_CHUNK_FRAMES * mel::HOP;
    let mut pieces = Vec::new(); // lengths, in samples, of pieces of at most 30 s
    for span in spans {
        let mut left = span.len();
        while left > 0 {
            pieces.push(left.min(max));
            left -= left.min(max);
        }
    }
    let mut bounds = vec![0usize]; // chunk starts on the speech timeline, in samples
    let (mut start, mut current) = (0usize, 0usize);
    for len in pieces {
        if current > 0 && current + len > max {
            start += current;
            bounds.push(start);
            current = 0;
        }
        current += len;
    }
    let mut frames: Vec<usize> = bounds.iter().map(|&b| (b / mel::HOP).min(content_frames)).collect();
    frames.dedup();
    frames.push(content_frames);
    frames.windows(2).filter(|w| w[1] > w[0]).map(|w| w[0]..w[1].min(w[0] + MAX_CHUNK_FRAMES)).collect()
}

/// A stretch of the speech timeline decoded as one window: frames `start..end`, and the
/// features of the 30 s from `start` (zero from `end` on).
struct Job {
    start: usize,
    end: usize,
    mel: Vec<f32>,
    /// A wordless stretch decoded again on its own: what it gives is taken as it is (no
    /// stretch or rest of it is looked for again).
    again: bool,
    /// For speech decoded a second time (a chunk's rest, a wordless stretch): the tokens of the
    /// text before it, its prompt, and the words of its chunk's text, which it must not read
    /// back. `None` for a chunk decoded the first time.
    second: Option<(Vec<u32>, Vec<String>)>,
}

impl Job {
    /// The job for frames `start..end` of `self`: its features, shifted, zero from `end` on.
    fn part(&self, start: usize, end: usize, n_mels: usize, again: bool) -> Job {
        let shift = start - self.start;
        let keep = end.min(self.end) - start;
        let n = mel::N_FRAMES;
        let mut out = vec![0.0f32; self.mel.len()];
        for m in 0..n_mels {
            out[m * n..m * n + keep].copy_from_slice(&self.mel[m * n + shift..m * n + shift + keep]);
        }
        Job { start, end: end.min(self.end), mel: out, again, second: None }
    }
}

impl Engine {
    /// Decodes the chunks of the speech `batch_size` at a time (see the module's comment).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn transcribe_batched(
        &self,
        windows: &mut Windows<'_>,
        chunks: Vec<Range<usize>>,
        batch_size: usize,
        duration_s: f64,
        map: &TimeMap,
        found: &SpeechFound,
        opts: &TranscribeOptions,
        plan: LanguagePlan,
        on_progress: &mut dyn FnMut(Progress),
    ) -> Result<Transcript, EngineError> {
        let content_frames = windows.content_frames();
        if content_frames == 0 || chunks.is_empty() {
            return Err(EngineError::NoSpeech);
        }
        let n_mels = self.info.n_mels;
        let fps = FRAMES_PER_SECOND as f64;
        let s = &self.tokenizer.specials;
        let detok = |t: &[u32]| self.tokenizer.decode(t);
        let mut rng = rand::rngs::StdRng::seed_from_u64(0x5eed);

        let mut fresh = chunks.into_iter().peekable();
        let mut remainders: Vec<Job> = Vec::new(); // sorted by start
        // Decoded jobs' segments by start frame, until everything before them is decoded.
        let mut ready: BTreeMap<usize, Vec<Segment>> = BTreeMap::new();
        let mut segments: Vec<Segment> = Vec::new();
        let mut language: Option<(&'static str, f32)> = None;
        let mut setup: Option<(DecodeSetup, Vec<u32>, Vec<u32>)> = None; // the initial prompt, the chunks' prompt
        let mut last_speech_timestamp = 0.0f64;
        let mut done_s = 0.0f64;
        loop {
            check_cancelled(opts)?;
            let mut jobs: Vec<Job> = remainders.drain(..remainders.len().min(batch_size)).collect();
            while jobs.len() < batch_size
                && let Some(chunk) = fresh.next()
            {
                let (mut features, _) = profile::time("mel", || windows.window(chunk.start))?;
                let len = chunk.len();
                for row in features.chunks_exact_mut(mel::N_FRAMES) {
                    row[len..].fill(0.0);
                }
                jobs.push(Job { start: chunk.start, end: chunk.end, mel: features, again: false, second: None });
            }
            if jobs.is_empty() {
                break;
            }
            let mels: Vec<&[f32]> = jobs.iter().map(|j| j.mel.as_slice()).collect();
            let audios: Vec<AudioContext> = mels
                .chunks(ENCODER_GROUP)
                .flat_map(|group| profile::time("encode", || on_pool(|| self.model.encode_batch(group))))
                .collect();
            let (language, _) = *language.get_or_insert_with(|| match &plan {
                LanguagePlan::Fixed(l) => (*l, 1.0),
                LanguagePlan::Detect(among) => self.detect_language(&audios[0], among),
            });
            let (setup, initial, prompt) = setup.get_or_insert_with(|| {
                let setup = self.decode_setup(language, opts);
                // Every chunk gets the same prompt: the glossary and the initial prompt, if any.
                let initial = self.initial_prompt_tokens(language, opts);
                let prompt = self.prompt(&setup.hotwords, &initial, &setup.sot_sequence);
                (setup, initial, prompt)
            });
            let dopts = &setup.dopts;
            // The chunks share one prompt and are decoded side by side; speech decoded a second
            // time follows the text before it, one job at a time (a few in a recording).
            let seconds = jobs.iter().position(|j| j.second.is_none()).unwrap_or(jobs.len());
            let mut results: Vec<decode::WindowResult> = jobs[..seconds]
                .iter()
                .zip(&audios)
                .map(|(job, audio)| {
                    let (before, _) = job.second.as_ref().expect("decoded a second time");
                    let prompt = self.prompt(&setup.hotwords, before, &setup.sot_sequence);
                    let decoder =
                        decode::Decoder { model: &self.model, audio, specials: s, opts: dopts, detokenize: &detok };
                    profile::time("decode window", || on_pool(|| decoder.decode_with_fallback(&prompt, &mut rng)))
                })
                .collect();
            results.extend(profile::time("decode window", || {
                let audios: Vec<&AudioContext> = audios[seconds..].iter().collect();
                on_pool(|| decode::decode_batch(&self.model, &audios, s, dopts, &detok, prompt, &mut rng))
            }));
            for ((job, audio), result) in jobs.iter().zip(&audios).zip(results) {
                let size = job.end - job.start;
                let time_offset = job.start as f64 / fps;
                if result.no_speech_prob > dopts.no_speech_threshold && result.avg_logprob < dopts.log_prob_threshold {
                    continue;
                }
                if job.second.is_some() && !result.passed {
                    continue;
                }
                let window_seek = (map.to_original(time_offset, false) * fps).round() as usize;
                let (mut pieces, _, _) = self.split_by_timestamps(&result.tokens, time_offset, job.start, size);
                if let Some((_, chunk_words)) = &job.second {
                    pieces.retain(|p| !self.repeats(&p.tokens, chunk_words));
                }
                if opts.word_timestamps {
                    let last = profile::time("word timestamps", || {
                        on_pool(|| {
                            self.add_word_timestamps(
                                &mut pieces,
                                audio,
                                &setup.sot_sequence,
                                size,
                                time_offset,
                                language,
                                last_speech_timestamp,
                            )
                        })
                    });
                    if !job.again {
                        last_speech_timestamp = last;
                    }
                }
                if !job.again {
                    let mut again = left_behind(job, &pieces, map, found, n_mels);
                    // Each is prompted with the text of the job before it and checked against
                    // all of the job's text (and, for a rest, what its own prompt held).
                    let mut chunk_words: Vec<String> = job.second.as_ref().map(|s| s.1.clone()).unwrap_or_default();
                    chunk_words
                        .extend(pieces.iter().flat_map(|p| repetition::words(&self.tokenizer.decode(&p.tokens))));
                    let earlier: &[u32] = job.second.as_ref().map_or(initial, |s| &s.0);
                    for j in &mut again {
                        let from = j.start as f64 / fps + 0.01;
                        let before: Vec<u32> = earlier
                            .iter()
                            .copied()
                            .chain(pieces.iter().filter(|p| p.end <= from).flat_map(|p| p.tokens.iter().copied()))
                            .collect();
                        j.second = Some((before, chunk_words.clone()));
                    }
                    let stretches = again.iter().filter(|j| j.again).count() as u64;
                    profile::count("windows again (wordless stretch)", stretches);
                    profile::count("windows again (chunk's rest)", again.len() as u64 - stretches);
                    for stretch in again.iter().filter(|j| j.again) {
                        pieces = split_around(pieces, stretch.start as f64 / fps, stretch.end as f64 / fps);
                    }
                    remainders.extend(again);
                }
                for p in pieces {
                    let key = ((p.start * fps).round() as usize).max(job.start);
                    let Some(mut segment) = self.segment(p, &result, window_seek) else { continue };
                    map.restore(&mut segment);
                    ready.entry(key).or_default().push(segment);
                }
            }
            drop(audios);
            remainders.sort_by_key(|j| j.start);
            // Everything before the first speech still to decode is final.
            let frontier =
                remainders.first().map(|j| j.start).or_else(|| fresh.peek().map(|c| c.start)).unwrap_or(content_frames);
            let mut out = Vec::new();
            while let Some(entry) = ready.first_entry()
                && *entry.key() < frontier
            {
                out.extend(entry.remove());
            }
            segments.extend_from_slice(&out);
            done_s = done_s.max(map.to_original(frontier as f64 / fps, true).min(duration_s));
            on_progress(Progress { done_s, total_s: duration_s, segments: out });
        }
        on_progress(Progress { done_s: duration_s, total_s: duration_s, segments: Vec::new() });
        let Some((language, language_probability)) = language else {
            return Err(EngineError::NoSpeech);
        };
        if segments.is_empty() {
            return Err(EngineError::NoSpeech);
        }
        Ok(Transcript { language: language.to_string(), language_probability, duration_s, segments })
    }
}

/// The speech of `job` its decoding (`pieces`) left behind, as jobs to decode again: the
/// rest of the chunk when the decoding ended a second or more before it (and the rest
/// holds [`REST_SPEECH_MIN_S`] of speech by the VAD), and each wordless
/// stretch inside the decoded part that holds speech by the VAD. Nothing when the decoding
/// gave no word at all (decoding the same features again would give the same).
fn left_behind(job: &Job, pieces: &[Piece], map: &TimeMap, found: &SpeechFound, n_mels: usize) -> Vec<Job> {
    let fps = FRAMES_PER_SECOND as f64;
    let spans = covered(pieces);
    let Some(decoded_end) = spans.iter().map(|c| c.1).max_by(f64::total_cmp) else {
        return Vec::new();
    };
    let mut jobs = Vec::new();
    let next = ((decoded_end * fps).round() as usize).max(job.start);
    let rest = next > job.start
        && next + REMAINDER_MIN_FRAMES <= job.end
        && found.speech_s(&map.original_ranges(next as f64 / fps, job.end as f64 / fps)) >= REST_SPEECH_MIN_S;
    let done_until = if rest { next } else { job.end };
    for (from, to) in uncovered(&spans, job.start as f64 / fps, done_until as f64 / fps) {
        if to - from < UNDECODED_MIN_S || found.speech_s(&map.original_ranges(from, to)) < SKIPPED_SPEECH_MIN_S {
            continue;
        }
        let first = ((from * fps).round() as usize).clamp(job.start, done_until);
        let end = ((to * fps).round() as usize).min(done_until);
        if end > first {
            jobs.push(job.part(first, end, n_mels, true));
        }
    }
    if rest {
        jobs.push(job.part(next, job.end, n_mels, false));
    }
    jobs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::align::WordTiming;
    use crate::audio::SAMPLE_RATE;
    use crate::vad;

    const SEC: usize = 16_000;

    #[test]
    fn spans_merge_into_chunks_of_at_most_30_s_covering_the_speech() {
        // 10 s + 12 s fit together; 9 s more would pass 30 s; a 70 s span is cut in three.
        let spans = [0..10 * SEC, 20 * SEC..32 * SEC, 40 * SEC..49 * SEC, 60 * SEC..130 * SEC];
        let total: usize = spans.iter().map(|s| s.len()).sum();
        let frames = total / mel::HOP;
        let c = chunks(&spans, frames);
        assert_eq!(c, vec![0..2200, 2200..3100, 3100..6100, 6100..9100, 9100..frames]);
        assert!(c.iter().all(|r| r.len() <= MAX_CHUNK_FRAMES));
    }

    #[test]
    fn the_parts_of_a_job_are_its_features_shifted() {
        let n_mels = 2;
        let mel: Vec<f32> = (0..n_mels * mel::N_FRAMES).map(|i| i as f32).collect();
        let job = Job { start: 100, end: 2000, mel, again: false, second: None };
        let rest = job.part(400, 2000, n_mels, false);
        assert_eq!((rest.start, rest.end), (400, 2000));
        assert_eq!(rest.mel[0], 300.0);
        assert_eq!(rest.mel[mel::N_FRAMES], (mel::N_FRAMES + 300) as f32);
        assert_eq!(rest.mel[mel::N_FRAMES - 300], 0.0);
        // A stretch inside: shifted, silent after its end.
        let stretch = job.part(400, 700, n_mels, true);
        assert_eq!((stretch.start, stretch.end, stretch.again), (400, 700, true));
        assert_eq!(stretch.mel[299], 599.0);
        assert_eq!(stretch.mel[300], 0.0);
        assert_eq!(stretch.mel[mel::N_FRAMES + 299], (mel::N_FRAMES + 599) as f32);
    }

    #[test]
    fn a_chunks_rest_is_decoded_again_when_it_holds_a_quarter_second_of_speech() {
        // given a 10 s chunk whose decoding's last word ends at 8 s
        let n_mels = 2;
        let job = Job { start: 0, end: 1000, mel: vec![0.0; n_mels * mel::N_FRAMES], again: false, second: None };
        let word = WordTiming { word: " so".into(), tokens: vec![1], start: 0.5, end: 8.0, probability: 0.9 };
        let pieces = [Piece { start: 0.5, end: 8.0, tokens: vec![1], words: vec![word] }];
        let per_s = SAMPLE_RATE as f64 / vad::CHUNK as f64;
        let speech_until = |until: f64| SpeechFound {
            probabilities: (0..(10.0 * per_s) as usize)
                .map(|i| if i as f64 / per_s < until { 0.9 } else { 0.1 })
                .collect(),
            threshold: 0.5,
        };
        let map = TimeMap::identity();
        // when the VAD hears a second of speech after that word, the rest is decoded again
        let again = left_behind(&job, &pieces, &map, &speech_until(9.0), n_mels);
        assert_eq!(again.iter().map(|j| (j.start, j.end, j.again)).collect::<Vec<_>>(), vec![(800, 1000, false)]);
        // and when it hears only 0.16 s (a word's tail), nothing is
        assert!(left_behind(&job, &pieces, &map, &speech_until(8.16), n_mels).is_empty());
    }

    #[test]
    fn batched_voice_detection_caps_spans_at_30_s() {
        let p = vad_params(&VadParams::default());
        assert_eq!(p, VadParams { max_speech_s: 30.0, ..VadParams::default() });
        let own = VadParams { min_silence_ms: 500, max_speech_s: 12.0, ..VadParams::default() };
        assert_eq!(vad_params(&own), own);
    }
}
