//! WebVTT: the `WEBVTT` line with a creator note, then numbered cues with
//! `HH:MM:SS.mmm --> HH:MM:SS.mmm` and their rows. `&`, `<` and `>` are escaped, as WebVTT requires
//! (which also keeps a `-->` in speech from ending a cue early).

use super::clock;
use crate::export::params::SubtitleParams;
use crate::subtitles::{Cue, segment};
use crate::transcript::Transcript;

/// The first line of every VTT export.
pub const VTT_HEADER: &str = "WEBVTT - Created by Scribe";

/// The WebVTT export of a transcript.
pub fn render_vtt(transcript: &Transcript, params: &SubtitleParams) -> String {
    cues_to_vtt(&segment(&transcript.timed_words(), params))
}

/// WebVTT text of cues already segmented.
pub fn cues_to_vtt(cues: &[Cue]) -> String {
    let mut out = format!("{VTT_HEADER}\n");
    for (n, cue) in cues.iter().enumerate() {
        out.push_str(&format!(
            "\n{}\n{} --> {}\n",
            n + 1,
            clock(cue.start, '.'),
            clock(cue.end, '.')
        ));
        for line in &cue.lines {
            out.push_str(&escape(line));
            out.push('\n');
        }
    }
    out
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_header_and_numbered_cues() {
        let cues = vec![Cue {
            start: 61.0,
            end: 62.5,
            lines: vec!["a --> b & <c>".into()],
            speaker: "S1".into(),
        }];
        assert_eq!(
            cues_to_vtt(&cues),
            "WEBVTT - Created by Scribe\n\n1\n00:01:01.000 --> 00:01:02.500\na --&gt; b &amp; &lt;c&gt;\n"
        );
    }
}
