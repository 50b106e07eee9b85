//! Finals read again with the utterances around them (`outputConfig.revisions`, Scribe's
//! addition to the protocol).
//!
//! A final is decoded from its utterance alone, as soon as the pause after it allows, so Whisper
//! punctuates it without the words that follow: "and so my fellow Americans." then "Ask not…",
//! where the sentence went on. Once the next utterance's final is out, a session that asked for
//! revisions reads again the audio from the utterance before to the one after, and the words of
//! that reading within the first final's stretch are its revision, sent as a `FinalResult` with
//! the same id. The session's last final is read with the one before it when the session ends.
//! Measured (`ops/bench/live.md`): the finals as revised read as the direct job reads the same
//! recordings, and lose no words.

use std::ops::Range;

use super::SAMPLE_RATE;

/// Samples a revision reads at most: one Whisper window.
pub const MAX_WINDOW: usize = 30 * SAMPLE_RATE as usize;

/// What to read again to revise one final.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revision {
    /// The stream's samples to decode.
    pub window: Range<usize>,
    /// The revised final's words are those whose middle falls here (stream samples): from
    /// halfway through the pause before its utterance to halfway through the pause after it.
    pub keep: Range<usize>,
}

impl Revision {
    /// The revision of the final over `own`, read with the finals over `before` and `after`
    /// (stream samples; in order, apart). The window reaches from `before`'s start to `after`'s
    /// end; when that is longer than [`MAX_WINDOW`], it leaves out `before`, else `after`.
    /// `None` when no neighbour fits (nothing to read the final with).
    pub fn plan(before: Option<&Range<usize>>, own: &Range<usize>, after: Option<&Range<usize>>) -> Option<Revision> {
        let tries = [(before, after), (None, after), (before, None)];
        let (b, a) = tries.into_iter().find(|(b, a)| {
            (b.is_some() || a.is_some()) && {
                let (start, end) = (b.map_or(own.start, |b| b.start), a.map_or(own.end, |a| a.end));
                end - start <= MAX_WINDOW
            }
        })?;
        let window = b.map_or(own.start, |b| b.start)..a.map_or(own.end, |a| a.end);
        let keep = before.map_or(window.start, |b| (b.end + own.start) / 2)
            ..after.map_or(window.end, |a| (own.end + a.start) / 2);
        Some(Revision { window, keep })
    }

    /// Whether a word of the reading, `start`..`end` seconds from the start of the stream,
    /// belongs to the revised final.
    pub fn keeps(&self, start: f64, end: f64) -> bool {
        let middle = ((start + end) / 2.0 * SAMPLE_RATE as f64).round() as usize;
        self.keep.contains(&middle)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: usize = SAMPLE_RATE as usize;

    #[test]
    fn given_neighbours_on_both_sides_when_planned_then_all_three_are_read_and_the_pauses_are_halved() {
        // given finals over 0–2 s, 3–5 s and 6–7 s
        let plan = Revision::plan(Some(&(0..2 * S)), &(3 * S..5 * S), Some(&(6 * S..7 * S))).unwrap();
        // then the window reads from 0 to 7 s, and the middle final keeps 2.5–5.5 s
        assert_eq!(plan.window, 0..7 * S);
        assert_eq!(plan.keep, 5 * S / 2..11 * S / 2);
        // a word at 5.0–5.8 s (middle 5.4 s) is the middle final's; one at 5.4–6.2 s is not
        assert!(plan.keeps(5.0, 5.8));
        assert!(!plan.keeps(5.4, 6.2));
        assert!(!plan.keeps(1.0, 2.0));
    }

    #[test]
    fn given_the_first_or_last_final_when_planned_then_its_one_neighbour_is_read_and_its_far_side_is_open() {
        let first = Revision::plan(None, &(S..2 * S), Some(&(3 * S..4 * S))).unwrap();
        assert_eq!((first.window, first.keep), (S..4 * S, S..5 * S / 2));
        let last = Revision::plan(Some(&(S..2 * S)), &(3 * S..4 * S), None).unwrap();
        assert_eq!((last.window, last.keep), (S..4 * S, 5 * S / 2..4 * S));
    }

    #[test]
    fn given_a_window_over_30_s_when_planned_then_a_neighbour_is_left_out_and_none_fits_means_no_revision() {
        // given a 20 s final before, a 5 s final and a 10 s final after
        let plan = Revision::plan(Some(&(0..20 * S)), &(21 * S..26 * S), Some(&(27 * S..37 * S))).unwrap();
        // then the final before is left out, though its pause still bounds what is kept
        assert_eq!(plan.window, 21 * S..37 * S);
        assert_eq!(plan.keep.start, 41 * S / 2);
        // given a final alone, or neighbours too long to read with it, then there is nothing to do
        assert_eq!(Revision::plan(None, &(0..5 * S), None), None);
        assert_eq!(Revision::plan(Some(&(0..28 * S)), &(28 * S..31 * S), Some(&(31 * S..59 * S))), None);
    }
}
