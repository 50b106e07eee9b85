//! The JSON export document: the transcript model serialised in the spec's shape (see
//! `transcript`).

use crate::transcript::Transcript;

/// The export-json body. Non-finite numbers (which the model never holds) would be written as null.
pub fn render_json(transcript: &Transcript) -> String {
    // Serialising plain structs with string keys cannot fail.
    serde_json::to_string(transcript).unwrap_or_default()
}
