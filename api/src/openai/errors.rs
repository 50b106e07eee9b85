//! Errors in OpenAI's shape, `{"error": {"message", "type", "param", "code"}}`, with the status
//! codes OpenAI uses. The door answers with [`OpenAiError`]; an error the edge raised before the
//! door ran (a missing key, a rate limit, a body too large) is rewritten into the same shape by
//! [`rewrite_error_body`], so a client of `/v1` never sees the spec API's error body.

use poem::http::StatusCode;
use poem_openapi::payload::Json;
use poem_openapi::types::{ParseFromJSON, ToJSON};
use poem_openapi::{ApiResponse, Enum, Object};
use scribe_domain::openai::{Refusal, RefusalKind};

use crate::error::{ApiError, ErrorBody, ErrorCode};

/// OpenAI's error body.
#[derive(Object, Debug, Clone, PartialEq)]
pub struct OpenAiErrorBody {
    pub error: OpenAiErrorObject,
}

/// What went wrong.
#[derive(Object, Debug, Clone, PartialEq)]
pub struct OpenAiErrorObject {
    /// A sentence for a person: what is wrong and, where it helps, what to do.
    pub message: String,
    // No doc comment: a described reference is written as `allOf`, which generated clients
    // cannot take for an enum. `ErrorType` describes itself.
    #[oai(rename = "type")]
    pub kind: ErrorType,
    /// The form field at fault, or `null`.
    pub param: Option<String>,
    /// A machine-readable reason (`invalid_api_key`, `model_not_found`, `insufficient_balance`,
    /// `rate_limit_exceeded`, `job_still_running`, ...), or `null`.
    pub code: Option<String>,
    /// Beyond OpenAI's object: the job the request made, when it outlives the request (504).
    #[oai(skip_serializing_if_is_none)]
    pub job_id: Option<String>,
}

/// OpenAI's kinds of error (`type`): `invalid_request_error`, `insufficient_quota`,
/// `requests` (rate limits) or `server_error`.
#[derive(Enum, Debug, Clone, Copy, PartialEq, Eq)]
#[oai(rename_all = "snake_case")]
pub enum ErrorType {
    InvalidRequestError,
    InsufficientQuota,
    /// Rate limits.
    Requests,
    ServerError,
}

