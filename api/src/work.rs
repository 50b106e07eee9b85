//! The work API (`/api/work/...`): how transcribers and translators do the human part of manual
//! (`perfect`) jobs. A staff key sees the open tasks of its role and languages, claims one (a
//! lease), reads its document with the glossary, instructions, media and (for translations) the
//! source cues, saves revisions, and submits or releases it. Every step is an event on the job's
//! stream, decided by the domain (`scribe_domain::job`), so `scribe replay` shows who did what.
//!
//! Documents are files: a saved revision is validated (`scribe_domain::editing`), written to a
//! new file in the job's `work` directory and fsynced before the `DraftSaved` event names it.
//! Submitting hands in the last revision: the `TaskSubmitted` event names its file, which becomes
//! the job's transcript (or its translation) and is what the exports read; nothing is copied.
//!
//! Who may work on a task is the domain's rule (`JobState::task_for`, `task_held_by`), asked
//! here before a document is shown or written, and worded once (the `JobRefusal`).

use std::path::PathBuf;
use std::sync::Arc;

use poem::http::StatusCode;
use poem::web::Data;
use poem::{IntoResponse, Request, Response, handler};
use poem_openapi::param::Path;
use poem_openapi::payload::Json;
use poem_openapi::{Enum, Object, OpenApi};
use scribe_actors::clock::now_ms;
use scribe_domain::editing;
use scribe_domain::ids::{GlossaryId, JobId};
use scribe_domain::job::task::{Worker, parse_task_id};
use scribe_domain::job::{JobCommand, JobRefusal, JobState, TaskView};
use scribe_domain::kinds::{Role, TaskKind};
use scribe_domain::transcript::{Highlight, Segment, Speaker, Transcript, Word};

use crate::ApiTags;
use crate::auth::{Caller, StaffKeyAuth};
use crate::error::{ApiError, job_error};
use crate::exports::document::{ExportHighlight, ExportSpeaker};
use crate::model::{Glossary, Message, TranscriptionStyle, TranscriptionType as ApiTranscriptionType};
use crate::signed_links::SignedLinks;
use crate::state::ApiState;
use crate::strict_json::StrictJson;

/// Path template of the document upload (its body cap is larger than other JSON bodies).
pub const DOCUMENT_ROUTE: &str = "/api/work/tasks/{taskId}/document";
/// Largest document body accepted (a few hours of speech, word by word).
pub const MAX_DOCUMENT_BYTES: u64 = 32 << 20;

/// What a task asks for.
#[derive(Enum, Debug, Clone, Copy, PartialEq, Eq)]
#[oai(rename_all = "lowercase")]
pub enum WorkKind {
    /// Correct the machine draft of the speech.
    Transcribe,
    /// Translate the source cues into the target language.
    Translate,
}

/// An open task, as the queue shows it to a staff member.
#[derive(Object, Debug, Clone, PartialEq)]
#[oai(rename_all = "camelCase")]
pub struct WorkTask {
    /// Identifier of the task (opaque).
    pub task_id: String,
    pub job_id: String,
    pub kind: WorkKind,
    /// The language of the speech.
    pub language: String,
    /// The language to translate into (translate tasks only).
    #[oai(skip_serializing_if_is_none)]
    pub target_language: Option<String>,
    pub nr_audio_seconds: u64,
    /// When the work is due, milliseconds since the Unix epoch: the job's creation plus its
    /// turnaroundTime in calendar days (24-hour periods, not business days).
    pub deadline: u64,
    /// The deadline has passed.
    pub overdue: bool,
    /// You hold the lease on this task.
    pub claimed_by_you: bool,
    /// When your lease ends (milliseconds since the Unix epoch), if you hold it.
    #[oai(skip_serializing_if_is_none)]
    pub lease_until: Option<u64>,
    /// Someone else holds the lease on this task now (you cannot claim it until it ends).
    pub held_by_other: bool,
    /// The last saved revision of the document (0: none yet).
    pub revision: u32,
    pub transcription_type: ApiTranscriptionType,
    pub transcription_style: TranscriptionStyle,
    /// The customer's notes; null when none.
    pub notes: Option<String>,
    /// The name of the job's glossary, if it has one.
    #[oai(skip_serializing_if_is_none)]
    pub glossary_name: Option<String>,
}

