//! The one error body of the API, `{"status", "error", "message", "field"}`, and every way an
//! error reaches it: the [`ApiError`] handlers return (declared in the OpenAPI document for
//! every operation), the refusals of the domain, and the errors poem and poem-openapi raise on
//! their own (unknown route, wrong method, missing key, unparsable parameter, wrong content
//! type), which [`render_poem_error`] turns into the same body.

use poem::http::{HeaderValue, StatusCode, header};
use poem::{IntoResponse, Response};
use poem_openapi::payload::Json;
use poem_openapi::{ApiResponse, Enum, Object};
use scribe_actors::command::CommandError;
use scribe_domain::ValidationError;
use scribe_domain::glossary::GlossaryRefusal;
use scribe_domain::job::JobRefusal;

/// Machine-readable kind of an error; one per HTTP status, except 400 which tells a bad
/// parameter from an unreadable body.
#[derive(Enum, Debug, Clone, Copy, PartialEq, Eq)]
#[oai(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    /// 400: a parameter (query, path, body field or the uploaded `file`) breaks a rule; `field` names it.
    InvalidParameter,
    /// 400: the body could not be read (malformed JSON or multipart).
    InvalidBody,
    /// 400: the request is not valid HTTP (its request line or a header could not be read).
    MalformedRequest,
    /// 401: the `apiKey` is missing, unknown or revoked.
    Unauthorized,
    /// 402: the account balance does not cover the job.
    InsufficientBalance,
    /// 403: the job or glossary belongs to another account.
    Forbidden,
    /// 404: no such job, glossary or endpoint.
    NotFound,
    /// 405: the endpoint does not accept this method; the `Allow` header lists those it does.
    MethodNotAllowed,
    /// 406: the `Accept` header excludes the endpoint's response format (JSON).
    NotAcceptable,
    /// 408: the request's body stopped arriving (nothing for the server's body timeout).
    RequestTimeout,
    /// 409: the request conflicts with the resource's current state.
    Conflict,
    /// 410: the job or glossary was deleted.
    Gone,
    /// 413: the body is larger than the endpoint accepts.
    PayloadTooLarge,
    /// 414: the URL is longer than the server reads (65,534 bytes).
    UriTooLong,
    /// 415: the body's `Content-Type` is not the one the endpoint reads.
    UnsupportedMediaType,
    /// 416: the `Range` of a media download selects no byte of the file.
    RangeNotSatisfiable,
    /// 429: too many requests for this key; retry after `Retry-After` seconds.
    RateLimited,
    /// 431: the request's headers are larger than the server reads (100 fields, 408 KiB).
    HeadersTooLarge,
    /// 500: the service failed; retry later.
    InternalError,
    /// 503: the service is temporarily unavailable; retry later.
    ServiceUnavailable,
}

impl ErrorCode {
    /// The code of an error status that no handler chose a code for.
    #[allow(clippy::match_overlapping_arm)] // the named codes first, then the rest of each class
    pub fn for_status(status: StatusCode) -> ErrorCode {
        match status.as_u16() {
            400 => ErrorCode::InvalidParameter,
            401 => ErrorCode::Unauthorized,
            402 => ErrorCode::InsufficientBalance,
            403 => ErrorCode::Forbidden,
            404 => ErrorCode::NotFound,
            405 => ErrorCode::MethodNotAllowed,
            406 => ErrorCode::NotAcceptable,
            408 => ErrorCode::RequestTimeout,
            409 => ErrorCode::Conflict,
            410 => ErrorCode::Gone,
            411 | 413 => ErrorCode::PayloadTooLarge,
            414 => ErrorCode::UriTooLong,
            415 => ErrorCode::UnsupportedMediaType,
            416 => ErrorCode::RangeNotSatisfiable,
            429 => ErrorCode::RateLimited,
            431 => ErrorCode::HeadersTooLarge,
            503 => ErrorCode::ServiceUnavailable,
            400..=499 => ErrorCode::InvalidParameter,
            _ => ErrorCode::InternalError,
        }
    }
}

