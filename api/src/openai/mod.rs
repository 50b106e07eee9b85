//! The OpenAI door: OpenAI's audio API (`POST /v1/audio/transcriptions`,
//! `POST /v1/audio/translations`, `GET /v1/models`, `GET /v1/models/{model}`), so that the tools
//! people already run (Open WebUI, LibreChat, n8n, Home Assistant, Subtitle Edit, the `openai`
//! packages) can use Scribe by pointing their base URL at `/v1`.
//!
//! It is a second door onto the same jobs, not a second engine: each request is a `direct` job,
//! received and charged exactly as an upload is (`upload::submit_stored`: the billing saga
//! charges it per started minute and records it), recognised by the usual pipeline with the
//! engine choices the request made (`scribe_domain::decoding::DecodingChoices`), listed in
//! `GET /api/jobs` and kept in the log for `scribe replay`. The request waits for its job
//! ([`wait`]): up to `--openai-wait`, after which the client is told the job's id (504, not to be
//! retried) and the job goes on. A client that goes away before its answer fails the job, which
//! stops its recognition and refunds it: nobody would read the result, and the official clients
//! retry a timed-out request with a new upload, which must not be charged twice. The same holds
//! when the server dies under a waiting request: the job records the node holding the request,
//! and that node fails and refunds it when it starts again (`scribe_domain::job::awaited`).
//!
//! Errors are in OpenAI's shape ([`errors`]); the rules of the fields and the answers are the
//! domain's (`scribe_domain::openai`).

pub mod errors;
pub mod form;
pub mod schema;
pub mod wait;

use std::sync::Arc;

use poem::web::Data;
use poem::{IntoResponse, Request, Response};
use poem_openapi::param::Path;
use poem_openapi::payload::{Json, Payload};
use poem_openapi::registry::{MetaMediaType, MetaResponse, MetaResponses, MetaSchemaRef, Registry};
use poem_openapi::{ApiResponse, OpenApi};
use scribe_actors::speech_model::InstalledModel;
use scribe_domain::kinds::{JobType, TranscriptionType};
use scribe_domain::openai::{Endpoint, ModelFacts, SpeechRequest};

use crate::ApiTags;
use crate::auth::{ApiKeyAuth, Caller};
use crate::state::ApiState;
use crate::submit;
use crate::upload::{self, ReceivedUpload, submit_stored};
use errors::OpenAiError;
use form::{TranscriptionForm, TranslationForm};
use schema::{EventStream, JsonAnswer, Model, ModelList, VttAnswer};

use crate::exports::document::RenderedText;
use wait::Waiting;

/// Where the door is served besides `/api/v1`.
pub const ROOT_PREFIX: &str = "/v1";
/// The two endpoints that receive media (their bodies are capped by the upload limit).
pub const MEDIA_ROUTES: [&str; 2] = ["/api/v1/audio/transcriptions", "/api/v1/audio/translations"];

/// The answer of a transcription or translation, in the requested `response_format`: one 200
/// response with four media types (poem-openapi's derive would keep one of them).
pub enum SpeechAnswer {
    /// `json`, `verbose_json`, `diarized_json`.
    Json(JsonAnswer),
    /// `text`, `srt`.
    Text(RenderedText),
    /// `vtt`.
    Vtt(VttAnswer),
    /// `stream=true`: server-sent events.
    Events(EventStream),
}

impl ApiResponse for SpeechAnswer {
    fn meta() -> MetaResponses {
        let media = |content_type: &'static str, schema: MetaSchemaRef| MetaMediaType { content_type, schema };
        MetaResponses {
            responses: vec![MetaResponse {
                description: "The transcription in the requested `response_format`: JSON for `json`, `verbose_json` \
                    and `diarized_json`; text for `text` and `srt`; WebVTT for `vtt`; with `stream=true`, \
                    server-sent events (`transcript.text.delta` as the audio is recognised, \
                    `transcript.text.segment` per speaker turn with `diarized_json`, then `transcript.text.done`).",
                status: Some(200),
                status_range: None,
                content: vec![
                    media(JsonAnswer::CONTENT_TYPE, JsonAnswer::schema_ref()),
                    media(RenderedText::CONTENT_TYPE, RenderedText::schema_ref()),
                    media(VttAnswer::CONTENT_TYPE, VttAnswer::schema_ref()),
                    media(EventStream::CONTENT_TYPE, EventStream::schema_ref()),
                ],
                headers: vec![],
            }],
        }
    }

    fn register(registry: &mut Registry) {
        JsonAnswer::register(registry);
    }
}

impl IntoResponse for SpeechAnswer {
    fn into_response(self) -> Response {
        match self {
            SpeechAnswer::Json(a) => a.into_response(),
            SpeechAnswer::Text(a) => a.into_response(),
            SpeechAnswer::Vtt(a) => a.into_response(),
            SpeechAnswer::Events(a) => a.into_response(),
        }
    }
}

pub struct OpenAiApi;

