//! Command-line subcommands other than `serve`: each module exposes its clap `Args` and a `run`.

pub mod subtitle_report;
pub mod transcribe;