/// The body of every error response.
#[derive(Object, Debug, Clone, PartialEq)]
#[oai(rename_all = "camelCase")]
pub struct ErrorBody {
    /// The HTTP status code, repeated.
    pub status: u16,
    pub error: ErrorCode,
    /// A sentence for a person: what is wrong and, where it helps, what to do.
    pub message: String,
    /// The parameter at fault, spelled as in the request (`numberOfSpeakers`, `items[2].name`,
    /// `file`), when one is.
    #[oai(skip_serializing_if_is_none)]
    pub field: Option<String>,
}

/// Every error an operation can answer with. Each operation declares all of them.
#[derive(ApiResponse, Debug)]
pub enum ApiError {
    /// A parameter or the body is invalid; `field` names the parameter.
    #[oai(status = 400)]
    BadRequest(Json<ErrorBody>),
    /// The `apiKey` is missing, unknown or revoked.
    #[oai(status = 401)]
    Unauthorized(Json<ErrorBody>),
    /// The account balance does not cover the job.
    #[oai(status = 402)]
    PaymentRequired(Json<ErrorBody>),
    /// The job or glossary belongs to another account.
    #[oai(status = 403)]
    Forbidden(Json<ErrorBody>),
    /// No such job, glossary or endpoint.
    #[oai(status = 404)]
    NotFound(Json<ErrorBody>),
    /// Wrong method for this path.
    #[oai(status = 405)]
    MethodNotAllowed(Json<ErrorBody>, #[oai(header = "Allow")] String),
    /// The `Accept` header excludes JSON.
    #[oai(status = 406)]
    NotAcceptable(Json<ErrorBody>),
    /// The request conflicts with the resource's state.
    #[oai(status = 409)]
    Conflict(Json<ErrorBody>),
    /// The job or glossary was deleted.
    #[oai(status = 410)]
    Gone(Json<ErrorBody>),
    /// The body is too large (6 GB for uploads, 1 MiB for JSON bodies).
    #[oai(status = 413)]
    PayloadTooLarge(Json<ErrorBody>),
    /// The URL is longer than the server reads (65,534 bytes).
    #[oai(status = 414)]
    UriTooLong(Json<ErrorBody>),
    /// Wrong `Content-Type` for the body.
    #[oai(status = 415)]
    UnsupportedMediaType(Json<ErrorBody>),
    /// Rate limit reached.
    #[oai(status = 429)]
    TooManyRequests(Json<ErrorBody>, #[oai(header = "Retry-After")] u64),
    /// The request's headers are larger than the server reads (100 fields, 408 KiB).
    #[oai(status = 431)]
    HeadersTooLarge(Json<ErrorBody>),
    /// The service failed.
    #[oai(status = 500)]
    Internal(Json<ErrorBody>),
    /// The service is temporarily unavailable.
    #[oai(status = 503)]
    Unavailable(Json<ErrorBody>, #[oai(header = "Retry-After")] u64),
}

/// Seconds a client is asked to wait after a 503.
const UNAVAILABLE_RETRY_AFTER_S: u64 = 5;

impl ApiError {
    /// An error with the default code of its status.
    pub fn new(status: StatusCode, message: impl Into<String>, field: Option<String>) -> ApiError {
        ApiError::with_code(status, ErrorCode::for_status(status), message, field)
    }

    pub fn with_code(
        status: StatusCode,
        error: ErrorCode,
        message: impl Into<String>,
        field: Option<String>,
    ) -> ApiError {
        let body = Json(ErrorBody { status: status.as_u16(), error, message: message.into(), field });
        match status.as_u16() {
            400 => ApiError::BadRequest(body),
            401 => ApiError::Unauthorized(body),
            402 => ApiError::PaymentRequired(body),
            403 => ApiError::Forbidden(body),
            404 => ApiError::NotFound(body),
            405 => ApiError::MethodNotAllowed(body, String::new()),
            406 => ApiError::NotAcceptable(body),
            409 => ApiError::Conflict(body),
            410 => ApiError::Gone(body),
            413 => ApiError::PayloadTooLarge(body),
            414 => ApiError::UriTooLong(body),
            415 => ApiError::UnsupportedMediaType(body),
            429 => ApiError::TooManyRequests(body, 1),
            431 => ApiError::HeadersTooLarge(body),
            503 => ApiError::Unavailable(body, UNAVAILABLE_RETRY_AFTER_S),
            _ => {
                let mut body = body;
                body.0.status = 500;
                body.0.error = ErrorCode::InternalError;
                ApiError::Internal(body)
            }
        }
    }

    /// 400 naming the parameter.
    pub fn invalid(field: &str, message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message, Some(field.to_owned()))
    }

    /// 400 for an unreadable body.
    pub fn invalid_body(message: impl Into<String>) -> ApiError {
        ApiError::with_code(StatusCode::BAD_REQUEST, ErrorCode::InvalidBody, message, None)
    }

    pub fn unauthorized(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::UNAUTHORIZED, message, Some("apiKey".to_owned()))
    }

    pub fn payment_required(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::PAYMENT_REQUIRED, message, None)
    }

