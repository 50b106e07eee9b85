//! Translated subtitles from a timed transcript: cut it into sentences, each with the time span
//! its words were spoken in; after the sentences are translated (elsewhere, by a model), build the
//! translated document, each sentence's words laid over its source span.
//!
//! Translated words have no timing of their own (a translation reorders, merges and splits
//! words), so each translated sentence keeps its source sentence's span and its words share it in
//! proportion to their length. The subtitle segmenter then cuts the document into cues with the
//! same broadcast rules as captions (characters per row, rows, reading speed); its preference for
//! breaking at sentence ends keeps each sentence in its own cues where the timing allows.

use crate::transcript::{Highlight, Segment, Transcript, Word};

/// A sentence ends at a pause this long even without punctuation (the subtitle segmenter's
/// forced break, so a sentence never spans a cue break the captions would make anyway).
pub const SENTENCE_PAUSE: f64 = crate::subtitles::FORCED_BREAK_PAUSE;
/// Longest sentence in words: unpunctuated speech is cut here, so a translation stays within
/// the model's window and a sentence within a few cues.
pub const MAX_SENTENCE_WORDS: usize = 40;

/// One sentence of a transcript, in its speaker's turn, with the span of its words.
#[derive(Debug, Clone, PartialEq)]
pub struct Sentence {
    pub speaker: String,
    /// Start of the first word and end of the last, seconds.
    pub start: f64,
    pub end: f64,
    /// The words joined by spaces.
    pub text: String,
    /// Mean confidence of its words.
    pub conf: f64,
}

/// The transcript's sentences, in order. A sentence ends after a word ending in `.`, `!`, `?`
/// or `…` (closing quotes and brackets may follow), at a change of speaker, at a pause of
/// [`SENTENCE_PAUSE`], or after [`MAX_SENTENCE_WORDS`] words.
pub fn sentences(transcript: &Transcript) -> Vec<Sentence> {
    let mut out = Vec::new();
    let mut current: Vec<&Word> = Vec::new();
    let mut speaker = "";
    let flush = |words: &mut Vec<&Word>, speaker: &str, out: &mut Vec<Sentence>| {
        if words.is_empty() {
            return;
        }
        let text = words.iter().map(|w| w.text.trim()).filter(|t| !t.is_empty()).collect::<Vec<_>>().join(" ");
        if !text.is_empty() {
            out.push(Sentence {
                speaker: speaker.to_owned(),
                start: words[0].start,
                end: words.iter().map(|w| w.end).fold(words[0].start, f64::max),
                text,
                conf: words.iter().map(|w| w.conf).sum::<f64>() / words.len() as f64,
            });
        }
        words.clear();
    };
    for segment in &transcript.segments {
        if segment.speaker != speaker {
            flush(&mut current, speaker, &mut out);
            speaker = &segment.speaker;
        }
        for word in &segment.words {
            if let Some(last) = current.last()
                && word.start - last.end >= SENTENCE_PAUSE
            {
                flush(&mut current, speaker, &mut out);
            }
            current.push(word);
            if ends_sentence(&word.text) || current.len() >= MAX_SENTENCE_WORDS {
                flush(&mut current, speaker, &mut out);
            }
        }
    }
    flush(&mut current, speaker, &mut out);
    out
}

/// Whether a word ends a sentence: `.`, `!`, `?` or `…`, possibly inside closing quotes or brackets.
pub fn ends_sentence(word: &str) -> bool {
    let core = word.trim_end_matches(['"', '\'', '”', '’', ')', ']', '»']);
    core.ends_with(['.', '!', '?', '…', '。', '？', '！'])
}

/// The translated document: `source`'s header, speakers and highlight spans, with one speaker
/// turn per run of same-speaker sentences and each sentence's `translations[i]` laid over
/// `sentences[i]`'s span. Empty translations leave their span empty.
pub fn translated_document(source: &Transcript, sentences: &[Sentence], translations: &[String]) -> Transcript {
    debug_assert_eq!(sentences.len(), translations.len());
    let mut segments: Vec<Segment> = Vec::new();
    for (sentence, text) in sentences.iter().zip(translations) {
        let words = spread(sentence, text);
        if words.is_empty() {
            continue;
        }
        match segments.last_mut() {
            Some(seg) if seg.speaker == sentence.speaker => seg.words.extend(words),
            _ => segments.push(Segment { speaker: sentence.speaker.clone(), words }),
        }
    }
    let highlights = source
        .highlights
        .iter()
        .filter_map(|h| {
            let inside: Vec<&str> = segments
                .iter()
                .flat_map(|s| &s.words)
                .filter(|w| (w.start + w.end) / 2.0 >= h.start && (w.start + w.end) / 2.0 <= h.end)
                .map(|w| w.text.as_str())
                .collect();
            (!inside.is_empty()).then(|| Highlight { start: h.start, end: h.end, text: inside.join(" ") })
        })
        .collect();
    Transcript {
        id: source.id.clone(),
        record_id: source.record_id.clone(),
        filename: source.filename.clone(),
        start_time_offset: source.start_time_offset,
        speakers: source.speakers.clone(),
        segments,
        highlights,
    }
}

