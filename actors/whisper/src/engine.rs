//! The engine: one call from a media file to a timed transcript.
//!
//! `Engine::load` reads the model once (weights, tokenizer, config.json, optional Silero VAD);
//! the `Engine` is immutable, `Send + Sync`, and shared behind an `Arc`. `transcribe` follows
//! faster-whisper's `transcribe(vad_filter=True, word_timestamps=True)`: find the speech with
//! the VAD (none → [`EngineError::NoSpeech`]), compute log-mel, detect the language on the
//! first window, then walk 30 s windows, seeking to the last timestamp, with the previous text
//! (and glossary terms) as prompt, and finally map times back to the original file's timeline.
//! The media is streamed ([`crate::speech`]): memory is bounded by a window, not by the file.
//! `transcribe_samples` takes the same path for 16 kHz samples already in memory (a live
//! utterance), so a clip decodes to the same transcript from a file or from memory;
//! `transcribe_together` does it for several utterances at once, their first windows decoded
//! in one batch (live sessions sharing the engine).
//! Each window's segments are handed to the progress callback as soon as they are final
//! ([`Progress::segments`]), for callers that stream the text while the rest is decoded.
//!
//! What is decoded a second time (a window's rest, a wordless stretch: speech the VAD heard
//! and the first decoding gave no words for) is prompted with the text before it and kept only
//! when its decoding passed the fallback's checks and does not read back the text around it
//! ([`crate::repetition`]); a piece whose words are timed faster than anyone speaks is dropped
//! on every path. On the corpus's 36 clips alone these second decodings recover nothing and,
//! so checked, change nothing (issue 40's measurements in `ops/bench/asr-decoding-policy.md`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rand::SeedableRng;
use serde::{Deserialize, Serialize};

use crate::align::{self, WordTiming};
use crate::audio::{AudioError, SAMPLE_RATE};
use crate::ct2::{Ct2File, WhisperDims};
use crate::decode::{self, DecodeOptions, Decoder, TIME_PRECISION, WindowResult};
use crate::device::DeviceChoice;
use crate::languages;
use crate::mel;
use crate::model::{AudioContext, Whisper};
use crate::profile;
use crate::repetition;
use crate::speech::{self, Media, Windows};
use crate::tokenizer::WhisperTokenizer;
use crate::vad::{self, SileroVad, VadParams};

mod batched;
mod readings;
mod together;

/// Where the model lives and how to run it.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// A CTranslate2 Whisper directory: model.bin, config.json, tokenizer.json (or
    /// vocabulary.json / vocabulary.txt), optional preprocessor_config.json.
    pub model_dir: PathBuf,
    /// Silero VAD weights (`silero_vad_16k.safetensors`); `None` disables voice detection.
    pub vad_path: Option<PathBuf>,
    /// Worker threads for the network (default: all cores).
    pub threads: Option<usize>,
    /// The type the decoder's weights are held and read in, whatever the file stores.
    pub compute_type: ComputeType,
    /// Which processor runs the network (a device other than the CPU runs in float32 or float16).
    pub device: DeviceChoice,
}

/// The type the weights are kept in, converted at load time from whatever model.bin stores,
/// as CTranslate2's `compute_type`: a float16 or float32 file runs in int8 (quantized per row,
/// CTranslate2's scheme), an int8 file in float32 (dequantized). The decoder's activations
/// are f32 in every type. Under int8 the encoder's linear layers also run in int8 (each input
/// row quantized on the fly, [`scribe_kernels::int8_gemm`]) where the CPU has AVX-512 VNNI,
/// and in f32 elsewhere; under float32 and float16 the encoder computes in f32 (see
/// [`crate::model`]).
///
/// `Default` is int8, the fastest, and on the corpus no less accurate than float32 (the
/// measurements per compute type are in `ops/bench/asr-history.md`). int8 reads about half of
/// float16's weight bytes per decoder step (its logits stay 16-bit, see [`crate::model`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ComputeType {
    Float32,
    Float16,
    #[default]
    Int8,
}

impl ComputeType {
    pub const ALL: [ComputeType; 3] = [ComputeType::Float32, ComputeType::Float16, ComputeType::Int8];

    pub fn as_str(self) -> &'static str {
        match self {
            ComputeType::Float32 => "float32",
            ComputeType::Float16 => "float16",
            ComputeType::Int8 => "int8",
        }
    }
}

impl std::fmt::Display for ComputeType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A compute type name other than `float32`, `float16` and `int8`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown compute type {0:?}: expected float32, float16 or int8")]
pub struct UnknownComputeType(pub String);

impl std::str::FromStr for ComputeType {
    type Err = UnknownComputeType;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ComputeType::ALL.into_iter().find(|c| c.as_str() == s).ok_or_else(|| UnknownComputeType(s.to_string()))
    }
}

/// Speech to text in the spoken language, or speech to English.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Task {
    #[default]
    Transcribe,
    Translate,
}

#[derive(Clone, Debug)]
pub struct TranscribeOptions {
    /// Whisper (or service) language code ("en", "fr", "nl-be"…); `None` or "auto" = detect.
    pub language: Option<String>,
    /// Restrict detection to these codes (empty = all the model knows).
    pub detect_among: Vec<String>,
    pub task: Task,
    pub beam_size: usize,
    pub word_timestamps: bool,
    /// Glossary terms the decoder is nudged towards in every window.
    pub hotwords: Vec<String>,
    /// Text taken as what was said before the media starts (faster-whisper's `initial_prompt`):
    /// the first windows continue in its style, e.g. keeping "um" and "uh" after a disfluent
    /// prompt. Like faster-whisper, it is dropped with the rest of the context when a window
    /// needs a high temperature.
    pub initial_prompt: Option<String>,
    /// Keep fillers, false starts and repetitions: without an `initial_prompt`, the decoder is
    /// prompted with disfluent text in the (given or detected) language (see [`crate::verbatim`]).
    pub verbatim: bool,
    pub use_vad: bool,
    /// How the voice detection cuts the media into speech (threshold, minimum silence, padding…)
    /// when `use_vad` is on; `Default` is faster-whisper's (threshold 0.5, 2 s of silence ends a
    /// span, 400 ms of padding). The OpenAI door's `server_vad` chunking sets it per request.
    pub vad: VadParams,
    /// The temperature of a window's first decoding (openai-whisper's `temperature`, 0..=1):
    /// 0 (default) is beam search, above 0 samples `best_of` candidates (seeded, so a run is
    /// repeatable). With `temperature_fallback` a failed window is retried at +0.2 steps up to
    /// 1.0 (see [`decode::temperature_schedule`]).
    pub temperature: f32,
    /// Retry a window that decodes to repetitive or unlikely text by sampling at higher
    /// temperatures (faster-whisper's default, `true`). `false` decodes each window once, at
    /// temperature 0: the result is the same whenever the first decoding passes (nearly always
    /// on clean speech), and a hallucinating window costs one decoding instead of up to six.
    /// Live sessions use it for partials and finals, where a late caption costs more than the
    /// rare better sampled one (a window fitted to its speech still falls back to the whole
    /// window, see [`EncoderWindow::Fitted`]).
    pub temperature_fallback: bool,
    /// Set from outside (e.g. when the job is deleted, or a live final pre-empts a partial) to
    /// stop the work: the engine looks at it before each 30 s window and between decoder
    /// steps, and answers [`EngineError::Cancelled`].
    pub cancel: Option<Arc<AtomicBool>>,
    /// How long recordings are decoded. `1`: sequentially, 30 s windows one after the other,
    /// each prompted with the text before it (openai-whisper's long-form decoding). `n > 1`:
    /// the speech is cut at the VAD's pauses into chunks of up to 30 s, each decoded on its
    /// own (no previous text; the initial prompt and glossary, if any, prompt every chunk),
    /// `n` at a time (faster-whisper's `BatchedInferencePipeline`, with the rest of a chunk
    /// decoded again when its decoding ends early). `0` (default): the engine chooses:
    /// batches when the voice detection is on and finds more than 30 s of speech, and neither
    /// `initial_prompt` nor `verbatim` asks for the text to be conditioned on what came
    /// before; sequential otherwise. Its batches hold as many chunks as fit in
    /// [`BATCH_MEMORY`] of cross-attention keys and values, 2 to 8 (base: 3, tiny.en: 7).
    pub batch_size: usize,
    /// How much of each 30 s window the encoder reads: all of it (default), or, for live
    /// utterances, only the speech plus a margin ([`EncoderWindow::Fitted`]).
    pub encoder_window: EncoderWindow,
}

/// The tokens a window fitted to its speech may decode: this many, plus
/// [`FITTED_TOKENS_PER_S`] per second of speech. Fast English is about 4 words, 6 tokens, a
/// second; twice that leaves room for timestamps and other languages.
const FITTED_TOKENS_BASE: usize = 16;
const FITTED_TOKENS_PER_S: usize = 12;

/// Mel frames (10 ms) of the padding after the speech that [`EncoderWindow::fitted`] reads.
pub const FITTED_MARGIN_FRAMES: usize = 200;

/// How much of a 30 s window the encoder reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EncoderWindow {
    /// The whole window, its speech and the silence that pads it, as Whisper was trained.
    #[default]
    Whole,
    /// The frames that hold speech plus `margin_frames` mel frames (10 ms each) of the padding
    /// after them, when that is shorter than a window (whisper.cpp's `audio_ctx`). The encoder's
    /// cost shrinks with the frames; a margin keeps stock weights from looping at the audio's
    /// end. A decoding over it that fails the decoding's checks (repetitive or unlikely text)
    /// is followed as `if_failed` says. Decodings stop at a number of tokens in proportion to
    /// the speech's length (twice fast speech's), so a loop on a second of audio costs a few
    /// dozen decoder steps, not 224.
    Fitted { margin_frames: usize, if_failed: IfFitFails },
}

