//! The live transcription protocol (`/api/real-time`, a WebSocket) written down for tools: an
//! AsyncAPI 3.0 document served at `/api/asyncapi.json`, the WebSocket counterpart of the
//! OpenAPI document. OpenAPI cannot describe a conversation over one socket; AsyncAPI is the
//! ecosystem's convention for it.
//!
//! The document describes the server: its `receive` operations are what a client sends (INIT,
//! audio, END), its `send` operations what a client receives (Info, Warning, Error,
//! PartialResult, FinalResult). Each message has a JSON Schema payload and an example; the lists
//! of values (languages) come from the domain, so the document and the checks cannot drift apart.
//! The server's address is the one the request was made to (its `Host` header).

use poem::http::header;
use poem::{Request, Response, handler};
use scribe_domain::languages::Language;
use serde_json::{Value, json};

use crate::contract;

/// Where the document is served.
pub const ASYNCAPI_PATH: &str = "/api/asyncapi.json";

/// The WebSocket endpoint the document describes.
pub const LIVE_PATH: &str = "/api/real-time";

/// Every sample encoding a client may announce in `audioConfig.encoding`.
pub const ENCODINGS: [&str; 14] = [
    "f32be", "f32le", "s16be", "s16le", "s24be", "s24le", "s32be", "s32le", "u16be", "u16le", "u24be", "u24le",
    "u32be", "u32le",
];

/// The `Error` codes, what causes each, and the WebSocket close code that follows it.
pub const ERROR_CODES: [(&str, &str, &str); 8] = [
    (
        "INVALID_MESSAGE",
        "the first message is not an INIT text frame, bad JSON, binary before INIT, unknown messageType",
        "1008 (binary first), 1007 (bad JSON)",
    ),
    (
        "INVALID_PARAMETER",
        "a bad field value (language, encoding, sample_rate, format, glossaryId, callbackUrl) or an unknown field",
        "1008",
    ),
    (
        "UNAUTHORIZED",
        "apiKey missing or not a valid key, or the address over its budget of invalid keys (`--auth-failures-burst`)",
        "1008",
    ),
    (
        "INSUFFICIENT_BALANCE",
        "the balance cannot pay the next started minute",
        "1008, after the FinalResults of the audio paid for",
    ),
    (
        "CAPACITY",
        "too many sessions on the server (`--live-sessions`) or the account (`--live-sessions-per-account`), or the key over its rate limit (`--rate-per-second`)",
        "1013",
    ),
    ("FRAME_TOO_LARGE", "a frame over 1 MiB, of any size", "1009"),
    ("IDLE", "no audio for `--live-idle-timeout` (default 30 s)", "1000"),
    ("INTERNAL", "the speech engine failed", "1011"),
];

/// The `Warning` codes.
pub const WARNING_CODES: [&str; 3] = ["PARTIAL_SAMPLE", "BEHIND_REAL_TIME", "INVALID_MESSAGE"];

/// `GET /api/asyncapi.json`: the document, with the server this request reached.
#[handler]
pub fn asyncapi(req: &Request) -> Response {
    let headers = req.headers();
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("localhost:8080");
    let tls = headers
        .get("x-forwarded-proto")
        .and_then(|h| h.to_str().ok())
        .is_some_and(|p| p.trim().eq_ignore_ascii_case("https"));
    let body =
        serde_json::to_string_pretty(&document(host, if tls { "wss" } else { "ws" })).expect("a JSON value serializes");
    Response::builder().content_type("application/json").body(body)
}

