//! Speakers for direct jobs: after recognition, the ASR worker asks this module who spoke
//! each word, by voice (see `scribe-diarize`) or by audio channel ([`Diarization`]), unless the
//! client said there is one speaker.
//!
//! By voice, `numberOfSpeakers` decides ([`SpeakerCount`]): 1 skips diarization (every word is
//! Speaker 1); 2–5 given by the client is the number of speakers (exactly that many whenever that
//! many voices speak); left out, the default 2 is a bound (a monologue is one speaker); 0 lets
//! diarization estimate the number. The models load on the first job that needs them and stay loaded
//! (about 35 MB); a missing or broken model file fails the job with an error naming it.
//!
//! By channel (`speakerChannels`, or the operator's `--speaker-channels`: a call recorded one party
//! per channel), each channel is read alone, streaming, into an energy envelope (RMS per 10 ms),
//! and each word goes to the channel loudest over its time span: channel 1 is Speaker 1, channel 2
//! Speaker 2, whoever speaks first. A mono file is one speaker. No model is needed.

use std::cell::Cell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use scribe_diarize::{DiarizeOptions, Diarizer, Speakers};
use scribe_domain::speakers::{
    Diarization, ENVELOPE_FRAME_S, SpeakerCount, assign_channel_speakers, assign_speakers, loudest_channel,
};
use scribe_domain::transcript as doc;
use scribe_whisper::DeviceChoice;

/// Where the diarization models are, and the processor they run on (the speech engine's).
#[derive(Clone, Debug)]
pub struct SpeakerModels {
    pub dir: PathBuf,
    pub device: DeviceChoice,
}

impl SpeakerModels {
    /// The models in `dir`, on this CPU.
    pub fn on_cpu(dir: impl Into<PathBuf>) -> SpeakerModels {
        SpeakerModels { dir: dir.into(), device: DeviceChoice::Cpu }
    }
}

/// The loaded diarization models, per models folder and device.
fn diarizer(models: &SpeakerModels) -> Result<Arc<Diarizer>, String> {
    static LOADED: OnceLock<Mutex<HashMap<(PathBuf, String), Arc<Diarizer>>>> = OnceLock::new();
    let mut loaded = LOADED.get_or_init(Default::default).lock().expect("the diarizer lock");
    let key = (models.dir.clone(), models.device.to_string());
    if let Some(d) = loaded.get(&key) {
        return Ok(d.clone());
    }
    tracing::info!(models = %models.dir.display(), device = %models.device, "loading the speaker diarization models");
    let device = models.device.placement()?.device();
    let d = Arc::new(Diarizer::load_on(&models.dir, &device).map_err(|e| e.to_string())?);
    loaded.insert(key, d.clone());
    Ok(d)
}

/// Why reading the media for diarization stopped early.
enum Stop {
    Cancelled,
    Failed(String),
}

