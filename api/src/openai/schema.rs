//! How the OpenAI door's answers look in the OpenAPI document: the transcription objects (as
//! OpenAI's reference names them), the model objects, and the payloads of bodies written by
//! `scribe_domain::openai` (JSON text, server-sent events). The JSON is written by the domain;
//! these types describe it (a test checks the two agree).

use poem::{Body, IntoResponse, Response};
use poem_openapi::payload::Payload;
use poem_openapi::registry::{MetaSchemaRef, Registry};
use poem_openapi::types::Type;
use poem_openapi::{Object, Union};

/// What a request was billed by.
#[derive(Object, Debug, Clone, PartialEq)]
pub struct Usage {
    /// Always `duration`.
    #[oai(rename = "type")]
    pub kind: String,
    /// Seconds of media.
    pub seconds: f64,
}

/// `response_format=json`.
#[derive(Object, Debug, Clone, PartialEq)]
pub struct Transcription {
    pub text: String,
    /// Only on transcriptions.
    pub usage: Option<Usage>,
}

/// A segment of `verbose_json`, with what the decoder reported about it.
#[derive(Object, Debug, Clone, PartialEq)]
pub struct TranscriptionSegment {
    pub id: i64,
    /// Mel frame (100 a second) where the 30 s window the segment came from starts.
    pub seek: i64,
    pub start: f64,
    pub end: f64,
    pub text: String,
    /// The decoder's token ids (text and timestamps).
    pub tokens: Vec<i64>,
    /// The temperature of the decoding kept.
    pub temperature: f64,
    pub avg_logprob: f64,
    pub compression_ratio: f64,
    pub no_speech_prob: f64,
}

/// A word of `verbose_json` with `timestamp_granularities[]=word`.
#[derive(Object, Debug, Clone, PartialEq)]
pub struct TranscriptionWord {
    pub word: String,
    pub start: f64,
    pub end: f64,
}

/// `response_format=verbose_json`.
#[derive(Object, Debug, Clone, PartialEq)]
pub struct TranscriptionVerbose {
    /// `transcribe` or `translate`.
    pub task: String,
    /// The language's English name in lower case (`english`); `english` for translations.
    pub language: String,
    /// Seconds of media.
    pub duration: f64,
    pub text: String,
    /// With the `segment` granularity (the default).
    pub segments: Option<Vec<TranscriptionSegment>>,
    /// With the `word` granularity.
    pub words: Option<Vec<TranscriptionWord>>,
    /// Only on transcriptions.
    pub usage: Option<Usage>,
}

/// A speaker turn of `diarized_json`.
#[derive(Object, Debug, Clone, PartialEq)]
pub struct TranscriptionDiarizedSegment {
    /// Always `transcript.text.segment`.
    #[oai(rename = "type")]
    pub kind: String,
    /// `seg_0`, `seg_1`, ...
    pub id: String,
    pub start: f64,
    pub end: f64,
    pub text: String,
    /// `A`, `B`, ... in the order the speakers first speak (OpenAI's labels); a speaker renamed
    /// in the editor (or by a transcriber), whose name is no longer the default `Speaker <n>`,
    /// is called by that name instead. The same in the `transcript.text.segment` events.
    pub speaker: String,
}

/// `response_format=diarized_json`.
#[derive(Object, Debug, Clone, PartialEq)]
pub struct TranscriptionDiarized {
    /// Always `transcribe`.
    pub task: String,
    pub duration: f64,
    pub text: String,
    pub segments: Vec<TranscriptionDiarizedSegment>,
    pub usage: Option<Usage>,
}

/// The JSON answers, by `response_format` (`diarized_json`, `verbose_json`, `json`).
#[derive(Union, Debug, Clone, PartialEq)]
pub enum TranscriptionAnswer {
    Diarized(TranscriptionDiarized),
    Verbose(TranscriptionVerbose),
    Json(Transcription),
}

/// An installed speech model.
#[derive(Object, Debug, Clone, PartialEq)]
pub struct Model {
    /// `whisper-base`, `whisper-tiny.en`, an operator's model; `whisper-1` is the default's alias.
    pub id: String,
    /// Always `model`.
    pub object: String,
    /// When the model was installed (Unix seconds).
    pub created: u64,
    /// `scribe`.
    pub owned_by: String,
}

