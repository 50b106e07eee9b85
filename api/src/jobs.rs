//! The job endpoints other than the file upload: `GET /jobs/status`, `GET /jobs`,
//! `DELETE /jobs`, `POST /jobs/upload-media-from-url` and `POST /jobs/translatedSubtitles`. Each
//! one parses, lets the domain validate, sends a command (new jobs through the billing saga) or
//! asks a read model, and shapes the answer.

use std::sync::Arc;

use poem::http::StatusCode;
use poem::web::Data;
use poem_openapi::param::Query;
use poem_openapi::payload::Json;
use poem_openapi::{ApiResponse, OpenApi};
use scribe_actors::billing::{NewJob, SubmitError};
use scribe_actors::clock::now_ms;
use scribe_domain::ids::JobId;
use scribe_domain::job::{JobCommand, JobRefusal};
use scribe_domain::requests::{ListJobsParams, TranslationParams, UrlJobParams};

use crate::ApiTags;
use crate::auth::ApiKeyAuth;
use crate::error::{ApiError, deleted_job, job_error};
use crate::model::{Job, JobStatusResponse, Message, UploadFromUrl};
use crate::state::ApiState;
use crate::strict_json::StrictJson;
use crate::submit;

pub struct JobsApi;

/// The answer of `GET /jobs`: one page, and the total over all pages in a header.
#[derive(ApiResponse)]
pub enum JobListResponse {
    /// The page's jobs.
    #[oai(status = 200)]
    Ok(
        Json<Vec<Job>>,
        /// How many jobs pass the filters, all pages together (beyond the spec).
        #[oai(header = "X-Total-Count")]
        u64,
    ),
}

#[OpenApi(tag = "ApiTags::Jobs")]
impl JobsApi {
    /// The status of a job.
    ///
    /// `jobOptions` is present only when options were explicitly requested; `errorMsg` only when
    /// the status is `ERROR` (why the job failed). A job of another account answers 403, a
    /// deleted one 410.
    #[oai(path = "/jobs/status", method = "get", operation_id = "getJobStatus")]
    async fn status(
        &self,
        auth: ApiKeyAuth,
        state: Data<&Arc<ApiState>>,
        /// The job's id, as returned at submission.
        #[oai(name = "jobId")]
        job_id: Query<String>,
    ) -> Result<Json<JobStatusResponse>, ApiError> {
        let job_id = JobId::parse(&job_id.0)?;
        let record = state.read.job(&job_id).map_err(|e| ApiError::internal("Looking up the job", &e))?;
        let field = Some("jobId".to_owned());
        match record {
            None => Err(ApiError::new(StatusCode::NOT_FOUND, format!("No job with jobId {job_id}"), field)),
            Some(r) if r.owner != auth.0.user => {
                Err(ApiError::new(StatusCode::FORBIDDEN, "This job belongs to another account", field))
            }
            Some(r) if r.deleted => Err(deleted_job(&job_id, r.job.expired)),
            Some(r) => {
                let mut job = r.job;
                // Read models written before jobs carried their errorMsg keep it beside the job.
                if job.status == scribe_domain::kinds::JobStatus::Error && job.error_msg.is_none() {
                    job.error_msg = r.error_msg;
                }
                Ok(Json(JobStatusResponse { job_status: Job::shown(job, state.settings.retention_s()) }))
            }
        }
    }

