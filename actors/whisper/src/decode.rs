//! Decoding one 30 s window into tokens, as faster-whisper (CTranslate2) does by default.
//!
//! Beam search (5 beams, patience 1, length penalty 1) with the CTranslate2 bookkeeping
//! (2×beam candidates per step, finished beams replaced by the next live candidate), the
//! suppression lists from config.json, OpenAI's timestamp rules, the no-speech probability at
//! `<|startoftranscript|>`, and temperature fallback: when the result is too repetitive
//! (compression ratio > 2.4, or a run of four words three times: [`crate::repetition`]) or too
//! unlikely (average log-probability < −1), retry by
//! sampling `best_of` candidates at temperatures 0.2, 0.4, … 1.0 (or from a higher starting
//! temperature, see [`temperature_schedule`]).

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rand::Rng;
use rayon::prelude::*;
use scribe_kernels::log_sum_exp;

use crate::model::{AudioContext, Whisper};
use crate::repetition;
use crate::tokenizer::Specials;

/// Decoding settings; `Default` is faster-whisper's.
#[derive(Clone, Debug)]
pub struct DecodeOptions {
    pub beam_size: usize,
    pub best_of: usize,
    pub patience: f32,
    pub length_penalty: f32,
    pub temperatures: Vec<f32>,
    pub compression_ratio_threshold: f32,
    pub log_prob_threshold: f32,
    pub no_speech_threshold: f32,
    /// Latest allowed first timestamp, seconds.
    pub max_initial_timestamp: f32,
    /// Never generated (config.json `suppress_ids` plus task/special tokens).
    pub suppress: Vec<u32>,
    /// Not generated as the first token (config.json `suppress_ids_begin`: blank, end of text).
    pub suppress_begin: Vec<u32>,
    /// Tokens a decoding may generate at most (beyond the decoder's own half context): a
    /// budget for the audio's length, so that a decoder looping on a second of audio stops
    /// long before 224 tokens.
    pub max_tokens: usize,
    /// Set from outside to stop a decoding between two steps (a live partial a final
    /// pre-empts); what was decoded so far is returned and the caller discards it.
    pub cancel: Option<Arc<AtomicBool>>,
}

impl DecodeOptions {
    pub(crate) fn cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed))
    }
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            beam_size: 5,
            best_of: 5,
            patience: 1.0,
            length_penalty: 1.0,
            temperatures: vec![0.0, 0.2, 0.4, 0.6, 0.8, 1.0],
            compression_ratio_threshold: 2.4,
            log_prob_threshold: -1.0,
            no_speech_threshold: 0.6,
            max_initial_timestamp: 1.0,
            suppress: Vec::new(),
            suppress_begin: Vec::new(),
            max_tokens: usize::MAX,
            cancel: None,
        }
    }
}

/// The chosen decoding of one window.
#[derive(Clone, Debug)]
pub struct WindowResult {
    /// Generated tokens, timestamps included, end-of-text excluded.
    pub tokens: Vec<u32>,
    pub avg_logprob: f32,
    pub no_speech_prob: f32,
    /// The temperature this decoding was made at.
    pub temperature: f32,
    /// The highest temperature tried for the window: `temperature`, unless every temperature
    /// failed and a likelier earlier decoding was kept. faster-whisper drops the previous text
    /// from the next prompt on this one.
    pub last_temperature: f32,
    pub compression_ratio: f32,
    /// Some run of words occurs three times in the text ([`repetition::loops`]): a loop the
    /// compression ratio can miss in a short text, retried like a repetitive one.
    pub loops: bool,
    /// The decoding kept passed the checks (not too repetitive, not too unlikely, or silence).
    /// False when every temperature failed and the likeliest decoding was kept, as Whisper
    /// keeps it for a window; a stretch decoded a second time is dropped then.
    pub passed: bool,
}

/// Seconds per timestamp token step.
pub const TIME_PRECISION: f32 = 0.02;

