//! The export endpoints: `GET /jobs/export-srt`, `-vtt`, `-txt`, `-json` and `-stl`, and the
//! signed STL download `GET /downloads/stl` that needs no `apiKey`.
//!
//! Each export checks the job (unknown 404, another account's 403, deleted 410, not `DONE` 409),
//! lets the domain validate the parameters (400 naming the parameter), and answers from the cache
//! of rendered exports, rendering on a miss (on the blocking pool: segmentation is CPU work).
//! The renderers are `scribe_domain::export`; nothing here decides what a subtitle looks like.
//!
//! The document rendered is the one the job's events name (the read model carries its path,
//! `JobRecord::document`): a correction or a submission is a new file named by its event, so an
//! export shows exactly what the history says, also right after a restart.

pub mod cache;
pub mod document;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use poem::http::StatusCode;
use poem::web::Data;
use poem_openapi::param::Query;
use poem_openapi::payload::{Binary, Json};
use poem_openapi::{ApiResponse, OpenApi};
use scribe_actors::clock::now_ms;
use scribe_domain::export::{
    StlDate, StlError, StlInfo, SubtitleParams, TxtParams, render_json_in, render_srt_with, render_stl, render_txt,
    render_vtt_with,
};
use scribe_domain::ids::{JobId, UserName};
use scribe_domain::job::Job;
use scribe_domain::kinds::{JobStatus, TranscriptionType};
use scribe_domain::transcript::Transcript;

use crate::ApiTags;
use crate::auth::ApiKeyAuth;
use crate::error::ApiError;
use crate::signed_links::{SignedLinks, StlLink};
use crate::state::{ApiSettings, ApiState};
use cache::{ExportCache, ExportKey};
use document::{DownloadLink, ExportDocument, RenderedText};

/// What the export endpoints keep between requests: the rendered exports, and where the
/// documents they render are (the data directory).
pub struct Exports {
    data_dir: PathBuf,
    link_ttl: Duration,
    cache: ExportCache,
}

impl Exports {
    pub fn new(data_dir: PathBuf, settings: &ApiSettings) -> Exports {
        Exports { data_dir, link_ttl: settings.download_link_ttl, cache: ExportCache::new(settings.export_cache_bytes) }
    }

    /// Drops the rendered exports of `job_id` (its transcript changed).
    pub(crate) fn forget_job(&self, job_id: &str) {
        self.cache.forget_job(job_id);
    }
}

/// An export and its parameters (for SRT and VTT, whether to name the speakers:
/// `includeSpeakers`).
#[derive(Debug, Clone)]
enum Format {
    Srt(SubtitleParams, bool),
    Vtt(SubtitleParams, bool),
    Txt(TxtParams),
    Json,
    Stl(SubtitleParams, StlMeta),
}

/// What the EBU-STL header says besides the subtitles.
#[derive(Debug, Clone)]
struct StlMeta {
    title: String,
    language: &'static str,
    created: StlDate,
    revised: StlDate,
}

impl Format {
    /// The cache key's spelling of format and parameters.
    fn variant(&self) -> String {
        let sub =
            |p: &SubtitleParams| format!("{}/{}/{}", p.max_chars_per_row(), p.max_rows(), p.max_screen_time_per_row());
        match self {
            Format::Srt(p, speakers) => format!("srt/{}/{speakers}", sub(p)),
            Format::Vtt(p, speakers) => format!("vtt/{}/{speakers}", sub(p)),
            Format::Txt(p) => format!(
                "txt/{}/{}/{}/{:?}",
                p.include_timestamps,
                p.include_speakers,
                p.highlights_only,
                p.max_chars_per_row()
            ),
            Format::Json => "json".to_owned(),
            Format::Stl(p, _) => format!("stl/{}", sub(p)),
        }
    }

    /// Renders the document, whose words are in `language`.
    fn render(&self, transcript_json: &[u8], language: &str) -> Result<Vec<u8>, RenderError> {
        let t: Transcript =
            serde_json::from_slice(transcript_json).map_err(|e| RenderError::Unreadable(e.to_string()))?;
        Ok(match self {
            Format::Srt(p, speakers) => render_srt_with(&t, p, *speakers).into_bytes(),
            Format::Vtt(p, speakers) => render_vtt_with(&t, p, Some(language), *speakers).into_bytes(),
            Format::Txt(p) => render_txt(&t, p).into_bytes(),
            Format::Json => render_json_in(&t, language).into_bytes(),
            Format::Stl(p, meta) => {
                let info = StlInfo {
                    programme_title: &meta.title,
                    language: meta.language,
                    created: meta.created,
                    revised: meta.revised,
                };
                render_stl(&t, p, &info)?
            }
        })
    }
}

