//! The ASR actor: a bounded pool that runs speech recognition for direct jobs (and the draft of
//! manual jobs) with the burn Whisper engine, writes the transcript file and records the outcome.
//!
//! Recognition is CPU-bound and already uses every core, so the pool runs `workers` tasks at a
//! time (default 1) on blocking threads and queues the rest; the queue length is published in a
//! gauge for logs and `/metrics`. The queue is shared fairly between accounts ([`FairQueue`]):
//! when a worker frees, the next task comes from the account served longest ago, so one
//! account's long line of uploads does not make every other account wait behind all of it.
//! A job deleted while it waits leaves the queue; one deleted while it is recognised has its
//! recognition stopped (the engine looks at a cancel flag between windows) and nothing it wrote
//! stays on disk; so is the recognition of a job failed from outside (an OpenAI-door client
//! that went away).
//!
//! A job may have chosen its speech model and decoding (`DecodingChoices`, from the OpenAI
//! door): the worker runs that model with those choices, writes what the decoder reported of each
//! segment beside the transcript, and hands the text of each window to the recognition feed
//! while someone watches the job (a streamed answer).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use ractor::{Actor, ActorProcessingErr, ActorRef};
use scribe_domain::decoding::{DecodedSegment, DecodingRecord, SpeechTask};
use scribe_domain::glossary::GlossaryAggregate;
use scribe_domain::ids::{JobId, UserName, glossary_stream};
use scribe_domain::job::progress::{percent_of, step_of};
use scribe_domain::job::{JobCommand, JobRefusal, JobState, Submission};
use scribe_domain::kinds::TranscriptionStyle;
use scribe_domain::languages::Language;
use scribe_domain::style::clean_read;
use scribe_eventstore::EventStore;
use scribe_translate::TranslationModels;
use scribe_whisper::engine::{EngineError, Task, TranscribeOptions, Transcript};
use scribe_whisper::vad::VadParams;

use tracing::Instrument;

use crate::clock::now_ms;
use crate::command::{self, CommandError};
use crate::engine_document::to_document;
use crate::fair_queue::FairQueue;
use crate::jobs::{Jobs, job_span};
use crate::media::{MediaStore, relative};
use crate::recognition_feed::RecognitionFeed;
use crate::speech_model::{SpeechModel, SpeechModels};
use crate::translation::TranslationWork;
use crate::worker::{StageDone, fail_and_report, report};

/// Languages `auto` may detect: every Whisper language the spec's table has.
pub use scribe_domain::languages::AUTO_DETECT_WHISPER as AUTO_DETECT;

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
    /// The job was deleted: take it out of the queue, or stop its recognition.
    Cancel(JobId),
    /// A worker finished a task of this account; start the next task.
    WorkerFree {
        owner: Option<UserName>,
        job_id: JobId,
    },
}

pub struct AsrActor;

#[derive(Clone)]
pub struct AsrArgs {
    /// The installed speech models; a job uses the one it chose, else the default.
    pub models: Arc<SpeechModels>,
    /// Where recognised text goes as it is made, for whoever watches the job.
    pub feed: RecognitionFeed,
    /// English→xx text models, for translatedSubtitles into languages other than English.
    pub text_models: TranslationModels,
    pub jobs: Jobs,
    pub store: Arc<dyn EventStore>,
    pub media: MediaStore,
    pub data_dir: PathBuf,
    pub workers: usize,
    /// Tasks waiting for a worker.
    pub queue_gauge: Arc<AtomicUsize>,
    /// The operator's default for jobs that leave `speakerChannels` out (`--speaker-channels`).
    pub speaker_channels: bool,
}

pub struct AsrState {
    args: AsrArgs,
    /// Tasks waiting per account, and how many each runs.
    queue: FairQueue<Option<UserName>, Box<AsrTask>>,
    /// The cancel flag of every running task.
    running: HashMap<JobId, Arc<AtomicBool>>,
}

impl Actor for AsrActor {
    type Msg = AsrMsg;
    type State = AsrState;
    type Arguments = AsrArgs;

