//! Media in: any audio or video file → 16 kHz mono f32 samples, read piece by piece: the
//! channels mixed down ([`open`]), or one channel alone ([`open_channel`], for a call recorded one
//! party per channel).
//!
//! Exists so the rest of the engine never cares about containers, codecs, channel layouts or
//! sample rates. symphonia decodes what it can (wav, flac, mp3, aac/m4a/mp4/mov, ogg vorbis,
//! mkv...) and rubato resamples its output; everything else (opus, wma, dss, avi, wmv, mpg,
//! vob...) goes through the `ffmpeg` program, which pipes 16 kHz mono f32 on stdout. ffmpeg is
//! also the fallback when symphonia recognises a container but cannot decode its audio.
//! The format is always chosen from the content, never from the file name.
//!
//! Gapless: symphonia trims mp3 encoder delay and padding (LAME info), so an mp3 decodes to
//! the duration of its source (jfk: 11.0 s, not the 11.088 s ffprobe reports). It does not
//! apply MP4 edit lists, so MP4/M4A/MOV go to ffmpeg when it is installed (the AAC priming
//! samples would otherwise delay every timestamp by 64 ms or more).

use std::fs::File;
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::JoinHandle;

use rubato::audioadapter_buffers::direct::InterleavedSlice;
use rubato::{Fft, FixedSync, Indexing, Resampler};
use symphonia::core::codecs::audio::{AudioDecoder, AudioDecoderOptions};
use symphonia::core::errors::Error as SymError;
use symphonia::core::formats::probe::Hint;
use symphonia::core::formats::{FormatOptions, FormatReader, TrackType};
use symphonia::core::io::MediaSourceStream;
use symphonia::core::meta::MetadataOptions;

/// The sample rate every consumer of this module works at.
pub const SAMPLE_RATE: u32 = 16_000;

/// What `probe` found out about a media file.
#[derive(Clone, Debug, PartialEq)]
pub struct MediaInfo {
    /// Duration of the audio track in seconds (0.0 when the container does not say).
    pub duration_s: f64,
    /// Container, e.g. "wav", "isomp4", "mp3" (symphonia) or "matroska,webm" (ffmpeg).
    pub container: String,
    /// Audio codec, e.g. "pcm_s16le", "aac", "opus".
    pub codec: String,
    /// Audio channels (1 mono, 2 stereo, ...); 0 when `probe` could not tell without decoding
    /// (a stream opened with [`open`] or [`open_channel`] knows it from its first packet).
    pub channels: usize,
}

/// Why a file cannot be turned into audio. `Display` is written for the person who uploaded it.
#[derive(Debug, thiserror::Error)]
pub enum AudioError {
    #[error("The file is not a recognised audio or video format")]
    NotMedia,
    #[error("The media contains no audio track")]
    NoAudioTrack,
    #[error("The media contains no audio (it is empty)")]
    Empty,
    #[error("The audio could not be decoded: {reason}")]
    Corrupt { reason: String },
    #[error(
        "The file is cut short: it ends after {got_s:.1} s although it announces {announced_s:.1} s (an incomplete upload or download?)"
    )]
    Truncated { got_s: f64, announced_s: f64 },
    #[error(
        "The file announces {announced_s:.0} s of audio but holds only {bytes} bytes: it is cut short or its header is damaged"
    )]
    Implausible { announced_s: f64, bytes: u64 },
    #[error("Could not read {}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("Decoding with ffmpeg failed: {reason}")]
    Ffmpeg { reason: String },
    #[error("The media has no audio channel {}: it has {channels}", index + 1)]
    NoSuchChannel { index: usize, channels: usize },
}

/// Sample rates a real recording can have; a header outside them is damaged (and a resampler
/// built for it would run away with memory and time).
const PLAUSIBLE_RATES: std::ops::RangeInclusive<u32> = 1_000..=768_000;