/// Why an export could not be rendered.
#[derive(Debug, thiserror::Error)]
enum RenderError {
    #[error("the job is DONE but its transcript file is missing")]
    Missing,
    #[error("reading the transcript: {0}")]
    Storage(String),
    #[error("the transcript file is not a transcript: {0}")]
    Unreadable(String),
    #[error(transparent)]
    Stl(#[from] StlError),
    #[error("the render task failed: {0}")]
    Task(String),
}

impl RenderError {
    fn to_api(&self) -> ApiError {
        match self {
            RenderError::Stl(e) => ApiError::new(
                StatusCode::CONFLICT,
                format!("This job's subtitles cannot be written as EBU-STL: {e}"),
                Some("jobId".into()),
            ),
            other => ApiError::internal("Rendering the export", other),
        }
    }
}

/// A job that may be exported now, and the document its events name (relative to the data
/// directory; `None` if there is none, which a `DONE` job never lacks).
struct Exportable {
    job: Job,
    document: Option<String>,
}

/// Whether the job's deliverable is its translated document rather than its transcript.
fn is_translated(job: &Job) -> bool {
    job.transcription_type == TranscriptionType::TranslatedSubtitles && job.target_language.is_some()
}

/// The language of the words a job's exports carry: the translation's target for translated
/// subtitles, else the job's language (the detected one for `auto`). Every export says it:
/// the `Content-Language` header, the JSON document's `language`, the VTT `Language:` header and
/// the EBU-STL language code.
pub fn text_language(job: &Job) -> &'static str {
    match job.target_language {
        Some(target) if is_translated(job) => target.code(),
        _ => job.language.code(),
    }
}

/// Renders `format` of the document the job's events name, or takes it from the cache.
async fn rendered(exports: &Exports, export: &Exportable, format: Format) -> Result<Vec<u8>, ApiError> {
    let Some(document) = &export.document else { return Err(RenderError::Missing.to_api()) };
    let key = ExportKey {
        job_id: export.job.job_id.as_str().to_owned(),
        document: document.clone(),
        variant: format.variant(),
    };
    let path = exports.data_dir.join(document);
    let language = text_language(&export.job);
    let bytes = exports
        .cache
        .get_or_render(key, async move {
            let json = match tokio::fs::read(&path).await {
                Ok(json) => json,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(RenderError::Missing),
                Err(e) => return Err(RenderError::Storage(format!("{}: {e}", path.display()))),
            };
            tokio::task::spawn_blocking(move || format.render(&json, language))
                .await
                .map_err(|e| RenderError::Task(e.to_string()))?
        })
        .await
        .map_err(|e| e.to_api())?;
    Ok(Vec::clone(&bytes))
}

/// The job, if `caller` (when given) may export it now: 404 unknown, 403 another account's,
/// 410 deleted, 409 not `DONE` (the message says its status).
fn exportable_job(
    state: &ApiState,
    exports: &Exports,
    job_id: &JobId,
    caller: Option<&UserName>,
) -> Result<Exportable, ApiError> {
    let field = || Some("jobId".to_owned());
    let record = state.read.job(job_id).map_err(|e| ApiError::internal("Looking up the job", &e))?;
    let Some(record) = record else {
        return Err(ApiError::new(StatusCode::NOT_FOUND, format!("No job with jobId {job_id}"), field()));
    };
    if caller.is_some_and(|c| *c != record.owner) {
        return Err(ApiError::new(StatusCode::FORBIDDEN, "This job belongs to another account", field()));
    }
    if record.deleted {
        exports.cache.forget_job(job_id.as_str());
        return Err(crate::error::deleted_job(job_id, record.job.expired));
    }
    let status = record.job.status;
    if status != JobStatus::Done {
        let why = match status {
            JobStatus::Open => "it is still being processed; exports are available once its status is DONE \
                (poll /jobs/status or wait for the callback)"
                .to_owned(),
            JobStatus::Error => format!(
                "it ended without a transcript ({}), so there is nothing to export",
                record.error_msg.as_deref().unwrap_or("no reason recorded")
            ),
            _ => "exports are available once its status is DONE".to_owned(),
        };
        return Err(ApiError::new(StatusCode::CONFLICT, format!("Job {job_id} is {status}: {why}"), field()));
    }
    Ok(Exportable { job: record.job, document: record.document })
}