#[OpenApi(tag = "ApiTags::OpenAi")]
impl OpenAiApi {
    /// Transcribes audio into text, as OpenAI's `POST /v1/audio/transcriptions`.
    ///
    /// Send the key as `Authorization: Bearer <key>`. The request is a `direct` job, charged
    /// per started minute like an upload (402 `insufficient_balance` when the balance is
    /// short; refunded if it fails) and listed in `GET /jobs`; the answer comes when the job is
    /// done. Past the server's wait (`--openai-wait`, 9 minutes by default) the answer is 504
    /// `job_still_running` with `error.job_id`: the job goes on, and its result is read with the
    /// jobs API. A client that disconnects before its answer stops the job (refunded). OpenAI's
    /// `include`, `known_speaker_names` and `known_speaker_references` are refused (400): Scribe
    /// cannot honour them.
    #[oai(path = "/v1/audio/transcriptions", method = "post", operation_id = "createTranscription")]
    async fn transcriptions(
        &self,
        req: &Request,
        auth: ApiKeyAuth,
        state: Data<&Arc<ApiState>>,
        body: TranscriptionForm,
    ) -> Result<SpeechAnswer, OpenAiError> {
        speech(&state, auth.0, req, Endpoint::Transcriptions, body.0).await
    }

    /// Translates speech into English text, as OpenAI's `POST /v1/audio/translations`
    /// (Whisper's translate task; needs a multilingual model).
    ///
    /// Billing, waiting and errors as for transcriptions.
    #[oai(path = "/v1/audio/translations", method = "post", operation_id = "createTranslation")]
    async fn translations(
        &self,
        req: &Request,
        auth: ApiKeyAuth,
        state: Data<&Arc<ApiState>>,
        body: TranslationForm,
    ) -> Result<SpeechAnswer, OpenAiError> {
        speech(&state, auth.0, req, Endpoint::Translations, body.0).await
    }

    /// The installed speech models, as OpenAI's `GET /v1/models`: `whisper-1` (the server's
    /// default model, for clients that hard-code OpenAI's name), the default itself and every
    /// other model folder the operator installed.
    #[oai(path = "/v1/models", method = "get", operation_id = "listModels")]
    async fn models(&self, _auth: ApiKeyAuth, state: Data<&Arc<ApiState>>) -> Result<Json<ModelList>, OpenAiError> {
        let default = state.models.default_entry();
        let mut data = vec![model(scribe_actors::speech_model::OPENAI_DEFAULT_ALIAS, default)];
        data.extend(state.models.list().into_iter().map(|m| model(&m.name, m)));
        Ok(Json(ModelList { object: "list".to_owned(), data }))
    }

    /// One installed speech model; 404 `model_not_found` for another name.
    #[oai(path = "/v1/models/:model", method = "get", operation_id = "retrieveModel")]
    async fn model(
        &self,
        _auth: ApiKeyAuth,
        state: Data<&Arc<ApiState>>,
        /// A model id (`whisper-1`, `whisper-base`, ...).
        model: Path<String>,
    ) -> Result<Json<Model>, OpenAiError> {
        let (entry, _) = state.models.get(&model.0).ok_or_else(|| OpenAiError::unknown_model(&model.0))?;
        Ok(Json(self::model(&model.0, entry)))
    }
}

fn model(id: &str, entry: &InstalledModel) -> Model {
    Model { id: id.to_owned(), object: "model".to_owned(), created: entry.created_s, owned_by: "scribe".to_owned() }
}

/// Receives the form, checks it, submits the job and answers when it ends.
async fn speech(
    state: &Arc<ApiState>,
    caller: Caller,
    req: &Request,
    endpoint: Endpoint,
    multipart: multer::Multipart<'static>,
) -> Result<SpeechAnswer, OpenAiError> {
    // Refused before the upload is read: a balance that cannot pay a job's first minute. Every
    // request of this door is a direct transcription job, whatever its fields say. A small
    // upload is still read and dropped, so that the client, still sending, hears the answer.
    let least = state.billing.check_least(&caller.user, JobType::Direct, TranscriptionType::Transcription).await;
    if let Err(e) = least {
        if upload::content_length(req).is_none_or(|n| n <= upload::DRAIN_LIMIT) {
            form::discard(multipart, upload::DRAIN_LIMIT).await;
        }
        return Err(submit::billing_error(e).into());
    }
    let peer = req.remote_addr();
    let received = form::receive(multipart, state).await?;
    let request = SpeechRequest::parse(endpoint, &received.fields)?;
    let Some((temp, filename)) = received.file else {
        return Err(OpenAiError::invalid(
            "file",
            "missing_required_parameter",
            "file is required: send the audio as a multipart part named file",
        ));
    };
    let (entry, _) = state.models.get(&request.model).ok_or_else(|| OpenAiError::unknown_model(&request.model))?;
    request.check_model(&ModelFacts {
        name: entry.name.clone(),
        multilingual: entry.multilingual,
        languages: entry.languages.clone(),
    })?;
    let job_request = request.job_request(Some(entry.name.clone()));
    let job_id = submit::new_job_id();
    // Watched before it exists, so no recognised text is missed.
    let watch = request.stream.then(|| state.feed.watch(&job_id));
    let upload = ReceivedUpload { caller, request: job_request, job_id: job_id.clone(), temp, filename, awaited: true };
    submit_stored(state.clone(), upload).await?;
    let waiting = Waiting::new(state.clone(), job_id, request, peer.clone());
    if waiting.request.stream {
        return Ok(SpeechAnswer::Events(EventStream(waiting.stream(watch))));
    }
    let answer = waiting.answer().await?;
    Ok(match answer.content_type {
        "application/json" => SpeechAnswer::Json(JsonAnswer(answer.body)),
        t if t.starts_with("text/vtt") => SpeechAnswer::Vtt(VttAnswer(answer.body)),
        _ => SpeechAnswer::Text(RenderedText(answer.body.into_bytes())),
    })
}
