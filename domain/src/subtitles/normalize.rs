//! Cleans the recogniser's words before segmentation so that the layout can rely on: non-empty
//! single-token text no longer than a row, finite non-negative times, starts in order, end ≥ start.
//!
//! With speaker labels, each change of speaker is preceded by a label word (`Name:`, at most
//! [`LABEL_SHARE`] of a row, taking no time) that the layout keeps in the cue of the word after
//! it; that word's first piece is cut short enough to follow the label on one row.

use crate::transcript::{TimedWord, one_line};

/// A clean word. `speaker` is kept as text; `chars` is the text's length in characters.
#[derive(Debug, Clone)]
pub(crate) struct Word {
    pub start: f64,
    pub end: f64,
    pub text: String,
    pub chars: usize,
    pub speaker: String,
    /// A speaker label (`Name:`), not a spoken word.
    pub label: bool,
}

/// The most of a row a speaker label may fill, as a fraction: a longer name is cut and ends in
/// `…`, so the words still have room beside it.
pub(crate) const LABEL_SHARE: f64 = 2.0 / 3.0;

pub(crate) fn normalize(words: &[TimedWord], max_chars: usize, labels: Option<&dyn Fn(&str) -> String>) -> Vec<Word> {
    let max_chars = max_chars.max(1);
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
        let tokens: Vec<Vec<char>> = clean.split_whitespace().map(|t| t.chars().collect()).collect();
        if tokens.is_empty() {
            continue;
        }
        let label = match labels {
            Some(name_of) if out.last().is_none_or(|prev| prev.speaker != w.speaker) => {
                label_text(&name_of(&w.speaker), max_chars)
            }
            _ => None,
        };
        // The first piece must fit on the label's row after it and a space.
        let mut room = label.as_ref().map_or(max_chars, |l| max_chars.saturating_sub(l.chars().count() + 1).max(1));
        let mut pieces: Vec<String> = Vec::new();
        for token in tokens {
            // A token longer than a row is cut into row-sized pieces (the one case of a split
            // word, besides a first word too long to follow its speaker's label).
            let mut rest = token.as_slice();
            while !rest.is_empty() {
                let (piece, after) = rest.split_at(rest.len().min(room));
                pieces.push(piece.iter().collect());
                rest = after;
                room = max_chars;
            }
            room = max_chars;
        }
        if let Some(text) = label {
            let chars = text.chars().count();
            out.push(Word { start, end: start, text, chars, speaker: w.speaker.clone(), label: true });
        }
        let total: usize = pieces.iter().map(|p| p.chars().count()).sum();
        let mut t = start;
        for p in pieces {
            let chars = p.chars().count();
            let share = if total == 0 { 0.0 } else { (end - start) * chars as f64 / total as f64 };
            let piece_end = (t + share).min(end);
            out.push(Word { start: t, end: piece_end, text: p, chars, speaker: w.speaker.clone(), label: false });
            t = piece_end;
        }
    }
    out
}

/// `Name:` on one line, cut to [`LABEL_SHARE`] of a row (ending `…:`); `None` for a blank name.
fn label_text(name: &str, max_chars: usize) -> Option<String> {
    let name = one_line(name);
    if name.is_empty() {
        return None;
    }
    let most = ((max_chars as f64 * LABEL_SHARE).floor() as usize).max(2);
    let chars: Vec<char> = name.chars().collect();
    Some(if chars.len() < most {
        format!("{name}:")
    } else {
        let kept: String = chars[..most - 2].iter().collect();
        format!("{}…:", kept.trim_end())
    })
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
            None,
        );
        let got: Vec<(f64, f64, &str)> = words.iter().map(|w| (w.start, w.end, w.text.as_str())).collect();
        assert_eq!(got, vec![(1.0, 1.0, "hi"), (1.0, 1.0, "back")]);
    }

    #[test]
    fn cuts_a_word_longer_than_a_row_and_shares_its_time() {
        let long = "x".repeat(70);
        let words = normalize(&[tw(0.0, 7.0, &long)], 30, None);
        let sizes: Vec<usize> = words.iter().map(|w| w.chars).collect();
        assert_eq!(sizes, vec![30, 30, 10]);
        assert!((words[1].start - 3.0).abs() < 1e-9 && (words[2].end - 7.0).abs() < 1e-9);
    }

    #[test]
    fn given_labels_when_the_speaker_changes_then_a_label_word_precedes_the_turn() {
        let mut words = vec![tw(0.0, 1.0, "one"), tw(1.0, 2.0, "two"), tw(2.0, 3.0, "three")];
        words[2].speaker = "S2".into();
        let name = |s: &str| if s == "S1" { "Ada\nLovelace".to_owned() } else { "  ".to_owned() };
        let out = normalize(&words, 30, Some(&name));
        let got: Vec<(&str, bool, f64, f64)> = out.iter().map(|w| (w.text.as_str(), w.label, w.start, w.end)).collect();
        // A blank name gets no label.
        assert_eq!(
            got,
            [
                ("Ada Lovelace:", true, 0.0, 0.0),
                ("one", false, 0.0, 1.0),
                ("two", false, 1.0, 2.0),
                ("three", false, 2.0, 3.0)
            ]
        );
    }

    #[test]
    fn given_a_long_name_and_a_long_first_word_when_labelled_then_both_fit_one_row() {
        let name = |_: &str| "Alexandra Montgomery-Smith of Lancaster".to_owned();
        let out = normalize(&[tw(0.0, 4.0, &"x".repeat(40))], 30, Some(&name));
        assert_eq!(out[0].text, "Alexandra Montgome…:");
        assert_eq!(out[0].chars, 20, "two thirds of a 30-character row");
        assert_eq!(out[1].chars, 9, "the first piece fits after the label and a space");
        assert_eq!(out.iter().skip(1).map(|w| w.chars).collect::<Vec<_>>(), [9, 30, 1]);
    }
}
