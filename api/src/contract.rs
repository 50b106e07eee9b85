//! The rules of every request parameter, written into the OpenAPI document so that it tells the
//! whole truth: the enums, bounds, lengths and patterns the domain enforces (taken from the
//! domain's own lists and constants, so the document and the checks cannot drift apart), which
//! body fields are required, which are nullable, and, in words, the rules between parameters
//! that OpenAPI cannot state ([`cross_field_rule`]).
//!
//! Every enumerated value list is one named component schema (`Language`, `JobType`, ...),
//! referenced by `$ref` from every parameter and body field that takes it, so that a generated
//! client has one type per list rather than one per place.
//!
//! Handlers take plain strings and numbers and let the domain validate them (so that every
//! refusal names its parameter in a sentence); poem-openapi cannot attach an `enum` to such a
//! parameter, so [`complete`] adds the rules to the generated document by parameter name.
//!
//! Case rule: every enumerated value is matched exactly as documented (`en`, `fr-ca`, `direct`,
//! `OPEN`, `FIVE_DAYS`); `EN` or `DIRECT` is refused with the list of allowed values.

use scribe_domain::ids::MAX_ID_LEN;
use scribe_domain::kinds::{
    GlossarySortField, JobSortField, JobType, SortDirection, TranscriptionStyle, TranscriptionType, TurnaroundTime,
};
use scribe_domain::languages::{DIRECT_TARGET_LANGUAGES, Language, PERFECT_TARGET_LANGUAGES};
use scribe_domain::requests as limits;
use serde_json::{Map, Value, json};

/// An id as the domain accepts it (`scribe_domain::ids`): letters, digits, `-` and `_`.
fn id_schema() -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": MAX_ID_LEN, "pattern": format!("^[A-Za-z0-9_-]{{1,{MAX_ID_LEN}}}$")})
}

/// An absolute http(s) URL (`scribe_domain::http_url`).
fn url_schema() -> Value {
    json!({"type": "string", "maxLength": scribe_domain::http_url::MAX_URL_LEN, "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/?#]+[^\\s]*$"})
}

fn one_of<'a>(values: impl IntoIterator<Item = &'a str>) -> Value {
    json!({"type": "string", "enum": values.into_iter().collect::<Vec<_>>()})
}

fn integer(min: i64, max: i64) -> Value {
    json!({"type": "integer", "format": "int64", "minimum": min, "maximum": max})
}

/// Every `targetLanguage` of either job type (upload endpoints; the job type narrows it).
fn all_target_languages() -> Vec<&'static str> {
    let mut all: Vec<&'static str> = PERFECT_TARGET_LANGUAGES.to_vec();
    for code in DIRECT_TARGET_LANGUAGES {
        if !all.contains(&code) {
            all.push(code);
        }
    }
    all
}

/// The named enum of the parameter or body field `name` in operation `operation_id` (or body
/// schema), if it takes one of a list of values: the component's name and its values.
pub fn enum_of(operation_id: &str, name: &str) -> Option<(&'static str, Vec<&'static str>)> {
    let names = |all: &[&'static str]| all.to_vec();
    Some(match name {
        "language" => ("Language", Language::all().map(Language::code).collect()),
        "transcriptionType" => ("TranscriptionType", TranscriptionType::ALL.iter().map(|v| v.as_str()).collect()),
        "jobType" => ("JobType", JobType::ALL.iter().map(|v| v.as_str()).collect()),
        "transcriptionStyle" => ("TranscriptionStyle", TranscriptionStyle::ALL.iter().map(|v| v.as_str()).collect()),
        "turnaroundTime" => ("TurnaroundTime", TurnaroundTime::ALL.iter().map(|v| v.as_str()).collect()),
        "status" if operation_id == "listJobs" => ("JobStatusFilter", names(&["OPEN", "ERROR", "DONE"])),
        "sortBy" if operation_id == "listJobs" => {
            ("JobSortField", JobSortField::ALL.iter().map(|v| v.as_str()).collect())
        }
        "sortBy" => ("GlossarySortField", GlossarySortField::ALL.iter().map(|v| v.as_str()).collect()),
        "sortDirection" => ("SortDirection", SortDirection::ALL.iter().map(|v| v.as_str()).collect()),
        "targetLanguage" if operation_id == "orderTranslatedSubtitles" => {
            ("PerfectTargetLanguage", names(&PERFECT_TARGET_LANGUAGES))
        }
        "targetLanguage" => ("TargetLanguage", all_target_languages()),
        _ => return None,
    })
}

/// What each enum component is, for its description.
fn enum_description(component: &str) -> Option<&'static str> {
    Some(match component {
        "Language" => "A language code of the spec's table, or `auto` (detection).",
        "TurnaroundTime" => "Calendar days from the job's creation to its deadline (manual jobs).",
        "JobStatusFilter" => "The statuses the job list filters by.",
        "JobSortField" => "The job field the job list sorts by.",
        "GlossarySortField" => "The glossary field to sort by.",
        "SortDirection" => "Sort order.",
        "TargetLanguage" => "A translation target of either job type (the job type narrows it: see `targetLanguage`).",
        "PerfectTargetLanguage" => "A translation target of manual (`perfect`) translations.",
        _ => return None,
    })
}

