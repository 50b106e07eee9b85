//! Whisper's log-mel against the originals: OpenAI's shipped filter bank and faster-whisper's
//! `FeatureExtractor` (run through the project's Python venv).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use scribe_whisper::audio;
use scribe_whisper::mel::{self, N_BINS};

fn repo() -> PathBuf {
    Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into())).join("../..")
}

fn models() -> PathBuf {
    let dir = std::env::var_os("SCRIBE_MODELS_DIR").map(PathBuf::from).unwrap_or_else(|| repo().join("models"));
    assert!(
        dir.join("mel_filters_80.npy").exists(),
        "models not found in {}: run `bash ops/setup.sh` (or set SCRIBE_MODELS_DIR)",
        dir.display()
    );
    dir
}

fn python() -> PathBuf {
    let venv = std::env::var_os("SCRIBE_VENV").map(PathBuf::from).unwrap_or_else(|| repo().join(".venv"));
    let py = venv.join("bin/python");
    assert!(py.exists(), "Python venv not found at {}: run `bash ops/setup.sh` (or set SCRIBE_VENV)", venv.display());
    py
}

fn corpus() -> PathBuf {
    let dir =
        std::env::var_os("SCRIBE_CORPUS_DIR").map(PathBuf::from).unwrap_or_else(|| repo().join("../shared/corpus"));
    assert!(dir.join("manifest.tsv").exists(), "speech corpus not found at {} (set SCRIBE_CORPUS_DIR)", dir.display());
    dir
}

/// Reads a little-endian f32 `.npy` (version 1 or 2 header), returning shape and data.
fn read_npy_f32(path: &Path) -> (Vec<usize>, Vec<f32>) {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..6], b"\x93NUMPY", "{} is not a .npy file", path.display());
    let (header_len, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        _ => (u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize, 12),
    };
    let header = std::str::from_utf8(&bytes[start..start + header_len]).unwrap();
    assert!(header.contains("'descr': '<f4'"), "not little-endian f32: {header}");
    assert!(header.contains("'fortran_order': False"), "{header}");
    let shape_text = header.split("'shape': (").nth(1).unwrap().split(')').next().unwrap();
    let shape = shape_text.split(',').filter(|s| !s.trim().is_empty()).map(|s| s.trim().parse().unwrap()).collect();
    let data = bytes[start + header_len..].chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect();
    (shape, data)
}

#[test]
fn filters_match_openai_mel_filters_npz() {
    let (shape, expected) = read_npy_f32(&models().join("mel_filters_80.npy"));
    assert_eq!(shape, vec![80, N_BINS]);
    let ours = mel::mel_filters(80);
    let worst = ours.iter().zip(&expected).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
    assert!(worst < 1e-6, "largest difference {worst}");
    // 128 mels (large-v3): same formula, sane shape — every filter has weight somewhere.
    let f128 = mel::mel_filters(128);
    assert_eq!(f128.len(), 128 * N_BINS);
    assert!(f128.chunks_exact(N_BINS).all(|row| row.iter().any(|&w| w > 0.0)));
}

fn compare_with_faster_whisper(samples: &[f32], n_mels: usize, tag: &str) {
    let dir = std::env::temp_dir().join(format!("scribe-mel-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join(format!("{tag}.f32"));
    let output = dir.join(format!("{tag}-{n_mels}.mel.f32"));
    std::fs::write(&input, samples.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
    let script = Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into()))
        .join("tests/mel_reference.py");
    let out = Command::new(python()).arg(script).arg(&input).arg(n_mels.to_string()).arg(&output).output().unwrap();
    assert!(out.status.success(), "mel_reference.py failed: {}", String::from_utf8_lossy(&out.stderr));
    let dims: Vec<usize> =
        String::from_utf8(out.stdout).unwrap().split_whitespace().map(|s| s.parse().unwrap()).collect();
    let expected: Vec<f32> =
        std::fs::read(&output).unwrap().chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect();

    let start = Instant::now();
    let ours = mel::log_mel(samples, n_mels);
    eprintln!("{tag}: log_mel of {:.1} s took {:?}", samples.len() as f64 / 16000.0, start.elapsed());
    assert_eq!((ours.n_mels, ours.n_frames), (dims[0], dims[1]), "{tag}: shape");
    assert_eq!(ours.n_frames, samples.len() / 160 + 1);
    let worst = ours.data.iter().zip(&expected).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
    eprintln!("{tag}: {n_mels} mels, largest difference {worst:e}");
    assert!(worst < 1e-3, "{tag}: largest difference {worst}");
}

#[test]
fn log_mel_matches_faster_whisper() {
    let jfk = audio::decode_all(&corpus().join("audio/en_jfk.wav")).unwrap();
    compare_with_faster_whisper(&jfk, 80, "jfk");
    compare_with_faster_whisper(&jfk, 128, "jfk");
    let libri = audio::decode_all(&corpus().join("audio/en_librivox_sense_sensibility_0880.wav")).unwrap();
    compare_with_faster_whisper(&libri, 80, "librivox");
    // Shorter than the reflect padding: numpy mirrors repeatedly.
    compare_with_faster_whisper(&jfk[30_000..30_100], 80, "tiny");
}

#[test]
fn silence_gives_the_floor_everywhere() {
    let m = mel::log_mel(&vec![0.0; 16_000], 80);
    assert_eq!((m.n_mels, m.n_frames), (80, 101));
    // log10(1e-10) = -10 → (−10 + 4) / 4
    assert!(m.data.iter().all(|&x| (x + 1.5).abs() < 1e-6));
}
