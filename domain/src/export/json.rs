//! The JSON export document: the transcript model serialised in the spec's shape (see
//! `transcript`).

use serde::Serialize;

use crate::transcript::Transcript;

/// The export document with the language of its text beside the spec's fields.
#[derive(Serialize)]
struct WithLanguage<'a> {
    #[serde(flatten)]
    transcript: &'a Transcript,
    /// The language code of the words (the job's language, or the translation's target).
    language: &'a str,
}

/// The export-json body with a `language` field: the code of the language its words are in
/// (the spec's fields are unchanged).
pub fn render_json_in(transcript: &Transcript, language: &str) -> String {
    serde_json::to_string(&WithLanguage { transcript, language }).unwrap_or_default()
}

/// The export-json body. Non-finite numbers (which the model never holds) would be written as null.
pub fn render_json(transcript: &Transcript) -> String {
    // Serialising plain structs with string keys cannot fail.
    serde_json::to_string(transcript).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_language_sits_beside_the_spec_fields() {
        let t = Transcript {
            id: "j".into(),
            record_id: "j".into(),
            filename: "a.wav".into(),
            start_time_offset: 0.0,
            speakers: vec![],
            segments: vec![],
            highlights: vec![],
        };
        let mut with: serde_json::Value = serde_json::from_str(&render_json_in(&t, "pt")).unwrap();
        assert_eq!(with["language"], "pt");
        with.as_object_mut().unwrap().remove("language");
        assert_eq!(with, serde_json::from_str::<serde_json::Value>(&render_json(&t)).unwrap());
    }
}