/// Every error of the OpenAI door.
#[derive(ApiResponse, Debug)]
pub enum OpenAiError {
    /// A field is missing or invalid, the file is not media, or recognition failed on it.
    #[oai(status = 400)]
    BadRequest(Json<OpenAiErrorBody>),
    /// The API key is missing, unknown or revoked.
    #[oai(status = 401)]
    Unauthorized(Json<OpenAiErrorBody>),
    /// The account balance does not cover the job (`insufficient_balance`).
    #[oai(status = 402)]
    PaymentRequired(Json<OpenAiErrorBody>),
    /// A staff key (transcribers and translators use the Work API).
    #[oai(status = 403)]
    Forbidden(Json<OpenAiErrorBody>),
    /// No such model (`model_not_found`).
    #[oai(status = 404)]
    NotFound(Json<OpenAiErrorBody>),
    /// The file is larger than the upload limit (6 GB).
    #[oai(status = 413)]
    PayloadTooLarge(Json<OpenAiErrorBody>),
    /// The body is not `multipart/form-data`.
    #[oai(status = 415)]
    UnsupportedMediaType(Json<OpenAiErrorBody>),
    /// Rate limit reached; retry after `Retry-After` seconds.
    #[oai(status = 429)]
    TooManyRequests(Json<OpenAiErrorBody>, #[oai(header = "Retry-After")] u64),
    /// The service failed.
    #[oai(status = 500)]
    Internal(Json<OpenAiErrorBody>),
    /// The job is still running after the server's wait (`--openai-wait`): it stays, is charged
    /// once, and its result is read with the jobs API (`error.job_id`). Not to be retried.
    #[oai(status = 504)]
    StillRunning(Json<OpenAiErrorBody>, #[oai(header = "x-should-retry")] bool),
}

impl OpenAiError {
    fn body(message: String, kind: ErrorType, param: Option<String>, code: Option<&str>) -> Json<OpenAiErrorBody> {
        Json(OpenAiErrorBody {
            error: OpenAiErrorObject { message, kind, param, code: code.map(str::to_owned), job_id: None },
        })
    }

    /// 400 naming the field.
    pub fn invalid(param: &str, code: &str, message: impl Into<String>) -> OpenAiError {
        OpenAiError::BadRequest(Self::body(message.into(), INVALID, Some(param.to_owned()), Some(code)))
    }

    /// 404 for a model that is not installed.
    pub fn unknown_model(model: &str) -> OpenAiError {
        OpenAiError::from(Refusal::unknown_model(model))
    }

    /// The job failed: its reason, as a 400 (the media could not be transcribed; it was refunded).
    pub fn job_failed(job_id: &str, reason: &str) -> OpenAiError {
        let message = format!("{reason} (job {job_id}; nothing is charged for it)");
        OpenAiError::BadRequest(Self::body(message, INVALID, Some("file".to_owned()), Some("transcription_failed")))
    }

    /// 504: the job outlived the wait; the client is told where to find it.
    pub fn still_running(job_id: &str, waited_s: u64) -> OpenAiError {
        let message = format!(
            "The transcription is taking longer than this server waits ({waited_s} s). Job {job_id} is still \
             running and is charged once: do not send the file again; read its status with \
             GET /api/jobs/status?jobId={job_id} and its transcript with GET /api/jobs/export-json?jobId={job_id} \
             (or export-txt, export-srt, export-vtt) once it is DONE"
        );
        let mut body = Self::body(message, SERVER_ERROR, None, Some("job_still_running"));
        body.0.error.job_id = Some(job_id.to_owned());
        OpenAiError::StillRunning(body, false)
    }

    /// The error object, for an error event of a stream.
    pub fn object(&self) -> &OpenAiErrorBody {
        match self {
            OpenAiError::BadRequest(b)
            | OpenAiError::Unauthorized(b)
            | OpenAiError::PaymentRequired(b)
            | OpenAiError::Forbidden(b)
            | OpenAiError::NotFound(b)
            | OpenAiError::PayloadTooLarge(b)
            | OpenAiError::UnsupportedMediaType(b)
            | OpenAiError::TooManyRequests(b, _)
            | OpenAiError::Internal(b)
            | OpenAiError::StillRunning(b, _) => &b.0,
        }
    }
}

const INVALID: ErrorType = ErrorType::InvalidRequestError;
const SERVER_ERROR: ErrorType = ErrorType::ServerError;

impl From<Refusal> for OpenAiError {
    fn from(r: Refusal) -> OpenAiError {
        let body = OpenAiError::body(r.message, INVALID, r.param, Some(r.code));
        match r.kind {
            RefusalKind::Invalid => OpenAiError::BadRequest(body),
            RefusalKind::UnknownModel => OpenAiError::NotFound(body),
        }
    }
}

/// An error of the spec API's kind (the shared upload, billing and auth code answers with
/// them), told in OpenAI's terms.
impl From<ApiError> for OpenAiError {
    fn from(e: ApiError) -> OpenAiError {
        let (status, body, retry_after) = parts(e);
        let (kind, code) = dialect(status, body.error, body.field.as_deref());
        let json = OpenAiError::body(body.message, kind, body.field, code);
        match status {
            400 => OpenAiError::BadRequest(json),
            401 => OpenAiError::Unauthorized(json),
            402 => OpenAiError::PaymentRequired(json),
            403 => OpenAiError::Forbidden(json),
            404 => OpenAiError::NotFound(json),
            413 => OpenAiError::PayloadTooLarge(json),
            415 => OpenAiError::UnsupportedMediaType(json),
            429 => OpenAiError::TooManyRequests(json, retry_after.unwrap_or(1)),
            // 409, 410 ... do not arise on this door's paths; a 4xx stays a client error.
            s if (400..500).contains(&s) => OpenAiError::BadRequest(json),
            _ => OpenAiError::Internal(json),
        }
    }
}

fn parts(e: ApiError) -> (u16, ErrorBody, Option<u64>) {
    match e {
        ApiError::TooManyRequests(b, retry) | ApiError::Unavailable(b, retry) => (b.0.status, b.0, Some(retry)),
        ApiError::MethodNotAllowed(b, _) => (b.0.status, b.0, None),
        ApiError::BadRequest(b)
        | ApiError::Unauthorized(b)
        | ApiError::PaymentRequired(b)
        | ApiError::Forbidden(b)
        | ApiError::NotFound(b)
        | ApiError::NotAcceptable(b)
        | ApiError::Conflict(b)
        | ApiError::Gone(b)
        | ApiError::PayloadTooLarge(b)
        | ApiError::UriTooLong(b)
        | ApiError::UnsupportedMediaType(b)
        | ApiError::HeadersTooLarge(b)
        | ApiError::Internal(b) => (b.0.status, b.0, None),
    }
}

/// OpenAI's `type` and `code` for one of the API's errors.
fn dialect(status: u16, error: ErrorCode, field: Option<&str>) -> (ErrorType, Option<&'static str>) {
    match (status, error) {
        (401, _) => (INVALID, Some("invalid_api_key")),
        (402, _) => (ErrorType::InsufficientQuota, Some("insufficient_balance")),
        (403, _) => (INVALID, Some("permission_denied")),
        (404, _) => (INVALID, Some("not_found")),
        (413, _) => (INVALID, Some(if field == Some("file") { "file_too_large" } else { "request_too_large" })),
        (415, _) => (INVALID, Some("unsupported_media_type")),
        (429, _) => (ErrorType::Requests, Some("rate_limit_exceeded")),
        (_, ErrorCode::InvalidParameter) if field == Some("file") => (INVALID, Some("invalid_file")),
        (_, ErrorCode::InvalidParameter) => (INVALID, Some("invalid_value")),
        (_, ErrorCode::InvalidBody) => (INVALID, Some("invalid_body")),
        (s, _) if s >= 500 => (SERVER_ERROR, None),
        _ => (INVALID, None),
    }
}

/// The spec API's error body `{"status", "error", "message", "field"}` rewritten into OpenAI's,
/// for errors raised around the door (by the edge or the framework); `None` when `body` is not
/// such a body (it is passed on untouched).
pub fn rewrite_error_body(status: StatusCode, body: &[u8]) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let parsed = ErrorBody::parse_from_json(Some(value)).ok()?;
    let (kind, code) = dialect(status.as_u16(), parsed.error, parsed.field.as_deref());
    let body = OpenAiErrorBody {
        error: OpenAiErrorObject {
            message: parsed.message,
            kind,
            param: parsed.field,
            code: code.map(str::to_owned),
            job_id: None,
        },
    };
    Some(body.to_json_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_key_becomes_invalid_api_key() {
        let body = br#"{"status":401,"error":"UNAUTHORIZED","message":"no key","field":"apiKey"}"#;
        let v: serde_json::Value =
            serde_json::from_str(&rewrite_error_body(StatusCode::UNAUTHORIZED, body).unwrap()).unwrap();
        assert_eq!(v["error"]["code"], "invalid_api_key");
        assert_eq!(v["error"]["type"], "invalid_request_error");
        assert_eq!(v["error"]["param"], "apiKey");
        assert_eq!(v["error"]["message"], "no key");
    }

    #[test]
    fn a_rate_limit_keeps_its_retry_after() {
        let e = OpenAiError::from(ApiError::rate_limited(7));
        let OpenAiError::TooManyRequests(body, retry) = e else { panic!("429") };
        assert_eq!(retry, 7);
        assert_eq!(body.0.error.kind, ErrorType::Requests);
        assert_eq!(body.0.error.code.as_deref(), Some("rate_limit_exceeded"));
    }

    #[test]
    fn an_openai_body_is_left_alone() {
        assert!(rewrite_error_body(StatusCode::BAD_REQUEST, br#"{"error":{"message":"m"}}"#).is_none());
    }
}