/// What follows a decoding over a fitted window that fails the decoding's checks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IfFitFails {
    /// The whole window is encoded and decoded instead, so the short window never keeps a
    /// hallucination the whole one would not have produced.
    #[default]
    DecodeWhole,
    /// Kept; one that repeats itself (too compressible, or a run of words three times) up to
    /// where it starts to, or dropped (no words) when nothing repeats in a row. For text a
    /// later decoding replaces (live partials): kept whole, the repetitive ones showed loops
    /// in half of the first partials; decoded again whole, they held the cores for a second,
    /// a final waiting behind; dropped, a fifth of first partials said nothing
    /// (`scribe-bench live --first-partials` and `--clips`, recorded in `ops/bench/live.md`).
    KeepBeforeLoop,
    /// Dropped (no words): for a window whose text is kept only when its decoding passes the
    /// checks anyway, the rest of a window decoded again ([`EncoderWindow::decoding_again`]).
    Drop,
}

impl EncoderWindow {
    /// A window fitted to its speech with the margin measured for live finals (`scribe-bench
    /// live --encoder`, recorded in `ops/bench/live.md`).
    pub const fn fitted() -> EncoderWindow {
        EncoderWindow::Fitted { margin_frames: FITTED_MARGIN_FRAMES, if_failed: IfFitFails::DecodeWhole }
    }

    /// [`EncoderWindow::fitted`] for live partials, which the next partial or the final
    /// replaces: a failed decoding is kept (a repetitive one up to its loop), never decoded
    /// again whole. An utterance's first partial, on half a second of speech, fails the checks
    /// half of the time, and decoding it again whole made it come 0.7 s later for no better
    /// words.
    pub const fn fitted_for_partials() -> EncoderWindow {
        EncoderWindow::Fitted { margin_frames: FITTED_MARGIN_FRAMES, if_failed: IfFitFails::KeepBeforeLoop }
    }

    /// The window for one that decodes `again` the rest of the window before (speech its
    /// decoding left out): fitted, its failed decoding is dropped rather than decoded again
    /// whole, as what it gives there is kept only if it passes the checks. On the corpus's
    /// live utterances cut at every pause length tried (`scribe-bench live --pauses`, 271 of
    /// them), the whole window's second try there changed no word, and cost its final 0.5 s.
    pub fn decoding_again(self, again: bool) -> EncoderWindow {
        match self {
            EncoderWindow::Fitted { margin_frames, .. } if again => {
                EncoderWindow::Fitted { margin_frames, if_failed: IfFitFails::Drop }
            }
            window => window,
        }
    }

    /// The mel frames to encode for a window with `speech_frames` frames of speech: `None` for
    /// the whole window.
    pub fn frames(self, speech_frames: usize) -> Option<usize> {
        match self {
            EncoderWindow::Whole => None,
            EncoderWindow::Fitted { margin_frames, .. } => {
                let frames = (speech_frames + margin_frames).max(2).next_multiple_of(2);
                (frames < mel::N_FRAMES).then_some(frames)
            }
        }
    }
}

impl Default for TranscribeOptions {
    fn default() -> Self {
        TranscribeOptions {
            language: None,
            detect_among: Vec::new(),
            task: Task::Transcribe,
            beam_size: 5,
            word_timestamps: true,
            hotwords: Vec::new(),
            initial_prompt: None,
            verbatim: false,
            use_vad: true,
            vad: VadParams::default(),
            temperature: 0.0,
            temperature_fallback: true,
            cancel: None,
            batch_size: 0,
            encoder_window: EncoderWindow::Whole,
        }
    }
}

/// How far the work is, reported after each 30 s window and once at the end.
#[derive(Clone, Debug)]
pub struct Progress {
    /// Seconds of the media done (on its own timeline).
    pub done_s: f64,
    pub total_s: f64,
    /// The segments finished since the previous report, with their final times on the
    /// media's timeline: the reports' segments, concatenated, are the transcript's segments.
    pub segments: Vec<Segment>,
}

#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct Transcript {
    pub language: String,
    pub language_probability: f32,
    pub duration_s: f64,
    pub segments: Vec<Segment>,
}

impl Transcript {
    /// Whether a window of it failed the decoder's checks and was kept all the same (as it is
    /// when the temperature fallback is off, as for live sessions): its text too repetitive (a
    /// gzip compression ratio over Whisper's 2.4, or a run of words three times,
    /// [`repetition::loops`]) or too unlikely (a mean log-probability under Whisper's -1). A
    /// caller that already has another reading of the same speech keeps that one.
    pub fn failed_checks(&self) -> bool {
        let checks = DecodeOptions::default();
        let mut windows: Vec<(usize, String)> = Vec::new();
        for s in &self.segments {
            if s.compression_ratio > checks.compression_ratio_threshold || s.avg_logprob < checks.log_prob_threshold {
                return true;
            }
            match windows.last_mut().filter(|(seek, _)| *seek == s.seek) {
                Some((_, text)) => text.push_str(&s.text),
                None => windows.push((s.seek, s.text.clone())),
            }
        }
        windows.iter().any(|(_, text)| repetition::loops(&repetition::words(text)))
    }
}

/// A piece of a window between two timestamps, with the statistics of the window's decoding
/// (the fields of openai-whisper's and faster-whisper's segments).
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct Segment {
    pub start: f64,
    pub end: f64,
    pub text: String,
    pub words: Vec<Word>,
    pub avg_logprob: f32,
    pub no_speech_prob: f32,
    /// Start of the 30 s window it was decoded in, in mel frames (100 per second) on the
    /// media's timeline (with voice detection: where that window's first speech is in the media).
    #[serde(default)]
    pub seek: usize,
    /// Its tokens as the decoder emitted them, timestamp tokens included.
    #[serde(default)]
    pub tokens: Vec<u32>,
    /// The temperature of the window's decoding that was kept.
    #[serde(default)]
    pub temperature: f32,
    /// The window's text's gzip compression ratio (the fallback rule's measure).
    #[serde(default)]
    pub compression_ratio: f32,
}

#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct Word {
    pub start: f64,
    pub end: f64,
    pub text: String,
    pub probability: f32,
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("No speech found in the audio")]
    NoSpeech,
    #[error(transparent)]
    Audio(#[from] AudioError),
    #[error("Cannot use the speech model at {}: {reason}", path.display())]
    Model { path: PathBuf, reason: String },
    #[error("The language {code:?} is not supported by the {model} speech model")]
    UnsupportedLanguage { code: String, model: String },
    #[error("The {model} speech model cannot translate; use a multilingual model")]
    UnsupportedTask { model: String },
    #[error("Voice detection failed: {0}")]
    Vad(String),
    #[error("The transcription was cancelled")]
    Cancelled,
}

impl TranscribeOptions {
    /// Whether the caller has asked the work to stop (through [`TranscribeOptions::cancel`]).
    pub fn cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(|flag| flag.load(Ordering::Relaxed))
    }
}

/// `Err(Cancelled)` once the caller has asked the work to stop.
fn check_cancelled(opts: &TranscribeOptions) -> Result<(), EngineError> {
    match opts.cancelled() {
        true => Err(EngineError::Cancelled),
        false => Ok(()),
    }
}

/// What the loaded model is.
#[derive(Clone, Debug)]
pub struct ModelInfo {
    /// "base", "tiny.en", … (the model directory's name without `whisper-`).
    pub name: String,
    pub multilingual: bool,
    pub n_mels: usize,
    pub dims: WhisperDims,
    pub model_dir: PathBuf,
    /// The type the decoder runs in.
    pub compute_type: ComputeType,
    /// The processor the network runs on.
    pub device: DeviceChoice,
}

/// What one model directory holds, from [`inspect_model`]: enough to list it and to know it
/// will load, without reading the weights.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelSummary {
    pub dims: WhisperDims,
    /// How model.bin stores the weights: "float32", "float16", "bfloat16", "int8" or
    /// "int8+float16" (CTranslate2's `int8_float16`).
    pub weights: String,
    pub n_mels: usize,
    pub multilingual: bool,
    /// Size of model.bin.
    pub file_bytes: u64,
}

/// The work the loaded model does, for comparing measured times with the machine's limits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModelCost {
    /// Weight bytes one decoder step reads at the loaded compute type (int8 scales included),
    /// the logits projection included, cross-attention keys/values excluded.
    pub decoder_bytes_per_step: u64,
    /// Multiply-adds × 2 of encoding one 30 s window (cross-attention keys/values included).
    pub encoder_flops_per_window: f64,
}

/// The files of a model directory besides model.bin, read and checked.
struct SideFiles {
    config: ModelConfig,
    config_path: PathBuf,
    tokenizer: WhisperTokenizer,
    tokenizer_path: PathBuf,
    /// `feature_size` of preprocessor_config.json, when the file exists.
    feature_size: Option<(usize, PathBuf)>,
}

/// The parts of preprocessor_config.json the engine checks.
#[derive(Deserialize)]
struct PreprocessorConfig {
    feature_size: usize,
    #[serde(default)]
    sampling_rate: Option<u32>,
}

fn model_err(path: PathBuf, reason: String) -> EngineError {
    EngineError::Model { path, reason }
}

