//! What the OpenAI door reads from the engine besides the words: each segment's decoder
//! statistics (seek, tokens, temperature, average log-probability, compression ratio,
//! no-speech probability) against faster-whisper on the same model (segments_reference.py),
//! a starting temperature, voice-detection settings per call, and segments handed over window
//! by window while the work goes on.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use scribe_whisper::audio::{self, SAMPLE_RATE};
use scribe_whisper::vad::VadParams;
use scribe_whisper::{Engine, EngineConfig, Progress, Segment, TranscribeOptions, Transcript};

fn repo() -> PathBuf {
    PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into()))
        .join("../..")
}

fn models_dir() -> PathBuf {
    let dir = std::env::var_os("SCRIBE_MODELS_DIR").map(PathBuf::from).unwrap_or_else(|| repo().join("models"));
    assert!(
        dir.join("whisper-base/model.bin").is_file() && dir.join("silero_vad_16k.safetensors").is_file(),
        "models not found in {} (set SCRIBE_MODELS_DIR or run `bash ops/setup.sh`)",
        dir.display()
    );
    dir
}

fn corpus() -> PathBuf {
    let dir =
        std::env::var_os("SCRIBE_CORPUS_DIR").map(PathBuf::from).unwrap_or_else(|| repo().join("../shared/corpus"));
    assert!(dir.join("manifest.tsv").is_file(), "speech corpus not found in {}", dir.display());
    dir
}

fn python() -> PathBuf {
    let venv = std::env::var_os("SCRIBE_VENV").map(PathBuf::from).unwrap_or_else(|| repo().join(".venv"));
    let py = venv.join("bin/python");
    assert!(py.exists(), "Python venv not found at {}: run `bash ops/setup.sh` (or set SCRIBE_VENV)", venv.display());
    py
}

fn engine(name: &str) -> &'static Engine {
    static TINY: OnceLock<Engine> = OnceLock::new();
    static BASE: OnceLock<Engine> = OnceLock::new();
    let cell = if name == "tiny.en" { &TINY } else { &BASE };
    cell.get_or_init(|| {
        let models = models_dir();
        Engine::load(&EngineConfig {
            model_dir: models.join(format!("whisper-{name}")),
            vad_path: Some(models.join("silero_vad_16k.safetensors")),
            threads: None,
            compute_type: scribe_whisper::ComputeType::Float16,
            device: Default::default(),
        })
        .unwrap_or_else(|e| panic!("loading {name}: {e}"))
    })
}

/// The sequential path (`batch_size: 1`), which these tests compare with faster-whisper's
/// sequential `transcribe`; the 100 s clip would otherwise be decoded in batches.
fn english() -> TranscribeOptions {
    TranscribeOptions { language: Some("en".into()), batch_size: 1, ..Default::default() }
}

/// Transcribes `path`, checking on the way that the progress reports hand over every segment
/// of the transcript once, in order, already final. Returns the transcript and the reports.
fn transcribe_streamed(model: &str, path: &Path, opts: &TranscribeOptions) -> (Transcript, Vec<Progress>) {
    let mut reports: Vec<Progress> = Vec::new();
    let t = engine(model).transcribe(path, opts, &mut |p| reports.push(p)).unwrap();
    let streamed: Vec<&Segment> = reports.iter().flat_map(|p| &p.segments).collect();
    assert_eq!(
        serde_json::to_value(&streamed).unwrap(),
        serde_json::to_value(&t.segments).unwrap(),
        "{model} {}: the segments reported during the run differ from the transcript's",
        path.display()
    );
    for p in &reports {
        for s in &p.segments {
            assert!(s.start <= p.done_s + 1e-6, "{model}: segment {s:?} reported at {} s", p.done_s);
        }
    }
    (t, reports)
}

/// One segment of faster-whisper's answer.
#[derive(serde::Deserialize, Debug)]
struct Reference {
    seek: usize,
    start: f64,
    text: String,
    tokens: Vec<u32>,
    temperature: f32,
    avg_logprob: f32,
    compression_ratio: f32,
    no_speech_prob: f32,
}