/// The AsyncAPI document for a server reached at `host` over `protocol` (`ws` or `wss`).
pub fn document(host: &str, protocol: &str) -> Value {
    json!({
        "asyncapi": "3.0.0",
        "info": {
            "title": "Scribe live transcription",
            "version": env!("CARGO_PKG_VERSION"),
            "description": description(),
        },
        "defaultContentType": "application/json",
        "servers": {
            "scribe": {
                "host": host,
                "protocol": protocol,
                "description": "This Scribe server. Behind a TLS proxy, use `wss`.",
            }
        },
        "channels": {
            "realTime": {
                "address": LIVE_PATH,
                "title": "Live transcription",
                "summary": "One WebSocket per live session: INIT, then audio, then END.",
                "description": "A WebSocket (RFC 6455) opened with `GET /api/real-time`; the same endpoint also \
                    answers at `/real-time/` (and `/real-time`), the path Amberscript's live API uses, so a client \
                    written for Amberscript works with only the address changed. Client messages are a text frame \
                    INIT first, then binary audio frames, then a text frame END; server messages are text frames \
                    `{\"type\": T, \"message\": M}`.",
                "servers": [{"$ref": "#/servers/scribe"}],
                "messages": {
                    "init": {"$ref": "#/components/messages/Init"},
                    "audio": {"$ref": "#/components/messages/Audio"},
                    "end": {"$ref": "#/components/messages/End"},
                    "info": {"$ref": "#/components/messages/Info"},
                    "warning": {"$ref": "#/components/messages/Warning"},
                    "error": {"$ref": "#/components/messages/Error"},
                    "partialResult": {"$ref": "#/components/messages/PartialResult"},
                    "finalResult": {"$ref": "#/components/messages/FinalResult"},
                },
                "bindings": {"ws": {"method": "GET", "bindingVersion": "0.1.0"}},
            }
        },
        "operations": {
            "receiveInit": {
                "action": "receive",
                "channel": {"$ref": "#/channels/realTime"},
                "title": "INIT",
                "summary": "The client's first message: key, language, audio and output configuration.",
                "description": "Anything else first is an Error (INVALID_MESSAGE) and the connection closes. The \
                    server answers an Info (\"Session started\") with the configuration in force, or an Error \
                    naming the field at fault and then closes.",
                "messages": [{"$ref": "#/channels/realTime/messages/init"}],
                "reply": {
                    "channel": {"$ref": "#/channels/realTime"},
                    "messages": [
                        {"$ref": "#/channels/realTime/messages/info"},
                        {"$ref": "#/channels/realTime/messages/error"},
                    ],
                },
            },
            "receiveAudio": {
                "action": "receive",
                "channel": {"$ref": "#/channels/realTime"},
                "title": "Audio",
                "summary": "Binary frames of raw mono PCM, in the encoding and at the rate INIT announced.",
                "messages": [{"$ref": "#/channels/realTime/messages/audio"}],
            },
            "receiveEnd": {
                "action": "receive",
                "channel": {"$ref": "#/channels/realTime"},
                "title": "END",
                "summary": "The end of the stream: the last speech is finalized, then the server closes with 1000.",
                "description": "Closing the socket does the same (the last FinalResult has nobody to go to, but \
                    a session saved as a job still completes).",
                "messages": [{"$ref": "#/channels/realTime/messages/end"}],
            },
            "sendInfo": {
                "action": "send",
                "channel": {"$ref": "#/channels/realTime"},
                "title": "Info",
                "summary": "The session started (with the configuration in force), or the language was detected.",
                "messages": [{"$ref": "#/channels/realTime/messages/info"}],
            },
            "sendWarning": {
                "action": "send",
                "channel": {"$ref": "#/channels/realTime"},
                "title": "Warning",
                "summary": "Something the session survives: a partial sample, or falling behind real time.",
                "messages": [{"$ref": "#/channels/realTime/messages/warning"}],
            },
            "sendError": {
                "action": "send",
                "channel": {"$ref": "#/channels/realTime"},
                "title": "Error",
                "summary": "Why the session ends; the close code follows it.",
                "messages": [{"$ref": "#/channels/realTime/messages/error"}],
            },
            "sendPartialResult": {
                "action": "send",
                "channel": {"$ref": "#/channels/realTime"},
                "title": "PartialResult",
                "summary": "The words of the utterance still being spoken (only with outputConfig.partials); they may change.",
                "messages": [{"$ref": "#/channels/realTime/messages/partialResult"}],
            },
            "sendFinalResult": {
                "action": "send",
                "channel": {"$ref": "#/channels/realTime"},
                "title": "FinalResult",
                "summary": "A finished utterance with per-word times and confidence; never changes.",
                "messages": [{"$ref": "#/channels/realTime/messages/finalResult"}],
            },
        },
        "components": {
            "messages": messages(),
            "schemas": schemas(),
        },
    })
}

