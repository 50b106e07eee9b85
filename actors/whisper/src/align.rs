//! Word timestamps from cross-attention, as faster-whisper's `word_timestamps=True`.
//!
//! The decoder is run once more over `[sot…, <|notimestamps|>, text…, <|endoftext|>]`; the raw
//! cross-attention scores of the alignment heads (config.json) are cropped to the audio
//! actually in the window, soft-maxed over frames, z-normalised per head, median-filtered
//! (width 7) and averaged. Dynamic time warping through that matrix maps each token to the
//! frame where it starts (20 ms per encoder frame). Tokens are grouped into words, punctuation
//! is merged into its neighbour, and each word gets the mean probability of its tokens.

use scribe_kernels::{log_sum_exp, softmax};

use crate::model::{AudioContext, Whisper};
use crate::tokenizer::WhisperTokenizer;

/// Seconds per encoder frame.
const SECONDS_PER_FRAME: f64 = 0.02;
const MEDIAN_WIDTH: usize = 7;
pub const PREPEND_PUNCTUATION: &str = "\"'“¿([{-";
pub const APPEND_PUNCTUATION: &str = "\"'.。,，!！?？:：”)]}、";

/// One word with times relative to the window start.
#[derive(Clone, Debug)]
pub struct WordTiming {
    pub word: String,
    pub tokens: Vec<u32>,
    pub start: f64,
    pub end: f64,
    pub probability: f32,
}

/// Aligns `text_tokens` (text only, no timestamps) against one encoded window holding
/// `num_frames` mel frames of real audio.
#[allow(clippy::too_many_arguments)]
pub fn find_alignment(
    model: &Whisper,
    audio: &AudioContext,
    tokenizer: &WhisperTokenizer,
    sot_sequence: &[u32],
    text_tokens: &[u32],
    num_frames: usize,
    heads: &[(usize, usize)],
    language: &str,
) -> Vec<WordTiming> {
    if text_tokens.is_empty() || heads.is_empty() {
        return Vec::new();
    }
    let s = &tokenizer.specials;
    let mut tokens = sot_sequence.to_vec();
    tokens.push(s.no_timestamps);
    tokens.extend_from_slice(text_tokens);
    tokens.push(s.eot);
    let scores = model.alignment_scores(audio, &tokens, heads);
    let n_tok = tokens.len();
    let n_ctx = audio.positions();
    let vocab = scores.logits.len() / n_tok;
    let offset = sot_sequence.len();

    // Probability of each text token given the ones before it, over text tokens only.
    let probs: Vec<f32> = (0..text_tokens.len())
        .map(|t| {
            let row = &scores.logits[(offset + t) * vocab..(offset + t) * vocab + s.eot as usize];
            (row[text_tokens[t] as usize] - log_sum_exp(row)).exp()
        })
        .collect();

    // Attention weights: crop, softmax over frames, z-normalise over tokens, median filter.
    let frames = (num_frames / 2).clamp(1, n_ctx);
    let mut mean = vec![0.0f32; n_tok * frames];
    for h in 0..scores.n_heads {
        let mut w = vec![0.0f32; n_tok * frames];
        for t in 0..n_tok {
            let dst = &mut w[t * frames..(t + 1) * frames];
            dst.copy_from_slice(&scores.qk[(h * n_tok + t) * n_ctx..(h * n_tok + t) * n_ctx + frames]);
            softmax(dst);
        }
        for f in 0..frames {
            let col = (0..n_tok).map(|t| w[t * frames + f]);
            let mu = col.clone().sum::<f32>() / n_tok as f32;
            let var = col.map(|x| (x - mu) * (x - mu)).sum::<f32>() / n_tok as f32;
            let sd = var.sqrt().max(1e-12);
            for t in 0..n_tok {
                w[t * frames + f] = (w[t * frames + f] - mu) / sd;
            }
        }
        for t in 0..n_tok {
            let filtered = median_filter(&w[t * frames..(t + 1) * frames]);
            for (m, x) in mean[t * frames..(t + 1) * frames].iter_mut().zip(filtered) {
                *m += x / scores.n_heads as f32;
            }
        }
    }
    // Rows from <|notimestamps|> up to the last text token: each predicts the next token.
    let rows = text_tokens.len() + 1;
    let matrix: Vec<f32> = mean[offset * frames..(offset + rows) * frames].iter().map(|x| -x).collect();
    let (text_idx, time_idx) = dtw(&matrix, rows, frames);
    let mut jump_times = Vec::new();
    for i in 0..text_idx.len() {
        if i == 0 || text_idx[i] != text_idx[i - 1] {
            jump_times.push(time_idx[i] as f64 * SECONDS_PER_FRAME);
        }
    }

    let mut with_eot = text_tokens.to_vec();
    with_eot.push(s.eot);
    let words = tokenizer.split_words(&with_eot, language);
    if words.len() <= 1 {
        return Vec::new();
    }
    let mut boundaries = vec![0usize];
    for (_, toks) in &words[..words.len() - 1] {
        boundaries.push(boundaries.last().expect("non-empty") + toks.len());
    }
    let mut out = Vec::new();
    for (i, (word, toks)) in words.into_iter().enumerate().take(boundaries.len() - 1) {
        let (a, b) = (boundaries[i], boundaries[i + 1]);
        let at = |k: usize| jump_times.get(k).or(jump_times.last()).copied().unwrap_or(0.0);
        let p = &probs[a.min(probs.len())..b.min(probs.len())];
        out.push(WordTiming {
            word,
            tokens: toks,
            start: at(a),
            end: at(b),
            probability: if p.is_empty() { 0.0 } else { p.iter().sum::<f32>() / p.len() as f32 },
        });
    }
    out
}