/// openai-whisper's `temperature_increment_on_fallback`.
pub const TEMPERATURE_INCREMENT: f32 = 0.2;

/// The temperatures a window is decoded at, in order: `start`, then with `fallback`
/// `start + 0.2`, `start + 0.4`, … up to 1.0 inclusive (openai-whisper's
/// `np.arange(start, 1.0 + 1e-6, 0.2)`). `start` is clamped to 0..=1 (NaN = 0).
pub fn temperature_schedule(start: f32, fallback: bool) -> Vec<f32> {
    let start = if start.is_nan() { 0.0 } else { start.clamp(0.0, 1.0) } as f64;
    if !fallback {
        return vec![start as f32];
    }
    // In f64 and rounded to 1e-6, so that 0.0 gives exactly 0.2, 0.4, 0.6… as f32.
    (0..)
        .map(|i| start + TEMPERATURE_INCREMENT as f64 * i as f64)
        .take_while(|&t| t <= 1.0 + 1e-6)
        .map(|t| ((t * 1e6).round() / 1e6) as f32)
        .collect()
}

/// gzip-style compression ratio of the text: high for repetitive loops.
pub fn compression_ratio(text: &str) -> f32 {
    let bytes = text.as_bytes();
    if bytes.is_empty() {
        return 0.0;
    }
    let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes).expect("writing to memory");
    let compressed = enc.finish().expect("writing to memory");
    bytes.len() as f32 / compressed.len() as f32
}

/// Everything the decoder needs about one window and one prompt.
pub struct Decoder<'a> {
    pub model: &'a Whisper,
    pub audio: &'a AudioContext,
    pub specials: &'a Specials,
    pub opts: &'a DecodeOptions,
    /// Turns tokens into text (for the compression ratio).
    pub detokenize: &'a (dyn Fn(&[u32]) -> String + Sync),
}

/// One unfinished sequence in the search.
#[derive(Clone)]
struct Hyp {
    tokens: Vec<u32>,
    score: f32,
}

struct Finished {
    tokens: Vec<u32>,
    score: f32,
}

/// Where the generated text starts in a prompt: what is fed before the search, the search's
/// first input, and whether timestamps are on.
struct PromptParts<'p> {
    prefix: &'p [u32],
    start: u32,
    sot_index: usize,
    with_timestamps: bool,
    max_len: usize,
}

impl<'p> PromptParts<'p> {
    fn new(prompt: &'p [u32], s: &Specials, n_ctx: usize) -> PromptParts<'p> {
        let sot_index = prompt.iter().position(|&t| t == s.sot).expect("prompt contains <|startoftranscript|>");
        let mut prompt_len = sot_index;
        while prompt_len < prompt.len() && prompt[prompt_len] >= s.sot && prompt[prompt_len] <= s.no_timestamps {
            prompt_len += 1;
        }
        let prefix = &prompt[..prompt_len - 1];
        let start = prompt[prompt_len - 1];
        PromptParts {
            prefix,
            start,
            sot_index,
            with_timestamps: start != s.no_timestamps,
            max_len: (n_ctx / 2).min(n_ctx - prefix.len()),
        }
    }

    /// The row of the prefix whose logits give the no-speech probability, if it is there.
    fn sot_rows(&self) -> Vec<usize> {
        if self.sot_index < self.prefix.len() { vec![self.sot_index] } else { Vec::new() }
    }

    /// The rules of a decoding over `positions` encoder positions (20 ms each, one per
    /// timestamp step).
    fn rules<'a>(&self, specials: &'a Specials, opts: &'a DecodeOptions, positions: usize) -> Rules<'a> {
        Rules {
            specials,
            with_timestamps: self.with_timestamps,
            max_initial: specials.timestamp_begin + (opts.max_initial_timestamp / TIME_PRECISION).round() as u32,
            last_timestamp: specials.timestamp_begin + positions as u32,
            opts,
        }
    }
}

/// The beam search of one window, advanced one step at a time, so that several windows can
/// share each decoder step ([`decode_batch`]).
struct Beam {
    alive: Vec<Hyp>,
    finished: Vec<Finished>,
    no_speech: Option<f32>,
}

impl Beam {
    fn new() -> Beam {
        Beam { alive: vec![Hyp { tokens: Vec::new(), score: 0.0 }], finished: Vec::new(), no_speech: None }
    }