/// What the customer asked for: `transcriptionStyle` is `cleanread` (drop fillers, stutters,
/// false starts) or `verbatim` (keep them).
#[derive(Object, Debug, Clone, PartialEq)]
#[oai(rename_all = "camelCase")]
pub struct Instructions {
    pub transcription_style: TranscriptionStyle,
    pub notes: Option<String>,
    /// Speakers the customer announced (0: unknown).
    pub number_of_speakers: u8,
}

/// One sentence of the source a translator translates (cut at sentence ends, speaker changes
/// and long pauses, as machine translation cuts it).
#[derive(Object, Debug, Clone, PartialEq)]
#[oai(rename_all = "camelCase")]
pub struct SourceCue {
    /// Seconds from the start of the media.
    pub start: f64,
    pub end: f64,
    /// The `spkid` of the speaker.
    pub speaker: String,
    /// The speaker's name in the source document (`Speaker n` when it has none).
    pub speaker_name: String,
    pub text: String,
}

/// A task with everything needed to work on it.
#[derive(Object, Debug, Clone, PartialEq)]
#[oai(rename_all = "camelCase")]
pub struct WorkTaskDetail {
    pub task: WorkTask,
    /// The current document: the last saved revision, or the machine draft (with word times,
    /// confidences and speakers); null for a translation nobody has saved yet.
    pub document: Option<WorkDocument>,
    /// The job's glossary: names and terms to spell as given.
    #[oai(skip_serializing_if_is_none)]
    pub glossary: Option<Glossary>,
    pub instructions: Instructions,
    /// A signed URL of the media (answers HTTP Range requests, for an audio player).
    pub media_url: String,
    /// Translate tasks: the source subtitles, with their times and speakers.
    #[oai(skip_serializing_if_is_none)]
    pub source_cues: Option<Vec<SourceCue>>,
}

/// A document being worked on: the export-json shape. Sent back with `PUT .../document`, where
/// a word whose text contains spaces is split into timed words, and a word stays `pristine` only
/// if the machine draft has it unchanged.
#[derive(Object, serde::Deserialize, Debug, Clone, PartialEq)]
#[oai(rename_all = "camelCase")]
#[serde(rename_all = "camelCase")]
pub struct WorkDocument {
    pub speakers: Vec<ExportSpeaker>,
    /// Speaker turns in time order.
    pub segments: Vec<WorkSegment>,
    #[oai(default)]
    #[serde(default)]
    pub highlights: Vec<ExportHighlight>,
}

#[derive(Object, serde::Deserialize, Debug, Clone, PartialEq)]
pub struct WorkSegment {
    /// The `spkid` of the speaker (declared in `speakers`).
    pub speaker: String,
    pub words: Vec<WorkWord>,
}

#[derive(Object, serde::Deserialize, Debug, Clone, PartialEq)]
pub struct WorkWord {
    /// Seconds from the start of the media.
    pub start: f64,
    pub end: f64,
    pub text: String,
    /// Confidence, 0 to 1 (default 1: a person typed it).
    #[oai(default = "one")]
    #[serde(default = "one")]
    pub conf: f64,
    /// Untouched machine output; checked by the service against the draft.
    #[oai(default = "yes")]
    #[serde(default = "yes")]
    pub pristine: bool,
}

fn one() -> f64 {
    1.0
}

fn yes() -> bool {
    true
}

/// The answer to a save.
#[derive(Object, Debug, Clone, PartialEq)]
#[oai(rename_all = "camelCase")]
pub struct SavedRevision {
    pub task_id: String,
    /// The revision number just stored.
    pub revision: u32,
    pub words: u64,
    /// Your lease now ends at this time (milliseconds since the Unix epoch).
    pub lease_until: u64,
}

