//! A long recording made of the corpus's real clips: the clips in manifest order, joined by a
//! pause of digital silence, the set repeated in order until the recording is long enough (a
//! meeting or a podcast of several speakers, for the long-recording benchmark), with its
//! reference: the clips' references joined in the same order.

use std::path::{Path, PathBuf};

use anyhow::{Context, ensure};
use scribe_whisper::audio::{self, SAMPLE_RATE};

use crate::corpus::Clip;

/// The pause between two clips in the benchmark's recordings, in seconds.
pub const GAP_S: f64 = 0.7;

/// One clip's place in the recording.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placed {
    /// The clip's manifest path.
    pub file: String,
    /// First sample of the clip in the recording.
    pub start: usize,
    /// Its length in samples.
    pub len: usize,
}

impl Placed {
    pub fn end(&self) -> usize {
        self.start + self.len
    }
}

/// A written recording: where, how long, what was said, and where each clip sits.
#[derive(Clone, Debug)]
pub struct LongRecording {
    pub path: PathBuf,
    /// Length in samples (16 kHz mono).
    pub samples: usize,
    /// The clips' references joined with spaces, in the recording's order.
    pub reference: String,
    pub clips: Vec<Placed>,
}

impl LongRecording {
    pub fn duration_s(&self) -> f64 {
        self.samples as f64 / SAMPLE_RATE as f64
    }
}

/// Writes to `out` a 16-bit 16 kHz mono WAV of at least `min_seconds` (and at least one pass
/// over `clips`): `clips` in order, `gap_s` of silence between two, repeated in order; read
/// from `corpus` (any format the engine reads).
pub fn build(corpus: &Path, clips: &[Clip], min_seconds: f64, gap_s: f64, out: &Path) -> anyhow::Result<LongRecording> {
    ensure!(!clips.is_empty(), "no clips to build a recording from");
    let audio: Vec<Vec<f32>> = clips
        .iter()
        .map(|c| audio::decode_all(&corpus.join(&c.file)).with_context(|| format!("cannot read {}", c.file)))
        .collect::<anyhow::Result<_>>()?;
    ensure!(audio.iter().any(|a| !a.is_empty()), "the clips hold no audio");
    let gap = (gap_s * SAMPLE_RATE as f64).round() as usize;
    let min_samples = (min_seconds * SAMPLE_RATE as f64).ceil() as usize;
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: SAMPLE_RATE,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut wav = hound::WavWriter::create(out, spec).with_context(|| format!("cannot create {}", out.display()))?;
    let (mut samples, mut placed, mut reference) = (0usize, Vec::new(), Vec::new());
    'rounds: loop {
        for (clip, pcm) in clips.iter().zip(&audio) {
            if !placed.is_empty() {
                for _ in 0..gap {
                    wav.write_sample(0i16)?;
                }
                samples += gap;
            }
            for &s in pcm {
                wav.write_sample(to_i16(s))?;
            }
            placed.push(Placed { file: clip.file.clone(), start: samples, len: pcm.len() });
            reference.push(clip.transcript.trim());
            samples += pcm.len();
            if samples >= min_samples && placed.len() >= clips.len() {
                break 'rounds;
            }
        }
    }
    wav.finalize().with_context(|| format!("cannot write {}", out.display()))?;
    Ok(LongRecording { path: out.to_path_buf(), samples, reference: reference.join(" "), clips: placed })
}

/// A sample in [-1, 1] as 16-bit PCM (the corpus's clips are 16-bit: this gives their values back).
fn to_i16(s: f32) -> i16 {
    (s * 32768.0).round().clamp(i16::MIN as f32, i16::MAX as f32) as i16
}