    async fn pre_start(&self, _: ActorRef<AsrMsg>, args: AsrArgs) -> Result<AsrState, ActorProcessingErr> {
        Ok(AsrState { args, queue: FairQueue::new(usize::MAX), running: HashMap::new() })
    }

    async fn handle(
        &self,
        myself: ActorRef<AsrMsg>,
        msg: AsrMsg,
        state: &mut AsrState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            AsrMsg::Enqueue(task) => {
                let owner = task.state.submission.as_ref().map(|s| s.owner.clone());
                let span = task.done.span();
                state.queue.push(owner, task);
                span.in_scope(|| {
                    tracing::info!(queue = state.queue.waiting(), busy = state.queue.running(), "ASR task queued")
                });
            }
            AsrMsg::Cancel(job_id) => {
                let _in_job = job_span(&job_id).entered();
                if let Some(cancel) = state.running.get(&job_id) {
                    tracing::info!("the job was deleted: stopping its recognition");
                    cancel.store(true, Ordering::Relaxed);
                }
                for task in state.queue.remove_waiting(|t| t.job_id == job_id) {
                    tracing::info!("the job was deleted: taken out of the recognition queue");
                    report(task.done);
                }
            }
            AsrMsg::WorkerFree { owner, job_id } => {
                state.queue.finished(&owner);
                state.running.remove(&job_id);
            }
        }
        while state.queue.running() < state.args.workers.max(1) {
            let Some((owner, task)) = state.queue.start_next() else { break };
            let cancel = Arc::new(AtomicBool::new(false));
            state.running.insert(task.job_id.clone(), cancel.clone());
            let ctx = WorkerContext {
                models: state.args.models.clone(),
                feed: state.args.feed.clone(),
                text_models: state.args.text_models.clone(),
                jobs: state.args.jobs.clone(),
                store: state.args.store.clone(),
                media: state.args.media.clone(),
                data_dir: state.args.data_dir.clone(),
                speaker_channels: state.args.speaker_channels,
                cancel,
            };
            let me = myself.clone();
            let span = task.done.span();
            tokio::spawn(
                async move {
                    let job_id = task.job_id.clone();
                    ctx.run(*task).await;
                    let _ = me.cast(AsrMsg::WorkerFree { owner, job_id });
                }
                .instrument(span),
            );
        }
        state.args.queue_gauge.store(state.queue.waiting(), Ordering::Relaxed);
        Ok(())
    }
}

struct WorkerContext {
    models: Arc<SpeechModels>,
    feed: RecognitionFeed,
    text_models: TranslationModels,
    jobs: Jobs,
    store: Arc<dyn EventStore>,
    media: MediaStore,
    data_dir: PathBuf,
    /// The operator's default for jobs that leave `speakerChannels` out.
    speaker_channels: bool,
    /// Set when the job is deleted while it is worked on.
    cancel: Arc<AtomicBool>,
}