pub struct WorkApi;

#[OpenApi(tag = "ApiTags::Work", prefix_path = "/work")]
impl WorkApi {
    /// The tasks you can work on: open tasks of your role (and languages) that nobody else
    /// holds, and the ones you hold, soonest deadline first (a bare array).
    #[oai(path = "/tasks", method = "get", operation_id = "listTasks")]
    async fn list(&self, auth: StaffKeyAuth, state: Data<&Arc<ApiState>>) -> Result<Json<Vec<WorkTask>>, ApiError> {
        let caller = auth.0;
        let kind = kind_of(caller.role);
        let now = now_ms();
        let tasks = state.read.open_tasks(kind).map_err(|e| ApiError::internal("Listing tasks", &e))?;
        let mut visible = Vec::new();
        for t in tasks {
            let free_or_mine = t.holder_at(now).is_none_or(|h| *h == caller.user);
            if free_or_mine && scribe_domain::account::works_in(&caller.languages, t.work_language()) {
                visible.push(work_task(&state, &t, &caller, now)?);
            }
        }
        Ok(Json(visible))
    }

    /// Claims a task: you hold it for the lease time (2 hours by default), renewed by every
    /// save. 409 while someone else holds it; a lease that expired returns the task to the
    /// queue with its saved draft, and anyone of the role may claim it. Claiming a task you
    /// hold renews your lease.
    #[oai(path = "/tasks/:taskId/claim", method = "post", operation_id = "claimTask")]
    async fn claim(
        &self,
        auth: StaffKeyAuth,
        state: Data<&Arc<ApiState>>,
        /// The task's id.
        #[oai(name = "taskId")]
        task_id: Path<String>,
    ) -> Result<Json<WorkTask>, ApiError> {
        let caller = auth.0;
        let job_id = job_of(&task_id)?;
        let worker = worker(&caller);
        let lease_ms = state.settings.task_lease.as_millis() as u64;
        let cmd = JobCommand::ClaimTask { task_id: task_id.0.clone(), worker, lease_ms, at_ms: now_ms() };
        let executed = state.jobs.execute(&job_id, cmd).await.map_err(|e| task_error(&task_id, e))?;
        state.settle(executed.position).await;
        let view = task_view(&executed.state, &task_id)?;
        Ok(Json(work_task(&state, &view, &caller, now_ms())?))
    }

    /// A task with its current document, the job's glossary, the instructions, a signed media
    /// URL and, for translations, the source cues.
    #[oai(path = "/tasks/:taskId", method = "get", operation_id = "getTask")]
    async fn get(
        &self,
        auth: StaffKeyAuth,
        state: Data<&Arc<ApiState>>,
        links: Data<&Arc<SignedLinks>>,
        /// The task's id.
        #[oai(name = "taskId")]
        task_id: Path<String>,
    ) -> Result<Json<WorkTaskDetail>, ApiError> {
        let caller = auth.0;
        let (job, view) = open_task_for(&state, &caller, &task_id).await?;
        let now = now_ms();
        let document = current_document(&state, &job, &view).await?.map(WorkDocument::from);
        let source_cues = match view.kind {
            TaskKind::Transcribe => None,
            TaskKind::Translate => {
                let source = read_document(&state, job.translation_source_path()).await?.ok_or_else(|| {
                    ApiError::new(StatusCode::CONFLICT, "The source transcript of this translation is missing", None)
                })?;
                Some(
                    editing::source_cues(&source)
                        .into_iter()
                        .map(|c| SourceCue {
                            speaker_name: speaker_name(&source, &c.speaker),
                            text: c.text,
                            start: c.start,
                            end: c.end,
                            speaker: c.speaker,
                        })
                        .collect(),
                )
            }
        };
        let glossary = glossary_of(&state, view.glossary_id.as_ref())?.map(|r| r.glossary.into());
        let media_url = links.media_url(view.job_id.as_str(), state.settings.media_link_ttl).await?;
        Ok(Json(WorkTaskDetail {
            task: work_task(&state, &view, &caller, now)?,
            document,
            glossary,
            instructions: Instructions {
                transcription_style: view.transcription_style.into(),
                notes: view.notes.clone(),
                number_of_speakers: view.number_of_speakers,
            },
            media_url,
            source_cues,
        }))
    }

