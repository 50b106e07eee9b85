//! Validated export parameters: the spec's defaults and bounds in one place, so the HTTP edge, the
//! renderers and the `scribe` commands agree. A value out of bounds is an error naming the
//! parameter and its bound; nothing is ever clamped silently.

use std::ops::RangeInclusive;

pub use crate::error::ValidationError;

/// `maxCharsPerRow` for SRT and VTT (spec: 30 to 45, default 42).
pub const SUBTITLE_CHARS_PER_ROW: RangeInclusive<i64> = 30..=45;
pub const DEFAULT_CHARS_PER_ROW: usize = 42;
/// `maxNumberOfRows` (spec: 1 to 2, default 2).
pub const ROWS: RangeInclusive<i64> = 1..=2;
pub const DEFAULT_ROWS: usize = 2;
/// `maxScreenTimePerRowSeconds` (spec: default 2, no bound given). Our bound: 1 to 10 seconds. Below
/// one second a row cannot be read; above ten, cues would stay long after the speech.
pub const SCREEN_TIME_PER_ROW: RangeInclusive<f64> = 1.0..=10.0;
pub const DEFAULT_SCREEN_TIME_PER_ROW: f64 = 2.0;
/// `maxCharsPerRow` for TXT (spec: optional, no bound given). Our bound: 20 to 1000. Narrower than 20
/// leaves no room for a speaker label and a word; wider than 1000 is the same as no wrapping.
pub const TXT_CHARS_PER_ROW: RangeInclusive<i64> = 20..=1000;
/// Characters per row of EBU-STL teletext subtitles (the spec has no parameter for it): the BBC's
/// 37, which leaves room for the three control codes a 40-column teletext row needs.
pub const STL_CHARS_PER_ROW: usize = 37;

/// Limits of subtitle cues (SRT, VTT, STL). Fields are private so a value is always in bounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SubtitleParams {
    max_chars_per_row: usize,
    max_rows: usize,
    max_screen_time_per_row: f64,
}

impl Default for SubtitleParams {
    fn default() -> Self {
        SubtitleParams {
            max_chars_per_row: DEFAULT_CHARS_PER_ROW,
            max_rows: DEFAULT_ROWS,
            max_screen_time_per_row: DEFAULT_SCREEN_TIME_PER_ROW,
        }
    }
}

impl SubtitleParams {
    /// SRT and VTT parameters from the query; `None` takes the default.
    pub fn new(
        max_chars_per_row: Option<i64>,
        max_number_of_rows: Option<i64>,
        max_screen_time_per_row_seconds: Option<f64>,
    ) -> Result<Self, ValidationError> {
        let chars = max_chars_per_row
            .map_or(Ok(DEFAULT_CHARS_PER_ROW), |v| int_in("maxCharsPerRow", v, &SUBTITLE_CHARS_PER_ROW))?;
        Self::with_chars(chars, max_number_of_rows, max_screen_time_per_row_seconds)
    }

    /// EBU-STL parameters: rows and screen time from the query, [`STL_CHARS_PER_ROW`] characters.
    pub fn stl(
        max_number_of_rows: Option<i64>,
        max_screen_time_per_row_seconds: Option<f64>,
    ) -> Result<Self, ValidationError> {
        Self::with_chars(STL_CHARS_PER_ROW, max_number_of_rows, max_screen_time_per_row_seconds)
    }

    fn with_chars(chars: usize, rows: Option<i64>, secs: Option<f64>) -> Result<Self, ValidationError> {
        let max_rows = rows.map_or(Ok(DEFAULT_ROWS), |v| int_in("maxNumberOfRows", v, &ROWS))?;
        let max_screen_time_per_row = match secs {
            None => DEFAULT_SCREEN_TIME_PER_ROW,
            Some(v) if v.is_finite() && SCREEN_TIME_PER_ROW.contains(&v) => v,
            Some(v) => {
                return Err(ValidationError::new(
                    "maxScreenTimePerRowSeconds",
                    format!(
                        "maxScreenTimePerRowSeconds must be a number between {} and {} (got {v})",
                        SCREEN_TIME_PER_ROW.start(),
                        SCREEN_TIME_PER_ROW.end()
                    ),
                ));
            }
        };
        Ok(SubtitleParams { max_chars_per_row: chars, max_rows, max_screen_time_per_row })
    }