/// Whether the request's `Accept` excludes the subtitle format's own media type (so it admits
/// only `text/plain`, or the edge would have answered 406).
fn wants_plain_text(req: &poem::Request, own_type: &str) -> bool {
    req.headers()
        .get(poem::http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| !crate::negotiate::acceptable(accept, &[own_type.to_owned()]))
}

fn parse_job_id(value: &str) -> Result<JobId, ApiError> {
    Ok(JobId::parse(value)?)
}

/// A calendar date from Unix milliseconds (UTC), for the EBU-STL header.
fn stl_date(unix_ms: u64) -> StlDate {
    // Days to civil date: Howard Hinnant's algorithm (proleptic Gregorian calendar).
    let z = (unix_ms / 86_400_000) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    StlDate { year: year as u16, month: month as u8, day: day as u8 }
}

/// `<media name>.stl`, in characters safe in a `Content-Disposition` header.
fn stl_file_name(job: &Job) -> String {
    let stem = job.filename.rsplit_once('.').map_or(job.filename.as_str(), |(stem, _)| stem);
    let safe: String =
        stem.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect();
    let safe = safe.trim_matches(|c| c == '_' || c == '.');
    if safe.is_empty() { format!("{}.stl", job.job_id) } else { format!("{safe}.stl") }
}

fn stl_meta(job: &Job) -> StlMeta {
    StlMeta {
        title: job.filename.clone(),
        // The language of the subtitles' words (see `text_language`).
        language: text_language(job),
        created: stl_date(job.created),
        revised: stl_date(now_ms()),
    }
}

#[derive(ApiResponse)]
pub enum SrtResponse {
    /// The same text labelled `text/plain`, for a client whose `Accept` asks for that rather
    /// than `application/x-subrip` (the document lists both types for the 200 answer).
    #[oai(status = 200, content_type = "text/plain; charset=utf-8")]
    Plain(RenderedText, #[oai(header = "Content-Language")] String),
    /// The subtitles as SubRip text.
    #[oai(status = 200, content_type = "application/x-subrip; charset=utf-8")]
    Ok(
        RenderedText,
        /// The language of the text (`pt` for subtitles translated into Portuguese).
        #[oai(header = "Content-Language")]
        String,
    ),
}

#[derive(ApiResponse)]
pub enum VttResponse {
    /// The same text labelled `text/plain`, for a client whose `Accept` asks for that rather
    /// than `text/vtt` (the document lists both types for the 200 answer).
    #[oai(status = 200, content_type = "text/plain; charset=utf-8")]
    Plain(RenderedText, #[oai(header = "Content-Language")] String),
    /// The subtitles as WebVTT text.
    #[oai(status = 200, content_type = "text/vtt; charset=utf-8")]
    Ok(
        RenderedText,
        /// The language of the text (`pt` for subtitles translated into Portuguese).
        #[oai(header = "Content-Language")]
        String,
    ),
}

#[derive(ApiResponse)]
pub enum TxtResponse {
    /// The transcript as plain text.
    #[oai(status = 200, content_type = "text/plain; charset=utf-8")]
    Ok(
        RenderedText,
        /// The language of the text (`pt` for subtitles translated into Portuguese).
        #[oai(header = "Content-Language")]
        String,
    ),
}

#[derive(ApiResponse)]
pub enum JsonResponse {
    /// The export JSON document.
    #[oai(status = 200, actual_type = "Json<ExportDocument>")]
    Ok(
        Binary<Vec<u8>>,
        /// The language of the text.
        #[oai(header = "Content-Language")]
        String,
    ),
}

#[derive(ApiResponse)]
pub enum StlFileResponse {
    /// The EBU-STL file (Tech 3264, 25 fps, teletext level 1).
    #[oai(status = 200)]
    Ok(Binary<Vec<u8>>, #[oai(header = "Content-Disposition")] String),
}

pub struct ExportsApi;

#[OpenApi(tag = "ApiTags::Exports")]
impl ExportsApi {
    /// The job's subtitles as SRT (for translatedSubtitles, the translated subtitles, laid out
    /// with the same rules; `Content-Language` says the language).
    ///
    /// `includeSpeakers=true` (beyond the spec, which has it for TXT only) names the speakers:
    /// each subtitle whose speaker differs from the previous one's starts with `Name: `.
    ///
    /// A job that is not `DONE` answers 409 Conflict, with a message that says its status
    /// (`OPEN`: still processing; `ERROR`: no transcript). A parameter out of bounds answers 400
    /// naming it; values are never clamped.
    #[allow(clippy::too_many_arguments)]
    #[oai(path = "/jobs/export-srt", method = "get", operation_id = "exportSrt")]
    async fn export_srt(
        &self,
        req: &poem::Request,
        auth: ApiKeyAuth,
        state: Data<&Arc<ApiState>>,
        exports: Data<&Arc<Exports>>,
        /// The job's id.
        #[oai(name = "jobId")]
        job_id: Query<String>,
        /// Characters per row, 30 to 45 (default 42).
        #[oai(name = "maxCharsPerRow")]
        max_chars_per_row: Query<Option<i64>>,
        /// Rows per subtitle, 1 or 2 (default 2).
        #[oai(name = "maxNumberOfRows")]
        max_number_of_rows: Query<Option<i64>>,
        /// Seconds a subtitle may stay on screen per row, 1 to 10 (default 2).
        #[oai(name = "maxScreenTimePerRowSeconds")]
        max_screen_time_per_row_seconds: Query<Option<f64>>,
        /// Beyond the spec (there TXT only). true: each subtitle whose speaker differs from the
        /// previous subtitle's starts with `Name: ` (the name given in the editor, else
        /// `Speaker <n>`), counted in `maxCharsPerRow` like the words (a name longer than two
        /// thirds of a row is cut, ending in `…`). Default false: no names, as the spec's SRT.
        #[oai(name = "includeSpeakers")]
        include_speakers: Query<Option<bool>>,
    ) -> Result<SrtResponse, ApiError> {
        let job_id = parse_job_id(&job_id)?;
        let params = SubtitleParams::new(max_chars_per_row.0, max_number_of_rows.0, max_screen_time_per_row_seconds.0)?;
        let export = exportable_job(&state, &exports, &job_id, Some(&auth.0.user))?;
        let format = Format::Srt(params, include_speakers.0.unwrap_or(false));
        let text = rendered(&exports, &export, format).await?;
        let language = text_language(&export.job).to_owned();
        Ok(if wants_plain_text(req, "application/x-subrip") {
            SrtResponse::Plain(RenderedText(text), language)
        } else {
            SrtResponse::Ok(RenderedText(text), language)
        })
    }

