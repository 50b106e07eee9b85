//! Scribe's runtime: the event store port and its adapters, media storage and fetching, and the
//! actors that run jobs.

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
pub mod eventstore;
pub mod fair_queue;
pub mod jobs;
pub mod media;
pub mod media_worker;
pub mod pipeline;
pub mod retention;
pub mod runtime;
pub mod speech_model;
pub mod translation;
pub mod worker;