    /// The last token of every live hypothesis: the next step's input rows.
    fn inputs(&self) -> impl Iterator<Item = u32> + '_ {
        self.alive.iter().map(|h| *h.tokens.last().expect("non-empty"))
    }

    /// One step on the logits of the live hypotheses (`alive.len()` rows). Returns, for each
    /// hypothesis of the next step, the row it continues (to reorder the cache), or `None`
    /// when the search is over.
    fn step(
        &mut self,
        step: usize,
        logits: &mut [f32],
        rules: &Rules,
        opts: &DecodeOptions,
        max_len: usize,
    ) -> Option<Vec<usize>> {
        let beam = opts.beam_size.max(1);
        let n_cand = 2 * beam;
        let max_finished = ((beam as f32) * opts.patience).round().max(1.0) as usize;
        let eot = rules.specials.eot;
        let vocab = logits.len() / self.alive.len();
        if step == 0 {
            self.no_speech = Some(softmax_at(&logits[..vocab], rules.specials.no_speech as usize));
        }
        // Per-row log-probabilities plus the beam's score, then the best candidates overall.
        // Rows are independent: one rayon task each (a few passes over 51865 logits).
        let alive = &self.alive;
        let mut cands: Vec<(f32, usize, u32)> = crate::profile::time("beam rules+topk", || {
            logits
                .par_chunks_mut(vocab)
                .zip(alive)
                .enumerate()
                .flat_map_iter(|(row, (lp, hyp))| {
                    let lse = rules.apply(step, &hyp.tokens, lp);
                    log_softmax(lp, lse);
                    top_k(lp, n_cand).into_iter().map(move |(tok, score)| (score + hyp.score, row, tok))
                })
                .collect()
        });
        cands.sort_by(|a, b| b.0.total_cmp(&a.0));
        cands.truncate(n_cand);
        let last_step = step + 1 == max_len;
        let mut next: Vec<Hyp> = Vec::with_capacity(beam);
        let mut origins = Vec::with_capacity(beam);
        let mut secondary = beam;
        for k in 0..beam.min(cands.len()) {
            let (score, row, tok) = cands[k];
            let mut chosen = k;
            if tok == eot || last_step {
                let mut tokens = self.alive[row].tokens.clone();
                if tok != eot {
                    tokens.push(tok);
                }
                self.finished.push(Finished { tokens, score });
                if let Some(j) = (secondary..cands.len()).find(|&j| cands[j].2 != eot) {
                    chosen = j;
                    secondary = j + 1;
                }
            }
            let (score, row, tok) = if chosen == k { (score, row, tok) } else { cands[chosen] };
            let mut tokens = self.alive[row].tokens.clone();
            tokens.push(tok);
            next.push(Hyp { tokens, score });
            origins.push(row);
        }
        if last_step || self.finished.len() >= max_finished {
            return None;
        }
        self.alive = next;
        Some(origins)
    }
}

