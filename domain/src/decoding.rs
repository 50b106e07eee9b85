//! How the speech engine decodes a job when its client chose more than the spec's parameters
//! (the OpenAI door: a model, Whisper's translate task, a prompt, a temperature, voice-detection
//! settings, keywords), and what the decoder reported about each segment it made.
//!
//! [`DecodingChoices`] is part of a job's submission, so a job is decoded the same way however
//! often its recognition runs. [`DecodingRecord`] is written beside the transcript by the
//! recognition worker: the OpenAI door's `verbose_json` shows its values.

use serde::{Deserialize, Serialize};

/// What the engine is asked to do beyond the defaults. Every field changes the decoding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct DecodingChoices {
    /// The installed speech model (its folder's name); `None` = the server's default model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Transcribe in the spoken language, or translate the speech into English.
    #[serde(default)]
    pub task: SpeechTask,
    /// Text the decoder continues from (Whisper's initial prompt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// The first sampling temperature, 0 to 1 (0: greedy/beam search, falling back to higher
    /// temperatures on a failed window).
    #[serde(default)]
    pub temperature: f32,
    /// Voice-detection settings; `None` = the engine's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vad: Option<VadChoice>,
    /// Terms the decoder is nudged towards in every window (as a glossary's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keywords: Vec<String>,
    /// Whisper codes the language is detected among (only when no language was given).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub detect_among: Vec<String>,
}

/// Whisper's two tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub enum SpeechTask {
    #[default]
    Transcribe,
    /// Speech in any language to English text.
    Translate,
}

impl SpeechTask {
    /// As OpenAI names it in `verbose_json` (`transcribe`, `translate`).
    pub fn as_str(self) -> &'static str {
        match self {
            SpeechTask::Transcribe => "transcribe",
            SpeechTask::Translate => "translate",
        }
    }
}

/// Voice-detection settings (OpenAI's `server_vad` chunking strategy); a setting left out keeps
/// the engine's value.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct VadChoice {
    /// Speech probability above which a frame is speech, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f32>,
    /// Audio kept before (and after) each stretch of speech, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub padding_ms: Option<u32>,
    /// Silence that ends a stretch of speech, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_silence_ms: Option<u32>,
}

/// What the decoder reported about the segments of a transcript, in the order it made them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DecodingRecord {
    /// The language decoded in (a Whisper code; `en` for a translation).
    pub language: String,
    /// Seconds of media.
    pub duration_s: f64,
    pub segments: Vec<DecodedSegment>,
}

/// One segment as the decoder made it. Its words are the transcript's (after clean-up), found by
/// time; the rest is the decoder's own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DecodedSegment {
    /// Mel frame (100 a second) where the 30 s window the segment came from starts.
    pub seek: u64,
    pub start: f64,
    pub end: f64,
    /// The token ids the decoder emitted (text and timestamps).
    pub tokens: Vec<u32>,
    /// The temperature of the decoding that was kept.
    pub temperature: f32,
    pub avg_logprob: f32,
    /// gzip compression ratio of the window's text (high: repetitive).
    pub compression_ratio: f32,
    pub no_speech_prob: f32,
}
