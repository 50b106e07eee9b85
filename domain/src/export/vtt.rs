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

/// The WebVTT export of a transcript whose text is in `language`, said in a `Language:` header
/// line under the first line (the metadata header players and YouTube read; WebVTT parsers skip
/// header lines they do not know).
pub fn render_vtt_in(transcript: &Transcript, params: &SubtitleParams, language: &str) -> String {
    cues_to_vtt_in(&segment(&transcript.timed_words(), params), Some(language))
}

/// WebVTT text of cues already segmented.
pub fn cues_to_vtt(cues: &[Cue]) -> String {
    cues_to_vtt_in(cues, None)
}

/// WebVTT text of cues already segmented, with a `Language:` header line when given one.
pub fn cues_to_vtt_in(cues: &[Cue], language: Option<&str>) -> String {
    let mut out = format!("{VTT_HEADER}\n");
    if let Some(language) = language.filter(|l| !l.is_empty() && !l.contains("-->") && !l.contains('\n')) {
        out.push_str(&format!("Language: {language}\n"));
    }
    for (n, cue) in cues.iter().enumerate() {
        out.push_str(&format!("\n{}\n{} --> {}\n", n + 1, clock(cue.start, '.'), clock(cue.end, '.')));
        for line in &cue.lines {
            out.push_str(&escape(line));
            out.push('\n');
        }
    }
    out
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_header_and_numbered_cues() {
        let cues = vec![Cue { start: 61.0, end: 62.5, lines: vec!["a --> b & <c>".into()], speaker: "S1".into() }];
        assert_eq!(
            cues_to_vtt(&cues),
            "WEBVTT - Created by Scribe\n\n1\n00:01:01.000 --> 00:01:02.500\na --&gt; b &amp; &lt;c&gt;\n"
        );
    }

    #[test]
    fn says_the_language_in_the_header() {
        let cues = vec![Cue { start: 1.0, end: 2.0, lines: vec!["Olá".into()], speaker: "S1".into() }];
        assert_eq!(
            cues_to_vtt_in(&cues, Some("pt")),
            "WEBVTT - Created by Scribe\nLanguage: pt\n\n1\n00:00:01.000 --> 00:00:02.000\nOlá\n"
        );
    }
}
