//! Scribe's HTTP edge: the endpoints of the API under `/api` (poem-openapi), authentication by
//! API key (`apiKey` or a Bearer token), strict query strings, one JSON error body for every error, rate limits, the OpenAPI document
//! (`/api/openapi.json`), Swagger UI (`/api/docs`, served offline), the AsyncAPI document of the
//! live WebSocket ([`asyncapi`], `/api/asyncapi.json`), `/metrics` and `/health`.
//!
//! Handlers stay thin: parse, let the domain validate, send a command or query a read model,
//! shape the answer. One module per resource:
//!
//! | module | endpoints |
//! |---|---|
//! | [`jobs`] | `GET /jobs/status`, `GET /jobs`, `DELETE /jobs`, `POST /jobs/upload-media-from-url` |
//! | [`upload`] | `POST /jobs/upload-media` (streamed multipart) |
//! | [`glossaries`] | `GET`/`POST /glossary`, `PUT`/`DELETE /glossary/{glossaryId}` |
//! | [`capabilities`] | `GET /capabilities` (beyond the spec: languages, auto-detect set, translation targets) |
//! | [`exports`] | `GET /jobs/export-srt`, `-vtt`, `-txt`, `-json`, `-stl`; `GET /downloads/stl` (signed, no apiKey) |
//! | [`work`] | `GET /work/tasks`, `GET /work/tasks/{taskId}`, `POST .../claim`, `PUT .../document`, `POST .../submit`, `POST .../release`; `GET /work/media` (signed) |
//! | [`editor`] | `GET /me`, `GET`/`PUT /jobs/document` (the web app's editor; beyond the spec) |
//! | [`peaks`] | `GET /work/media/peaks` (signed, no apiKey: the editor's waveform) |
//! | [`subtitle_preview`] | `POST /subtitles/preview` (the editor's subtitle preview, the export's layout) |
//! | [`openai`] | `POST /v1/audio/transcriptions`, `POST /v1/audio/translations`, `GET /v1/models[/{model}]` (also at `/v1`) |
//!
//! The web app (`/`, `/app/...`) is served by [`webapp`] from files embedded in the binary.
//!
//! `POST /jobs/translatedSubtitles` lives in [`jobs`]. A new resource is one more `#[OpenApi]`
//! struct added to the tuple in [`api_service`]; routing, `Allow`, 406 and metrics labels follow
//! from the document.
//!
//! ```no_run
//! # async fn serve(state: scribe_api::ApiState) -> std::io::Result<()> {
//! use poem::{Server, listener::TcpListener};
//! Server::new(TcpListener::bind("127.0.0.1:8080")).run(scribe_api::app(state)).await
//! # }
//! ```

pub mod asyncapi;
pub mod auth;
pub mod byte_ranges;
pub mod capabilities;
pub mod connections;
pub mod contract;
pub mod edge;
pub mod editor;
pub mod error;
pub mod exports;
pub mod glossaries;
pub mod jobs;
pub mod live;
pub mod metrics;
pub mod model;
pub mod negotiate;
pub mod openai;
pub mod peaks;
pub mod refusals;
pub mod routes;
pub mod signed_links;
pub mod state;
pub mod strict_json;
pub mod strict_query;
pub mod submit;
pub mod subtitle_preview;
pub mod upload;
pub mod webapp;
pub mod work;

use std::sync::Arc;

use poem::endpoint::make_sync;
use poem::web::{Html, Json};
use poem::{Endpoint, EndpointExt, Route, get, handler};
use poem_openapi::{OpenApiService, Tags};

pub use auth::{Caller, hash_api_key};
pub use error::{ApiError, ErrorBody, ErrorCode};
pub use state::{ApiSettings, ApiState};

use crate::auth::Keys;
use crate::capabilities::CapabilitiesApi;
use crate::edge::Edge;
use crate::editor::EditorApi;
use crate::exports::{Exports, ExportsApi};
use crate::glossaries::GlossaryApi;
use crate::jobs::JobsApi;
use crate::metrics::Metrics;
use crate::openai::OpenAiApi;
use crate::peaks::PeaksApi;
use crate::routes::RouteTable;
use crate::signed_links::SignedLinks;
use crate::subtitle_preview::SubtitlePreviewApi;
use crate::upload::UploadApi;
use crate::work::WorkApi;

/// Where the API is served.
pub const API_PREFIX: &str = "/api";

#[derive(Tags)]
pub enum ApiTags {
    /// Submit media, follow and delete jobs.
    Jobs,
    /// Lists of names and terms that guide recognition.
    Glossaries,
    /// Transcripts and subtitles of finished jobs.
    Exports,
    /// For transcribers and translators (staff keys): the tasks of manual jobs.
    Work,
    /// OpenAI's audio API (`/v1`, also served at the root: base URL `http://HOST/v1`), for the
    /// tools that speak it: the same jobs, accounts and billing; errors in OpenAI's shape.
    #[oai(rename = "OpenAI")]
    OpenAi,
}

type Apis = (
    JobsApi,
    UploadApi,
    GlossaryApi,
    ExportsApi,
    WorkApi,
    CapabilitiesApi,
    EditorApi,
    OpenAiApi,
    PeaksApi,
    SubtitlePreviewApi,
);