/// The rule of the parameter or body field `name` in operation `operation_id`, if it has one.
pub fn rule(operation_id: &str, name: &str) -> Option<Value> {
    if let Some((_, values)) = enum_of(operation_id, name) {
        return Some(one_of(values));
    }
    let rule = match name {
        "jobId" | "sourceJobId" | "glossaryId" => id_schema(),
        "callbackUrl" | "sourceUrl" => url_schema(),
        "numberOfSpeakers" => integer(0, limits::MAX_SPEAKERS),
        "speakerChannels" => json!({"type": "boolean"}),
        "page" => integer(0, i64::MAX),
        "pageSize" => integer(1, limits::MAX_PAGE_SIZE),
        "notes" => json!({"type": "string", "maxLength": limits::MAX_NOTES_CHARS}),
        _ => return None,
    };
    Some(rule)
}

/// The operations that submit a job, whose parameters (query or body) depend on each other.
const SUBMISSIONS: &[&str] = &["uploadMedia", "uploadMediaFromUrl", "UploadFromUrl"];

/// What each job parameter means, written once for both submissions (the query of
/// `uploadMedia` and the JSON body `UploadFromUrl`); their Rust declarations carry no text.
pub fn job_parameter(name: &str) -> Option<&'static str> {
    Some(match name {
        "language" => "A language code of the spec's table, or `auto`. Default `en`.",
        "transcriptionType" => "`transcription` (default), `captions` or `translatedSubtitles`.",
        "jobType" => "`direct` (default, automatic) or `perfect` (manual).",
        "numberOfSpeakers" => {
            "The number of speakers in the file, 0 to 5. Direct jobs: 1 = one speaker (no diarization); 2 to 5 \
             given = exactly that many speakers whenever that many voices speak; left out = the default 2 as a \
             bound: at most 2 speakers, so a monologue stays one; 0 = unknown, the number (up to 5) is estimated. \
             Every word of the transcript gets its speaker and segments split at speaker changes."
        }
        "callbackUrl" => "http(s) URL that receives a POST with the job when it ends.",
        "glossaryId" => "The id of one of your glossaries.",
        "transcriptionStyle" => {
            "`cleanread` (default: without fillers such as \"um\"/\"uh\", stutters and false starts) or `verbatim` \
             (keeps them: Whisper is prompted to write what was said). Captions and subtitles are always clean read."
        }
        "turnaroundTime" => {
            "ONE_DAY, TWO_DAYS, THREE_DAYS, FOUR_DAYS, FIVE_DAYS (default), SEVEN_DAYS (default for \
             translatedSubtitles), TEN_DAYS, FOURTEEN_DAYS: calendar days to the deadline."
        }
        "targetLanguage" => {
            "The language of the translated subtitles (this server's direct targets: `en` always, `pt` with the \
             standard models, others with their models; see `GET /capabilities`)."
        }
        "deleteAfterSeconds" => {
            "Beyond the spec: delete the job's media and transcripts this many seconds after it ends (`DONE` or \
             `ERROR`), 1 to 315360000 (ten years); the server's own retention, if shorter, wins. The job then \
             answers 410; its history is kept."
        }
        "speakerChannels" => {
            "Beyond the spec: `true` diarizes by audio channel, for a call recorded one party per channel: each \
             channel is one speaker, channel 1 (left) always `Speaker 1` and channel 2 (right) `Speaker 2`, \
             whoever speaks first; each word goes to the channel loudest while it is spoken. A mono file is then \
             one speaker. `false` tells the voices apart (`numberOfSpeakers`). Left out: this server's default \
             (`speakerChannelsByDefault` in `GET /capabilities`, off unless the operator turned it on), except \
             that a job giving `numberOfSpeakers` is diarized by voice."
        }
        _ => return None,
    })
}

