//! The ASR actor: a bounded pool that runs speech recognition for direct jobs (and the draft of
//! manual jobs) with the burn Whisper engine, writes the transcript file and records the outcome.
//!
//! Recognition is CPU-bound and already uses every core, so the pool runs `workers` tasks at a
//! time (default 1) on blocking threads and queues the rest; the queue length is published in a
//! gauge for logs and `/metrics`.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use ractor::{Actor, ActorProcessingErr, ActorRef};
use scribe_domain::glossary::GlossaryAggregate;
use scribe_domain::ids::{JobId, glossary_stream};
use scribe_domain::job::{JobCommand, JobState};
use scribe_domain::kinds::TranscriptionStyle;
use scribe_domain::languages::Language;
use scribe_domain::style::clean_read;
use scribe_domain::transcript as doc;
use scribe_translate::TranslationModels;
use scribe_whisper::engine::{EngineError, Task, TranscribeOptions, Transcript};

use crate::clock::now_ms;
use crate::command;
use crate::eventstore::EventStore;
use crate::jobs::Jobs;
use crate::media::MediaStore;
use crate::media_worker::relative;
use crate::pipeline::{StageDone, fail_and_report, report};
use crate::speech_model::SpeechModel;
use crate::translation::TranslationWork;

/// Languages `auto` may detect (the spec's automatic language identification set).
pub const AUTO_DETECT: [&str; 5] = ["en", "nl", "de", "fr", "it"];

pub enum TaskKind {
    Transcribe,
    Translate,
}

/// One job's recognition work.
pub struct AsrTask {
    pub job_id: JobId,
    pub kind: TaskKind,
    pub media_path: PathBuf,
    pub state: JobState,
    pub done: StageDone,
}

pub enum AsrMsg {
    Enqueue(Box<AsrTask>),
    /// A worker finished; start the next task.
    WorkerFree,
}

pub struct AsrActor;

pub struct AsrArgs {
    pub model: Arc<SpeechModel>,
    /// English→xx text models, for translatedSubtitles into languages other than English.
    pub text_models: TranslationModels,
    pub jobs: Jobs,
    pub store: Arc<dyn EventStore>,
    pub media: MediaStore,
    pub data_dir: PathBuf,
    pub workers: usize,
    /// Tasks waiting for a worker.
    pub queue_gauge: Arc<AtomicUsize>,
}

pub struct AsrState {
    args: AsrArgs,
    queue: VecDeque<Box<AsrTask>>,
    busy: usize,
}

impl Actor for AsrActor {
    type Msg = AsrMsg;
    type State = AsrState;
    type Arguments = AsrArgs;

    async fn pre_start(&self, _: ActorRef<AsrMsg>, args: AsrArgs) -> Result<AsrState, ActorProcessingErr> {
        Ok(AsrState { args, queue: VecDeque::new(), busy: 0 })
    }

    async fn handle(&self, myself: ActorRef<AsrMsg>, msg: AsrMsg, state: &mut AsrState) -> Result<(), ActorProcessingErr> {
        match msg {
            AsrMsg::Enqueue(task) => {
                state.queue.push_back(task);
                tracing::info!(queue = state.queue.len(), busy = state.busy, "ASR task queued");
            }
            AsrMsg::WorkerFree => state.busy = state.busy.saturating_sub(1),
        }
        while state.busy < state.args.workers.max(1) {
            let Some(task) = state.queue.pop_front() else { break };
            state.busy += 1;
            let ctx = WorkerContext {
                model: state.args.model.clone(),
                text_models: state.args.text_models.clone(),
                jobs: state.args.jobs.clone(),
                store: state.args.store.clone(),
                media: state.args.media.clone(),
                data_dir: state.args.data_dir.clone(),
            };
            let me = myself.clone();
            tokio::spawn(async move {
                ctx.run(*task).await;
                let _ = me.cast(AsrMsg::WorkerFree);
            });
        }
        state.args.queue_gauge.store(state.queue.len(), Ordering::Relaxed);
        Ok(())
    }
}

struct WorkerContext {
    model: Arc<SpeechModel>,
    text_models: TranslationModels,
    jobs: Jobs,
    store: Arc<dyn EventStore>,
    media: MediaStore,
    data_dir: PathBuf,
}