    /// Saves your progress as a new revision and renews your lease. The document is checked:
    /// at least one word, every word with text and times inside the media, words in time order,
    /// every segment's speaker declared in `speakers`; 400 names the place at fault
    /// (`document.segments[2].words[5].end`). 409 when you do not hold the task.
    #[oai(path = "/tasks/:taskId/document", method = "put", operation_id = "saveTaskDocument")]
    async fn save(
        &self,
        auth: StaffKeyAuth,
        state: Data<&Arc<ApiState>>,
        /// The task's id.
        #[oai(name = "taskId")]
        task_id: Path<String>,
        body: StrictJson<WorkDocument>,
    ) -> Result<Json<SavedRevision>, ApiError> {
        let caller = auth.0;
        let (job, view) = held_task(&state, &caller, &task_id).await?;
        let submission = job.submission.as_ref().expect("a task's job was submitted");
        let mut doc = body.0.into_transcript(submission.job_id.as_str(), submission.source.filename());
        let duration_s = job.duration_ms.map_or(job.nr_audio_seconds as f64, |ms| ms as f64 / 1000.0);
        editing::validate_document(&doc, duration_s)?;
        let base = match view.kind {
            TaskKind::Transcribe => read_document(&state, job.transcript.as_ref().map(|t| t.path.as_str())).await?,
            TaskKind::Translate => None,
        };
        doc = editing::prepare_saved(doc, machine_draft(&job, base.as_ref()));
        let words = editing::word_count(&doc);
        let json = scribe_domain::export::render_json(&doc);
        let path = state
            .media
            .write_work_document(view.job_id.as_str(), &view.task_id, json.as_bytes())
            .await
            .map_err(|e| ApiError::internal("Storing the document", &e))?;
        let lease_ms = state.settings.task_lease.as_millis() as u64;
        let relative = state.media.relative(&path);
        let cmd = JobCommand::SaveDraft {
            task_id: view.task_id.clone(),
            by: caller.user,
            path: relative,
            words,
            lease_ms,
            at_ms: now_ms(),
        };
        let executed = match state.jobs.execute(&view.job_id, cmd).await {
            Ok(executed) => executed,
            Err(e) => {
                state.media.discard(&path).await;
                return Err(task_error(&view.task_id, e));
            }
        };
        state.settle(executed.position).await;
        let task = executed.state.task(&view.task_id).expect("the task just saved");
        Ok(Json(SavedRevision {
            task_id: view.task_id,
            revision: task.revision.as_ref().map_or(0, |r| r.number),
            words,
            lease_until: task.lease.as_ref().map_or(0, |l| l.until_ms),
        }))
    }

    /// Hands in the task: its last saved revision (for a transcription never saved, the
    /// machine draft as it is). Submitting the last task of a job ends it `DONE` (the callback
    /// follows) and its exports show the people's document; a transcription ordered with
    /// translated subtitles opens the translation task instead. 409 when you do not hold the
    /// task, or when a translation has no saved document.
    #[oai(path = "/tasks/:taskId/submit", method = "post", operation_id = "submitTask")]
    async fn submit(
        &self,
        auth: StaffKeyAuth,
        state: Data<&Arc<ApiState>>,
        /// The task's id.
        #[oai(name = "taskId")]
        task_id: Path<String>,
    ) -> Result<Json<Message>, ApiError> {
        let caller = auth.0;
        let (_, view) = held_task(&state, &caller, &task_id).await?;
        // The event names the revision handed in; it is the job's document from then on.
        let cmd = JobCommand::SubmitTask { task_id: view.task_id.clone(), by: caller.user, at_ms: now_ms() };
        let executed = state.jobs.execute(&view.job_id, cmd).await.map_err(|e| task_error(&view.task_id, e))?;
        state.settle(executed.position).await;
        let what = if executed.state.finished.is_some() { "the job is done" } else { "the translation task is open" };
        Ok(Json(Message { message: format!("Task submitted; {what}") }))
    }

