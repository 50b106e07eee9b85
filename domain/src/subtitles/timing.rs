//! Times laid-out cues: in at the first word, out at the last, then stretched into silence for
//! reading speed and minimum duration, chained over short gaps, and kept apart and within the
//! per-row screen-time limit. Runs in one pass, in order, so every cue starts after the one before.

use super::layout::Draft;
use super::normalize::Word;
use super::{CHAIN_GAP, Cue, MAX_CPS, MAX_HANG, MIN_DURATION, MIN_GAP, MIN_VISIBLE};
use crate::export::params::SubtitleParams;

pub(crate) fn time(drafts: Vec<Draft>, words: &[Word], params: &SubtitleParams) -> Vec<Cue> {
    let mut cues: Vec<Cue> = Vec::with_capacity(drafts.len());
    let starts: Vec<f64> = drafts.iter().map(|d| words[d.first].start).collect();
    for (k, d) in drafts.into_iter().enumerate() {
        let spoken_end = words[d.last - 1].end;
        // In at the first word, or just after the previous cue when words are crowded.
        let start = match cues.last() {
            Some(prev) => starts[k].max(prev.end + MIN_GAP),
            None => starts[k],
        };
        let max_end = start + d.lines.len() as f64 * params.max_screen_time_per_row();
        let next_start = starts.get(k + 1).copied().unwrap_or(f64::INFINITY);
        let latest = (next_start - MIN_GAP).min(max_end);

        let mut end = spoken_end.min(max_end);
        // Reading speed and minimum duration: stay on into the silence that follows.
        let chars = d.lines.iter().map(|l| l.chars().count()).sum::<usize>() + d.lines.len() - 1;
        let wanted = start + MIN_DURATION.max(chars as f64 / MAX_CPS);
        if end < wanted {
            end = end.max(wanted.min(latest).min(spoken_end + MAX_HANG));
        }
        // Chaining: a gap shorter than CHAIN_GAP is closed down to MIN_GAP.
        if next_start - end < CHAIN_GAP {
            end = end.max(latest);
        }
        // Never into the next cue's gap, never shorter than one frame, never over the limit.
        end = end.min(latest).max(start + MIN_VISIBLE).min(max_end);
        let speaker = words[d.first].speaker.clone();
        cues.push(Cue { start, end, lines: d.lines, speaker });
    }
    cues
}