    /// 429 asking the client to wait `retry_after_s` seconds (at least 1).
    pub fn rate_limited(retry_after_s: u64) -> ApiError {
        let retry_after_s = retry_after_s.max(1);
        let body = ErrorBody {
            status: 429,
            error: ErrorCode::RateLimited,
            message: format!("Too many requests for this apiKey; retry in {retry_after_s} s"),
            field: None,
        };
        ApiError::TooManyRequests(Json(body), retry_after_s)
    }

    /// 500 for a failure the client cannot fix. The cause is logged, not shown.
    pub fn internal(context: &str, cause: &dyn std::fmt::Display) -> ApiError {
        tracing::error!(error = %cause, "{context}");
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, format!("{context} failed; please retry later"), None)
    }

    /// 503 for a part of the service that is down for now.
    pub fn unavailable(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, message, None)
    }

    /// The body, whatever the variant.
    pub fn body(&self) -> &ErrorBody {
        match self {
            ApiError::BadRequest(b)
            | ApiError::Unauthorized(b)
            | ApiError::PaymentRequired(b)
            | ApiError::Forbidden(b)
            | ApiError::NotFound(b)
            | ApiError::MethodNotAllowed(b, _)
            | ApiError::NotAcceptable(b)
            | ApiError::Conflict(b)
            | ApiError::Gone(b)
            | ApiError::PayloadTooLarge(b)
            | ApiError::UriTooLong(b)
            | ApiError::UnsupportedMediaType(b)
            | ApiError::TooManyRequests(b, _)
            | ApiError::HeadersTooLarge(b)
            | ApiError::Internal(b)
            | ApiError::Unavailable(b, _) => &b.0,
        }
    }
}

impl From<ValidationError> for ApiError {
    fn from(e: ValidationError) -> ApiError {
        ApiError::invalid(&e.field, e.message)
    }
}

/// 410 for a job that is gone: deleted by its owner, or `expired` (its retention ended).
pub fn deleted_job(job_id: &scribe_domain::ids::JobId, expired: bool) -> ApiError {
    let message = if expired {
        format!("Job {job_id} was deleted: its retention period ended, and its media and transcripts with it")
    } else {
        format!("Job {job_id} was deleted")
    };
    ApiError::new(StatusCode::GONE, message, Some("jobId".to_owned()))
}

/// A response with the common error body for a status no OpenAPI operation declares (408 from
/// the body timeout, 416 from the media link), built directly: [`ApiError`] lists only the
/// statuses every operation documents.
pub fn error_response(status: StatusCode, error: ErrorCode, message: impl Into<String>) -> Response {
    use poem_openapi::types::ToJSON;
    let body = ErrorBody { status: status.as_u16(), error, message: message.into(), field: None };
    Response::builder().status(status).content_type("application/json; charset=utf-8").body(body.to_json_string())
}

/// A refusal's wording (lower case, as the domain words it) as a sentence of the error body.
pub fn sentence(refusal: &impl std::fmt::Display) -> String {
    let text = refusal.to_string();
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| first.to_uppercase().chain(chars).collect())
}