    /// The job's subtitles as WebVTT. `includeSpeakers=true` (beyond the spec, which has it for
    /// TXT only) puts each subtitle in a WebVTT voice span, `<v Name>`, naming its speaker.
    ///
    /// A job that is not `DONE` answers 409 Conflict, with a message that says its status. A
    /// parameter out of bounds answers 400 naming it.
    #[allow(clippy::too_many_arguments)]
    #[oai(path = "/jobs/export-vtt", method = "get", operation_id = "exportVtt")]
    async fn export_vtt(
        &self,
        req: &poem::Request,
        auth: ApiKeyAuth,
        state: Data<&Arc<ApiState>>,
        exports: Data<&Arc<Exports>>,
        /// The job's id.
        #[oai(name = "jobId")]
        job_id: Query<String>,
        /// Characters per row, 30 to 45 (default 42).
        #[oai(name = "maxCharsPerRow")]
        max_chars_per_row: Query<Option<i64>>,
        /// Rows per subtitle, 1 or 2 (default 2).
        #[oai(name = "maxNumberOfRows")]
        max_number_of_rows: Query<Option<i64>>,
        /// Seconds a subtitle may stay on screen per row, 1 to 10 (default 2).
        #[oai(name = "maxScreenTimePerRowSeconds")]
        max_screen_time_per_row_seconds: Query<Option<f64>>,
        /// Beyond the spec (there TXT only). true: every subtitle's text is a WebVTT voice span,
        /// `<v Name>` (the name given in the editor, else `Speaker <n>`; `&`, `<`, `>` escaped),
        /// on every subtitle since a span ends with its subtitle. The name is markup that players
        /// do not draw on the row, so rows and times are the same as without it. Default false:
        /// no voice spans, as the spec's VTT.
        #[oai(name = "includeSpeakers")]
        include_speakers: Query<Option<bool>>,
    ) -> Result<VttResponse, ApiError> {
        let job_id = parse_job_id(&job_id)?;
        let params = SubtitleParams::new(max_chars_per_row.0, max_number_of_rows.0, max_screen_time_per_row_seconds.0)?;
        let export = exportable_job(&state, &exports, &job_id, Some(&auth.0.user))?;
        let format = Format::Vtt(params, include_speakers.0.unwrap_or(false));
        let text = rendered(&exports, &export, format).await?;
        let language = text_language(&export.job).to_owned();
        Ok(if wants_plain_text(req, "text/vtt") {
            VttResponse::Plain(RenderedText(text), language)
        } else {
            VttResponse::Ok(RenderedText(text), language)
        })
    }

