//! The form fields of `POST /v1/audio/transcriptions` and `/v1/audio/translations`, checked
//! against OpenAI's API reference and turned into a job request: every field either changes the
//! job or is refused, naming the field (a field Scribe cannot honour is never accepted and
//! ignored).

use crate::decoding::{DecodingChoices, SpeechTask, VadChoice};
use crate::kinds::{JobType, TranscriptionType};
use crate::languages::{Language, WHISPER_LANGUAGES};
use crate::requests::JobRequest;

use super::names::whisper_name;

/// Which of the two audio endpoints was called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    Transcriptions,
    Translations,
}

/// The `response_format` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseFormat {
    Json,
    Text,
    Srt,
    Vtt,
    VerboseJson,
    DiarizedJson,
}

impl ResponseFormat {
    fn parse(endpoint: Endpoint, value: &str) -> Result<ResponseFormat, Refusal> {
        let format = match value {
            "json" => ResponseFormat::Json,
            "text" => ResponseFormat::Text,
            "srt" => ResponseFormat::Srt,
            "vtt" => ResponseFormat::Vtt,
            "verbose_json" => ResponseFormat::VerboseJson,
            "diarized_json" if endpoint == Endpoint::Transcriptions => ResponseFormat::DiarizedJson,
            _ => {
                let allowed = match endpoint {
                    Endpoint::Transcriptions => "json, text, srt, vtt, verbose_json or diarized_json",
                    Endpoint::Translations => "json, text, srt, vtt or verbose_json",
                };
                return Err(Refusal::invalid(
                    "response_format",
                    format!("response_format '{value}' is not one of {allowed}"),
                ));
            }
        };
        Ok(format)
    }
}

/// Which timings `verbose_json` carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Granularities {
    pub segment: bool,
    pub word: bool,
}

/// Why a request is refused, in the terms of OpenAI's error object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub kind: RefusalKind,
    pub message: String,
    /// The field at fault.
    pub param: Option<String>,
    /// OpenAI's `code`: `invalid_value`, `missing_required_parameter`, `unknown_parameter`,
    /// `unsupported_parameter`, `model_not_found`.
    pub code: &'static str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusalKind {
    /// 400.
    Invalid,
    /// 404: the model does not exist.
    UnknownModel,
}

impl Refusal {
    fn new(param: &str, code: &'static str, message: String) -> Refusal {
        Refusal { kind: RefusalKind::Invalid, message, param: Some(param.to_owned()), code }
    }

    pub fn invalid(param: &str, message: impl Into<String>) -> Refusal {
        Refusal::new(param, "invalid_value", message.into())
    }

    /// The model the request names is not installed.
    pub fn unknown_model(model: &str) -> Refusal {
        Refusal {
            kind: RefusalKind::UnknownModel,
            message: format!("The model `{model}` does not exist; GET /v1/models lists the installed models"),
            param: Some("model".to_owned()),
            code: "model_not_found",
        }
    }
}

/// A checked request.
#[derive(Debug, Clone, PartialEq)]
pub struct SpeechRequest {
    pub endpoint: Endpoint,
    /// The model id as asked (`whisper-1`, `whisper-base`, ...); resolved by the caller.
    pub model: String,
    /// `None`: detect the language.
    pub language: Option<Language>,
    pub response_format: ResponseFormat,
    pub granularities: Granularities,
    pub stream: bool,
    pub prompt: Option<String>,
    pub temperature: f32,
    pub vad: Option<VadChoice>,
    pub keywords: Vec<String>,
    /// Whisper codes to detect among.
    pub detect_among: Vec<String>,
}

/// What the caller knows of the model a request chose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelFacts {
    /// The installed model's name (its folder), recorded with the job.
    pub name: String,
    /// Whether it knows languages other than English (and can translate).
    pub multilingual: bool,
    /// The Whisper language codes its vocabulary has.
    pub languages: Vec<String>,
}

/// Longest prompt accepted (Whisper keeps the last 223 tokens of it anyway).
const MAX_PROMPT_CHARS: usize = 10_000;
/// Most keywords, and the longest one.
const MAX_KEYWORDS: usize = 100;
const MAX_KEYWORD_CHARS: usize = 100;