impl WorkerContext {
    async fn run(self, task: AsrTask) {
        let AsrTask { job_id, kind, media_path, state, done } = task;
        let Some(submission) = state.submission.clone() else { return report(done) };
        if let TaskKind::Translate = kind {
            let work = TranslationWork {
                model: self.models.default_model().clone(),
                text_models: self.text_models,
                jobs: self.jobs,
                media: self.media,
                data_dir: self.data_dir,
                cancel: self.cancel,
            };
            return work.run(job_id, media_path, state, done).await;
        }
        // The attempt this run records its progress under (none when its start was not recorded).
        let mut attempt = None;
        match self.jobs.execute(&job_id, JobCommand::StartTranscription { at_ms: now_ms() }).await {
            Ok(started) => attempt = Some(started.state.transcription_attempts),
            Err(CommandError::Refused(JobRefusal::Deleted)) => return report(done),
            // Ended meanwhile (an upload longer than the server accepts fails in the append
            // that records it, which the pipeline may read after it dispatched the stage).
            Err(CommandError::Refused(JobRefusal::Finished(status))) => {
                tracing::debug!(?status, "not transcribing: the job has ended");
                return report(done);
            }
            Err(e) => tracing::debug!(error = %e, "recording transcription start"),
        }
        let model = match self.model_of(&state) {
            Ok(m) => m,
            Err(msg) => return fail_and_report(&self.jobs, done, msg),
        };
        let mut options = match self.options(&state).await {
            Ok(o) => o,
            Err(msg) => return fail_and_report(&self.jobs, done, msg),
        };
        options.cancel = Some(self.cancel.clone());
        let path = media_path.clone();
        tracing::info!("transcribing");
        let span = tracing::Span::current();
        // Someone waits for the text as it is recognised (a streamed OpenAI answer).
        let watcher = self.feed.is_watched(&job_id).then(|| Watcher {
            feed: self.feed.clone(),
            job_id: job_id.clone(),
            language: written_language_before(&submission, options.language.as_deref()),
            verbatim: options.verbatim,
        });
        let (progress, recorder) = progress_recorder(self.jobs.clone(), job_id.clone(), attempt);
        let result = tokio::task::spawn_blocking(move || {
            span.in_scope(|| {
                let mut last_step = 0;
                let engine = model.lease()?;
                engine.transcribe(&path, &options, &mut |p| {
                    let (done_ms, total_ms) =
                        ((p.done_s.max(0.0) * 1000.0) as u64, (p.total_s.max(0.0) * 1000.0) as u64);
                    let step = step_of(done_ms, total_ms);
                    if step > last_step {
                        last_step = step;
                        tracing::info!(progress = percent_of(done_ms, total_ms), "transcribing");
                        // Never blocks: the recorder task appends it (see `progress_recorder`).
                        if let Some(progress) = &progress {
                            let _ = progress.send((done_ms, total_ms, now_ms()));
                        }
                    }
                    if let Some(watcher) = &watcher {
                        watcher.publish(&p.segments);
                    }
                })
            })
        })
        .await;
        // The steps are in the log before the outcome, which would refuse them.
        if let Some(recorder) = recorder {
            let _ = recorder.await;
        }
        let transcript = match result {
            Ok(Ok(t)) => t,
            // Stopped by the cancel flag, whichever step the engine was in (an error while its
            // input was being cut short is the delete's doing, not the media's).
            Ok(Err(e)) if matches!(e, EngineError::Cancelled) || self.cancel.load(Ordering::Relaxed) => {
                tracing::info!("recognition stopped: the job was deleted or abandoned");
                self.media.remove_files_of_deleted(job_id.as_str()).await;
                return report(done);
            }
            Ok(Err(EngineError::NoSpeech)) => {
                return fail_and_report(&self.jobs, done, "No speech found in the audio".into());
            }
            Ok(Err(e)) => return fail_and_report(&self.jobs, done, e.to_string()),
            Err(e) => return fail_and_report(&self.jobs, done, format!("Speech recognition failed unexpectedly: {e}")),
        };
        let document = to_document(&job_id, submission.source.filename(), &transcript);
        // Speakers, by voice (numberOfSpeakers 1 skips this) or by channel; see `diarization`.
        let speaker_models = crate::diarization::SpeakerModels {
            dir: self.models.default_model().models_dir(),
            device: self.models.device(),
        };
        let document = match crate::diarization::label_speakers(
            speaker_models,
            media_path.clone(),
            submission.diarization(self.speaker_channels),
            document,
            self.cancel.clone(),
        )
        .await
        {
            Ok(Some(d)) => d,
            Ok(None) => {
                tracing::info!("recognition stopped: the job was deleted (before speaker diarization)");
                self.media.remove_files_of_deleted(job_id.as_str()).await;
                return report(done);
            }
            Err(msg) => return fail_and_report(&self.jobs, done, msg),
        };
        // Verbatim was asked of the engine (prompt); clean read removes what it kept anyway.
        let document = match submission.job_options.map(|o| o.transcription_style) {
            Some(TranscriptionStyle::Verbatim) => document,
            _ => clean_read(&document, written_language(&submission, &transcript)),
        };
        if document.segments.is_empty() {
            return fail_and_report(&self.jobs, done, "No speech found in the audio (only hesitation sounds)".into());
        }
        // What the decoder said of each segment, for the answers that show it (OpenAI's
        // verbose_json); written before the transcript is recorded, so a recorded transcript
        // always has it.
        if submission.decoding.is_some() {
            let record = decoding_record(&transcript);
            let json = serde_json::to_vec(&record).expect("records serialize");
            if let Err(e) = self.media.write_decoding(job_id.as_str(), &json).await {
                return fail_and_report(&self.jobs, done, format!("Could not store the decoding record: {e}"));
            }
        }
        let words = document.segments.iter().map(|s| s.words.len() as u64).sum();
        let json = serde_json::to_vec(&document).expect("transcripts serialize");
        let path = match self.media.write_transcript(job_id.as_str(), &json).await {
            Ok(p) => p,
            Err(e) => return fail_and_report(&self.jobs, done, format!("Could not store the transcript: {e}")),
        };
        let detected_language =
            submission.language.is_auto().then(|| Language::from_whisper(&transcript.language)).flatten();
        let cmd = JobCommand::RecordTranscript {
            path: relative(&self.data_dir, &path),
            detected_language,
            words,
            at_ms: now_ms(),
        };
        match self.jobs.execute(&job_id, cmd).await {
            Ok(_) => {}
            // Deleted after recognition passed its last cancel check: the transcript must not stay.
            Err(CommandError::Refused(JobRefusal::Deleted)) => {
                tracing::info!("the job was deleted while its transcript was made; the transcript is removed");
                self.media.remove_files_of_deleted(job_id.as_str()).await;
                return report(done);
            }
            Err(e) => tracing::warn!(error = %e, "recording transcript"),
        }
        tracing::info!(words, job_type = ?submission.job_type, "transcript ready");
        report(done);
    }

