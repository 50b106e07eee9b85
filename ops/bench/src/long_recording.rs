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

/// A long-form recording of the corpus read as its takes: the recording itself (`clip`, whose
/// `sidecars` name a `.segments.tsv` of takes: start_s, end_s, speaker, id, text), and each
/// take cut out of it into `dir` as a clip of its own, with the take's text as its reference.
/// The recording's reference is the takes' texts joined, so it scores against the same words
/// as the takes decoded one by one.
pub fn from_takes(corpus: &Path, clip: &Clip, dir: &Path) -> anyhow::Result<(LongRecording, Vec<Clip>)> {
    let sidecar = corpus.join(clip.sidecar.as_deref().context("the recording names no takes (`sidecars`)")?);
    let table = std::fs::read_to_string(&sidecar).with_context(|| format!("cannot read {}", sidecar.display()))?;
    let path = corpus.join(&clip.file);
    let pcm = audio::decode_all(&path).with_context(|| format!("cannot read {}", clip.file))?;
    let sr = SAMPLE_RATE as f64;
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: SAMPLE_RATE,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let (mut placed, mut takes) = (Vec::new(), Vec::new());
    for line in table.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split('\t').collect();
        ensure!(f.len() >= 5, "{}: a take needs start, end, speaker, id and text: {line}", sidecar.display());
        let (start, end): (f64, f64) = (f[0].parse()?, f[1].parse()?);
        let (first, last) =
            (((start * sr).round() as usize).min(pcm.len()), ((end * sr).round() as usize).min(pcm.len()));
        let out = dir.join(format!("{}.wav", f[3]));
        let mut wav =
            hound::WavWriter::create(&out, spec).with_context(|| format!("cannot create {}", out.display()))?;
        for &s in &pcm[first..last] {
            wav.write_sample(to_i16(s))?;
        }
        wav.finalize()?;
        let file = out.to_string_lossy().into_owned();
        placed.push(Placed { file: file.clone(), start: first, len: last - first });
        takes.push(Clip {
            file,
            duration_s: (last - first) as f64 / sr,
            transcript: f[4].to_string(),
            line: String::new(),
            long_form: false,
            sidecar: None,
        });
    }
    ensure!(!takes.is_empty(), "{} lists no takes", sidecar.display());
    let reference = takes.iter().map(|t| t.transcript.trim()).collect::<Vec<_>>().join(" ");
    Ok((LongRecording { path, samples: pcm.len(), reference, clips: placed }, takes))
}