/// Median over a sliding window of [`MEDIAN_WIDTH`] with reflect padding at the edges (as
/// OpenAI's `median_filter`).
fn median_filter(x: &[f32]) -> Vec<f32> {
    const PAD: usize = MEDIAN_WIDTH / 2;
    let n = x.len();
    if n <= PAD {
        return x.to_vec();
    }
    let head = (1..=PAD).rev().map(|i| x[i]);
    let tail = (1..=PAD).map(|i| x[n - 1 - i]);
    let padded: Vec<f32> = head.chain(x.iter().copied()).chain(tail).collect();
    padded.windows(MEDIAN_WIDTH).map(|w| median7(w.try_into().expect("window of 7"))).collect()
}

/// The median of 7 values by an optimal sorting network (16 compare-exchanges, no branches;
/// several times faster than sorting each window).
fn median7(mut v: [f32; 7]) -> f32 {
    const PAIRS: [(usize, usize); 16] = [
        (0, 6),
        (2, 3),
        (4, 5),
        (0, 2),
        (1, 4),
        (3, 6),
        (0, 1),
        (2, 5),
        (3, 4),
        (1, 2),
        (4, 6),
        (2, 3),
        (4, 5),
        (1, 2),
        (3, 4),
        (5, 6),
    ];
    for (a, b) in PAIRS {
        let (lo, hi) = (v[a].min(v[b]), v[a].max(v[b]));
        v[a] = lo;
        v[b] = hi;
    }
    v[3]
}