impl WorkerContext {
    async fn run(self, task: AsrTask) {
        let AsrTask { job_id, kind, media_path, state, done } = task;
        let Some(submission) = state.submission.clone() else { return report(done) };
        if let TaskKind::Translate = kind {
            let work = TranslationWork {
                model: self.model,
                text_models: self.text_models,
                jobs: self.jobs,
                media: self.media,
                data_dir: self.data_dir,
            };
            return work.run(job_id, media_path, state, done).await;
        }
        if let Err(e) = self.jobs.execute(&job_id, JobCommand::StartTranscription { at_ms: now_ms() }).await {
            tracing::debug!(%job_id, error = %e, "recording transcription start");
        }
        let options = match self.options(&state).await {
            Ok(o) => o,
            Err(msg) => return fail_and_report(&self.jobs, done, msg),
        };
        let model = self.model.clone();
        let path = media_path.clone();
        let log_id = job_id.clone();
        tracing::info!(%job_id, "transcribing");
        let result = tokio::task::spawn_blocking(move || {
            let mut last_logged = -1i64;
            let engine = model.lease()?;
            engine.transcribe(&path, &options, &mut |p| {
                let pct = if p.total_s > 0.0 { (100.0 * p.done_s / p.total_s) as i64 } else { 0 };
                if pct / 10 != last_logged / 10 {
                    last_logged = pct;
                    tracing::info!(job_id = %log_id, progress = pct, "transcribing");
                }
            })
        })
        .await;
        let transcript = match result {
            Ok(Ok(t)) => t,
            Ok(Err(EngineError::NoSpeech)) => return fail_and_report(&self.jobs, done, "No speech found in the audio".into()),
            Ok(Err(e)) => return fail_and_report(&self.jobs, done, e.to_string()),
            Err(e) => return fail_and_report(&self.jobs, done, format!("Speech recognition failed unexpectedly: {e}")),
        };
        let document = to_document(&job_id, submission.source.filename(), &transcript);
        // Verbatim was asked of the engine (prompt); clean read removes what it kept anyway.
        let document = match submission.job_options.map(|o| o.transcription_style) {
            Some(TranscriptionStyle::Verbatim) => document,
            _ => clean_read(&document),
        };
        if document.segments.is_empty() {
            return fail_and_report(&self.jobs, done, "No speech found in the audio (only hesitation sounds)".into());
        }
        let words = document.segments.iter().map(|s| s.words.len() as u64).sum();
        let json = serde_json::to_vec(&document).expect("transcripts serialize");
        let path = match self.media.write_transcript(job_id.as_str(), &json).await {
            Ok(p) => p,
            Err(e) => return fail_and_report(&self.jobs, done, format!("Could not store the transcript: {e}")),
        };
        let detected_language = submission.language.is_auto().then(|| Language::from_whisper(&transcript.language)).flatten();
        let cmd = JobCommand::RecordTranscript { path: relative(&self.data_dir, &path), detected_language, words, at_ms: now_ms() };
        if let Err(e) = self.jobs.execute(&job_id, cmd).await {
            tracing::warn!(%job_id, error = %e, "recording transcript");
        }
        tracing::info!(%job_id, words, job_type = ?submission.job_type, "transcript ready");
        report(done);
    }

    /// Engine options for the job: its language (or detection among the spec's set) and its
    /// glossary's terms as hotwords.
    async fn options(&self, state: &JobState) -> Result<TranscribeOptions, String> {
        let submission = state.submission.as_ref().expect("checked by caller");
        let mut options = TranscribeOptions::default();
        options.task = Task::Transcribe;
        options.verbatim = submission.job_options.is_some_and(|o| o.transcription_style == TranscriptionStyle::Verbatim);
        if submission.language.is_auto() {
            options.language = None;
            options.detect_among = AUTO_DETECT.iter().map(|s| s.to_string()).collect();
        } else {
            match submission.language.whisper_code() {
                Some(code) => options.language = Some(code.to_owned()),
                None => {
                    return Err(format!(
                        "Automatic transcription is not available for {} ({}); order a manual (perfect) job instead",
                        submission.language.name(),
                        submission.language.code()
                    ));
                }
            }
        }
        if let Some(glossary_id) = &submission.glossary_id {
            let stream = glossary_stream(glossary_id);
            match command::load::<GlossaryAggregate>(self.store.as_ref(), &stream).await {
                Ok(loaded) => {
                    if let Some(g) = loaded.state.view() {
                        options.hotwords = g.names.iter().cloned().chain(g.items.iter().map(|i| i.name.clone())).collect();
                    }
                }
                Err(e) => tracing::warn!(%glossary_id, error = %e, "glossary unreadable; transcribing without it"),
            }
        }
        Ok(options)
    }
}

/// The engine's transcript as the export document: one speaker until diarization exists, one
/// segment per recognised segment, every word `pristine` (untouched since the engine made it).
pub fn to_document(job_id: &JobId, filename: &str, t: &Transcript) -> doc::Transcript {
    let speaker = doc::Speaker { spkid: "spk1".into(), name: "Speaker 1".into() };
    let segments = t
        .segments
        .iter()
        .filter(|s| !s.words.is_empty())
        .map(|s| doc::Segment {
            speaker: speaker.spkid.clone(),
            words: s
                .words
                .iter()
                .map(|w| doc::Word {
                    start: round_ms(w.start),
                    end: round_ms(w.end.max(w.start)),
                    text: w.text.trim().to_owned(),
                    conf: f64::from(w.probability),
                    pristine: true,
                })
                .filter(|w| !w.text.is_empty())
                .collect(),
        })
        .collect();
    doc::Transcript {
        id: job_id.as_str().to_owned(),
        record_id: job_id.as_str().to_owned(),
        filename: filename.to_owned(),
        start_time_offset: 0.0,
        speakers: vec![speaker],
        segments,
        highlights: Vec::new(),
    }
}

fn round_ms(seconds: f64) -> f64 {
    (seconds * 1000.0).round() / 1000.0
}