impl SpeechRequest {
    /// Checks the text fields of the form (in the order received; the file is the caller's).
    pub fn parse(endpoint: Endpoint, fields: &[(String, String)]) -> Result<SpeechRequest, Refusal> {
        let form = Form::read(endpoint, fields)?;
        let model = match form.one("model")?.map(str::trim) {
            Some(m) if !m.is_empty() => m.to_owned(),
            _ => {
                return Err(Refusal::new(
                    "model",
                    "missing_required_parameter",
                    "model is required: an id of GET /v1/models, or whisper-1 for the server's default".into(),
                ));
            }
        };
        let response_format = match form.one("response_format")? {
            Some(v) => ResponseFormat::parse(endpoint, v.trim())?,
            None => ResponseFormat::Json,
        };
        let language = match form.one("language")?.map(str::trim).filter(|v| !v.is_empty()) {
            Some(code) => openai_language(code)?,
            None => None,
        };
        let granularities = granularities(&form.list("timestamp_granularities"), response_format)?;
        let stream = match form.one("stream")?.map(|v| v.trim().to_ascii_lowercase()) {
            None => false,
            Some(v) if v == "false" || v == "0" => false,
            Some(v) if v == "true" || v == "1" => true,
            Some(v) => return Err(Refusal::invalid("stream", format!("stream must be true or false, not '{v}'"))),
        };
        if stream && matches!(response_format, ResponseFormat::VerboseJson | ResponseFormat::Srt | ResponseFormat::Vtt)
        {
            return Err(Refusal::invalid(
                "stream",
                "stream=true gives text events: use it with response_format json, text or diarized_json",
            ));
        }
        let prompt = match form.one("prompt")?.map(str::trim).filter(|p| !p.is_empty()) {
            Some(p) if p.chars().count() > MAX_PROMPT_CHARS => {
                return Err(Refusal::invalid("prompt", format!("prompt is longer than {MAX_PROMPT_CHARS} characters")));
            }
            p => p.map(str::to_owned),
        };
        let temperature = match form.one("temperature")?.map(str::trim).filter(|t| !t.is_empty()) {
            None => 0.0,
            Some(t) => match t.parse::<f32>() {
                Ok(v) if (0.0..=1.0).contains(&v) => v,
                _ => return Err(Refusal::invalid("temperature", format!("temperature must be 0 to 1, not '{t}'"))),
            },
        };
        let vad = chunking_strategy(&form)?;
        let keywords = keywords(&form.list("keywords"))?;
        let detect_among = detect_among(&form.list("languages"), language)?;
        Ok(SpeechRequest {
            endpoint,
            model,
            language,
            response_format,
            granularities,
            stream,
            prompt,
            temperature,
            vad,
            keywords,
            detect_among,
        })
    }

    /// Refuses what the chosen model cannot do: another language than English, or translating,
    /// on an English-only model; a language its vocabulary lacks.
    pub fn check_model(&self, model: &ModelFacts) -> Result<(), Refusal> {
        if self.endpoint == Endpoint::Translations && !model.multilingual {
            return Err(Refusal::invalid(
                "model",
                format!("{} knows only English and cannot translate; choose a multilingual model", model.name),
            ));
        }
        let knows = |code: &str| model.languages.iter().any(|l| l == code);
        if let Some(code) = self.language.and_then(Language::whisper_code)
            && !knows(code)
        {
            return Err(Refusal::invalid(
                "language",
                format!("{} cannot transcribe {} ({code}); choose another model", model.name, whisper_name(code)),
            ));
        }
        if let Some(code) = self.detect_among.iter().find(|c| !knows(c)) {
            return Err(Refusal::invalid(
                "languages",
                format!("{} cannot transcribe {} ({code}); choose another model", model.name, whisper_name(code)),
            ));
        }
        Ok(())
    }

    /// The job that answers the request: a direct transcription with the engine choices, of the
    /// installed model `model` (the resolved name, or `None` for the server's default).
    pub fn job_request(&self, model: Option<String>) -> JobRequest {
        let task = match self.endpoint {
            Endpoint::Transcriptions => SpeechTask::Transcribe,
            Endpoint::Translations => SpeechTask::Translate,
        };
        JobRequest {
            language: self.language.unwrap_or(Language::AUTO),
            transcription_type: TranscriptionType::Transcription,
            job_type: JobType::Direct,
            // Speakers are told apart only when the answer shows them.
            number_of_speakers: if self.response_format == ResponseFormat::DiarizedJson { 0 } else { 1 },
            number_of_speakers_given: true,
            job_options: None,
            turnaround_time: None,
            target_language: None,
            callback_url: None,
            glossary_id: None,
            delete_after_seconds: None,
            speaker_channels: None,
            decoding: Some(DecodingChoices {
                model,
                task,
                prompt: self.prompt.clone(),
                temperature: self.temperature,
                vad: self.vad,
                keywords: self.keywords.clone(),
                detect_among: self.detect_among.clone(),
            }),
        }
    }
}

