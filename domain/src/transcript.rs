//! The transcript model: what the speech engine's output is converted into, what every export is
//! rendered from, and (through serde) exactly the spec's export-json document.
//!
//! Times are seconds from the start of the media, as `f64`. A word's `duration` is not stored: it is
//! derived from `end - start` when serialised and ignored when read back, so it can never disagree.

use serde::{Deserialize, Serialize};

/// A whole transcript, serialised as the spec's "Export JSON document".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Transcript {
    /// Identifier of the transcript document (we use the job id).
    pub id: String,
    /// Identifier of the record the transcript belongs to (we use the job id as well).
    pub record_id: String,
    /// Name of the media file.
    pub filename: String,
    /// Seconds to add to every time to get the programme time (0 unless the media was a clip).
    pub start_time_offset: f64,
    pub speakers: Vec<Speaker>,
    /// Speaker turns, in time order.
    pub segments: Vec<Segment>,
    /// Passages marked as important, in time order.
    #[serde(default)]
    pub highlights: Vec<Highlight>,
}

/// A speaker, referred to by `Segment::speaker`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Speaker {
    pub spkid: String,
    /// `Speaker <n>` as diarization names it, or what a person typed in the editor.
    pub name: String,
}

impl Speaker {
    /// The name a person gave this speaker, fit to print on one line: `None` while the name is
    /// blank or still a default `Speaker <n>` (any number: a list whose order and default names
    /// disagree still counts as never renamed, so its exports print as before).
    pub fn given_name(&self) -> Option<String> {
        let name = one_line(&self.name);
        let default =
            name.strip_prefix("Speaker ").is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
        (!name.is_empty() && !default).then_some(name)
    }
}

/// `text` on one line: control characters, line breaks and invisible format characters (zero
/// widths, bidirectional overrides) removed or made spaces, runs of spaces one, ends trimmed.
pub fn one_line(text: &str) -> String {
    let invisible =
        |c: char| matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}');
    let spaced: String =
        text.chars().filter(|&c| !invisible(c)).map(|c| if c.is_control() { ' ' } else { c }).collect();
    spaced.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// One speaker turn: consecutive words of one speaker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    /// The `spkid` of the speaker.
    pub speaker: String,
    pub words: Vec<Word>,
}

/// A timed word as recognised.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "WordJson", from = "WordJson")]
pub struct Word {
    pub start: f64,
    pub end: f64,
    /// The word as shown, with its punctuation attached (`"Americans,"`).
    pub text: String,
    /// Confidence of the recogniser, 0 to 1.
    pub conf: f64,
    /// True when the engine produced the word untouched (not edited, not from a glossary fix).
    pub pristine: bool,
}

/// A highlighted passage: the time span `[start, end]` in seconds and the words it covers.
/// TXT's `highlightsOnly` prints the words whose middle lies inside a highlight.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Highlight {
    pub start: f64,
    pub end: f64,
    pub text: String,
}

/// The wire shape of a word: the model plus the derived `duration`.
#[derive(Serialize, Deserialize)]
struct WordJson {
    start: f64,
    end: f64,
    #[serde(default)]
    duration: f64,
    text: String,
    conf: f64,
    pristine: bool,
}

impl From<Word> for WordJson {
    fn from(w: Word) -> Self {
        WordJson {
            duration: w.duration(),
            start: w.start,
            end: w.end,
            text: w.text,
            conf: w.conf,
            pristine: w.pristine,
        }
    }
}

impl From<WordJson> for Word {
    fn from(w: WordJson) -> Self {
        Word { start: w.start, end: w.end, text: w.text, conf: w.conf, pristine: w.pristine }
    }
}

impl Word {
    /// `end - start`, never negative.
    pub fn duration(&self) -> f64 {
        (self.end - self.start).max(0.0)
    }
}

/// A word together with the speaker who said it: the input of subtitle segmentation.
#[derive(Debug, Clone, PartialEq)]
pub struct TimedWord {
    pub start: f64,
    pub end: f64,
    pub text: String,
    pub speaker: String,
}

impl Transcript {
    /// Every word in order, each tagged with its segment's speaker.
    pub fn timed_words(&self) -> Vec<TimedWord> {
        self.segments
            .iter()
            .flat_map(|seg| {
                seg.words.iter().map(|w| TimedWord {
                    start: w.start,
                    end: w.end,
                    text: w.text.clone(),
                    speaker: seg.speaker.clone(),
                })
            })
            .collect()
    }