/// What a refused or failed job command means for the client.
pub fn job_error(e: CommandError<JobRefusal>) -> ApiError {
    match e {
        CommandError::Refused(r) => match r {
            JobRefusal::NotFound => {
                ApiError::new(StatusCode::NOT_FOUND, "No job with this jobId", Some("jobId".into()))
            }
            JobRefusal::Forbidden => {
                ApiError::new(StatusCode::FORBIDDEN, "This job belongs to another account", Some("jobId".into()))
            }
            JobRefusal::Deleted => ApiError::new(StatusCode::GONE, "This job was deleted", Some("jobId".into())),
            JobRefusal::SourceNotEligible(msg) => ApiError::invalid("sourceJobId", msg),
            r @ JobRefusal::NoSuchTask(_) => ApiError::new(StatusCode::NOT_FOUND, r.to_string(), Some("taskId".into())),
            JobRefusal::TaskNotForYou(msg) => ApiError::new(StatusCode::FORBIDDEN, msg, Some("taskId".into())),
            r @ JobRefusal::SourceNotDone(_) => {
                ApiError::new(StatusCode::CONFLICT, r.to_string(), Some("sourceJobId".into()))
            }
            other => ApiError::new(StatusCode::CONFLICT, other.to_string(), None),
        },
        CommandError::Unavailable(what) => ApiError::unavailable(format!("The {what} is unavailable; retry shortly")),
        CommandError::TimedOut { actor, after } => ApiError::unavailable(format!(
            "The {actor} did not answer within {} s; look at the job before retrying",
            after.as_secs()
        )),
        other => ApiError::internal("Recording the job", &other),
    }
}

/// What a refused or failed glossary command means for the client.
pub fn glossary_error(e: CommandError<GlossaryRefusal>) -> ApiError {
    let field = Some("glossaryId".to_owned());
    match e {
        CommandError::Refused(r) => match r {
            GlossaryRefusal::NotFound => ApiError::new(StatusCode::NOT_FOUND, "No glossary with this id", field),
            GlossaryRefusal::Forbidden => {
                ApiError::new(StatusCode::FORBIDDEN, "This glossary belongs to another account", field)
            }
            GlossaryRefusal::Deleted => ApiError::new(StatusCode::GONE, "This glossary was deleted", field),
            GlossaryRefusal::AlreadyExists => ApiError::new(StatusCode::CONFLICT, r.to_string(), field),
        },
        CommandError::Unavailable(what) => ApiError::unavailable(format!("The {what} is unavailable; retry shortly")),
        other => ApiError::internal("Recording the glossary", &other),
    }
}

/// Renders an error that did not come from an [`ApiError`] (poem's routing, poem-openapi's
/// parameter and body parsing, auth, content type) in the common body. `allow` is the `Allow`
/// header for a 405.
pub fn render_poem_error(err: poem::Error, allow: Option<&str>) -> Response {
    if err.is_from_response() {
        return err.into_response();
    }
    let status = err.status();
    let api_error = translate(&err, status);
    let mut response = api_error.into_response();
    if status == StatusCode::METHOD_NOT_ALLOWED
        && let Some(value) = allow.and_then(|a| HeaderValue::from_str(a).ok())
    {
        response.headers_mut().insert(header::ALLOW, value);
    }
    response
}

fn translate(err: &poem::Error, status: StatusCode) -> ApiError {
    use poem_openapi::error as oai;
    if let Some(e) = err.downcast_ref::<oai::ParseParamError>() {
        return ApiError::invalid(e.name, crate::contract::parse_failure(e.name, &e.reason));
    }
    if let Some(e) = err.downcast_ref::<oai::ParsePathError>() {
        return ApiError::invalid(e.name, crate::contract::parse_failure(e.name, &e.reason));
    }
    if let Some(e) = err.downcast_ref::<oai::ParseRequestPayloadError>() {
        return ApiError::invalid_body(format!("The request body is invalid: {}", e.reason));
    }
    if err.downcast_ref::<oai::AuthorizationError>().is_some() {
        return key_required();
    }
    if let Some(e) = err.downcast_ref::<oai::ContentTypeError>() {
        return ApiError::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, content_type_message(e), None);
    }
    if let Some(e) = err.downcast_ref::<poem::error::ParseMultipartError>() {
        return match e {
            poem::error::ParseMultipartError::InvalidContentType(_)
            | poem::error::ParseMultipartError::ContentTypeRequired => ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "The body must be multipart/form-data with the media in a part named file",
                None,
            ),
            other => ApiError::invalid_body(format!("The multipart body could not be read: {other}")),
        };
    }
    let message = match status.as_u16() {
        404 => "No such endpoint; see /api/docs for the API".to_owned(),
        405 => "This endpoint does not accept this method; the Allow header lists those it does".to_owned(),
        411 => "A Content-Length header is required".to_owned(),
        413 => "The request body is too large".to_owned(),
        500..=599 => {
            tracing::error!(error = %err, "unhandled error");
            "The service failed; please retry later".to_owned()
        }
        _ => err.to_string(),
    };
    ApiError::new(status, message, None)
}

