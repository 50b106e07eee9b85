//! Giving a machine transcript its speakers: every word gets the speaker diarization found at
//! its time, and the segments are cut where the speaker changes.
//!
//! Pure: the caller (the ASR stage) runs diarization and passes a function from a word to a
//! speaker number. Segments keep the recogniser's own boundaries and are also split at every
//! change of speaker, so a segment is always one speaker's words. Speakers are listed, and
//! named `Speaker <n>`, in order of first appearance, so the first voice heard is Speaker 1.
//! A second transcript of the same media (Whisper's English translation) takes its speakers
//! from the first by time ([`speakers_like`]).

use crate::transcript::{Segment, Speaker, Transcript, Word};

/// How many speakers diarization looks for, from the job's `numberOfSpeakers`.
///
/// The spec's `numberOfSpeakers` is the number of speakers in the file. Given by the client
/// (1 to 5) it is that number; left out, the spec's default of 2 is only a bound, so a
/// monologue stays one speaker; 0 (given) asks for the number to be estimated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpeakerCount {
    /// One speaker: diarization is skipped.
    One,
    /// Exactly this many (2 to 5) whenever that many voices speak.
    Exactly(u8),
    /// At most this many (the default's meaning).
    AtMost(u8),
    /// As many as the voices tell apart (up to the API's maximum of 5).
    Estimate,
}

impl SpeakerCount {
    /// `number` is the job's `numberOfSpeakers` (the default applied), `given` whether the
    /// client set it.
    pub fn of(number: u8, given: bool) -> SpeakerCount {
        match (number, given) {
            (0, _) => SpeakerCount::Estimate,
            (1, _) => SpeakerCount::One,
            (n, true) => SpeakerCount::Exactly(n),
            (n, false) => SpeakerCount::AtMost(n),
        }
    }
}

/// `doc` with each word's speaker given by `speaker_of` (any numbering; renumbered here).
pub fn assign_speakers(doc: &Transcript, mut speaker_of: impl FnMut(&Word) -> usize) -> Transcript {
    let mut order: Vec<usize> = Vec::new();
    let mut segments: Vec<Segment> = Vec::new();
    for seg in &doc.segments {
        let mut current: Option<(usize, Vec<Word>)> = None;
        for word in &seg.words {
            let raw = speaker_of(word);
            let n = match order.iter().position(|&s| s == raw) {
                Some(p) => p,
                None => {
                    order.push(raw);
                    order.len() - 1
                }
            };
            match &mut current {
                Some((s, words)) if *s == n => words.push(word.clone()),
                _ => {
                    if let Some((s, words)) = current.take() {
                        segments.push(Segment { speaker: spkid(s), words });
                    }
                    current = Some((n, vec![word.clone()]));
                }
            }
        }
        if let Some((s, words)) = current {
            segments.push(Segment { speaker: spkid(s), words });
        }
    }
    let speakers =
        (0..order.len().max(1)).map(|n| Speaker { spkid: spkid(n), name: format!("Speaker {}", n + 1) }).collect();
    Transcript { speakers, segments, ..doc.clone() }
}

/// `doc`, a second transcript of the same media (Whisper's English translation of the speech),
/// with the speakers of `reference`, the diarized transcript: each word goes to the reference
/// speaker whose words overlap it longest in time, else to the one whose word is nearest. The
/// reference's speaker ids and names are kept, so both documents call a voice the same.
pub fn speakers_like(doc: &Transcript, reference: &Transcript) -> Transcript {
    let spoken: Vec<(&Word, &str)> =
        reference.segments.iter().flat_map(|s| s.words.iter().map(move |w| (w, s.speaker.as_str()))).collect();
    let Some(&(_, first)) = spoken.first() else { return doc.clone() };
    let speaker_of = |word: &Word| -> &str {
        let mut overlap: Vec<(&str, f64)> = Vec::new();
        for &(w, s) in &spoken {
            let o = w.end.min(word.end) - w.start.max(word.start);
            if o > 0.0 {
                match overlap.iter_mut().find(|(id, _)| *id == s) {
                    Some((_, total)) => *total += o,
                    None => overlap.push((s, o)),
                }
            }
        }
        if let Some((s, _)) = overlap.iter().max_by(|a, b| a.1.total_cmp(&b.1)) {
            return s;
        }
        let mid = (word.start + word.end) / 2.0;
        let distance = |w: &Word| {
            if mid < w.start {
                w.start - mid
            } else if mid > w.end {
                mid - w.end
            } else {
                0.0
            }
        };
        spoken.iter().min_by(|a, b| distance(a.0).total_cmp(&distance(b.0))).map_or(first, |&(_, s)| s)
    };
    let mut segments: Vec<Segment> = Vec::new();
    for seg in &doc.segments {
        let mut current: Option<Segment> = None;
        for word in &seg.words {
            let speaker = speaker_of(word);
            match &mut current {
                Some(c) if c.speaker == speaker => c.words.push(word.clone()),
                _ => {
                    segments.extend(current.take());
                    current = Some(Segment { speaker: speaker.to_owned(), words: vec![word.clone()] });
                }
            }
        }
        segments.extend(current);
    }
    let speakers =
        reference.speakers.iter().filter(|sp| segments.iter().any(|s| s.speaker == sp.spkid)).cloned().collect();
    Transcript { speakers, segments, ..doc.clone() }
}