/// The description of job parameter `name` of submission `operation_id` (an operation or body
/// schema): its meaning, then its rule with the other parameters.
fn submission_description(operation_id: &str, name: &str) -> Option<String> {
    if !SUBMISSIONS.contains(&operation_id) {
        return None;
    }
    let meaning = job_parameter(name)?;
    Some(match cross_field_rule(operation_id, name) {
        Some(rule) => with_rule(Some(meaning), &rule),
        None => meaning.to_owned(),
    })
}

/// The rule between `name` and the other parameters of a job submission, which OpenAPI 3.0 cannot
/// state, as written into the parameter's description. Each is enforced by
/// `scribe_domain::requests::JobParams::validate` with a 400 naming `name`.
pub fn cross_field_rule(operation_id: &str, name: &str) -> Option<String> {
    if !SUBMISSIONS.contains(&operation_id) {
        return None;
    }
    Some(match name {
        "targetLanguage" => "Rule: required with transcriptionType `translatedSubtitles`, and refused (400, field \
            `targetLanguage`) with any other transcriptionType. The jobType chooses the list: `direct` da, en, es, fi, \
            fr, it, nl, no, pt, ro, ru, sv, uk (of which this server offers those it has models for, `GET \
            /capabilities`); `perfect` the spec's longer list. A target outside the job type's list is refused (400)."
            .to_owned(),
        "turnaroundTime" => "Rule: only with jobType `perfect`; with jobType `direct` (the default) it is refused \
            (400, field `turnaroundTime`)."
            .to_owned(),
        "transcriptionStyle" => "Rule: only with transcriptionType `transcription` (the default); with `captions` \
            or `translatedSubtitles` it is refused (400, field `transcriptionStyle`)."
            .to_owned(),
        "speakerChannels" => "Rule: `true` is refused together with numberOfSpeakers (400, field \
            `speakerChannels`): the channels are the speakers."
            .to_owned(),
        "language" => {
            let unrecognised: Vec<&str> =
                Language::all().filter(|l| !l.is_supported_by_whisper()).map(Language::code).collect();
            format!(
                "Rule: with jobType `direct` (the default), a language the speech model cannot recognise ({}) is \
                 refused (400, field `language`); use jobType `perfect`.",
                unrecognised.join(", ")
            )
        }
        _ => return None,
    })
}

/// `description` followed by `rule` (once).
fn with_rule(description: Option<&str>, rule: &str) -> String {
    match description.map(str::trim).filter(|d| !d.is_empty()) {
        Some(d) if d.contains(rule) => d.to_owned(),
        Some(d) => format!("{d}\n\n{rule}"),
        None => rule.to_owned(),
    }
}

/// The export and download bounds (`scribe_domain::transcript` subtitle parameters), which
/// differ between operations only in which of them an operation takes.
fn export_rule(name: &str) -> Option<Value> {
    Some(match name {
        "maxCharsPerRow" => integer(30, 45),
        "maxNumberOfRows" | "rows" => integer(1, 2),
        "maxScreenTimePerRowSeconds" | "screen" => json!({"type": "number", "minimum": 1, "maximum": 10}),
        "expires" => json!({"type": "integer", "format": "int64", "minimum": 0, "maximum": i64::MAX}),
        _ => return None,
    })
}