/// faster-whisper 1.2.1's segments for each of `clips` (corpus paths), in English.
fn faster_whisper(model: &str, clips: &[&str]) -> Vec<Vec<Reference>> {
    let script = repo().join("actors/whisper/tests/segments_reference.py");
    let out = Command::new(python())
        .arg(script)
        .arg(models_dir().join(format!("whisper-{model}")))
        .arg("en")
        .args(clips.iter().map(|c| corpus().join(c)))
        .output()
        .unwrap();
    assert!(out.status.success(), "segments_reference.py failed: {}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<serde_json::Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), clips.len());
    lines.into_iter().map(|l| serde_json::from_value(l["segments"].clone()).unwrap()).collect()
}

/// faster-whisper's `seek` is on the timeline of the speech alone (its voice detection cut the
/// silences out); the engine's on the media's. Maps a speech-time frame to the media's.
fn media_frame(speech_frame: usize, spans: &[std::ops::Range<f64>]) -> usize {
    let t = speech_frame as f64 / 100.0;
    let mut speech_start = 0.0;
    for span in spans {
        let len = span.end - span.start;
        if t < speech_start + len {
            return ((span.start + t - speech_start) * 100.0).round() as usize;
        }
        speech_start += len;
    }
    speech_frame
}

fn compare_with_faster_whisper(model: &str, clips: &[&str]) -> Vec<(Transcript, Vec<Progress>)> {
    let references = faster_whisper(model, clips);
    let mut runs = Vec::new();
    for (clip, reference) in clips.iter().zip(references) {
        let path = corpus().join(clip);
        let (t, reports) = transcribe_streamed(model, &path, &english());
        let spans = engine(model).speech_spans(&path, &VadParams::default()).unwrap();
        for s in &t.segments {
            println!(
                "{model} {clip} seek {} {:.2}-{:.2} T {} lp {:.4} cr {:.4} nsp {:.5} {}",
                s.seek, s.start, s.end, s.temperature, s.avg_logprob, s.compression_ratio, s.no_speech_prob, s.text
            );
        }
        assert_eq!(t.segments.len(), reference.len(), "{model} {clip}: {:#?}\nvs {reference:#?}", t.segments);
        for (ours, theirs) in t.segments.iter().zip(&reference) {
            let at = format!("{model} {clip} segment at {:.2} s {:?} vs {theirs:?}", ours.start, ours.text);
            assert_eq!(ours.text, theirs.text, "{at}");
            assert_eq!(ours.tokens, theirs.tokens, "{at}");
            assert_eq!(ours.temperature, theirs.temperature, "{at}");
            assert!((ours.avg_logprob - theirs.avg_logprob).abs() <= 0.01, "{at}");
            assert!((ours.no_speech_prob - theirs.no_speech_prob).abs() <= 0.01, "{at}");
            // Same text, but zlib-rs (flate2's backend in this workspace) and Python's zlib do not
            // deflate byte for byte alike: a window's ~150 compressed bytes differ by a few.
            let cr_error = (ours.compression_ratio - theirs.compression_ratio).abs() / theirs.compression_ratio;
            assert!(cr_error <= 0.02, "{at}: compression ratio off by {:.1} %", cr_error * 100.0);
            let expected_seek = media_frame(theirs.seek, &spans) as f64;
            assert!((ours.seek as f64 - expected_seek).abs() <= 5.0, "{at}: seek {} vs {expected_seek}", ours.seek);
            assert!((ours.start - theirs.start).abs() <= 0.3, "{at}");
            // The window's first segment cannot start before the window.
            assert!(ours.start >= ours.seek as f64 / 100.0 - 0.5, "{at}");
        }
        runs.push((t, reports));
    }
    runs
}

#[test]
fn segment_statistics_match_faster_whisper() {
    compare_with_faster_whisper("tiny.en", &["audio/en_jfk.wav", "audio/en_librispeech_1272-128104-0000.wav"]);
    compare_with_faster_whisper("base", &["audio/en_jfk.wav"]);
}

/// A 100 s clip decodes in several 30 s windows: each window's segments are reported when
/// it is done, with that window's statistics.
#[test]
fn segments_arrive_window_by_window() {
    let runs = compare_with_faster_whisper("tiny.en", &["audio/en_synth_gettysburg_2voices.wav"]);
    let (t, reports) = &runs[0];
    let with_segments: Vec<&Progress> = reports.iter().filter(|p| !p.segments.is_empty()).collect();
    assert!(with_segments.len() >= 3, "{} reports carried segments", with_segments.len());
    for p in &with_segments {
        let seeks: Vec<usize> = p.segments.iter().map(|s| s.seek).collect();
        assert!(seeks.iter().all(|&s| s == seeks[0]), "one report, one window: {seeks:?}");
    }
    let seeks: Vec<usize> = with_segments.iter().map(|p| p.segments[0].seek).collect();
    assert!(seeks.windows(2).all(|w| w[1] > w[0]), "windows go forward: {seeks:?}");
    assert!(reports.last().unwrap().segments.is_empty() && reports.last().unwrap().done_s == t.duration_s);
}

/// An English clip built for the voice detection: 2.5 s of silence, jfk, 3 s of silence, then
/// the librispeech clip ("Mr. Quilter is the apostle…").
fn gapped_clip(dir: &Path) -> PathBuf {
    let clip = |name: &str| audio::decode_all(&corpus().join("audio").join(name)).unwrap();
    let sr = SAMPLE_RATE as usize;
    let mut samples = vec![0.0f32; sr * 5 / 2];
    samples.extend(clip("en_jfk.wav"));
    samples.extend(std::iter::repeat_n(0.0, 3 * sr));
    samples.extend(clip("en_librispeech_1272-128104-0000.wav"));
    let path = dir.join("gapped.wav");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let data_len = (samples.len() * 2) as u32;
    f.write_all(b"RIFF").unwrap();
    f.write_all(&(36 + data_len).to_le_bytes()).unwrap();
    f.write_all(b"WAVEfmt ").unwrap();
    f.write_all(&16u32.to_le_bytes()).unwrap();
    f.write_all(&1u16.to_le_bytes()).unwrap(); // PCM
    f.write_all(&1u16.to_le_bytes()).unwrap(); // mono
    f.write_all(&SAMPLE_RATE.to_le_bytes()).unwrap();
    f.write_all(&(SAMPLE_RATE * 2).to_le_bytes()).unwrap();
    f.write_all(&2u16.to_le_bytes()).unwrap();
    f.write_all(&16u16.to_le_bytes()).unwrap();
    f.write_all(b"data").unwrap();
    f.write_all(&data_len.to_le_bytes()).unwrap();
    for &x in &samples {
        f.write_all(&((x * 32768.0).round().clamp(-32768.0, 32767.0) as i16).to_le_bytes()).unwrap();
    }
    f.flush().unwrap();
    path
}

#[test]
fn voice_detection_settings_change_the_spans_transcribed() {
    let dir = tempfile::tempdir().unwrap();
    let clip = gapped_clip(dir.path());
    let engine = engine("tiny.en");
    let default = VadParams::default();
    // The OpenAI door's server_vad: a stricter threshold, a longer silence to end speech, less padding.
    let server_vad = VadParams { threshold: 0.8, min_silence_ms: 4000, speech_pad_ms: 100, ..VadParams::default() };
    let default_spans = engine.speech_spans(&clip, &default).unwrap();
    let server_spans = engine.speech_spans(&clip, &server_vad).unwrap();
    println!("default {default_spans:?}\nserver_vad {server_spans:?}");
    // The 3 s gap ends speech after 2 s of silence, not after 4 s.
    assert_eq!(default_spans.len(), 2, "{default_spans:?}");
    assert_eq!(server_spans.len(), 1, "{server_spans:?}");
    // jfk's first word comes about 0.3 s into it (2.8 s here): padded by 400 ms, then by 100 ms
    // after a stricter threshold.
    assert!((2.0..2.8).contains(&default_spans[0].start), "{default_spans:?}");
    assert!(server_spans[0].start >= default_spans[0].start + 0.25, "{server_spans:?}");
    assert!(server_spans[0].start < 3.0, "{server_spans:?}");

    // transcribe cuts the media where speech_spans says: the first window starts at the first
    // span, and the words stay at their places in the file.
    for (params, spans) in [(default, default_spans), (server_vad, server_spans)] {
        let opts = TranscribeOptions { vad: params.clone(), ..english() };
        let (t, _) = transcribe_streamed("tiny.en", &clip, &opts);
        let first_frame = (spans[0].start * 100.0).round() as usize;
        assert_eq!(t.segments[0].seek, first_frame, "{params:?}: {:?}", t.segments);
        let said_at = |word: &str| -> Vec<f64> {
            let words = t.segments.iter().flat_map(|s| &s.words);
            words.filter(|w| w.text.to_lowercase().contains(word)).map(|w| w.start).collect()
        };
        // "Americans" is said 1.8 s into jfk (at 2.5 s), "Quilter" 0.4 s into librispeech (at 16.5 s).
        let (americans, quilter) = (said_at("americans"), said_at("quilter"));
        assert!(americans.len() == 1 && (americans[0] - 4.3).abs() <= 0.6, "{params:?}: {americans:?}");
        assert!(quilter.len() == 1 && (quilter[0] - 16.9).abs() <= 0.6, "{params:?}: {quilter:?}");
    }
}

/// A starting temperature above 0 decodes by sampling, and the segments say at which
/// temperature; without fallback it is the only one tried.
#[test]
fn a_starting_temperature_samples() {
    let clip = corpus().join(SAMPLING_CLIP);
    let (greedy, _) =
        transcribe_streamed("tiny.en", &clip, &TranscribeOptions { temperature_fallback: false, ..english() });
    assert!(greedy.segments.iter().all(|s| s.temperature == 0.0), "{:?}", greedy.segments);
    let opts = TranscribeOptions { temperature: 0.8, temperature_fallback: false, ..english() };
    let (sampled, _) = transcribe_streamed("tiny.en", &clip, &opts);
    assert!(sampled.segments.iter().all(|s| s.temperature == 0.8), "{:?}", sampled.segments);
    let tokens = |t: &Transcript| t.segments.iter().flat_map(|s| s.tokens.clone()).collect::<Vec<u32>>();
    assert_ne!(tokens(&sampled), tokens(&greedy), "sampling at 0.8 gave the beam search's tokens");
    // Sampling is seeded: the same call gives the same transcript.
    let (again, _) = transcribe_streamed("tiny.en", &clip, &opts);
    assert_eq!(tokens(&again), tokens(&sampled));
    // With fallback a window starts at 0.8 and may go on to 1.0, never below 0.8.
    let (fallback, _) = transcribe_streamed("tiny.en", &clip, &TranscribeOptions { temperature: 0.8, ..english() });
    assert!(fallback.segments.iter().all(|s| s.temperature == 0.8 || s.temperature == 1.0), "{:?}", fallback.segments);
}

/// A clip hard enough for tiny.en that sampling at 0.8 does not find the beam's tokens.
const SAMPLING_CLIP: &str = "audio/en_childes_macwhinney_010411a_18s.wav";
