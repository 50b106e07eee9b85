//! The rules for a document people edit (a transcriber's correction, a translator's target
//! text): what a saved document must satisfy, which words count as edited, and the cues a
//! translator works against. The work API applies them before a revision is stored.
//!
//! A saved document has the export-JSON shape ([`Transcript`]). It is valid when it has at
//! least one word and every segment has at least one (an empty transcript is not an edit: a job
//! whose words should all go is deleted), every word has text and times inside the media, words run in time order,
//! every segment's speaker is declared once, and highlights lie inside the media.

use crate::error::ValidationError;
use crate::transcript::{Transcript, Word};
use crate::translation::{self, Sentence};

/// How far past the probed end of the media a time may lie (probes round, engines pad).
pub const END_TOLERANCE_S: f64 = 0.5;
/// Times closer than this (seconds) are the same time when comparing with the machine draft.
const SAME_TIME_S: f64 = 0.001;

/// Checks the outline every document sent to the service has, saved or only previewed: at least
/// one speaker, at least one segment, and at least one word in each segment (the document
/// schema's `minItems`).
pub fn validate_outline(doc: &Transcript) -> Result<(), ValidationError> {
    if doc.speakers.is_empty() {
        return Err(ValidationError::new(
            "document.speakers",
            "document.speakers is empty: declare at least one speaker",
        ));
    }
    if doc.segments.is_empty() {
        return Err(ValidationError::new("document.segments", "document has no words: the text must not be empty"));
    }
    match doc.segments.iter().position(|segment| segment.words.is_empty()) {
        Some(s) => Err(ValidationError::new(
            format!("document.segments[{s}].words"),
            format!(
                "document.segments[{s}].words is empty: a segment holds at least one word (leave out a segment with none)"
            ),
        )),
        None => Ok(()),
    }
}

/// Checks a document saved for a task on media of `duration_s` seconds. Errors name the place,
/// e.g. `document.segments[2].words[5].end`.
pub fn validate_document(doc: &Transcript, duration_s: f64) -> Result<(), ValidationError> {
    validate_outline(doc)?;
    let limit = duration_s + END_TOLERANCE_S;
    let mut declared = std::collections::HashSet::new();
    for (i, speaker) in doc.speakers.iter().enumerate() {
        let field = format!("document.speakers[{i}]");
        if speaker.spkid.trim().is_empty() {
            return Err(ValidationError::new(format!("{field}.spkid"), format!("{field}.spkid must not be empty")));
        }
        if speaker.name.trim().is_empty() {
            return Err(ValidationError::new(format!("{field}.name"), format!("{field}.name must not be empty")));
        }
        if !declared.insert(speaker.spkid.as_str()) {
            return Err(ValidationError::new(
                format!("{field}.spkid"),
                format!("{field}.spkid {:?} is declared twice", speaker.spkid),
            ));
        }
    }
    let mut previous_start = 0.0_f64;
    for (s, segment) in doc.segments.iter().enumerate() {
        if !declared.contains(segment.speaker.as_str()) {
            return Err(ValidationError::new(
                format!("document.segments[{s}].speaker"),
                format!("document.segments[{s}].speaker {:?} is not declared in document.speakers", segment.speaker),
            ));
        }
        for (w, word) in segment.words.iter().enumerate() {
            let field = format!("document.segments[{s}].words[{w}]");
            if word.text.trim().is_empty() {
                return Err(ValidationError::new(format!("{field}.text"), format!("{field}.text must not be empty")));
            }
            if !(word.start.is_finite() && word.start >= 0.0 && word.start <= limit) {
                return Err(ValidationError::new(
                    format!("{field}.start"),
                    format!("{field}.start must be between 0 and {duration_s:.3} seconds (the media's length)"),
                ));
            }
            if !(word.end.is_finite() && word.end >= word.start && word.end <= limit) {
                return Err(ValidationError::new(
                    format!("{field}.end"),
                    format!(
                        "{field}.end must be at least its start and at most {duration_s:.3} seconds (the media's length)"
                    ),
                ));
            }
            if word.start + SAME_TIME_S < previous_start {
                return Err(ValidationError::new(
                    format!("{field}.start"),
                    format!("{field}.start is before the previous word's start: words must be in time order"),
                ));
            }
            if !(word.conf.is_finite() && (0.0..=1.0).contains(&word.conf)) {
                return Err(ValidationError::new(
                    format!("{field}.conf"),
                    format!("{field}.conf must be between 0 and 1"),
                ));
            }
            previous_start = word.start;
        }
    }
    for (i, h) in doc.highlights.iter().enumerate() {
        if !(h.start.is_finite() && h.end.is_finite() && 0.0 <= h.start && h.start <= h.end && h.end <= limit) {
            return Err(ValidationError::new(
                format!("document.highlights[{i}]"),
                format!("document.highlights[{i}] must have 0 <= start <= end <= {duration_s:.3} seconds"),
            ));
        }
    }
    Ok(())
}

