//! Scribe's runtime: media storage and fetching, and the actors that run jobs (on the event store
//! of `scribe-eventstore`).

pub mod accounts;
pub mod asr;
pub mod billing;
pub mod callbacks;
pub mod checkpoint;
pub mod clock;
pub mod cluster;
pub mod command;
pub mod diarization;
pub mod engine_document;
pub mod fair_queue;
pub mod jobs;
pub mod live;
pub mod media;
pub mod media_worker;
pub mod pipeline;
pub mod recognition_feed;
pub mod retention;
pub mod runtime;
pub mod speech_model;
mod store_follow;
pub mod translation;
pub mod worker;