impl Decoder<'_> {
    /// Decodes with temperature fallback, as faster-whisper's `generate_with_fallback`.
    pub fn decode_with_fallback(&self, prompt: &[u32], rng: &mut impl Rng) -> WindowResult {
        self.fallback_from(prompt, None, rng)
    }

    /// [`Decoder::decode_with_fallback`], the first temperature's result given when it is
    /// already known (decoded with other windows by [`beam_search_batch`]).
    pub fn fallback_from(&self, prompt: &[u32], first: Option<WindowResult>, rng: &mut impl Rng) -> WindowResult {
        let o = self.opts;
        let mut first = first;
        let mut all: Vec<WindowResult> = Vec::new();
        let mut below_cr: Vec<usize> = Vec::new();
        let mut last_t = 0.0;
        for &t in &o.temperatures {
            if o.cancelled() && !all.is_empty() {
                break;
            }
            last_t = t;
            let r = match first.take() {
                Some(r) => r,
                None => self.generate(prompt, t, rng),
            };
            let too_repetitive = r.compression_ratio > o.compression_ratio_threshold || r.loops;
            if !too_repetitive {
                below_cr.push(all.len());
            }
            let too_unlikely = r.avg_logprob < o.log_prob_threshold;
            let silence = r.no_speech_prob > o.no_speech_threshold && too_unlikely;
            let done = silence || !(too_repetitive || too_unlikely);
            all.push(r);
            if done {
                return all.pop().expect("just pushed");
            }
        }
        // Every temperature failed: keep the most likely result, preferring non-repetitive ones.
        // It keeps the temperature it was made at; `last_temperature` says how far the search went.
        let pool: Vec<usize> = if below_cr.is_empty() { (0..all.len()).collect() } else { below_cr };
        let best = pool
            .into_iter()
            .max_by(|&a, &b| all[a].avg_logprob.total_cmp(&all[b].avg_logprob))
            .expect("at least one temperature");
        let mut r = all.swap_remove(best);
        r.last_temperature = last_t;
        r.passed = false;
        r
    }

    /// One decoding at one temperature: beam search at 0, sampling `best_of` candidates above.
    pub fn generate(&self, prompt: &[u32], temperature: f32, rng: &mut impl Rng) -> WindowResult {
        let s = self.specials;
        let mut parts = PromptParts::new(prompt, s, self.model.dims.n_text_ctx);
        parts.max_len = parts.max_len.min(self.opts.max_tokens);
        let mut cache = self.model.new_cache(1);
        let mut no_speech_prob = None;
        if !parts.prefix.is_empty() {
            let rows = parts.sot_rows();
            let logits = self.model.decode(self.audio, &mut cache, parts.prefix, &rows);
            if !rows.is_empty() {
                no_speech_prob = Some(softmax_at(&logits, s.no_speech as usize));
            }
        }
        let rules = parts.rules(s, self.opts, self.audio.positions());
        let (finished, nsp) = if temperature == 0.0 {
            self.beam_search(&mut cache, parts.start, parts.max_len, &rules)
        } else {
            self.sample(&mut cache, parts.start, parts.max_len, &rules, temperature, rng)
        };
        finish(finished, no_speech_prob.or(nsp).unwrap_or(0.0), temperature, s, self.opts, self.detokenize)
    }

    fn beam_search(
        &self,
        cache: &mut crate::model::KvCache,
        start: u32,
        max_len: usize,
        rules: &Rules,
    ) -> (Vec<Finished>, Option<f32>) {
        let mut beam = Beam::new();
        let mut inputs = vec![start];
        for step in 0..max_len {
            if self.opts.cancelled() {
                break;
            }
            let mut logits =
                crate::profile::time("decoder step", || self.model.decode(self.audio, cache, &inputs, &[0]));
            let Some(origins) = beam.step(step, &mut logits, rules, self.opts, max_len) else {
                break;
            };
            inputs = beam.inputs().collect();
            crate::profile::time("kv select", || cache.select(&origins));
        }
        (beam.finished, beam.no_speech)
    }

    fn sample(
        &self,
        cache: &mut crate::model::KvCache,
        start: u32,
        max_len: usize,
        rules: &Rules,
        temperature: f32,
        rng: &mut impl Rng,
    ) -> (Vec<Finished>, Option<f32>) {
        let n = self.opts.best_of.max(1);
        let eot = self.specials.eot;
        cache.select(&vec![0; n]);
        let mut alive: Vec<Hyp> = vec![Hyp { tokens: Vec::new(), score: 0.0 }; n];
        let mut inputs = vec![start; n];
        let mut finished = Vec::new();
        let mut no_speech = None;
        for step in 0..max_len {
            if self.opts.cancelled() {
                break;
            }
            let mut logits = self.model.decode(self.audio, cache, &inputs, &[0]);
            let vocab = logits.len() / alive.len();
            if step == 0 {
                no_speech = Some(softmax_at(&logits[..vocab], self.specials.no_speech as usize));
            }
            let last_step = step + 1 == max_len;
            let mut keep = Vec::new();
            let mut next = Vec::new();
            for (row, mut hyp) in alive.into_iter().enumerate() {
                let lp = &mut logits[row * vocab..(row + 1) * vocab];
                let lse = rules.apply(step, &hyp.tokens, lp);
                let tok = sample_token(lp, temperature, rng);
                log_softmax(lp, lse);
                hyp.score += lp[tok as usize];
                if tok == eot || last_step {
                    if tok != eot {
                        hyp.tokens.push(tok);
                    }
                    finished.push(Finished { tokens: hyp.tokens, score: hyp.score });
                } else {
                    hyp.tokens.push(tok);
                    keep.push(row);
                    next.push(hyp);
                }
            }
            if next.is_empty() {
                break;
            }
            if keep.len() != cache.batch() {
                cache.select(&keep);
            }
            inputs = next.iter().map(|h| *h.tokens.last().expect("non-empty")).collect();
            alive = next;
        }
        (finished, no_speech)
    }
}

