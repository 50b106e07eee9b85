//! Command-line subcommands other than `serve`: each module exposes its clap `Args` and a `run`.

pub mod bench_asr;
pub mod bench_cluster;
pub mod bench_crash;
pub mod bench_diarization;
pub mod bench_env;
pub mod bench_eventstore;
pub mod bench_gemm;
pub mod bench_restart;
pub mod bench_status;
pub mod bench_upload;
pub mod server_process;
pub mod subtitle_report;
pub mod transcribe;
