//! The answers of the OpenAI door, made from a finished job: its transcript (the same document
//! the spec's exports are made from, so the text is the same whichever door asked) and what the
//! decoder reported about its segments (`verbose_json`'s values).

use serde_json::{Value, json};

use crate::decoding::{DecodingRecord, SpeechTask};
use crate::export::params::SubtitleParams;
use crate::export::srt::render_srt;
use crate::export::vtt::render_vtt;
use crate::transcript::{TimedWord, Transcript};

use super::names::whisper_name;
use super::request::{Endpoint, Granularities, ResponseFormat};

/// A response body and its media type.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub content_type: &'static str,
    pub body: String,
}

/// What an answer is made of: the finished job's transcript and decoding record, and what the
/// request asked for.
pub struct Finished<'a> {
    pub transcript: &'a Transcript,
    pub decoding: &'a DecodingRecord,
    pub endpoint: Endpoint,
    pub format: ResponseFormat,
    pub granularities: Granularities,
}

const JSON: &str = "application/json";
const TEXT: &str = "text/plain; charset=utf-8";
const VTT: &str = "text/vtt; charset=utf-8";

impl Finished<'_> {
    /// The answer in the requested format.
    pub fn answer(&self) -> Answer {
        let text = transcript_text(self.transcript);
        let json_answer = |v: Value| Answer { content_type: JSON, body: v.to_string() };
        match self.format {
            ResponseFormat::Json => match self.endpoint {
                Endpoint::Transcriptions => json_answer(json!({"text": text, "usage": self.usage()})),
                Endpoint::Translations => json_answer(json!({"text": text})),
            },
            ResponseFormat::Text => Answer { content_type: TEXT, body: format!("{text}\n") },
            ResponseFormat::Srt => {
                Answer { content_type: TEXT, body: render_srt(self.transcript, &SubtitleParams::default()) }
            }
            ResponseFormat::Vtt => {
                Answer { content_type: VTT, body: render_vtt(self.transcript, &SubtitleParams::default()) }
            }
            ResponseFormat::VerboseJson => json_answer(self.verbose(&text)),
            ResponseFormat::DiarizedJson => json_answer(json!({
                "task": "transcribe",
                "duration": self.duration(),
                "text": text,
                "segments": diarized_segments(self.transcript),
                "usage": self.usage(),
            })),
        }
    }

    /// `{"type": "duration", "seconds": ...}`: what the request is billed by.
    pub fn usage(&self) -> Value {
        usage(self.decoding.duration_s)
    }

    fn duration(&self) -> f64 {
        round_ms(self.decoding.duration_s)
    }

    fn task(&self) -> SpeechTask {
        match self.endpoint {
            Endpoint::Transcriptions => SpeechTask::Transcribe,
            Endpoint::Translations => SpeechTask::Translate,
        }
    }

    fn verbose(&self, text: &str) -> Value {
        let task = self.task();
        let language = match task {
            SpeechTask::Transcribe => whisper_name(&self.decoding.language),
            SpeechTask::Translate => "english",
        };
        let mut v = json!({
            "task": task.as_str(),
            "language": language,
            "duration": self.duration(),
            "text": text,
        });
        if self.granularities.segment {
            v["segments"] = Value::Array(self.segments());
        }
        if self.granularities.word && self.endpoint == Endpoint::Transcriptions {
            let words = self
                .transcript
                .timed_words()
                .into_iter()
                .map(|w| json!({"word": w.text, "start": round_ms(w.start), "end": round_ms(w.end)}))
                .collect();
            v["words"] = Value::Array(words);
        }
        if self.endpoint == Endpoint::Transcriptions {
            v["usage"] = self.usage();
        }
        v
    }

    /// The decoder's segments, each with the transcript's words that fall in it (by the middle
    /// of the word; a word between segments goes to the nearest). Segments left without words
    /// (all cleaned away) are left out.
    fn segments(&self) -> Vec<Value> {
        let decoded = &self.decoding.segments;
        let mut texts: Vec<Vec<String>> = vec![Vec::new(); decoded.len()];
        for word in self.transcript.timed_words() {
            if let Some(i) = nearest_segment(&word, decoded.iter().map(|s| (s.start, s.end))) {
                texts[i].push(word.text);
            }
        }
        decoded
            .iter()
            .zip(texts)
            .filter(|(_, words)| !words.is_empty())
            .enumerate()
            .map(|(id, (s, words))| {
                json!({
                    "id": id,
                    "seek": s.seek,
                    "start": round_ms(s.start),
                    "end": round_ms(s.end),
                    "text": format!(" {}", words.join(" ")),
                    "tokens": s.tokens,
                    "temperature": round_4(s.temperature),
                    "avg_logprob": round_4(s.avg_logprob),
                    "compression_ratio": round_4(s.compression_ratio),
                    "no_speech_prob": round_4(s.no_speech_prob),
                })
            })
            .collect()
    }
}