    /// The job's transcript as plain text: a `HH:MM:SS` line, then `Speaker <n>: <text>`, or
    /// `Name: <text>` for a speaker renamed in the editor (or by a transcriber).
    ///
    /// A job that is not `DONE` answers 409 Conflict, with a message that says its status.
    #[allow(clippy::too_many_arguments)]
    #[oai(path = "/jobs/export-txt", method = "get", operation_id = "exportTxt")]
    async fn export_txt(
        &self,
        auth: ApiKeyAuth,
        state: Data<&Arc<ApiState>>,
        exports: Data<&Arc<Exports>>,
        /// The job's id.
        #[oai(name = "jobId")]
        job_id: Query<String>,
        /// Write the `HH:MM:SS` line before each turn (default true).
        #[oai(name = "includeTimestamps")]
        include_timestamps: Query<Option<bool>>,
        /// Start each turn with `Speaker <n>:`, or the speaker's name when renamed (default true).
        #[oai(name = "includeSpeakers")]
        include_speakers: Query<Option<bool>>,
        /// Only the highlighted passages (default false).
        #[oai(name = "highlightsOnly")]
        highlights_only: Query<Option<bool>>,
        /// Wrap lines at this many characters, 20 to 1000 (default: no wrapping).
        #[oai(name = "maxCharsPerRow")]
        max_chars_per_row: Query<Option<i64>>,
    ) -> Result<TxtResponse, ApiError> {
        let job_id = parse_job_id(&job_id)?;
        let params = TxtParams::new(include_timestamps.0, include_speakers.0, highlights_only.0, max_chars_per_row.0)?;
        let export = exportable_job(&state, &exports, &job_id, Some(&auth.0.user))?;
        let text = rendered(&exports, &export, Format::Txt(params)).await?;
        Ok(TxtResponse::Ok(RenderedText(text), text_language(&export.job).to_owned()))
    }

    /// The job's transcript as the export JSON document (times in seconds; `pristine` is true
    /// for words the speech engine produced untouched; `language`, beyond the spec, says the
    /// language of the words). A translatedSubtitles job exports its translation, with each
    /// sentence on the time span it was spoken in.
    ///
    /// A job that is not `DONE` answers 409 Conflict, with a message that says its status.
    #[oai(path = "/jobs/export-json", method = "get", operation_id = "exportJson")]
    async fn export_json(
        &self,
        auth: ApiKeyAuth,
        state: Data<&Arc<ApiState>>,
        exports: Data<&Arc<Exports>>,
        /// The job's id.
        #[oai(name = "jobId")]
        job_id: Query<String>,
    ) -> Result<JsonResponse, ApiError> {
        let job_id = parse_job_id(&job_id)?;
        let export = exportable_job(&state, &exports, &job_id, Some(&auth.0.user))?;
        let json = rendered(&exports, &export, Format::Json).await?;
        Ok(JsonResponse::Ok(Binary(json), text_language(&export.job).to_owned()))
    }

    /// A link to the job's subtitles as an EBU-STL file (Tech 3264: 25 fps, teletext level 1,
    /// 37 characters per row, the job's language in the header).
    ///
    /// Answers `{"downloadUrl": ...}`: an absolute URL on this server, signed, that serves the
    /// file without an apiKey for one hour (configurable). A job that is not `DONE` answers 409
    /// Conflict, with a message that says its status. A parameter out of bounds answers 400.
    #[allow(clippy::too_many_arguments)]
    #[oai(path = "/jobs/export-stl", method = "get", operation_id = "exportStl")]
    async fn export_stl(
        &self,
        auth: ApiKeyAuth,
        state: Data<&Arc<ApiState>>,
        exports: Data<&Arc<Exports>>,
        links: Data<&Arc<SignedLinks>>,
        /// The job's id.
        #[oai(name = "jobId")]
        job_id: Query<String>,
        /// Rows per subtitle, 1 or 2 (default 2).
        #[oai(name = "maxNumberOfRows")]
        max_number_of_rows: Query<Option<i64>>,
        /// Seconds a subtitle may stay on screen per row, 1 to 10 (default 2).
        #[oai(name = "maxScreenTimePerRowSeconds")]
        max_screen_time_per_row_seconds: Query<Option<f64>>,
    ) -> Result<Json<DownloadLink>, ApiError> {
        let job_id = parse_job_id(&job_id)?;
        let params = SubtitleParams::stl(max_number_of_rows.0, max_screen_time_per_row_seconds.0)?;
        let export = exportable_job(&state, &exports, &job_id, Some(&auth.0.user))?;
        // Rendered now, so that a job that cannot be written as EBU-STL is refused here rather
        // than at download, and the download is served from the cache.
        rendered(&exports, &export, Format::Stl(params, stl_meta(&export.job))).await?;
        let link = StlLink {
            job_id: job_id.as_str().to_owned(),
            rows: params.max_rows() as i64,
            screen: params.max_screen_time_per_row(),
            expires: now_ms() / 1000 + exports.link_ttl.as_secs(),
        };
        Ok(Json(DownloadLink { download_url: links.stl_url(&link).await? }))
    }

