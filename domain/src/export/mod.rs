//! Renderers of a finished transcript: SRT, WebVTT, plain text, the JSON export document and
//! EBU-STL, plus their validated parameters. Pure functions: text or bytes in memory.

pub mod json;
pub mod params;
pub mod srt;
pub mod stl;
pub mod txt;
pub mod vtt;

pub use json::{render_json, render_json_in};
pub use params::{SubtitleParams, TxtParams, ValidationError};
pub use srt::{cues_to_srt, render_srt, render_srt_with};
pub use stl::{StlDate, StlError, StlInfo, cues_to_stl, render_stl};
pub use txt::render_txt;
pub use vtt::{cues_to_vtt, cues_to_vtt_in, render_vtt, render_vtt_in, render_vtt_with};

/// `HH:MM:SS<sep>mmm` for SRT (`,`) and WebVTT (`.`), rounded to the millisecond.
pub(crate) fn clock(seconds: f64, separator: char) -> String {
    let ms = (seconds.max(0.0) * 1000.0).round() as u64;
    let (h, m, s, ms) = (ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000);
    format!("{h:02}:{m:02}:{s:02}{separator}{ms:03}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn clock_rounds_to_milliseconds() {
        assert_eq!(super::clock(3723.0456, ','), "01:02:03,046");
        assert_eq!(super::clock(-1.0, '.'), "00:00:00.000");
    }
}