/// The fields each endpoint takes (list fields without their `[]`).
const TRANSCRIPTION_FIELDS: &[&str] = &[
    "model",
    "language",
    "prompt",
    "response_format",
    "temperature",
    "timestamp_granularities",
    "stream",
    "chunking_strategy",
    "keywords",
    "languages",
];
const TRANSLATION_FIELDS: &[&str] = &["model", "prompt", "response_format", "temperature"];
/// OpenAI's fields that Scribe cannot honour: refused rather than ignored.
const UNSUPPORTED_FIELDS: &[(&str, &str)] = &[
    ("include", "Scribe returns no token log probabilities; leave include out"),
    ("known_speaker_names", "Scribe cannot match speakers to reference recordings; leave it out"),
    ("known_speaker_references", "Scribe cannot match speakers to reference recordings; leave it out"),
];

/// The text fields by name: `name[]` is `name`, `name[key]` (an object sent as bracketed
/// fields) is kept with its key.
struct Form<'a> {
    fields: Vec<(&'a str, Option<&'a str>, &'a str)>,
}

impl<'a> Form<'a> {
    fn read(endpoint: Endpoint, fields: &'a [(String, String)]) -> Result<Form<'a>, Refusal> {
        let allowed = match endpoint {
            Endpoint::Transcriptions => TRANSCRIPTION_FIELDS,
            Endpoint::Translations => TRANSLATION_FIELDS,
        };
        let mut parsed = Vec::with_capacity(fields.len());
        for (name, value) in fields {
            let (base, key) = match name.split_once('[') {
                Some((base, rest)) => (base, rest.strip_suffix(']').filter(|k| !k.is_empty())),
                None => (name.as_str(), None),
            };
            if let Some((_, why)) = UNSUPPORTED_FIELDS.iter().find(|(f, _)| *f == base) {
                return Err(Refusal::new(base, "unsupported_parameter", format!("{base} is not supported: {why}")));
            }
            if base == "file" {
                return Err(Refusal::invalid("file", "file must be sent as a file part (with a filename)"));
            }
            if !allowed.contains(&base) {
                let endpoint = match endpoint {
                    Endpoint::Transcriptions => "/v1/audio/transcriptions",
                    Endpoint::Translations => "/v1/audio/translations",
                };
                return Err(Refusal::new(
                    base,
                    "unknown_parameter",
                    format!("{base} is not a field of {endpoint}; it takes {}", allowed.join(", ")),
                ));
            }
            parsed.push((base, key, value.as_str()));
        }
        Ok(Form { fields: parsed })
    }

    /// A single-valued field; given twice is refused.
    fn one(&self, name: &str) -> Result<Option<&'a str>, Refusal> {
        let mut values = self.fields.iter().filter(|(n, k, _)| *n == name && k.is_none()).map(|(_, _, v)| *v);
        let first = values.next();
        if values.next().is_some() {
            return Err(Refusal::invalid(name, format!("{name} is given twice; send it once")));
        }
        Ok(first)
    }

    /// Every value of a list field (`name[]` or repeated `name`), trimmed, blanks left out.
    fn list(&self, name: &str) -> Vec<&'a str> {
        self.fields
            .iter()
            .filter(|(n, k, _)| *n == name && k.is_none())
            .map(|(_, _, v)| v.trim())
            .filter(|v| !v.is_empty())
            .collect()
    }

    /// The `name[key]` fields.
    fn keyed(&self, name: &str) -> Vec<(&'a str, &'a str)> {
        self.fields.iter().filter(|(n, _, _)| *n == name).filter_map(|(_, k, v)| Some(((*k)?, v.trim()))).collect()
    }
}

