//! Scribe's rules, free of I/O and async: identifiers, requests and their validation,
//! languages, glossaries, the job state machine (`decide`/`evolve`) and its versioned events,
//! the transcript model, subtitle segmentation and the export renderers.
//!
//! Nothing here reads a clock, draws a random number or touches a file: times, ids, prices and
//! measured facts arrive as arguments, so every rule is a plain function a test can call.

pub mod account;
pub mod aggregate;
pub mod capabilities;
pub mod codec;
pub mod decoding;
pub mod editing;
pub mod error;
pub mod export;
pub mod fillers;
pub mod glossary;
pub mod http_url;
pub mod human;
pub mod ids;
pub mod job;
pub mod kinds;
pub mod languages;
pub mod live;
pub mod openai;
pub mod options;
pub mod requests;
pub mod speakers;
pub mod style;
pub mod subtitles;
pub mod transcript;
pub mod translation;

#[cfg(test)]
mod testing;

pub use aggregate::Aggregate;
pub use codec::{DecodeError, VersionedEvent};
pub use error::ValidationError;
