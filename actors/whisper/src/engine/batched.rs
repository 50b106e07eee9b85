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
//! decoding ends (its last word) a second or more before the chunk does, the rest of the chunk
//! is decoded again in a later batch; and so is a stretch of a second or more inside the
//! decoded part with no word but with speech the VAD heard (the decoder jumped over a
//! sentence). Such stretches are short, and the encoder costs a whole 30 s window whatever it
//! holds, so several of them share a window ([`pack`]), a second of silence apart; each
//! word goes back to the stretch it was heard in ([`place`]). A stretch that gets no word
//! in a shared window is decoded again alone. Segments are handed to the progress callback
//! in media order: each is held back until the speech before it is decoded.

use std::collections::BTreeMap;
use std::ops::Range;

use rand::SeedableRng;

use super::{
    DecodeSetup, Engine, EngineError, FRAMES_PER_SECOND, LanguagePlan, Progress, SKIPPED_SPEECH_MIN_S, Segment,
    SpeechFound, TimeMap, TranscribeOptions, Transcript, UNDECODED_MIN_S, check_cancelled, covered, on_pool,
    split_around, uncovered,
};
use crate::decode;
use crate::mel;
use crate::model::AudioContext;
use crate::profile;
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

/// Silence (zero features, as after a chunk's end) between two stretches sharing a window
/// (frames): a pause the decoder ends a segment at.
const PACK_GAP_FRAMES: usize = FRAMES_PER_SECOND;

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
    /// A wordless stretch decoded again on its own: what it gives is taken as it is.
    again: bool,
    /// Got no word in a window it shared: decoded next in a window of its own.
    alone: bool,
}

/// What one window decodes: one job, or several side by side ([`pack`]).
struct Window {
    /// Each job and the window frame it starts at.
    parts: Vec<(Job, usize)>,
    /// The features of a window of several jobs (one job's are its own).
    packed: Option<Vec<f32>>,
}

impl Window {
    fn alone(job: Job) -> Window {
        Window { parts: vec![(job, 0)], packed: None }
    }

    fn mel(&self) -> &[f32] {
        self.packed.as_deref().unwrap_or(&self.parts[0].0.mel)
    }

    /// `(start, end, window frame)` of each part.
    fn spans(&self) -> Vec<(usize, usize, usize)> {
        self.parts.iter().map(|(j, at)| (j.start, j.end, *at)).collect()
    }
}

/// Takes the next window's jobs from `queue` (sorted by start): the first, and after it
/// those that still fit in 30 s with [`PACK_GAP_FRAMES`] before each, unless one of them
/// must be decoded alone. Several jobs get their features copied side by side.
fn pack(queue: &mut Vec<Job>, n_mels: usize) -> Window {
    let first = queue.remove(0);
    let mut used = first.end - first.start;
    let mut parts = vec![(first, 0)];
    while !parts[0].0.alone
        && let Some(next) = queue.first()
        && !next.alone
        && used + PACK_GAP_FRAMES + (next.end - next.start) <= MAX_CHUNK_FRAMES
    {
        let job = queue.remove(0);
        let at = used + PACK_GAP_FRAMES;
        used = at + (job.end - job.start);
        parts.push((job, at));
    }
    if parts.len() == 1 {
        return Window { parts, packed: None };
    }
    let n = mel::N_FRAMES;
    let mut packed = vec![0.0f32; parts[0].0.mel.len()];
    for (job, at) in &parts {
        let len = job.end - job.start;
        for m in 0..n_mels {
            packed[m * n + at..m * n + at + len].copy_from_slice(&job.mel[m * n..m * n + len]);
        }
    }
    Window { parts, packed: Some(packed) }
}

