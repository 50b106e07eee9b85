//! The text messages a live client sends: the INIT that opens a session (checked field by
//! field, with the protocol's defaults) and the END that closes it.
//!
//! Every refusal names the field and, for enumerations, the allowed values, so a client author
//! can fix the message from the error alone. Unknown fields are refused rather than ignored: a
//! setting the server does not know would otherwise silently not apply.

use serde_json::{Map, Value};

use super::pcm::Encoding;
use super::{LiveError, LiveErrorCode};
use crate::http_url::HttpUrl;
use crate::ids::GlossaryId;
use crate::languages::Language;

/// Lowest and highest accepted `audioConfig.sample_rate`.
pub const SAMPLE_RATES: std::ops::RangeInclusive<u32> = 8_000..=48_000;

/// The audio a client announces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AudioConfig {
    pub sample_rate: u32,
    pub encoding: Encoding,
}

impl Default for AudioConfig {
    fn default() -> Self {
        AudioConfig { sample_rate: 16_000, encoding: Encoding::S16le }
    }
}

/// What a client wants back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OutputConfig {
    /// Send `PartialResult`s while an utterance is spoken.
    pub partials: bool,
    /// Keep the audio and the finals as a `direct` transcription job (Scribe's addition).
    pub save_as_job: bool,
    /// Send each final again, read with the utterances around it, when that reading differs
    /// (Scribe's addition; see [`super::revision`]).
    pub revisions: bool,
}

/// A checked INIT message.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveInit {
    pub api_key: String,
    /// A language direct jobs transcribe, or `auto`.
    pub language: Language,
    pub audio: AudioConfig,
    pub output: OutputConfig,
    pub glossary_id: Option<GlossaryId>,
    /// Only with `saveAsJob`: called when the job is done, as for file jobs.
    pub callback_url: Option<HttpUrl>,
}

/// A text message from the client.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientText {
    Init(Box<LiveInit>),
    End,
}

const TOP_FIELDS: [&str; 7] =
    ["messageType", "language", "apiKey", "audioConfig", "outputConfig", "glossaryId", "callbackUrl"];
const AUDIO_FIELDS: [&str; 2] = ["sample_rate", "encoding"];
const OUTPUT_FIELDS: [&str; 4] = ["format", "partials", "saveAsJob", "revisions"];

impl ClientText {
    /// Parses a text frame.
    pub fn parse(text: &str) -> Result<ClientText, LiveError> {
        let value: Value = serde_json::from_str(text).map_err(|e| LiveError {
            close_code: 1007,
            ..LiveError::new(LiveErrorCode::InvalidMessage, format!("The message is not valid JSON: {e}"))
        })?;
        let Value::Object(message) = value else {
            return Err(LiveError::new(LiveErrorCode::InvalidMessage, "The message must be a JSON object"));
        };
        match message.get("messageType") {
            Some(Value::String(t)) if t == "INIT" => Ok(ClientText::Init(Box::new(parse_init(&message)?))),
            Some(Value::String(t)) if t == "END" => Ok(ClientText::End),
            Some(_) => Err(LiveError::field(
                LiveErrorCode::InvalidMessage,
                "messageType",
                "messageType must be one of: INIT, END",
                &["INIT", "END"],
            )),
            None => Err(LiveError::field(
                LiveErrorCode::InvalidMessage,
                "messageType",
                "messageType is required (INIT first, END to finish)",
                &["INIT", "END"],
            )),
        }
    }
}

fn unknown_fields(object: &Map<String, Value>, known: &[&str], prefix: &str) -> Result<(), LiveError> {
    match object.keys().find(|k| !known.contains(&k.as_str())) {
        Some(k) => Err(LiveError::field(
            LiveErrorCode::InvalidParameter,
            &format!("{prefix}{k}"),
            &format!("{prefix}{k} is not a field of the INIT message; known fields: {}", known.join(", ")),
            known,
        )),
        None => Ok(()),
    }
}

fn string<'a>(object: &'a Map<String, Value>, field: &str, path: &str) -> Result<Option<&'a str>, LiveError> {
    match object.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => {
            Err(LiveError::field(LiveErrorCode::InvalidParameter, path, &format!("{path} must be a string"), &[]))
        }
    }
}

fn boolean(object: &Map<String, Value>, field: &str, path: &str) -> Result<bool, LiveError> {
    match object.get(field) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(LiveError::field(
            LiveErrorCode::InvalidParameter,
            path,
            &format!("{path} must be true or false"),
            &["true", "false"],
        )),
    }
}

