//! What happens to every request around its handler: the strict query check (a parameter the
//! operation does not take, or one given twice: 400, see `strict_query`), the 406 check against
//! the operation's media types (both after the API key: an unauthenticated request is told 401
//! first), the body cap of non-upload endpoints (413), the common error body for errors
//! poem raised itself (with `Allow` on a 405), the access log line (debug; warn for server errors), and the latency metric.
//! It also tells the connection that a request is in flight, and puts the body timeout on the
//! request body (408 when the body stops arriving; see [`crate::connections`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use http_body_util::combinators::BoxBody;
use poem::http::{HeaderValue, StatusCode, header};
use poem::{Body, Endpoint, IntoResponse, Request, Response};
use tokio::io::AsyncReadExt;

use crate::auth::{API_KEY_PARAM, Keys};
use crate::connections::StallGuard;
use crate::error::{ApiError, ErrorCode, error_response, render_poem_error};
use crate::metrics::Metrics;
use crate::negotiate::acceptable;
use crate::routes::{RouteEntry, RouteTable};
use crate::state::ApiState;
use crate::strict_query;

/// Paths outside the OpenAPI document that get their own metrics label.
const FIXED_ROUTES: &[&str] = &["/metrics", "/health", "/api/openapi.json", "/api/asyncapi.json"];
/// The one endpoint whose body is not capped here (it enforces its own, larger cap while streaming).
const UPLOAD_ROUTE: &str = "/api/jobs/upload-media";
/// The OpenAI door's routes, whose errors are told in OpenAI's shape.
const OPENAI_ROUTES: &str = "/api/v1/";

/// Whether the route receives media (and enforces the upload cap itself while streaming it).
fn receives_media(template: &str) -> bool {
    template == UPLOAD_ROUTE || crate::openai::MEDIA_ROUTES.contains(&template)
}

/// `/v1/...` is the OpenAI door at the root, where OpenAI clients expect it (base URL
/// `http://HOST/v1`): the same routes as `/api/v1/...`.
fn openai_alias(req: &mut Request) {
    let path = req.uri().path();
    if path != crate::openai::ROOT_PREFIX && !path.starts_with("/v1/") {
        return;
    }
    let rewritten = match req.uri().query() {
        Some(query) => format!("/api{path}?{query}"),
        None => format!("/api{path}"),
    };
    if let Ok(uri) = rewritten.parse() {
        *req.uri_mut() = uri;
    }
}

/// An error raised around the OpenAI door (by this edge or the framework) in the API's own
/// shape, rewritten into OpenAI's; every other response passes untouched.
async fn openai_dialect(mut response: Response) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || !is_json {
        return response;
    }
    let Ok(body) = response.take_body().into_bytes().await else { return response };
    match crate::openai::errors::rewrite_error_body(status, &body) {
        Some(rewritten) => {
            response.headers_mut().remove(header::CONTENT_LENGTH);
            response.set_body(rewritten);
        }
        None => response.set_body(body),
    }
    response
}
/// How much of a refused request's body is read (and dropped) so that the client, still sending,
/// receives the answer rather than a reset connection. It is far above the JSON cap: a body a
/// little over the cap is the usual 413, and its client must hear it.
const DRAIN_BYTES: u64 = 64 << 20;

pub struct Edge {
    routes: RouteTable,
    metrics: Arc<Metrics>,
    max_body_bytes: u64,
    state: Arc<ApiState>,
    /// Unknown keys spend from their address's budget here too, or a bad `Accept` header would
    /// tell a guessed key (406) from a wrong one (401) without limit.
    keys: Arc<Keys>,
}

impl Edge {
    pub fn new(
        routes: RouteTable,
        metrics: Arc<Metrics>,
        max_body_bytes: u64,
        state: Arc<ApiState>,
        keys: Arc<Keys>,
    ) -> Edge {
        Edge { routes, metrics, max_body_bytes, state, keys }
    }