/// The best finished hypothesis (by length-normalised score) as a window's result.
fn finish(
    finished: Vec<Finished>,
    no_speech_prob: f32,
    temperature: f32,
    specials: &Specials,
    opts: &DecodeOptions,
    detokenize: &(dyn Fn(&[u32]) -> String + Sync),
) -> WindowResult {
    let lp = opts.length_penalty;
    let best = finished
        .into_iter()
        .max_by(|a, b| {
            let norm = |f: &Finished| f.score / (f.tokens.len().max(1) as f32).powf(lp);
            norm(a).total_cmp(&norm(b))
        })
        // Only a cancelled search finishes none; its result is thrown away.
        .unwrap_or(Finished { tokens: Vec::new(), score: 0.0 });
    let avg_logprob = best.score / (best.tokens.len() + 1) as f32;
    let text = detokenize(&best.tokens);
    WindowResult {
        compression_ratio: compression_ratio(text.trim()),
        loops: loops_in_a_segment(&best.tokens, specials.timestamp_begin, detokenize),
        passed: true,
        tokens: best.tokens,
        avg_logprob,
        no_speech_prob,
        temperature,
        last_temperature: temperature,
    }
}

/// True when the text between two timestamps of `tokens` loops ([`repetition::loops`]): the
/// decoder repeating itself while its timestamps stand still. The same words in segments of
/// their own, each at its own time, are a speaker repeating them (CHILDES's father asking three
/// times for a kiss, which Whisper hears as "You want to make it?" three times).
fn loops_in_a_segment(tokens: &[u32], timestamp_begin: u32, detokenize: &(dyn Fn(&[u32]) -> String + Sync)) -> bool {
    tokens
        .split(|&t| t >= timestamp_begin)
        .filter(|text| text.len() >= repetition::N)
        .any(|text| repetition::loops(&repetition::words(&detokenize(text))))
}

