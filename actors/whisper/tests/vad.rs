//! Silero VAD on burn, checked two ways (see vad_reference.py): probabilities against a numpy
//! transcription of the reference PyTorch module on the same weights, and speech spans against
//! faster-whisper's own VAD (its ONNX file holds other v6 weights, so spans may differ by a
//! chunk or two at the edges, not more).

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use scribe_whisper::audio;
use scribe_whisper::vad::{self, SileroVad, VadError, VadParams};

fn repo() -> PathBuf {
    Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into())).join("../..")
}

fn vad_path() -> PathBuf {
    let dir = std::env::var_os("SCRIBE_MODELS_DIR").map(PathBuf::from).unwrap_or_else(|| repo().join("models"));
    let path = dir.join("silero_vad_16k.safetensors");
    assert!(path.exists(), "{} missing: run `bash ops/setup.sh` (or set SCRIBE_MODELS_DIR)", path.display());
    path
}

fn vad_model() -> SileroVad {
    SileroVad::load(&vad_path()).unwrap()
}

fn python() -> PathBuf {
    let venv = std::env::var_os("SCRIBE_VENV").map(PathBuf::from).unwrap_or_else(|| repo().join(".venv"));
    let py = venv.join("bin/python");
    assert!(py.exists(), "Python venv not found at {}: run `bash ops/setup.sh` (or set SCRIBE_VENV)", venv.display());
    py
}

fn corpus_clip(name: &str) -> Vec<f32> {
    let dir =
        std::env::var_os("SCRIBE_CORPUS_DIR").map(PathBuf::from).unwrap_or_else(|| repo().join("../shared/corpus"));
    assert!(dir.join("manifest.tsv").exists(), "speech corpus not found at {} (set SCRIBE_CORPUS_DIR)", dir.display());
    audio::decode_all(&dir.join("audio").join(name)).unwrap()
}

/// Reference probabilities (numpy, same weights) and faster-whisper's spans for `samples`.
fn reference(samples: &[f32], tag: &str) -> (Vec<f32>, Vec<Range<usize>>) {
    let dir = std::env::temp_dir().join(format!("scribe-vad-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join(format!("{tag}.f32"));
    let probs_out = dir.join(format!("{tag}.probs.f32"));
    std::fs::write(&input, samples.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
    let script = Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into()))
        .join("tests/vad_reference.py");
    let out = Command::new(python()).arg(script).arg(vad_path()).arg(&input).arg(&probs_out).output().unwrap();
    assert!(out.status.success(), "vad_reference.py failed: {}", String::from_utf8_lossy(&out.stderr));
    let spans = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Vec<usize> = l.split_whitespace().map(|s| s.parse().unwrap()).collect();
            v[0]..v[1]
        })
        .collect();
    let probs =
        std::fs::read(&probs_out).unwrap().chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect();
    (probs, spans)
}

fn check_against_faster_whisper(vad: &SileroVad, samples: &[f32], tag: &str) -> Vec<Range<usize>> {
    let start = Instant::now();
    let probs = vad.speech_probabilities(samples);
    eprintln!("{tag}: VAD over {:.1} s took {:?}", samples.len() as f64 / 16000.0, start.elapsed());
    let (expected, expected_spans) = reference(samples, tag);
    assert_eq!(probs.len(), expected.len(), "{tag}: chunk count");
    assert_eq!(probs.len(), samples.len() / 512 + 1);
    let worst = probs.iter().zip(&expected).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
    eprintln!("{tag}: largest probability difference {worst:e}");
    assert!(worst < 1e-4, "{tag}: largest probability difference {worst}");
    let spans = vad::speech_spans(&probs, samples.len(), &VadParams::default());
    // The span rules are exact: on the reference probabilities they give the same spans.
    assert_eq!(spans, vad::speech_spans(&expected, samples.len(), &VadParams::default()), "{tag}");
    eprintln!("{tag}: spans {spans:?}, faster-whisper {expected_spans:?}");
    assert_eq!(spans.len(), expected_spans.len(), "{tag}: {spans:?} vs faster-whisper {expected_spans:?}");
    for (a, b) in spans.iter().zip(&expected_spans) {
        let close = |x: usize, y: usize| x.abs_diff(y) <= 4_000; // 0.25 s
        assert!(
            close(a.start, b.start) && close(a.end, b.end),
            "{tag}: {spans:?} vs faster-whisper {expected_spans:?}"
        );
    }
    spans
}

#[test]
fn jfk_speech_is_found_as_faster_whisper_finds_it() {
    let vad = vad_model();
    let jfk = corpus_clip("en_jfk.wav");
    let spans = check_against_faster_whisper(&vad, &jfk, "jfk");
    assert!(!spans.is_empty());
    // The speech runs from about 0.3 s to 10.6 s.
    assert!(spans[0].start <= 8_000 && spans.last().unwrap().end >= 160_000, "{spans:?}");
}

#[test]
fn long_two_voice_file_matches_faster_whisper() {
    let vad = vad_model();
    let long = corpus_clip("en_synth_gettysburg_2voices.wav");
    let spans = check_against_faster_whisper(&vad, &long, "gettysburg");
    let speech: usize = spans.iter().map(|s| s.len()).sum();
    assert!(speech > long.len() / 2, "{spans:?}");
}

#[test]
fn silence_has_no_speech() {
    let vad = vad_model();
    let silence = corpus_clip("silence_10s.wav");
    let spans = check_against_faster_whisper(&vad, &silence, "silence");
    assert!(spans.is_empty(), "{spans:?}");
}

#[test]
fn streaming_equals_one_pass() {
    let vad = vad_model();
    let clip = corpus_clip("en_librispeech_1272-128104-0000.wav");
    let whole = vad.speech_probabilities(&clip);
    let mut stream = vad.stream();
    let mut pieces = Vec::new();
    for piece in clip.chunks(7_777) {
        pieces.extend(stream.push(piece));
    }
    pieces.extend(stream.finish());
    assert_eq!(whole.len(), pieces.len());
    let worst = whole.iter().zip(&pieces).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
    assert!(worst < 1e-5, "{worst}");
}

#[test]
fn span_rules_on_synthetic_probabilities() {
    let p = VadParams::default();
    // 1 s speech, 1 s pause (< 2 s min silence: one span), 1 s speech, 3 s silence.
    let mut probs = vec![0.9f32; 31];
    probs.extend(vec![0.1; 31]);
    probs.extend(vec![0.9; 31]);
    probs.extend(vec![0.1; 94]);
    let n = probs.len() * 512;
    let spans = vad::speech_spans(&probs, n, &p);
    assert_eq!(spans.len(), 1, "{spans:?}");
    assert_eq!(spans[0].start, 0);
    assert_eq!(spans[0].end, 93 * 512 + 6400);
    assert!(vad::speech_spans(&vec![0.2; 100], 51_200, &p).is_empty());
}

#[test]
fn bad_model_files_are_clear_errors() {
    let missing = Path::new("/nonexistent/silero_vad_16k.safetensors");
    let err = SileroVad::load(missing).err().unwrap();
    assert!(matches!(err, VadError::Io { .. }) && err.to_string().contains("ops/setup.sh"), "{err}");
    let dir = std::env::temp_dir().join(format!("scribe-vad-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let junk = dir.join("junk.safetensors");
    std::fs::write(&junk, b"not a safetensors file at all").unwrap();
    assert!(matches!(SileroVad::load(&junk), Err(VadError::Invalid { .. })));
}