    pub async fn handle<E: Endpoint>(&self, ep: Arc<E>, mut req: Request) -> poem::Result<Response> {
        let started = Instant::now();
        openai_alias(&mut req);
        let method = req.method().clone();
        let path = req.uri().path().to_owned();
        let route = self.routes.find(&path);
        let in_flight = self.state.connections.request_started(req.remote_addr());
        let stalled = self.guard_body(&mut req);
        let mut response = match self.admit(&mut req, route).await {
            Err(refused) => {
                drain(&mut req).await;
                refused.into_response()
            }
            Ok(()) => match ep.call(req).await {
                Ok(output) => output.into_response(),
                Err(err) => render_poem_error(err, route.map(RouteEntry::allow).as_deref()),
            },
        };
        if stalled.is_some_and(|s| s.load(Ordering::Relaxed)) {
            let timeout = self.state.settings.connections.body_timeout;
            response = error_response(
                StatusCode::REQUEST_TIMEOUT,
                ErrorCode::RequestTimeout,
                format!(
                    "The request body stopped arriving: nothing came for {timeout:?} (the server's body timeout); send it again"
                ),
            );
            response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        drop(in_flight);
        if path.starts_with(OPENAI_ROUTES) {
            response = openai_dialect(response).await;
        }
        let status = response.status();
        let elapsed = started.elapsed();
        let label = match route {
            Some(r) => r.template.as_str(),
            None if FIXED_ROUTES.contains(&path.as_str()) => path.as_str(),
            None if path.starts_with("/api/docs") => "/api/docs",
            None => "other",
        };
        self.metrics.observe(method.as_str(), label, status, elapsed);
        // A line per request is a formatted write to stderr on every call, a visible cost on
        // `scribe-bench status`: server errors are warnings, the rest is debug
        // (`SCRIBE_LOG=scribe_api=debug` shows every request).
        let latency_ms = elapsed.as_secs_f64() * 1000.0;
        if status.is_server_error() {
            tracing::warn!(method = %method, path = %path, status = status.as_u16(), latency_ms, "request");
        } else {
            tracing::debug!(method = %method, path = %path, status = status.as_u16(), latency_ms, "request");
        }
        Ok(response)
    }

    /// Puts the body timeout on a request that has a body; the flag says whether it fired.
    fn guard_body(&self, req: &mut Request) -> Option<Arc<AtomicBool>> {
        let headers = req.headers();
        let declared = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.trim().parse::<u64>().ok());
        let has_body = declared.is_some_and(|n| n > 0) || headers.contains_key(header::TRANSFER_ENCODING);
        if !has_body {
            return None;
        }
        let stalled = Arc::new(AtomicBool::new(false));
        let body: BoxBody<bytes::Bytes, std::io::Error> = req.take_body().into();
        let guarded = StallGuard::new(body, self.state.settings.connections.body_timeout, stalled.clone());
        req.set_body(Body::from(BoxBody::new(guarded)));
        Some(stalled)
    }

    /// Refuses, before the handler runs, a request whose `Accept` excludes every media type
    /// the operation answers with (406), or whose body is over the cap (413).
    async fn admit(&self, req: &mut Request, route: Option<&RouteEntry>) -> Result<(), ApiError> {
        let Some(route) = route else { return Ok(()) };
        if let Some(params) = route.query_params(req.method()) {
            let query = req.uri().query();
            if let Err(refused) = strict_query::check(params, query) {
                // Who is asking comes first, unless the key itself is given twice.
                if route.is_secured(req.method()) && !strict_query::repeats(query, API_KEY_PARAM) {
                    self.require_known_key(req).await?;
                }
                return Err(refused);
            }
        }
        if let Some(produces) = route.produces(req.method()).filter(|p| !p.is_empty())
            && let Some(accept) = req.headers().get(header::ACCEPT).and_then(|v| v.to_str().ok())
            && !acceptable(accept, produces)
        {
            // Who is asking comes first: an unauthenticated request learns only that.
            if route.is_secured(req.method()) {
                self.require_known_key(req).await?;
            }
            let offered: Vec<&str> = produces.iter().map(|t| t.split(';').next().unwrap_or(t).trim()).collect();
            return Err(ApiError::new(
                StatusCode::NOT_ACCEPTABLE,
                format!(
                    "The Accept header excludes {}, the only format this endpoint answers with",
                    offered.join(", ")
                ),
                None,
            ));
        }
        if [crate::work::DOCUMENT_ROUTE, crate::editor::DOCUMENT_ROUTE, crate::subtitle_preview::PREVIEW_ROUTE]
            .contains(&route.template.as_str())
        {
            self.cap_body(req, crate::work::MAX_DOCUMENT_BYTES).await?;
        } else if !receives_media(&route.template) {
            self.cap_body(req, self.max_body_bytes).await?;
        }
        Ok(())
    }

    /// 401 unless the request carries the key of some account, in `apiKey` or as a Bearer token
    /// (roles and rate limits are the handler's business; this only decides whether another
    /// refusal may be told).
    async fn require_known_key(&self, req: &Request) -> Result<(), ApiError> {
        self.keys.authenticate_request(req, false).await.map(|_| ())
    }

    async fn cap_body(&self, req: &mut Request, max_body_bytes: u64) -> Result<(), ApiError> {
        let too_large = || {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("The request body is larger than the limit of {max_body_bytes} bytes"),
                None,
            )
        };
        let declared = req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
        match declared {
            Some(n) if n > max_body_bytes => Err(too_large()),
            Some(_) => Ok(()), // the server reads no more than Content-Length
            // Chunked (or in-process) bodies: read up to the cap, then hand the bytes on.
            None => {
                let mut bytes = Vec::new();
                Box::pin(req.take_body().into_async_read().take(max_body_bytes + 1))
                    .read_to_end(&mut bytes)
                    .await
                    .map_err(|e| ApiError::invalid_body(format!("The request body could not be read: {e}")))?;
                if bytes.len() as u64 > max_body_bytes {
                    return Err(too_large());
                }
                req.set_body(Body::from(bytes));
                Ok(())
            }
        }
    }
}

/// Reads and drops the body of a refused request (up to [`DRAIN_BYTES`]), so that a client still
/// sending it hears the refusal; a body announced past that is left unread and the connection
/// closes.
async fn drain(req: &mut Request) {
    let declared = req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > DRAIN_BYTES) {
        return;
    }
    let mut sink = tokio::io::sink();
    let _ = tokio::io::copy(&mut Box::pin(req.take_body().into_async_read().take(DRAIN_BYTES)), &mut sink).await;
}