/// The transcript's words as one line of text.
pub fn transcript_text(transcript: &Transcript) -> String {
    transcript
        .segments
        .iter()
        .flat_map(|s| s.words.iter())
        .flat_map(|w| w.text.split_whitespace())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `{"type": "duration", "seconds": ...}`.
pub fn usage(duration_s: f64) -> Value {
    json!({"type": "duration", "seconds": round_ms(duration_s)})
}

/// The speaker turns of the transcript as `diarized_json` segments; speakers are named `A`,
/// `B`, ... in the order they first speak (OpenAI's own labels), except a speaker renamed in the
/// editor or by a transcriber, who is called by that name (see `Speaker::given_name`).
pub fn diarized_segments(transcript: &Transcript) -> Vec<Value> {
    let mut order: Vec<&str> = Vec::new();
    transcript
        .segments
        .iter()
        .filter(|s| !s.words.is_empty())
        .enumerate()
        .map(|(i, s)| {
            let n = order.iter().position(|o| *o == s.speaker).unwrap_or_else(|| {
                order.push(&s.speaker);
                order.len() - 1
            });
            let text: Vec<&str> = s.words.iter().flat_map(|w| w.text.split_whitespace()).collect();
            json!({
                "type": "transcript.text.segment",
                "id": format!("seg_{i}"),
                "start": round_ms(s.words[0].start),
                "end": round_ms(s.words[s.words.len() - 1].end),
                "text": text.join(" "),
                "speaker": transcript.given_name(&s.speaker).unwrap_or_else(|| speaker_label(n)),
            })
        })
        .collect()
}

/// `A` ... `Z`, then `AA`, `AB`, ...
fn speaker_label(n: usize) -> String {
    let letter = |i: usize| char::from(b'A' + (i % 26) as u8);
    if n < 26 { letter(n).to_string() } else { format!("{}{}", letter(n / 26 - 1), letter(n)) }
}

fn nearest_segment(word: &TimedWord, spans: impl Iterator<Item = (f64, f64)>) -> Option<usize> {
    let mid = (word.start + word.end) / 2.0;
    spans
        .map(|(start, end)| {
            if mid < start {
                start - mid
            } else if mid > end {
                mid - end
            } else {
                0.0
            }
        })
        .enumerate()
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i)
}

fn round_ms(seconds: f64) -> f64 {
    (seconds * 1000.0).round() / 1000.0
}