/// `document` with its words given to the speakers of the media at `media_path`, found as `how`
/// says. Returns `Ok(None)` when the job was cancelled meanwhile.
pub async fn label_speakers(
    models: SpeakerModels,
    media_path: PathBuf,
    how: Diarization,
    document: doc::Transcript,
    cancel: Arc<AtomicBool>,
) -> Result<Option<doc::Transcript>, String> {
    let count = match how {
        _ if document.segments.is_empty() => return Ok(Some(document)),
        Diarization::ByChannel => return by_channel(media_path, document, cancel).await,
        Diarization::ByVoice(count) => count,
    };
    let speakers = match count {
        SpeakerCount::One => return Ok(Some(document)),
        SpeakerCount::Exactly(n) => Speakers::Exactly(n as usize),
        SpeakerCount::AtMost(n) => Speakers::AtMost(n as usize),
        SpeakerCount::Estimate => Speakers::Estimate,
    };
    // The caller's span (the job's) goes with the work onto the blocking pool.
    let span = tracing::Span::current();
    let result = tokio::task::spawn_blocking(move || {
        let _in_job = span.enter();
        let diarizer = diarizer(&models)?;
        let t0 = Instant::now();
        // The media is decoded again, 10 s at a time, as the diarizer asks for it (twice when it
        // finds two voices or more); `seconds` is its duration.
        let seconds = Cell::new(0.0f64);
        let open = || {
            let mut audio = scribe_whisper::audio::open(&media_path)
                .map_err(|e| Stop::Failed(format!("Speaker diarization could not read the media: {e}")))?;
            let (cancel, seconds) = (&cancel, &seconds);
            let mut read_s = 0.0;
            Ok(move || {
                if cancel.load(Ordering::Relaxed) {
                    return Err(Stop::Cancelled);
                }
                let piece = audio
                    .read(16_000 * 10)
                    .map_err(|e| Stop::Failed(format!("Speaker diarization could not read the media: {e}")))?;
                read_s += piece.as_ref().map_or(0.0, |p| p.len() as f64 / 16_000.0);
                seconds.set(seconds.get().max(read_s));
                Ok(piece)
            })
        };
        let d = match diarizer.diarize_stream(open, &DiarizeOptions { speakers, ..Default::default() }) {
            Ok(d) => d,
            Err(Stop::Cancelled) => return Ok(None),
            Err(Stop::Failed(msg)) => return Err(msg),
        };
        let took = t0.elapsed().as_secs_f64();
        tracing::info!(
            speakers = d.speakers,
            seconds = took,
            real_time_factor = took / f64::max(seconds.get(), 1e-9),
            "diarized"
        );
        Ok(Some(assign_speakers(&document, |w| d.speaker_for(w.start, w.end).unwrap_or(0))))
    })
    .await;
    match result {
        Ok(r) => r,
        Err(e) => Err(format!("Speaker diarization failed unexpectedly: {e}")),
    }
}

/// `document` with each word given to the audio channel loudest over it (see the module's
/// documentation). Returns `Ok(None)` when the job was cancelled meanwhile.
async fn by_channel(
    media_path: PathBuf,
    document: doc::Transcript,
    cancel: Arc<AtomicBool>,
) -> Result<Option<doc::Transcript>, String> {
    let span = tracing::Span::current();
    let result = tokio::task::spawn_blocking(move || {
        let _in_job = span.enter();
        let t0 = Instant::now();
        let envelopes = match channel_envelopes(&media_path, &cancel) {
            Ok(e) => e,
            Err(Stop::Cancelled) => return Ok(None),
            Err(Stop::Failed(msg)) => return Err(msg),
        };
        let channels = envelopes.len().max(1);
        let seconds = envelopes.first().map_or(0.0, |e| e.len() as f64 * ENVELOPE_FRAME_S);
        tracing::info!(channels, seconds = t0.elapsed().as_secs_f64(), audio_seconds = seconds, "diarized by channel");
        Ok(Some(assign_channel_speakers(&document, channels, |w| loudest_channel(&envelopes, w.start, w.end))))
    })
    .await;
    match result {
        Ok(r) => r,
        Err(e) => Err(format!("Speaker diarization by channel failed unexpectedly: {e}")),
    }
}

/// The energy envelope of every audio channel of `path`, each channel decoded alone, 10 s at a
/// time. A mono file has one channel and is not read: its one speaker needs no envelope (the
/// result is then empty).
fn channel_envelopes(path: &Path, cancel: &AtomicBool) -> Result<Vec<Vec<f32>>, Stop> {
    let failed = |e: scribe_whisper::audio::AudioError| {
        Stop::Failed(format!("Speaker diarization by channel could not read the media: {e}"))
    };
    let first = scribe_whisper::audio::open_channel(path, 0).map_err(failed)?;
    let channels = first.info().channels;
    if channels <= 1 {
        return Ok(Vec::new());
    }
    let mut envelopes = Vec::with_capacity(channels);
    let mut stream = Some(first);
    for index in 0..channels {
        let mut audio = match stream.take() {
            Some(s) => s,
            None => scribe_whisper::audio::open_channel(path, index).map_err(failed)?,
        };
        let mut envelope = Envelope::default();
        loop {
            if cancel.load(Ordering::Relaxed) {
                return Err(Stop::Cancelled);
            }
            match audio.read(16_000 * 10).map_err(failed)? {
                Some(piece) => envelope.push(&piece),
                None => break,
            }
        }
        envelopes.push(envelope.finish());
    }
    Ok(envelopes)
}