/// A `language`: a spec code (`en-us`, `nl-be`, `auto`) as written, else an ISO-639-1 code
/// (`en`, `he`, `zh`, `jv`); `None` for `auto`.
pub fn openai_language(code: &str) -> Result<Option<Language>, Refusal> {
    if let Ok(language) = Language::parse(code) {
        return Ok((!language.is_auto()).then_some(language));
    }
    let whisper = whisper_code_of(code).ok_or_else(|| {
        Refusal::invalid(
            "language",
            format!("language '{code}' is not an ISO-639-1 code (en, fr, de, ...) or one of the API's language codes"),
        )
    })?;
    Language::from_whisper(whisper).map(Some).ok_or_else(|| {
        Refusal::invalid(
            "language",
            format!(
                "Scribe does not transcribe {} ({code}); GET /api/capabilities lists its languages",
                whisper_name(whisper)
            ),
        )
    })
}

/// The Whisper code of an ISO-639-1 code (case-insensitive): Whisper writes Javanese `jw` and
/// knows Hebrew as `he` (formerly `iw`).
fn whisper_code_of(code: &str) -> Option<&'static str> {
    let lower = code.to_ascii_lowercase();
    let lower = match lower.as_str() {
        "jv" => "jw",
        "iw" => "he",
        other => other,
    };
    WHISPER_LANGUAGES.iter().copied().find(|w| *w == lower)
}

fn granularities(values: &[&str], format: ResponseFormat) -> Result<Granularities, Refusal> {
    let mut g = Granularities { segment: false, word: false };
    for v in values {
        match *v {
            "segment" => g.segment = true,
            "word" => g.word = true,
            other => {
                return Err(Refusal::invalid(
                    "timestamp_granularities",
                    format!("timestamp_granularities '{other}' is not segment or word"),
                ));
            }
        }
    }
    if !values.is_empty() && format != ResponseFormat::VerboseJson {
        return Err(Refusal::invalid(
            "timestamp_granularities",
            "timestamp_granularities needs response_format=verbose_json (the only format with timings)",
        ));
    }
    if values.is_empty() {
        g.segment = true;
    }
    Ok(g)
}