    /// Lists your jobs, newest first unless `sortBy`/`sortDirection` say otherwise (a bare
    /// array of Job objects, as the spec has it). Beyond the spec: the `X-Total-Count` header
    /// tells how many jobs pass the filters on all pages together, so a client knows the last
    /// page without asking for an empty one; `sortBy` and `sortDirection` work as on
    /// `GET /glossary`.
    #[allow(clippy::too_many_arguments)]
    #[oai(path = "/jobs", method = "get", operation_id = "listJobs")]
    async fn list(
        &self,
        auth: ApiKeyAuth,
        state: Data<&Arc<ApiState>>,
        /// Only the job with this id.
        #[oai(name = "jobId")]
        job_id: Query<Option<String>>,
        /// Only jobs of this type: `perfect` or `direct`.
        #[oai(name = "jobType")]
        job_type: Query<Option<String>>,
        /// Only jobs with this status: `OPEN`, `ERROR` or `DONE`.
        status: Query<Option<String>>,
        /// Only jobs of this type: `transcription`, `captions` or `translatedSubtitles`.
        #[oai(name = "transcriptionType")]
        transcription_type: Query<Option<String>>,
        /// Page to retrieve, from 0 (default 0).
        page: Query<Option<i64>>,
        /// Jobs per page, 1 to 100 (default 20).
        #[oai(name = "pageSize")]
        page_size: Query<Option<i64>>,
        /// Beyond the spec: the Job field to sort by, `created` (default), `filename` or
        /// `nrAudioSeconds`.
        #[oai(name = "sortBy")]
        sort_by: Query<Option<String>>,
        /// Beyond the spec: `DESC` (default) or `ASC`.
        #[oai(name = "sortDirection")]
        sort_direction: Query<Option<String>>,
    ) -> Result<JobListResponse, ApiError> {
        let filter = ListJobsParams {
            job_id: job_id.0,
            job_type: job_type.0,
            status: status.0,
            transcription_type: transcription_type.0,
            page: page.0,
            page_size: page_size.0,
            sort_by: sort_by.0,
            sort_direction: sort_direction.0,
        }
        .validate()?;
        let owner = auth.0.user;
        let (jobs, total) = state
            .read
            .run(move |read| Ok((read.list_jobs(&owner, &filter)?, read.count_jobs(&owner, &filter)?)))
            .await
            .map_err(|e| ApiError::internal("Listing jobs", &e))?;
        let retention_s = state.settings.retention_s();
        Ok(JobListResponse::Ok(Json(jobs.into_iter().map(|job| Job::shown(job, retention_s)).collect()), total))
    }

    /// Deletes a job: its media and transcript files are removed; its history keeps a
    /// `JobDeleted` event for audit. Afterwards the job answers 410. The charge is refunded
    /// while no work was spent on the job: a `direct` job whose recognition has not started, a
    /// `perfect` job that no transcriber has claimed.
    #[oai(path = "/jobs", method = "delete", operation_id = "deleteJob")]
    async fn delete(
        &self,
        auth: ApiKeyAuth,
        state: Data<&Arc<ApiState>>,
        /// The job's id.
        #[oai(name = "jobId")]
        job_id: Query<String>,
    ) -> Result<Json<Message>, ApiError> {
        let job_id = JobId::parse(&job_id.0)?;
        let cmd = JobCommand::Delete { by: auth.0.user, at_ms: now_ms() };
        let executed = state.jobs.execute(&job_id, cmd).await.map_err(job_error)?;
        if let Err(e) = state.media.delete_job(job_id.as_str()).await {
            // The deletion is recorded; the files are orphans an operator can remove.
            scribe_actors::jobs::job_span(&job_id)
                .in_scope(|| tracing::error!(error = %e, "removing the files of a deleted job"));
        }
        state.settle(executed.position).await;
        Ok(Json(Message::new("Job deleted")))
    }

    /// Creates a job from a media file the service downloads (http or https, at most 16 GB).
    ///
    /// The download happens after this call returns; a URL that cannot be fetched, or that
    /// does not hold media, ends the job in `ERROR` with an `errorMsg` saying why. URLs of
    /// loopback, private or link-local addresses are refused (400) unless the operator allows
    /// them. Returns the new job with status `OPEN`.
    ///
    /// Billing: the balance must cover at least one minute when the job is submitted (else
    /// 402). The job is charged per started minute once its media is in and its duration known;
    /// if the balance does not cover that, the job ends in `ERROR` with an `errorMsg` starting
    /// "Insufficient balance". A job that ends in `ERROR` is refunded.
    #[oai(path = "/jobs/upload-media-from-url", method = "post", operation_id = "uploadMediaFromUrl")]
    async fn upload_from_url(
        &self,
        auth: ApiKeyAuth,
        state: Data<&Arc<ApiState>>,
        body: StrictJson<UploadFromUrl>,
    ) -> Result<Json<JobStatusResponse>, ApiError> {
        let caller = auth.0;
        if let Some(field) = body.0.empty_field() {
            return Err(ApiError::invalid(
                field,
                format!("{field} is empty: leave it out, or send null, to take the default"),
            ));
        }
        let (source_url, request) = UrlJobParams::from(body.0).validate()?;
        submit::admit(&state, &caller, &request).await?;
        submit::vet_url(&state, "sourceUrl", source_url.url()).await?;
        // The billing saga: the balance must still cover the first minute (402), then the job is
        // recorded.
        let new_job = NewJob::Url { job_id: submit::new_job_id(), owner: caller.user, request, source_url };
        let executed = state.billing.submit(new_job).await.map_err(submit::billing_error)?;
        state.settle(executed.position).await;
        let job = executed
            .state
            .view()
            .ok_or_else(|| ApiError::internal("Showing the new job", &"no view after submission"))?;
        Ok(Json(job.into()))
    }