/// The sentence for a parameter the framework could not read as its type (poem-openapi says
/// `failed to parse "integer_int64" ...` or `Type "string" expects an input value`): what the
/// parameter must be, as a person would say it.
pub fn parse_failure(name: &str, reason: &str) -> String {
    if reason.contains("expects an input value") || reason.contains("required") {
        return format!("{name} is required");
    }
    if let Some(sentence) = rule(UNKNOWN_OPERATION, name).or_else(|| export_rule(name)).and_then(|r| describe(name, &r))
    {
        return sentence;
    }
    let lower = reason.to_ascii_lowercase();
    if lower.contains("bool") {
        format!("{name} must be true or false")
    } else if lower.contains("integer") {
        format!("{name} must be a whole number")
    } else if lower.contains("number") {
        format!("{name} must be a number")
    } else {
        format!("{name} is not a valid value")
    }
}

/// Any operation: the rules that depend on the operation are not used for messages.
const UNKNOWN_OPERATION: &str = "";

/// "maxCharsPerRow must be a whole number between 30 and 45", from the rule.
fn describe(name: &str, rule: &Value) -> Option<String> {
    let bound = |k: &str| rule.get(k).and_then(Value::as_f64);
    let kind = match rule.get("type").and_then(Value::as_str)? {
        "integer" => "a whole number",
        "number" => "a number",
        _ => return None,
    };
    Some(match (bound("minimum"), bound("maximum")) {
        (Some(min), Some(max)) if max < 1e15 => format!("{name} must be {kind} between {min} and {max}"),
        (Some(min), _) => format!("{name} must be {kind}, {min} or more"),
        _ => format!("{name} must be {kind}"),
    })
}

/// A pattern that holds when a string has a character that is not White_Space.
pub const NOT_BLANK: &str =
    "[^\\t\\n\\u000b\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]";

