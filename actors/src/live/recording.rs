//! `saveAsJob`: a live session kept as a `direct` transcription job.
//!
//! The job is recorded when the session opens (through the billing saga, which wants its first
//! minute covered; see `LiveSessions::open`). The audio (16 kHz mono, 16-bit WAV written with
//! `hound`) grows on disk as it arrives, its header brought up to date every second, so a file
//! left by a crash is a valid WAV of what came before. Each final is recorded on the job's
//! stream as it is sent ([`Recording::utterance`]); the session's end writes the document of
//! those recorded finals beside its transcript and ends the session in one append, after which the
//! pipeline reads the recording again as it reads an upload (the finals are the transcript only
//! if that fails: `scribe_domain::job::live`). After a crash, the node that ran the session
//! ends it on its next start ([`recover`]) from what the stream and the file hold, and the
//! job's notes say it was cut short.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use scribe_domain::ids::JobId;
use scribe_domain::job::live::{LiveOutcome, LiveTranscript, LiveUtterance, LiveWordRecord};
use scribe_domain::job::{JobCommand, JobState, StoredMedia};
use scribe_domain::kinds::{JobType, TranscriptionType};
use scribe_domain::languages::Language;
use scribe_domain::live::{LiveInit, LiveResult};
use scribe_domain::requests::JobRequest;
use scribe_domain::transcript as doc;

use crate::clock::now_ms;
use crate::jobs::{Jobs, job_span};
use crate::media::{MediaStore, relative};

/// The audio file of a live job, in its media directory.
pub const AUDIO_FILE: &str = "live-session.wav";
const SAMPLE_RATE: u32 = 16_000;
/// How often the WAV header is brought up to date while the session runs.
const FLUSH_EVERY: Duration = Duration::from_secs(1);

/// The job of a running session.
pub struct Recording {
    jobs: Jobs,
    media: MediaStore,
    data_dir: PathBuf,
    job_id: JobId,
    path: PathBuf,
    writer: Option<hound::WavWriter<BufWriter<File>>>,
    flushed: Instant,
    utterances: u32,
    language: Language,
}

impl Recording {
    /// Opens the audio file of the session's job `job_id` (recorded by the caller, through the
    /// billing saga, with [`job_request`]).
    pub fn start(
        jobs: &Jobs,
        media: &MediaStore,
        data_dir: &Path,
        job_id: &JobId,
        language: Language,
    ) -> Result<Recording, String> {
        let path = media.media_path(job_id.as_str(), AUDIO_FILE).map_err(|e| e.to_string())?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        }
        let spec = hound::WavSpec {
            channels: 1,
            sample_rate: SAMPLE_RATE,
            bits_per_sample: 16,
            sample_format: hound::SampleFormat::Int,
        };
        let writer = hound::WavWriter::create(&path, spec).map_err(|e| format!("creating {}: {e}", path.display()))?;
        Ok(Recording {
            jobs: jobs.clone(),
            media: media.clone(),
            data_dir: data_dir.to_path_buf(),
            job_id: job_id.clone(),
            path,
            writer: Some(writer),
            flushed: Instant::now(),
            utterances: 0,
            language,
        })
    }

    /// Appends 16 kHz samples to the audio file.
    pub fn audio(&mut self, samples: &[f32]) {
        let Some(writer) = self.writer.as_mut() else { return };
        let written = samples.iter().try_for_each(|&s| writer.write_sample((s.clamp(-1.0, 1.0) * 32767.0) as i16));
        let flushed = match written {
            Ok(()) if self.flushed.elapsed() >= FLUSH_EVERY => {
                self.flushed = Instant::now();
                writer.flush()
            }
            other => other,
        };
        if let Err(e) = flushed {
            job_span(&self.job_id).in_scope(|| tracing::error!(error = %e, "writing the live session's audio"));
            self.writer = None;
        }
    }

    /// Records a final on the job's stream (before the client is sent it).
    pub async fn utterance(&mut self, result: &LiveResult, language: Language) {
        self.language = language;
        let ms = |s: f64| (s.max(0.0) * 1000.0).round() as u64;
        let (start, end) = result.span.unwrap_or((0.0, 0.0));
        let utterance = LiveUtterance {
            index: self.utterances,
            start_ms: ms(start),
            end_ms: ms(end),
            words: result
                .words
                .iter()
                .filter_map(|w| {
                    let t = w.timing?;
                    Some(LiveWordRecord {
                        text: w.word.clone(),
                        start_ms: ms(t.start),
                        end_ms: ms(t.end),
                        conf: t.confidence,
                    })
                })
                .collect(),
        };
        let cmd = JobCommand::RecordUtterance { utterance, at_ms: now_ms() };
        match self.jobs.execute(&self.job_id, cmd).await {
            Ok(_) => self.utterances += 1,
            Err(e) => job_span(&self.job_id).in_scope(|| tracing::error!(error = %e, "recording a live final")),
        }
    }

    /// Ends the session: the audio file closed, the finals' document written.
    pub async fn finish(mut self) {
        if let Some(writer) = self.writer.take()
            && let Err(e) = writer.finalize()
        {
            job_span(&self.job_id).in_scope(|| tracing::error!(error = %e, "closing the live session's audio"));
        }
        let (state, _) = match self.jobs.state(&self.job_id).await {
            Ok(s) => s,
            Err(e) => {
                // The node's next start finishes it from the log.
                job_span(&self.job_id).in_scope(|| tracing::error!(error = %e, "reading the live job to finish it"));
                return;
            }
        };
        finish_job(&self.jobs, &self.media, &self.data_dir, &self.job_id, &self.path, &state, self.language, None)
            .await;
    }
}