/// Decodes several windows with the same prompt, as [`Decoder::decode_with_fallback`] decodes
/// each: the first temperature's beam searches run side by side ([`beam_search_batch`]); a
/// window that needs a higher temperature is then retried on its own. Results are in the order
/// of `audios`.
pub fn decode_batch(
    model: &Whisper,
    audios: &[&AudioContext],
    specials: &Specials,
    opts: &DecodeOptions,
    detokenize: &(dyn Fn(&[u32]) -> String + Sync),
    prompt: &[u32],
    rng: &mut impl Rng,
) -> Vec<WindowResult> {
    let first: Vec<Option<WindowResult>> = if opts.temperatures.first() == Some(&0.0) && audios.len() > 1 {
        let each = vec![opts; audios.len()];
        beam_search_batch(model, audios, &each, specials, detokenize, prompt).into_iter().map(Some).collect()
    } else {
        vec![None; audios.len()]
    };
    audios
        .iter()
        .copied()
        .zip(first)
        .map(|(audio, first)| {
            let decoder = Decoder { model, audio, specials, opts, detokenize };
            decoder.fallback_from(prompt, first, rng)
        })
        .collect()
}

/// Beam search at temperature 0 of several windows in lockstep, all after the same `prompt`:
/// every decoder step takes the live hypotheses of all windows as one batch (one read of the
/// weights per step, each row attending to its own window, which may have its own length).
/// Each window keeps its own options (`opts[i]`: beam size, token budget, suppression, and a
/// cancel flag that takes it out of the batch) and its own timestamp rules. The checks
/// (`passed`) are not applied: [`Decoder::fallback_from`] applies them.
pub fn beam_search_batch(
    model: &Whisper,
    audios: &[&AudioContext],
    opts: &[&DecodeOptions],
    specials: &Specials,
    detokenize: &(dyn Fn(&[u32]) -> String + Sync),
    prompt: &[u32],
) -> Vec<WindowResult> {
    let n = audios.len();
    assert_eq!(opts.len(), n, "options for every window");
    let parts = PromptParts::new(prompt, specials, model.dims.n_text_ctx);
    let max_len: Vec<usize> = opts.iter().map(|o| parts.max_len.min(o.max_tokens)).collect();
    let rules: Vec<Rules> = (0..n).map(|w| parts.rules(specials, opts[w], audios[w].positions())).collect();
    let mut cache = model.new_cache(n);
    let mut row_audio: Vec<usize> = (0..n).collect();
    let mut prefix_no_speech = vec![None; n];
    if !parts.prefix.is_empty() {
        let rows = parts.sot_rows();
        let tokens: Vec<u32> = (0..n).flat_map(|_| parts.prefix.iter().copied()).collect();
        let logits = model.decode_multi(audios, &row_audio, &mut cache, &tokens, &rows);
        if !rows.is_empty() {
            let vocab = logits.len() / n;
            for (w, l) in logits.chunks_exact(vocab).enumerate() {
                prefix_no_speech[w] = Some(softmax_at(l, specials.no_speech as usize));
            }
        }
    }
    let mut beams: Vec<Beam> = (0..n).map(|_| Beam::new()).collect();
    let mut live: Vec<usize> = (0..n).collect(); // windows still searching, in row order
    let mut inputs = vec![parts.start; n];
    for step in 0..max_len.iter().copied().max().unwrap_or(0) {
        // A cancelled window leaves the batch with what it has (its caller discards it).
        if live.iter().any(|&w| opts[w].cancelled()) {
            let (mut keep, mut next_live, mut next_rows, mut next_inputs) =
                (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            let mut row = 0;
            for &w in &live {
                let rows = beams[w].alive.len();
                if !opts[w].cancelled() {
                    keep.extend(row..row + rows);
                    next_rows.extend(std::iter::repeat_n(w, rows));
                    next_inputs.extend_from_slice(&inputs[row..row + rows]);
                    next_live.push(w);
                }
                row += rows;
            }
            if next_live.is_empty() {
                break;
            }
            cache.select(&keep);
            (live, row_audio, inputs) = (next_live, next_rows, next_inputs);
        }
        let mut logits =
            crate::profile::time("decoder step", || model.decode_multi(audios, &row_audio, &mut cache, &inputs, &[0]));
        let vocab = logits.len() / row_audio.len();
        // Each live window's rows, side by side: one slice each, stepped in parallel.
        let mut slices: Vec<(usize, usize, &mut Beam, &mut [f32])> = Vec::with_capacity(live.len());
        let mut rest: &mut [f32] = &mut logits;
        let mut beam_refs: Vec<Option<&mut Beam>> = beams.iter_mut().map(Some).collect();
        let mut first_row = 0;
        for &w in &live {
            let beam = beam_refs[w].take().expect("each window once");
            let (mine, tail) = std::mem::take(&mut rest).split_at_mut(beam.alive.len() * vocab);
            rest = tail;
            let rows = mine.len() / vocab;
            slices.push((w, first_row, beam, mine));
            first_row += rows;
        }
        let steps: Vec<Option<Vec<usize>>> = slices
            .into_par_iter()
            .map(|(w, first_row, beam, lg)| {
                beam.step(step, lg, &rules[w], opts[w], max_len[w])
                    .map(|o| o.into_iter().map(|r| r + first_row).collect())
            })
            .collect();
        let mut origins = Vec::new();
        let (mut next_live, mut next_rows, mut next_inputs) = (Vec::new(), Vec::new(), Vec::new());
        for (&w, o) in live.iter().zip(steps) {
            if let Some(o) = o {
                next_rows.extend(std::iter::repeat_n(w, o.len()));
                next_inputs.extend(beams[w].inputs());
                origins.extend(o);
                next_live.push(w);
            }
        }
        if next_live.is_empty() {
            break;
        }
        crate::profile::time("kv select", || cache.select(&origins));
        (live, row_audio, inputs) = (next_live, next_rows, next_inputs);
    }
    beams
        .into_iter()
        .zip(prefix_no_speech)
        .zip(opts)
        .map(|((beam, nsp), opts)| {
            finish(beam.finished, nsp.or(beam.no_speech).unwrap_or(0.0), 0.0, specials, opts, detokenize)
        })
        .collect()
}

/// Logit filters applied before every step: suppression lists and Whisper's timestamp rules.
struct Rules<'a> {
    specials: &'a Specials,
    with_timestamps: bool,
    max_initial: u32,
    /// The timestamp of the encoded audio's end: later ones are never generated (a window
    /// fitted to its speech has no audio after it; a whole window's is the last timestamp).
    last_timestamp: u32,
    opts: &'a DecodeOptions,
}

