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

    #[test]
    fn given_a_speaker_renamed_in_a_saved_edit_when_exported_then_the_list_carries_the_name() {
        // Given a correction that renames the only speaker, saved as the editor saves it
        let word = crate::transcript::Word { start: 0.0, end: 0.5, text: "Hi.".into(), conf: 1.0, pristine: true };
        let machine = crate::transcript::test_document(vec![crate::transcript::Segment {
            speaker: "spk1".into(),
            words: vec![word],
        }]);
        let mut edit = machine.clone();
        edit.speakers[0].name = "Ada Lovelace".into();
        let saved = crate::editing::prepare_saved(edit, Some(&machine));
        // When exported, then the speakers list names her, as the segments' speaker id
        let v: serde_json::Value = serde_json::from_str(&render_json_in(&saved, "en")).unwrap();
        assert_eq!(v["speakers"], serde_json::json!([{"spkid": "spk1", "name": "Ada Lovelace"}]));
        assert_eq!(v["segments"][0]["speaker"], "spk1");
    }
}