    /// The speech model the job chose (the OpenAI door's `model`), else the default.
    fn model_of(&self, state: &JobState) -> Result<Arc<SpeechModel>, String> {
        let chosen = state.submission.as_ref().and_then(|s| s.decoding.as_ref()).and_then(|d| d.model.as_deref());
        match chosen {
            None => Ok(self.models.default_model().clone()),
            Some(name) => self.models.get(name).map(|(_, model)| model.clone()).ok_or_else(|| {
                format!("The speech model {name} the job asked for is no longer installed on this server")
            }),
        }
    }

    /// Engine options for the job: its language (or detection among the spec's set, or among
    /// the languages the client named), its glossary's terms and keywords as hotwords, and what
    /// else its client chose (task, prompt).
    async fn options(&self, state: &JobState) -> Result<TranscribeOptions, String> {
        let submission = state.submission.as_ref().expect("checked by caller");
        let choices = submission.decoding.clone().unwrap_or_default();
        let mut options = TranscribeOptions {
            task: match choices.task {
                SpeechTask::Transcribe => Task::Transcribe,
                SpeechTask::Translate => Task::Translate,
            },
            verbatim: submission.job_options.is_some_and(|o| o.transcription_style == TranscriptionStyle::Verbatim),
            initial_prompt: choices.prompt.clone(),
            hotwords: choices.keywords.clone(),
            temperature: choices.temperature,
            ..TranscribeOptions::default()
        };
        if let Some(vad) = choices.vad {
            let engine = VadParams::default();
            options.vad = VadParams {
                threshold: vad.threshold.unwrap_or(engine.threshold),
                speech_pad_ms: vad.padding_ms.unwrap_or(engine.speech_pad_ms),
                min_silence_ms: vad.min_silence_ms.unwrap_or(engine.min_silence_ms),
                ..engine
            };
        }
        if submission.language.is_auto() {
            options.language = None;
            options.detect_among = if choices.detect_among.is_empty() {
                AUTO_DETECT.iter().map(|s| s.to_string()).collect()
            } else {
                choices.detect_among.clone()
            };
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
                        options.hotwords.extend(g.hotwords());
                    }
                }
                // Transcribing without the glossary the client asked for would silently give a
                // worse transcript: the job fails and says why (and is refunded).
                Err(e) => {
                    tracing::error!(%glossary_id, error = %e, "glossary unreadable; failing the job");
                    return Err(format!(
                        "The glossary {glossary_id} could not be read ({e}); the job was not transcribed without it"
                    ));
                }
            }
        }
        Ok(options)
    }
}