impl Rules<'_> {
    /// Masks `logits` in place; returns their log-sum-exp when it was computed on the way.
    fn apply(&self, step: usize, generated: &[u32], logits: &mut [f32]) -> Option<f32> {
        let s = self.specials;
        let ninf = f32::NEG_INFINITY;
        for &t in &self.opts.suppress {
            if let Some(x) = logits.get_mut(t as usize) {
                *x = ninf;
            }
        }
        if step == 0 {
            for &t in &self.opts.suppress_begin {
                if let Some(x) = logits.get_mut(t as usize) {
                    *x = ninf;
                }
            }
        }
        if !self.with_timestamps {
            return None;
        }
        let ts = s.timestamp_begin as usize;
        let eot = s.eot as usize;
        logits[s.no_timestamps as usize] = ninf;
        let after_audio = (self.last_timestamp as usize + 1).min(logits.len());
        logits[after_audio..].fill(ninf);
        let mut check_prob = false;
        if step == 0 {
            // The first token is a timestamp, and not later than max_initial_timestamp.
            logits[..ts].fill(ninf);
            let from = (self.max_initial as usize + 1).min(logits.len());
            logits[from..].fill(ninf);
        } else {
            let last = generated[step - 1];
            if last >= s.timestamp_begin {
                let penultimate = if step >= 2 { generated[step - 2] } else { last };
                if penultimate >= s.timestamp_begin {
                    // Two timestamps in a row close a segment: text must follow.
                    logits[ts..].fill(ninf);
                } else {
                    // An opening timestamp must be followed by text... or a closing one / EOT.
                    logits[..eot].fill(ninf);
                    check_prob = true;
                }
            } else {
                check_prob = true;
            }
            // Timestamps never go backwards.
            if let Some(&prev) = generated[..step].iter().rev().find(|&&t| t >= s.timestamp_begin) {
                logits[ts..prev as usize].fill(ninf);
            }
        }
        if check_prob {
            // If all timestamps together are likelier than any single text token, emit a timestamp.
            let total = log_sum_exp(logits);
            let ts_total = log_sum_exp(&logits[ts..]);
            let max_text = logits[..ts].iter().copied().fold(ninf, f32::max) - total;
            if ts_total - total > max_text {
                logits[..ts].fill(ninf);
                return Some(ts_total); // the masked entries add exact zeros to the sum
            }
            return Some(total);
        }
        None
    }
}

