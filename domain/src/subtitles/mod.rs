//! Subtitle segmentation: timed words in, cues out.
//!
//! Hard limits, always met (property-tested in `domain/tests/subtitles_props.rs`):
//! - every row holds at most `maxCharsPerRow` characters (Unicode scalar values, not bytes);
//! - a cue has 1 to `maxNumberOfRows` rows, none empty;
//! - a cue stays on screen at most rows × `maxScreenTimePerRowSeconds`, and at least one frame;
//! - cues are in time order, never overlap, and are at least [`MIN_GAP`] apart;
//! - a cue never spans a speaker change;
//! - words are never split, except a word longer than a whole row: it is cut into row-sized pieces
//!   (its time shared among them in proportion to their length), because a row wider than the
//!   limit or a dropped word would both be worse.
//!
//! With speaker labels ([`segment_with_labels`], SRT's `includeSpeakers`), each cue whose speaker
//! differs from the previous cue's starts with `Name: `, and the label counts: it is part of the
//! first row, within `maxCharsPerRow`, and read like the words (reading speed). A name longer
//! than two thirds of a row is cut and ends in `…`; a first word too long to follow the label on
//! its row is cut as an over-long word is.
//!
//! "Rows × maxScreenTimePerRowSeconds" counts the rows a cue actually has: a one-row cue stays at
//! most one row's time. A cue whose words need longer may therefore be laid out on two rows even
//! when its text would fit on one.
//!
//! Quality rules, met where the timing allows (measured by [`report`]): breaks at sentence ends
//! first, then at clause punctuation and pauses; balanced two-row cues; no article|noun,
//! preposition|object, name, pronoun|verb or auxiliary|verb splits; at least [`MIN_DURATION`] on
//! screen; gaps under [`CHAIN_GAP`] closed; at most [`MAX_CPS`] characters per second, by extending a
//! cue into the following silence (never by dropping text).

mod layout;
mod normalize;
mod report;
mod rules;
mod timing;

pub use report::{QualityReport, report};

use crate::export::params::SubtitleParams;
use crate::transcript::TimedWord;

/// Smallest gap between two cues: two frames at 24 fps (83.3 ms), plus a little so the gap
/// survives rounding to milliseconds.
pub const MIN_GAP: f64 = 0.084;
/// Gaps shorter than this are closed down to [`MIN_GAP`] (chaining), as the Netflix guide asks.
pub const CHAIN_GAP: f64 = 0.5;
/// Shortest comfortable time on screen (Netflix: 5/6 s).
pub const MIN_DURATION: f64 = 5.0 / 6.0;
/// Fastest comfortable reading speed, characters per second (Netflix, adult English).
pub const MAX_CPS: f64 = 20.0;
/// How long a cue may stay after its last word to give time to read it (BBC: at most 1.5 s).
pub const MAX_HANG: f64 = 1.5;
/// A pause at least this long always ends a cue.
pub const FORCED_BREAK_PAUSE: f64 = 1.5;
/// Shortest time any cue is shown, even when words are crowded: one frame at 25 fps.
pub const MIN_VISIBLE: f64 = 0.04;

/// One subtitle: what is shown, on which rows, from `start` to `end` (seconds).
#[derive(Debug, Clone, PartialEq)]
pub struct Cue {
    pub start: f64,
    pub end: f64,
    /// 1 or more rows, top to bottom, each non-empty.
    pub lines: Vec<String>,
    /// The `spkid` of the one speaker whose words the cue shows.
    pub speaker: String,
}

impl Cue {
    /// Seconds on screen.
    pub fn duration(&self) -> f64 {
        self.end - self.start
    }

    /// The rows joined by spaces.
    pub fn text(&self) -> String {
        self.lines.join(" ")
    }

    /// Characters a viewer reads, counting one space between rows.
    pub fn chars(&self) -> usize {
        self.lines.iter().map(|l| l.chars().count()).sum::<usize>() + self.lines.len().saturating_sub(1)
    }
}

/// Cuts timed words into cues that meet the hard limits of `params` (see the module comment).
///
/// Words need not be clean: text is trimmed and whitespace inside a word splits it, empty words
/// are dropped, a word with a non-finite start is dropped, a negative time counts as 0, an end before the start is
/// taken as the start, and starts that go back in time are moved forward to keep order.
pub fn segment(words: &[TimedWord], params: &SubtitleParams) -> Vec<Cue> {
    let words = normalize::normalize(words, params.max_chars_per_row(), None);
    let drafts = layout::layout(&words, params);
    timing::time(drafts, &words, params)
}

/// [`segment`], with each cue whose speaker differs from the previous cue's starting with
/// `<name_of(speaker)>: ` on its first row, counted against the limits like the words (see the
/// module comment). A blank name gets no label.
pub fn segment_with_labels(words: &[TimedWord], params: &SubtitleParams, name_of: &dyn Fn(&str) -> String) -> Vec<Cue> {
    let words = normalize::normalize(words, params.max_chars_per_row(), Some(name_of));
    let drafts = layout::layout(&words, params);
    timing::time(drafts, &words, params)
}