    /// Gives the task back to the queue, with its saved draft. 409 when you do not hold it.
    #[oai(path = "/tasks/:taskId/release", method = "post", operation_id = "releaseTask")]
    async fn release(
        &self,
        auth: StaffKeyAuth,
        state: Data<&Arc<ApiState>>,
        /// The task's id.
        #[oai(name = "taskId")]
        task_id: Path<String>,
    ) -> Result<Json<Message>, ApiError> {
        let caller = auth.0;
        let job_id = job_of(&task_id)?;
        let cmd = JobCommand::ReleaseTask { task_id: task_id.0.clone(), by: caller.user, at_ms: now_ms() };
        let executed = state.jobs.execute(&job_id, cmd).await.map_err(|e| task_error(&task_id, e))?;
        state.settle(executed.position).await;
        Ok(Json(Message::new("Task released")))
    }
}

/// `GET /api/work/media?jobId&expires&sig`: the media of a job that has tasks, for an audio
/// player, with HTTP Range support ([`crate::byte_ranges`]: RFC 9110 §14). The signature (from `GET /api/work/tasks/{taskId}`) is the
/// permission; 403 for a bad signature, 410 once expired or deleted.
#[handler]
pub async fn media(req: &Request, state: Data<&Arc<ApiState>>, links: Data<&Arc<SignedLinks>>) -> Response {
    match media_file(req, &state, &links).await {
        Ok(path) => crate::byte_ranges::serve(req.headers(), &path).await,
        Err(e) => e.into_response(),
    }
}

async fn media_file(req: &Request, state: &ApiState, links: &SignedLinks) -> Result<PathBuf, ApiError> {
    let query: std::collections::HashMap<String, String> =
        req.params().map_err(|e| ApiError::invalid_body(e.to_string()))?;
    let get =
        |name: &str| query.get(name).cloned().ok_or_else(|| ApiError::invalid(name, format!("{name} is required")));
    let job_id = get("jobId")?;
    let expires: u64 =
        get("expires")?.parse().map_err(|_| ApiError::invalid("expires", "expires must be Unix seconds"))?;
    let sig = get("sig")?;
    signed_media_file(state, links, &job_id, expires, &sig).await
}

/// The media file a signed media link opens (the audio player's, and its waveform's peaks):
/// 403 for a bad signature, 410 once expired or deleted, 404 for a job without media.
pub(crate) async fn signed_media_file(
    state: &ApiState,
    links: &SignedLinks,
    job_id: &str,
    expires: u64,
    sig: &str,
) -> Result<PathBuf, ApiError> {
    links.key().await?.verify_media(job_id, expires, sig, now_ms() / 1000)?;
    let job_id = JobId::parse(job_id)?;
    let (job, _) = state.jobs.state(&job_id).await.map_err(job_error)?;
    if job.deleted {
        return Err(ApiError::new(StatusCode::GONE, format!("Job {job_id} was deleted"), Some("jobId".into())));
    }
    let path = job
        .media_path()
        .ok_or_else(|| ApiError::new(StatusCode::NOT_FOUND, "This job has no media", Some("jobId".into())))?;
    Ok(state.data_dir.join(path))
}

/// The kind of task a staff role does.
fn kind_of(role: Role) -> TaskKind {
    match role {
        Role::Translator => TaskKind::Translate,
        _ => TaskKind::Transcribe,
    }
}

fn job_of(task_id: &str) -> Result<JobId, ApiError> {
    parse_task_id(task_id)
        .map(|(job, _)| job)
        .ok_or_else(|| ApiError::new(StatusCode::NOT_FOUND, format!("No task {task_id}"), Some("taskId".into())))
}