/// Prepares a saved document for storage: a word typed with spaces in it becomes several words
/// sharing its time span (in proportion to their length), and a word stays `pristine` only if
/// the machine draft `base` has the same word at the same times. Without a draft (a
/// translation) every word is people's work.
pub fn prepare_saved(mut doc: Transcript, base: Option<&Transcript>) -> Transcript {
    for segment in &mut doc.segments {
        segment.words = segment.words.drain(..).flat_map(split_word).collect();
    }
    let machine: Vec<&Word> = base.map(|b| b.segments.iter().flat_map(|s| &s.words).collect()).unwrap_or_default();
    for word in doc.segments.iter_mut().flat_map(|s| &mut s.words) {
        word.pristine = word.pristine && machine.iter().any(|m| same_word(m, word));
    }
    doc
}

/// The number of words in a document.
pub fn word_count(doc: &Transcript) -> u64 {
    doc.segments.iter().map(|s| s.words.len() as u64).sum()
}

/// The cues a translator translates: the source document's sentences (cut as machine
/// translation cuts them: at sentence ends, speaker changes and long pauses), so a cue never
/// stops in the middle of a sentence the way a two-row caption does. The export lays the
/// translation out as subtitles afterwards.
pub fn source_cues(source: &Transcript) -> Vec<Sentence> {
    translation::sentences(source)
}

fn same_word(a: &Word, b: &Word) -> bool {
    a.text == b.text && (a.start - b.start).abs() < SAME_TIME_S && (a.end - b.end).abs() < SAME_TIME_S
}

/// Below this many characters a second (spaces not counted) a text is too sparse to spread over
/// its span: a translator's short translation of a long sentence would end up one word per
/// subtitle.
const SPARSE_CPS: f64 = 6.0;
/// The reading speed such a text is timed at instead, from the start of its span (at least 1 s).
const READING_CPS: f64 = 15.0;