/// Samples of 16 kHz audio in one envelope frame (10 ms).
const FRAME_SAMPLES: usize = (16_000.0 * ENVELOPE_FRAME_S) as usize;

/// The RMS of 16 kHz audio per [`ENVELOPE_FRAME_S`], fed in pieces of any length.
#[derive(Default)]
struct Envelope {
    rms: Vec<f32>,
    /// Sum of squares and count of the samples of the frame being filled.
    sum: f64,
    filled: usize,
}

impl Envelope {
    fn push(&mut self, samples: &[f32]) {
        for &x in samples {
            self.sum += f64::from(x) * f64::from(x);
            self.filled += 1;
            if self.filled == FRAME_SAMPLES {
                self.close();
            }
        }
    }

    fn close(&mut self) {
        self.rms.push((self.sum / self.filled as f64).sqrt() as f32);
        (self.sum, self.filled) = (0.0, 0);
    }

    /// The envelope, its last frame possibly shorter.
    fn finish(mut self) -> Vec<f32> {
        if self.filled > 0 {
            self.close();
        }
        self.rms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document() -> doc::Transcript {
        let word = doc::Word { start: 0.5, end: 1.0, text: "Hello".into(), conf: 1.0, pristine: true };
        doc::Transcript {
            id: "j".into(),
            record_id: "j".into(),
            filename: "a.wav".into(),
            start_time_offset: 0.0,
            speakers: vec![doc::Speaker { spkid: "spk1".into(), name: "Speaker 1".into() }],
            segments: vec![doc::Segment { speaker: "spk1".into(), words: vec![word] }],
            highlights: Vec::new(),
        }
    }

    /// numberOfSpeakers=1 needs neither the models nor the media.
    #[tokio::test]
    async fn one_speaker_skips_diarization() {
        let out = label_speakers(
            SpeakerModels::on_cpu("/nonexistent"),
            "/nonexistent.wav".into(),
            Diarization::ByVoice(SpeakerCount::One),
            document(),
            Arc::default(),
        )
        .await;
        assert_eq!(out, Ok(Some(document())));
    }

    /// Without the models the job fails with a message naming the missing file.
    #[tokio::test]
    async fn missing_models_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let err = label_speakers(
            SpeakerModels::on_cpu(dir.path()),
            "/nonexistent.wav".into(),
            Diarization::ByVoice(SpeakerCount::AtMost(2)),
            document(),
            Arc::default(),
        )
        .await
        .unwrap_err();
        assert!(err.contains("pyannote_segmentation_3.0.bin"), "{err}");
    }
}

#[cfg(test)]
mod channel_tests {
    use super::*;

    fn word(start: f64, end: f64, text: &str) -> doc::Word {
        doc::Word { start, end, text: text.into(), conf: 1.0, pristine: true }
    }

    fn document(words: Vec<doc::Word>) -> doc::Transcript {
        doc::Transcript {
            id: "j".into(),
            record_id: "j".into(),
            filename: "call.wav".into(),
            start_time_offset: 0.0,
            speakers: vec![doc::Speaker { spkid: "spk1".into(), name: "Speaker 1".into() }],
            segments: vec![doc::Segment { speaker: "spk1".into(), words }],
            highlights: Vec::new(),
        }
    }