const DESCRIPTION: &str = "Transcription and subtitling. Every endpoint takes the API key in the `apiKey` query \
parameter or as a Bearer token (`Authorization: Bearer <key>`); both at once must be the same key (else 400). \
Query strings are strict: a parameter an endpoint does not take, or one given twice, is a 400 naming it. \
Errors share one body: `{\"status\": 400, \"error\": \"INVALID_PARAMETER\", \"message\": \"...\", \
\"field\": \"numberOfSpeakers\"}` (`field` only when one parameter is at fault). Successful calls answer 200. \
Another account's job or glossary answers 403, an unknown one 404, a deleted one 410. A `glossaryId` given \
at upload follows the same rule (404/403/410, field `glossaryId`). Rate limit: per API key, 20 requests per \
second sustained with bursts of 50 by default; past it, 429 with `Retry-After`. Unknown keys are limited per \
client address (bursts of 100, then 60 a minute by default; the TCP peer, not `X-Forwarded-For`): past it, 429 with \
`Retry-After` for every key not already used from that address. Billing: uploads are charged at \
submission for their probed duration; URL jobs need the price of one minute at submission (402 otherwise). \
Manual (`perfect`) jobs are finished by people: transcribers and translators use the Work endpoints with \
staff keys (a staff key on a customer endpoint, or a customer key on a Work endpoint, answers 403). \
Turnaround times count calendar days from the job's creation. The live transcription WebSocket API \
(`/api/real-time`) is described in AsyncAPI at [/api/asyncapi.json](/api/asyncapi.json). OpenAI's audio \
API is served under `/api/v1` and `/v1` (tag OpenAI): point an OpenAI client's base URL at `http://HOST/v1` \
with a Scribe key; its errors are in OpenAI's shape `{\"error\": {\"message\", \"type\", \"param\", \"code\"}}`.";

/// The OpenAPI service of every endpoint, served under [`API_PREFIX`].
pub fn api_service() -> OpenApiService<Apis, ()> {
    OpenApiService::new(
        (
            JobsApi,
            UploadApi,
            GlossaryApi,
            ExportsApi,
            WorkApi,
            CapabilitiesApi,
            EditorApi,
            OpenAiApi,
            PeaksApi,
            SubtitlePreviewApi,
        ),
        "Scribe",
        env!("CARGO_PKG_VERSION"),
    )
    .description(DESCRIPTION)
    .server(API_PREFIX)
}

/// The OpenAPI document (JSON), as served at `/api/openapi.json`: poem-openapi's, completed
/// with every rule the domain enforces ([`contract::complete`]).
pub fn openapi_json() -> String {
    openapi_document(&api_service().spec())
}

fn openapi_document(generated: &str) -> String {
    let mut doc: serde_json::Value = serde_json::from_str(generated).expect("poem-openapi writes valid JSON");
    contract::complete(&mut doc);
    serde_json::to_string_pretty(&doc).expect("a JSON value serializes")
}

/// The whole HTTP application: `/api/...`, `/api/openapi.json`, `/api/docs`, `/metrics`, `/health`.
pub fn app(state: ApiState) -> impl Endpoint {
    let service = api_service();
    let generated = service.spec();
    let document = openapi_document(&generated);
    let spec: serde_json::Value = serde_json::from_str(&document).expect("a JSON document");
    let routes = RouteTable::from_spec(API_PREFIX, &spec);
    // Swagger UI embeds the document: the completed one replaces poem-openapi's.
    let docs_html = service.swagger_ui_html().replace(&generated, &document);
    let docs = make_sync(move |_| Html(docs_html.clone()));
    let spec_endpoint =
        make_sync(move |_| poem::Response::builder().content_type("application/json").body(document.clone()));
    let metrics = Arc::new(Metrics::new(state.pipeline_dispatches.clone(), state.live.decodes()));
    let keys = Arc::new(Keys::new(state.read.clone(), state.store.clone(), &state.settings));
    let state = Arc::new(state);
    let edge =
        Arc::new(Edge::new(routes, metrics.clone(), state.settings.max_json_body_bytes, state.clone(), keys.clone()));
    let links = Arc::new(SignedLinks::new(state.data_dir.clone(), &state.settings));
    let exports = Arc::new(Exports::new(state.data_dir.clone(), &state.settings));
    Route::new()
        .at(format!("{API_PREFIX}{}", signed_links::MEDIA_PATH), get(work::media))
        .nest(API_PREFIX, service)
        .nest("/api/docs", docs)
        .at("/api/openapi.json", spec_endpoint)
        .at("/api/real-time", get(live::real_time))
        .at("/real-time", get(live::real_time))
        .at("/real-time/", get(live::real_time))
        .at(asyncapi::ASYNCAPI_PATH, get(asyncapi::asyncapi))
        .at("/metrics", get(metrics::metrics))
        .at("/health", get(health))
        .at("/", webapp::index())
        .at("/favicon.ico", webapp::favicon())
        .nest("/app", webapp::assets())
        .data(state)
        .data(keys)
        .data(metrics)
        .data(exports)
        .data(links)
        .around(move |ep, req| {
            let edge = edge.clone();
            async move { edge.handle(ep, req).await }
        })
}

/// `{"status": "ok"}` once the server answers.
#[handler]
fn health() -> Json<serde_json::Value> {
    Json(serde_json::json!({"status": "ok"}))
}