/// Reads config.json, the vocabulary and preprocessor_config.json of `dir`.
fn read_side_files(dir: &Path) -> Result<SideFiles, EngineError> {
    if !dir.is_dir() {
        return Err(model_err(
            dir.to_path_buf(),
            "directory not found (install the models with `bash ops/setup.sh`)".into(),
        ));
    }
    let config_path = dir.join("config.json");
    let config: ModelConfig = std::fs::read(&config_path)
        .map_err(|e| model_err(config_path.clone(), format!("cannot be read: {e}")))
        .and_then(|b| {
            serde_json::from_slice(&b).map_err(|e| model_err(config_path.clone(), format!("invalid: {e}")))
        })?;
    let (tokenizer, tokenizer_path) =
        WhisperTokenizer::load_dir(dir).map_err(|e| model_err(e.path.into(), e.reason))?;
    let pre_path = dir.join("preprocessor_config.json");
    let feature_size = if pre_path.is_file() {
        let pre: PreprocessorConfig = std::fs::read(&pre_path)
            .map_err(|e| model_err(pre_path.clone(), format!("cannot be read: {e}")))
            .and_then(|b| {
                serde_json::from_slice(&b).map_err(|e| model_err(pre_path.clone(), format!("invalid: {e}")))
            })?;
        if let Some(rate) = pre.sampling_rate.filter(|&r| r != SAMPLE_RATE) {
            return Err(model_err(pre_path, format!("sampling_rate is {rate}, Whisper needs {SAMPLE_RATE}")));
        }
        Some((pre.feature_size, pre_path))
    } else {
        None
    };
    Ok(SideFiles { config, config_path, tokenizer, tokenizer_path, feature_size })
}

/// Checks that the side files and model.bin's dimensions belong together.
fn check_consistency(side: &SideFiles, dims: &WhisperDims, bin_path: &Path) -> Result<(), EngineError> {
    if !matches!(dims.n_mels, 80 | 128) {
        return Err(model_err(
            bin_path.to_path_buf(),
            format!("encoder/conv1/weight reads {} mel bins; Whisper models use 80 or 128", dims.n_mels),
        ));
    }
    if let Some((n, path)) = &side.feature_size
        && *n != dims.n_mels
    {
        return Err(model_err(
            path.clone(),
            format!("feature_size is {n} but model.bin's encoder reads {} mel bins", dims.n_mels),
        ));
    }
    if dims.n_audio_ctx != mel::N_FRAMES / 2 {
        return Err(model_err(
            bin_path.to_path_buf(),
            format!(
                "the encoder has {} positions; Whisper's 30 s windows need {}",
                dims.n_audio_ctx,
                mel::N_FRAMES / 2
            ),
        ));
    }
    // Timestamps <|0.00|> … <|30.00|> follow <|notimestamps|> and end the vocabulary.
    let tb = side.tokenizer.specials.timestamp_begin as usize;
    if dims.n_vocab != tb + 1501 {
        return Err(model_err(
            side.tokenizer_path.clone(),
            format!(
                "does not belong to this model: its timestamps start at id {tb}, so the model should have {} tokens, \
                 but model.bin has {}",
                tb + 1501,
                dims.n_vocab
            ),
        ));
    }
    if let Some(&(l, h)) =
        side.config.alignment_heads.iter().find(|&&(l, h)| l >= dims.n_decoder_layers || h >= dims.n_heads)
    {
        return Err(model_err(
            side.config_path.clone(),
            format!("alignment head ({l}, {h}) does not exist in this model"),
        ));
    }
    let bad_id = side
        .config
        .suppress_ids
        .iter()
        .chain(&side.config.suppress_ids_begin)
        .chain(&side.config.lang_ids)
        .find(|&&id| id as usize >= dims.n_vocab);
    if let Some(id) = bad_id {
        return Err(model_err(
            side.config_path.clone(),
            format!("token id {id} is outside the model's {} tokens", dims.n_vocab),
        ));
    }
    Ok(())
}

fn multilingual(tokenizer: &WhisperTokenizer, dims: &WhisperDims) -> bool {
    tokenizer.token_id("<|fr|>").is_some() && dims.n_vocab >= 51865
}

/// Checks a model directory without loading its weights: config.json, the vocabulary,
/// preprocessor_config.json and model.bin's header (names, types, shapes; the payloads are
/// skipped), and that the engine can run what they describe. The error names the file and
/// what is wrong.
pub fn inspect_model(dir: &Path) -> Result<ModelSummary, EngineError> {
    let side = read_side_files(dir)?;
    let bin_path = dir.join("model.bin");
    let file = Ct2File::open_header(&bin_path).map_err(|e| model_err(e.path, e.reason))?;
    let dims = file.whisper_dims().map_err(|e| model_err(e.path, e.reason))?;
    check_consistency(&side, &dims, &bin_path)?;
    Ok(ModelSummary {
        weights: file.weights_kind(),
        n_mels: dims.n_mels,
        multilingual: multilingual(&side.tokenizer, &dims),
        file_bytes: file.file_bytes(),
        dims,
    })
}

/// The parts of config.json the decoder needs.
#[derive(Deserialize)]
struct ModelConfig {
    alignment_heads: Vec<(usize, usize)>,
    #[serde(default)]
    lang_ids: Vec<u32>,
    suppress_ids: Vec<u32>,
    suppress_ids_begin: Vec<u32>,
}

pub struct Engine {
    model: Whisper,
    tokenizer: WhisperTokenizer,
    config: ModelConfig,
    info: ModelInfo,
    vad: Option<SileroVad>,
}

/// Runs `f` on a thread of rayon's pool, so the many small parallel loops inside it start
/// and join there (work stealing) instead of waking the pool from outside and sleeping until
/// each one ends.
fn on_pool<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    rayon::scope(|_| f())
}

/// Memory the batched path's default batch may hold in its windows' cross-attention keys and
/// values (f32, all decoder layers; 37 MB a window for base, 18 MB for tiny.en): measured, 8
/// base windows at once (295 MB, with the encoder stacking all 8) took one transcription's
/// peak RSS from 531 MB (sequential) to 886 MB; 3 base windows with encoder calls of 2 peak
/// at 382 MB in the `scribe` binary (one malloc arena), 510 MB with glibc's default arenas.
pub const BATCH_MEMORY: usize = 128 << 20;

/// Mel frames per second.
const FRAMES_PER_SECOND: usize = SAMPLE_RATE as usize / mel::HOP;

