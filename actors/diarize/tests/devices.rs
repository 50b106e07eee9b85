//! The diarization models on a burn device other than this CPU hear what they hear on it: with
//! the `wgpu` feature, on Vulkan (Mesa's lavapipe where there is no GPU), the segmentation's
//! logits and CAM++'s embedding of a real recording within float tolerance of burn's flex
//! device, and the whole pipeline finds the same speakers and turns. Without the feature there
//! is nothing to compare, and the file holds no test.
#![cfg(feature = "wgpu")]

use std::path::PathBuf;

use burn::tensor::Device;
use scribe_diarize::embedding::CamPlus;
use scribe_diarize::pipeline::{EMBEDDING_FILE, SEGMENTATION_FILE};
use scribe_diarize::segmentation::{Segmentation, WINDOW};
use scribe_diarize::{DiarizeOptions, Diarizer};
use scribe_whisper::DeviceChoice;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn models() -> PathBuf {
    std::env::var_os("SCRIBE_MODELS_DIR").map(PathBuf::from).unwrap_or_else(|| repo().join("models"))
}

/// Two synthetic voices reading the Gettysburg address in turns (about 2 minutes).
fn two_voices() -> Vec<f32> {
    let corpus =
        std::env::var_os("SCRIBE_CORPUS_DIR").map(PathBuf::from).unwrap_or_else(|| repo().join("../shared/corpus"));
    scribe_whisper::audio::decode_all(&corpus.join("audio/en_synth_gettysburg_2voices.wav")).expect("corpus clip")
}

fn vulkan() -> Device {
    DeviceChoice::Vulkan(None).placement().expect("a Vulkan device (Mesa's lavapipe: mesa-vulkan-drivers)").device()
}

fn worst_difference(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

#[test]
fn segmentation_and_embeddings_on_vulkan_match_the_cpu() {
    let samples = two_voices();
    let path = models().join(SEGMENTATION_FILE);
    let (cpu, gpu) = (Segmentation::load(&path).unwrap(), Segmentation::load_on(&path, &vulkan()).unwrap());
    let windows = &samples[..2 * WINDOW];
    let (want, got) = (cpu.logits(windows, 2), gpu.logits(windows, 2));
    let worst = worst_difference(&want, &got);
    println!("segmentation logits of two 10 s windows on vulkan: within {worst:.2e} of the cpu");
    assert!(worst <= 1e-3, "segmentation logits differ by {worst}");

    let path = models().join(EMBEDDING_FILE);
    let (cpu, gpu) = (CamPlus::load(&path).unwrap(), CamPlus::load_on(&path, &vulkan()).unwrap());
    let clip = &samples[..5 * 16_000];
    let (want, got) = (cpu.embed_samples(clip), gpu.embed_samples(clip));
    let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
    let cosine = want.iter().zip(&got).map(|(a, b)| a * b).sum::<f32>() / (norm(&want) * norm(&got));
    println!("CAM++ embedding of 5 s on vulkan: cosine {cosine:.7} with the cpu's");
    assert!(cosine >= 0.9999, "embeddings differ: cosine {cosine}");
}

#[test]
fn the_pipeline_on_vulkan_finds_the_speakers_and_turns_the_cpu_finds() {
    let samples = two_voices();
    let opts = DiarizeOptions::default();
    let want = Diarizer::load(&models()).unwrap().diarize(&samples, &opts);
    let got = Diarizer::load_on(&models(), &vulkan()).unwrap().diarize(&samples, &opts);
    println!(
        "{} speakers, {} turns on the cpu; {} and {} on vulkan",
        want.speakers,
        want.turns.len(),
        got.speakers,
        got.turns.len()
    );
    assert_eq!(got.speakers, want.speakers);
    assert_eq!(got.turns.len(), want.turns.len());
    for (a, b) in want.turns.iter().zip(&got.turns) {
        assert_eq!(a.speaker, b.speaker);
        assert!((a.start - b.start).abs() <= 0.05 && (a.end - b.end).abs() <= 0.05, "{a:?} against {b:?}");
    }
}
