//! Diarization error rate, the standard measure: (missed speech + false alarm + speaker
//! confusion) / total reference speech, after mapping hypothesis speakers to reference
//! speakers one-to-one so that they overlap the most.
//!
//! Time is scored on a 10 ms grid over the reference's scored region (the whole file unless
//! given), with no forgiveness collar around reference boundaries and overlapping speech
//! scored (each overlapping speaker counts). The mapping is found exhaustively (speaker counts
//! here are small); a speaker left without a partner counts as confusion wherever it speaks.

use std::collections::BTreeMap;

/// A speaker turn: `[start, end)` seconds and a label.
#[derive(Clone, Debug, PartialEq)]
pub struct Turn {
    pub start: f64,
    pub end: f64,
    pub speaker: String,
}

/// The parts of a DER, in seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DerParts {
    pub reference: f64,
    pub missed: f64,
    pub false_alarm: f64,
    pub confusion: f64,
}

impl DerParts {
    /// DER as a fraction (0.12 = 12 %).
    pub fn der(&self) -> f64 {
        if self.reference <= 0.0 { 0.0 } else { (self.missed + self.false_alarm + self.confusion) / self.reference }
    }

    /// Sums of two scorings (for a corpus total).
    pub fn add(&self, o: &DerParts) -> DerParts {
        DerParts {
            reference: self.reference + o.reference,
            missed: self.missed + o.missed,
            false_alarm: self.false_alarm + o.false_alarm,
            confusion: self.confusion + o.confusion,
        }
    }
}

const STEP: f64 = 0.01;

fn labels(turns: &[Turn]) -> Vec<String> {
    let mut v: Vec<String> = turns.iter().map(|t| t.speaker.clone()).collect();
    v.sort();
    v.dedup();
    v
}

/// Frame-by-frame activity of each label over `frames` 10 ms frames starting at `from`.
fn grid(turns: &[Turn], names: &[String], from: f64, frames: usize) -> Vec<Vec<bool>> {
    let mut g = vec![vec![false; frames]; names.len()];
    for t in turns {
        let s = names.iter().position(|n| n == &t.speaker).expect("known label");
        let a = (((t.start - from) / STEP).round().max(0.0) as usize).min(frames);
        let b = (((t.end - from) / STEP).round().max(0.0) as usize).min(frames);
        g[s][a..b.max(a)].iter_mut().for_each(|v| *v = true);
    }
    g
}

/// Scores `hypothesis` against `reference` over `[from, to)` seconds.
pub fn score(reference: &[Turn], hypothesis: &[Turn], from: f64, to: f64) -> DerParts {
    let frames = ((to - from) / STEP).round().max(0.0) as usize;
    let rn = labels(reference);
    let hn = labels(hypothesis);
    let r = grid(reference, &rn, from, frames);
    let h = grid(hypothesis, &hn, from, frames);
    // overlap[i][j]: frames where reference i and hypothesis j both speak.
    let overlap: Vec<Vec<usize>> =
        r.iter().map(|ri| h.iter().map(|hj| ri.iter().zip(hj).filter(|(a, b)| **a && **b).count()).collect()).collect();
    let mapping = best_mapping(&overlap, rn.len(), hn.len());
    let mut parts = DerParts::default();
    for f in 0..frames {
        let nr = r.iter().filter(|s| s[f]).count();
        let nh = h.iter().filter(|s| s[f]).count();
        let correct = mapping.iter().filter(|(i, j)| r[**i][f] && h[**j][f]).count();
        parts.reference += nr as f64;
        parts.missed += nr.saturating_sub(nh) as f64;
        parts.false_alarm += nh.saturating_sub(nr) as f64;
        parts.confusion += (nr.min(nh) - correct) as f64;
    }
    for v in [&mut parts.reference, &mut parts.missed, &mut parts.false_alarm, &mut parts.confusion] {
        *v *= STEP;
    }
    parts
}

/// The one-to-one reference→hypothesis mapping with the most total overlap.
fn best_mapping(overlap: &[Vec<usize>], nr: usize, nh: usize) -> BTreeMap<usize, usize> {
    fn go(
        i: usize,
        overlap: &[Vec<usize>],
        nh: usize,
        used: &mut Vec<bool>,
        cur: &mut Vec<Option<usize>>,
        best: &mut (usize, Vec<Option<usize>>),
    ) {
        if i == overlap.len() {
            let total: usize = cur.iter().enumerate().filter_map(|(r, h)| h.map(|h| overlap[r][h])).sum();
            if total > best.0 || best.1.is_empty() {
                *best = (total, cur.clone());
            }
            return;
        }
        cur.push(None);
        go(i + 1, overlap, nh, used, cur, best);
        cur.pop();
        for j in 0..nh {
            if !used[j] {
                used[j] = true;
                cur.push(Some(j));
                go(i + 1, overlap, nh, used, cur, best);
                cur.pop();
                used[j] = false;
            }
        }
    }
    let mut best = (0, Vec::new());
    go(0, overlap, nh, &mut vec![false; nh], &mut Vec::with_capacity(nr), &mut best);
    best.1.iter().enumerate().filter_map(|(r, h)| h.map(|h| (r, h))).collect()
}

/// Reads reference turns from an RTTM file (`SPEAKER file 1 start duration <NA> <NA> name ...`)
/// or a TSV with a header `start_s end_s speaker`.
pub fn read_turns(text: &str) -> Vec<Turn> {
    let mut out = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.first() == Some(&"SPEAKER") && f.len() >= 8 {
            if let (Ok(s), Ok(d)) = (f[3].parse::<f64>(), f[4].parse::<f64>()) {
                out.push(Turn { start: s, end: s + d, speaker: f[7].to_string() });
            }
        } else if f.len() >= 3
            && let (Ok(s), Ok(e)) = (f[0].parse::<f64>(), f[1].parse::<f64>())
        {
            out.push(Turn { start: s, end: e, speaker: f[2].to_string() });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: f64, e: f64, who: &str) -> Turn {
        Turn { start: s, end: e, speaker: who.into() }
    }

    #[test]
    fn perfect_up_to_renaming() {
        let r = vec![t(0.0, 5.0, "A"), t(5.0, 10.0, "B")];
        let h = vec![t(0.0, 5.0, "x"), t(5.0, 10.0, "y")];
        assert!(score(&r, &h, 0.0, 10.0).der() < 1e-9);
    }

    #[test]
    fn miss_false_alarm_and_confusion() {
        let r = vec![t(0.0, 4.0, "A"), t(4.0, 8.0, "B")];
        // 1 s of A missed, 1 s of false alarm after 8 s, and B's last 2 s given to A's label.
        let h = vec![t(1.0, 4.0, "x"), t(4.0, 6.0, "y"), t(6.0, 9.0, "x")];
        let p = score(&r, &h, 0.0, 10.0);
        assert!((p.reference - 8.0).abs() < 1e-6);
        assert!((p.missed - 1.0).abs() < 1e-6);
        assert!((p.false_alarm - 1.0).abs() < 1e-6);
        assert!((p.confusion - 2.0).abs() < 1e-6);
        assert!((p.der() - 0.5).abs() < 1e-6);
    }

    #[test]
    fn reads_rttm_and_tsv() {
        let r = read_turns("SPEAKER f 1 14.032 1.744 <NA> <NA> MEE076 <NA> <NA>\n");
        assert_eq!(r, vec![t(14.032, 15.776, "MEE076")]);
        let r = read_turns("start_s\tend_s\tspeaker\n0\t11.27\tS1\n");
        assert_eq!(r, vec![t(0.0, 11.27, "S1")]);
    }
}
