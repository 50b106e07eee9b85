//! Scribe's runtime: the event store port and its adapters, media storage and fetching, and the
//! actors that run jobs.

pub mod eventstore;
pub mod media;
