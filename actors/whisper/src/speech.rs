//! The speech of a media file (or of samples in memory) as Whisper's 30 s windows, without
//! holding the file in memory.
//!
//! The audio comes from a [`Media`]: a file, decoded as it is read, or a slice of 16 kHz samples
//! already in memory (a live utterance); both take the same path from here on, so an utterance
//! is windowed, normalised and decoded exactly as a file with the same samples would be.
//! Long files are streamed, never decoded whole: a first pass ([`scan`]) decodes the media once,
//! counting samples and keeping only the VAD's per-chunk speech probabilities (one float per
//! 32 ms); the speech spans follow from those. Every later pass re-opens the media and reads
//! only the speech samples ([`SpeechReader`]) into a rolling buffer ([`Windows`]) that covers
//! the current window plus the STFT's few hundred samples of context, and forgets what lies
//! behind the window start. A second pass finds the spectrogram's global maximum (the
//! reference of Whisper's max − 8 floor, which faster-whisper takes over the whole speech), so
//! every window's features are exactly those of a whole-file log-mel.

use std::fmt;
use std::ops::Range;
use std::path::Path;

use crate::audio::{self, AudioError, AudioStream, SAMPLE_RATE};
use crate::mel::{self, LogMel};
use crate::vad::SileroVad;

/// Samples decoded per read (5 s).
const READ: usize = SAMPLE_RATE as usize * 5;

/// Where the audio comes from.
#[derive(Clone, Copy, Debug)]
pub enum Media<'a> {
    /// A media file in any format [`audio::open`] reads.
    File(&'a Path),
    /// 16 kHz mono samples in memory.
    Samples(&'a [f32]),
}

impl fmt::Display for Media<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Media::File(path) => write!(f, "{}", path.display()),
            Media::Samples(samples) => write!(f, "{} samples in memory", samples.len()),
        }
    }
}

/// The audio of a [`Media`], read from its start in pieces of at most [`READ`] samples.
enum Source<'a> {
    File(AudioStream),
    Samples { samples: &'a [f32], pos: usize },
}

impl<'a> Source<'a> {
    fn open(media: Media<'a>) -> Result<Source<'a>, AudioError> {
        match media {
            Media::File(path) => Ok(Source::File(audio::open(path)?)),
            Media::Samples(samples) => Ok(Source::Samples { samples, pos: 0 }),
        }
    }

    /// The next piece, or `None` at the end; `Empty` when a file holds no audio at all.
    fn read(&mut self) -> Result<Option<Vec<f32>>, AudioError> {
        match self {
            Source::File(stream) => stream.read(READ),
            Source::Samples { samples, pos } => {
                if *pos == 0 && samples.is_empty() {
                    return Err(AudioError::Empty);
                }
                let piece = &samples[*pos..(*pos + READ).min(samples.len())];
                *pos += piece.len();
                Ok((!piece.is_empty()).then(|| piece.to_vec()))
            }
        }
    }
}

/// What the first pass learns about a file.
pub struct Scan {
    /// Samples in the whole file (16 kHz).
    pub n_samples: usize,
    /// VAD speech probability per 512-sample chunk (empty without VAD).
    pub probabilities: Vec<f32>,
}

/// Reads `media` once, counting samples and running the VAD (when given) as it goes.
pub fn scan(media: Media<'_>, vad: Option<&SileroVad>) -> Result<Scan, AudioError> {
    let mut stream = Source::open(media)?;
    let mut vad_stream = vad.map(|v| v.stream());
    let mut probabilities = Vec::new();
    let mut n_samples = 0;
    while let Some(chunk) = stream.read()? {
        n_samples += chunk.len();
        if let Some(v) = vad_stream.as_mut() {
            probabilities.extend(v.push(&chunk));
        }
    }
    if let Some(v) = vad_stream {
        probabilities.extend(v.finish());
    }
    if n_samples == 0 {
        return Err(AudioError::Empty);
    }
    Ok(Scan { n_samples, probabilities })
}

/// Reads the samples of `spans` (sorted, disjoint sample ranges of the media), in order, as one
/// continuous signal: the speech the VAD kept, or the whole media.
pub struct SpeechReader<'a> {
    stream: Source<'a>,
    spans: Vec<Range<usize>>,
    /// First span not yet wholly read.
    next_span: usize,
    /// File position of the next decoded sample.
    pos: usize,
}