fn spkid(n: usize) -> String {
    format!("spk{}", n + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_given_number_is_the_number_and_the_default_a_bound() {
        // Given numberOfSpeakers as the client sent it (or the default 2 when left out),
        // when diarization is planned, then:
        assert_eq!(SpeakerCount::of(3, true), SpeakerCount::Exactly(3));
        assert_eq!(SpeakerCount::of(2, true), SpeakerCount::Exactly(2));
        assert_eq!(SpeakerCount::of(2, false), SpeakerCount::AtMost(2));
        assert_eq!(SpeakerCount::of(1, true), SpeakerCount::One);
        assert_eq!(SpeakerCount::of(0, true), SpeakerCount::Estimate);
    }

    fn word(start: f64, text: &str) -> Word {
        Word { start, end: start + 0.5, text: text.into(), conf: 1.0, pristine: true }
    }

    fn doc(segments: Vec<Vec<Word>>) -> Transcript {
        crate::transcript::test_document(
            segments.into_iter().map(|words| Segment { speaker: "spk1".into(), words }).collect(),
        )
    }

    #[test]
    fn splits_at_speaker_changes_and_numbers_by_first_appearance() {
        let d = doc(vec![vec![word(0.0, "Hello"), word(1.0, "there."), word(2.0, "Hi!")], vec![word(3.0, "Bye.")]]);
        // raw speaker 7 speaks first, then 3
        let out = assign_speakers(&d, |w| if w.start < 1.5 { 7 } else { 3 });
        assert_eq!(out.speakers.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["Speaker 1", "Speaker 2"]);
        let segs: Vec<(&str, usize)> = out.segments.iter().map(|s| (s.speaker.as_str(), s.words.len())).collect();
        assert_eq!(segs, [("spk1", 2), ("spk2", 1), ("spk2", 1)]);
    }

    #[test]
    fn one_speaker_keeps_the_segments() {
        let d = doc(vec![vec![word(0.0, "a"), word(1.0, "b")], vec![word(2.0, "c")]]);
        let out = assign_speakers(&d, |_| 0);
        assert_eq!(out.speakers.len(), 1);
        assert_eq!(out.segments.len(), 2);
        assert_eq!(out, assign_speakers(&out, |_| 0));
    }

    fn two_speakers(segments: Vec<Segment>) -> Transcript {
        let speakers = ["1", "2"].map(|n| Speaker { spkid: format!("spk{n}"), name: format!("Speaker {n}") }).to_vec();
        Transcript { speakers, segments, ..doc(vec![]) }
    }

    #[test]
    fn a_translation_takes_the_speakers_of_the_words_it_overlaps() {
        // Given a diarized source: Speaker 1 from 0 to 2 s, Speaker 2 from 3 to 5 s
        let source = two_speakers(vec![
            Segment { speaker: "spk1".into(), words: vec![word(0.0, "Bonjour"), word(1.0, "à tous.")] },
            Segment { speaker: "spk2".into(), words: vec![word(3.0, "Merci"), word(4.0, "beaucoup.")] },
        ]);
        // When its translation (other words, other times, one segment, one speaker) is labelled
        let translation =
            doc(vec![vec![word(0.2, "Hello"), word(1.4, "everyone."), word(2.6, "Thank"), word(4.2, "you.")]]);
        let out = speakers_like(&translation, &source);
        // Then each word has the speaker it overlaps, or the nearest (2.6–3.1 s overlaps spk2 only)
        let segs: Vec<(&str, Vec<&str>)> = out
            .segments
            .iter()
            .map(|s| (s.speaker.as_str(), s.words.iter().map(|w| w.text.as_str()).collect()))
            .collect();
        assert_eq!(segs, [("spk1", vec!["Hello", "everyone."]), ("spk2", vec!["Thank", "you."])]);
        assert_eq!(out.speakers, source.speakers);
    }

    #[test]
    fn a_word_between_speakers_goes_to_the_nearest_and_unused_speakers_are_not_listed() {
        let source = two_speakers(vec![
            Segment { speaker: "spk1".into(), words: vec![word(0.0, "Oui.")] },
            Segment { speaker: "spk2".into(), words: vec![word(10.0, "Non.")] },
        ]);
        let out = speakers_like(&doc(vec![vec![word(2.0, "Yes.")]]), &source);
        assert_eq!(out.segments[0].speaker, "spk1");
        assert_eq!(out.speakers.len(), 1);
        // An empty reference leaves the document as it was.
        let empty = doc(vec![]);
        assert_eq!(speakers_like(&source, &empty), source);
    }
}