fn content_type_message(e: &poem_openapi::error::ContentTypeError) -> String {
    match e {
        poem_openapi::error::ContentTypeError::NotSupported { content_type } => {
            format!("Content-Type {content_type} is not supported here; send application/json")
        }
        poem_openapi::error::ContentTypeError::ExpectContentType => {
            "A Content-Type header is required; send application/json".to_owned()
        }
    }
}

/// The refusal of a request without a key.
pub fn key_required() -> ApiError {
    ApiError::unauthorized(
        "apiKey is required: pass your API key in the apiKey query parameter or as a Bearer token (Authorization: Bearer <key>)",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn body_of(response: Response) -> serde_json::Value {
        let bytes = response.into_body().into_bytes().await.unwrap();
        serde_json::from_slice(&bytes).unwrap()
    }

    #[tokio::test]
    async fn validation_errors_become_400_naming_the_field() {
        let e: ApiError = ValidationError::new("numberOfSpeakers", "numberOfSpeakers must be between 0 and 5").into();
        let response = e.into_response();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
        assert_eq!(
            body_of(response).await,
            serde_json::json!({"status": 400, "error": "INVALID_PARAMETER",
                "message": "numberOfSpeakers must be between 0 and 5", "field": "numberOfSpeakers"})
        );
    }

    #[tokio::test]
    async fn poem_errors_get_the_same_body() {
        let not_found = render_poem_error(poem::error::NotFoundError.into(), None);
        assert_eq!(not_found.status(), StatusCode::NOT_FOUND);
        assert_eq!(body_of(not_found).await["error"], "NOT_FOUND");

        let wrong_method = render_poem_error(poem::error::MethodNotAllowedError.into(), Some("GET, DELETE"));
        assert_eq!(wrong_method.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(wrong_method.headers().get(header::ALLOW).unwrap(), "GET, DELETE");
        assert_eq!(body_of(wrong_method).await["error"], "METHOD_NOT_ALLOWED");

        let param = poem_openapi::error::ParseParamError { name: "page", reason: "not an integer".into() };
        let response = render_poem_error(param.into(), None);
        let body = body_of(response).await;
        assert_eq!((body["status"].as_u64(), body["field"].as_str()), (Some(400), Some("page")));

        let missing_key = render_poem_error(poem_openapi::error::AuthorizationError.into(), None);
        assert_eq!(missing_key.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(body_of(missing_key).await["field"], "apiKey");
    }

    #[tokio::test]
    async fn rate_limits_carry_retry_after() {
        let response = ApiError::rate_limited(0).into_response();
        assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(response.headers().get(header::RETRY_AFTER).unwrap(), "1");
    }

    #[test]
    fn refusals_map_to_their_statuses() {
        let status = |e: ApiError| e.body().status;
        assert_eq!(status(job_error(CommandError::Refused(JobRefusal::NotFound))), 404);
        assert_eq!(status(job_error(CommandError::Refused(JobRefusal::Forbidden))), 403);
        assert_eq!(status(job_error(CommandError::Refused(JobRefusal::Deleted))), 410);
        assert_eq!(status(glossary_error(CommandError::Refused(GlossaryRefusal::Deleted))), 410);
        assert_eq!(status(job_error(CommandError::Unavailable("job actor"))), 503);
    }
}