fn object<'a>(message: &'a Map<String, Value>, field: &str) -> Result<Option<&'a Map<String, Value>>, LiveError> {
    match message.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(o)) => Ok(Some(o)),
        Some(_) => {
            Err(LiveError::field(LiveErrorCode::InvalidParameter, field, &format!("{field} must be an object"), &[]))
        }
    }
}

/// The languages a live session accepts: `auto` and every code the engine transcribes.
pub fn live_languages() -> impl Iterator<Item = Language> {
    Language::all().filter(|l| l.is_supported_by_whisper())
}

fn parse_init(message: &Map<String, Value>) -> Result<LiveInit, LiveError> {
    unknown_fields(message, &TOP_FIELDS, "")?;
    let api_key = match string(message, "apiKey", "apiKey")? {
        Some(k) if !k.trim().is_empty() => k.to_string(),
        _ => {
            return Err(LiveError {
                field: Some("apiKey".into()),
                ..LiveError::new(LiveErrorCode::Unauthorized, "apiKey is required in the INIT message")
            });
        }
    };
    let language = match string(message, "language", "language")? {
        None => Language::default_language(),
        Some(code) => {
            let allowed: Vec<&str> = live_languages().map(Language::code).collect();
            match Language::parse(code) {
                Ok(l) if l.is_supported_by_whisper() => l,
                _ => {
                    return Err(LiveError::field(
                        LiveErrorCode::InvalidParameter,
                        "language",
                        &format!("language '{code}' cannot be transcribed live; use auto or one of the allowed codes"),
                        &allowed,
                    ));
                }
            }
        }
    };
    let mut audio = AudioConfig::default();
    if let Some(config) = object(message, "audioConfig")? {
        unknown_fields(config, &AUDIO_FIELDS, "audioConfig.")?;
        match config.get("sample_rate") {
            None | Some(Value::Null) => {}
            Some(v) => match v.as_u64().and_then(|r| u32::try_from(r).ok()).filter(|r| SAMPLE_RATES.contains(r)) {
                Some(rate) => audio.sample_rate = rate,
                None => {
                    return Err(LiveError::field(
                        LiveErrorCode::InvalidParameter,
                        "audioConfig.sample_rate",
                        &format!(
                            "audioConfig.sample_rate must be a whole number of Hz between {} and {}, not {v}",
                            SAMPLE_RATES.start(),
                            SAMPLE_RATES.end()
                        ),
                        &[],
                    ));
                }
            },
        }
        if let Some(name) = string(config, "encoding", "audioConfig.encoding")? {
            let names: Vec<&str> = Encoding::ALL.iter().map(|e| e.name()).collect();
            audio.encoding = Encoding::parse(name).ok_or_else(|| {
                LiveError::field(
                    LiveErrorCode::InvalidParameter,
                    "audioConfig.encoding",
                    &format!("audioConfig.encoding '{name}' is not supported; use one of: {}", names.join(", ")),
                    &names,
                )
            })?;
        }
    }
    let mut output = OutputConfig::default();
    if let Some(config) = object(message, "outputConfig")? {
        unknown_fields(config, &OUTPUT_FIELDS, "outputConfig.")?;
        if let Some(format) = string(config, "format", "outputConfig.format")?
            && format != "transcription"
        {
            return Err(LiveError::field(
                LiveErrorCode::InvalidParameter,
                "outputConfig.format",
                &format!("outputConfig.format '{format}' is not supported; the only format is transcription"),
                &["transcription"],
            ));
        }
        output.partials = boolean(config, "partials", "outputConfig.partials")?;
        output.save_as_job = boolean(config, "saveAsJob", "outputConfig.saveAsJob")?;
        output.revisions = boolean(config, "revisions", "outputConfig.revisions")?;
    }
    let glossary_id = string(message, "glossaryId", "glossaryId")?
        .map(|g| GlossaryId::parse_field("glossaryId", g))
        .transpose()
        .map_err(LiveError::invalid)?;
    let callback_url = string(message, "callbackUrl", "callbackUrl")?
        .map(|u| HttpUrl::parse_field("callbackUrl", u))
        .transpose()
        .map_err(LiveError::invalid)?;
    if callback_url.is_some() && !output.save_as_job {
        return Err(LiveError::field(
            LiveErrorCode::InvalidParameter,
            "callbackUrl",
            "callbackUrl is called when a saved session's job is done: it needs outputConfig.saveAsJob true",
            &[],
        ));
    }
    Ok(LiveInit { api_key, language, audio, output, glossary_id, callback_url })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn init(text: &str) -> Result<LiveInit, LiveError> {
        match ClientText::parse(text)? {
            ClientText::Init(i) => Ok(*i),
            ClientText::End => panic!("not an INIT"),
        }
    }

    #[test]
    fn given_amberscripts_example_when_parsed_then_it_opens_with_its_settings() {
        let i = init(
            r#"{"messageType":"INIT","language":"en","apiKey":"k","audioConfig":{"sample_rate":48000,"encoding":"s32le"},"outputConfig":{"partials":true}}"#,
        )
        .unwrap();
        assert_eq!(i.language.code(), "en");
        assert_eq!(i.audio, AudioConfig { sample_rate: 48_000, encoding: Encoding::S32le });
        assert_eq!(i.output, OutputConfig { partials: true, save_as_job: false, revisions: false });
    }

    #[test]
    fn given_only_a_key_when_parsed_then_the_protocols_defaults_apply() {
        let i = init(r#"{"messageType":"INIT","apiKey":"k"}"#).unwrap();
        assert_eq!(i.language.code(), "en");
        assert_eq!(i.audio, AudioConfig::default());
        assert_eq!(i.output, OutputConfig::default());
    }

    #[test]
    fn given_auto_and_scribes_additions_when_parsed_then_they_are_kept() {
        let i = init(
            r#"{"messageType":"INIT","language":"auto","apiKey":"k","glossaryId":"g1","callbackUrl":"https://example.com/cb","outputConfig":{"format":"transcription","saveAsJob":true,"revisions":true}}"#,
        )
        .unwrap();
        assert!(i.language.is_auto());
        assert!(i.output.save_as_job && i.output.revisions);
        assert_eq!(i.glossary_id.unwrap().as_str(), "g1");
        assert_eq!(i.callback_url.unwrap().as_str(), "https://example.com/cb");
    }

    #[test]
    fn given_bad_fields_when_parsed_then_the_error_names_the_field_and_the_allowed_values() {
        let e = init(r#"{"messageType":"INIT","apiKey":"k","audioConfig":{"encoding":"mp3"}}"#).unwrap_err();
        assert_eq!((e.code, e.field.as_deref()), (LiveErrorCode::InvalidParameter, Some("audioConfig.encoding")));
        assert_eq!(e.allowed.len(), 14);
        assert!(e.message.contains("s16le"), "{}", e.message);
        let e = init(r#"{"messageType":"INIT","apiKey":"k","language":"tlh"}"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("language"));
        assert!(e.allowed.contains(&"auto".to_string()) && e.allowed.contains(&"nl".to_string()));
        let e = init(r#"{"messageType":"INIT","apiKey":"k","audioConfig":{"sample_rate":96000}}"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("audioConfig.sample_rate"));
        let e = init(r#"{"messageType":"INIT","apiKey":"k","outputConfig":{"format":"captions"}}"#).unwrap_err();
        assert_eq!(e.allowed, vec!["transcription"]);
        let e = init(r#"{"messageType":"INIT","apiKey":"k","speakers":2}"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("speakers"));
        let e = init(r#"{"messageType":"INIT","apiKey":"k","callbackUrl":"https://example.com/"}"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("callbackUrl"));
    }

    #[test]
    fn given_no_key_when_parsed_then_it_is_unauthorized() {
        let e = init(r#"{"messageType":"INIT","language":"en"}"#).unwrap_err();
        assert_eq!((e.code, e.close_code), (LiveErrorCode::Unauthorized, 1008));
    }

    #[test]
    fn given_not_json_or_no_type_when_parsed_then_it_is_an_invalid_message() {
        let e = ClientText::parse("hello").unwrap_err();
        assert_eq!((e.code, e.close_code), (LiveErrorCode::InvalidMessage, 1007));
        let e = ClientText::parse(r#"{"language":"en"}"#).unwrap_err();
        assert_eq!((e.code, e.field.as_deref()), (LiveErrorCode::InvalidMessage, Some("messageType")));
        assert_eq!(ClientText::parse(r#"{"messageType":"END"}"#).unwrap(), ClientText::End);
    }
}
