//! Measures a list of cues against the hard limits and the quality rules, for the
//! `scribe subtitle-report` command and for tests: hard-limit violations per rule (goal 0), share
//! of cues read at most [`MAX_CPS`] characters per second (goal ≥ 95 %), cue durations.

use std::fmt;

use super::{Cue, MAX_CPS, MIN_DURATION, MIN_GAP};
use crate::export::params::SubtitleParams;

/// Rounding slack for times that went through milliseconds.
const EPS: f64 = 1e-3;

#[derive(Debug, Clone, PartialEq)]
pub struct QualityReport {
    pub cues: usize,
    /// Hard limit: rows longer than `maxCharsPerRow` characters.
    pub rows_too_long: usize,
    /// Hard limit: cues with more than `maxNumberOfRows` rows, no rows, or an empty row.
    pub bad_row_count: usize,
    /// Hard limit: cues on screen longer than rows × `maxScreenTimePerRowSeconds`, or not at all.
    pub too_long_on_screen: usize,
    /// Hard limit: cues that start before the previous one ended.
    pub overlapping: usize,
    /// Quality: gaps between cues shorter than two frames.
    pub gaps_under_two_frames: usize,
    /// Quality: cues shorter than 5/6 s.
    pub shorter_than_minimum: usize,
    /// Quality: share (0 to 1) of cues read at most 20 characters per second.
    pub within_reading_speed: f64,
    pub median_duration: f64,
    pub min_duration: f64,
}

impl QualityReport {
    /// Sum of all hard-limit violations.
    pub fn hard_violations(&self) -> usize {
        self.rows_too_long + self.bad_row_count + self.too_long_on_screen + self.overlapping
    }
}

/// Measures `cues` against `params`.
pub fn report(cues: &[Cue], params: &SubtitleParams) -> QualityReport {
    let mut r = QualityReport {
        cues: cues.len(),
        rows_too_long: 0,
        bad_row_count: 0,
        too_long_on_screen: 0,
        overlapping: 0,
        gaps_under_two_frames: 0,
        shorter_than_minimum: 0,
        within_reading_speed: 1.0,
        median_duration: 0.0,
        min_duration: 0.0,
    };
    let mut readable = 0usize;
    for (k, c) in cues.iter().enumerate() {
        r.rows_too_long += c.lines.iter().filter(|l| l.chars().count() > params.max_chars_per_row()).count();
        if c.lines.is_empty() || c.lines.len() > params.max_rows() || c.lines.iter().any(|l| l.trim().is_empty()) {
            r.bad_row_count += 1;
        }
        let d = c.duration();
        if d <= 0.0 || d > c.lines.len() as f64 * params.max_screen_time_per_row() + EPS {
            r.too_long_on_screen += 1;
        }
        if d < MIN_DURATION - EPS {
            r.shorter_than_minimum += 1;
        }
        if d > 0.0 && c.chars() as f64 / d <= MAX_CPS + EPS {
            readable += 1;
        }
        if k > 0 {
            let gap = c.start - cues[k - 1].end;
            if gap < -EPS / 2.0 {
                r.overlapping += 1;
            } else if gap < MIN_GAP - 2.0 * EPS {
                r.gaps_under_two_frames += 1;
            }
        }
    }
    if !cues.is_empty() {
        r.within_reading_speed = readable as f64 / cues.len() as f64;
        let mut durations: Vec<f64> = cues.iter().map(Cue::duration).collect();
        durations.sort_by(f64::total_cmp);
        let n = durations.len();
        r.median_duration = if n % 2 == 1 { durations[n / 2] } else { (durations[n / 2 - 1] + durations[n / 2]) / 2.0 };
        r.min_duration = durations[0];
    }
    r
}

impl fmt::Display for QualityReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "cues                         {}", self.cues)?;
        writeln!(f, "hard limits violated         {}", self.hard_violations())?;
        writeln!(f, "  rows too long              {}", self.rows_too_long)?;
        writeln!(f, "  too many or empty rows     {}", self.bad_row_count)?;
        writeln!(f, "  too long on screen         {}", self.too_long_on_screen)?;
        writeln!(f, "  overlapping                {}", self.overlapping)?;
        writeln!(f, "gaps under two frames        {}", self.gaps_under_two_frames)?;
        writeln!(f, "shorter than 5/6 s           {}", self.shorter_than_minimum)?;
        writeln!(f, "within 20 chars/s            {:.1} %", 100.0 * self.within_reading_speed)?;
        writeln!(f, "median duration              {:.3} s", self.median_duration)?;
        write!(f, "minimum duration             {:.3} s", self.min_duration)
    }
}
