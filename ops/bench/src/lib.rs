//! The parts of `scribe-bench` its tests check directly: reading the corpus, building a long
//! recording from its clips, and measuring this machine's limits. The benchmarks themselves
//! live in the binary (`main.rs`).

pub mod corpus;
pub mod limits;
pub mod long_recording;
