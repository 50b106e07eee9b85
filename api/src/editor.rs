//! What the web app's editor needs beyond the spec, for customers: `GET /api/me` (who a key
//! belongs to, so the app shows the right screens), and reading and correcting the document of
//! one's own finished job (`GET`/`PUT /api/jobs/document`). A correction is validated like a
//! transcriber's save (`scribe_domain::editing`), written to the job's `work` directory,
//! recorded as a `DocumentEdited` event, then published as the job's transcript; the rendered
//! exports of the job are forgotten, so every export shows it.

use std::sync::Arc;

use poem::http::StatusCode;
use poem::web::Data;
use poem_openapi::param::Query;
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};
use scribe_actors::clock::now_ms;
use scribe_domain::editing;
use scribe_domain::ids::JobId;
use scribe_domain::job::{JobCommand, JobState};
use scribe_domain::kinds::{JobStatus, TranscriptionType};
use scribe_domain::transcript::Transcript;

use crate::ApiTags;
use crate::auth::{AnyKeyAuth, ApiKeyAuth, Caller};
use crate::error::{ApiError, job_error};
use crate::exports::Exports;
use crate::state::ApiState;
use crate::strict_json::StrictJson;
use crate::work::WorkDocument;

/// Path template of the document upload (its body cap is the work API's document cap).
pub const DOCUMENT_ROUTE: &str = "/api/jobs/document";

/// The account behind an API key.
#[derive(Object, Debug, Clone, PartialEq)]
#[oai(rename_all = "camelCase")]
pub struct Me {
    pub user_name: String,
    /// `customer`, `transcriber` or `translator`.
    pub role: String,
    /// The languages a staff member works in (empty: all).
    pub languages: Vec<String>,
    /// The balance in cents.
    pub balance: u64,
}

/// A finished job's document, for the editor.
#[derive(Object, Debug, Clone, PartialEq)]
#[oai(rename_all = "camelCase")]
pub struct JobDocument {
    pub job_id: String,
    /// How many times the owner corrected it (0: as delivered).
    pub revision: u32,
    pub document: WorkDocument,
    /// A signed URL of the job's media (answers HTTP Range requests, for an audio player).
    pub media_url: String,
}

/// The answer to a correction.
#[derive(Object, Debug, Clone, PartialEq)]
#[oai(rename_all = "camelCase")]
pub struct EditedDocument {
    pub job_id: String,
    /// The revision just recorded (1, 2, ...).
    pub revision: u32,
    pub words: u64,
}

pub struct EditorApi;

#[OpenApi(tag = "ApiTags::Jobs")]
impl EditorApi {
    /// Who this API key belongs to: user name, role, languages (staff) and balance. Any key,
    /// customer or staff, may ask (the web app uses it to choose what to show). Not in the
    /// original API contract.
    #[oai(path = "/me", method = "get", operation_id = "getMe")]
    async fn me(&self, auth: AnyKeyAuth) -> Result<Json<Me>, ApiError> {
        let Caller { user, balance_cents, role, languages } = auth.0;
        Ok(Json(Me { user_name: user.to_string(), role: role.as_str().to_owned(), languages, balance: balance_cents }))
    }

    /// The document of your `DONE` job for the editor: speakers, segments of timed words with
    /// confidences and `pristine`, highlights, and a signed media URL. 409 while the job is
    /// not `DONE`. Not in the original API contract.
    #[oai(path = "/jobs/document", method = "get", operation_id = "getJobDocument")]
    async fn get_document(
        &self,
        auth: ApiKeyAuth,
        state: Data<&Arc<ApiState>>,
        exports: Data<&Arc<Exports>>,
        /// The job's id.
        #[oai(name = "jobId")]
        job_id: Query<String>,
    ) -> Result<Json<JobDocument>, ApiError> {
        let job_id = JobId::parse(&job_id.0)?;
        let job = editable_job(&state, &auth.0, &job_id).await?;
        let document = published_document(&state, &job_id).await?;
        let media_url = exports.media_url(job_id.as_str(), state.settings.media_link_ttl).await?;
        Ok(Json(JobDocument {
            job_id: job_id.to_string(),
            revision: job.document_edits,
            document: document.into(),
            media_url,
        }))
    }