/// "two words" over 0–1 s → "two" 0–0.5 s, "words" 0.5–1 s (split by characters). A text much
/// shorter than its span (under [`SPARSE_CPS`]) takes only the first [`READING_CPS`] share.
fn split_word(word: Word) -> Vec<Word> {
    let parts: Vec<&str> = word.text.split_whitespace().collect();
    if parts.len() <= 1 {
        let text = word.text.trim().to_owned();
        return vec![Word { text, ..word }];
    }
    let total: usize = parts.iter().map(|p| p.chars().count()).sum();
    let whole = word.end - word.start;
    let sparse = whole > 0.0 && (total as f64) < SPARSE_CPS * whole;
    let span = if sparse { (total as f64 / READING_CPS).max(1.0).min(whole) } else { whole };
    let last_end = word.start + span;
    let mut at = word.start;
    let mut done = 0usize;
    parts
        .iter()
        .enumerate()
        .map(|(i, part)| {
            done += part.chars().count();
            let end = if i + 1 == parts.len() { last_end } else { word.start + span * done as f64 / total as f64 };
            let w = Word { start: at, end, text: (*part).to_owned(), conf: word.conf, pristine: word.pristine };
            at = end;
            w
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::{Highlight, Segment, Speaker};

    fn word(start: f64, end: f64, text: &str) -> Word {
        Word { start, end, text: text.into(), conf: 0.9, pristine: true }
    }

    fn doc(words: Vec<Word>) -> Transcript {
        Transcript {
            id: "j".into(),
            record_id: "j".into(),
            filename: "a.wav".into(),
            start_time_offset: 0.0,
            speakers: vec![Speaker { spkid: "S1".into(), name: "Speaker 1".into() }],
            segments: vec![Segment { speaker: "S1".into(), words }],
            highlights: vec![],
        }
    }

    fn refused_field(d: &Transcript) -> String {
        validate_document(d, 10.0).unwrap_err().field
    }

    #[test]
    fn given_a_document_without_speakers_segments_or_words_when_its_outline_is_checked_then_the_empty_list_is_named() {
        let mut d = doc(vec![word(0.5, 1.0, "And")]);
        assert_eq!(validate_outline(&d), Ok(()));
        d.segments.push(Segment { speaker: "S1".into(), words: vec![] });
        assert_eq!(validate_outline(&d).unwrap_err().field, "document.segments[1].words");
        d.segments.clear();
        assert_eq!(validate_outline(&d).unwrap_err().field, "document.segments");
        d.speakers.clear();
        assert_eq!(validate_outline(&d).unwrap_err().field, "document.speakers");
        assert_eq!(refused_field(&d), "document.speakers");
    }

    #[test]
    fn given_a_good_document_when_validated_then_it_passes() {
        let mut d = doc(vec![word(0.5, 1.0, "And"), word(1.0, 1.4, "so")]);
        d.highlights.push(Highlight { start: 0.5, end: 1.4, text: "And so".into() });
        assert_eq!(validate_document(&d, 10.0), Ok(()));
    }

    #[test]
    fn given_broken_documents_when_validated_then_the_place_is_named() {
        assert_eq!(refused_field(&doc(vec![word(0.5, 1.0, " ")])), "document.segments[0].words[0].text");
        assert_eq!(refused_field(&doc(vec![word(0.5, 11.0, "late")])), "document.segments[0].words[0].end");
        assert_eq!(refused_field(&doc(vec![word(-1.0, 1.0, "early")])), "document.segments[0].words[0].start");
        assert_eq!(refused_field(&doc(vec![word(0.5, 0.4, "backwards")])), "document.segments[0].words[0].end");
        assert_eq!(
            refused_field(&doc(vec![word(2.0, 2.5, "b"), word(1.0, 1.5, "a")])),
            "document.segments[0].words[1].start"
        );
        let mut no_segments = doc(vec![]);
        no_segments.segments.clear();
        assert_eq!(refused_field(&no_segments), "document.segments");
        assert_eq!(refused_field(&doc(vec![])), "document.segments[0].words");
        let mut empty_turn = doc(vec![]);
        empty_turn.segments.push(Segment { speaker: "S1".into(), words: vec![word(0.5, 1.0, "x")] });
        assert_eq!(refused_field(&empty_turn), "document.segments[0].words", "every segment holds a word");
        let mut undeclared = doc(vec![word(0.5, 1.0, "x")]);
        undeclared.segments[0].speaker = "S9".into();
        assert_eq!(refused_field(&undeclared), "document.segments[0].speaker");
        let mut twice = doc(vec![word(0.5, 1.0, "x")]);
        twice.speakers.push(twice.speakers[0].clone());
        assert_eq!(refused_field(&twice), "document.speakers[1].spkid");
        let mut highlight = doc(vec![word(0.5, 1.0, "x")]);
        highlight.highlights.push(Highlight { start: 3.0, end: 2.0, text: "x".into() });
        assert_eq!(refused_field(&highlight), "document.highlights[0]");
    }

    #[test]
    fn given_the_machine_draft_when_a_word_is_changed_then_only_that_word_loses_pristine() {
        let draft = doc(vec![word(0.5, 1.0, "And"), word(1.0, 1.4, "sew")]);
        let saved = doc(vec![word(0.5, 1.0, "And"), word(1.0, 1.4, "so")]);
        let prepared = prepare_saved(saved, Some(&draft));
        let flags: Vec<bool> = prepared.segments[0].words.iter().map(|w| w.pristine).collect();
        assert_eq!(flags, [true, false]);
    }

    #[test]
    fn given_no_draft_when_saved_then_every_word_is_human_work() {
        let prepared = prepare_saved(doc(vec![word(0.0, 1.0, "Olá")]), None);
        assert!(!prepared.segments[0].words[0].pristine);
    }

    #[test]
    fn given_a_word_with_spaces_when_saved_then_it_becomes_timed_words() {
        let prepared = prepare_saved(doc(vec![word(1.0, 2.0, "que  horas")]), None);
        let words = &prepared.segments[0].words;
        assert_eq!(words.len(), 2);
        assert_eq!((words[0].text.as_str(), words[0].start), ("que", 1.0));
        assert!((words[0].end - (1.0 + 3.0 / 8.0)).abs() < 1e-9);
        assert_eq!((words[1].text.as_str(), words[1].end), ("horas", 2.0));
        assert_eq!(word_count(&prepared), 2);
    }

    #[test]
    fn a_short_translation_of_a_long_sentence_is_timed_at_reading_speed_from_its_start() {
        let words = split_word(word(2.0, 12.0, "Frase traduzida número 0"));
        let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
        assert_eq!(texts, ["Frase", "traduzida", "número", "0"]);
        assert_eq!(words[0].start, 2.0);
        assert!((words[3].end - (2.0 + 21.0 / READING_CPS)).abs() < 1e-9, "{words:?}");
        let full = split_word(word(0.0, 4.0, "a sentence as long as its speech"));
        assert_eq!(full.last().unwrap().end, 4.0);
    }

    #[test]
    fn source_cues_follow_the_source_words() {
        let cues = source_cues(&doc(vec![word(0.5, 1.0, "What"), word(1.0, 1.5, "time?")]));
        assert_eq!(cues.len(), 1);
        assert_eq!(cues[0].text, "What time?");
        assert_eq!(cues[0].start, 0.5);
    }

    #[test]
    fn source_cues_end_at_sentence_ends_not_at_caption_rows() {
        let words =
            "The weather in New York is sunny today, with a light breeze from the west and clear skies. Is it cold?"
                .split(' ')
                .enumerate()
                .map(|(i, t)| word(i as f64 * 0.3, i as f64 * 0.3 + 0.25, t))
                .collect();
        let cues = source_cues(&doc(words));
        let texts: Vec<&str> = cues.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "The weather in New York is sunny today, with a light breeze from the west and clear skies.",
                "Is it cold?"
            ]
        );
    }
}
