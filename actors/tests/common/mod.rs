//! Where the actor tests find the models and the shared corpus; each test binary that needs
//! them says `mod common;`. Not every binary uses every function.
#![allow(dead_code)]

use std::path::PathBuf;

fn manifest_dir() -> PathBuf {
    PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into()))
}

/// `SCRIBE_MODELS_DIR`, or `models/` at the repository root; it must hold Whisper tiny.en.
pub fn models_dir() -> PathBuf {
    let dir =
        std::env::var_os("SCRIBE_MODELS_DIR").map(PathBuf::from).unwrap_or_else(|| manifest_dir().join("../models"));
    assert!(
        dir.join("whisper-tiny.en/model.bin").is_file(),
        "no models in {} (run `bash ops/setup.sh`)",
        dir.display()
    );
    dir
}

/// `SCRIBE_CORPUS_DIR`, or `shared/corpus` beside the repository.
pub fn corpus_dir() -> PathBuf {
    let dir = std::env::var_os("SCRIBE_CORPUS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest_dir().join("../../shared/corpus"));
    assert!(dir.join("audio/en_jfk.wav").is_file(), "corpus not found at {} (set SCRIBE_CORPUS_DIR)", dir.display());
    dir
}

/// The JFK clip of the corpus.
pub fn jfk() -> PathBuf {
    corpus_dir().join("audio/en_jfk.wav")
}