/// A progress step of the running recognition: media done and total (ms), and when.
type ProgressStep = (u64, u64, u64);

/// Records the recognition's progress steps in the job's log from an async task, so that the
/// engine's callback (on a blocking thread) only hands each step to a channel and never waits
/// for the store. The task ends when the sender is dropped (recognition ended). Refusals are
/// expected and dropped quietly (the job ended or was deleted meanwhile); other failures are
/// logged, and recognition goes on either way. `None` without an attempt to record under.
fn progress_recorder(
    jobs: Jobs,
    job_id: JobId,
    attempt: Option<u32>,
) -> (Option<tokio::sync::mpsc::UnboundedSender<ProgressStep>>, Option<tokio::task::JoinHandle<()>>) {
    let Some(attempt) = attempt else { return (None, None) };
    let (sender, mut steps) = tokio::sync::mpsc::unbounded_channel::<ProgressStep>();
    let task = tokio::spawn(
        async move {
            while let Some((done_ms, total_ms, at_ms)) = steps.recv().await {
                let cmd = JobCommand::RecordTranscriptionProgress { attempt, done_ms, total_ms, at_ms };
                match jobs.execute(&job_id, cmd).await {
                    Ok(_) => {}
                    Err(CommandError::Refused(refusal)) => tracing::debug!(%refusal, "progress not recorded"),
                    Err(e) => tracing::warn!(error = %e, "recording transcription progress"),
                }
            }
        }
        .instrument(tracing::Span::current()),
    );
    (Some(sender), Some(task))
}

/// The language the transcript is written in: English for a translation, else the detected or
/// requested one.
fn written_language(submission: &Submission, transcript: &Transcript) -> Language {
    if submission.decoding.as_ref().is_some_and(|d| d.task == SpeechTask::Translate) {
        return Language::from_whisper("en").expect("English is in the table");
    }
    Language::from_whisper(&transcript.language).unwrap_or(submission.language)
}

/// What the decoder reported of each segment of the engine's transcript.
fn decoding_record(transcript: &Transcript) -> DecodingRecord {
    DecodingRecord {
        language: transcript.language.clone(),
        duration_s: transcript.duration_s,
        segments: transcript
            .segments
            .iter()
            .map(|s| DecodedSegment {
                seek: s.seek as u64,
                start: s.start,
                end: s.end,
                tokens: s.tokens.clone(),
                temperature: s.temperature,
                avg_logprob: s.avg_logprob,
                compression_ratio: s.compression_ratio,
                no_speech_prob: s.no_speech_prob,
            })
            .collect(),
    }
}

/// The language a transcript will be written in, as known before recognition: English for a
/// translation, else the given one (a detected language is not known yet).
fn written_language_before(submission: &Submission, given: Option<&str>) -> Language {
    if submission.decoding.as_ref().is_some_and(|d| d.task == SpeechTask::Translate) {
        return Language::from_whisper("en").expect("English is in the table");
    }
    given.and_then(Language::from_whisper).unwrap_or(submission.language)
}

/// Hands the text of each recognised segment to the recognition feed, cleaned as the transcript
/// will be.
struct Watcher {
    feed: RecognitionFeed,
    job_id: JobId,
    language: Language,
    verbatim: bool,
}

impl Watcher {
    fn publish(&self, segments: &[scribe_whisper::engine::Segment]) {
        if segments.is_empty() {
            return;
        }
        let piece = Transcript {
            language: String::new(),
            language_probability: 1.0,
            duration_s: 0.0,
            segments: segments.to_vec(),
        };
        let document = to_document(&self.job_id, "", &piece);
        let document = if self.verbatim { document } else { clean_read(&document, self.language) };
        let text = scribe_domain::openai::answer::transcript_text(&document);
        if !text.is_empty() {
            self.feed.publish(&self.job_id, text);
        }
    }
}