/// Shares the pieces of one window among its `parts` (`(start, end, window frame)`, frames),
/// moving their times (seconds from the window's start) onto the speech timeline. A window
/// of one part is only shifted. In a shared window each word goes to the part its middle
/// falls nearest (the gaps are split in half), a piece is cut where its words change part,
/// a piece without words goes by its start, and times are kept inside their part.
fn place(pieces: Vec<super::Piece>, parts: &[(usize, usize, usize)]) -> Vec<Vec<super::Piece>> {
    let fps = FRAMES_PER_SECOND as f64;
    let mut out: Vec<Vec<super::Piece>> = parts.iter().map(|_| Vec::new()).collect();
    if let [(start, _, at)] = parts {
        let shift = (*start as f64 - *at as f64) / fps;
        out[0] = pieces.into_iter().map(|p| shifted(p, shift, f64::NEG_INFINITY, f64::INFINITY)).collect();
        return out;
    }
    // Part `i` takes window times from the middle of the gap before it to that after it.
    let bounds: Vec<f64> = parts.windows(2).map(|w| (w[0].2 + (w[0].1 - w[0].0) + w[1].2) as f64 / 2.0 / fps).collect();
    let part_of = |t: f64| bounds.iter().filter(|&&b| b <= t).count();
    for p in pieces {
        let mut groups: Vec<(usize, super::Piece)> = Vec::new();
        if p.words.is_empty() {
            groups.push((part_of(p.start), p));
        } else {
            let (start, end, n) = (p.start, p.end, p.words.len());
            for (i, w) in p.words.into_iter().enumerate() {
                let part = part_of((w.start + w.end) / 2.0);
                match groups.last_mut() {
                    Some((last, g)) if *last == part => {
                        g.end = if i + 1 == n { end } else { w.end };
                        g.tokens.extend_from_slice(&w.tokens);
                        g.words.push(w);
                    }
                    _ => {
                        let first = groups.is_empty();
                        groups.push((
                            part,
                            super::Piece {
                                start: if first { start } else { w.start },
                                end: if i + 1 == n { end } else { w.end },
                                tokens: w.tokens.clone(),
                                words: vec![w],
                            },
                        ));
                    }
                }
            }
            if let [(_, only)] = groups.as_mut_slice() {
                // One part: the piece keeps its own tokens (timestamps included).
                only.tokens = p.tokens;
            }
        }
        for (part, piece) in groups {
            let (start, end, at) = parts[part];
            let (from, to) = (at as f64 / fps, (at + end - start) as f64 / fps);
            out[part].push(shifted(piece, (start as f64 - at as f64) / fps, from, to));
        }
    }
    out
}