    /// Corrects the transcript of your `DONE` job: correct words, rename speakers, mark
    /// highlights. The body is the export-json document shape, checked as a transcriber's save
    /// is (400 names the place at fault); a word holding spaces is split into timed words, and
    /// changed words get `pristine: false`. The correction is recorded on the job's history
    /// and every export shows it from then on. 409 while the job is not `DONE`, and for
    /// translatedSubtitles jobs. Not in the original API contract.
    #[oai(path = "/jobs/document", method = "put", operation_id = "editJobDocument")]
    async fn put_document(
        &self,
        auth: ApiKeyAuth,
        state: Data<&Arc<ApiState>>,
        exports: Data<&Arc<Exports>>,
        /// The job's id.
        #[oai(name = "jobId")]
        job_id: Query<String>,
        body: StrictJson<WorkDocument>,
    ) -> Result<Json<EditedDocument>, ApiError> {
        let caller = auth.0;
        let job_id = JobId::parse(&job_id.0)?;
        let job = editable_job(&state, &caller, &job_id).await?;
        let submission = job.submission.as_ref().expect("an editable job was submitted");
        let doc = body.0.into_transcript(job_id.as_str(), submission.source.filename());
        let duration_s = job.duration_ms.map_or(job.nr_audio_seconds as f64, |ms| ms as f64 / 1000.0);
        editing::validate_document(&doc, duration_s)?;
        let current = published_document(&state, &job_id).await?;
        let doc = editing::prepare_saved(doc, Some(&current));
        let words = editing::word_count(&doc);
        let json = scribe_domain::export::render_json(&doc);
        let path = state
            .media
            .write_work_document(job_id.as_str(), "edit", json.as_bytes())
            .await
            .map_err(|e| ApiError::internal("Storing the document", &e))?;
        let relative = state.media.relative(&path);
        let cmd = JobCommand::EditDocument { by: caller.user, path: relative, words, at_ms: now_ms() };
        let executed = match state.jobs.execute(&job_id, cmd).await {
            Ok(executed) => executed,
            Err(e) => {
                state.media.discard(&path).await;
                return Err(job_error(e));
            }
        };
        // Recorded: publish it where the exports read, then drop what they rendered before.
        let published = state.media.write_transcript(job_id.as_str(), json.as_bytes()).await;
        exports.forget_job(job_id.as_str());
        published.map_err(|e| ApiError::internal("Publishing the corrected document", &e))?;
        state.settle(executed.position).await;
        Ok(Json(EditedDocument { job_id: job_id.to_string(), revision: executed.state.document_edits, words }))
    }
}

/// The job, if `caller` may edit its document now: 404 unknown, 403 another account's, 410
/// deleted, 409 not `DONE` (for `ERROR`, the message gives the job's errorMsg) or a translation.
async fn editable_job(state: &ApiState, caller: &Caller, job_id: &JobId) -> Result<JobState, ApiError> {
    let field = || Some("jobId".to_owned());
    let (job, version) = state.jobs.state(job_id).await.map_err(job_error)?;
    let Some(submission) = job.submission.as_ref().filter(|_| version.is_some()) else {
        return Err(ApiError::new(StatusCode::NOT_FOUND, format!("No job with jobId {job_id}"), field()));
    };
    if submission.owner != caller.user {
        return Err(ApiError::new(StatusCode::FORBIDDEN, "This job belongs to another account", field()));
    }
    if job.deleted {
        return Err(crate::error::deleted_job(job_id, job.expired));
    }
    let status = job.status().expect("a submitted job has a status");
    if status == JobStatus::Error {
        let reason = job.error_msg.as_deref().unwrap_or("no reason recorded");
        return Err(ApiError::new(StatusCode::CONFLICT, format!("Job {job_id} is ERROR: {reason}"), field()));
    }
    if status != JobStatus::Done {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!("Job {job_id} is {status}: its transcript can be edited once it is DONE"),
            field(),
        ));
    }
    if submission.transcription_type == TranscriptionType::TranslatedSubtitles {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "The subtitles of a translatedSubtitles job cannot be edited here",
            field(),
        ));
    }
    Ok(job)
}

/// The job's transcript as the exports read it.
async fn published_document(state: &ApiState, job_id: &JobId) -> Result<Transcript, ApiError> {
    let bytes = state
        .media
        .read_transcript(job_id.as_str())
        .await
        .map_err(|e| ApiError::internal("Reading the transcript", &e))?
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::CONFLICT,
                "The job is DONE but its transcript file is missing",
                Some("jobId".into()),
            )
        })?;
    serde_json::from_slice(&bytes).map_err(|e| ApiError::internal("Reading the transcript", &e))
}