/// The job a session with `init` is kept as: a direct transcription in its language, with its
/// glossary and callback.
pub fn job_request(init: &LiveInit) -> JobRequest {
    JobRequest {
        language: init.language,
        transcription_type: TranscriptionType::Transcription,
        job_type: JobType::Direct,
        number_of_speakers: 1,
        number_of_speakers_given: true,
        job_options: None,
        turnaround_time: None,
        target_language: None,
        callback_url: init.callback_url.clone(),
        glossary_id: init.glossary_id.clone(),
        delete_after_seconds: None,
        speaker_channels: None,
        decoding: None,
    }
}

/// Ends the session of a job that did not end on its own (the node stopped under it): the
/// audio written before the crash is its media, read again as a session's that ended.
pub async fn recover(jobs: &Jobs, media: &MediaStore, data_dir: &Path, job_id: &JobId, state: &JobState) {
    let Ok(path) = media.media_path(job_id.as_str(), AUDIO_FILE) else { return };
    let received = std::fs::metadata(&path).map(|m| m.len().saturating_sub(44) / 2).unwrap_or(0);
    let seconds = received as f64 / SAMPLE_RATE as f64;
    let note = format!(
        "The live session was cut short by a server restart after {seconds:.1} s of audio; the {} results finalized before it are kept, and the audio received until then is transcribed",
        state.live_utterances.len()
    );
    repair_wav(&path);
    let language = state.submission.as_ref().map(|s| s.language).unwrap_or_else(Language::default_language);
    let language = if language.is_auto() { Language::default_language() } else { language };
    job_span(job_id)
        .in_scope(|| tracing::warn!(utterances = state.live_utterances.len(), "finishing an interrupted live session"));
    finish_job(jobs, media, data_dir, job_id, &path, state, language, Some(note)).await;
}

/// A WAV whose header counts fewer samples than the file holds (written by `hound` until its
/// last flush) is rewritten with the right sizes.
fn repair_wav(path: &Path) {
    let Ok(reader) = hound::WavReader::open(path) else { return };
    let spec = reader.spec();
    let Ok(bytes) = std::fs::read(path) else { return };
    if bytes.len() <= 44 {
        return;
    }
    let samples = (bytes.len() - 44) / 2;
    if reader.len() as usize == samples {
        return;
    }
    let Ok(mut writer) = hound::WavWriter::create(path.with_extension("wav.repair"), spec) else { return };
    let ok = bytes[44..44 + samples * 2]
        .chunks_exact(2)
        .try_for_each(|b| writer.write_sample(i16::from_le_bytes([b[0], b[1]])))
        .and_then(|_| writer.finalize());
    if ok.is_ok() {
        let _ = std::fs::rename(path.with_extension("wav.repair"), path);
    }
}

#[allow(clippy::too_many_arguments)]
async fn finish_job(
    jobs: &Jobs,
    media: &MediaStore,
    data_dir: &Path,
    job_id: &JobId,
    audio: &Path,
    state: &JobState,
    language: Language,
    interrupted: Option<String>,
) {
    let span = job_span(job_id);
    let bytes = std::fs::metadata(audio).map(|m| m.len()).unwrap_or(0);
    let duration_ms = bytes.saturating_sub(44) / 2 * 1000 / SAMPLE_RATE as u64;
    let document = document_of(job_id, &state.live_utterances);
    let words: u64 = document.segments.iter().map(|s| s.words.len() as u64).sum();
    let transcript = if words == 0 {
        None
    } else {
        let json = serde_json::to_vec(&document).expect("transcripts serialize");
        match media.write_live_finals(job_id.as_str(), &json).await {
            Ok(path) => Some(LiveTranscript { path: relative(data_dir, &path), language, words }),
            Err(e) => {
                span.in_scope(|| tracing::error!(error = %e, "writing the live session's finals"));
                return;
            }
        }
    };
    let outcome = LiveOutcome {
        media: StoredMedia { path: relative(data_dir, audio), bytes },
        duration_ms,
        transcript,
        interrupted,
    };
    if let Err(e) = jobs.execute(job_id, JobCommand::FinishLive { outcome, at_ms: now_ms() }).await {
        span.in_scope(|| tracing::error!(error = %e, "finishing the live job"));
    }
}

/// The export document of the recorded finals: one segment per utterance, one speaker.
fn document_of(job_id: &JobId, utterances: &[LiveUtterance]) -> doc::Transcript {
    let speaker = doc::Speaker { spkid: "spk1".into(), name: "Speaker 1".into() };
    let seconds = |ms: u64| ms as f64 / 1000.0;
    doc::Transcript {
        id: job_id.as_str().to_owned(),
        record_id: job_id.as_str().to_owned(),
        filename: AUDIO_FILE.to_owned(),
        start_time_offset: 0.0,
        speakers: vec![speaker.clone()],
        segments: utterances
            .iter()
            .filter(|u| !u.words.is_empty())
            .map(|u| doc::Segment {
                speaker: speaker.spkid.clone(),
                words: u
                    .words
                    .iter()
                    .map(|w| doc::Word {
                        start: seconds(w.start_ms),
                        end: seconds(w.end_ms),
                        text: w.text.clone(),
                        conf: f64::from(w.conf),
                        pristine: true,
                    })
                    .collect(),
            })
            .collect(),
        highlights: Vec::new(),
    }
}