/// The words of `text` over the sentence's span, each getting a share of it proportional to
/// its length plus one (for the space after it), times rounded to milliseconds. Their confidence
/// is the source sentence's; `pristine` is true as for any machine output no person has edited.
fn spread(sentence: &Sentence, text: &str) -> Vec<Word> {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let weights: Vec<f64> = tokens.iter().map(|t| t.chars().count() as f64 + 1.0).collect();
    let total: f64 = weights.iter().sum();
    let span = (sentence.end - sentence.start).max(0.0);
    let round = |x: f64| (x * 1000.0).round() / 1000.0;
    let mut at = 0.0;
    tokens
        .iter()
        .zip(&weights)
        .map(|(token, weight)| {
            let start = sentence.start + span * at / total;
            at += weight;
            let end = sentence.start + span * at / total;
            Word {
                start: round(start),
                end: round(end).max(round(start)),
                text: (*token).to_owned(),
                conf: sentence.conf,
                pristine: true,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(start: f64, end: f64, text: &str) -> Word {
        Word { start, end, text: text.into(), conf: 0.8, pristine: true }
    }

    fn doc(segments: Vec<(&str, Vec<Word>)>) -> Transcript {
        crate::transcript::test_document(
            segments.into_iter().map(|(s, words)| Segment { speaker: s.into(), words }).collect(),
        )
    }

    #[test]
    fn sentences_end_at_punctuation_speaker_changes_and_pauses() {
        let t = doc(vec![
            (
                "spk1",
                vec![word(0.0, 0.4, "Hello"), word(0.5, 0.9, "there."), word(1.0, 1.3, "How"), word(1.3, 1.6, "are")],
            ),
            ("spk2", vec![word(1.7, 2.0, "Fine,"), word(2.0, 2.4, "thanks"), word(5.0, 5.5, "really")]),
        ]);
        let s = sentences(&t);
        let texts: Vec<&str> = s.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(texts, vec!["Hello there.", "How are", "Fine, thanks", "really"]);
        assert_eq!((s[0].start, s[0].end), (0.0, 0.9));
        assert_eq!(s[2].speaker, "spk2");
        assert!(ends_sentence("said.\"") && ends_sentence("why?)") && !ends_sentence("Mr"));
    }

    #[test]
    fn a_long_unpunctuated_run_is_cut() {
        let words = (0..100).map(|i| word(i as f64 * 0.3, i as f64 * 0.3 + 0.25, "la")).collect();
        let s = sentences(&doc(vec![("spk1", words)]));
        assert_eq!(s.len(), 3);
        assert!(s.iter().all(|s| s.text.split(' ').count() <= MAX_SENTENCE_WORDS));
    }

    #[test]
    fn translated_words_stay_inside_their_sentence_span() {
        let t = doc(vec![(
            "spk1",
            vec![word(1.0, 1.5, "What"), word(1.5, 1.7, "time"), word(1.7, 1.8, "is"), word(1.8, 2.2, "it?")],
        )]);
        let s = sentences(&t);
        let out = translated_document(&t, &s, &["Que horas são?".to_string()]);
        let words = &out.segments[0].words;
        assert_eq!(words.iter().map(|w| w.text.as_str()).collect::<Vec<_>>(), vec!["Que", "horas", "são?"]);
        assert_eq!(words[0].start, 1.0);
        assert_eq!(words[2].end, 2.2);
        assert!(words.windows(2).all(|p| p[0].end <= p[1].start + 1e-9 && p[0].start < p[1].start));
        assert!(words[1].duration() > words[0].duration(), "longer words get more time");
        assert_eq!(out.speakers, t.speakers);
    }

    #[test]
    fn same_speaker_sentences_share_a_turn_and_empty_ones_vanish() {
        let t = doc(vec![
            ("spk1", vec![word(0.0, 1.0, "One."), word(1.0, 2.0, "Two.")]),
            ("spk2", vec![word(2.0, 3.0, "Three.")]),
        ]);
        let s = sentences(&t);
        let out = translated_document(&t, &s, &["Um.".into(), "Dois.".into(), "".into()]);
        assert_eq!(out.segments.len(), 1);
        assert_eq!(out.segments[0].words.len(), 2);
    }
}