fn description() -> String {
    let mut closes = String::from("| Error code | when | close code |\n|---|---|---|\n");
    for (code, when, close) in ERROR_CODES {
        closes.push_str(&format!("| `{code}` | {when} | {close} |\n"));
    }
    format!(
        "Live transcription over a WebSocket, speaking Amberscript's Live Transcription API 1.0 (with Scribe's \
         additions: every language of direct jobs and `auto`, `glossaryId`, `saveAsJob`, `revisions`, `callbackUrl`).\n\n\
         This document describes the server: its `receive` operations are what a client sends, its `send` \
         operations what a client receives.\n\n\
         **Conversation.** Open `ws://HOST/api/real-time` (also `/real-time/`). Send INIT as the first text frame; \
         the server answers an Info with the configuration in force. Then send binary frames of raw mono PCM \
         (`audioConfig.encoding`: one of {encodings}; `sample_rate` 8000 to 48000, resampled to 16 kHz). Send \
         `{{\"messageType\": \"END\"}}` when done: the last speech is finalized, its FinalResult sent, and the \
         server closes with 1000. FinalResults come from whole utterances cut at pauses (and before 30 s when \
         nobody pauses), decoded like a direct job (glossary, punctuation, word times); PartialResults (only \
         with `outputConfig.partials`) share the id of the FinalResult that replaces them.\n\n\
         **Errors and close codes.** Every refusal is an Error message naming the cause (and the field and \
         allowed values when a field is at fault), then the close:\n\n{closes}\n\
         **Pings.** The server sends a WebSocket ping every 10 s and closes a client that has not answered \
         within 30 s (every RFC 6455 client answers pings by itself).\n\n\
         **Limits.** At most 1 MiB per binary frame. Sessions per server: `--live-sessions` (default 4); per \
         account: `--live-sessions-per-account` (default 2); over either, Error `CAPACITY` and close 1013. No \
         audio for `--live-idle-timeout` (default 30 s): Error `IDLE`, close 1000. A session that falls behind \
         real time says so in a Warning (`BEHIND_REAL_TIME`, with `behindSeconds`) and catches up by skipping \
         partials, never finals.\n\n\
         **Billing.** Like a direct job: `--price-direct-per-minute` per started minute of audio received, \
         charged when the minute's first sample arrives. A balance that cannot pay the first minute is refused \
         at INIT (Error `INSUFFICIENT_BALANCE`, close 1008, no session). When the balance cannot pay the next \
         minute, the audio already paid for is finalized, then Error `INSUFFICIENT_BALANCE` and close 1008.\n\n\
         **saveAsJob** (beyond Amberscript). With `\"outputConfig\": {{\"saveAsJob\": true}}` the session is a \
         `direct` `transcription` job (its id in the first Info): each final is recorded as it happens; when \
         the session ends, its recording is read again as a direct job reads an uploaded file (no second \
         charge), so that the transcript reads as one text, and the job is DONE (exports, editor, `scribe \
         replay`, and the callback when INIT gave `callbackUrl`). If reading it again fails, the finals are \
         its transcript and its notes say why.\n\n\
         **revisions** (beyond Amberscript). A final is decoded from its utterance alone, so a sentence spoken \
         with pauses may come back cut by full stops and capitals (\"and so my fellow Americans.\" then \
         \"Ask not…\"). With `\"outputConfig\": {{\"revisions\": true}}`, once the next utterance's final is \
         out the server reads the audio of the utterances before and after together with it, and when that \
         reading differs it sends the FinalResult again: the same `id` (replace the earlier one), \
         `\"revised\": true`, the utterance's words as read with its neighbours. Each final is revised at most \
         once, the session's last one before the close; a session behind real time gives revisions up first.\n\n\
         The HTTP API is described by the OpenAPI document at `/api/openapi.json`.",
        encodings = ENCODINGS.map(|e| format!("`{e}`")).join(", "),
    )
}