/// Rules of the fields of the request bodies, by schema name: (field, rule), the required
/// fields, and whether `null` is read as "not given" for the optional ones.
fn body_rules(schema_name: &str) -> Option<(Vec<(&'static str, Value)>, Vec<&'static str>)> {
    // Not blank: one character outside Unicode's White_Space (what Rust's `trim` removes),
    // spelled out, since regex engines disagree on `\s` (Python's counts U+001C..U+001F).
    let text = |max: usize| json!({"type": "string", "minLength": 1, "maxLength": max, "pattern": NOT_BLANK});
    match schema_name {
        "UserGlossary" => Some((
            vec![
                ("name", text(limits::MAX_GLOSSARY_NAME_CHARS)),
                (
                    "names",
                    json!({"type": "array", "maxItems": limits::MAX_GLOSSARY_NAMES,
                           "items": text(limits::MAX_GLOSSARY_NAMES_ENTRY_CHARS)}),
                ),
                (
                    "items",
                    json!({"type": "array", "maxItems": limits::MAX_GLOSSARY_ITEMS, "items": {"$ref": "#/components/schemas/UserGlossaryItem"}}),
                ),
            ],
            vec!["name"],
        )),
        "UserGlossaryItem" => Some((
            vec![
                ("name", text(limits::MAX_GLOSSARY_ITEM_NAME_CHARS)),
                ("description", json!({"type": "string", "maxLength": limits::MAX_GLOSSARY_ITEM_DESCRIPTION_CHARS})),
            ],
            vec!["name"],
        )),
        "UploadFromUrl" => Some((Vec::new(), vec!["sourceUrl"])),
        _ => None,
    }
}

/// Merges `rule` into `schema`, keeping its description.
fn merge(schema: &mut Value, rule: Value) {
    let (Some(schema), Value::Object(rule)) = (schema.as_object_mut(), rule) else { return };
    schema.remove("format");
    for (k, v) in rule {
        schema.insert(k, v);
    }
}

/// Adds every rule to a document written by poem-openapi.
pub fn complete(doc: &mut Value) {
    if let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) {
        for item in paths.values_mut() {
            for op in item.as_object_mut().into_iter().flat_map(|o| o.values_mut()) {
                let operation_id = op.get("operationId").and_then(Value::as_str).unwrap_or_default().to_owned();
                // Subtitles are also served as text/plain to a client that asks for it.
                if (operation_id == "exportSrt" || operation_id == "exportVtt")
                    && let Some(content) = op.pointer_mut("/responses/200/content").and_then(Value::as_object_mut)
                    && let Some(own) = content.values().next().cloned()
                {
                    content.insert("text/plain; charset=utf-8".into(), own);
                }
                // An upload body holds only its `file` part: others are refused, not ignored.
                if let Some(form) =
                    op.pointer_mut("/requestBody/content/multipart~1form-data/schema").and_then(Value::as_object_mut)
                {
                    form.insert("additionalProperties".into(), Value::Bool(false));
                }
                for param in op.get_mut("parameters").and_then(Value::as_array_mut).into_iter().flatten() {
                    let name = param.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
                    if let Some(rule) = rule(&operation_id, &name).or_else(|| export_rule(&name)) {
                        // The domain reads an empty optional value (`glossaryId=`) as not given.
                        let empty_is_absent =
                            (rule["type"] == "string" || name == "numberOfSpeakers" || name == "speakerChannels")
                                && param.get("in").and_then(Value::as_str) == Some("query")
                                && param.get("required").and_then(Value::as_bool) != Some(true);
                        if let Some(schema) = param.get_mut("schema") {
                            match enum_of(&operation_id, &name) {
                                Some((component, _)) => *schema = component_ref(component),
                                None => merge(schema, rule),
                            }
                        }
                        if empty_is_absent {
                            param["allowEmptyValue"] = Value::Bool(true);
                        }
                    }
                    if let Some(text) = submission_description(&operation_id, &name) {
                        param["description"] = Value::String(text);
                    }
                }
            }
        }
    }
    let Some(schemas) = doc.pointer_mut("/components/schemas").and_then(Value::as_object_mut) else { return };
    // OpenAI's error object writes `param` and `code` as `null` when there is none.
    if let Some(properties) = schemas.get_mut("OpenAiErrorObject").and_then(|s| s.get_mut("properties")) {
        for field in ["param", "code"] {
            if let Some(property) = properties.get_mut(field) {
                property["nullable"] = Value::Bool(true);
            }
        }
    }
    for (component, values) in enum_components() {
        let schema = schemas.entry(component).or_insert_with(|| json!({}));
        schema["type"] = json!("string");
        schema["enum"] = json!(values);
        if let Some(description) = enum_description(component) {
            schema["description"] = json!(description);
        }
    }
    for (schema_name, schema) in schemas.iter_mut() {
        let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) else { continue };
        let body = body_rules(schema_name);
        let is_request = body.is_some();
        if let Some((fields, _)) = &body {
            for (field, rule) in fields {
                if let Some(prop) = props.get_mut(*field) {
                    merge(prop, rule.clone());
                }
            }
        }
        if is_request {
            let names: Vec<String> = props.keys().cloned().collect();
            for name in names {
                let prop = props.get_mut(&name).expect("a listed key");
                match (enum_of(schema_name, &name), rule(schema_name, &name)) {
                    // `allOf` keeps the description beside the reference (and `nullable` below).
                    (Some((component, _)), _) => {
                        let description = prop.get("description").cloned();
                        *prop = json!({"allOf": [component_ref(component)]});
                        if let Some(d) = description {
                            prop["description"] = d;
                        }
                    }
                    (None, Some(rule)) => merge(prop, rule),
                    (None, None) => {}
                }
                if let Some(text) = submission_description(schema_name, &name) {
                    prop["description"] = Value::String(text);
                }
            }
        }
        // A document sent to be saved or previewed has at least one speaker, one segment and a
        // word in each segment (`scribe_domain::editing::validate_outline`).
        match schema_name.as_str() {
            "WorkDocument" => {
                for field in ["speakers", "segments"] {
                    if let Some(p) = props.get_mut(field) {
                        p["minItems"] = json!(1);
                    }
                }
            }
            "WorkSegment" => {
                if let Some(p) = props.get_mut("words") {
                    p["minItems"] = json!(1);
                }
            }
            _ => {}
        }
        let required: Vec<String> = schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect();
        let Some(obj) = schema.as_object_mut() else { continue };
        if let Some((_, must)) = body {
            let mut all = required.clone();
            for m in must {
                if !all.iter().any(|r| r == m) {
                    all.push(m.to_owned());
                }
            }
            obj.insert("required".into(), json!(all));
            // Read strictly: a field the schema does not have is refused (serde's `deny_unknown_fields`).
            obj.insert("additionalProperties".into(), Value::Bool(false));
            // Optional fields of a request body may be sent as null, read as "not given".
            let props = obj.get_mut("properties").and_then(Value::as_object_mut).expect("checked above");
            for (name, prop) in props.iter_mut() {
                if !all.iter().any(|r| r == name)
                    && let Some(p) = prop.as_object_mut()
                {
                    if p.contains_key("$ref") {
                        continue;
                    }
                    p.insert("nullable".into(), Value::Bool(true));
                    // OpenAPI 3.0.3: a nullable enum admits null only when the list has it.
                    if let Some(values) = p.get_mut("enum").and_then(Value::as_array_mut) {
                        values.push(Value::Null);
                    }
                }
            }
        } else if schema_name == "Job" {
            nullable(obj, "notes");
        }
    }
}