fn task_view(job: &JobState, task_id: &str) -> Result<TaskView, ApiError> {
    job.task_views().into_iter().find(|t| t.task_id == task_id).ok_or_else(|| {
        ApiError::new(StatusCode::CONFLICT, format!("Task {task_id} is no longer open"), Some("taskId".into()))
    })
}

/// The job and its open task `task_id`, if `caller` may work on it (the domain's
/// `JobState::task_for`: 404 unknown, 410 deleted, 409 already submitted, 403 another role's or
/// language's).
async fn open_task_for(state: &ApiState, caller: &Caller, task_id: &str) -> Result<(JobState, TaskView), ApiError> {
    let job_id = job_of(task_id)?;
    let (job, _) = state.jobs.state(&job_id).await.map_err(job_error)?;
    job.task_for(task_id, &worker(caller)).map_err(|refusal| task_refused(task_id, refusal))?;
    let view = task_view(&job, task_id)?;
    Ok((job, view))
}

/// As [`open_task_for`], and `caller` must hold the lease (the domain's
/// `JobState::task_held_by`: 409 otherwise).
async fn held_task(state: &ApiState, caller: &Caller, task_id: &str) -> Result<(JobState, TaskView), ApiError> {
    let (job, view) = open_task_for(state, caller, task_id).await?;
    job.task_held_by(task_id, &caller.user, now_ms()).map_err(|refusal| task_refused(task_id, refusal))?;
    Ok((job, view))
}

fn worker(caller: &Caller) -> Worker {
    Worker { user: caller.user.clone(), role: caller.role, languages: caller.languages.clone() }
}

/// The task's current document: its last revision, else the machine draft (transcriptions).
async fn current_document(state: &ApiState, job: &JobState, view: &TaskView) -> Result<Option<Transcript>, ApiError> {
    let task = job.task(&view.task_id).expect("an open task");
    let path = match (&task.revision, view.kind) {
        (Some(r), _) => Some(r.path.as_str()),
        (None, TaskKind::Transcribe) => job.transcript.as_ref().map(|t| t.path.as_str()),
        (None, TaskKind::Translate) => None,
    };
    read_document(state, path).await
}

/// The machine draft a transcription is compared with, while the job's transcript is still the
/// draft (it is replaced once people's work is published).
fn machine_draft<'a>(job: &JobState, base: Option<&'a Transcript>) -> Option<&'a Transcript> {
    base.filter(|_| job.transcript.as_ref().is_some_and(|t| t.draft))
}

async fn read_document(state: &ApiState, path: Option<&str>) -> Result<Option<Transcript>, ApiError> {
    let Some(path) = path else { return Ok(None) };
    let bytes =
        tokio::fs::read(state.data_dir.join(path)).await.map_err(|e| ApiError::internal("Reading the document", &e))?;
    serde_json::from_slice(&bytes).map(Some).map_err(|e| ApiError::internal("Reading the document", &e))
}

/// The glossary a job names, if it names one (from the read model).
pub(crate) fn glossary_of(
    state: &ApiState,
    id: Option<&GlossaryId>,
) -> Result<Option<scribe_projections::GlossaryRecord>, ApiError> {
    let Some(id) = id else { return Ok(None) };
    state.read.glossary(id).map_err(|e| ApiError::internal("Reading the glossary", &e))
}

fn work_task(state: &ApiState, t: &TaskView, caller: &Caller, now: u64) -> Result<WorkTask, ApiError> {
    let glossary_name = glossary_of(state, t.glossary_id.as_ref())?.map(|r| r.glossary.name);
    let holder = t.holder_at(now);
    let mine = holder == Some(&caller.user);
    Ok(WorkTask {
        task_id: t.task_id.clone(),
        job_id: t.job_id.to_string(),
        kind: match t.kind {
            TaskKind::Transcribe => WorkKind::Transcribe,
            TaskKind::Translate => WorkKind::Translate,
        },
        language: t.language.code().to_owned(),
        target_language: t.target_language.map(|l| l.code().to_owned()),
        nr_audio_seconds: t.nr_audio_seconds,
        deadline: t.deadline_ms,
        overdue: now >= t.deadline_ms,
        claimed_by_you: mine,
        lease_until: t.lease_until_ms.filter(|_| mine),
        held_by_other: holder.is_some() && !mine,
        revision: t.revision,
        transcription_type: t.transcription_type.into(),
        transcription_style: t.transcription_style.into(),
        notes: t.notes.clone(),
        glossary_name,
    })
}