impl<'a> SpeechReader<'a> {
    pub fn open(media: Media<'a>, spans: &[Range<usize>]) -> Result<SpeechReader<'a>, AudioError> {
        Ok(SpeechReader { stream: Source::open(media)?, spans: spans.to_vec(), next_span: 0, pos: 0 })
    }

    /// The next piece of speech, or `None` when every span has been read.
    pub fn read(&mut self) -> Result<Option<Vec<f32>>, AudioError> {
        while self.next_span < self.spans.len() {
            let Some(chunk) = self.stream.read()? else {
                self.next_span = self.spans.len(); // the file is shorter than its spans: stop
                break;
            };
            let chunk_range = self.pos..self.pos + chunk.len();
            self.pos = chunk_range.end;
            let mut kept = Vec::new();
            for span in &self.spans[self.next_span..] {
                if span.start >= chunk_range.end {
                    break;
                }
                let (a, b) = (span.start.max(chunk_range.start), span.end.min(chunk_range.end));
                if a < b {
                    kept.extend_from_slice(&chunk[a - chunk_range.start..b - chunk_range.start]);
                }
            }
            while self.next_span < self.spans.len() && self.spans[self.next_span].end <= self.pos {
                self.next_span += 1;
            }
            if !kept.is_empty() {
                return Ok(Some(kept));
            }
        }
        Ok(None)
    }
}

/// Log-mel windows of a streamed speech signal of `total` samples.
pub struct Windows<'a> {
    reader: SpeechReader<'a>,
    total: usize,
    n_mels: usize,
    max_log10: f32,
    /// Speech samples `start..start + buf.len()`.
    buf: Vec<f32>,
    start: usize,
}

impl<'a> Windows<'a> {
    /// Opens the speech for windowing: one streaming pass over it finds the global maximum the
    /// features are normalised by; [`Windows::window`] then reads it again as it goes.
    pub fn open(
        media: Media<'a>,
        spans: &[Range<usize>],
        total: usize,
        n_mels: usize,
    ) -> Result<Windows<'a>, AudioError> {
        let mut pass = Windows {
            reader: SpeechReader::open(media, spans)?,
            total,
            n_mels,
            max_log10: 0.0,
            buf: Vec::new(),
            start: 0,
        };
        let n_frames = mel::n_frames(total);
        let mut max = f32::NEG_INFINITY;
        for first in (0..n_frames).step_by(mel::N_FRAMES) {
            let power = pass.power(first, mel::N_FRAMES.min(n_frames - first))?;
            max = max.max(mel::max_log10(&power));
        }
        Ok(Windows {
            reader: SpeechReader::open(media, spans)?,
            total,
            n_mels,
            max_log10: max,
            buf: Vec::new(),
            start: 0,
        })
    }

    /// Frames that hold speech (the features' last frame only covers padding).
    pub fn content_frames(&self) -> usize {
        self.total / mel::HOP
    }

    /// The features of frames `first..first + N_FRAMES`, row-major `[n_mels × N_FRAMES]`:
    /// frames past the speech are zero, as Whisper pads a short last window. Also returns how
    /// many frames hold speech. Windows must be asked for in non-decreasing order of `first`.
    pub fn window(&mut self, first: usize) -> Result<(Vec<f32>, usize), AudioError> {
        let size = mel::N_FRAMES.min(self.content_frames().saturating_sub(first));
        let mut out = vec![0.0f32; self.n_mels * mel::N_FRAMES];
        if size > 0 {
            let mut power = self.power(first, size)?;
            mel::normalize(&mut power, self.max_log10);
            for m in 0..self.n_mels {
                out[m * mel::N_FRAMES..m * mel::N_FRAMES + size].copy_from_slice(&power.data[m * size..(m + 1) * size]);
            }
        }
        Ok((out, size))
    }

    /// Mel power of frames `first..first + n`, reading on and forgetting the samples before them.
    fn power(&mut self, first: usize, n: usize) -> Result<LogMel, AudioError> {
        let support = mel::frame_support(first, n, self.total);
        if support.start > self.start {
            let drop = (support.start - self.start).min(self.buf.len());
            self.buf.drain(..drop);
            self.start += drop;
        }
        while self.start + self.buf.len() < support.end {
            match self.reader.read()? {
                Some(piece) => self.buf.extend_from_slice(&piece),
                None => break,
            }
        }
        if self.start + self.buf.len() < support.end {
            // The file gave fewer samples than on the first pass: a decoding error.
            return Err(AudioError::Corrupt { reason: "the audio changed between two readings".into() });
        }
        Ok(mel::mel_power_frames(&self.buf, self.start, self.total, first, n, self.n_mels))
    }

    /// Samples currently held (for tests and memory reports).
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }
}