fn component_ref(component: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{component}")})
}

/// Every enum component, from the parameters that take one.
fn enum_components() -> Vec<(&'static str, Vec<&'static str>)> {
    let places = [
        ("", "language"),
        ("", "transcriptionType"),
        ("", "jobType"),
        ("", "transcriptionStyle"),
        ("", "turnaroundTime"),
        ("listJobs", "status"),
        ("listJobs", "sortBy"),
        ("", "sortBy"),
        ("", "sortDirection"),
        ("orderTranslatedSubtitles", "targetLanguage"),
        ("", "targetLanguage"),
    ];
    places.into_iter().filter_map(|(operation_id, name)| enum_of(operation_id, name)).collect()
}

fn nullable(schema: &mut Map<String, Value>, field: &str) {
    if let Some(p) = schema.get_mut("properties").and_then(|p| p.get_mut(field)).and_then(Value::as_object_mut) {
        p.insert("nullable".into(), Value::Bool(true));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_states_enums_bounds_and_nullability() {
        let mut doc: Value = serde_json::from_str(&crate::api_service().spec()).unwrap();
        complete(&mut doc);
        let param = |path: &str, method: &str, name: &str| -> Value {
            doc["paths"][path][method]["parameters"].as_array().unwrap().iter().find(|p| p["name"] == name).unwrap()["schema"].clone()
        };
        let component = |schema: Value| -> Value {
            let name = schema["$ref"]
                .as_str()
                .or_else(|| schema["allOf"][0]["$ref"].as_str())
                .expect("a reference")
                .to_owned();
            doc.pointer(name.trim_start_matches('#')).expect("the component exists").clone()
        };
        assert_eq!(param("/jobs", "get", "pageSize")["maximum"], 100);
        assert_eq!(component(param("/jobs", "get", "status"))["enum"], json!(["OPEN", "ERROR", "DONE"]));
        // Each list sorts by its own fields.
        assert_eq!(
            component(param("/jobs", "get", "sortBy"))["enum"],
            json!(["created", "filename", "nrAudioSeconds"])
        );
        assert_eq!(
            component(param("/glossary", "get", "sortBy"))["enum"],
            json!(["id", "name", "created", "userName"])
        );
        assert!(
            component(param("/jobs/upload-media", "post", "language"))["enum"]
                .as_array()
                .unwrap()
                .contains(&json!("fr-ca"))
        );
        // One component per list, referenced from the query and the body alike.
        assert_eq!(param("/jobs/upload-media", "post", "jobType"), json!({"$ref": "#/components/schemas/JobType"}));
        let url_job = &doc["components"]["schemas"]["UploadFromUrl"]["properties"];
        assert_eq!(url_job["jobType"]["allOf"], json!([{"$ref": "#/components/schemas/JobType"}]));
        assert_eq!(url_job["jobType"]["nullable"], true);
        assert_eq!(doc["components"]["schemas"]["JobType"]["enum"], json!(["perfect", "direct"]));
        assert_eq!(doc["components"]["schemas"]["UploadFromUrl"]["additionalProperties"], false);
        let style = doc["paths"]["/jobs/upload-media"]["post"]["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "transcriptionStyle")
            .unwrap()
            .clone();
        assert!(
            style["description"].as_str().unwrap().contains("Rule: only with transcriptionType `transcription`"),
            "{style}"
        );
        assert!(
            url_job["turnaroundTime"]["description"].as_str().unwrap().contains("Rule: only with jobType `perfect`")
        );
        assert_eq!(param("/jobs/upload-media", "post", "numberOfSpeakers")["type"], "integer");
        assert_eq!(param("/jobs/export-srt", "get", "maxCharsPerRow")["minimum"], 30);
        let schemas = &doc["components"]["schemas"];
        assert_eq!(schemas["Job"]["properties"]["notes"]["nullable"], true);
        assert_eq!(schemas["UploadFromUrl"]["properties"]["numberOfSpeakers"]["maximum"], 5);
        assert_eq!(schemas["UploadFromUrl"]["properties"]["numberOfSpeakers"]["type"], "integer");
        // speakerChannels is a boolean in the query (read as text, to refuse a bad value by name) and the body.
        assert_eq!(param("/jobs/upload-media", "post", "speakerChannels")["type"], "boolean");
        assert_eq!(schemas["UploadFromUrl"]["properties"]["speakerChannels"]["type"], "boolean");
        assert!(
            schemas["UploadFromUrl"]["properties"]["speakerChannels"]["description"]
                .as_str()
                .unwrap()
                .contains("Rule: `true` is refused together with numberOfSpeakers")
        );
        assert!(schemas["UserGlossary"]["required"].as_array().unwrap().contains(&json!("name")));
    }

    #[test]
    fn both_submissions_describe_each_job_parameter_in_the_same_words() {
        let mut doc: Value = serde_json::from_str(&crate::api_service().spec()).unwrap();
        complete(&mut doc);
        let query = doc["paths"]["/jobs/upload-media"]["post"]["parameters"].as_array().unwrap().clone();
        let body = &doc["components"]["schemas"]["UploadFromUrl"]["properties"];
        let names: Vec<&str> = query.iter().filter_map(|p| p["name"].as_str()).collect();
        assert_eq!(names.len(), 11, "{names:?}");
        for param in &query {
            let name = param["name"].as_str().unwrap();
            let meaning = job_parameter(name).unwrap_or_else(|| panic!("{name} is not described"));
            let said = param["description"].as_str().unwrap();
            assert!(said.starts_with(meaning), "{name}: {said}");
            assert_eq!(body[name]["description"].as_str(), Some(said), "{name} in the body");
        }
    }

    #[test]
    fn parse_failures_are_said_as_a_person_would() {
        assert_eq!(
            parse_failure("maxCharsPerRow", r#"failed to parse "integer_int64": invalid digit found in string"#),
            "maxCharsPerRow must be a whole number between 30 and 45"
        );
        assert_eq!(parse_failure("jobId", r#"Type "string" expects an input value"#), "jobId is required");
        assert_eq!(
            parse_failure("maxScreenTimePerRowSeconds", "failed to parse"),
            "maxScreenTimePerRowSeconds must be a number between 1 and 10"
        );
        assert_eq!(parse_failure("page", "failed"), "page must be a whole number, 0 or more");
        assert_eq!(
            parse_failure("includeSpeakers", r#"failed to parse "boolean""#),
            "includeSpeakers must be true or false"
        );
    }
}