fn round_4(v: f32) -> f64 {
    (f64::from(v) * 10_000.0).round() / 10_000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decoding::DecodedSegment;
    use crate::transcript::{Segment, Speaker, Word};

    fn word(start: f64, end: f64, text: &str) -> Word {
        Word { start, end, text: text.into(), conf: 0.9, pristine: true }
    }

    fn transcript() -> Transcript {
        Transcript {
            id: "j".into(),
            record_id: "j".into(),
            filename: "a.wav".into(),
            start_time_offset: 0.0,
            speakers: vec![
                Speaker { spkid: "s2".into(), name: "Speaker 1".into() },
                Speaker { spkid: "s1".into(), name: "Speaker 2".into() },
            ],
            segments: vec![
                Segment { speaker: "s2".into(), words: vec![word(0.5, 0.9, "Hello"), word(1.0, 1.4, "there.")] },
                Segment { speaker: "s1".into(), words: vec![word(3.0, 3.5, "Hi!")] },
                Segment { speaker: "s2".into(), words: vec![word(5.0, 5.4, "Bye.")] },
            ],
            highlights: vec![],
        }
    }

    fn segment(seek: u64, start: f64, end: f64) -> DecodedSegment {
        DecodedSegment {
            seek,
            start,
            end,
            tokens: vec![50364, 2425, 50414],
            temperature: 0.0,
            avg_logprob: -0.25,
            compression_ratio: 1.1,
            no_speech_prob: 0.01,
        }
    }

    fn record() -> DecodingRecord {
        DecodingRecord {
            language: "en".into(),
            duration_s: 6.0,
            // The second segment lost its only word to clean-up ("um"): it is left out.
            segments: vec![segment(0, 0.4, 1.5), segment(0, 2.0, 2.4), segment(0, 2.8, 5.6)],
        }
    }

    fn finished<'a>(t: &'a Transcript, r: &'a DecodingRecord, format: ResponseFormat, word: bool) -> Answer {
        Finished {
            transcript: t,
            decoding: r,
            endpoint: Endpoint::Transcriptions,
            format,
            granularities: Granularities { segment: true, word },
        }
        .answer()
    }

    #[test]
    fn given_a_transcript_when_json_then_its_text_and_usage() {
        let (t, r) = (transcript(), record());
        let a = finished(&t, &r, ResponseFormat::Json, false);
        assert_eq!(a.content_type, "application/json");
        let v: Value = serde_json::from_str(&a.body).unwrap();
        assert_eq!(v, json!({"text": "Hello there. Hi! Bye.", "usage": {"type": "duration", "seconds": 6.0}}));
    }

    #[test]
    fn given_a_transcript_when_text_then_one_line() {
        let (t, r) = (transcript(), record());
        assert_eq!(finished(&t, &r, ResponseFormat::Text, false).body, "Hello there. Hi! Bye.\n");
    }

    #[test]
    fn given_decoded_segments_when_verbose_json_then_words_grouped_by_time_with_decoder_values() {
        let (t, r) = (transcript(), record());
        let v: Value = serde_json::from_str(&finished(&t, &r, ResponseFormat::VerboseJson, true).body).unwrap();
        assert_eq!(v["task"], "transcribe");
        assert_eq!(v["language"], "english");
        assert_eq!(v["duration"], 6.0);
        let segments = v["segments"].as_array().unwrap();
        assert_eq!(segments.len(), 2);
        assert_eq!(segments[0]["id"], 0);
        assert_eq!(segments[0]["text"], " Hello there.");
        assert_eq!(segments[1]["id"], 1);
        assert_eq!(segments[1]["text"], " Hi! Bye.");
        assert_eq!(segments[1]["avg_logprob"], -0.25);
        assert_eq!(segments[1]["tokens"], json!([50364, 2425, 50414]));
        assert_eq!(v["words"][0], json!({"word": "Hello", "start": 0.5, "end": 0.9}));
        assert_eq!(v["words"].as_array().unwrap().len(), 4);
    }

    #[test]
    fn given_speaker_turns_when_diarized_json_then_lettered_speakers_in_order_of_appearance() {
        let (t, r) = (transcript(), record());
        let v: Value = serde_json::from_str(&finished(&t, &r, ResponseFormat::DiarizedJson, false).body).unwrap();
        let speakers: Vec<&str> =
            v["segments"].as_array().unwrap().iter().map(|s| s["speaker"].as_str().unwrap()).collect();
        assert_eq!(speakers, ["A", "B", "A"]);
        assert_eq!(v["segments"][1]["text"], "Hi!");
        assert_eq!(v["segments"][1]["id"], "seg_1");
        assert_eq!(v["segments"][1]["type"], "transcript.text.segment");
        assert_eq!(speaker_label(27), "AB");
    }

    #[test]
    fn given_a_renamed_speaker_when_diarized_json_then_its_name_and_letters_for_the_others() {
        // Given the second voice renamed (with a line break to drop), the first never renamed
        let mut t = transcript();
        t.speakers[1].name = "Grace\nHopper".into();
        // When answered as diarized_json
        let (r, segments) = (record(), diarized_segments(&t));
        let v: Value = serde_json::from_str(&finished(&t, &r, ResponseFormat::DiarizedJson, false).body).unwrap();
        // Then the renamed speaker is called by name, the other keeps its letter
        let speakers: Vec<&str> =
            v["segments"].as_array().unwrap().iter().map(|s| s["speaker"].as_str().unwrap()).collect();
        assert_eq!(speakers, ["A", "Grace Hopper", "A"]);
        assert_eq!(v["segments"], Value::Array(segments));
    }

    #[test]
    fn given_a_translation_when_json_then_only_text() {
        let (t, r) = (transcript(), record());
        let a = Finished {
            transcript: &t,
            decoding: &r,
            endpoint: Endpoint::Translations,
            format: ResponseFormat::VerboseJson,
            granularities: Granularities { segment: true, word: false },
        }
        .answer();
        let v: Value = serde_json::from_str(&a.body).unwrap();
        assert_eq!(v["task"], "translate");
        assert_eq!(v["language"], "english");
        assert!(v.get("words").is_none());
    }

    #[test]
    fn given_a_transcript_when_srt_then_the_export_cues() {
        let (t, r) = (transcript(), record());
        let a = finished(&t, &r, ResponseFormat::Srt, false);
        assert_eq!(a.body, render_srt(&t, &SubtitleParams::default()));
        assert!(a.body.starts_with("1\n00:00:00,500 --> "));
    }
}