/// The languages a live session takes: those of direct jobs (the speech model knows them), and `auto`.
fn live_languages() -> Vec<&'static str> {
    Language::all().filter(|l| l.is_supported_by_whisper()).map(Language::code).collect()
}

fn schemas() -> Value {
    let glossary_id = contract::rule("liveInit", "glossaryId").expect("glossaryId has a rule");
    let callback_url = contract::rule("liveInit", "callbackUrl").expect("callbackUrl has a rule");
    json!({
        "AudioConfig": {
            "type": "object",
            "description": "The audio the client will send. Defaults to `{\"sample_rate\": 16000, \"encoding\": \"s16le\"}`.",
            "additionalProperties": false,
            "properties": {
                "sample_rate": {"type": "integer", "minimum": 8000, "maximum": 48000, "default": 16000,
                                "description": "Samples per second (resampled to 16 kHz by the server)."},
                "encoding": {"type": "string", "enum": ENCODINGS, "default": "s16le",
                             "description": "Sample format: f(loat), s(igned) or u(nsigned) integer, bits, byte order (le/be)."},
            },
        },
        "OutputConfig": {
            "type": "object",
            "description": "What the server sends. Defaults to `{\"format\": \"transcription\", \"partials\": false, \"saveAsJob\": false, \"revisions\": false}`.",
            "additionalProperties": false,
            "properties": {
                "format": {"type": "string", "enum": ["transcription"], "default": "transcription"},
                "partials": {"type": "boolean", "default": false, "description": "Send PartialResults while an utterance is spoken."},
                "saveAsJob": {"type": "boolean", "default": false,
                              "description": "Beyond Amberscript: keep the audio and the finals as a `direct` job, DONE when the session ends."},
                "revisions": {"type": "boolean", "default": false,
                              "description": "Beyond Amberscript: send each final again (same id, `revised: true`) when read with the utterances around it it reads otherwise."},
            },
        },
        "Init": {
            "type": "object",
            "required": ["messageType", "apiKey"],
            "additionalProperties": false,
            "description": "Unknown fields are refused (Error INVALID_PARAMETER naming them).",
            "properties": {
                "messageType": {"type": "string", "const": "INIT"},
                "language": {"type": "string", "enum": live_languages(), "default": "en",
                             "description": "A language of direct jobs, or `auto`: detected on the first utterance and reported in an Info."},
                "apiKey": {"type": "string", "description": "The account's API key."},
                "audioConfig": {"$ref": "#/components/schemas/AudioConfig"},
                "outputConfig": {"$ref": "#/components/schemas/OutputConfig"},
                "glossaryId": with_description(glossary_id, "Beyond Amberscript: a glossary of the account that guides recognition."),
                "callbackUrl": with_description(callback_url, "Beyond Amberscript, only with `saveAsJob`: where the finished job is POSTed, as for uploads."),
            },
        },
        "End": {
            "type": "object",
            "required": ["messageType"],
            "additionalProperties": false,
            "properties": {"messageType": {"type": "string", "const": "END"}},
        },
        "Audio": {
            "type": "string",
            "format": "binary",
            "description": "Raw mono PCM samples (no header), in the announced encoding and rate; at most 1 MiB per frame. \
                A frame that is not a whole number of samples is a Warning (PARTIAL_SAMPLE).",
        },
        "InfoMessage": {
            "type": "object",
            "required": ["type", "message"],
            "properties": {
                "type": {"type": "string", "const": "Info"},
                "message": {"type": "string", "description": "Human-readable text."},
                "sessionId": {"type": "string", "format": "uuid"},
                "language": {"type": "string", "description": "The language in force, or the one detected."},
                "languageProbability": {"type": "number", "minimum": 0, "maximum": 1},
                "audioConfig": {"$ref": "#/components/schemas/AudioConfig"},
                "outputConfig": {"$ref": "#/components/schemas/OutputConfig"},
                "jobId": {"type": ["string", "null"], "description": "The job the session is saved as (saveAsJob), else null."},
                "glossaryId": {"type": ["string", "null"], "description": "The glossary INIT gave (glossaryId), else null."},
                "partialsModel": {"type": ["string", "null"], "description": "Beyond Amberscript: the smaller speech model the operator set to decode partials in this session's language (--live-partials-model), else null: the session's model decodes partials and finals. Finals always come from the session's model."},
            },
        },
        "WarningMessage": {
            "type": "object",
            "required": ["type", "code", "message"],
            "properties": {
                "type": {"type": "string", "const": "Warning"},
                "code": {"type": "string", "enum": WARNING_CODES,
                         "description": "`PARTIAL_SAMPLE`: a frame was not a whole number of samples. `BEHIND_REAL_TIME`: the session lags (partials are skipped until it catches up). `INVALID_MESSAGE`: a text message after the INIT was not one of the protocol's (not JSON, an unknown `messageType`, a second INIT) and was ignored; the session goes on. Before the session starts the same code is an Error."},
                "message": {"type": "string"},
                "behindSeconds": {"type": "number", "minimum": 0, "description": "With BEHIND_REAL_TIME: how far behind."},
            },
        },
        "ErrorMessage": {
            "type": "object",
            "required": ["type", "code", "message"],
            "properties": {
                "type": {"type": "string", "const": "Error"},
                "code": {"type": "string", "enum": ERROR_CODES.map(|(code, _, _)| code)},
                "message": {"type": "string"},
                "field": {"type": "string", "description": "The INIT field at fault, when one is."},
                "allowed": {"type": "array", "items": {}, "description": "The values the field allows, when they are a list."},
            },
        },
        "PartialWord": {
            "type": "object",
            "required": ["word"],
            "properties": {"word": {"type": "string"}},
        },
        "FinalWord": {
            "type": "object",
            "required": ["word", "start", "end", "length", "confidence"],
            "properties": {
                "word": {"type": "string", "description": "The word with its punctuation."},
                "start": {"type": "number", "minimum": 0, "description": "Seconds from the start of the stream."},
                "end": {"type": "number", "minimum": 0},
                "length": {"type": "number", "minimum": 0, "description": "end - start."},
                "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            },
        },
        "PartialSegment": {
            "type": "object",
            "required": ["words"],
            "properties": {"words": {"type": "array", "items": {"$ref": "#/components/schemas/PartialWord"}}},
        },
        "FinalSegment": {
            "type": "object",
            "required": ["words", "start", "end", "length"],
            "properties": {
                "words": {"type": "array", "items": {"$ref": "#/components/schemas/FinalWord"}},
                "start": {"type": "number", "minimum": 0},
                "end": {"type": "number", "minimum": 0},
                "length": {"type": "number", "minimum": 0},
            },
        },
        "PartialTranscript": {
            "type": "object",
            "required": ["id", "version", "segments", "transcript"],
            "properties": {
                "id": {"type": "string", "format": "uuid", "description": "The id of the FinalResult that will replace it."},
                "version": {"type": "string", "const": "1.0"},
                "segments": {"type": "array", "items": {"$ref": "#/components/schemas/PartialSegment"}},
                "transcript": {"type": "string"},
            },
        },
        "FinalTranscript": {
            "type": "object",
            "required": ["id", "version", "segments", "transcript"],
            "properties": {
                "id": {"type": "string", "format": "uuid"},
                "version": {"type": "string", "const": "1.0"},
                "segments": {"type": "array", "items": {"$ref": "#/components/schemas/FinalSegment"}},
                "transcript": {"type": "string"},
                "revised": {"type": "boolean", "const": true,
                            "description": "Only with `outputConfig.revisions`: this FinalResult replaces the earlier one of the same id (absent on a first final)."},
            },
        },
    })
}

fn with_description(mut schema: Value, description: &str) -> Value {
    schema["description"] = Value::String(description.to_owned());
    schema
}

/// A server message's envelope: `{"type": T, "message": <schema>}`.
fn envelope(kind: &str, message_schema: &str) -> Value {
    json!({
        "type": "object",
        "required": ["type", "message"],
        "additionalProperties": false,
        "properties": {
            "type": {"type": "string", "const": kind},
            "message": {"$ref": format!("#/components/schemas/{message_schema}")},
        },
    })
}

const FINAL_ID: &str = "0b6f3f5e-2f4e-4c1e-9d0a-7f1c2a3b4c5d";

fn messages() -> Value {
    let close_table: String =
        ERROR_CODES.iter().map(|(code, when, close)| format!("- `{code}`: {when}; close {close}.\n")).collect();
    json!({
        "Init": {
            "name": "INIT",
            "title": "INIT",
            "summary": "Starts the session. The first message, a text frame.",
            "contentType": "application/json",
            "payload": {"$ref": "#/components/schemas/Init"},
            "examples": [
                {"name": "english", "summary": "English, the default audio and output configuration",
                 "payload": {"messageType": "INIT", "language": "en", "apiKey": "KEY",
                             "audioConfig": {"sample_rate": 16000, "encoding": "s16le"},
                             "outputConfig": {"format": "transcription", "partials": false, "saveAsJob": false}}},
                {"name": "autoSaved", "summary": "Detect the language, send partials, keep the session as a job",
                 "payload": {"messageType": "INIT", "language": "auto", "apiKey": "KEY",
                             "audioConfig": {"sample_rate": 48000, "encoding": "f32le"},
                             "outputConfig": {"partials": true, "saveAsJob": true},
                             "callbackUrl": "https://example.com/hook"}},
            ],
        },
        "Audio": {
            "name": "audio",
            "title": "Audio",
            "summary": "A binary frame of raw PCM.",
            "contentType": "application/octet-stream",
            "payload": {"$ref": "#/components/schemas/Audio"},
        },
        "End": {
            "name": "END",
            "title": "END",
            "summary": "No more audio: finalize and close (1000).",
            "contentType": "application/json",
            "payload": {"$ref": "#/components/schemas/End"},
            "examples": [{"name": "end", "payload": {"messageType": "END"}}],
        },
        "Info": {
            "name": "Info",
            "title": "Info",
            "summary": "The configuration in force after INIT; the detected language with `auto`.",
            "contentType": "application/json",
            "payload": envelope("Info", "InfoMessage"),
            "examples": [
                {"name": "sessionStarted", "payload": {"type": "Info", "message": {
                    "type": "Info", "message": "Session started", "sessionId": "5d0c1f9a-3b7e-4a57-9a53-1c2d3e4f5a6b",
                    "language": "en", "audioConfig": {"sample_rate": 16000, "encoding": "s16le"},
                    "outputConfig": {"format": "transcription", "partials": false, "saveAsJob": false, "revisions": false},
                    "jobId": null, "partialsModel": null}}},
                {"name": "languageDetected", "payload": {"type": "Info", "message": {
                    "type": "Info", "message": "Detected language: en", "language": "en", "languageProbability": 0.98}}},
            ],
        },
        "Warning": {
            "name": "Warning",
            "title": "Warning",
            "summary": "Something the session survives.",
            "contentType": "application/json",
            "payload": envelope("Warning", "WarningMessage"),
            "examples": [
                {"name": "behind", "payload": {"type": "Warning", "message": {
                    "type": "Warning", "code": "BEHIND_REAL_TIME",
                    "message": "The session is 3.2 s behind real time; partial results are skipped until it catches up",
                    "behindSeconds": 3.2}}},
            ],
        },
        "Error": {
            "name": "Error",
            "title": "Error",
            "summary": "Why the session ends; the WebSocket close follows.",
            "description": format!("Codes, causes and the close code that follows:\n\n{close_table}"),
            "contentType": "application/json",
            "payload": envelope("Error", "ErrorMessage"),
            "examples": [
                {"name": "badEncoding", "payload": {"type": "Error", "message": {
                    "type": "Error", "code": "INVALID_PARAMETER",
                    "message": "encoding 's16' is not supported", "field": "encoding", "allowed": ENCODINGS}}},
                {"name": "capacity", "payload": {"type": "Error", "message": {
                    "type": "Error", "code": "CAPACITY",
                    "message": "The server runs its maximum of 4 live sessions; try again later"}}},
            ],
        },
        "PartialResult": {
            "name": "PartialResult",
            "title": "PartialResult",
            "summary": "Words of the utterance still being spoken; they may change. Shares the id of its FinalResult.",
            "contentType": "application/json",
            "payload": envelope("PartialResult", "PartialTranscript"),
            "examples": [
                {"name": "partial", "payload": {"type": "PartialResult", "message": {
                    "id": FINAL_ID, "version": "1.0",
                    "segments": [{"words": [{"word": "Testing"}, {"word": "testing"}]}],
                    "transcript": "Testing testing"}}},
            ],
        },
        "FinalResult": {
            "name": "FinalResult",
            "title": "FinalResult",
            "summary": "A finished utterance; times are seconds from the start of the stream.",
            "contentType": "application/json",
            "payload": envelope("FinalResult", "FinalTranscript"),
            "examples": [
                {"name": "final", "payload": {"type": "FinalResult", "message": {
                    "id": FINAL_ID, "version": "1.0",
                    "segments": [{"words": [
                        {"word": "Testing,", "start": 0.0, "end": 0.61, "length": 0.61, "confidence": 0.97},
                        {"word": "testing.", "start": 0.61, "end": 1.23, "length": 0.62, "confidence": 0.95}],
                        "start": 0.0, "end": 1.23, "length": 1.23}],
                    "transcript": "Testing, testing."}}},
            ],
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use scribe_domain::live::{Encoding, LiveErrorCode};

    #[test]
    fn the_documented_codes_are_the_ones_the_door_uses() {
        assert_eq!(ENCODINGS.to_vec(), Encoding::ALL.map(Encoding::name).to_vec());
        let codes = [
            LiveErrorCode::InvalidMessage,
            LiveErrorCode::InvalidParameter,
            LiveErrorCode::Unauthorized,
            LiveErrorCode::InsufficientBalance,
            LiveErrorCode::Capacity,
            LiveErrorCode::FrameTooLarge,
            LiveErrorCode::Idle,
            LiveErrorCode::Internal,
        ];
        for ((code, _, close), expected) in ERROR_CODES.iter().zip(codes) {
            assert_eq!(*code, expected.as_str());
            assert!(close.contains(&expected.close_code().to_string()), "{code}: {close}");
        }
    }

    #[test]
    fn live_languages_are_those_of_direct_jobs_and_auto() {
        let languages = live_languages();
        assert!(languages.contains(&"auto") && languages.contains(&"en") && languages.contains(&"fr-ca"));
        // Uyghur is in the spec's table for manual jobs only: the speech model does not know it.
        assert!(!languages.contains(&"ug"));
    }

    #[test]
    fn the_server_is_the_one_the_request_reached() {
        let doc = document("scribe.example:8443", "wss");
        assert_eq!(doc["servers"]["scribe"]["host"], "scribe.example:8443");
        assert_eq!(doc["servers"]["scribe"]["protocol"], "wss");
        assert_eq!(doc["channels"]["realTime"]["address"], LIVE_PATH);
    }
}