impl Engine {
    pub fn load(cfg: &EngineConfig) -> Result<Engine, EngineError> {
        let dir = &cfg.model_dir;
        let side = read_side_files(dir)?;
        if let Some(n) = cfg.threads {
            // burn-flex and gemm run on rayon's global pool; it can be sized only before its
            // first use, so a later engine (or an earlier user of rayon) keeps the first size.
            let _ = rayon::ThreadPoolBuilder::new().num_threads(n).build_global();
        }
        let bin_path = dir.join("model.bin");
        let file = Ct2File::open(&bin_path).map_err(|e| model_err(e.path, e.reason))?;
        check_consistency(&side, &file.whisper_dims().map_err(|e| model_err(e.path, e.reason))?, &bin_path)?;
        let placement = cfg.device.placement().map_err(|reason| model_err(dir.clone(), reason))?;
        let model = Whisper::load(&file, &placement, cfg.compute_type).map_err(|e| model_err(e.path, e.reason))?;
        drop(file);
        let dims = model.dims.clone();
        let SideFiles { config, tokenizer, .. } = side;
        let vad = match &cfg.vad_path {
            Some(p) => {
                Some(SileroVad::load_on(p, &placement.device()).map_err(|e| model_err(p.clone(), e.to_string()))?)
            }
            None => None,
        };
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().trim_start_matches("whisper-").to_string())
            .unwrap_or_else(|| "whisper".into());
        let info = ModelInfo {
            name,
            multilingual: multilingual(&tokenizer, &dims),
            n_mels: dims.n_mels,
            dims,
            model_dir: dir.clone(),
            compute_type: cfg.compute_type,
            device: cfg.device,
        };
        Ok(Engine { model, tokenizer, config, info, vad })
    }

    pub fn info(&self) -> &ModelInfo {
        &self.info
    }

    /// The weight bytes a decoder step reads and the flops of encoding a window, at the
    /// loaded compute type.
    pub fn cost(&self) -> ModelCost {
        ModelCost {
            decoder_bytes_per_step: self.model.decoder_bytes_per_step(),
            encoder_flops_per_window: self.model.encoder_flops_per_window(),
        }
    }

    /// The loaded network, for measurements of its parts (`scribe-bench`).
    pub fn model(&self) -> &Whisper {
        &self.model
    }

    /// The voice activity model, when the engine was loaded with one. A live session runs its
    /// own pass over the incoming audio with it (see [`SileroVad::push`]).
    pub fn vad(&self) -> Option<&SileroVad> {
        self.vad.as_ref()
    }

    /// Transcribes a media file (any format [`crate::audio`] reads).
    pub fn transcribe(
        &self,
        media: &Path,
        opts: &TranscribeOptions,
        on_progress: &mut dyn FnMut(Progress),
    ) -> Result<Transcript, EngineError> {
        self.transcribe_media(Media::File(media), opts, on_progress)
    }

    /// Transcribes 16 kHz mono samples held in memory (a live utterance, or any length),
    /// exactly as [`Engine::transcribe`] transcribes a file holding the same samples: same
    /// voice detection (`opts.use_vad`), windows, features, prompts, hotwords, language
    /// detection and word timings. Times are seconds from the first sample. Errors as
    /// `transcribe`: [`EngineError::NoSpeech`] when nothing was said (an utterance of noise),
    /// `Audio(Empty)` for no samples at all.
    pub fn transcribe_samples(&self, samples: &[f32], opts: &TranscribeOptions) -> Result<Transcript, EngineError> {
        self.transcribe_media(Media::Samples(samples), opts, &mut |_| {})
    }

    fn transcribe_media(
        &self,
        media: Media<'_>,
        opts: &TranscribeOptions,
        on_progress: &mut dyn FnMut(Progress),
    ) -> Result<Transcript, EngineError> {
        let prepared = self.prepare(media, opts)?;
        self.finish_transcription(prepared, opts, None, on_progress)
    }

    /// Everything a transcription does before its first decoding: the languages checked, the
    /// media scanned for speech, and its features' level found.
    fn prepare<'m>(&self, media: Media<'m>, opts: &TranscribeOptions) -> Result<Prepared<'m>, EngineError> {
        let plan = self.plan_languages(opts)?;
        let scan = self.scan(media, opts.use_vad)?;
        let spans = self.spans_of(&scan, opts.use_vad, &opts.vad);
        check_cancelled(opts)?;
        let duration_s = scan.n_samples as f64 / SAMPLE_RATE as f64;
        // Voice activity: keep only speech, remembering where each piece came from.
        if spans.is_empty() {
            return Err(EngineError::NoSpeech);
        }
        let batch = self.uses_batches(opts, &spans);
        // The batched path cuts the speech at shorter pauses, into pieces of at most 30 s.
        let spans = match batch {
            Some(_) => self.spans_of(&scan, opts.use_vad, &batched::vad_params(&opts.vad)),
            None => spans,
        };
        let map = if self.vad.is_some() && opts.use_vad { TimeMap::new(&spans) } else { TimeMap::identity() };
        let found = SpeechFound { probabilities: scan.probabilities, threshold: opts.vad.threshold };
        let speech_samples = spans.iter().map(|s| s.len()).sum();
        // Passes 2 and 3 stream the speech again (see `speech`): the features' level, then windows.
        let windows =
            profile::time("mel level pass", || Windows::open(media, &spans, speech_samples, self.info.n_mels))?;
        let batch = batch.map(|n| (n, batched::chunks(&spans, windows.content_frames())));
        Ok(Prepared { media, plan, windows, duration_s, map, found, batch })
    }

    /// Decodes a prepared transcription to its end (its first window given when it was
    /// decoded already, with other utterances: [`Engine::transcribe_together`]).
    fn finish_transcription(
        &self,
        prepared: Prepared<'_>,
        opts: &TranscribeOptions,
        first: Option<FirstWindow>,
        on_progress: &mut dyn FnMut(Progress),
    ) -> Result<Transcript, EngineError> {
        let Prepared { media, plan, mut windows, duration_s, map, found, batch } = prepared;
        let result = match batch {
            Some((n, chunks)) => {
                self.transcribe_batched(&mut windows, chunks, n, duration_s, &map, &found, opts, plan, on_progress)
            }
            None => self.transcribe_windows(&mut windows, duration_s, &map, &found, opts, plan, first, on_progress),
        };
        profile::report(&format!("{media} ({duration_s:.1} s)"));
        result
    }

    /// The spans of speech (in seconds) that [`Engine::transcribe`] would decode in `media`
    /// with voice detection set to `params`: the whole media when the engine has no VAD model,
    /// none when nothing was said.
    pub fn speech_spans(&self, media: &Path, params: &VadParams) -> Result<Vec<std::ops::Range<f64>>, EngineError> {
        let scan = self.scan(Media::File(media), true)?;
        let spans = self.spans_of(&scan, true, params);
        let sr = SAMPLE_RATE as f64;
        Ok(spans.into_iter().map(|s| s.start as f64 / sr..s.end as f64 / sr).collect())
    }

    /// How the speech `spans` (samples, found with `opts.vad`) are decoded: `Some(n)` in
    /// batches of `n` chunks, `None` sequentially (see [`TranscribeOptions::batch_size`]).
    fn uses_batches(&self, opts: &TranscribeOptions, spans: &[std::ops::Range<usize>]) -> Option<usize> {
        match opts.batch_size {
            1 => None,
            0 => {
                let vad = self.vad.is_some() && opts.use_vad;
                let speech: usize = spans.iter().map(|s| s.len()).sum();
                let long = speech > mel::N_FRAMES * mel::HOP;
                let conditioned = opts.initial_prompt.as_deref().is_some_and(|p| !p.trim().is_empty()) || opts.verbatim;
                (vad && long && !conditioned).then(|| self.default_batch_size())
            }
            n => Some(n),
        }
    }

    /// The chunks decoded at once when the caller leaves the choice to the engine: as many
    /// as fit in [`BATCH_MEMORY`] of cross-attention keys and values counted in f32, 2 to 8
    /// (under int8 they are bf16, half that: 7 chunks of base in the same memory were
    /// slower than 3 and left more speech without words).
    fn default_batch_size(&self) -> usize {
        let d = &self.model.dims;
        let per_window = d.n_decoder_layers * 2 * d.n_audio_ctx * d.d_model * size_of::<f32>();
        (BATCH_MEMORY / per_window.max(1)).clamp(2, 8)
    }

    /// Pass 1 over the media: decodes it once for its length (in samples) and, with voice
    /// detection, the VAD's probabilities (a few KB).
    fn scan(&self, media: Media<'_>, use_vad: bool) -> Result<speech::Scan, EngineError> {
        let vad = self.vad.as_ref().filter(|_| use_vad);
        Ok(profile::time("scan (decode+vad)", || speech::scan(media, vad))?)
    }

    /// The speech spans (in samples) of a scanned media for voice detection set to `params`:
    /// the whole media without voice detection.
    fn spans_of(&self, scan: &speech::Scan, use_vad: bool, params: &VadParams) -> Vec<std::ops::Range<usize>> {
        match self.vad.as_ref().filter(|_| use_vad) {
            Some(_) => vad::speech_spans(&scan.probabilities, scan.n_samples, params),
            #[allow(clippy::single_range_in_vec_init)] // one span: the whole recording
            None => vec![0..scan.n_samples],
        }
    }

    /// Validates the requested language(s) against the model.
    fn plan_languages(&self, opts: &TranscribeOptions) -> Result<LanguagePlan, EngineError> {
        let model = self.info.name.clone();
        let unsupported =
            |code: &str| EngineError::UnsupportedLanguage { code: code.to_string(), model: model.clone() };
        if opts.task == Task::Translate && !self.info.multilingual {
            return Err(EngineError::UnsupportedTask { model });
        }
        let requested = opts.language.as_deref().filter(|l| !l.is_empty() && !l.eq_ignore_ascii_case("auto"));
        let check = |code: &str| -> Result<&'static str, EngineError> {
            let w = languages::to_whisper_code(code).ok_or_else(|| unsupported(code))?;
            if !self.info.multilingual && w != "en" {
                return Err(unsupported(code));
            }
            if self.info.multilingual && self.tokenizer.token_id(&format!("<|{w}|>")).is_none() {
                return Err(unsupported(code));
            }
            Ok(w)
        };
        if let Some(code) = requested {
            return Ok(LanguagePlan::Fixed(check(code)?));
        }
        let among: Vec<&'static str> = if opts.detect_among.is_empty() {
            Vec::new()
        } else {
            let ok: Vec<&'static str> = opts.detect_among.iter().filter_map(|c| check(c).ok()).collect();
            if ok.is_empty() {
                return Err(unsupported(&opts.detect_among.join(",")));
            }
            ok
        };
        if !self.info.multilingual {
            return Ok(LanguagePlan::Fixed("en"));
        }
        Ok(LanguagePlan::Detect(among))
    }

    /// Walks the 30 s windows of the speech, seeking to the last timestamp of each.
    fn transcribe_windows(
        &self,
        windows: &mut Windows<'_>,
        duration_s: f64,
        map: &TimeMap,
        found: &SpeechFound,
        opts: &TranscribeOptions,
        plan: LanguagePlan,
        first: Option<FirstWindow>,
        on_progress: &mut dyn FnMut(Progress),
    ) -> Result<Transcript, EngineError> {
        let content_frames = windows.content_frames();
        if content_frames == 0 {
            return Err(EngineError::NoSpeech);
        }
        let mut window = |seek: usize| profile::time("mel", || windows.window(seek));

        let (mut first_audio, mut first_result, language, language_probability) = match first {
            Some(f) => (Some(f.audio), f.result, f.language, f.language_probability),
            None => {
                let (first_mel, first_size) = window(0)?;
                let audio = self.encode_window(&first_mel, first_size, opts.encoder_window);
                let (language, probability) = self.language_of(&audio, plan);
                (Some(audio), None, language, probability)
            }
        };

        let s = &self.tokenizer.specials;
        let DecodeSetup { sot_sequence, dopts, hotwords } = self.decode_setup(language, opts);
        let detok = |t: &[u32]| self.tokenizer.decode(t);
        let mut rng = rand::rngs::StdRng::seed_from_u64(0x5eed);

        let mut seek = 0usize;
        let mut all_tokens: Vec<u32> = self.initial_prompt_tokens(language, opts);
        let mut prompt_reset_since = 0usize;
        let mut last_speech_timestamp = 0.0f64;
        let mut segments: Vec<Segment> = Vec::new();
        // The words of the window before, and (seconds) where that window ended when its rest
        // is decoded again by this one: what this window gives before then is a second decoding.
        let mut previous_words: Vec<String> = Vec::new();
        let mut again_until = 0.0f64;
        while seek < content_frames {
            check_cancelled(opts)?;
            let time_offset = seek as f64 / FRAMES_PER_SECOND as f64;
            let (mel_window, segment_size) = window(seek)?;
            let audio = match (seek, first_audio.take()) {
                (0, Some(a)) => a,
                _ => self.encode_window(&mel_window, segment_size, opts.encoder_window),
            };
            let prompt = self.prompt(&hotwords, &all_tokens[prompt_reset_since..], &sot_sequence);
            let decoded = if seek == 0 { first_result.take() } else { None };
            let (audio, result) = self.decode_window(
                &mel_window,
                segment_size,
                audio,
                decoded,
                &prompt,
                &dopts,
                opts.encoder_window.decoding_again(again_until > time_offset),
                &mut rng,
            );
            check_cancelled(opts)?;
            let previous_seek = seek;
            if result.no_speech_prob > dopts.no_speech_threshold && result.avg_logprob < dopts.log_prob_threshold {
                profile::count("windows skipped as silence", 1);
                seek += segment_size;
                on_progress(Progress {
                    done_s: map.to_original(seek as f64 / FRAMES_PER_SECOND as f64, true).min(duration_s),
                    total_s: duration_s,
                    segments: Vec::new(),
                });
                continue;
            }
            // The window's start on the media's timeline, in frames (openai-whisper's `seek`).
            let window_seek = (map.to_original(time_offset, false) * FRAMES_PER_SECOND as f64).round() as usize;
            let (mut pieces, new_seek, single_ending) =
                self.split_by_timestamps(&result.tokens, time_offset, seek, segment_size);
            seek = new_seek;
            let speech_before_window = last_speech_timestamp;
            if opts.word_timestamps {
                last_speech_timestamp = profile::time("word timestamps", || {
                    on_pool(|| {
                        self.add_word_timestamps(
                            &mut pieces,
                            &audio,
                            &sot_sequence,
                            segment_size,
                            time_offset,
                            language,
                            last_speech_timestamp,
                        )
                    })
                });
                if !single_ending
                    && let Some(end) = pieces.iter().rev().find_map(|p| p.words.last().map(|w| w.end))
                    && end > time_offset
                {
                    seek = (end * FRAMES_PER_SECOND as f64).round() as usize;
                }
            }
            // Where this window decodes the rest of the window before again, what it gives
            // there must pass the decoding's checks and not read back that window's text.
            if again_until > time_offset {
                pieces
                    .retain(|p| p.start >= again_until || (result.passed && !self.repeats(&p.tokens, &previous_words)));
            }
            let window_end = time_offset + segment_size as f64 / FRAMES_PER_SECOND as f64;
            again_until = 0.0;
            // A decoding that ends on one timestamp says "nothing more is said in this window",
            // and Whisper's rule skips the rest of it. Without voice detection that rest is
            // usually silence; in speech the VAD kept, it is often a second sentence the decoder
            // gave up on (a new speaker after a short pause). Speech the VAD found is never
            // skipped: the next window starts where the decoded speech ends (its last word, or
            // its last timestamp without word timings) instead, when the rest holds a quarter
            // second of speech or more (less is a word's tail and the span's padding).
            if seek == previous_seek + segment_size
                && let Some(decoded_until) = covered(&pieces).iter().map(|c| c.1).max_by(f64::total_cmp)
                && window_end - decoded_until >= UNDECODED_MIN_S
                && found.speech_s(&map.original_ranges(decoded_until, window_end)) >= REST_SPEECH_MIN_S
            {
                seek = ((decoded_until * FRAMES_PER_SECOND as f64).round() as usize).max(previous_seek + 1);
                again_until = window_end;
            }
            // The decoder may also jump over a sentence inside the part it did decode (the first
            // of two voices, say): such stretches of speech are decoded again on their own, with
            // the text before them as prompt, and kept when that decoding passes the checks and
            // does not read back the text around it.
            let done_until = (seek.min(previous_seek + segment_size)) as f64 / FRAMES_PER_SECOND as f64;
            let window_words: Vec<String> = previous_words
                .iter()
                .cloned()
                .chain(pieces.iter().flat_map(|p| repetition::words(&self.tokenizer.decode(&p.tokens))))
                .collect();
            let mut decoded: Vec<(Piece, usize)> = pieces.into_iter().map(|p| (p, 0)).collect();
            let mut results = vec![result];
            for (from, to) in
                uncovered(&covered(&decoded.iter().map(|d| &d.0).collect::<Vec<_>>()), time_offset, done_until)
            {
                if to - from < UNDECODED_MIN_S || found.speech_s(&map.original_ranges(from, to)) < SKIPPED_SPEECH_MIN_S
                {
                    continue;
                }
                // Never before the window's start: the features behind it are already forgotten
                // (and `from` may sit a rounding error below it).
                let first = ((from * FRAMES_PER_SECOND as f64).round() as usize).max(previous_seek);
                let frames = ((to * FRAMES_PER_SECOND as f64).round() as usize).saturating_sub(first);
                let (mut mel, size) = window(first)?;
                let frames = frames.min(size);
                for row in mel.chunks_mut(mel::N_FRAMES) {
                    row[frames..].fill(0.0); // the rest of the window is silence, as after a last word
                }
                // A window fitted to its speech (a live utterance) reads the stretch and a
                // margin, not 30 s: this pass cost a final a whole window's encoding.
                let audio = self.encode_window(&mel, frames, opts.encoder_window);
                let before: Vec<u32> = all_tokens[prompt_reset_since..]
                    .iter()
                    .copied()
                    .chain(decoded.iter().filter(|d| d.0.end <= from + 0.01).flat_map(|d| d.0.tokens.iter().copied()))
                    .collect();
                let prompt = self.prompt(&hotwords, &before, &sot_sequence);
                let dopts = self.first_decoding(&audio, frames, &dopts);
                let decoder =
                    Decoder { model: &self.model, audio: &audio, specials: s, opts: &dopts, detokenize: &detok };
                let again =
                    profile::time("decode window", || on_pool(|| decoder.decode_with_fallback(&prompt, &mut rng)));
                if !again.passed
                    || (again.no_speech_prob > dopts.no_speech_threshold
                        && again.avg_logprob < dopts.log_prob_threshold)
                {
                    continue;
                }
                let offset = first as f64 / FRAMES_PER_SECOND as f64;
                let (mut more, _, _) = self.split_by_timestamps(&again.tokens, offset, first, frames);
                more.retain(|p| !self.repeats(&p.tokens, &window_words));
                if opts.word_timestamps {
                    profile::time("word timestamps", || {
                        on_pool(|| {
                            self.add_word_timestamps(
                                &mut more,
                                &audio,
                                &sot_sequence,
                                frames,
                                offset,
                                language,
                                speech_before_window,
                            )
                        })
                    });
                }
                results.push(again);
                decoded.extend(more.into_iter().map(|p| (p, results.len() - 1)));
            }
            decoded.sort_by(|a, b| a.0.start.total_cmp(&b.0.start));
            let mut finished = Vec::new();
            for (p, r) in decoded {
                if let Some(mut segment) = self.segment(p, &results[r], window_seek) {
                    all_tokens.extend_from_slice(&segment.tokens);
                    map.restore(&mut segment);
                    finished.push(segment);
                }
            }
            previous_words = finished.iter().flat_map(|s| repetition::words(&s.text)).collect();
            let result = &results[0];
            segments.extend_from_slice(&finished);
            if result.last_temperature > 0.5 {
                prompt_reset_since = all_tokens.len();
            }
            if seek <= previous_seek {
                seek = previous_seek + segment_size; // never loop on the same window
            }
            let done = map.to_original(seek.min(content_frames) as f64 / FRAMES_PER_SECOND as f64, true);
            on_progress(Progress { done_s: done.min(duration_s), total_s: duration_s, segments: finished });
        }
        on_progress(Progress { done_s: duration_s, total_s: duration_s, segments: Vec::new() });
        if segments.is_empty() {
            return Err(EngineError::NoSpeech);
        }
        Ok(Transcript { language: language.to_string(), language_probability, duration_s, segments })
    }

    /// Encodes a window of log-mel features (`[n_mels × N_FRAMES]`, `speech_frames` of them
    /// speech): whole, or only its speech and a margin where `window` fits it.
    fn encode_window(&self, mel: &[f32], speech_frames: usize, window: EncoderWindow) -> AudioContext {
        profile::time("encode", || match window.frames(speech_frames) {
            Some(frames) => {
                profile::count("fitted windows", 1);
                let fitted: Vec<f32> =
                    mel.chunks_exact(mel::N_FRAMES).flat_map(|row| &row[..frames]).copied().collect();
                on_pool(|| self.model.encode_frames(&fitted, frames))
            }
            None => on_pool(|| self.model.encode(mel)),
        })
    }

    /// The language of the first window: the one asked for, or the likeliest of those allowed.
    fn language_of(&self, audio: &AudioContext, plan: LanguagePlan) -> (&'static str, f32) {
        match plan {
            LanguagePlan::Fixed(l) => (l, 1.0),
            LanguagePlan::Detect(among) => self.detect_language(audio, &among),
        }
    }

    /// The options of an encoded window's first decoding. The speech of a window fitted to it
    /// is short and its length known: no decoding of it needs more tokens than fast speech
    /// would give, and a looping one stops there; and it is decoded at the first temperature
    /// only (the whole window is the fallback: [`Engine::decode_window`]).
    fn first_decoding(&self, audio: &AudioContext, speech_frames: usize, dopts: &DecodeOptions) -> DecodeOptions {
        if audio.positions() == self.model.dims.n_audio_ctx {
            return dopts.clone();
        }
        let max_tokens = FITTED_TOKENS_BASE + speech_frames * FITTED_TOKENS_PER_S / FRAMES_PER_SECOND;
        DecodeOptions { max_tokens, temperatures: dopts.temperatures[..1].to_vec(), ..dopts.clone() }
    }

    /// Decodes an encoded window (with temperature fallback); `decoded` is its first
    /// temperature's decoding when that was done already (with other windows). A window
    /// fitted to its speech is decoded once at the first temperature; when that fails the
    /// checks, the whole window is encoded and decoded instead, and returned with its result,
    /// unless the window's [`IfFitFails`] keeps the failed decoding.
    #[allow(clippy::too_many_arguments)]
    fn decode_window(
        &self,
        mel: &[f32],
        speech_frames: usize,
        audio: AudioContext,
        decoded: Option<WindowResult>,
        prompt: &[u32],
        dopts: &DecodeOptions,
        window: EncoderWindow,
        rng: &mut rand::rngs::StdRng,
    ) -> (AudioContext, WindowResult) {
        let detok = |t: &[u32]| self.tokenizer.decode(t);
        let specials = &self.tokenizer.specials;
        let decode = |audio: &AudioContext, dopts: &DecodeOptions, first, rng: &mut rand::rngs::StdRng| {
            let decoder = Decoder { model: &self.model, audio, specials, opts: dopts, detokenize: &detok };
            profile::time("decode window", || on_pool(|| decoder.fallback_from(prompt, first, rng)))
        };
        let once = self.first_decoding(&audio, speech_frames, dopts);
        let result = decode(&audio, &once, decoded, rng);
        if result.passed || audio.positions() == self.model.dims.n_audio_ctx {
            return (audio, result);
        }
        if let EncoderWindow::Fitted { if_failed: IfFitFails::Drop, .. } = window {
            profile::count("fitted windows dropped as failed", 1);
            let mut result = result;
            result.tokens.clear();
            return (audio, result);
        }
        let repetitive = result.compression_ratio > dopts.compression_ratio_threshold || result.loops;
        if let EncoderWindow::Fitted { if_failed: IfFitFails::KeepBeforeLoop, .. } = window {
            if !repetitive {
                profile::count("fitted windows kept though failed", 1);
                return (audio, result);
            }
            let mut result = result;
            let keep = repetition::before_loop(&result.tokens);
            if keep < result.tokens.len() {
                profile::count("fitted windows cut where they loop", 1);
                result.tokens.truncate(keep);
            } else {
                profile::count("fitted windows dropped as repetitive", 1);
                result.tokens.clear();
            }
            return (audio, result);
        }
        // Whoever asked may no longer want it (its caller sees the flag and stops).
        if dopts.cancelled() {
            return (audio, result);
        }
        profile::count("fitted windows decoded again whole", 1);
        let whole = profile::time("encode", || on_pool(|| self.model.encode(mel)));
        let dopts = DecodeOptions { max_tokens: once.max_tokens, ..dopts.clone() };
        let result = decode(&whole, &dopts, None, rng);
        (whole, result)
    }

    /// A window's prompt: the glossary terms and the text before it (its last half context at
    /// most) after `<|startofprev|>`, then the start-of-transcript sequence.
    fn prompt(&self, hotwords: &[u32], previous: &[u32], sot_sequence: &[u32]) -> Vec<u32> {
        let max_prompt = self.model.dims.n_text_ctx / 2 - 1;
        let mut prompt = Vec::new();
        if !previous.is_empty() || !hotwords.is_empty() {
            prompt.push(self.tokenizer.specials.sot_prev);
            prompt.extend_from_slice(hotwords);
            prompt.extend_from_slice(&previous[previous.len().saturating_sub(max_prompt)..]);
        }
        prompt.extend_from_slice(sot_sequence);
        prompt
    }

    /// True when the text of `tokens`, decoded a second time over speech already decoded, is
    /// mostly a reading back of `before` ([`REPEATED_SHARE_MAX`]).
    fn repeats(&self, tokens: &[u32], before: &[String]) -> bool {
        let eot = self.tokenizer.specials.eot;
        let text: Vec<u32> = tokens.iter().copied().filter(|&t| t < eot).collect();
        repetition::repeated_share(&repetition::words(&self.tokenizer.decode(&text)), before) >= REPEATED_SHARE_MAX
    }

    /// What the decoding of every window of one transcription shares.
    fn decode_setup(&self, language: &str, opts: &TranscribeOptions) -> DecodeSetup {
        let s = &self.tokenizer.specials;
        let mut sot_sequence = vec![s.sot];
        if self.info.multilingual {
            sot_sequence.push(self.tokenizer.token_id(&format!("<|{language}|>")).expect("checked language token"));
            let task = match opts.task {
                Task::Transcribe => s.transcribe,
                Task::Translate => s.translate,
            };
            sot_sequence.extend(task);
        }
        let mut suppress = self.config.suppress_ids.clone();
        suppress.extend(
            [s.sot, s.sot_prev, s.no_speech].into_iter().chain(s.transcribe).chain(s.translate).chain(s.sot_lm),
        );
        suppress.sort_unstable();
        suppress.dedup();
        let defaults = DecodeOptions::default();
        let dopts = DecodeOptions {
            beam_size: opts.beam_size.max(1),
            temperatures: decode::temperature_schedule(opts.temperature, opts.temperature_fallback),
            suppress,
            suppress_begin: self.config.suppress_ids_begin.clone(),
            cancel: opts.cancel.clone(),
            ..defaults
        };
        let hotwords: Vec<u32> = {
            let terms: Vec<&str> = opts.hotwords.iter().map(|h| h.trim()).filter(|h| !h.is_empty()).collect();
            if terms.is_empty() {
                Vec::new()
            } else {
                let mut t = self.tokenizer.encode(&format!(" {}", terms.join(", ")));
                t.truncate(self.model.dims.n_text_ctx / 2 - 1);
                t
            }
        };
        DecodeSetup { sot_sequence, dopts, hotwords }
    }

    /// The text the first window is prompted with: `initial_prompt`, or with `verbatim` a
    /// disfluent text in `language`; as tokens.
    fn initial_prompt_tokens(&self, language: &str, opts: &TranscribeOptions) -> Vec<u32> {
        let initial_prompt = opts
            .initial_prompt
            .as_deref()
            .or_else(|| if opts.verbatim { crate::verbatim::prompt(language) } else { None });
        match initial_prompt.map(str::trim).filter(|p| !p.is_empty()) {
            Some(text) => self.tokenizer.encode(&format!(" {text}")),
            None => Vec::new(),
        }
    }

    /// A decoded piece as a transcript segment, still on the speech's timeline, with its
    /// decoding's statistics; `None` when it holds no text.
    fn segment(&self, p: Piece, r: &WindowResult, window_seek: usize) -> Option<Segment> {
        let text = self.tokenizer.decode(&p.tokens);
        if p.start == p.end || text.trim().is_empty() || too_fast(&p.words) {
            return None;
        }
        Some(Segment {
            start: p.start,
            end: p.end,
            text,
            words: p
                .words
                .into_iter()
                .map(|w| Word { start: w.start, end: w.end, text: w.word, probability: w.probability })
                .collect(),
            avg_logprob: r.avg_logprob,
            no_speech_prob: r.no_speech_prob,
            seek: window_seek,
            tokens: p.tokens,
            temperature: r.temperature,
            compression_ratio: r.compression_ratio,
        })
    }

    /// Picks the most likely language token after `<|startoftranscript|>`, among `among`
    /// (all the model's languages when empty). The probability is over all languages.
    fn detect_language(&self, audio: &AudioContext, among: &[&'static str]) -> (&'static str, f32) {
        let s = &self.tokenizer.specials;
        let mut cache = self.model.new_cache(1);
        let logits = self.model.decode(audio, &mut cache, &[s.sot], &[0]);
        let langs: Vec<(&'static str, f32)> = languages::WHISPER_LANGUAGES
            .iter()
            .filter_map(|(code, _)| {
                let id = self.tokenizer.token_id(&format!("<|{code}|>"))?;
                (self.config.lang_ids.is_empty() || self.config.lang_ids.contains(&id))
                    .then(|| (*code, logits[id as usize]))
            })
            .collect();
        let m = langs.iter().map(|l| l.1).fold(f32::NEG_INFINITY, f32::max);
        let total: f32 = langs.iter().map(|l| (l.1 - m).exp()).sum();
        langs
            .iter()
            .filter(|(c, _)| among.is_empty() || among.contains(c))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|&(c, x)| (c, (x - m).exp() / total))
            .unwrap_or(("en", 0.0))
    }

    /// Cuts a window's tokens into segments at timestamp pairs and decides where the next
    /// window starts (faster-whisper's `_split_segments_by_timestamps`).
    fn split_by_timestamps(
        &self,
        tokens: &[u32],
        time_offset: f64,
        seek: usize,
        segment_size: usize,
    ) -> (Vec<Piece>, usize, bool) {
        let tb = self.tokenizer.specials.timestamp_begin;
        let is_ts = |t: u32| t >= tb;
        let ts_time = |t: u32| (t - tb) as f64 * TIME_PRECISION as f64;
        let n = tokens.len();
        let single_ending = n >= 2 && !is_ts(tokens[n - 2]) && is_ts(tokens[n - 1]);
        let consecutive: Vec<usize> = (1..n).filter(|&i| is_ts(tokens[i]) && is_ts(tokens[i - 1])).collect();
        let mut pieces = Vec::new();
        let mut seek = seek;
        if !consecutive.is_empty() {
            let mut slices = consecutive;
            if single_ending {
                slices.push(n);
            }
            let mut last = 0;
            for &cut in &slices {
                let part = &tokens[last..cut];
                pieces.push(Piece {
                    start: time_offset + ts_time(part[0]),
                    end: time_offset + ts_time(part[part.len() - 1]),
                    tokens: part.to_vec(),
                    words: Vec::new(),
                });
                last = cut;
            }
            if single_ending {
                seek += segment_size;
            } else {
                seek += (tokens[last - 1] - tb) as usize * 2; // 2 mel frames per timestamp step
            }
        } else {
            let mut duration = segment_size as f64 / FRAMES_PER_SECOND as f64;
            if let Some(&last_ts) = tokens.iter().rev().find(|&&t| is_ts(t))
                && last_ts != tb
            {
                duration = ts_time(last_ts);
            }
            pieces.push(Piece {
                start: time_offset,
                end: time_offset + duration,
                tokens: tokens.to_vec(),
                words: Vec::new(),
            });
            seek += segment_size;
        }
        (pieces, seek, single_ending)
    }

    /// Word timings for every piece of one window (faster-whisper's `add_word_timestamps`),
    /// in seconds of the speech timeline. Returns the new last-speech time.
    #[allow(clippy::too_many_arguments)]
    fn add_word_timestamps(
        &self,
        pieces: &mut [Piece],
        audio: &AudioContext,
        sot_sequence: &[u32],
        num_frames: usize,
        time_offset: f64,
        language: &str,
        mut last_speech_timestamp: f64,
    ) -> f64 {
        let eot = self.tokenizer.specials.eot;
        let per_piece: Vec<Vec<u32>> =
            pieces.iter().map(|p| p.tokens.iter().copied().filter(|&t| t < eot).collect()).collect();
        let text_tokens: Vec<u32> = per_piece.concat();
        let mut alignment = align::find_alignment(
            &self.model,
            audio,
            &self.tokenizer,
            sot_sequence,
            &text_tokens,
            num_frames,
            &self.config.alignment_heads,
            language,
        );
        let mut durations: Vec<f64> = alignment.iter().map(|w| w.end - w.start).filter(|&d| d != 0.0).collect();
        durations.sort_by(|a, b| a.total_cmp(b));
        let median = if durations.is_empty() {
            0.0
        } else if durations.len() % 2 == 1 {
            durations[durations.len() / 2]
        } else {
            (durations[durations.len() / 2 - 1] + durations[durations.len() / 2]) / 2.0
        };
        let median = median.min(0.7);
        let max_duration = median * 2.0;
        if !durations.is_empty() {
            let sentence_end = ".。!！?？";
            for i in 1..alignment.len() {
                if alignment[i].end - alignment[i].start > max_duration {
                    if sentence_end.contains(alignment[i].word.as_str()) && !alignment[i].word.is_empty() {
                        alignment[i].end = alignment[i].start + max_duration;
                    } else if sentence_end.contains(alignment[i - 1].word.as_str()) && !alignment[i - 1].word.is_empty()
                    {
                        alignment[i].start = alignment[i].end - max_duration;
                    }
                }
            }
        }
        align::merge_punctuations(&mut alignment);
        align::join_attached_words(&mut alignment);

        let round2 = |x: f64| (x * 100.0).round() / 100.0;
        let mut word_index = 0;
        for (piece, toks) in pieces.iter_mut().zip(&per_piece) {
            let mut saved = 0;
            let mut words: Vec<WordTiming> = Vec::new();
            while word_index < alignment.len() && saved < toks.len() {
                let t = &alignment[word_index];
                if !t.word.is_empty() {
                    words.push(WordTiming {
                        word: t.word.clone(),
                        tokens: t.tokens.clone(),
                        start: round2(time_offset + t.start),
                        end: round2(time_offset + t.end),
                        probability: t.probability,
                    });
                }
                saved += t.tokens.len();
                word_index += 1;
            }
            if !words.is_empty() {
                let first_too_long = words[0].end - words[0].start > max_duration
                    || (words.len() > 1 && words[1].end - words[0].start > max_duration * 2.0);
                if words[0].end - last_speech_timestamp > median * 4.0 && first_too_long {
                    if words.len() > 1 && words[1].end - words[1].start > max_duration {
                        let boundary = (words[1].end / 2.0).max(words[1].end - max_duration);
                        words[0].end = boundary;
                        words[1].start = boundary;
                    }
                    words[0].start = (words[0].end - max_duration).max(0.0);
                }
                if piece.start < words[0].end && piece.start - 0.5 > words[0].start {
                    words[0].start = (words[0].end - median).min(piece.start).max(0.0);
                } else {
                    piece.start = words[0].start;
                }
                let last = words.len() - 1;
                if piece.end > words[last].start && piece.end + 0.5 < words[last].end {
                    words[last].end = (words[last].start + median).max(piece.end);
                } else {
                    piece.end = words[last].end;
                }
                last_speech_timestamp = piece.end;
            }
            piece.words = words;
        }
        last_speech_timestamp
    }
}

