//! `POST /jobs/upload-media`: the multipart `file` part is streamed straight into the media store
//! (one pass, bounded memory, a byte cap), inspected by content, and only then is the job
//! created, with its file and duration, so the answer already shows `nrAudioSeconds`.
//!
//! A client that goes away mid-upload leaves nothing: the partial file is a `TempMedia`, removed
//! when dropped. Once the whole file has arrived, the rest (commit, probe, charge, submit) runs as
//! its own task, so it completes, or cleans up after itself, even if the client leaves then. The
//! media store probes the file; the billing saga charges the job and records it, its file and
//! its duration, in one append.

use std::path::PathBuf;
use std::sync::Arc;

use poem::error::ParseMultipartError;
use poem::http::{StatusCode, header};
use poem::web::Data;
use poem::{Request, RequestBody};
use poem_openapi::param::Query;
use poem_openapi::payload::Json;
use poem_openapi::registry::{MetaMediaType, MetaRequest, MetaSchema, MetaSchemaRef};
use poem_openapi::{ApiExtractor, ApiExtractorType, ExtractParamOptions, OpenApi};
use scribe_actors::billing::NewJob;
use scribe_actors::media::{MediaError, ProbeError, TempMedia};
use scribe_domain::ids::JobId;
use scribe_domain::job::{JobState, StoredMedia};
use scribe_domain::requests::{JobParams, JobRequest};

use crate::ApiTags;
use crate::auth::{ApiKeyAuth, Caller};
use crate::error::ApiError;
use crate::model::JobStatusResponse;
use crate::state::ApiState;
use crate::submit;

/// Bytes of multipart framing (boundaries, part headers) allowed above the file cap before a
/// `Content-Length` alone is enough to refuse the upload.
const MULTIPART_OVERHEAD: u64 = 1 << 20;

/// The multipart body of an upload, read lazily as a stream. Documented as
/// `multipart/form-data` with one binary part `file`.
pub struct MediaUpload(multer::Multipart<'static>);

impl<'a> ApiExtractor<'a> for MediaUpload {
    const TYPES: &'static [ApiExtractorType] = &[ApiExtractorType::RequestObject];
    type ParamType = ();
    type ParamRawType = ();

    fn request_meta() -> Option<MetaRequest> {
        let mut schema = MetaSchema::new("object");
        schema.required = vec!["file"];
        let mut file = MetaSchema::new_with_format("string", "binary");
        file.description =
            Some("The audio or video file (wav, mp3, m4a, aac, wma, mov, m4v, mp4, opus, ogg, flac), at most 6 GB.");
        schema.properties = vec![("file", MetaSchemaRef::Inline(Box::new(file)))];
        Some(MetaRequest {
            description: Some(
                "The media, as the one multipart/form-data part, named `file`; any other part is refused (parameters go in the query).",
            ),
            content: vec![MetaMediaType {
                content_type: "multipart/form-data",
                schema: MetaSchemaRef::Inline(Box::new(schema)),
            }],
            required: true,
        })
    }

    async fn from_request(req: &'a Request, body: &mut RequestBody, _: ExtractParamOptions<()>) -> poem::Result<Self> {
        Ok(MediaUpload(multipart_body(req, body)?))
    }
}

/// The request's multipart body as a stream of parts, read by multer straight from the body's
/// chunks: poem's own `Multipart` reads the body through an extra copy in 4 KB pieces, which cost
/// a third of the server's time on a large upload. Every door that receives media reads it so.
pub(crate) fn multipart_body(req: &Request, body: &mut RequestBody) -> poem::Result<multer::Multipart<'static>> {
    let content_type = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .ok_or(ParseMultipartError::ContentTypeRequired)?;
    let boundary = multer::parse_boundary(content_type).map_err(|e| match e {
        multer::Error::NoMultipart | multer::Error::DecodeContentType(_) => {
            ParseMultipartError::InvalidContentType(content_type.to_owned())
        }
        other => ParseMultipartError::Multipart(other),
    })?;
    Ok(multer::Multipart::new(body.take()?.into_bytes_stream(), boundary))
}

pub struct UploadApi;