/// `GET /v1/models`.
#[derive(Object, Debug, Clone, PartialEq)]
pub struct ModelList {
    /// Always `list`.
    pub object: String,
    pub data: Vec<Model>,
}

/// A JSON answer written by the domain (one of [`TranscriptionAnswer`]).
pub struct JsonAnswer(pub String);

impl Payload for JsonAnswer {
    const CONTENT_TYPE: &'static str = "application/json";

    fn schema_ref() -> MetaSchemaRef {
        TranscriptionAnswer::schema_ref()
    }

    fn register(registry: &mut Registry) {
        TranscriptionAnswer::register(registry);
    }
}

impl IntoResponse for JsonAnswer {
    fn into_response(self) -> Response {
        Response::builder().content_type(Self::CONTENT_TYPE).body(self.0)
    }
}

/// A WebVTT answer (`vtt`).
pub struct VttAnswer(pub String);

impl Payload for VttAnswer {
    const CONTENT_TYPE: &'static str = "text/vtt; charset=utf-8";

    fn schema_ref() -> MetaSchemaRef {
        String::schema_ref()
    }
}

impl IntoResponse for VttAnswer {
    fn into_response(self) -> Response {
        Response::builder().content_type(Self::CONTENT_TYPE).body(self.0)
    }
}

/// Server-sent events (`stream=true`), written as they happen.
pub struct EventStream(pub Body);

impl Payload for EventStream {
    const CONTENT_TYPE: &'static str = "text/event-stream";

    fn schema_ref() -> MetaSchemaRef {
        String::schema_ref()
    }
}

impl IntoResponse for EventStream {
    fn into_response(self) -> Response {
        Response::builder()
            .content_type(Self::CONTENT_TYPE)
            .header("Cache-Control", "no-cache")
            .header("X-Accel-Buffering", "no")
            .body(self.0)
    }
}

#[cfg(test)]
mod tests {
    use poem_openapi::types::ParseFromJSON;
    use scribe_domain::decoding::{DecodedSegment, DecodingRecord};
    use scribe_domain::openai::{Endpoint, Finished, Granularities, ResponseFormat};
    use scribe_domain::transcript::{Segment, Speaker, Transcript, Word};

    use super::*;

    #[test]
    fn the_schemas_match_what_the_domain_writes() {
        let transcript = Transcript {
            id: "j".into(),
            record_id: "j".into(),
            filename: "a.wav".into(),
            start_time_offset: 0.0,
            speakers: vec![Speaker { spkid: "S1".into(), name: "Speaker 1".into() }],
            segments: vec![Segment {
                speaker: "S1".into(),
                words: vec![Word { start: 0.5, end: 1.0, text: "Hello.".into(), conf: 0.9, pristine: true }],
            }],
            highlights: vec![],
        };
        let decoding = DecodingRecord {
            language: "en".into(),
            duration_s: 1.5,
            segments: vec![DecodedSegment {
                seek: 0,
                start: 0.4,
                end: 1.1,
                tokens: vec![50364, 2425, 50414],
                temperature: 0.0,
                avg_logprob: -0.2,
                compression_ratio: 0.9,
                no_speech_prob: 0.01,
            }],
        };
        for format in [ResponseFormat::Json, ResponseFormat::VerboseJson, ResponseFormat::DiarizedJson] {
            let answer = Finished {
                transcript: &transcript,
                decoding: &decoding,
                endpoint: Endpoint::Transcriptions,
                format,
                granularities: Granularities { segment: true, word: true },
            }
            .answer();
            let written: serde_json::Value = serde_json::from_str(&answer.body).unwrap();
            let parsed = TranscriptionAnswer::parse_from_json(Some(written))
                .unwrap_or_else(|e| panic!("{format:?} does not fit the documented schema: {}", e.message()));
            let expected = match format {
                ResponseFormat::Json => matches!(parsed, TranscriptionAnswer::Json(_)),
                ResponseFormat::VerboseJson => matches!(parsed, TranscriptionAnswer::Verbose(_)),
                _ => matches!(parsed, TranscriptionAnswer::Diarized(_)),
            };
            assert!(expected, "{format:?} parsed as {parsed:?}");
        }
    }
}