/// What the decoding of every window of one transcription shares: the start-of-transcript
/// sequence (language, task), the decoding options, the glossary terms' tokens.
struct DecodeSetup {
    sot_sequence: Vec<u32>,
    dopts: DecodeOptions,
    hotwords: Vec<u32>,
}

#[derive(Clone)]
enum LanguagePlan {
    Fixed(&'static str),
    Detect(Vec<&'static str>),
}

/// A transcription up to its first decoding ([`Engine::prepare`]).
struct Prepared<'m> {
    media: Media<'m>,
    plan: LanguagePlan,
    windows: Windows<'m>,
    duration_s: f64,
    map: TimeMap,
    found: SpeechFound,
    /// `Some((n, chunks))`: the chunks are decoded `n` at a time (the batched path); `None`:
    /// the speech is walked window by window.
    batch: Option<(usize, Vec<std::ops::Range<usize>>)>,
}

/// The first window of a transcription, encoded already (and decoded at its first
/// temperature, when it was decoded with others).
struct FirstWindow {
    audio: AudioContext,
    result: Option<WindowResult>,
    language: &'static str,
    language_probability: f32,
}

/// A stretch of a window without words is looked at again from this length (seconds) on, when
/// the VAD heard speech in it; shorter ones are pauses and the spans' padding.
const UNDECODED_MIN_S: f64 = 1.0;
/// How much speech (by the VAD, seconds) a wordless stretch inside a decoded window must hold
/// to be decoded again on its own. Half a second decoded CHILDES's babble again into invented
/// sentences; a second gave lower WER on every measure (`ops/bench/asr-history.md`, 2026-11-27).
const SKIPPED_SPEECH_MIN_S: f64 = 1.0;
/// How much speech (by the VAD, seconds) the rest of a window after its decoding ended must
/// hold to be decoded: less is the tail of the last word and the span's padding, and decoded
/// on its own it gives an invented word (Gettysburg's last chunk: 0.16 s, "You").
const REST_SPEECH_MIN_S: f64 = 0.25;

/// A piece decoded a second time (a window's rest, a wordless stretch) whose words lie this much
/// (or more) inside runs of four words already emitted for that audio or the window before is
/// dropped: it reads back what was said. Speakers do repeat themselves (CHILDES: "give me a
/// kiss", twice), so a piece with new words in half of it is kept.
const REPEATED_SHARE_MAX: f32 = 0.5;

/// Seconds a word takes at least, on average over a piece of [`TOO_FAST_MIN_WORDS`] words or
/// more, to be speech: the word timings squeeze text that has no audio behind it into a
/// moment. 0.06 s is 16 words a second; the fastest piece of the corpus's 36 clips takes
/// 0.12 s a word (CHILDES), while a decoding sampled after CHILDES in a joined recording wrote
/// "Do you want me to make this?" again in 0.16 s.
const TOO_FAST_S_PER_WORD: f64 = 0.06;
const TOO_FAST_MIN_WORDS: usize = 3;

/// True when `words` (timed) are too many for the time they take to have been said.
fn too_fast(words: &[WordTiming]) -> bool {
    let spoken: Vec<&WordTiming> = words.iter().filter(|w| w.word.chars().any(char::is_alphanumeric)).collect();
    match (spoken.first(), spoken.last()) {
        (Some(first), Some(last)) if spoken.len() >= TOO_FAST_MIN_WORDS => {
            (last.end - first.start) / (spoken.len() as f64) < TOO_FAST_S_PER_WORD
        }
        _ => false,
    }
}

/// The stretches (seconds) the pieces' words cover, in order: the words' times, or each
/// piece's own span when word timings were not asked for.
fn covered<P: std::borrow::Borrow<Piece>>(pieces: &[P]) -> Vec<(f64, f64)> {
    let mut spans: Vec<(f64, f64)> = pieces
        .iter()
        .flat_map(|p| {
            let p = p.borrow();
            if p.words.is_empty() { vec![(p.start, p.end)] } else { p.words.iter().map(|w| (w.start, w.end)).collect() }
        })
        .collect();
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    spans
}

/// `pieces` with each piece whose words lie on both sides of the stretch `from..to` (seconds)
/// cut in two there, so that what is decoded again inside the stretch falls between them.
/// The halves keep their words and those words' tokens. The stretch's ends may be a frame
/// off the words' times (it was rounded to frames).
fn split_around(pieces: Vec<Piece>, from: f64, to: f64) -> Vec<Piece> {
    let frame = 1.0 / FRAMES_PER_SECOND as f64;
    let mut out = Vec::with_capacity(pieces.len() + 1);
    for p in pieces {
        let before = p.words.iter().take_while(|w| w.end <= from + frame).count();
        let straddles = before > 0 && p.words[before..].first().is_some_and(|w| w.start >= to - frame);
        if !straddles {
            out.push(p);
            continue;
        }
        let mut words = p.words;
        let after = words.split_off(before);
        let tokens = |ws: &[WordTiming]| ws.iter().flat_map(|w| w.tokens.iter().copied()).collect::<Vec<u32>>();
        out.push(Piece { start: p.start, end: words[before - 1].end, tokens: tokens(&words), words });
        out.push(Piece { start: after[0].start, end: p.end, tokens: tokens(&after), words: after });
    }
    out
}

/// The parts of `from..to` that no stretch of `covered` (sorted by start) overlaps.
fn uncovered(covered: &[(f64, f64)], from: f64, to: f64) -> Vec<(f64, f64)> {
    let mut gaps = Vec::new();
    let mut at = from;
    for &(a, b) in covered {
        if a > at {
            gaps.push((at, a.min(to)));
        }
        at = at.max(b);
    }
    if at < to {
        gaps.push((at, to));
    }
    gaps.retain(|g| g.1 > g.0);
    gaps
}

/// Where the VAD heard speech: its probability per 512-sample chunk of the original media, and
/// the threshold that makes a chunk speech. Empty without voice detection (then nothing is
/// known to be speech, and the decoder's word is taken).
struct SpeechFound {
    probabilities: Vec<f32>,
    threshold: f32,
}

impl SpeechFound {
    /// Seconds of speech in `ranges` (seconds of the original media), counted in whole chunks
    /// that lie inside them.
    fn speech_s(&self, ranges: &[(f64, f64)]) -> f64 {
        let per_s = SAMPLE_RATE as f64 / vad::CHUNK as f64;
        let chunks: usize = ranges
            .iter()
            .map(|&(from, to)| {
                let first = (from * per_s).ceil().max(0.0) as usize;
                let end = ((to * per_s).floor().max(0.0) as usize).min(self.probabilities.len());
                self.probabilities.get(first..end).map_or(0, |p| p.iter().filter(|&&p| p >= self.threshold).count())
            })
            .sum();
        chunks as f64 / per_s
    }
}

/// A segment of one window before it becomes a [`Segment`].
struct Piece {
    start: f64,
    end: f64,
    tokens: Vec<u32>,
    words: Vec<WordTiming>,
}

/// Maps times in the concatenated speech back to the original file (faster-whisper's
/// `SpeechTimestampsMap`): each kept span starts at `speech_start` seconds in the speech and
/// at `original_start` seconds in the file.
struct TimeMap {
    chunks: Vec<(f64, f64)>, // (speech_start, original_start)
}

impl TimeMap {
    fn identity() -> TimeMap {
        TimeMap { chunks: vec![(0.0, 0.0)] }
    }

