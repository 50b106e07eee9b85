//! Chooses where cues and rows break: a shortest-path search over the gaps between words, per run
//! of one speaker's words, where each candidate cue must fit the hard limits and costs what it
//! breaks (see `rules`), how unbalanced its rows are and how fast it must be read.
//!
//! A speaker label (`Name:`, see `normalize`) counts like a word against the row and the reading
//! speed, but a cue never ends right after it, and a row ends there only at a cost: the label
//! stays with the words it introduces, on their row when they fit.

use super::normalize::Word;
use super::rules::{break_cost, ends_clause, ends_sentence};
use super::{FORCED_BREAK_PAUSE, MAX_CPS, MAX_HANG, MIN_DURATION, MIN_GAP};
use crate::export::params::SubtitleParams;

/// A cue before timing: words `first..last` (exclusive) of the clean word list, laid out on rows.
#[derive(Debug, Clone)]
pub(crate) struct Draft {
    pub first: usize,
    pub last: usize,
    pub lines: Vec<String>,
}

const CUE_COST: f64 = 1.0;
const SENTENCE_INSIDE_COST: f64 = 4.0;
const SENTENCE_AT_ROW_BREAK_COST: f64 = 0.5;
/// Clause punctuation inside a row ("for you, ask what") rather than at a row or cue break.
const CLAUSE_INSIDE_COST: f64 = 1.0;
const IMBALANCE_COST: f64 = 2.0;
/// Extra cost of a row less than a third as long as the other (a lone word over a full row).
const ORPHAN_ROW_COST: f64 = 2.0;
const CPS_COST: f64 = 0.5;
const SHORT_COST: f64 = 8.0;
/// A row break right after a speaker label (the label alone on the top row).
const LABEL_ROW_BREAK_COST: f64 = 3.0;

pub(crate) fn layout(words: &[Word], params: &SubtitleParams) -> Vec<Draft> {
    let mut drafts = Vec::new();
    let mut run_start = 0;
    for k in 1..=words.len() {
        let run_ends = k == words.len()
            || words[k].speaker != words[k - 1].speaker
            || words[k].start - words[k - 1].end >= FORCED_BREAK_PAUSE;
        if run_ends {
            layout_run(words, run_start, k, params, &mut drafts);
            run_start = k;
        }
    }
    drafts
}

/// Lays out `words[from..to]`, one speaker's run, appending drafts in order.
fn layout_run(words: &[Word], from: usize, to: usize, params: &SubtitleParams, out: &mut Vec<Draft>) {
    let n = to - from;
    let w = &words[from..to];
    let max_chars = params.max_chars_per_row();
    let max_rows = params.max_rows();
    let per_row = params.max_screen_time_per_row();
    // prefix[k] = characters of w[..k]; row_len(i, j) = characters of w[i..j] joined by spaces.
    let mut prefix = vec![0usize; n + 1];
    for (k, word) in w.iter().enumerate() {
        prefix[k + 1] = prefix[k] + word.chars;
    }
    let row_len = |i: usize, j: usize| prefix[j] - prefix[i] + (j - i - 1);
    // gap_cost[k] = cost of a break between w[k-1] and w[k].
    let gap_cost: Vec<f64> = (0..=n)
        .map(|k| {
            if k == 0 || k == n {
                0.0
            } else if w[k - 1].label {
                LABEL_ROW_BREAK_COST
            } else {
                break_cost(&w[k - 1].text, &w[k].text, w[k].start - w[k - 1].end)
            }
        })
        .collect();
    // Where the silence after word k ends: the next word, in this run or after it.
    let next_start = |k: usize| words.get(from + k + 1).map_or(f64::INFINITY, |x| x.start);

    // best[j] = (cost, i, row break) of the cheapest layout of w[..j] whose last cue is w[i..j].
    let mut best: Vec<(f64, usize, Option<usize>)> = vec![(f64::INFINITY, 0, None); n + 1];
    best[0] = (0.0, 0, None);
    for j in 1..=n {
        if w[j - 1].label {
            continue; // a label stays in the cue of the words it introduces
        }
        for i in (0..j).rev() {
            if best[i].0.is_infinite() {
                continue;
            }
            let span = w[j - 1].end - w[i].start;
            // One word, alone or after its label (which fits before it on a row, see `normalize`).
            let single = j - i == 1 || (j - i == 2 && w[i].label);
            if !single && (span > max_rows as f64 * per_row || row_len(i, j) > max_rows * max_chars + 1) {
                break; // longer cues only get worse
            }
            // Rows: one if it fits in text and time, else the best feasible two-row break.
            let (rows, row_break, layout_cost) = if single || (row_len(i, j) <= max_chars && span <= per_row) {
                (1, None, 0.0)
            } else if max_rows >= 2 && span <= 2.0 * per_row {
                match best_row_break(i, j, &row_len, &gap_cost, max_chars) {
                    Some((m, c)) => (2, Some(m), c),
                    None => continue,
                }
            } else {
                continue;
            };
            let inside: f64 = (i + 1..j)
                .map(|k| {
                    let before = &w[k - 1].text;
                    if w[k - 1].label {
                        return 0.0;
                    }
                    match (ends_sentence(before), Some(k) == row_break) {
                        (true, true) => SENTENCE_AT_ROW_BREAK_COST,
                        (true, false) => SENTENCE_INSIDE_COST,
                        (false, false) if ends_clause(before) => CLAUSE_INSIDE_COST,
                        _ => 0.0,
                    }
                })
                .sum();
            // Time the cue could get: up to the next word (less the gap), the limit, and the hang.
            let start = w[i].start;
            let limit = (next_start(j - 1) - MIN_GAP).min(start + rows as f64 * per_row).min(w[j - 1].end + MAX_HANG);
            let available = (limit - start).max(span.min(rows as f64 * per_row)).max(1e-3);
            let chars = row_len(i, j) as f64;
            let speed = CPS_COST * (chars / available - MAX_CPS).max(0.0);
            let short = SHORT_COST * (MIN_DURATION - available).max(0.0);
            let cost = best[i].0 + CUE_COST + gap_cost[j] + layout_cost + inside + speed + short;
            if cost < best[j].0 {
                best[j] = (cost, i, row_break);
            }
        }
    }

    let mut cues = Vec::new();
    let mut j = n;
    while j > 0 {
        let (_, i, row_break) = best[j];
        let join = |a: usize, b: usize| w[a..b].iter().map(|x| x.text.as_str()).collect::<Vec<_>>().join(" ");
        let lines = match row_break {
            Some(m) => vec![join(i, m), join(m, j)],
            None => vec![join(i, j)],
        };
        cues.push(Draft { first: from + i, last: from + j, lines });
        j = i;
    }
    out.extend(cues.into_iter().rev());
}

/// The cheapest place `m` to break `w[i..j]` into two rows that both fit, with its cost.
fn best_row_break(
    i: usize,
    j: usize,
    row_len: &impl Fn(usize, usize) -> usize,
    gap_cost: &[f64],
    max_chars: usize,
) -> Option<(usize, f64)> {
    (i + 1..j)
        .filter(|&m| row_len(i, m) <= max_chars && row_len(m, j) <= max_chars)
        .map(|m| {
            let (top, bottom) = (row_len(i, m) as f64, row_len(m, j) as f64);
            let orphan = if 3.0 * top.min(bottom) < top.max(bottom) { ORPHAN_ROW_COST } else { 0.0 };
            (m, gap_cost[m] + IMBALANCE_COST * (top - bottom).abs() / max_chars as f64 + orphan)
        })
        .min_by(|a, b| a.1.total_cmp(&b.1))
}