#[OpenApi(tag = "ApiTags::Jobs")]
impl UploadApi {
    /// Creates a job from an uploaded audio or video file (at most 6 GB).
    ///
    /// The file is checked by its content: one that is not audio or video is refused (400,
    /// field `file`), and so is media longer than the server accepts when its operator set a
    /// limit (`--max-duration`): 400 `INVALID_PARAMETER`, field `file`, with a message giving
    /// both lengths ("The media is 1 min 40 s long; this server accepts media of at most 1
    /// minute"); nothing is charged or kept. Returns the new job, status `OPEN`, with
    /// `nrAudioSeconds` already set. Every parameter but the file is in the query.
    ///
    /// Billing: the job is charged per started minute of its audio when it is created; a
    /// balance that does not cover it is refused (402) and no job is created. A job that ends
    /// in `ERROR` is refunded.
    #[allow(clippy::too_many_arguments)]
    #[oai(path = "/jobs/upload-media", method = "post", operation_id = "uploadMedia")]
    async fn upload(
        &self,
        auth: ApiKeyAuth,
        state: Data<&Arc<ApiState>>,
        req: &Request,
        // Each parameter is described once, with the URL job's body: `contract::job_parameter`.
        language: Query<Option<String>>,
        #[oai(name = "transcriptionType")] transcription_type: Query<Option<String>>,
        #[oai(name = "jobType")] job_type: Query<Option<String>>,
        #[oai(name = "numberOfSpeakers")] number_of_speakers: Query<Option<String>>,
        #[oai(name = "callbackUrl")] callback_url: Query<Option<String>>,
        #[oai(name = "glossaryId")] glossary_id: Query<Option<String>>,
        #[oai(name = "transcriptionStyle")] transcription_style: Query<Option<String>>,
        #[oai(name = "turnaroundTime")] turnaround_time: Query<Option<String>>,
        #[oai(name = "targetLanguage")] target_language: Query<Option<String>>,
        #[oai(name = "deleteAfterSeconds")] delete_after_seconds: Query<Option<String>>,
        #[oai(name = "speakerChannels")] speaker_channels: Query<Option<String>>,
        body: MediaUpload,
    ) -> Result<Json<JobStatusResponse>, ApiError> {
        let caller = auth.0;
        let checked: Result<(JobRequest, u64), ApiError> = async {
            // Parsed here rather than by the framework, so that a malformed value is refused
            // like every other invalid parameter (and the body is still drained).
            let number_of_speakers = match number_of_speakers.0.as_deref().map(str::trim).filter(|v| !v.is_empty()) {
                None => None,
                Some(v) => Some(v.parse::<i64>().map_err(|_| {
                    ApiError::invalid("numberOfSpeakers", "numberOfSpeakers must be a whole number between 0 and 5")
                })?),
            };
            let delete_after_seconds = match delete_after_seconds.0.as_deref().map(str::trim).filter(|v| !v.is_empty())
            {
                None => None,
                Some(v) => Some(v.parse::<i64>().map_err(|_| {
                    ApiError::invalid(
                        "deleteAfterSeconds",
                        "deleteAfterSeconds must be a whole number of seconds, 1 to 315360000",
                    )
                })?),
            };
            let speaker_channels = match speaker_channels.0.as_deref().map(str::trim).filter(|v| !v.is_empty()) {
                None => None,
                Some("true") => Some(true),
                Some("false") => Some(false),
                Some(_) => return Err(ApiError::invalid("speakerChannels", "speakerChannels must be true or false")),
            };
            let request = JobParams {
                language: language.0,
                transcription_type: transcription_type.0,
                job_type: job_type.0,
                number_of_speakers,
                callback_url: callback_url.0,
                glossary_id: glossary_id.0,
                transcription_style: transcription_style.0,
                turnaround_time: turnaround_time.0,
                target_language: target_language.0,
                delete_after_seconds,
                speaker_channels,
            }
            .validate()?;
            // Everything that can be refused without the file is refused before receiving it.
            submit::admit(&state, &caller, &request).await?;
            let limit = state.settings.max_upload_bytes;
            if content_length(req).is_some_and(|n| n > limit.saturating_add(MULTIPART_OVERHEAD)) {
                return Err(too_large(limit));
            }
            Ok((request, limit))
        }
        .await;
        // A refusal before the file is read still reads (and discards) a small upload, so that
        // the client, still sending, receives the answer instead of a reset connection.
        let (request, limit) = match checked {
            Ok(ok) => ok,
            Err(e) => {
                // A body announced larger than we would read is not waited for. A body that
                // breaks the upload's form (no `file` part, another part) is told first: that
                // is a malformed request whatever its parameters name.
                if content_length(req).is_none_or(|n| n <= DRAIN_LIMIT)
                    && let Some(malformed) = drain(body.0, DRAIN_LIMIT).await
                {
                    return Err(malformed);
                }
                return Err(e);
            }
        };

        let (temp, filename) = receive(body.0, &state, limit).await?;
        let state = Arc::clone(&state);
        let job_id = submit::new_job_id();
        let upload = ReceivedUpload { caller, request, job_id, temp, filename, awaited: false };
        let (job_state, _) = submit_stored(state.clone(), upload).await?;
        let view =
            job_state.view().ok_or_else(|| ApiError::internal("Showing the new job", &"no view after submission"))?;
        Ok(Json(view.into()))
    }
}