    fn new(spans: &[std::ops::Range<usize>]) -> TimeMap {
        let sr = SAMPLE_RATE as f64;
        let mut speech = 0usize;
        let chunks = spans
            .iter()
            .map(|s| {
                let c = (speech as f64 / sr, s.start as f64 / sr);
                speech += s.len();
                c
            })
            .collect();
        TimeMap { chunks }
    }

    fn chunk_of(&self, t: f64, is_end: bool) -> usize {
        // An end exactly on a boundary belongs to the chunk before it.
        let idx = self.chunks.partition_point(|&(start, _)| if is_end { start < t } else { start <= t });
        idx.saturating_sub(1)
    }

    fn to_original_in(&self, t: f64, chunk: usize) -> f64 {
        let (speech_start, original_start) = self.chunks[chunk];
        ((original_start + (t - speech_start)) * 100.0).round() / 100.0
    }

    fn to_original(&self, t: f64, is_end: bool) -> f64 {
        self.to_original_in(t, self.chunk_of(t, is_end))
    }

    /// The pieces of the original media that the speech between `from` and `to` (seconds of
    /// the concatenated speech) came from.
    fn original_ranges(&self, from: f64, to: f64) -> Vec<(f64, f64)> {
        let mut ranges = Vec::new();
        for (i, &(speech_start, original_start)) in self.chunks.iter().enumerate() {
            let speech_end = self.chunks.get(i + 1).map_or(f64::INFINITY, |c| c.0);
            let (a, b) = (from.max(speech_start), to.min(speech_end));
            if a < b {
                ranges.push((original_start + (a - speech_start), original_start + (b - speech_start)));
            }
        }
        ranges
    }

