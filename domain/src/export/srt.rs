//! SubRip (SRT): numbered cues, `HH:MM:SS,mmm --> HH:MM:SS,mmm`, one or two text rows, a blank line
//! between cues.

use super::clock;
use crate::export::params::SubtitleParams;
use crate::subtitles::{Cue, segment};
use crate::transcript::Transcript;

/// The SRT export of a transcript.
pub fn render_srt(transcript: &Transcript, params: &SubtitleParams) -> String {
    cues_to_srt(&segment(&transcript.timed_words(), params))
}

/// SRT text of cues already segmented.
pub fn cues_to_srt(cues: &[Cue]) -> String {
    let mut out = String::new();
    for (n, cue) in cues.iter().enumerate() {
        if n > 0 {
            out.push('\n');
        }
        out.push_str(&format!("{}\n{} --> {}\n", n + 1, clock(cue.start, ','), clock(cue.end, ',')));
        for line in &cue.lines {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_numbered_cues_separated_by_blank_lines() {
        let cues = vec![
            Cue {
                start: 0.0,
                end: 1.5,
                lines: vec!["And so my fellow".into(), "Americans,".into()],
                speaker: "S1".into(),
            },
            Cue { start: 2.0, end: 3.25, lines: vec!["ask not".into()], speaker: "S1".into() },
        ];
        assert_eq!(
            cues_to_srt(&cues),
            "1\n00:00:00,000 --> 00:00:01,500\nAnd so my fellow\nAmericans,\n\n2\n00:00:02,000 --> 00:00:03,250\nask not\n"
        );
    }
}