/// Dynamic time warping through a `[n, m]` cost matrix; returns the path as
/// (row indices, column indices), as OpenAI's `dtw_cpu`.
pub fn dtw(cost_in: &[f32], n: usize, m: usize) -> (Vec<usize>, Vec<usize>) {
    let w = m + 1;
    let mut cost = vec![f32::INFINITY; (n + 1) * w];
    let mut trace = vec![-1i8; (n + 1) * w];
    cost[0] = 0.0;
    for j in 1..=m {
        for i in 1..=n {
            let c0 = cost[(i - 1) * w + j - 1];
            let c1 = cost[(i - 1) * w + j];
            let c2 = cost[i * w + j - 1];
            let (c, t) = if c0 < c1 && c0 < c2 {
                (c0, 0)
            } else if c1 < c0 && c1 < c2 {
                (c1, 1)
            } else {
                (c2, 2)
            };
            cost[i * w + j] = cost_in[(i - 1) * m + j - 1] + c;
            trace[i * w + j] = t;
        }
    }
    let (mut i, mut j) = (n, m);
    let (mut rows, mut cols) = (Vec::new(), Vec::new());
    while i > 0 || j > 0 {
        rows.push(i.wrapping_sub(1));
        cols.push(j.wrapping_sub(1));
        let t = if i == 0 {
            2
        } else if j == 0 {
            1
        } else {
            trace[i * w + j]
        };
        match t {
            0 => {
                i -= 1;
                j -= 1;
            }
            1 => i -= 1,
            _ => j -= 1,
        }
    }
    // The path's first step can leave the matrix (index -1 in OpenAI's code); drop it.
    let keep: Vec<usize> = (0..rows.len()).filter(|&k| rows[k] < n && cols[k] < m).collect();
    let rows: Vec<usize> = keep.iter().rev().map(|&k| rows[k]).collect();
    let cols: Vec<usize> = keep.iter().rev().map(|&k| cols[k]).collect();
    (rows, cols)
}

/// Merges leading punctuation into the following word and trailing punctuation into the
/// preceding one (the absorbed entry keeps an empty word).
pub fn merge_punctuations(words: &mut [WordTiming]) {
    if words.len() < 2 {
        return;
    }
    let (mut i, mut j) = (words.len() as isize - 2, words.len() - 1);
    while i >= 0 {
        let iu = i as usize;
        let prev = &words[iu];
        if prev.word.starts_with(' ') && PREPEND_PUNCTUATION.contains(prev.word.trim()) && !prev.word.trim().is_empty()
        {
            let (word, tokens) = (std::mem::take(&mut words[iu].word), std::mem::take(&mut words[iu].tokens));
            words[j].word = word + &words[j].word;
            words[j].tokens.splice(0..0, tokens);
        } else {
            j = iu;
        }
        i -= 1;
    }
    let (mut i, mut j) = (0, 1);
    while j < words.len() {
        if !words[i].word.ends_with(' ')
            && !words[j].word.is_empty()
            && APPEND_PUNCTUATION.contains(words[j].word.as_str())
        {
            let (word, tokens) = (std::mem::take(&mut words[j].word), std::mem::take(&mut words[j].tokens));
            words[i].word.push_str(&word);
            words[i].tokens.extend(tokens);
        } else {
            i = j;
        }
        j += 1;
    }
}

