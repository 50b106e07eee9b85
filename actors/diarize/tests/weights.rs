//! A missing or foreign model file is an error that names it.

use std::path::PathBuf;

use scribe_diarize::Diarizer;
use scribe_diarize::embedding::CamPlus;
use scribe_diarize::segmentation::Segmentation;

fn models() -> PathBuf {
    std::env::var_os("SCRIBE_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models"))
}

#[test]
fn missing_models_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let err = Diarizer::load(dir.path()).err().expect("no models here").to_string();
    assert!(err.contains("pyannote_segmentation_3.0.bin") && err.contains("missing"), "{err}");
}

#[test]
fn a_file_that_is_not_a_checkpoint_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("garbage.bin");
    std::fs::write(&path, b"not a zip, not a pickle").unwrap();
    let err = Segmentation::load(&path).err().expect("garbage").to_string();
    assert!(err.contains("garbage.bin") && err.contains("not a PyTorch checkpoint"), "{err}");
}

/// Each model's file given to the other model's loader: a real checkpoint, the wrong one.
#[test]
fn swapped_checkpoints_are_foreign() {
    let seg = models().join(scribe_diarize::pipeline::SEGMENTATION_FILE);
    let emb = models().join(scribe_diarize::pipeline::EMBEDDING_FILE);
    let err = CamPlus::load(&seg).err().expect("segmentation is not CAM++").to_string();
    assert!(err.contains("pyannote_segmentation_3.0.bin") && err.contains("CAM++"), "{err}");
    let err = Segmentation::load(&emb).err().expect("CAM++ is not segmentation").to_string();
    assert!(err.contains("campplus_cn_en_common.pt") && err.contains("segmentation-3.0"), "{err}");
}

#[test]
fn shapes_of_the_outputs() {
    let d = Diarizer::load(&models()).expect("models (bash ops/setup.sh)");
    let _ = d;
    let seg = Segmentation::load(&models().join(scribe_diarize::pipeline::SEGMENTATION_FILE)).unwrap();
    let act = seg.activations(&vec![0.0; 160_000], 1);
    assert_eq!(act.len(), 589 * 3);
    let cam = CamPlus::load(&models().join(scribe_diarize::pipeline::EMBEDDING_FILE)).unwrap();
    let tone: Vec<f32> = (0..16_000).map(|i| (i as f32 * 0.05).sin() * 0.1).collect();
    let e = cam.embed_samples(&tone);
    assert_eq!(e.len(), 192);
    assert!(e.iter().all(|v| v.is_finite()));
}
