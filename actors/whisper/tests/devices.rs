//! The network on burn's devices transcribes real speech as the CPU kernels do: tiny.en in
//! float32 and in float16 on corpus clips, through burn's tensor API on flex (every build) and
//! on Vulkan (with the `wgpu` feature; Mesa's lavapipe where there is no GPU), word for word
//! against the CPU path in float32, word timings within a frame or two; Silero VAD on Vulkan
//! hears the same speech.
//! (Encoder outputs and logits against CTranslate2 on random-weight networks of every geometry:
//! `model_geometries.rs`; the diarization models on Vulkan: scribe-diarize's `devices.rs`.)

mod common;

use scribe_whisper::{ComputeType, DeviceChoice, Engine, EngineConfig, TranscribeOptions, Transcript};

fn engine_on(device: DeviceChoice, compute_type: ComputeType) -> Engine {
    let models = common::models_dir();
    Engine::load(&EngineConfig {
        model_dir: models.join("whisper-tiny.en"),
        vad_path: Some(models.join("silero_vad_16k.safetensors")),
        threads: None,
        compute_type,
        device,
    })
    .unwrap_or_else(|e| panic!("tiny.en on {device} in {compute_type}: {e}"))
}

fn transcribe(engine: &Engine, clip: &str) -> Transcript {
    let path = common::corpus().join("audio").join(clip);
    let opts = TranscribeOptions { language: Some("en".into()), word_timestamps: true, ..Default::default() };
    engine.transcribe(&path, &opts, &mut |_| {}).unwrap_or_else(|e| panic!("{clip}: {e}"))
}

/// Two clips of one window (a speech, a read book) and one of four (two synthetic voices); on
/// lavapipe, which is slow (about 2 minutes for the long one), the two short ones.
const CLIPS: [&str; 3] = ["en_jfk.wav", "en_librispeech_1272-128104-0000.wav", "en_synth_gettysburg_2voices.wav"];

fn same_words_as_the_cpu(device: DeviceChoice, compute_type: ComputeType, clips: &[&str]) {
    let cpu = engine_on(DeviceChoice::Cpu, ComputeType::Float32);
    let other = engine_on(device, compute_type);
    assert_eq!(other.info().device, device);
    let device = format!("{device} in {compute_type}");
    for &clip in clips {
        let (want, got) = (transcribe(&cpu, clip), transcribe(&other, clip));
        let words = |t: &Transcript| t.segments.iter().flat_map(|s| s.words.clone()).collect::<Vec<_>>();
        let (want_words, got_words) = (words(&want), words(&got));
        let text = |w: &[scribe_whisper::Word]| w.iter().map(|w| w.text.as_str()).collect::<String>();
        assert_eq!(text(&got_words), text(&want_words), "{clip} on {device}");
        let worst = want_words
            .iter()
            .zip(&got_words)
            .map(|(a, b)| (a.start - b.start).abs().max((a.end - b.end).abs()))
            .fold(0.0f64, f64::max);
        println!("{clip} on {device}: {} words, timings within {worst:.3} s", got_words.len());
        assert!(worst <= 0.041, "{clip} on {device}: a word's time moved by {worst:.3} s (more than two frames)");
    }
}

#[test]
fn flex_through_burns_tensor_api_transcribes_as_the_cpu_kernels_do() {
    same_words_as_the_cpu(DeviceChoice::Flex, ComputeType::Float32, &CLIPS);
}

#[test]
fn flex_in_float16_transcribes_as_the_cpu_kernels_do() {
    same_words_as_the_cpu(DeviceChoice::Flex, ComputeType::Float16, &CLIPS[..2]);
}

#[cfg(feature = "wgpu")]
#[test]
fn vulkan_transcribes_as_the_cpu_kernels_do() {
    same_words_as_the_cpu(DeviceChoice::Vulkan(None), ComputeType::Float32, &CLIPS[..2]);
}

#[cfg(feature = "wgpu")]
#[test]
fn vulkan_in_float16_transcribes_as_the_cpu_kernels_do() {
    same_words_as_the_cpu(DeviceChoice::Vulkan(None), ComputeType::Float16, &CLIPS[..2]);
}

/// Silero VAD on Vulkan: the same speech probabilities within float tolerance, the same spans.
#[cfg(feature = "wgpu")]
#[test]
fn the_voice_detector_on_vulkan_hears_what_it_hears_on_the_cpu() {
    use scribe_whisper::vad::{SileroVad, VadParams, speech_spans};
    let path = common::models_dir().join("silero_vad_16k.safetensors");
    let device = DeviceChoice::Vulkan(None).placement().expect("a Vulkan device").device();
    let (cpu, gpu) = (SileroVad::load(&path).unwrap(), SileroVad::load_on(&path, &device).unwrap());
    for clip in CLIPS {
        let samples = scribe_whisper::audio::decode_all(&common::corpus().join("audio").join(clip)).unwrap();
        let (want, got) = (cpu.speech_probabilities(&samples), gpu.speech_probabilities(&samples));
        let worst = want.iter().zip(&got).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
        println!("{clip}: VAD probabilities on vulkan within {worst:.2e} of the cpu's");
        assert!(worst <= 1e-4, "{clip}: VAD probabilities differ by {worst}");
        let params = VadParams::default();
        assert_eq!(speech_spans(&got, samples.len(), &params), speech_spans(&want, samples.len(), &params), "{clip}");
    }
}

#[test]
fn a_device_the_build_lacks_is_refused_naming_the_feature() {
    if cfg!(feature = "cuda") {
        return;
    }
    let models = common::models_dir();
    let err = Engine::load(&EngineConfig {
        model_dir: models.join("whisper-tiny.en"),
        vad_path: None,
        threads: None,
        compute_type: ComputeType::Float32,
        device: DeviceChoice::Cuda(0),
    })
    .err()
    .expect("refused");
    assert!(err.to_string().contains("--features cuda"), "{err}");
}
