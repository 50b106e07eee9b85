//! Plain-text export: one paragraph per speaker turn, each a `HH:MM:SS` line (the turn's first word,
//! rounded down) and a `Speaker <n>: <text>` line, paragraphs separated by a blank line.
//! `<n>` is the speaker's 1-based place in the transcript's speaker list; a speaker renamed in the
//! editor (or by a transcriber) is printed by name instead, on one line (`Ada Lovelace: <text>`,
//! see `Transcript::speaker_label`).
//!
//! Options: `includeTimestamps` drops the time line, `includeSpeakers` the speaker label,
//! `highlightsOnly` keeps only words whose middle lies inside a highlight (each stretch of such
//! words in a turn becomes a paragraph), `maxCharsPerRow` wraps the text line at word boundaries
//! (a single word wider than the row stays whole on its own row: text files are not screens).

use crate::export::params::TxtParams;
use crate::transcript::{Transcript, Word};

/// The TXT export of a transcript.
pub fn render_txt(transcript: &Transcript, params: &TxtParams) -> String {
    let mut paragraphs: Vec<String> = Vec::new();
    for seg in &transcript.segments {
        let mut stretch: Vec<&Word> = Vec::new();
        for word in &seg.words {
            let keep = !params.highlights_only || in_highlight(transcript, word);
            if keep && !word.text.trim().is_empty() {
                stretch.push(word);
            } else if !keep && !stretch.is_empty() {
                paragraphs.push(paragraph(transcript, &seg.speaker, &stretch, params));
                stretch.clear();
            }
        }
        if !stretch.is_empty() {
            paragraphs.push(paragraph(transcript, &seg.speaker, &stretch, params));
        }
    }
    let mut out = paragraphs.join("\n");
    if out.is_empty() {
        return out;
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

fn in_highlight(t: &Transcript, w: &Word) -> bool {
    let mid = (w.start + w.end) / 2.0;
    t.highlights.iter().any(|h| h.start <= mid && mid <= h.end)
}

fn paragraph(t: &Transcript, speaker: &str, words: &[&Word], params: &TxtParams) -> String {
    let mut out = String::new();
    if params.include_timestamps {
        let secs = words[0].start.max(0.0).floor() as u64;
        out.push_str(&format!("{:02}:{:02}:{:02}\n", secs / 3600, secs / 60 % 60, secs % 60));
    }
    let mut tokens: Vec<String> = Vec::new();
    if params.include_speakers {
        let label = t.speaker_label(speaker);
        tokens.extend(label.split(' ').map(str::to_owned));
        if let Some(last) = tokens.last_mut() {
            last.push(':');
        }
    }
    tokens.extend(words.iter().flat_map(|w| w.text.split_whitespace().map(str::to_owned)));
    match params.max_chars_per_row() {
        None => out.push_str(&tokens.join(" ")),
        Some(width) => out.push_str(&wrap(&tokens, width)),
    }
    out.push('\n');
    out
}

/// Greedy word wrap at `width` characters.
fn wrap(tokens: &[String], width: usize) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    let mut len = 0;
    for t in tokens {
        let n = t.chars().count();
        if len > 0 && len + 1 + n > width {
            lines.push(std::mem::take(&mut line));
            len = 0;
        }
        if len > 0 {
            line.push(' ');
            len += 1;
        }
        line.push_str(t);
        len += n;
    }
    lines.push(line);
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::{Highlight, Segment, Speaker};

    fn w(start: f64, text: &str) -> Word {
        Word { start, end: start + 0.3, text: text.into(), conf: 1.0, pristine: true }
    }

    fn sample() -> Transcript {
        Transcript {
            id: "j".into(),
            record_id: "j".into(),
            filename: "f.wav".into(),
            start_time_offset: 0.0,
            speakers: vec![
                Speaker { spkid: "A".into(), name: "Speaker 1".into() },
                Speaker { spkid: "B".into(), name: "Speaker 2".into() },
            ],
            segments: vec![
                Segment { speaker: "A".into(), words: vec![w(0.2, "Hello"), w(0.6, "there.")] },
                Segment { speaker: "B".into(), words: vec![w(3661.9, "Général"), w(3662.4, "Kenobi!")] },
            ],
            highlights: vec![Highlight { start: 3662.3, end: 3663.0, text: "Kenobi!".into() }],
        }
    }

    #[test]
    fn default_has_timestamp_and_speaker_lines() {
        let txt = render_txt(&sample(), &TxtParams::default());
        assert_eq!(txt, "00:00:00\nSpeaker 1: Hello there.\n\n01:01:01\nSpeaker 2: Général Kenobi!\n");
    }

    #[test]
    fn options_drop_parts_and_keep_highlights() {
        let p = TxtParams::new(Some(false), Some(false), None, None).unwrap();
        assert_eq!(render_txt(&sample(), &p), "Hello there.\n\nGénéral Kenobi!\n");
        let p = TxtParams::new(None, None, Some(true), None).unwrap();
        assert_eq!(render_txt(&sample(), &p), "01:01:02\nSpeaker 2: Kenobi!\n");
    }

    #[test]
    fn wraps_at_max_chars_per_row_counting_characters() {
        let p = TxtParams::new(Some(false), None, None, Some(20)).unwrap();
        let txt = render_txt(&sample(), &p);
        assert_eq!(txt, "Speaker 1: Hello\nthere.\n\nSpeaker 2: Général\nKenobi!\n");
        assert!(txt.lines().all(|l| l.chars().count() <= 20));
    }

    #[test]
    fn given_a_renamed_speaker_when_exported_then_the_name_replaces_speaker_n() {
        let mut t = sample();
        t.speakers[1].name = "Obi-Wan\r\nKenobi".into();
        let txt = render_txt(&t, &TxtParams::default());
        assert_eq!(txt, "00:00:00\nSpeaker 1: Hello there.\n\n01:01:01\nObi-Wan Kenobi: Général Kenobi!\n");
        // A name wraps like the words it precedes.
        let p = TxtParams::new(Some(false), None, None, Some(20)).unwrap();
        assert_eq!(render_txt(&t, &p), "Speaker 1: Hello\nthere.\n\nObi-Wan Kenobi:\nGénéral Kenobi!\n");
    }

    #[test]
    fn given_never_renamed_speakers_listed_out_of_order_when_exported_then_numbered_by_place_as_before() {
        // Given default names that disagree with the list order, and a blank name
        let mut t = sample();
        t.speakers[0].name = "Speaker 2".into();
        t.speakers[1].name = " ".into();
        // When exported, then each is `Speaker <place in the list>`, as before names were printed
        let txt = render_txt(&t, &TxtParams::default());
        assert_eq!(txt, "00:00:00\nSpeaker 1: Hello there.\n\n01:01:01\nSpeaker 2: Général Kenobi!\n");
    }
}
