//! Cleans the recogniser's words before segmentation so that the layout can rely on: non-empty
//! single-token text no longer than a row, finite non-negative times, starts in order, end ≥ start.

use crate::transcript::TimedWord;

/// A clean word. `speaker` is kept as text; `chars` is the text's length in characters.
#[derive(Debug, Clone)]
pub(crate) struct Word {
    pub start: f64,
    pub end: f64,
    pub text: String,
    pub chars: usize,
    pub speaker: String,
}

pub(crate) fn normalize(words: &[TimedWord], max_chars: usize) -> Vec<Word> {
    let mut out: Vec<Word> = Vec::with_capacity(words.len());
    let mut last_start = 0.0f64;
    for w in words {
        if !w.start.is_finite() {
            continue;
        }
        let start = w.start.max(0.0).max(last_start);
        let end = if w.end.is_finite() { w.end.max(start) } else { start };
        last_start = start;
        // Control characters become spaces; whitespace separates tokens.
        let clean: String = w.text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
        let mut pieces: Vec<String> = Vec::new();
        for token in clean.split_whitespace() {
            let chars: Vec<char> = token.chars().collect();
            // A token longer than a row is cut into row-sized pieces (the one case of a split word).
            for chunk in chars.chunks(max_chars.max(1)) {
                pieces.push(chunk.iter().collect());
            }
        }
        let total: usize = pieces.iter().map(|p| p.chars().count()).sum();
        let mut t = start;
        for p in pieces {
            let chars = p.chars().count();
            let share = if total == 0 { 0.0 } else { (end - start) * chars as f64 / total as f64 };
            let piece_end = (t + share).min(end);
            out.push(Word { start: t, end: piece_end, text: p, chars, speaker: w.speaker.clone() });
            t = piece_end;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tw(start: f64, end: f64, text: &str) -> TimedWord {
        TimedWord { start, end, text: text.into(), speaker: "S1".into() }
    }

    #[test]
    fn cleans_times_and_text() {
        let words = normalize(
            &[tw(1.0, 0.5, " hi "), tw(f64::NAN, 2.0, "lost"), tw(0.8, f64::INFINITY, "back"), tw(2.0, 3.0, "  ")],
            42,
        );
        let got: Vec<(f64, f64, &str)> = words.iter().map(|w| (w.start, w.end, w.text.as_str())).collect();
        assert_eq!(got, vec![(1.0, 1.0, "hi"), (1.0, 1.0, "back")]);
    }

    #[test]
    fn cuts_a_word_longer_than_a_row_and_shares_its_time() {
        let long = "x".repeat(70);
        let words = normalize(&[tw(0.0, 7.0, &long)], 30);
        let sizes: Vec<usize> = words.iter().map(|w| w.chars).collect();
        assert_eq!(sizes, vec![30, 30, 10]);
        assert!((words[1].start - 3.0).abs() < 1e-9 && (words[2].end - 7.0).abs() < 1e-9);
    }
}