    fn restore(&self, seg: &mut Segment) {
        if seg.words.is_empty() {
            seg.start = self.to_original(seg.start, false);
            seg.end = self.to_original(seg.end, true);
            return;
        }
        for w in &mut seg.words {
            let chunk = self.chunk_of((w.start + w.end) / 2.0, false);
            w.start = self.to_original_in(w.start, chunk);
            w.end = self.to_original_in(w.end, chunk);
        }
        seg.start = seg.words[0].start;
        seg.end = seg.words[seg.words.len() - 1].end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transcript_fails_the_checks_when_a_window_loops_or_is_unlikely() {
        let segment = |text: &str, seek: usize, avg_logprob: f32| Segment {
            start: 0.0,
            end: 1.0,
            text: text.into(),
            words: Vec::new(),
            avg_logprob,
            no_speech_prob: 0.0,
            seek,
            tokens: Vec::new(),
            temperature: 0.0,
            compression_ratio: decode::compression_ratio(text),
        };
        let transcript =
            |segments| Transcript { language: "en".into(), language_probability: 1.0, duration_s: 1.0, segments };
        // given a window whose segments say a sentence once each, it passes
        let plain = vec![segment(" You want to make it?", 0, -0.3), segment(" I think it is nice.", 0, -0.4)];
        assert!(!transcript(plain).failed_checks());
        // given one window whose segments repeat a phrase three times between them, it fails
        let looped = vec![
            segment(" Do you want to make it?", 0, -0.3),
            segment(" Do you want to make it?", 0, -0.3),
            segment(" Do you want to make it?", 0, -0.3),
        ];
        assert!(transcript(looped).failed_checks());
        // ... but twice in one window and once in the next is speech, not a loop
        let apart = vec![
            segment(" Do you want to make it?", 0, -0.3),
            segment(" Do you want to make it?", 0, -0.3),
            segment(" Do you want to make it?", 3000, -0.3),
        ];
        assert!(!transcript(apart).failed_checks());
        // given a window the decoder found unlikely, it fails
        assert!(transcript(vec![segment(" Sandy is good at rock climbing.", 0, -1.2)]).failed_checks());
    }

    #[test]
    fn a_fitted_window_that_decodes_a_rest_again_drops_a_failed_decoding() {
        let drop = EncoderWindow::Fitted { margin_frames: FITTED_MARGIN_FRAMES, if_failed: IfFitFails::Drop };
        // given the finals' and the partials' fitted windows, when a window decodes a rest again
        assert_eq!(EncoderWindow::fitted().decoding_again(true), drop);
        assert_eq!(EncoderWindow::fitted_for_partials().decoding_again(true), drop);
        // then it drops what fails; a first window, and the whole window, are as they were
        assert_eq!(EncoderWindow::fitted().decoding_again(false), EncoderWindow::fitted());
        assert_eq!(EncoderWindow::Whole.decoding_again(true), EncoderWindow::Whole);
    }

    #[test]
    fn a_piece_is_cut_around_a_stretch_decoded_again_between_its_words() {
        let word = |text: &str, start: f64, end: f64, token: u32| WordTiming {
            word: text.into(),
            tokens: vec![token],
            start,
            end,
            probability: 1.0,
        };
        // given a piece with words at 1–2 s and 6–7 s, and one with a word at 8–9 s
        let pieces = vec![
            Piece {
                start: 0.5,
                end: 7.5,
                tokens: vec![9, 1, 2, 9],
                words: vec![word(" a", 1.0, 2.0, 1), word(" b", 6.0, 7.0, 2)],
            },
            Piece { start: 8.0, end: 9.0, tokens: vec![3], words: vec![word(" c", 8.0, 9.0, 3)] },
        ];
        // when the stretch 2–6 s is decoded again
        let cut = split_around(pieces, 2.0, 6.0);
        // then the first piece is two, around it, each with its own words and tokens
        let spans: Vec<_> = cut.iter().map(|p| (p.start, p.end, p.tokens.clone())).collect();
        assert_eq!(spans, vec![(0.5, 2.0, vec![1]), (6.0, 7.5, vec![2]), (8.0, 9.0, vec![3])]);
        // and a stretch no piece's words straddle cuts nothing
        assert_eq!(split_around(cut, 7.5, 8.0).len(), 3);
    }

    #[test]
    fn six_words_in_a_sixth_of_a_second_were_not_said() {
        let timed = |n: usize, each: f64| -> Vec<WordTiming> {
            (0..n)
                .map(|i| WordTiming {
                    word: " word".into(),
                    tokens: vec![1],
                    start: 30.0 + i as f64 * each,
                    end: 30.0 + (i + 1) as f64 * each,
                    probability: 0.5,
                })
                .collect()
        };
        // given "Do you want me to make this?" in 0.16 s, and at CHILDES's fastest, 0.12 s a word
        assert!(too_fast(&timed(7, 0.16 / 7.0)));
        assert!(!too_fast(&timed(5, 0.12)));
        // and two short words are too few to tell
        assert!(!too_fast(&timed(2, 0.01)));
    }

    #[test]
    fn uncovered_stretches_are_what_no_word_overlaps() {
        // given words at 1–2 s and 2.5–4 s (one overlapping the next), in a window from 0 to 10 s
        let words = [(1.0, 2.0), (1.5, 2.2), (2.5, 4.0)];
        // when the gaps are taken
        let gaps = uncovered(&words, 0.0, 10.0);
        // then they are before, between and after the words
        assert_eq!(gaps, vec![(0.0, 1.0), (2.2, 2.5), (4.0, 10.0)]);
        // and a window the words fill has none
        assert!(uncovered(&[(0.0, 5.0)], 0.0, 5.0).is_empty());
    }

    #[test]
    fn speech_is_counted_in_the_original_media_behind_the_kept_spans() {
        // given two kept spans, 1–2 s and 5–6 s of the media, and the VAD hearing speech only
        // in the second
        let sr = SAMPLE_RATE as usize;
        let map = TimeMap::new(&[sr..2 * sr, 5 * sr..6 * sr]);
        let per_s = SAMPLE_RATE as f64 / vad::CHUNK as f64;
        let probabilities =
            (0..(7.0 * per_s) as usize).map(|i| if i as f64 / per_s >= 5.0 { 0.9 } else { 0.1 }).collect();
        let found = SpeechFound { probabilities, threshold: 0.5 };
        // when the speech of the concatenation's 0.5–1.5 s is asked for
        let ranges = map.original_ranges(0.5, 1.5);
        // then it lies in both spans, and only the second's half second is speech
        assert_eq!(ranges, vec![(1.5, 2.0), (5.0, 5.5)]);
        // (counted in whole 32 ms chunks inside the ranges: up to two fewer)
        assert!((found.speech_s(&ranges) - 0.5).abs() < 0.07, "{}", found.speech_s(&ranges));
        assert_eq!(found.speech_s(&map.original_ranges(0.0, 1.0)), 0.0);
    }
}
