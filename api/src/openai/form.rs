//! The multipart form of `POST /v1/audio/transcriptions` and `/translations`: the `file` part is
//! streamed into the media store (bounded memory, the upload cap), the other parts are read as
//! text fields, in order, for `scribe_domain::openai::SpeechRequest` to check. The OpenAPI
//! document describes each endpoint's fields.

use poem::{Request, RequestBody};
use poem_openapi::registry::{MetaMediaType, MetaRequest, MetaSchema, MetaSchemaRef};
use poem_openapi::{ApiExtractor, ApiExtractorType, ExtractParamOptions};
use scribe_actors::media::TempMedia;

use super::errors::OpenAiError;
use crate::state::ApiState;
use crate::upload::{multipart_body, receive_file};

/// Bytes of text fields read at most (a prompt, keywords...): far above what any field needs.
const MAX_FIELD_BYTES: usize = 1 << 20;

/// The form of a transcription request.
pub struct TranscriptionForm(pub multer::Multipart<'static>);
/// The form of a translation request.
pub struct TranslationForm(pub multer::Multipart<'static>);

/// What a form held: its text fields in order and the file with its name.
pub struct Received {
    pub fields: Vec<(String, String)>,
    pub file: Option<(TempMedia, String)>,
}

type Field = (&'static str, &'static str, Option<&'static str>, &'static str);

/// (name, type, format or enum, description) of each field of the two forms.
const TRANSCRIPTION_FIELDS: &[Field] = &[
    ("model", "string", None, "A model id of GET /v1/models; `whisper-1` is the server's default model."),
    (
        "language",
        "string",
        None,
        "ISO-639-1 code (`en`, `nl`, `he`) or one of the API's language codes (`en-us`, `nl-be`); absent: detected.",
    ),
    ("prompt", "string", None, "Text the decoder continues from (Whisper's initial prompt), e.g. to teach spellings."),
    (
        "response_format",
        "string",
        Some("json|text|srt|vtt|verbose_json|diarized_json"),
        "Default json. diarized_json tells speakers apart: A, B, ... in the order they first speak, or a speaker's name once renamed in the editor (or by a transcriber).",
    ),
    (
        "temperature",
        "number",
        None,
        "0 to 1. 0 (default): beam search, falling back to higher temperatures on a failed window; above 0: sampled from that temperature up.",
    ),
    (
        "timestamp_granularities[]",
        "array",
        Some("segment|word"),
        "With verbose_json: segments (default) and/or words with their times.",
    ),
    (
        "stream",
        "boolean",
        None,
        "true: server-sent events (transcript.text.delta as the audio is recognised, then transcript.text.done); json, text or diarized_json only.",
    ),
    (
        "chunking_strategy",
        "string",
        None,
        "`auto` (voice detection, the default) or a JSON object {\"type\":\"server_vad\",\"threshold\":0.5,\"prefix_padding_ms\":400,\"silence_duration_ms\":2000}: the voice detection's threshold, padding and minimum silence.",
    ),
    ("keywords[]", "array", None, "Terms the decoder is nudged towards (names, jargon)."),
    ("languages[]", "array", None, "Without language: detect the language only among these ISO-639-1 codes."),
];
const TRANSLATION_FIELDS: &[Field] = &[
    ("model", "string", None, "A multilingual model id of GET /v1/models; `whisper-1` is the server's default model."),
    ("prompt", "string", None, "English text the decoder continues from."),
    ("response_format", "string", Some("json|text|srt|vtt|verbose_json"), "Default json."),
    ("temperature", "number", None, "0 to 1, as for transcriptions."),
];

fn request_meta(fields: &[Field], what: &'static str) -> MetaRequest {
    let mut schema = MetaSchema::new("object");
    schema.required = vec!["file", "model"];
    let mut file = MetaSchema::new_with_format("string", "binary");
    file.description = Some(
        "The audio or video file (flac, mp3, mp4, mpeg, mpga, m4a, ogg, wav, webm, and what upload-media takes), at most 6 GB.",
    );
    schema.properties.push(("file", MetaSchemaRef::Inline(Box::new(file))));
    for (name, ty, values, description) in fields {
        let mut field = if *ty == "array" {
            let mut item = MetaSchema::new("string");
            if let Some(values) = values {
                item.enum_items = values.split('|').map(|v| serde_json::Value::String(v.to_owned())).collect();
            }
            let mut array = MetaSchema::new("array");
            array.items = Some(Box::new(MetaSchemaRef::Inline(Box::new(item))));
            array
        } else {
            let mut scalar = MetaSchema::new(ty);
            if let Some(values) = values {
                scalar.enum_items = values.split('|').map(|v| serde_json::Value::String(v.to_owned())).collect();
            }
            scalar
        };
        field.description = Some(description);
        if *name == "model" {
            // Required and not blank: an empty or all-space model is refused as missing.
            field.min_length = Some(1);
            field.pattern = Some(crate::contract::NOT_BLANK.to_owned());
        }
        schema.properties.push((name, MetaSchemaRef::Inline(Box::new(field))));
    }
    MetaRequest {
        description: Some(what),
        content: vec![MetaMediaType {
            content_type: "multipart/form-data",
            schema: MetaSchemaRef::Inline(Box::new(schema)),
        }],
        required: true,
    }
}

macro_rules! form_extractor {
    ($name:ident, $fields:expr, $what:expr) => {
        impl<'a> ApiExtractor<'a> for $name {
            const TYPES: &'static [ApiExtractorType] = &[ApiExtractorType::RequestObject];
            type ParamType = ();
            type ParamRawType = ();

            fn request_meta() -> Option<MetaRequest> {
                Some(request_meta($fields, $what))
            }

            async fn from_request(
                req: &'a Request,
                body: &mut RequestBody,
                _: ExtractParamOptions<()>,
            ) -> poem::Result<Self> {
                Ok($name(multipart_body(req, body)?))
            }
        }
    };
}

form_extractor!(
    TranscriptionForm,
    TRANSCRIPTION_FIELDS,
    "The media as the part `file`, and the fields, as OpenAI's API takes them."
);
form_extractor!(
    TranslationForm,
    TRANSLATION_FIELDS,
    "The media as the part `file`, and the fields, as OpenAI's API takes them."
);

/// Reads and drops up to `limit` bytes of a refused request's form.
pub async fn discard(mut multipart: multer::Multipart<'static>, limit: u64) {
    let mut left = limit;
    while let Ok(Some(mut field)) = multipart.next_field().await {
        while let Ok(Some(chunk)) = field.chunk().await {
            let Some(rest) = left.checked_sub(chunk.len() as u64) else { return };
            left = rest;
        }
    }
}

/// Reads the whole form: text fields (at most `MAX_FIELD_BYTES` together) and the one `file`
/// part, streamed into a temp file of the media store.
pub async fn receive(mut multipart: multer::Multipart<'static>, state: &ApiState) -> Result<Received, OpenAiError> {
    let unreadable = |e: multer::Error| {
        OpenAiError::invalid("file", "invalid_body", format!("The multipart body could not be read: {e}"))
    };
    let mut received = Received { fields: Vec::new(), file: None };
    let mut text_bytes = 0usize;
    loop {
        let mut field = match multipart.next_field().await {
            Ok(Some(field)) => field,
            Ok(None) => break,
            Err(multer::Error::IncompleteStream) if received.fields.is_empty() && received.file.is_none() => break,
            Err(e) => return Err(unreadable(e)),
        };
        let Some(name) = field.name().map(str::to_owned) else {
            return Err(OpenAiError::invalid("file", "invalid_body", "A multipart part has no name"));
        };
        if name == "file" {
            if received.file.is_some() {
                return Err(OpenAiError::invalid("file", "invalid_value", "file was sent twice: send one file"));
            }
            received.file = Some(receive_file(field, state, state.settings.max_upload_bytes).await?);
            continue;
        }
        let mut value = Vec::new();
        while let Some(chunk) = field.chunk().await.map_err(unreadable)? {
            text_bytes += chunk.len();
            if text_bytes > MAX_FIELD_BYTES {
                return Err(OpenAiError::invalid(
                    &name,
                    "invalid_value",
                    format!("The form's fields are larger than {MAX_FIELD_BYTES} bytes together"),
                ));
            }
            value.extend_from_slice(&chunk);
        }
        let value = String::from_utf8(value)
            .map_err(|_| OpenAiError::invalid(&name, "invalid_value", format!("{name} is not UTF-8 text")))?;
        received.fields.push((name, value));
    }
    Ok(received)
}
