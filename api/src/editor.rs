//! What the web app's editor needs beyond the spec, for customers: `GET /api/me` (who a key
//! belongs to, so the app shows the right screens), and reading and correcting the document of
//! one's own finished job (`GET`/`PUT /api/jobs/document`). A correction is validated like a
//! transcriber's save (`scribe_domain::editing`), written to a new file in the job's `work`
//! directory, and recorded as a `DocumentEdited` event naming it: from then on the job's
//! document is that file (`JobState::delivered_document`), which every export reads. Nothing is
//! copied: an edit is recorded whole or not at all. Who may edit is the domain's
//! `JobState::can_edit`, asked here before anything is read or written.

use std::sync::Arc;

use poem::http::StatusCode;
use poem::web::Data;
use poem_openapi::param::Query;
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};
use scribe_actors::clock::now_ms;
use scribe_actors::command::CommandError;
use scribe_domain::editing;
use scribe_domain::ids::JobId;
use scribe_domain::job::{JobCommand, JobRefusal, JobState};
use scribe_domain::kinds::JobStatus;
use scribe_domain::transcript::Transcript;

use crate::ApiTags;
use crate::auth::{AnyKeyAuth, ApiKeyAuth, Caller};
use crate::error::{ApiError, job_error};
use crate::exports::Exports;
use crate::model::Glossary;
use crate::signed_links::SignedLinks;
use crate::state::ApiState;
use crate::strict_json::StrictJson;
use crate::work::{WorkDocument, glossary_of};

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
    /// The job's glossary, if it was submitted with one that still exists: names and terms to
    /// spell as given (the editor offers them when replacing words).
    #[oai(skip_serializing_if_is_none)]
    pub glossary: Option<Glossary>,
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
        links: Data<&Arc<SignedLinks>>,
        /// The job's id.
        #[oai(name = "jobId")]
        job_id: Query<String>,
    ) -> Result<Json<JobDocument>, ApiError> {
        let job_id = JobId::parse(&job_id.0)?;
        let job = editable_job(&state, &auth.0, &job_id).await?;
        let document = delivered_document(&state, &job).await?;
        let media_url = links.media_url(job_id.as_str(), state.settings.media_link_ttl).await?;
        let glossary_id = job.submission.as_ref().and_then(|s| s.glossary_id.as_ref());
        let glossary = glossary_of(&state, glossary_id)?.map(|r| r.glossary.into());
        Ok(Json(JobDocument {
            job_id: job_id.to_string(),
            revision: job.document_edits,
            document: document.into(),
            media_url,
            glossary,
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
        let current = delivered_document(&state, &job).await?;
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
                return Err(match e {
                    CommandError::Refused(refusal) => edit_refused(&job_id, &job, refusal),
                    other => job_error(other),
                });
            }
        };
        // Recorded: the event names the new file, which the exports read once the read model
        // shows it (their cache is keyed by the file). What they rendered before is dropped.
        state.settle(executed.position).await;
        exports.forget_job(job_id.as_str());
        Ok(Json(EditedDocument { job_id: job_id.to_string(), revision: executed.state.document_edits, words }))
    }
}

/// The job, if `caller` may edit its document now (the domain's `JobState::can_edit`).
async fn editable_job(state: &ApiState, caller: &Caller, job_id: &JobId) -> Result<JobState, ApiError> {
    let (job, _) = state.jobs.state(job_id).await.map_err(job_error)?;
    job.can_edit(&caller.user).map_err(|refusal| edit_refused(job_id, &job, refusal))?;
    Ok(job)
}

/// A refused edit as the client sees it: 404 unknown, 403 another account's, 410 deleted, 409
/// not `DONE` (saying the job's status, and for `ERROR` its errorMsg) or a translation.
fn edit_refused(job_id: &JobId, job: &JobState, refusal: JobRefusal) -> ApiError {
    let field = || Some("jobId".to_owned());
    match refusal {
        JobRefusal::NotFound => ApiError::new(StatusCode::NOT_FOUND, format!("No job with jobId {job_id}"), field()),
        JobRefusal::Forbidden => ApiError::new(StatusCode::FORBIDDEN, crate::error::sentence(&refusal), field()),
        JobRefusal::Deleted => crate::error::deleted_job(job_id, job.expired),
        JobRefusal::Finished(JobStatus::Error) => {
            let reason = job.error_msg.as_deref().unwrap_or("no reason recorded");
            ApiError::new(StatusCode::CONFLICT, format!("Job {job_id} is ERROR: {reason}"), field())
        }
        JobRefusal::NotFinished => {
            let status = job.status().map_or_else(String::new, |s| s.to_string());
            ApiError::new(StatusCode::CONFLICT, format!("Job {job_id} is {status}: {refusal}"), field())
        }
        other => ApiError::new(StatusCode::CONFLICT, crate::error::sentence(&other), field()),
    }
}

/// The job's document as its events name it, which the exports read too.
async fn delivered_document(state: &ApiState, job: &JobState) -> Result<Transcript, ApiError> {
    let missing = || {
        ApiError::new(StatusCode::CONFLICT, "The job is DONE but its transcript file is missing", Some("jobId".into()))
    };
    let path = state.data_dir.join(job.delivered_document().ok_or_else(missing)?);
    let bytes = match tokio::fs::read(&path).await {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(missing()),
        Err(e) => return Err(ApiError::internal("Reading the transcript", &e)),
    };
    serde_json::from_slice(&bytes).map_err(|e| ApiError::internal("Reading the transcript", &e))
}
