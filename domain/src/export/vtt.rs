//! WebVTT: the `WEBVTT` line with a creator note, then numbered cues with
//! `HH:MM:SS.mmm --> HH:MM:SS.mmm` and their rows. `&`, `<` and `>` are escaped, as WebVTT requires
//! (which also keeps a `-->` in speech from ending a cue early).
//!
//! With `includeSpeakers` (beyond the spec, default false), every cue's text is a WebVTT voice
//! span, `<v Name>` (the speaker's given name, else `Speaker <n>`): the standard mark of who
//! speaks, which players style and screen readers announce. It goes on every cue, not only at a
//! change of speaker, because a span ends with its cue and a cue without one has no speaker. It is
//! markup, not text on a row (browsers do not draw the name), so it does not count against
//! `maxCharsPerRow`: the rows are the same as without it. SRT, which has no markup, prints
//! `Name: ` on the row instead.

use super::clock;
use crate::export::params::SubtitleParams;
use crate::subtitles::{Cue, segment};
use crate::transcript::{Transcript, one_line};

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

/// [`render_vtt_in`], with each cue in a voice span naming its speaker when `include_speakers`.
pub fn render_vtt_with(
    transcript: &Transcript,
    params: &SubtitleParams,
    language: Option<&str>,
    include_speakers: bool,
) -> String {
    let cues = segment(&transcript.timed_words(), params);
    let name_of = |spkid: &str| transcript.speaker_label(spkid);
    write_vtt(&cues, language, include_speakers.then_some(&name_of as &dyn Fn(&str) -> String))
}

/// WebVTT text of cues already segmented.
pub fn cues_to_vtt(cues: &[Cue]) -> String {
    cues_to_vtt_in(cues, None)
}

/// WebVTT text of cues already segmented, with a `Language:` header line when given one.
pub fn cues_to_vtt_in(cues: &[Cue], language: Option<&str>) -> String {
    write_vtt(cues, language, None)
}

/// WebVTT text of cues, each in a `<v name_of(speaker)>` span when given `name_of`.
fn write_vtt(cues: &[Cue], language: Option<&str>, name_of: Option<&dyn Fn(&str) -> String>) -> String {
    let mut out = format!("{VTT_HEADER}\n");
    if let Some(language) = language.filter(|l| !l.is_empty() && !l.contains("-->") && !l.contains('\n')) {
        out.push_str(&format!("Language: {language}\n"));
    }
    for (n, cue) in cues.iter().enumerate() {
        out.push_str(&format!("\n{}\n{} --> {}\n", n + 1, clock(cue.start, '.'), clock(cue.end, '.')));
        // The span's annotation is one line of escaped text (a line break would end the cue).
        let voice = name_of.map(|name_of| escape(&one_line(&name_of(&cue.speaker)))).filter(|v| !v.is_empty());
        for (k, line) in cue.lines.iter().enumerate() {
            if let (0, Some(voice)) = (k, &voice) {
                out.push_str(&format!("<v {voice}>"));
            }
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
    use crate::transcript::{Segment, Speaker, Word};

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

    fn word(start: f64, text: &str) -> Word {
        Word { start, end: start + 0.4, text: text.into(), conf: 1.0, pristine: true }
    }

    /// A renamed speaker whose name needs escaping says two cues' worth, then Speaker 2 answers.
    fn dialogue() -> Transcript {
        let mut t = crate::transcript::test_document(vec![
            Segment { speaker: "spk1".into(), words: vec![word(0.0, "Good"), word(0.5, "morning.")] },
            Segment { speaker: "spk1".into(), words: vec![word(4.0, "Shall"), word(4.5, "we?")] },
            Segment { speaker: "spk2".into(), words: vec![word(6.0, "Yes.")] },
        ]);
        t.speakers[0].name = "Tom & <Jerry>\n".into();
        t.speakers.push(Speaker { spkid: "spk2".into(), name: "Speaker 2".into() });
        t
    }

    #[test]
    fn given_a_renamed_speaker_when_exported_with_speakers_then_every_cue_is_an_escaped_voice_span() {
        let vtt = render_vtt_with(&dialogue(), &SubtitleParams::default(), Some("en"), true);
        let texts: Vec<&str> = vtt.lines().filter(|l| l.starts_with("<v")).collect();
        assert_eq!(
            texts,
            ["<v Tom &amp; &lt;Jerry&gt;>Good morning.", "<v Tom &amp; &lt;Jerry&gt;>Shall we?", "<v Speaker 2>Yes."]
        );
        assert!(vtt.starts_with("WEBVTT - Created by Scribe\nLanguage: en\n"));
    }

    #[test]
    fn given_speakers_when_exported_then_the_voice_spans_change_nothing_else() {
        let t = dialogue();
        let p = SubtitleParams::new(Some(30), Some(1), None).unwrap();
        let plain = render_vtt_with(&t, &p, None, false);
        assert_eq!(plain, render_vtt(&t, &p));
        // The voice is markup, not text on the row: the same rows and times, without the spans.
        let voiced = render_vtt_with(&t, &p, None, true);
        let unvoiced: String = voiced
            .lines()
            .map(|l| if l.starts_with("<v ") { &l[l.find('>').unwrap() + 1..] } else { l })
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(unvoiced + "\n", plain);
        assert_ne!(voiced, plain);
    }
}
