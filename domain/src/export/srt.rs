//! SubRip (SRT): numbered cues, `HH:MM:SS,mmm --> HH:MM:SS,mmm`, one or two text rows, a blank line
//! between cues. With `includeSpeakers` (beyond the spec, default false), each cue whose speaker
//! differs from the previous cue's starts with `Name: ` (the speaker's given name, else
//! `Speaker <n>`), counted in the row's `maxCharsPerRow` since the viewer reads it.

use super::clock;
use crate::export::params::SubtitleParams;
use crate::subtitles::{Cue, segment, segment_with_labels};
use crate::transcript::Transcript;

/// The SRT export of a transcript.
pub fn render_srt(transcript: &Transcript, params: &SubtitleParams) -> String {
    render_srt_with(transcript, params, false)
}

/// The SRT export of a transcript, with speaker labels when `include_speakers`.
pub fn render_srt_with(transcript: &Transcript, params: &SubtitleParams, include_speakers: bool) -> String {
    let words = transcript.timed_words();
    if include_speakers {
        cues_to_srt(&segment_with_labels(&words, params, &|spkid: &str| transcript.speaker_label(spkid)))
    } else {
        cues_to_srt(&segment(&words, params))
    }
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
    use crate::transcript::{Segment, Speaker, Word};

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

    fn word(start: f64, text: &str) -> Word {
        Word { start, end: start + 0.4, text: text.into(), conf: 1.0, pristine: true }
    }

    /// Ada says two sentences three seconds apart (two cues), then a never-renamed speaker answers.
    fn dialogue() -> Transcript {
        let mut t = crate::transcript::test_document(vec![
            Segment { speaker: "spk1".into(), words: vec![word(0.0, "Good"), word(0.5, "morning.")] },
            Segment { speaker: "spk1".into(), words: vec![word(4.0, "Shall"), word(4.5, "we?")] },
            Segment { speaker: "spk2".into(), words: vec![word(6.0, "Yes.")] },
        ]);
        t.speakers[0].name = "Ada\nLovelace".into();
        t.speakers.push(Speaker { spkid: "spk2".into(), name: "Speaker 2".into() });
        t
    }

    #[test]
    fn given_a_renamed_speaker_when_exported_with_speakers_then_each_change_of_speaker_starts_with_a_name() {
        let srt = render_srt_with(&dialogue(), &SubtitleParams::default(), true);
        let texts: Vec<&str> = srt.split("\n\n").map(|cue| cue.splitn(3, '\n').nth(2).unwrap().trim_end()).collect();
        assert_eq!(texts, ["Ada Lovelace: Good morning.", "Shall we?", "Speaker 2: Yes."]);
    }

    #[test]
    fn given_the_default_when_exported_then_no_names() {
        let t = dialogue();
        assert_eq!(render_srt(&t, &SubtitleParams::default()), render_srt_with(&t, &SubtitleParams::default(), false));
        assert!(!render_srt(&t, &SubtitleParams::default()).contains("Ada"));
    }

    #[test]
    fn given_a_name_when_exported_with_speakers_then_it_counts_against_max_chars_per_row() {
        // Given 30-character rows and one row: the words alone would fit one cue (29 characters)
        let mut t = dialogue();
        t.segments = vec![Segment {
            speaker: "spk1".into(),
            words: ["Analytical", "engines", "weave", "far"]
                .iter()
                .enumerate()
                .map(|(i, w)| word(i as f64 * 0.4, w))
                .collect(),
        }];
        let p = SubtitleParams::new(Some(30), Some(1), Some(10.0)).unwrap();
        assert_eq!(render_srt(&t, &p).lines().nth(2), Some("Analytical engines weave far"));
        // When the name is printed, then it takes room on the row and the words go on to another cue
        let srt = render_srt_with(&t, &p, true);
        let rows: Vec<&str> =
            srt.lines().filter(|l| !l.is_empty() && !l.contains("-->") && l.parse::<u32>().is_err()).collect();
        assert_eq!(rows, ["Ada Lovelace: Analytical", "engines weave far"]);
        assert!(rows.iter().all(|r| r.chars().count() <= 30));
    }
}
