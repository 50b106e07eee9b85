//! Live sessions (Amberscript's real-time protocol) as rules: what a client may send
//! ([`init`], [`pcm`]), how a session refuses (one [`LiveError`] shape with the WebSocket close
//! code that follows it), what it sends back ([`LiveResult`]) and what it costs.

pub mod endpoint;
pub mod init;
pub mod pcm;
pub mod revision;

use std::fmt;

pub use init::{AudioConfig, ClientText, LiveInit, OutputConfig, live_languages};
pub use pcm::{Encoding, PcmDecoder};

use crate::ValidationError;

/// Why a session refused a message or ended early, as the `code` of an `Error` message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LiveErrorCode {
    /// Not a message of the protocol (bad JSON, no INIT first, audio before INIT).
    InvalidMessage,
    /// A field of the INIT has a value the server does not accept.
    InvalidParameter,
    /// No API key, or one that opens no account.
    Unauthorized,
    /// The balance cannot pay the next started minute.
    InsufficientBalance,
    /// Too many sessions on the server or the account.
    Capacity,
    /// A binary frame larger than the server takes.
    FrameTooLarge,
    /// No audio for too long.
    Idle,
    /// The server failed (the speech engine, the store).
    Internal,
}

impl LiveErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            LiveErrorCode::InvalidMessage => "INVALID_MESSAGE",
            LiveErrorCode::InvalidParameter => "INVALID_PARAMETER",
            LiveErrorCode::Unauthorized => "UNAUTHORIZED",
            LiveErrorCode::InsufficientBalance => "INSUFFICIENT_BALANCE",
            LiveErrorCode::Capacity => "CAPACITY",
            LiveErrorCode::FrameTooLarge => "FRAME_TOO_LARGE",
            LiveErrorCode::Idle => "IDLE",
            LiveErrorCode::Internal => "INTERNAL",
        }
    }

    /// The WebSocket close code (RFC 6455 §7.4.1) that follows an error of this kind.
    pub fn close_code(self) -> u16 {
        match self {
            LiveErrorCode::Capacity => 1013,      // try again later
            LiveErrorCode::FrameTooLarge => 1009, // message too big
            LiveErrorCode::Idle => 1000,
            LiveErrorCode::Internal => 1011,
            _ => 1008, // policy violation
        }
    }
}

impl fmt::Display for LiveErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An `Error` message: what went wrong, about which field, and what would have been accepted.
/// The session closes with `close_code` after sending it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct LiveError {
    pub code: LiveErrorCode,
    pub message: String,
    pub field: Option<String>,
    pub allowed: Vec<String>,
    pub close_code: u16,
}

impl LiveError {
    pub fn new(code: LiveErrorCode, message: impl Into<String>) -> LiveError {
        LiveError { code, message: message.into(), field: None, allowed: Vec::new(), close_code: code.close_code() }
    }

    /// An error about `field`, listing the `allowed` values (none when any value of a type goes).
    pub fn field(code: LiveErrorCode, field: &str, message: &str, allowed: &[&str]) -> LiveError {
        LiveError {
            field: Some(field.to_string()),
            allowed: allowed.iter().map(|a| a.to_string()).collect(),
            ..LiveError::new(code, message)
        }
    }

    /// A field of the INIT failed the API's shared validation.
    pub fn invalid(e: ValidationError) -> LiveError {
        LiveError { field: Some(e.field), ..LiveError::new(LiveErrorCode::InvalidParameter, e.message) }
    }
}

/// Samples per second of everything after decoding and resampling.
pub const SAMPLE_RATE: u64 = 16_000;

/// How many minutes a session has started after `received_samples` samples at 16 kHz: the
/// first sample starts minute 1, sample 960 000 starts minute 2. A session is paid like a
/// `direct` job, per started minute of audio received.
pub fn started_minutes(received_samples: u64) -> u32 {
    if received_samples == 0 { 0 } else { ((received_samples - 1) / (60 * SAMPLE_RATE) + 1) as u32 }
}

/// One word of a result: `start`/`end` (seconds from the start of the stream) and
/// `confidence` in finals only.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveWord {
    pub word: String,
    pub timing: Option<WordTiming>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WordTiming {
    pub start: f64,
    pub end: f64,
    pub confidence: f32,
}

/// A `PartialResult` or `FinalResult`: one segment (an utterance) of the stream.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveResult {
    /// Shared by every partial of the utterance and its final.
    pub id: String,
    pub is_final: bool,
    pub words: Vec<LiveWord>,
    /// The utterance's span, seconds from the start of the stream (finals only).
    pub span: Option<(f64, f64)>,
    /// A final sent again, read with the utterances around it ([`revision`]): it replaces the
    /// final of the same `id`.
    pub revised: bool,
}

impl LiveResult {
    /// The words joined as they are read.
    pub fn transcript(&self) -> String {
        let mut text = String::new();
        for w in &self.words {
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(w.word.trim());
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn given_audio_received_when_priced_then_every_started_minute_counts() {
        assert_eq!(started_minutes(0), 0);
        assert_eq!(started_minutes(1), 1);
        assert_eq!(started_minutes(960_000), 1);
        assert_eq!(started_minutes(960_001), 2);
        assert_eq!(started_minutes(3 * 960_000 + 5), 4);
    }

    #[test]
    fn every_code_has_its_close_code() {
        assert_eq!(LiveErrorCode::Capacity.close_code(), 1013);
        assert_eq!(LiveErrorCode::Unauthorized.close_code(), 1008);
        assert_eq!(LiveErrorCode::FrameTooLarge.close_code(), 1009);
        assert_eq!(LiveError::new(LiveErrorCode::Idle, "idle").close_code, 1000);
    }
}