/// Joins a word that Whisper's split left hanging to the word it belongs to: a piece that
/// starts with a hyphen or an apostrophe without a space before it (French "est" + "-il",
/// "aujourd" + "'hui"), or that follows a word ending in one ("l'" + "homme"). Written apart,
/// they would read "est -il" in every export. Like [`merge_punctuations`], the absorbed entry
/// keeps an empty word, so token counts per segment stay as they were.
pub fn join_attached_words(words: &mut [WordTiming]) {
    const JOINERS: [char; 4] = ['-', '\'', '’', '‑'];
    let mut last: Option<usize> = None;
    for j in 0..words.len() {
        if words[j].word.is_empty() {
            continue;
        }
        let attached = !words[j].word.starts_with(' ')
            && last.is_some_and(|i| words[j].word.starts_with(JOINERS) || words[i].word.ends_with(JOINERS));
        match last {
            Some(i) if attached => {
                let word = std::mem::take(&mut words[j].word);
                let tokens = std::mem::take(&mut words[j].tokens);
                let (probability, end) = (words[j].probability, words[j].end);
                let prev = &mut words[i];
                let (n0, n1) = (prev.tokens.len() as f32, tokens.len() as f32);
                prev.probability = (prev.probability * n0 + probability * n1) / (n0 + n1).max(1.0);
                prev.end = prev.end.max(end);
                prev.word.push_str(&word);
                prev.tokens.extend(tokens);
            }
            _ => last = Some(j),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtw_follows_the_cheap_diagonal() {
        // 3 tokens x 6 frames, cheap cells along a staircase.
        let mut c = vec![1.0f32; 18];
        for (i, j) in [(0, 0), (0, 1), (1, 2), (1, 3), (2, 4), (2, 5)] {
            c[i * 6 + j] = -1.0;
        }
        let (rows, cols) = dtw(&c, 3, 6);
        assert_eq!(rows, vec![0, 0, 1, 1, 2, 2]);
        assert_eq!(cols, vec![0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn median_filter_removes_spikes() {
        let x = [0.0, 0.0, 0.0, 9.0, 0.0, 0.0, 0.0, 0.0];
        assert!(median_filter(&x).iter().all(|&v| v == 0.0));
    }

    #[test]
    fn median_filter_is_the_median_of_each_reflected_window() {
        for n in [1, 3, 4, 5, 9, 100] {
            let x: Vec<f32> = (0..n).map(|i| ((i * 7919) % 37) as f32 - 18.0).collect();
            let reflect = |i: isize| {
                x[if i < 0 {
                    -i
                } else if i >= n as isize {
                    2 * (n as isize - 1) - i
                } else {
                    i
                } as usize]
            };
            let got = median_filter(&x);
            for (i, g) in got.iter().enumerate() {
                if n <= 3 {
                    assert_eq!(*g, x[i]);
                    continue;
                }
                let mut w: Vec<f32> = (-3..=3).map(|k| reflect(i as isize + k)).collect();
                w.sort_by(|a, b| a.total_cmp(b));
                assert_eq!(*g, w[3], "n {n} position {i}");
            }
        }
    }

    #[test]
    fn median7_sorts_every_zero_one_input() {
        // By the 0-1 principle (which holds for selection networks too), checking the 128
        // binary inputs covers every input.
        for bits in 0u32..128 {
            let v: [f32; 7] = std::array::from_fn(|i| ((bits >> i) & 1) as f32);
            let ones = bits.count_ones();
            assert_eq!(median7(v), if ones >= 4 { 1.0 } else { 0.0 }, "input {bits:07b}");
        }
    }

    fn w(word: &str) -> WordTiming {
        WordTiming { word: word.into(), tokens: vec![1], start: 0.0, end: 0.0, probability: 1.0 }
    }

    #[test]
    fn punctuation_joins_its_word() {
        let mut ws = vec![w(" \""), w("Hello"), w(","), w(" world"), w(".")];
        merge_punctuations(&mut ws);
        let texts: Vec<&str> = ws.iter().map(|w| w.word.as_str()).collect();
        assert_eq!(texts, vec!["", " \"Hello,", "", " world.", ""]);
    }

    #[test]
    fn hyphens_and_apostrophes_join_their_word() {
        let mut ws = vec![w(" quelle"), w(" heure"), w(" est"), w("-il"), w(" l'"), w("homme"), w(" -"), w(" oui")];
        ws[3].end = 2.0;
        ws[3].probability = 0.5;
        join_attached_words(&mut ws);
        let texts: Vec<&str> = ws.iter().map(|w| w.word.as_str()).collect();
        assert_eq!(texts, vec![" quelle", " heure", " est-il", "", " l'homme", "", " -", " oui"]);
        assert_eq!(ws[2].end, 2.0, "the joined word ends where its last piece ends");
        assert_eq!(ws[2].tokens.len(), 2);
        assert!((ws[2].probability - 0.75).abs() < 1e-6, "token-weighted confidence");
    }
}