/// `chunking_strategy`: `auto` (Scribe's voice detection, as it runs anyway) or a `server_vad`
/// object, as a JSON string or as `chunking_strategy[...]` fields.
fn chunking_strategy(form: &Form<'_>) -> Result<Option<VadChoice>, Refusal> {
    const FIELD: &str = "chunking_strategy";
    let keyed = form.keyed(FIELD);
    let plain = form.one(FIELD)?.map(str::trim);
    let settings: Vec<(String, serde_json::Value)> = match (plain, keyed.is_empty()) {
        (Some(_), false) => {
            return Err(Refusal::invalid(FIELD, "chunking_strategy is given twice (as a value and as fields)"));
        }
        (None, true) => return Ok(None),
        (Some("auto"), true) => return Ok(None),
        (Some(json), true) => match serde_json::from_str::<serde_json::Value>(json) {
            Ok(serde_json::Value::String(s)) if s == "auto" => return Ok(None),
            Ok(serde_json::Value::Object(map)) => map.into_iter().collect(),
            _ => {
                return Err(Refusal::invalid(
                    FIELD,
                    "chunking_strategy must be auto or a server_vad object ({\"type\": \"server_vad\", ...})",
                ));
            }
        },
        (None, false) => {
            keyed.iter().map(|(k, v)| ((*k).to_owned(), serde_json::Value::String((*v).to_owned()))).collect()
        }
    };
    let mut vad = VadChoice::default();
    let mut typed = false;
    for (key, value) in settings {
        let text = match &value {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let number = |lo: f64, hi: f64| -> Result<f64, Refusal> {
            text.trim().parse::<f64>().ok().filter(|n| (lo..=hi).contains(n)).ok_or_else(|| {
                Refusal::invalid(FIELD, format!("chunking_strategy.{key} must be a number from {lo} to {hi}"))
            })
        };
        match key.as_str() {
            "type" if text == "server_vad" => typed = true,
            "type" => {
                return Err(Refusal::invalid(
                    FIELD,
                    format!("chunking_strategy.type must be server_vad, not '{text}'"),
                ));
            }
            "threshold" => vad.threshold = Some(number(0.0, 1.0)? as f32),
            "prefix_padding_ms" => vad.padding_ms = Some(number(0.0, 10_000.0)?.round() as u32),
            "silence_duration_ms" => vad.min_silence_ms = Some(number(0.0, 60_000.0)?.round() as u32),
            other => {
                return Err(Refusal::invalid(
                    FIELD,
                    format!(
                        "chunking_strategy.{other} is not a server_vad setting (type, threshold, prefix_padding_ms, \
                         silence_duration_ms)"
                    ),
                ));
            }
        }
    }
    if !typed {
        return Err(Refusal::invalid(FIELD, "chunking_strategy.type is required: server_vad"));
    }
    Ok(Some(vad))
}

fn keywords(values: &[&str]) -> Result<Vec<String>, Refusal> {
    if values.len() > MAX_KEYWORDS {
        return Err(Refusal::invalid("keywords", format!("at most {MAX_KEYWORDS} keywords")));
    }
    if let Some(long) = values.iter().find(|k| k.chars().count() > MAX_KEYWORD_CHARS) {
        return Err(Refusal::invalid(
            "keywords",
            format!("keyword '{long}' is longer than {MAX_KEYWORD_CHARS} characters"),
        ));
    }
    Ok(values.iter().map(|k| (*k).to_owned()).collect())
}

fn detect_among(values: &[&str], language: Option<Language>) -> Result<Vec<String>, Refusal> {
    if values.is_empty() {
        return Ok(Vec::new());
    }
    if language.is_some() {
        return Err(Refusal::invalid(
            "languages",
            "languages narrows the detection of the language: leave it out when language is given",
        ));
    }
    let mut codes: Vec<String> = Vec::new();
    for v in values {
        let code = whisper_code_of(v).filter(|w| Language::from_whisper(w).is_some()).ok_or_else(|| {
            Refusal::invalid("languages", format!("languages: '{v}' is not a language Scribe transcribes"))
        })?;
        if !codes.iter().any(|c| c == code) {
            codes.push(code.to_owned());
        }
    }
    Ok(codes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    fn transcription(pairs: &[(&str, &str)]) -> Result<SpeechRequest, Refusal> {
        SpeechRequest::parse(Endpoint::Transcriptions, &fields(pairs))
    }

    fn refused_param(pairs: &[(&str, &str)]) -> (String, &'static str) {
        let r = transcription(pairs).expect_err("refused");
        (r.param.unwrap_or_default(), r.code)
    }

    fn facts(multilingual: bool) -> ModelFacts {
        let languages = if multilingual {
            WHISPER_LANGUAGES[..99].iter().map(|s| s.to_string()).collect()
        } else {
            vec!["en".into()]
        };
        ModelFacts { name: "m".into(), multilingual, languages }
    }

    #[test]
    fn given_only_a_model_when_parsed_then_json_detected_language_segments() {
        let r = transcription(&[("model", "whisper-1")]).unwrap();
        assert_eq!(r.response_format, ResponseFormat::Json);
        assert_eq!(r.language, None);
        assert!(!r.stream);
        assert_eq!(r.granularities, Granularities { segment: true, word: false });
        let job = r.job_request(None);
        assert!(job.language.is_auto());
        assert_eq!(job.number_of_speakers, 1);
        assert_eq!(job.decoding.unwrap().task, SpeechTask::Transcribe);
    }

    #[test]
    fn given_no_model_when_parsed_then_missing_required_parameter() {
        assert_eq!(refused_param(&[("language", "en")]), ("model".into(), "missing_required_parameter"));
    }

    #[test]
    fn given_iso_and_spec_codes_when_parsed_then_spec_languages() {
        let lang = |c: &str| transcription(&[("model", "m"), ("language", c)]).unwrap().language.map(|l| l.code());
        assert_eq!(lang("en"), Some("en"));
        assert_eq!(lang("he"), Some("iw-il"));
        assert_eq!(lang("zh"), Some("cmn"));
        assert_eq!(lang("jv"), Some("jv-id"));
        assert_eq!(lang("nl-be"), Some("nl-be"));
        assert_eq!(lang("FR"), Some("fr"));
        assert_eq!(lang("auto"), None);
        assert_eq!(refused_param(&[("model", "m"), ("language", "la")]), ("language".into(), "invalid_value"));
        assert_eq!(refused_param(&[("model", "m"), ("language", "xx")]), ("language".into(), "invalid_value"));
    }

    #[test]
    fn given_granularities_without_verbose_json_when_parsed_then_refused() {
        assert_eq!(
            refused_param(&[("model", "m"), ("timestamp_granularities[]", "word")]),
            ("timestamp_granularities".into(), "invalid_value")
        );
        let r = transcription(&[
            ("model", "m"),
            ("response_format", "verbose_json"),
            ("timestamp_granularities[]", "word"),
        ])
        .unwrap();
        assert_eq!(r.granularities, Granularities { segment: false, word: true });
    }

    #[test]
    fn given_stream_with_subtitles_when_parsed_then_refused() {
        assert_eq!(refused_param(&[("model", "m"), ("stream", "true"), ("response_format", "srt")]).0, "stream");
        assert!(transcription(&[("model", "m"), ("stream", "true")]).unwrap().stream);
    }

    #[test]
    fn given_chunking_strategies_when_parsed_then_vad_settings() {
        let vad = |pairs: &[(&str, &str)]| transcription(pairs).unwrap().vad;
        assert_eq!(vad(&[("model", "m"), ("chunking_strategy", "auto")]), None);
        assert_eq!(
            vad(&[("model", "m"), ("chunking_strategy", r#"{"type":"server_vad","threshold":0.7}"#)]),
            Some(VadChoice { threshold: Some(0.7), padding_ms: None, min_silence_ms: None })
        );
        assert_eq!(
            vad(&[
                ("model", "m"),
                ("chunking_strategy[type]", "server_vad"),
                ("chunking_strategy[silence_duration_ms]", "800"),
                ("chunking_strategy[prefix_padding_ms]", "100"),
            ]),
            Some(VadChoice { threshold: None, padding_ms: Some(100), min_silence_ms: Some(800) })
        );
        assert_eq!(refused_param(&[("model", "m"), ("chunking_strategy", "fixed")]).0, "chunking_strategy");
        assert_eq!(
            refused_param(&[("model", "m"), ("chunking_strategy", r#"{"type":"server_vad","threshold":3}"#)]).0,
            "chunking_strategy"
        );
    }

    #[test]
    fn given_fields_scribe_cannot_honour_when_parsed_then_refused_by_name() {
        assert_eq!(
            refused_param(&[("model", "m"), ("include[]", "logprobs")]),
            ("include".into(), "unsupported_parameter")
        );
        assert_eq!(refused_param(&[("model", "m"), ("colour", "red")]), ("colour".into(), "unknown_parameter"));
        let r = SpeechRequest::parse(Endpoint::Translations, &fields(&[("model", "m"), ("language", "de")]));
        assert_eq!(r.unwrap_err().param.as_deref(), Some("language"));
        let r = SpeechRequest::parse(
            Endpoint::Translations,
            &fields(&[("model", "m"), ("response_format", "diarized_json")]),
        );
        assert_eq!(r.unwrap_err().param.as_deref(), Some("response_format"));
    }

    #[test]
    fn given_a_field_twice_when_parsed_then_refused() {
        assert_eq!(refused_param(&[("model", "a"), ("model", "b")]).0, "model");
    }

    #[test]
    fn given_temperature_out_of_range_when_parsed_then_refused() {
        assert_eq!(refused_param(&[("model", "m"), ("temperature", "1.5")]).0, "temperature");
        assert_eq!(transcription(&[("model", "m"), ("temperature", "0.4")]).unwrap().temperature, 0.4);
    }

    #[test]
    fn given_an_english_only_model_when_checked_then_other_languages_and_translation_refused() {
        let fr = transcription(&[("model", "m"), ("language", "fr")]).unwrap();
        assert_eq!(fr.check_model(&facts(false)).unwrap_err().param.as_deref(), Some("language"));
        assert!(fr.check_model(&facts(true)).is_ok());
        let translate = SpeechRequest::parse(Endpoint::Translations, &fields(&[("model", "m")])).unwrap();
        assert_eq!(translate.check_model(&facts(false)).unwrap_err().param.as_deref(), Some("model"));
        let job = translate.job_request(Some("whisper-base".into()));
        assert_eq!(job.decoding.as_ref().unwrap().task, SpeechTask::Translate);
        assert_eq!(job.decoding.unwrap().model.as_deref(), Some("whisper-base"));
    }

    #[test]
    fn given_diarized_json_when_made_a_job_then_speakers_are_estimated() {
        let r = transcription(&[("model", "m"), ("response_format", "diarized_json")]).unwrap();
        assert_eq!(r.job_request(None).number_of_speakers, 0);
    }

    #[test]
    fn given_languages_when_parsed_then_detection_among_them() {
        let r = transcription(&[("model", "m"), ("languages[]", "en"), ("languages[]", "nl")]).unwrap();
        assert_eq!(r.detect_among, vec!["en".to_owned(), "nl".to_owned()]);
        assert_eq!(refused_param(&[("model", "m"), ("language", "en"), ("languages[]", "nl")]).0, "languages");
    }
}
