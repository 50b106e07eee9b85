//! Where the things a black-box test needs live: the `scribe` and `scribe-bench` binaries under
//! test, the models, the shared corpus, the Python tools venv and the Node.js tools beside it. Each
//! has an environment override and a default relative to the repository; a missing one fails with
//! the command that provides it.

use std::path::{Path, PathBuf};

/// The repository root (the workspace this crate belongs to).
pub fn repo() -> PathBuf {
    Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into()))
        .parent()
        .expect("tests/ lives in the repository")
        .to_path_buf()
}

/// The `scribe` binary: `$SCRIBE_BIN`, else `<target>/release/scribe` beside the running test
/// executable (which lives in `<target>/release/deps/`).
pub fn scribe_bin() -> PathBuf {
    built_binary("scribe", "SCRIBE_BIN")
}

/// The benchmarks' binary, `scribe-bench`: `$SCRIBE_BENCH_BIN`, else beside `scribe`.
pub fn bench_bin() -> PathBuf {
    built_binary("scribe-bench", "SCRIBE_BENCH_BIN")
}

/// The workspace binary `name`: `$override_var`, else `<target>/<profile>/<name>`.
fn built_binary(name: &str, override_var: &str) -> PathBuf {
    if let Some(bin) = std::env::var_os(override_var) {
        let bin = PathBuf::from(bin);
        assert!(bin.is_file(), "{override_var}={} does not exist", bin.display());
        return bin;
    }
    let exe = std::env::current_exe().expect("the test executable's path");
    let profile_dir =
        exe.parent().and_then(Path::parent).expect("the test executable lives in <target>/<profile>/deps");
    let bin = profile_dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.is_file(),
        "the {name} binary is missing at {}: run `cargo build --release --workspace --bins` first \
         (with the same CARGO_TARGET_DIR), or set {override_var}",
        bin.display()
    );
    bin
}

/// The models directory: `$SCRIBE_MODELS_DIR`, else `<repo>/models`. It must hold the default
/// Whisper model, the VAD weights and the speaker diarization models.
pub fn models_dir() -> PathBuf {
    let dir = std::env::var_os("SCRIBE_MODELS_DIR").map(PathBuf::from).unwrap_or_else(|| repo().join("models"));
    for needed in [
        "whisper-base/model.bin",
        "silero_vad_16k.safetensors",
        "diarization/pyannote_segmentation_3.0.bin",
        "diarization/campplus_cn_en_common.pt",
    ] {
        assert!(
            dir.join(needed).is_file(),
            "{} is missing: install the models with `bash ops/setup.sh` (or set SCRIBE_MODELS_DIR)",
            dir.join(needed).display()
        );
    }
    dir
}

/// The shared speech corpus: `$SCRIBE_CORPUS_DIR`, else `<repo>/../shared/corpus`.
pub fn corpus_dir() -> PathBuf {
    let dir = std::env::var_os("SCRIBE_CORPUS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("..").join("shared").join("corpus"));
    assert!(
        dir.join("manifest.tsv").is_file(),
        "the corpus is missing at {} (set SCRIBE_CORPUS_DIR to the directory holding manifest.tsv)",
        dir.display()
    );
    dir
}

/// A file of the corpus, e.g. `corpus_file("audio/en_jfk.wav")`.
pub fn corpus_file(relative: &str) -> PathBuf {
    let path = corpus_dir().join(relative);
    assert!(path.is_file(), "corpus file {} is missing", path.display());
    path
}

/// A program of the Python tools venv: `$SCRIBE_VENV/bin/<tool>`, default `<repo>/.venv`.
pub fn venv_bin(tool: &str) -> PathBuf {
    tools_path(&venv_dir().join("bin").join(tool))
}

/// A package of the Node.js tools installed beside the venv: `$SCRIBE_VENV/node/node_modules/<package>`.
pub fn node_package(package: &str) -> PathBuf {
    tools_path(&venv_dir().join("node").join("node_modules").join(package))
}

fn venv_dir() -> PathBuf {
    std::env::var_os("SCRIBE_VENV").map(PathBuf::from).unwrap_or_else(|| repo().join(".venv"))
}

fn tools_path(path: &Path) -> PathBuf {
    assert!(
        path.exists(),
        "{} is missing: run `bash ops/setup.sh` (or set SCRIBE_VENV to the tools venv)",
        path.display()
    );
    path.to_path_buf()
}

/// Every file and folder under `dir` whose name contains `id` (a job's media, transcripts and
/// documents are named after it).
pub fn files_named_after(dir: &Path, id: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.file_name().is_some_and(|n| n.to_string_lossy().contains(id)) {
            found.push(path.clone());
        }
        if path.is_dir() {
            found.extend(files_named_after(&path, id));
        }
    }
    found
}
