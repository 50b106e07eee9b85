//! The server-sent events of a streamed transcription (`stream=true`), as OpenAI streams them:
//! `transcript.text.delta` while the audio is recognised, `transcript.text.segment` per speaker
//! turn (`diarized_json`), `transcript.text.done` with the whole text last. Each event is one
//! `data:` line and a blank line.

use serde_json::{Value, json};

/// The text recognised since the last delta.
pub fn delta(text: &str) -> String {
    event(&json!({"type": "transcript.text.delta", "delta": text}))
}

/// A speaker turn of `diarized_json` (one of `answer::diarized_segments`).
pub fn segment(segment: &Value) -> String {
    event(segment)
}

/// The end: the whole text and the usage.
pub fn done(text: &str, usage: Value) -> String {
    event(&json!({"type": "transcript.text.done", "text": text, "usage": usage}))
}

/// A failure after the stream began (OpenAI clients raise it as an API error).
pub fn error(error: &Value) -> String {
    format!("event: error\ndata: {error}\n\n")
}

fn event(data: &Value) -> String {
    format!("data: {data}\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_data_lines() {
        let d = delta(" Hello");
        let data: Value = serde_json::from_str(d.strip_prefix("data: ").unwrap().trim_end()).unwrap();
        assert_eq!(data, json!({"type": "transcript.text.delta", "delta": " Hello"}));
        assert!(d.ends_with("}\n\n"));
        assert!(done("Hello", json!({"type": "duration", "seconds": 1.0})).starts_with("data: {"));
        assert!(error(&json!({"error": {"message": "m"}})).starts_with("event: error\ndata: {\"error\""));
    }
}
