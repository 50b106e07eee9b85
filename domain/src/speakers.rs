//! Giving a machine transcript its speakers: every word gets the speaker diarization found at
//! its time, and the segments are cut where the speaker changes.
//!
//! Pure: the caller (the ASR stage) runs diarization and passes a function from a word to a
//! speaker number. Segments keep the recogniser's own boundaries and are also split at every
//! change of speaker, so a segment is always one speaker's words. Speakers are listed, and
//! named `Speaker <n>`, in order of first appearance, so the first voice heard is Speaker 1.

use crate::transcript::{Segment, Speaker, Transcript, Word};

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
    let speakers = (0..order.len().max(1)).map(|n| Speaker { spkid: spkid(n), name: format!("Speaker {}", n + 1) }).collect();
    Transcript { speakers, segments, ..doc.clone() }
}

fn spkid(n: usize) -> String {
    format!("spk{}", n + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(start: f64, text: &str) -> Word {
        Word { start, end: start + 0.5, text: text.into(), conf: 1.0, pristine: true }
    }

    fn doc(segments: Vec<Vec<Word>>) -> Transcript {
        Transcript {
            id: "j".into(),
            record_id: "j".into(),
            filename: "a.wav".into(),
            start_time_offset: 0.0,
            speakers: vec![Speaker { spkid: "spk1".into(), name: "Speaker 1".into() }],
            segments: segments.into_iter().map(|words| Segment { speaker: "spk1".into(), words }).collect(),
            highlights: Vec::new(),
        }
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
}