    /// Characters (Unicode scalar values) a row may hold.
    pub fn max_chars_per_row(&self) -> usize {
        self.max_chars_per_row
    }

    /// Rows a cue may have (1 or 2).
    pub fn max_rows(&self) -> usize {
        self.max_rows
    }

    /// Seconds a cue may stay on screen per row it has.
    pub fn max_screen_time_per_row(&self) -> f64 {
        self.max_screen_time_per_row
    }
}

/// Options of the TXT export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxtParams {
    pub include_timestamps: bool,
    pub include_speakers: bool,
    pub highlights_only: bool,
    /// Wrap lines at this many characters; `None` writes each turn on one line.
    max_chars_per_row: Option<usize>,
}

impl Default for TxtParams {
    fn default() -> Self {
        TxtParams { include_timestamps: true, include_speakers: true, highlights_only: false, max_chars_per_row: None }
    }
}

impl TxtParams {
    /// TXT parameters from the query; `None` takes the default.
    pub fn new(
        include_timestamps: Option<bool>,
        include_speakers: Option<bool>,
        highlights_only: Option<bool>,
        max_chars_per_row: Option<i64>,
    ) -> Result<Self, ValidationError> {
        Ok(TxtParams {
            include_timestamps: include_timestamps.unwrap_or(true),
            include_speakers: include_speakers.unwrap_or(true),
            highlights_only: highlights_only.unwrap_or(false),
            max_chars_per_row: max_chars_per_row
                .map(|v| int_in("maxCharsPerRow", v, &TXT_CHARS_PER_ROW))
                .transpose()?,
        })
    }

    pub fn max_chars_per_row(&self) -> Option<usize> {
        self.max_chars_per_row
    }
}

fn int_in(field: &'static str, value: i64, range: &RangeInclusive<i64>) -> Result<usize, ValidationError> {
    if range.contains(&value) {
        Ok(value as usize)
    } else {
        Err(ValidationError::new(
            field,
            format!("{field} must be between {} and {} (got {value})", range.start(), range.end()),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_the_spec() {
        let p = SubtitleParams::new(None, None, None).unwrap();
        assert_eq!((p.max_chars_per_row(), p.max_rows(), p.max_screen_time_per_row()), (42, 2, 2.0));
        let t = TxtParams::new(None, None, None, None).unwrap();
        assert_eq!(t, TxtParams::default());
        assert!(t.include_timestamps && t.include_speakers && !t.highlights_only);
    }

    #[test]
    fn bounds_are_inclusive() {
        for (c, r, s) in [(30, 1, 1.0), (45, 2, 10.0)] {
            assert!(SubtitleParams::new(Some(c), Some(r), Some(s)).is_ok());
        }
    }

    #[test]
    fn out_of_bounds_names_the_parameter_and_the_bound() {
        let e = SubtitleParams::new(Some(29), None, None).unwrap_err();
        assert_eq!(e.field, "maxCharsPerRow");
        assert_eq!(e.message, "maxCharsPerRow must be between 30 and 45 (got 29)");
        assert_eq!(SubtitleParams::new(None, Some(3), None).unwrap_err().field, "maxNumberOfRows");
        assert_eq!(SubtitleParams::stl(Some(0), None).unwrap_err().field, "maxNumberOfRows");
        for bad in [0.5, 10.5, f64::NAN, f64::INFINITY, -2.0] {
            assert_eq!(SubtitleParams::new(None, None, Some(bad)).unwrap_err().field, "maxScreenTimePerRowSeconds");
        }
        assert_eq!(TxtParams::new(None, None, None, Some(5)).unwrap_err().field, "maxCharsPerRow");
    }
}