/// Fewer bytes than this per announced second of audio cannot hold it in any codec (two hours
/// of digital silence in FLAC take about 190 bytes a second): the header lies.
const MIN_BYTES_PER_SECOND: f64 = 8.0;

/// Looks at the content of `path` (never its name) and reports duration, container and codec.
pub fn probe(path: &Path) -> Result<MediaInfo, AudioError> {
    match Probed::open(path)? {
        Probed::Symphonia(s) => Ok(s.info),
        Probed::Ffmpeg(info) => Ok(info),
    }
}

/// Opens `path` for streaming as 16 kHz mono f32, its channels averaged.
pub fn open(path: &Path) -> Result<AudioStream, AudioError> {
    open_as(path, None)
}

/// Opens channel `index` (0 = the first, the left of a stereo file) of `path` alone, as 16 kHz
/// mono f32. A channel the audio does not have is [`AudioError::NoSuchChannel`]; the stream's
/// `info().channels` says how many there are.
pub fn open_channel(path: &Path, index: usize) -> Result<AudioStream, AudioError> {
    open_as(path, Some(index))
}

/// `channel`: `None` mixes every channel down, `Some(i)` takes channel `i` alone.
fn open_as(path: &Path, channel: Option<usize>) -> Result<AudioStream, AudioError> {
    let mut stream = match Probed::open(path)? {
        Probed::Ffmpeg(info) => return AudioStream::ffmpeg(path, info, channel),
        Probed::Symphonia(mut s) => {
            s.channel = channel;
            AudioStream { info: s.info.clone(), source: Source::Symphonia(Box::new(s)), out: Vec::new(), served: 0 }
        }
    };
    // symphonia sometimes recognises a container whose content it cannot decode: decode the
    // first piece now and hand such files to ffmpeg instead.
    match stream.fill(1) {
        Ok(()) => {}
        Err(AudioError::Corrupt { reason }) if ffmpeg_available() => {
            tracing::debug!(%reason, "symphonia failed on the first packet, falling back to ffmpeg");
            let info = ffprobe(path).map_err(|_| AudioError::Corrupt { reason })?;
            return AudioStream::ffmpeg(path, info, channel);
        }
        Err(e) => return Err(e),
    }
    // Some containers name no channel count; the first decoded packet has one.
    if let Source::Symphonia(s) = &stream.source
        && s.channels_seen > 0
    {
        stream.info.channels = s.channels_seen;
    }
    check_channel(channel, stream.info.channels)?;
    Ok(stream)
}

/// Refuses a channel beyond the `channels` the audio has (when it is known).
fn check_channel(channel: Option<usize>, channels: usize) -> Result<(), AudioError> {
    match channel {
        Some(index) if channels > 0 && index >= channels => Err(AudioError::NoSuchChannel { index, channels }),
        _ => Ok(()),
    }
}

/// Decodes a whole file into memory. For short files and tests; long files should `open`.
pub fn decode_all(path: &Path) -> Result<Vec<f32>, AudioError> {
    let mut stream = open(path)?;
    let mut all = Vec::new();
    while let Some(chunk) = stream.read(SAMPLE_RATE as usize * 30)? {
        all.extend_from_slice(&chunk);
    }
    Ok(all)
}

/// A decoding media file, read in pieces of 16 kHz mono samples.
pub struct AudioStream {
    info: MediaInfo,
    source: Source,
    /// Decoded samples not yet handed out (bounded: at most one request plus one packet).
    out: Vec<f32>,
    served: u64,
}

enum Source {
    Symphonia(Box<SymphoniaSource>),
    Ffmpeg(FfmpegSource),
    Done,
}

impl AudioStream {
    pub fn info(&self) -> &MediaInfo {
        &self.info
    }