/// `p` with its times and its words' clamped to `from..=to` and moved by `shift` seconds.
fn shifted(mut p: super::Piece, shift: f64, from: f64, to: f64) -> super::Piece {
    let at = |t: f64| t.clamp(from, to) + shift;
    p.start = at(p.start);
    p.end = at(p.end);
    for w in &mut p.words {
        w.start = at(w.start);
        w.end = at(w.end);
    }
    p
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
        Job { start, end: end.min(self.end), mel: out, again, alone: false }
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
        let max_prompt = self.model.dims.n_text_ctx / 2 - 1;

        let mut fresh = chunks.into_iter().peekable();
        let mut remainders: Vec<Job> = Vec::new(); // sorted by start
        // Decoded jobs' segments by start frame, until everything before them is decoded.
        let mut ready: BTreeMap<usize, Vec<Segment>> = BTreeMap::new();
        let mut segments: Vec<Segment> = Vec::new();
        let mut language: Option<(&'static str, f32)> = None;
        let mut setup: Option<(DecodeSetup, Vec<u32>)> = None; // and the prompt
        let mut last_speech_timestamp = 0.0f64;
        let mut done_s = 0.0f64;
        loop {
            check_cancelled(opts)?;
            let mut batch: Vec<Window> = Vec::new();
            while batch.len() < batch_size && !remainders.is_empty() {
                batch.push(pack(&mut remainders, n_mels));
            }
            while batch.len() < batch_size
                && let Some(chunk) = fresh.next()
            {
                let (mut features, _) = profile::time("mel", || windows.window(chunk.start))?;
                let len = chunk.len();
                for row in features.chunks_exact_mut(mel::N_FRAMES) {
                    row[len..].fill(0.0);
                }
                let job = Job { start: chunk.start, end: chunk.end, mel: features, again: false, alone: false };
                batch.push(Window::alone(job));
            }
            if batch.is_empty() {
                break;
            }
            profile::count("windows shared by stretches", batch.iter().filter(|w| w.parts.len() > 1).count() as u64);
            let mels: Vec<&[f32]> = batch.iter().map(|w| w.mel()).collect();
            let audios: Vec<AudioContext> = mels
                .chunks(ENCODER_GROUP)
                .flat_map(|group| profile::time("encode", || on_pool(|| self.model.encode_batch(group))))
                .collect();
            let (language, _) = *language.get_or_insert_with(|| match &plan {
                LanguagePlan::Fixed(l) => (*l, 1.0),
                LanguagePlan::Detect(among) => self.detect_language(&audios[0], among),
            });
            let (setup, prompt) = setup.get_or_insert_with(|| {
                let setup = self.decode_setup(language, opts);
                // Every chunk gets the same prompt: the glossary and the initial prompt, if any.
                let initial = self.initial_prompt_tokens(language, opts);
                let mut prompt = Vec::new();
                if !initial.is_empty() || !setup.hotwords.is_empty() {
                    prompt.push(s.sot_prev);
                    prompt.extend_from_slice(&setup.hotwords);
                    prompt.extend_from_slice(&initial[initial.len().saturating_sub(max_prompt)..]);
                }
                prompt.extend_from_slice(&setup.sot_sequence);
                (setup, prompt)
            });
            let dopts = &setup.dopts;
            let results = profile::time("decode window", || {
                let audios: Vec<&AudioContext> = audios.iter().collect();
                on_pool(|| decode::decode_batch(&self.model, &audios, s, dopts, &detok, prompt, &mut rng))
            });
            for ((window, audio), result) in batch.into_iter().zip(&audios).zip(results) {
                let shared = window.parts.len() > 1;
                if result.no_speech_prob > dopts.no_speech_threshold && result.avg_logprob < dopts.log_prob_threshold {
                    if shared {
                        // Silence for the window as a whole may not be for each of its parts.
                        remainders.extend(window.parts.into_iter().map(|(job, _)| Job { alone: true, ..job }));
                    }
                    continue;
                }
                let spans = window.spans();
                let (first, _, first_at) = spans[0];
                let size = spans.iter().map(|&(start, end, at)| at + end - start).max().unwrap_or(0);
                // Times from the window's start, then moved onto the speech timeline by `place`.
                let (pieces, _, _) = self.split_by_timestamps(&result.tokens, 0.0, 0, size);
                let mut pieces = pieces;
                if opts.word_timestamps {
                    let shift = (first as f64 - first_at as f64) / fps;
                    let last = profile::time("word timestamps", || {
                        on_pool(|| {
                            self.add_word_timestamps(
                                &mut pieces,
                                audio,
                                &setup.sot_sequence,
                                size,
                                0.0,
                                language,
                                last_speech_timestamp - shift,
                            )
                        })
                    });
                    if !shared && !window.parts[0].0.again {
                        last_speech_timestamp = last + shift;
                    }
                }
                for ((job, _), mut pieces) in window.parts.into_iter().zip(place(pieces, &spans)) {
                    if shared && pieces.is_empty() {
                        remainders.push(Job { alone: true, ..job });
                        continue;
                    }
                    if !job.again {
                        let again = self.left_behind(&job, &pieces, map, found, n_mels);
                        let stretches = again.iter().filter(|j| j.again).count() as u64;
                        profile::count("windows again (wordless stretch)", stretches);
                        profile::count("windows again (chunk's rest)", again.len() as u64 - stretches);
                        for stretch in again.iter().filter(|j| j.again) {
                            pieces = split_around(pieces, stretch.start as f64 / fps, stretch.end as f64 / fps);
                        }
                        remainders.extend(again);
                    }
                    let window_seek = (map.to_original(job.start as f64 / fps, false) * fps).round() as usize;
                    for p in pieces {
                        let key = ((p.start * fps).round() as usize).max(job.start);
                        let Some(mut segment) = self.segment(p, &result, window_seek) else { continue };
                        map.restore(&mut segment);
                        ready.entry(key).or_default().push(segment);
                    }
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

    /// The speech of `job` its decoding (`pieces`) left behind, as jobs to decode again: the
    /// rest of the chunk when the decoding ended a second or more before it, and each wordless
    /// stretch inside the decoded part that holds speech by the VAD. Nothing when the decoding
    /// gave no word at all (decoding the same features again would give the same).
    fn left_behind(
        &self,
        job: &Job,
        pieces: &[super::Piece],
        map: &TimeMap,
        found: &SpeechFound,
        n_mels: usize,
    ) -> Vec<Job> {
        let fps = FRAMES_PER_SECOND as f64;
        let spans = covered(pieces);
        let Some(decoded_end) = spans.iter().map(|c| c.1).max_by(f64::total_cmp) else {
            return Vec::new();
        };
        let mut jobs = Vec::new();
        let next = ((decoded_end * fps).round() as usize).max(job.start);
        let rest = next > job.start && next + REMAINDER_MIN_FRAMES <= job.end;
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::align::WordTiming;
    use crate::engine::Piece;

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
        let job = Job { start: 100, end: 2000, mel, again: false, alone: false };
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

    /// A job of frames `start..end` whose feature in mel row `m`, frame `f` is
    /// `1000·m + start + f` up to its end, zero after.
    fn job(start: usize, end: usize, n_mels: usize, alone: bool) -> Job {
        let mut mel = vec![0.0f32; n_mels * mel::N_FRAMES];
        for m in 0..n_mels {
            for f in 0..end - start {
                mel[m * mel::N_FRAMES + f] = (1000 * m + start + f) as f32;
            }
        }
        Job { start, end, mel, again: true, alone }
    }

    #[test]
    fn short_stretches_share_a_window_a_second_apart() {
        let n_mels = 2;
        // 5 + 1 + 8 + 1 + 15 s fill the first window exactly; 4 s more start the next.
        let mut queue = vec![
            job(100, 600, n_mels, false),
            job(900, 1700, n_mels, false),
            job(2000, 3500, n_mels, false),
            job(4000, 4400, n_mels, false),
        ];
        let window = pack(&mut queue, n_mels);
        assert_eq!(window.spans(), vec![(100, 600, 0), (900, 1700, 600), (2000, 3500, 1500)]);
        let mel = window.mel();
        let n = mel::N_FRAMES;
        assert_eq!((mel[0], mel[499], mel[500], mel[599]), (100.0, 599.0, 0.0, 0.0));
        assert_eq!((mel[600], mel[1399], mel[1400]), (900.0, 1699.0, 0.0));
        assert_eq!((mel[1500], mel[2999]), (2000.0, 3499.0));
        assert_eq!((mel[n + 600], mel[n + 2999]), (1900.0, 4499.0));
        // What is left, and a job that must be decoded alone, get windows of their own.
        queue.push(job(5000, 5100, n_mels, true));
        queue.push(job(6000, 6100, n_mels, false));
        assert_eq!(pack(&mut queue, n_mels).spans(), vec![(4000, 4400, 0)]);
        let alone = pack(&mut queue, n_mels);
        assert_eq!((alone.spans(), alone.packed.is_none()), (vec![(5000, 5100, 0)], true));
        assert_eq!(pack(&mut queue, n_mels).spans(), vec![(6000, 6100, 0)]);
    }

    fn word(text: &str, start: f64, end: f64, token: u32) -> WordTiming {
        WordTiming { word: text.into(), tokens: vec![token], start, end, probability: 0.9 }
    }

    #[test]
    fn words_go_back_to_the_stretch_they_were_heard_in() {
        // Two stretches: speech frames 1000..1300 at window frame 0, 5000..5500 at 400.
        let parts = [(1000, 1300, 0), (5000, 5500, 400)];
        let words =
            vec![word(" a", 0.5, 1.0, 1), word(" b", 2.0, 2.8, 2), word(" c", 4.5, 5.0, 3), word(" d", 6.0, 7.5, 4)];
        let spanning = Piece { start: 0.2, end: 9.5, tokens: vec![90, 1, 2, 3, 4, 91], words };
        let within = Piece { start: 7.6, end: 8.5, tokens: vec![92, 5, 93], words: vec![word(" e", 7.7, 8.4, 5)] };
        let placed = place(vec![spanning, within], &parts);
        let times = |ps: &[Piece]| ps.iter().map(|p| (p.start, p.end, p.tokens.clone())).collect::<Vec<_>>();
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        // Part 0: the first two words, 10 s on; part 1: the rest, 46 s on, kept inside 4..9 s.
        assert_eq!(placed[0].len(), 1);
        let (p0, p1) = (&placed[0][0], &placed[1][0]);
        assert!(close(p0.start, 10.2) && close(p0.end, 12.8), "{:?}", times(&placed[0]));
        assert_eq!(p0.tokens, vec![1, 2]);
        assert!(close(p1.start, 50.5) && close(p1.end, 55.0), "{:?}", times(&placed[1]));
        assert_eq!(p1.tokens, vec![3, 4]);
        assert!(close(p1.words[1].start, 52.0) && close(p1.words[1].end, 53.5));
        // A piece wholly in one part keeps its own tokens (timestamps too).
        assert_eq!(placed[1][1].tokens, vec![92, 5, 93]);
        assert!(close(placed[1][1].start, 53.6));
        // One part: times only shifted, nothing clamped.
        let alone = place(vec![Piece { start: 0.0, end: 31.0, tokens: vec![1], words: vec![] }], &[(700, 900, 0)]);
        assert!(close(alone[0][0].start, 7.0) && close(alone[0][0].end, 38.0));
    }

    #[test]
    fn batched_voice_detection_caps_spans_at_30_s() {
        let p = vad_params(&VadParams::default());
        assert_eq!(p, VadParams { max_speech_s: 30.0, ..VadParams::default() });
        let own = VadParams { min_silence_ms: 500, max_speech_s: 12.0, ..VadParams::default() };
        assert_eq!(vad_params(&own), own);
    }
}