    /// Orders translated subtitles of one of your finished manual (`perfect`) captions jobs,
    /// made by a human translator on the source's timings.
    ///
    /// Answers the new job with status `BUSY`, transcriptionType `translatedSubtitles`, jobType
    /// `perfect`, and `sourceJobId`, `targetLanguage` and `notes` set. `BUSY` becomes `DONE` when
    /// the translator submits (callback as for every job), or `ERROR` if the source job is
    /// deleted before that (the order is then refunded). A `BUSY` job can be deleted like any
    /// other: unclaimed, it is refunded; once a translator claimed it, it is not.
    ///
    /// Refusals: unknown source 404, another account's 403, deleted 410 (field `sourceJobId`);
    /// a `direct` source or one that is not `captions` 400 (translation of automatic captions
    /// must be ordered at submission with transcriptionType=translatedSubtitles); a source that
    /// is not `DONE` yet 409; a balance that does not cover the translation (50 cents per
    /// started minute by default) 402. The deadline is the order's time plus `turnaroundTime`
    /// in calendar days.
    #[allow(clippy::too_many_arguments)]
    #[oai(path = "/jobs/translatedSubtitles", method = "post", operation_id = "orderTranslatedSubtitles")]
    async fn translated_subtitles(
        &self,
        auth: ApiKeyAuth,
        state: Data<&Arc<ApiState>>,
        /// Required: the jobId of a finished manual captions job of yours.
        #[oai(name = "sourceJobId")]
        source_job_id: Query<String>,
        /// Required: pl, en, ru, fr-ca, ca, zh, ga, hu, pt, da, de-at, fr, nl, en-au, ko, it, de,
        /// fi, cmn, ja, de-ch, en-us, ro, pt-br, nl-be, cs, no, sv, en-uk, es.
        #[oai(name = "targetLanguage")]
        target_language: Query<String>,
        /// ONE_DAY, TWO_DAYS, THREE_DAYS, FOUR_DAYS, FIVE_DAYS, SEVEN_DAYS (default), TEN_DAYS,
        /// FOURTEEN_DAYS (calendar days).
        #[oai(name = "turnaroundTime")]
        turnaround_time: Query<Option<String>>,
        /// http(s) URL that receives a POST with the job when it ends.
        #[oai(name = "callbackUrl")]
        callback_url: Query<Option<String>>,
        /// Notes for the translator, at most 5000 characters.
        notes: Query<Option<String>>,
    ) -> Result<Json<JobStatusResponse>, ApiError> {
        let caller = auth.0;
        let request = TranslationParams {
            source_job_id: Some(source_job_id.0),
            target_language: Some(target_language.0),
            turnaround_time: turnaround_time.0,
            callback_url: callback_url.0,
            notes: notes.0,
        }
        .validate()?;
        let (source, version) = state.jobs.state(&request.source_job_id).await.map_err(job_error)?;
        let field = Some("sourceJobId".to_owned());
        let facts = match source.source_facts() {
            Some(facts) if version.is_some() => facts,
            _ => {
                return Err(ApiError::new(
                    StatusCode::NOT_FOUND,
                    format!("No job with sourceJobId {}", request.source_job_id),
                    field,
                ));
            }
        };
        if let Some(callback) = &request.callback_url {
            submit::vet_url(&state, "callbackUrl", callback.url()).await?;
        }
        // The billing saga: the domain's answer first (a refused order is never charged), then
        // the charge (402), then the order is recorded.
        let new_job = NewJob::Translation { job_id: submit::new_job_id(), owner: caller.user, request, source: facts };
        let executed = state.billing.submit(new_job).await.map_err(|e| match e {
            SubmitError::Refused(JobRefusal::Forbidden) => ApiError::new(
                StatusCode::FORBIDDEN,
                "sourceJobId belongs to another account",
                Some("sourceJobId".into()),
            ),
            SubmitError::Refused(JobRefusal::Deleted) => {
                ApiError::new(StatusCode::GONE, "sourceJobId names a deleted job", Some("sourceJobId".into()))
            }
            other => submit::billing_error(other),
        })?;
        state.settle(executed.position).await;
        let job = executed
            .state
            .view()
            .ok_or_else(|| ApiError::internal("Showing the new job", &"no view after submission"))?;
        Ok(Json(job.into()))
    }
}