    /// A stereo call at 16 kHz: a tone on the right for the first second, then on the left for
    /// the next.
    fn call(dir: &Path) -> PathBuf {
        let path = dir.join("call.wav");
        let samples = (0..32_000).flat_map(|k| {
            let tone = (0.4 * (k as f32 * 0.2).sin() * 32767.0) as i16;
            if k < 16_000 { [0, tone] } else { [tone, 0] }
        });
        write_wav(&path, 2, samples);
        path
    }

    /// A 16 kHz, 16-bit WAV file of `channels` interleaved channels.
    fn write_wav(path: &Path, channels: u16, samples: impl IntoIterator<Item = i16>) {
        let spec = hound::WavSpec {
            channels,
            sample_rate: 16_000,
            bits_per_sample: 16,
            sample_format: hound::SampleFormat::Int,
        };
        let mut w = hound::WavWriter::create(path, spec).unwrap();
        for s in samples {
            w.write_sample(s).unwrap();
        }
        w.finalize().unwrap();
    }

    #[test]
    fn the_envelope_is_the_rms_of_each_10_ms_fed_in_any_pieces() {
        let mut e = Envelope::default();
        // 2.5 frames of a constant 0.5, in pieces that do not fall on frame edges
        for piece in [vec![0.5f32; 100], vec![0.5; 250], vec![-0.5; 50]] {
            e.push(&piece);
        }
        assert_eq!(e.finish(), vec![0.5, 0.5, 0.5]);
        assert!(Envelope::default().finish().is_empty());
    }

    #[tokio::test]
    async fn each_word_goes_to_the_channel_it_was_spoken_on_numbered_by_channel() {
        let dir = tempfile::tempdir().unwrap();
        // Given a call where the right channel speaks first, then the left,
        let doc = document(vec![word(0.1, 0.5, "Hello?"), word(0.6, 0.9, "Yes."), word(1.2, 1.6, "Hi,")]);
        // when it is diarized by channel (no models needed),
        let out = label_speakers(
            SpeakerModels::on_cpu("/nonexistent"),
            call(dir.path()),
            Diarization::ByChannel,
            doc,
            Arc::default(),
        )
        .await
        .unwrap()
        .unwrap();
        // then the right channel's words are Speaker 2 and the left's Speaker 1.
        let segs: Vec<(&str, usize)> = out.segments.iter().map(|s| (s.speaker.as_str(), s.words.len())).collect();
        assert_eq!(segs, [("spk2", 2), ("spk1", 1)]);
        let names: Vec<&str> = out.speakers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["Speaker 1", "Speaker 2"]);
    }

    #[tokio::test]
    async fn a_mono_file_by_channel_is_one_speaker_and_a_cancelled_job_stops() {
        let dir = tempfile::tempdir().unwrap();
        let mono = dir.path().join("mono.wav");
        write_wav(&mono, 1, (0..16_000).map(|k| ((k % 100) * 100) as i16));
        let doc = document(vec![word(0.1, 0.3, "One"), word(0.5, 0.7, "voice.")]);
        let out =
            label_speakers(SpeakerModels::on_cpu("/x"), mono, Diarization::ByChannel, doc.clone(), Arc::default())
                .await;
        let out = out.unwrap().unwrap();
        assert_eq!((out.speakers.len(), out.segments.len(), out.segments[0].speaker.as_str()), (1, 1, "spk1"));
        // A job deleted before (or while) its channels are read stops there.
        let cancel = Arc::new(AtomicBool::new(true));
        let out =
            label_speakers(SpeakerModels::on_cpu("/x"), call(dir.path()), Diarization::ByChannel, doc.clone(), cancel)
                .await;
        assert_eq!(out, Ok(None));
        // A file that is not media fails the job, saying so.
        let text = dir.path().join("notes.wav");
        std::fs::write(&text, "not audio ".repeat(100)).unwrap();
        let err = label_speakers(SpeakerModels::on_cpu("/x"), text, Diarization::ByChannel, doc, Arc::default())
            .await
            .unwrap_err();
        assert!(err.starts_with("Speaker diarization by channel could not read the media"), "{err}");
    }
}