    /// Downloads an EBU-STL file through a link made by `/jobs/export-stl`. Needs no apiKey: the
    /// link's signature is the permission.
    ///
    /// A link whose parameters or signature were changed answers 403 (field `sig`); an expired
    /// link answers 410 (field `expires`); either way, ask export-stl for a new link. A job
    /// deleted since the link was made answers 410 (field `jobId`).
    #[allow(clippy::too_many_arguments)]
    #[oai(path = "/downloads/stl", method = "get", operation_id = "downloadStl")]
    async fn download_stl(
        &self,
        state: Data<&Arc<ApiState>>,
        exports: Data<&Arc<Exports>>,
        links: Data<&Arc<SignedLinks>>,
        /// The job's id.
        #[oai(name = "jobId")]
        job_id: Query<String>,
        /// Rows per subtitle, as signed.
        rows: Query<i64>,
        /// Seconds on screen per row, as signed.
        screen: Query<f64>,
        /// When the link expires, Unix seconds.
        expires: Query<u64>,
        /// The link's signature.
        sig: Query<String>,
    ) -> Result<StlFileResponse, ApiError> {
        let link = StlLink { job_id: job_id.0, rows: rows.0, screen: screen.0, expires: expires.0 };
        links.key().await?.verify(&link, &sig, now_ms() / 1000)?;
        let job_id = parse_job_id(&link.job_id)?;
        let params = SubtitleParams::stl(Some(link.rows), Some(link.screen))?;
        let export = exportable_job(&state, &exports, &job_id, None)?;
        let name = stl_file_name(&export.job);
        let bytes = rendered(&exports, &export, Format::Stl(params, stl_meta(&export.job))).await?;
        Ok(StlFileResponse::Ok(Binary(bytes), format!("attachment; filename=\"{name}\"")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_from_unix_milliseconds() {
        let d = |ms| {
            let s = stl_date(ms);
            (s.year, s.month, s.day)
        };
        assert_eq!(d(0), (1970, 1, 1));
        assert_eq!(d(951_782_400_000), (2000, 2, 29));
        assert_eq!(d(1_700_000_000_000), (2023, 11, 14));
        assert_eq!(d(1_798_761_599_999), (2026, 12, 31));
    }

    #[test]
    fn cache_keys_tell_every_parameter_apart() {
        let p = |c, r, s| SubtitleParams::new(Some(c), Some(r), Some(s)).unwrap();
        let variants: Vec<String> = [
            Format::Srt(p(42, 2, 2.0), false),
            Format::Srt(p(30, 2, 2.0), false),
            Format::Srt(p(42, 1, 2.0), false),
            Format::Srt(p(42, 2, 2.5), false),
            Format::Srt(p(42, 2, 2.0), true),
            Format::Vtt(p(42, 2, 2.0), false),
            Format::Vtt(p(42, 2, 2.0), true),
            Format::Txt(TxtParams::default()),
            Format::Txt(TxtParams::new(Some(false), None, None, None).unwrap()),
            Format::Txt(TxtParams::new(None, Some(false), None, None).unwrap()),
            Format::Txt(TxtParams::new(None, None, Some(true), None).unwrap()),
            Format::Txt(TxtParams::new(None, None, None, Some(40)).unwrap()),
            Format::Json,
        ]
        .iter()
        .map(Format::variant)
        .collect();
        let mut unique = variants.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), variants.len(), "{variants:?}");
    }
}