/// `x - logsumexp(x)` in place; `lse` when the caller already has it.
pub(crate) fn log_softmax(x: &mut [f32], lse: Option<f32>) {
    let lse = lse.unwrap_or_else(|| log_sum_exp(x));
    for v in x {
        *v -= lse;
    }
}

fn softmax_at(x: &[f32], i: usize) -> f32 {
    let m = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let sum: f32 = x.iter().map(|v| (v - m).exp()).sum();
    (x[i] - m).exp() / sum
}

/// The `k` largest entries as `(index, value)`, best first.
fn top_k(x: &[f32], k: usize) -> Vec<(u32, f32)> {
    let mut best: Vec<(u32, f32)> = Vec::with_capacity(k + 1);
    for (i, &v) in x.iter().enumerate() {
        if best.len() < k || v > best[best.len() - 1].1 {
            let pos = best.partition_point(|&(_, b)| b >= v);
            best.insert(pos, (i as u32, v));
            best.truncate(k);
        }
    }
    best
}

/// Draws a token from softmax(logits / temperature).
fn sample_token(logits: &[f32], temperature: f32, rng: &mut impl Rng) -> u32 {
    let m = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let weights: Vec<f32> = logits.iter().map(|&v| ((v - m) / temperature).exp()).collect();
    let total: f32 = weights.iter().sum();
    let mut r = rng.random::<f32>() * total;
    for (i, w) in weights.iter().enumerate() {
        r -= w;
        if r <= 0.0 && *w > 0.0 {
            return i as u32;
        }
    }
    weights.iter().rposition(|&w| w > 0.0).unwrap_or(0) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_k_is_sorted_and_complete() {
        let x = [0.1, 5.0, -1.0, 3.0, 5.0, 2.0];
        assert_eq!(top_k(&x, 3), vec![(1, 5.0), (4, 5.0), (3, 3.0)]);
    }

    #[test]
    fn temperatures_go_up_by_a_fifth_to_one() {
        assert_eq!(temperature_schedule(0.0, true), DecodeOptions::default().temperatures);
        assert_eq!(temperature_schedule(0.0, true), vec![0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
        assert_eq!(temperature_schedule(0.0, false), vec![0.0]);
        assert_eq!(temperature_schedule(0.8, true), vec![0.8, 1.0]);
        assert_eq!(temperature_schedule(0.8, false), vec![0.8]);
        assert_eq!(temperature_schedule(0.3, true), vec![0.3, 0.5, 0.7, 0.9]);
        assert_eq!(temperature_schedule(1.0, true), vec![1.0]);
        assert_eq!(temperature_schedule(-1.0, true).len(), 6);
        assert_eq!(temperature_schedule(f32::NAN, false), vec![0.0]);
    }

    #[test]
    fn repetitive_text_compresses_well() {
        let normal = "And so my fellow Americans, ask not what your country can do for you.";
        let looped = "ask not ".repeat(40);
        assert!(compression_ratio(normal) < 2.4);
        assert!(compression_ratio(&looped) > 2.4);
    }
}