    /// Returns up to `max_samples` samples, or `None` at the end of the audio. Only the first
    /// call can fail with `Empty`; a stream that stops early fails with `Corrupt`.
    pub fn read(&mut self, max_samples: usize) -> Result<Option<Vec<f32>>, AudioError> {
        let max_samples = max_samples.max(1);
        self.fill(max_samples)?;
        if self.out.is_empty() {
            return Ok(None);
        }
        let n = max_samples.min(self.out.len());
        let chunk: Vec<f32> = self.out.drain(..n).collect();
        self.served += n as u64;
        Ok(Some(chunk))
    }

    /// Decodes until `out` holds `want` samples or the source ends.
    fn fill(&mut self, want: usize) -> Result<(), AudioError> {
        while self.out.len() < want {
            let more = match &mut self.source {
                Source::Symphonia(s) => s.decode_more(&mut self.out)?,
                Source::Ffmpeg(f) => f.decode_more(&mut self.out, want)?,
                Source::Done => return Ok(()),
            };
            if !more {
                self.source = Source::Done;
                let total = self.served + self.out.len() as u64;
                if total == 0 {
                    return Err(AudioError::Empty);
                }
                check_not_truncated(total, self.info.duration_s)?;
            }
        }
        Ok(())
    }

    fn ffmpeg(path: &Path, info: MediaInfo, channel: Option<usize>) -> Result<AudioStream, AudioError> {
        check_channel(channel, info.channels)?;
        let source = Source::Ffmpeg(FfmpegSource::spawn(path, channel)?);
        let mut stream = AudioStream { info, source, out: Vec::new(), served: 0 };
        stream.fill(1)?;
        Ok(stream)
    }
}

/// A file whose header announces far more audio than it holds was cut short (a partial
/// upload or download): say so rather than transcribe a fragment.
fn check_not_truncated(samples: u64, announced_s: f64) -> Result<(), AudioError> {
    check_not_truncated_s(samples as f64 / SAMPLE_RATE as f64, announced_s)
}

fn check_not_truncated_s(got_s: f64, announced_s: f64) -> Result<(), AudioError> {
    if announced_s > 0.0 && got_s < 0.9 * announced_s - 0.5 {
        return Err(AudioError::Truncated { got_s, announced_s });
    }
    Ok(())
}

/// The result of looking at a file: symphonia can take it, or ffmpeg has to.
#[allow(clippy::large_enum_variant)] // one per opened file, moved once
enum Probed {
    Symphonia(SymphoniaSource),
    Ffmpeg(MediaInfo),
}

impl Probed {
    fn open(path: &Path) -> Result<Probed, AudioError> {
        let file = File::open(path).map_err(|source| AudioError::Io { path: path.into(), source })?;
        let len = file.metadata().map_err(|source| AudioError::Io { path: path.into(), source })?.len();
        if len == 0 {
            return Err(AudioError::Empty);
        }
        let probed = Probed::open_file(path, file, len)?;
        let info = match &probed {
            Probed::Symphonia(s) => &s.info,
            Probed::Ffmpeg(info) => info,
        };
        if info.duration_s > 60.0 && (len as f64) < info.duration_s * MIN_BYTES_PER_SECOND {
            return Err(AudioError::Implausible { announced_s: info.duration_s, bytes: len });
        }
        Ok(probed)
    }

