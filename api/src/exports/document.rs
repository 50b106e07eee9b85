//! How the exports look in the OpenAPI document: the schema of the export-json document, the
//! `{downloadUrl}` answer of export-stl, and a text payload for bodies rendered once and served
//! from the cache. The JSON document itself is written by `scribe_domain::export::render_json`;
//! the types here only describe it (a test checks the two agree).

use poem::{IntoResponse, Response};
use poem_openapi::Object;
use poem_openapi::payload::Payload;
use poem_openapi::registry::MetaSchemaRef;
use poem_openapi::types::Type;

/// The answer of export-stl.
#[derive(Object, Debug, Clone, PartialEq)]
#[oai(rename_all = "camelCase")]
pub struct DownloadLink {
    /// Absolute URL of the EBU-STL file, usable without an apiKey until it expires.
    pub download_url: String,
}

/// The export-json document.
#[derive(Object, Debug, Clone, PartialEq)]
#[oai(rename_all = "camelCase")]
pub struct ExportDocument {
    /// Identifier of the transcript document (the job id).
    pub id: String,
    /// The job id.
    pub record_id: String,
    /// Name of the media file.
    pub filename: String,
    /// Seconds to add to every time to get programme time.
    pub start_time_offset: f64,
    pub speakers: Vec<ExportSpeaker>,
    /// Speaker turns in time order.
    pub segments: Vec<ExportSegment>,
    pub highlights: Vec<ExportHighlight>,
    /// Beyond the spec: the language code of the words (the job's language, the detected one for
    /// `auto`; the target language for translatedSubtitles).
    pub language: String,
}

#[derive(Object, serde::Deserialize, Debug, Clone, PartialEq)]
pub struct ExportSpeaker {
    pub spkid: String,
    pub name: String,
}

#[derive(Object, Debug, Clone, PartialEq)]
pub struct ExportSegment {
    /// The `spkid` of the speaker.
    pub speaker: String,
    pub words: Vec<ExportWord>,
}

#[derive(Object, Debug, Clone, PartialEq)]
pub struct ExportWord {
    /// Seconds from the start of the media.
    pub start: f64,
    pub end: f64,
    /// `end - start`, seconds.
    pub duration: f64,
    /// The word with its punctuation.
    pub text: String,
    /// Confidence, 0 to 1.
    pub conf: f64,
    /// True when the speech engine produced the word untouched.
    pub pristine: bool,
}

/// A highlighted passage.
#[derive(Object, serde::Deserialize, Debug, Clone, PartialEq)]
pub struct ExportHighlight {
    pub start: f64,
    pub end: f64,
    pub text: String,
}

/// A text body rendered earlier (UTF-8), documented as a string. The operation sets the exact
/// media type (`application/x-subrip; charset=utf-8`, ...).
pub struct RenderedText(pub Vec<u8>);

impl Payload for RenderedText {
    const CONTENT_TYPE: &'static str = "text/plain; charset=utf-8";

    fn schema_ref() -> MetaSchemaRef {
        String::schema_ref()
    }
}

impl IntoResponse for RenderedText {
    fn into_response(self) -> Response {
        Response::builder().content_type(Self::CONTENT_TYPE).body(self.0)
    }
}

#[cfg(test)]
mod tests {
    use scribe_domain::export::render_json_in;
    use scribe_domain::transcript::{Highlight, Segment, Speaker, Transcript, Word};

    use super::*;

    #[test]
    fn the_schema_matches_what_the_domain_writes() {
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
            highlights: vec![Highlight { start: 0.5, end: 1.0, text: "Hello.".into() }],
        };
        let written: serde_json::Value = serde_json::from_str(&render_json_in(&transcript, "pt")).unwrap();
        let parsed = <ExportDocument as poem_openapi::types::ParseFromJSON>::parse_from_json(Some(written.clone()))
            .unwrap_or_else(|e| panic!("render_json_in output does not fit the documented schema: {}", e.message()));
        assert_eq!(parsed.segments[0].words[0].duration, 0.5);
        assert_eq!(parsed.language, "pt");
        assert_eq!(poem_openapi::types::ToJSON::to_json(&parsed), Some(written), "no field is left out of the schema");
    }
}