/// A received file to submit as a job.
pub(crate) struct ReceivedUpload {
    pub caller: Caller,
    pub request: JobRequest,
    pub job_id: JobId,
    pub temp: TempMedia,
    /// As the client named it.
    pub filename: String,
    /// The request stays open for the job's answer (the OpenAI door): the job records this
    /// node as the one holding it (see `scribe_domain::job::awaited`).
    pub awaited: bool,
}

/// Commits, probes, charges and submits a received file as its job (in a task of its own,
/// so that it completes, or cleans up, even if the client leaves now); returns the new job and
/// the position of its append, once the read models show it. On any failure the files are
/// removed and nothing of the job remains. Every door that receives a file submits it here.
pub(crate) async fn submit_stored(
    state: Arc<ApiState>,
    upload: ReceivedUpload,
) -> Result<(JobState, Option<u64>), ApiError> {
    tokio::spawn(async move { finish(&state, upload).await })
        .await
        .map_err(|e| ApiError::internal("Creating the job", &e))?
}

pub(crate) fn content_length(req: &Request) -> Option<u64> {
    req.headers().get(header::CONTENT_LENGTH)?.to_str().ok()?.parse().ok()
}

pub(crate) fn too_large(limit: u64) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!(
            "The file is larger than the limit of {} bytes (6 GB); use upload-media-from-url for files up to 16 GB",
            limit
        ),
        Some("file".to_owned()),
    )
}

/// Largest upload read and discarded after an early refusal; past it the connection is closed.
pub(crate) const DRAIN_LIMIT: u64 = 64 << 20;

/// Reads and discards up to `limit` bytes of the multipart body; returns the refusal of a body
/// read to its end that is not exactly one `file` part.
async fn drain(mut multipart: multer::Multipart<'static>, limit: u64) -> Option<ApiError> {
    let mut left = limit;
    let mut have_file = false;
    let mut refusal = None;
    loop {
        let mut field = match multipart.next_field().await {
            Ok(Some(field)) => field,
            Ok(None) | Err(multer::Error::IncompleteStream) if !have_file && refusal.is_none() => {
                return Some(file_required());
            }
            Ok(None) => return refusal,
            Err(_) => return None,
        };
        if refusal.is_none() {
            refusal = unexpected_part(field.name(), have_file);
        }
        have_file |= field.name() == Some("file");
        while let Ok(Some(chunk)) = field.chunk().await {
            left = left.saturating_sub(chunk.len() as u64);
            if left == 0 {
                return None;
            }
        }
    }
}

fn file_required() -> ApiError {
    ApiError::invalid("file", "file is required: send the media as a multipart/form-data part named file")
}