    fn open_file(path: &Path, file: File, len: u64) -> Result<Probed, AudioError> {
        match SymphoniaSource::open(file, len) {
            // symphonia 0.6 ignores MP4 edit lists, so AAC's encoder delay (1024+ samples)
            // would shift every timestamp; ffmpeg honours them.
            Ok(s) if s.info.container == "isomp4" && ffmpeg_available() => Ok(Probed::Ffmpeg(ffprobe(path)?)),
            Ok(s) => Ok(Probed::Symphonia(s)),
            // ffprobe has the last word: it may see an audio track symphonia does not list.
            Err(SymphoniaRefusal::NoAudioTrack) if !ffmpeg_available() => Err(AudioError::NoAudioTrack),
            Err(SymphoniaRefusal::Io(source)) => Err(AudioError::Io { path: path.into(), source }),
            Err(SymphoniaRefusal::Refused(e)) => Err(e),
            Err(SymphoniaRefusal::Unknown | SymphoniaRefusal::NoAudioTrack) => {
                if !ffmpeg_available() {
                    return Err(AudioError::NotMedia);
                }
                Ok(Probed::Ffmpeg(ffprobe(path)?))
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// symphonia

enum SymphoniaRefusal {
    /// Not a format (or codec) symphonia handles: ask ffmpeg.
    Unknown,
    /// A container symphonia understands, holding no audio at all.
    NoAudioTrack,
    Io(std::io::Error),
    /// Understood, and wrong: the file cannot be used.
    Refused(AudioError),
}

struct SymphoniaSource {
    info: MediaInfo,
    format: Box<dyn FormatReader>,
    decoder: Box<dyn AudioDecoder>,
    track_id: u32,
    resampler: Option<To16k>,
    interleaved: Vec<f32>,
    mono: Vec<f32>,
    /// Packets in a row that failed to decode.
    bad_packets: u32,
    /// `None`: every channel averaged; `Some(i)`: channel `i` alone.
    channel: Option<usize>,
    /// The channel count of the last decoded packet (0 before the first).
    channels_seen: usize,
}

/// Packets in a row that may fail before the stream is declared corrupt (a few bad packets in
/// a long file are skipped, as players do).
const MAX_BAD_PACKETS: u32 = 20;

impl SymphoniaSource {
    fn open(file: File, len: u64) -> Result<SymphoniaSource, SymphoniaRefusal> {
        let mss = MediaSourceStream::new(Box::new(file), Default::default());
        let format = match symphonia::default::get_probe().probe(
            &Hint::new(),
            mss,
            FormatOptions::default(),
            MetadataOptions::default(),
        ) {
            Ok(f) => f,
            Err(SymError::IoError(e)) if e.kind() != ErrorKind::UnexpectedEof => {
                return Err(SymphoniaRefusal::Io(e));
            }
            Err(_) => return Err(SymphoniaRefusal::Unknown),
        };
        let Some(track) = format.default_track(TrackType::Audio) else {
            // A container with only video (or subtitles), as far as symphonia can tell.
            return if format.tracks().is_empty() {
                Err(SymphoniaRefusal::Unknown)
            } else {
                Err(SymphoniaRefusal::NoAudioTrack)
            };
        };
        let Some(params) = track.codec_params.as_ref().and_then(|p| p.audio()).cloned() else {
            return Err(SymphoniaRefusal::Unknown);
        };
        let codecs = symphonia::default::get_codecs();
        let Ok(decoder) = codecs.make_audio_decoder(&params, &AudioDecoderOptions::default()) else {
            return Err(SymphoniaRefusal::Unknown); // e.g. opus or ac3 inside mp4/mkv
        };
        let Some(rate) = params.sample_rate.filter(|&r| r > 0) else {
            return Err(SymphoniaRefusal::Unknown);
        };
        if !PLAUSIBLE_RATES.contains(&rate) {
            return Err(SymphoniaRefusal::Refused(AudioError::Corrupt {
                reason: format!(
                    "the file announces a sample rate of {rate} Hz, which no real recording has (a damaged header?)"
                ),
            }));
        }
        if track.num_frames == Some(0) {
            return Err(SymphoniaRefusal::Refused(AudioError::Empty));
        }
        let duration_s = track.num_frames.map_or(0.0, |n| n as f64 / rate as f64);
        let info = MediaInfo {
            duration_s,
            container: format.format_info().short_name.to_string(),
            codec: decoder.codec_info().short_name.to_string(),
            channels: params.channels.as_ref().map_or(0, |c| c.count()),
        };
        // Uncompressed audio takes a known number of bytes a second: a header announcing more
        // than the file holds (a cut upload, or a lie) is caught before anyone is charged for it.
        if info.codec.starts_with("pcm") {
            let bits = params.bits_per_coded_sample.or(params.bits_per_sample).unwrap_or(0);
            let channels = params.channels.as_ref().map_or(0, |c| c.count());
            let bytes_per_s = f64::from(rate) * channels as f64 * f64::from(bits.div_ceil(8));
            if bytes_per_s > 0.0 {
                check_not_truncated_s(len as f64 / bytes_per_s, duration_s).map_err(SymphoniaRefusal::Refused)?;
            }
        }
        let resampler = if rate == SAMPLE_RATE { None } else { Some(To16k::new(rate)) };
        Ok(SymphoniaSource {
            info,
            track_id: track.id,
            format,
            decoder,
            resampler,
            interleaved: Vec::new(),
            mono: Vec::new(),
            bad_packets: 0,
            channel: None,
            channels_seen: 0,
        })
    }

    /// Decodes one packet (or flushes the resampler at the end) into `out`.
    /// Returns false once the stream is exhausted.
    fn decode_more(&mut self, out: &mut Vec<f32>) -> Result<bool, AudioError> {
        loop {
            let packet = match self.format.next_packet() {
                Ok(Some(p)) => p,
                // End of stream; a file cut mid-packet ends here too (judged by the caller).
                Ok(None) | Err(SymError::ResetRequired) => return self.finish(out),
                Err(SymError::IoError(e)) if e.kind() == ErrorKind::UnexpectedEof => {
                    return self.finish(out);
                }
                Err(e) => return Err(AudioError::Corrupt { reason: e.to_string() }),
            };
            if packet.track_id != self.track_id {
                continue;
            }
            let buf = match self.decoder.decode(&packet) {
                Ok(buf) => buf,
                Err(SymError::DecodeError(_) | SymError::IoError(_)) if self.bad_packets < MAX_BAD_PACKETS => {
                    self.bad_packets += 1;
                    continue;
                }
                Err(e) => return Err(AudioError::Corrupt { reason: e.to_string() }),
            };
            self.bad_packets = 0;
            let channels = buf.spec().channels().count().max(1);
            if buf.frames() == 0 {
                continue;
            }
            buf.copy_to_vec_interleaved(&mut self.interleaved);
            self.channels_seen = channels;
            self.mono.clear();
            match self.channel {
                None => self
                    .mono
                    .extend(self.interleaved.chunks_exact(channels).map(|f| f.iter().sum::<f32>() / channels as f32)),
                // A packet with fewer channels than the stream (an mp3 switching to mono) gives
                // every channel its last one.
                Some(c) => self.mono.extend(self.interleaved.chunks_exact(channels).map(|f| f[c.min(channels - 1)])),
            }
            match &mut self.resampler {
                Some(r) => r.push(&self.mono, out)?,
                None => out.extend_from_slice(&self.mono),
            }
            return Ok(true);
        }
    }

    fn finish(&mut self, out: &mut Vec<f32>) -> Result<bool, AudioError> {
        if let Some(r) = &mut self.resampler {
            r.finish(out)?;
        }
        Ok(false)
    }
}

/// Sample rates a live stream may announce.
pub const STREAM_RATES: std::ops::RangeInclusive<u32> = 8_000..=48_000;

/// A live stream announced a sample rate outside [`STREAM_RATES`].
#[derive(Debug, thiserror::Error)]
#[error("The sample rate {rate} Hz is not supported: it must be from 8000 to 48000 Hz")]
pub struct UnsupportedRate {
    pub rate: u32,
}

/// Brings a live stream of mono samples at any rate of [`STREAM_RATES`] to 16 kHz, piece by
/// piece, with the resampler the file path uses (so a stream and a file of the same audio give
/// the same samples). Each `push` returns what its input completed: the output lags the input
/// by about one resampler block (1024 input samples) until [`StreamResampler::finish`]
/// flushes the tail. At 16 kHz it passes the samples through untouched.
pub struct StreamResampler {
    /// `None` at 16 kHz.
    inner: Option<To16k>,
}

impl StreamResampler {
    pub fn new(from_rate: u32) -> Result<StreamResampler, UnsupportedRate> {
        if !STREAM_RATES.contains(&from_rate) {
            return Err(UnsupportedRate { rate: from_rate });
        }
        Ok(StreamResampler { inner: (from_rate != SAMPLE_RATE).then(|| To16k::new(from_rate)) })
    }

    /// Takes the next samples (any count) and returns the 16 kHz samples now complete.
    pub fn push(&mut self, samples: &[f32]) -> Vec<f32> {
        let Some(r) = &mut self.inner else { return samples.to_vec() };
        let mut out = Vec::with_capacity(samples.len() * SAMPLE_RATE as usize / r.rate_in as usize + 1024);
        r.push(samples, &mut out).expect(RESAMPLER_SIZES);
        out
    }

    /// Ends the stream: the last samples, so that the output holds `ceil(n × 16000 / rate)`
    /// samples for `n` pushed.
    pub fn finish(self) -> Vec<f32> {
        let mut out = Vec::new();
        if let Some(mut r) = self.inner {
            r.finish(&mut out).expect(RESAMPLER_SIZES);
        }
        out
    }
}

/// rubato fails only on buffers of the wrong size, and `To16k` sizes them from rubato's own
/// figures.
const RESAMPLER_SIZES: &str = "the resampler's buffers are sized from its own requirements";

/// Streaming resampler from any rate to 16 kHz (rubato's FFT resampler, mono).
struct To16k {
    fft: Fft<f32>,
    rate_in: u32,
    pending: Vec<f32>,
    scratch: Vec<f32>,
    /// Output frames still to drop: the resampler's delay.
    skip: usize,
    frames_in: u64,
    frames_out: u64,
}

impl To16k {
    fn new(rate_in: u32) -> To16k {
        let fft = Fft::<f32>::new(rate_in as usize, SAMPLE_RATE as usize, 1024, 1, FixedSync::Input)
            .expect("rates are positive and the chunk size is non-zero");
        let skip = fft.output_delay();
        To16k { fft, rate_in, pending: Vec::new(), scratch: Vec::new(), skip, frames_in: 0, frames_out: 0 }
    }

    fn push(&mut self, mono: &[f32], out: &mut Vec<f32>) -> Result<(), AudioError> {
        self.frames_in += mono.len() as u64;
        self.pending.extend_from_slice(mono);
        let mut used = 0;
        while self.pending.len() - used >= self.fft.input_frames_next() {
            let n = self.fft.input_frames_next();
            let idx = Indexing { input_offset: used, ..Indexing::new() };
            let produced = self.run(n + used, Some(&idx))?;
            used += produced.0;
            self.emit(out, produced.1, u64::MAX);
        }
        self.pending.drain(..used);
        Ok(())
    }

    /// Flushes the tail: feeds silence until every input frame has come out.
    fn finish(&mut self, out: &mut Vec<f32>) -> Result<(), AudioError> {
        let expected = (self.frames_in * SAMPLE_RATE as u64).div_ceil(self.rate_in as u64);
        while self.frames_out < expected {
            let partial = self.pending.len();
            let idx = Indexing { partial_len: Some(partial), ..Indexing::new() };
            let (_, produced) = self.run(partial, Some(&idx))?;
            self.pending.clear();
            if produced == 0 {
                break;
            }
            self.emit(out, produced, expected);
        }
        Ok(())
    }

    /// Runs one resampler chunk over `pending[..input_len]` into `scratch`.
    fn run(&mut self, input_len: usize, idx: Option<&Indexing>) -> Result<(usize, usize), AudioError> {
        let corrupt = |e: &dyn std::fmt::Display| AudioError::Corrupt { reason: format!("resampling failed: {e}") };
        self.scratch.resize(self.fft.output_frames_max(), 0.0);
        let input = InterleavedSlice::new(&self.pending[..input_len], 1, input_len).map_err(|e| corrupt(&e))?;
        let frames = self.scratch.len();
        let mut output = InterleavedSlice::new_mut(&mut self.scratch[..], 1, frames).map_err(|e| corrupt(&e))?;
        self.fft.process_into_buffer(&input, &mut output, idx).map_err(|e| corrupt(&e))
    }

    fn emit(&mut self, out: &mut Vec<f32>, produced: usize, limit: u64) {
        let drop = self.skip.min(produced);
        self.skip -= drop;
        let room = limit.saturating_sub(self.frames_out) as usize;
        let take = (produced - drop).min(room);
        out.extend_from_slice(&self.scratch[drop..drop + take]);
        self.frames_out += take as u64;
    }
}

// ---------------------------------------------------------------------------------------------
// ffmpeg

fn ffmpeg_available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        Command::new("ffmpeg")
            .arg("-version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// Asks ffprobe what the file is, judging by content alone.
fn ffprobe(path: &Path) -> Result<MediaInfo, AudioError> {
    let link = NamelessLink::new(path)?;
    let output = Command::new("ffprobe")
        .args([
            "-v",
            "error",
            "-show_entries",
            "format=format_name,duration:stream=codec_type,codec_name,duration,channels",
            "-of",
            "json",
        ])
        .arg(&link.path)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| AudioError::Ffmpeg { reason: format!("could not run ffprobe ({e}); run `bash ops/setup.sh`") })?;
    if !output.status.success() {
        return Err(AudioError::NotMedia);
    }
    let json: serde_json::Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| AudioError::Ffmpeg { reason: format!("unreadable ffprobe output: {e}") })?;
    let format = &json["format"];
    let container = format["format_name"].as_str().unwrap_or_default().to_string();
    if NOT_MEDIA_FORMATS.contains(&container.as_str()) {
        return Err(AudioError::NotMedia);
    }
    let streams = json["streams"].as_array().cloned().unwrap_or_default();
    let audio = streams.iter().find(|s| s["codec_type"] == "audio");
    let Some(audio) = audio else {
        return if streams.iter().any(|s| s["codec_type"] == "video") {
            Err(AudioError::NoAudioTrack)
        } else {
            Err(AudioError::NotMedia)
        };
    };
    let seconds = |v: &serde_json::Value| v.as_str().and_then(|s| s.parse::<f64>().ok());
    let duration_s = seconds(&audio["duration"]).or_else(|| seconds(&format["duration"])).unwrap_or(0.0);
    let codec = audio["codec_name"].as_str().unwrap_or_default().to_string();
    if codec.is_empty() || codec == "none" {
        return Err(AudioError::Corrupt { reason: "its audio is in a codec that no decoder here knows".into() });
    }
    let channels = audio["channels"].as_u64().unwrap_or(0) as usize;
    Ok(MediaInfo { duration_s, container, codec, channels })
}

/// ffmpeg demuxers that accept plain text or images; a file detected as one of these is not
/// audio or video for Scribe.
const NOT_MEDIA_FORMATS: &[&str] = &[
    "tty",
    "srt",
    "webvtt",
    "ass",
    "subviewer",
    "subviewer1",
    "microdvd",
    "mpl2",
    "jacosub",
    "lrc",
    "pjs",
    "realtext",
    "sami",
    "stl",
    "vplayer",
    "aqtitle",
    "image2",
    "png_pipe",
    "jpeg_pipe",
    "gif",
    "svg_pipe",
    "webp_pipe",
    "bmp_pipe",
    "txt",
];

/// A symlink without extension to the media, so ffmpeg picks its demuxer from the content
/// (given a name, ffmpeg also trusts the extension). Removed on drop.
struct NamelessLink {
    dir: PathBuf,
    path: PathBuf,
}

impl NamelessLink {
    fn new(target: &Path) -> Result<NamelessLink, AudioError> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let io = |source| AudioError::Io { path: target.into(), source };
        let target = std::fs::canonicalize(target).map_err(io)?;
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("scribe-media-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(io)?;
        let path = dir.join("media");
        std::os::unix::fs::symlink(&target, &path).map_err(io)?;
        Ok(NamelessLink { dir, path })
    }
}

impl Drop for NamelessLink {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// ffmpeg decoding into 16 kHz mono f32 on a pipe: the channels mixed down (`-ac 1`), or one
/// taken alone (`-af pan=mono|c0=c<i>`).
struct FfmpegSource {
    _link: NamelessLink,
    child: Child,
    stdout: ChildStdout,
    stderr: Option<JoinHandle<String>>,
    bytes: Vec<u8>,
}

impl FfmpegSource {
    fn spawn(path: &Path, channel: Option<usize>) -> Result<FfmpegSource, AudioError> {
        let link = NamelessLink::new(path)?;
        let mix = match channel {
            None => ["-ac".to_owned(), "1".to_owned()],
            Some(i) => ["-af".to_owned(), format!("pan=mono|c0=c{i}")],
        };
        let mut child = Command::new("ffmpeg")
            .args(["-nostdin", "-hide_banner", "-loglevel", "error", "-i"])
            .arg(&link.path)
            .args(["-map", "0:a:0", "-vn", "-sn", "-dn"])
            .args(&mix)
            .args(["-ar", "16000", "-f", "f32le", "-"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| AudioError::Ffmpeg {
                reason: format!("could not run ffmpeg ({e}); run `bash ops/setup.sh`"),
            })?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let mut err_pipe = child.stderr.take().expect("stderr is piped");
        // Drain stderr on the side so a chatty ffmpeg never blocks on a full pipe.
        let stderr = std::thread::spawn(move || {
            let mut text = Vec::new();
            let _ = err_pipe.by_ref().take(64 * 1024).read_to_end(&mut text);
            let _ = std::io::copy(&mut err_pipe, &mut std::io::sink());
            String::from_utf8_lossy(&text).into_owned()
        });
        Ok(FfmpegSource { _link: link, child, stdout, stderr: Some(stderr), bytes: Vec::new() })
    }

    fn decode_more(&mut self, out: &mut Vec<f32>, want: usize) -> Result<bool, AudioError> {
        let need = want.saturating_sub(out.len()).clamp(1024, 1 << 18) * 4;
        let start = self.bytes.len();
        self.bytes.resize(start + need, 0);
        let n = loop {
            match self.stdout.read(&mut self.bytes[start..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(AudioError::Ffmpeg { reason: format!("reading its output failed: {e}") }),
            }
        };
        self.bytes.truncate(start + n);
        let whole = self.bytes.len() / 4 * 4;
        out.extend(self.bytes[..whole].chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])));
        self.bytes.drain(..whole);
        if n > 0 {
            return Ok(true);
        }
        let status = self.child.wait().map_err(|e| AudioError::Ffmpeg { reason: e.to_string() })?;
        let stderr = self.stderr.take().and_then(|h| h.join().ok()).unwrap_or_default();
        if !status.success() {
            let detail = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("no message").trim().to_string();
            if detail.contains("matches no streams") {
                return Err(AudioError::NoAudioTrack);
            }
            // ffmpeg's words are for programmers: they go to the log, the person gets a sentence.
            tracing::info!(%detail, "ffmpeg could not decode a file");
            return Err(AudioError::Corrupt { reason: "the file is damaged or its codec is not supported".into() });
        }
        Ok(false)
    }
}

impl Drop for FfmpegSource {
    fn drop(&mut self) {
        // Stop a decoder whose output is no longer wanted.
        if self.stderr.is_some() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