    /// 1-based number of a speaker in the speaker list, for "Speaker n" labels. A `spkid` missing
    /// from the list gets a number after the listed ones, in order of first appearance.
    pub fn speaker_number(&self, spkid: &str) -> usize {
        if let Some(i) = self.speakers.iter().position(|s| s.spkid == spkid) {
            return i + 1;
        }
        let mut unlisted: Vec<&str> = Vec::new();
        for seg in &self.segments {
            if !self.speakers.iter().any(|s| s.spkid == seg.speaker) && !unlisted.contains(&seg.speaker.as_str()) {
                unlisted.push(&seg.speaker);
            }
        }
        let pos = unlisted.iter().position(|s| *s == spkid).unwrap_or(unlisted.len());
        self.speakers.len() + pos + 1
    }

    /// The name a person gave the speaker `spkid`, on one line (see [`Speaker::given_name`]);
    /// `None` for a default name, a blank one, or a speaker missing from the list.
    pub fn given_name(&self, spkid: &str) -> Option<String> {
        self.speakers.iter().find(|s| s.spkid == spkid).and_then(Speaker::given_name)
    }

    /// How the exports call the speaker `spkid`: the name a person gave it, else
    /// `Speaker <n>` with its [`speaker_number`](Self::speaker_number).
    pub fn speaker_label(&self, spkid: &str) -> String {
        self.given_name(spkid).unwrap_or_else(|| format!("Speaker {}", self.speaker_number(spkid)))
    }
}

/// A test document: job `j` of `a.wav`, one listed speaker `spk1` ("Speaker 1"), `segments`.
#[cfg(test)]
pub(crate) fn test_document(segments: Vec<Segment>) -> Transcript {
    Transcript {
        id: "j".into(),
        record_id: "j".into(),
        filename: "a.wav".into(),
        start_time_offset: 0.0,
        speakers: vec![Speaker { spkid: "spk1".into(), name: "Speaker 1".into() }],
        segments,
        highlights: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Transcript {
        Transcript {
            id: "j1".into(),
            record_id: "j1".into(),
            filename: "jfk.wav".into(),
            start_time_offset: 0.0,
            speakers: vec![Speaker { spkid: "S1".into(), name: "Speaker 1".into() }],
            segments: vec![Segment {
                speaker: "S1".into(),
                words: vec![Word { start: 0.5, end: 0.75, text: "And".into(), conf: 0.9, pristine: true }],
            }],
            highlights: vec![],
        }
    }

    #[test]
    fn serialises_in_the_spec_shape_with_derived_duration() {
        let v = serde_json::to_value(sample()).unwrap();
        assert_eq!(
            v,
            serde_json::json!({
                "id": "j1", "recordId": "j1", "filename": "jfk.wav", "startTimeOffset": 0.0,
                "speakers": [{"spkid": "S1", "name": "Speaker 1"}],
                "segments": [{"speaker": "S1", "words": [
                    {"start": 0.5, "end": 0.75, "duration": 0.25, "text": "And", "conf": 0.9, "pristine": true}
                ]}],
                "highlights": []
            })
        );
    }

    #[test]
    fn round_trips_through_json() {
        let t = sample();
        let back: Transcript = serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
        assert_eq!(back, t);
    }

    #[test]
    fn numbers_unlisted_speakers_after_listed_ones() {
        let mut t = sample();
        t.segments.push(Segment { speaker: "X".into(), words: vec![] });
        assert_eq!(t.speaker_number("S1"), 1);
        assert_eq!(t.speaker_number("X"), 2);
    }

    #[test]
    fn given_a_renamed_speaker_when_labelled_then_its_name_on_one_line() {
        let mut t = sample();
        t.speakers[0].name = "  Ada\nLovelace\t\u{202e}(chair)\u{7} ".into();
        assert_eq!(t.given_name("S1").as_deref(), Some("Ada Lovelace (chair)"));
        assert_eq!(t.speaker_label("S1"), "Ada Lovelace (chair)");
    }

    #[test]
    fn given_default_blank_or_unlisted_names_when_labelled_then_speaker_and_list_number() {
        // Given a list whose order and default names disagree, a blank name and an unlisted id
        let mut t = sample();
        t.speakers = ["Speaker 2", "Speaker 1", " \n ", "Speaker 7b", "Speakers 3"]
            .iter()
            .enumerate()
            .map(|(i, name)| Speaker { spkid: format!("S{i}"), name: (*name).into() })
            .collect();
        // When labelled, then defaults and blanks are numbered by their place in the list
        let labels: Vec<String> = ["S0", "S1", "S2", "S3", "S4", "X"].iter().map(|s| t.speaker_label(s)).collect();
        assert_eq!(labels, ["Speaker 1", "Speaker 2", "Speaker 3", "Speaker 7b", "Speakers 3", "Speaker 6"]);
        assert_eq!(t.given_name("S0"), None);
        assert_eq!(t.given_name("X"), None);
    }
}
