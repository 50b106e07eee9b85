//! The harness of Scribe's black-box tests (the tests themselves are in `tests/tests/`): a real
//! `scribe serve` on a loopback port with its own data directory ([`TestServer`]), the client
//! calls and error-body checks every test repeats ([`api`]), a loopback file server that plays
//! the internet for URL jobs and callbacks ([`FileServer`]), the binary's own checks run as tests
//! ([`mod@bench`]), speech the corpus lacks ([`speech`]), and where the binary, the models and the
//! corpus live ([`paths`]).
//!
//! ```no_run
//! use scribe_tests::{TestServer, paths};
//! let server = TestServer::start();
//! let job = server.upload_ok(server.key(), &paths::corpus_file("audio/en_jfk.wav"), &[]);
//! assert_eq!(job["status"], "OPEN");
//! ```

pub mod api;
pub mod bench;
pub mod browser;
pub mod files;
pub mod live;
pub mod paths;
pub mod server;
pub mod speech;
pub mod web_app;

pub use api::Reply;
pub use browser::Browser;
pub use files::FileServer;
pub use server::{Options, TestServer};

/// How long a direct job on a corpus clip may take to finish (real ASR on a busy 2-core machine).
pub const ASR_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

/// Corpus clips the tests use (paths relative to the corpus directory).
pub mod clips {
    /// 11.0 s of speech, the canonical Whisper sample.
    pub const JFK: &str = "audio/en_jfk.wav";
    /// 2.95 s of speech: the cheapest real job.
    pub const SHORT: &str = "audio/en_command_what_s_the_weather_like_in_new_york.wav";
    /// 13 minutes of one reader (LJ Speech, chapter 3): a job long enough to follow its progress.
    pub const LONG_READING: &str = "audio/en_dctts_reader_lj003_longform.wav";
    /// 10 s of digital silence.
    pub const SILENCE: &str = "audio/silence_10s.wav";
    /// 8 KiB of random bytes named .mp3.
    pub const CORRUPT_RANDOM: &str = "audio/variants/corrupt_random_bytes.mp3";
    /// The first 1500 bytes of an mp3.
    pub const CORRUPT_TRUNCATED: &str = "audio/variants/corrupt_truncated.mp3";
}
