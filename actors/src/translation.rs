//! The translation stage of direct translatedSubtitles jobs: from the job's transcript (and its
//! media) to the translated document its exports are made from.
//!
//! - Into English: an English transcript is already it; other speech is translated by Whisper
//!   itself (its `translate` task on the media, the model the transcript came from), and each of
//!   its sentences laid over the span it was spoken in (Whisper's word times for a translation
//!   are not the times those words were said).
//! - Into another language: the English text (the transcript, or Whisper's translation) is cut
//!   into sentences, each translated by the English→target Bergamot model of the models folder,
//!   and laid over the time span its source sentence was spoken in (`scribe_domain::translation`).
//!
//! It runs on the ASR pool's workers: Whisper's pass is as heavy as a transcription. The outcome
//! is recorded like every stage's: `RecordTranslation` (the job then completes), or `Fail` with a
//! sentence saying what went wrong.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use scribe_domain::ids::JobId;
use scribe_domain::job::{JobCommand, JobRefusal, JobState};
use scribe_domain::languages::Language;
use scribe_domain::speakers::speakers_like;
use scribe_domain::style::clean_read;
use scribe_domain::transcript::Transcript;
use scribe_domain::translation::{sentences, translated_document};
use scribe_translate::TranslationModels;
use scribe_whisper::engine::{EngineError, Task, TranscribeOptions};

use crate::clock::now_ms;
use crate::command::CommandError;
use crate::engine_document::to_document;
use crate::jobs::Jobs;
use crate::media::{MediaStore, relative};
use crate::speech_model::SpeechModel;
use crate::worker::{StageDone, fail_and_report, report};

/// What the translation stage works with.
pub struct TranslationWork {
    pub model: Arc<SpeechModel>,
    pub text_models: TranslationModels,
    pub jobs: Jobs,
    pub media: MediaStore,
    pub data_dir: PathBuf,
    /// Set when the job is deleted while it is translated.
    pub cancel: Arc<AtomicBool>,
}

impl TranslationWork {
    /// Makes, stores and records the job's translated document; fails the job with a reason
    /// when it cannot. Runs in the job's span (the ASR worker's task).
    pub async fn run(self, job_id: JobId, media_path: PathBuf, state: JobState, done: StageDone) {
        let translated = self.translate(&job_id, &media_path, &state).await;
        if self.cancel.load(Ordering::Relaxed) {
            tracing::info!("translation stopped: the job was deleted");
            self.media.remove_files_of_deleted(job_id.as_str()).await;
            return report(done);
        }
        match translated {
            Ok(document) => {
                let json = serde_json::to_vec(&document).expect("documents serialize");
                let path = match self.media.write_translation(job_id.as_str(), &json).await {
                    Ok(p) => p,
                    Err(e) => {
                        return fail_and_report(
                            &self.jobs,
                            done,
                            format!("Could not store the translated subtitles: {e}"),
                        );
                    }
                };
                let cmd = JobCommand::RecordTranslation { path: relative(&self.data_dir, &path), at_ms: now_ms() };
                match self.jobs.execute(&job_id, cmd).await {
                    Ok(_) => {}
                    Err(CommandError::Refused(JobRefusal::Deleted)) => {
                        self.media.remove_files_of_deleted(job_id.as_str()).await;
                        return report(done);
                    }
                    Err(e) => tracing::warn!(error = %e, "recording the translation"),
                }
                tracing::info!("translated subtitles ready");
                report(done);
            }
            Err(msg) => fail_and_report(&self.jobs, done, msg),
        }
    }

    async fn translate(&self, job_id: &JobId, media_path: &Path, state: &JobState) -> Result<Transcript, String> {
        let submission = state.submission.as_ref().ok_or("the job was never submitted")?;
        let target = submission.target_language.ok_or("a translatedSubtitles job without targetLanguage")?.code();
        let spoken = state.transcript.as_ref().ok_or("the job has no transcript to translate")?.language;
        let transcript = self.read_transcript(job_id).await?;
        let english = match spoken.whisper_code() {
            // English into English: the transcript itself, with the times its words were spoken at.
            Some("en") if target == "en" => return Ok(transcript),
            Some("en") => transcript,
            Some(code) => {
                tracing::info!(from = code, "translating the speech into English (Whisper)");
                let filename = submission.source.filename().to_owned();
                let english = self.whisper_translate(media_path, code).await?;
                // The transcript was diarized; the translation's words take its speakers by time.
                speakers_like(
                    &clean_read(
                        &to_document(job_id, &filename, &english),
                        Language::from_whisper("en").expect("English is a language"),
                    ),
                    &transcript,
                )
            }
            None => {
                return Err(format!(
                    "Automatic translation is not available from {} ({})",
                    spoken.name(),
                    spoken.code()
                ));
            }
        };
        let sentences = sentences(&english);
        let texts: Vec<String> = if target == "en" {
            sentences.iter().map(|s| s.text.clone()).collect()
        } else {
            tracing::info!(sentences = sentences.len(), to = target, "translating the text");
            let to_translate: Vec<String> = sentences.iter().map(|s| s.text.clone()).collect();
            let models = self.text_models.clone();
            let span = tracing::Span::current();
            tokio::task::spawn_blocking(move || span.in_scope(|| models.translate(target, to_translate)))
                .await
                .map_err(|e| format!("Translation into '{target}' failed unexpectedly: {e}"))?
                .map_err(|e| format!("Machine translation into '{target}' failed: {e}"))?
        };
        let document = translated_document(&english, &sentences, &texts);
        if document.segments.is_empty() {
            return Err(format!("The translation into '{target}' came out empty"));
        }
        Ok(document)
    }

    async fn read_transcript(&self, job_id: &JobId) -> Result<Transcript, String> {
        let bytes = self
            .media
            .read_transcript(job_id.as_str())
            .await
            .map_err(|e| format!("Could not read the transcript to translate: {e}"))?
            .ok_or("The transcript to translate is missing")?;
        serde_json::from_slice(&bytes).map_err(|e| format!("The transcript to translate is unreadable: {e}"))
    }

    /// Whisper's translation of the media's speech (in `whisper_language`) into English.
    async fn whisper_translate(
        &self,
        media_path: &Path,
        whisper_language: &str,
    ) -> Result<scribe_whisper::engine::Transcript, String> {
        let options = TranscribeOptions {
            language: Some(whisper_language.to_owned()),
            task: Task::Translate,
            cancel: Some(self.cancel.clone()),
            ..TranscribeOptions::default()
        };
        let model = self.model.clone();
        let path = media_path.to_owned();
        let span = tracing::Span::current();
        let result = tokio::task::spawn_blocking(move || {
            span.in_scope(|| {
                let engine = model.lease()?;
                engine.transcribe(&path, &options, &mut |p| {
                    tracing::debug!(done_s = p.done_s, total_s = p.total_s, "translating speech");
                })
            })
        })
        .await;
        match result {
            Ok(Ok(t)) => Ok(t),
            Ok(Err(EngineError::NoSpeech)) => Err("No speech found in the audio to translate".into()),
            Ok(Err(e)) => Err(format!("Translating the speech into English failed: {e}")),
            Err(e) => Err(format!("Translating the speech into English failed unexpectedly: {e}")),
        }
    }
}