/// Streams the `file` part into a temp file; returns it and the client's file name. The body
/// holds exactly one part, `file`: any other part (a second file, or a parameter such as
/// `language`, which belongs in the query) is refused with 400 naming it, never ignored.
async fn receive(
    mut multipart: multer::Multipart<'static>,
    state: &ApiState,
    limit: u64,
) -> Result<(TempMedia, String), ApiError> {
    let unreadable = |e: multer::Error| ApiError::invalid_body(format!("The multipart body could not be read: {e}"));
    let mut received: Option<(TempMedia, String)> = None;
    loop {
        let field = match multipart.next_field().await {
            Ok(Some(field)) => field,
            Ok(None) => break,
            // A body with no part at all (only the closing boundary) ends before its first part.
            Err(multer::Error::IncompleteStream) if received.is_none() => break,
            Err(e) => return Err(unreadable(e)),
        };
        if let Some(refusal) = unexpected_part(field.name(), received.is_some()) {
            drop(field);
            drain(multipart, DRAIN_LIMIT).await;
            return Err(refusal);
        }
        received = Some(receive_file(field, state, limit).await?);
    }
    received.ok_or_else(file_required)
}

/// Why a multipart part is refused: anything but the first `file`.
fn unexpected_part(name: Option<&str>, have_file: bool) -> Option<ApiError> {
    match name {
        Some("file") if have_file => Some(ApiError::invalid(
            "file",
            "file was sent twice: an upload takes exactly one multipart part named file",
        )),
        Some("file") => None,
        Some(other) => Some(ApiError::invalid(
            other,
            format!(
                "{other} is not a part of the upload body: send only the media, as a part named file; \
                 parameters such as {other} go in the query string (?{other}=...)"
            ),
        )),
        None => Some(ApiError::invalid_body("A multipart part has no name: send the media as a part named file")),
    }
}

/// Streams one `file` part into a temp file.
pub(crate) async fn receive_file(
    mut field: multer::Field<'static>,
    state: &ApiState,
    limit: u64,
) -> Result<(TempMedia, String), ApiError> {
    let filename = field.file_name().unwrap_or("media").to_owned();
    let mut temp = state.media.create_temp(limit).await.map_err(|e| ApiError::internal("Storing the upload", &e))?;
    while let Some(chunk) = field
        .chunk()
        .await
        .map_err(|e| ApiError::invalid_body(format!("The upload was interrupted or malformed: {e}")))?
    {
        temp.write_chunk(&chunk).await.map_err(|e| match e {
            MediaError::TooLarge { limit } => too_large(limit),
            other => ApiError::internal("Storing the upload", &other),
        })?;
    }
    Ok((temp, filename))
}

/// Commits, probes, charges and submits; on any failure the files are removed and nothing of
/// the job remains.
async fn finish(state: &ApiState, upload: ReceivedUpload) -> Result<(JobState, Option<u64>), ApiError> {
    let ReceivedUpload { caller, request, job_id, temp, filename, awaited } = upload;
    let stored = state
        .media
        .commit(temp, job_id.as_str(), &filename)
        .await
        .map_err(|e| ApiError::internal("Storing the upload", &e))?;
    let awaited_on = awaited.then(|| state.node.clone());
    let new_job = |media, duration_ms| NewJob::Stored {
        job_id: job_id.clone(),
        owner: caller.user.clone(),
        request,
        filename,
        media,
        duration_ms,
        awaited_on,
    };
    let result = create(state, stored.path.clone(), stored.size, new_job).await;
    if result.is_err()
        && let Err(e) = state.media.delete_job(job_id.as_str()).await
    {
        scribe_actors::jobs::job_span(&job_id)
            .in_scope(|| tracing::error!(error = %e, "removing the files of a refused upload"));
    }
    result
}

/// Probes the stored file at `path` and submits the job `new_job` makes of it.
async fn create(
    state: &ApiState,
    path: PathBuf,
    bytes: u64,
    new_job: impl FnOnce(StoredMedia, u64) -> NewJob,
) -> Result<(JobState, Option<u64>), ApiError> {
    let duration_ms = state.media.probe(&path).await.map_err(|e| match e {
        ProbeError::NotMedia(e) => ApiError::invalid("file", e.to_string()),
        other => ApiError::internal("Inspecting the media", &other),
    })?;
    // The billing saga refuses media longer than the operator accepts (no job at all: its files
    // are removed by the caller), charges the job (402 and no job if the balance does not cover
    // it), then records the job, its file and its duration in one append.
    let media = StoredMedia { path: state.media.relative(&path), bytes };
    let submitted = state.billing.submit(new_job(media, duration_ms)).await.map_err(submit::billing_error)?;
    state.settle(submitted.position).await;
    Ok((submitted.state, submitted.position))
}
