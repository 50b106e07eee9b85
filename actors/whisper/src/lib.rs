//! Whisper speech recognition on burn, from any media file to timed words.
//!
//! Kept in its own crate so burn compiles once and the rest of Scribe rebuilds fast.
//! Pipeline: `audio` (decode any format to 16 kHz mono, window by window) → `vad` (Silero:
//! skip non-speech, decide "no speech") → `mel` (Whisper's log-mel, bit-exact) → `model`
//! (encoder/decoder on burn, weights from `ct2`) → `decode` (beam search, timestamp rules,
//! temperature fallback) → `align` (word timestamps by DTW over alignment heads). `engine`
//! ties them together behind one `Engine::transcribe` call (`transcribe_samples` for audio in
//! memory). For live audio, `audio::StreamResampler` brings any rate to 16 kHz, the VAD runs
//! on an owned `vad::VadState`, and `utterances` cuts the stream at pauses.
pub mod align;
pub mod audio;
pub mod ct2;
pub mod decode;
pub mod device;
pub mod engine;
pub mod languages;
pub mod malloc;
pub mod mel;
pub mod model;
pub mod profile;
pub mod repetition;
pub mod speech;
pub mod tokenizer;
pub mod utterances;
pub mod vad;
pub mod verbatim;

pub use device::DeviceChoice;
pub use engine::{
    ComputeType, EncoderWindow, Engine, EngineConfig, EngineError, IfFitFails, ModelCost, ModelInfo, ModelSummary,
    Progress, Segment, Task, TranscribeOptions, Transcript, Word, inspect_model,
};