/// The name `source` gives speaker `spkid`, else `Speaker n` (its number in the speaker list).
fn speaker_name(source: &Transcript, spkid: &str) -> String {
    source
        .speakers
        .iter()
        .find(|s| s.spkid == spkid && !s.name.trim().is_empty())
        .map_or_else(|| format!("Speaker {}", source.speaker_number(spkid)), |s| s.name.clone())
}

/// Refusals of task commands, and failures to record them.
fn task_error(task_id: &str, e: scribe_actors::command::CommandError<JobRefusal>) -> ApiError {
    match e {
        scribe_actors::command::CommandError::Refused(refusal) => task_refused(task_id, refusal),
        other => job_error(other),
    }
}

/// A refused task command (or the same rule asked before one) as the client sees it, naming
/// `taskId`: 404 no such task (a missing job is a missing task), 410 its job was deleted, 403
/// not this account's kind of work, 409 closed, held by someone else, not held, nothing to submit.
fn task_refused(task_id: &str, refusal: JobRefusal) -> ApiError {
    let field = || Some("taskId".to_owned());
    let refusal = match refusal {
        JobRefusal::NotFound => JobRefusal::NoSuchTask(task_id.to_owned()),
        other => other,
    };
    let status = match &refusal {
        JobRefusal::NoSuchTask(_) => StatusCode::NOT_FOUND,
        JobRefusal::Deleted => StatusCode::GONE,
        JobRefusal::TaskNotForYou(_) => StatusCode::FORBIDDEN,
        JobRefusal::TaskClosed(_)
        | JobRefusal::TaskHeldByOther { .. }
        | JobRefusal::TaskNotHeld(_)
        | JobRefusal::NothingToSubmit(_) => StatusCode::CONFLICT,
        _ => return job_error(scribe_actors::command::CommandError::Refused(refusal)),
    };
    ApiError::new(status, crate::error::sentence(&refusal), field())
}

impl From<Transcript> for WorkDocument {
    fn from(t: Transcript) -> Self {
        WorkDocument {
            speakers: t.speakers.into_iter().map(|s| ExportSpeaker { spkid: s.spkid, name: s.name }).collect(),
            segments: t
                .segments
                .into_iter()
                .map(|s| WorkSegment {
                    speaker: s.speaker,
                    words: s
                        .words
                        .into_iter()
                        .map(|w| WorkWord {
                            start: w.start,
                            end: w.end,
                            text: w.text,
                            conf: w.conf,
                            pristine: w.pristine,
                        })
                        .collect(),
                })
                .collect(),
            highlights: t
                .highlights
                .into_iter()
                .map(|h| ExportHighlight { start: h.start, end: h.end, text: h.text })
                .collect(),
        }
    }
}

impl WorkDocument {
    pub(crate) fn into_transcript(self, job_id: &str, filename: &str) -> Transcript {
        Transcript {
            id: job_id.to_owned(),
            record_id: job_id.to_owned(),
            filename: filename.to_owned(),
            start_time_offset: 0.0,
            speakers: self.speakers.into_iter().map(|s| Speaker { spkid: s.spkid, name: s.name }).collect(),
            segments: self
                .segments
                .into_iter()
                .map(|s| Segment {
                    speaker: s.speaker,
                    words: s
                        .words
                        .into_iter()
                        .map(|w| Word { start: w.start, end: w.end, text: w.text, conf: w.conf, pristine: w.pristine })
                        .collect(),
                })
                .collect(),
            highlights: self
                .highlights
                .into_iter()
                .map(|h| Highlight { start: h.start, end: h.end, text: h.text })
                .collect(),
        }
    }
}
