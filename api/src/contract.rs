//! The rules of every request parameter, written into the OpenAPI document so that it tells the
//! whole truth: the enums, bounds, lengths and patterns the domain enforces (taken from the
//! domain's own lists and constants, so the document and the checks cannot drift apart), which
//! body fields are required, and which are nullable.
//!
//! Handlers take plain strings and numbers and let the domain validate them (so that every
//! refusal names its parameter in a sentence); poem-openapi cannot attach an `enum` to such a
//! parameter, so [`complete`] adds the rules to the generated document by parameter name.
//!
//! Case rule: every enumerated value is matched exactly as documented (`en`, `fr-ca`, `direct`,
//! `OPEN`, `FIVE_DAYS`); `EN` or `DIRECT` is refused with the list of allowed values.

use serde_json::{Map, Value, json};
use scribe_domain::ids::MAX_ID_LEN;
use scribe_domain::kinds::{GlossarySortField, JobType, SortDirection, TranscriptionStyle, TranscriptionType, TurnaroundTime};
use scribe_domain::languages::{DIRECT_TARGET_LANGUAGES, Language, PERFECT_TARGET_LANGUAGES};
use scribe_domain::requests as limits;

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

/// The rule of the parameter or body field `name` in operation `operation_id`, if it has one.
pub fn rule(operation_id: &str, name: &str) -> Option<Value> {
    let rule = match name {
        "jobId" | "sourceJobId" | "glossaryId" => id_schema(),
        "callbackUrl" | "sourceUrl" => url_schema(),
        "language" => one_of(Language::all().map(Language::code)),
        "transcriptionType" => one_of(TranscriptionType::ALL.iter().map(|v| v.as_str())),
        "jobType" => one_of(JobType::ALL.iter().map(|v| v.as_str())),
        "transcriptionStyle" => one_of(TranscriptionStyle::ALL.iter().map(|v| v.as_str())),
        "turnaroundTime" => one_of(TurnaroundTime::ALL.iter().map(|v| v.as_str())),
        "status" if operation_id == "listJobs" => one_of(["OPEN", "ERROR", "DONE"]),
        "sortBy" => one_of(GlossarySortField::ALL.iter().map(|v| v.as_str())),
        "sortDirection" => one_of(SortDirection::ALL.iter().map(|v| v.as_str())),
        "targetLanguage" if operation_id == "orderTranslatedSubtitles" => one_of(PERFECT_TARGET_LANGUAGES),
        "targetLanguage" => one_of(all_target_languages()),
        "numberOfSpeakers" => integer(0, limits::MAX_SPEAKERS),
        "page" => integer(0, i64::MAX),
        "pageSize" => integer(1, limits::MAX_PAGE_SIZE),
        "notes" => json!({"type": "string", "maxLength": limits::MAX_NOTES_CHARS}),
        _ => return None,
    };
    Some(rule)
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
    if let Some(sentence) = rule(UNKNOWN_OPERATION, name).or_else(|| export_rule(name)).and_then(|r| describe(name, &r)) {
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
const NOT_BLANK: &str = "[^\\t\\n\\u000b\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]";

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
                ("items", json!({"type": "array", "maxItems": limits::MAX_GLOSSARY_ITEMS, "items": {"$ref": "#/components/schemas/UserGlossaryItem"}})),
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
                if operation_id == "exportSrt" || operation_id == "exportVtt" {
                    if let Some(content) = op.pointer_mut("/responses/200/content").and_then(Value::as_object_mut) {
                        if let Some(own) = content.values().next().cloned() {
                            content.insert("text/plain; charset=utf-8".into(), own);
                        }
                    }
                }
                // An upload body holds only its `file` part: others are refused, not ignored.
                if let Some(form) = op.pointer_mut("/requestBody/content/multipart~1form-data/schema").and_then(Value::as_object_mut) {
                    form.insert("additionalProperties".into(), Value::Bool(false));
                }
                for param in op.get_mut("parameters").and_then(Value::as_array_mut).into_iter().flatten() {
                    let name = param.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
                    if let Some(rule) = rule(&operation_id, &name).or_else(|| export_rule(&name)) {
                        // The domain reads an empty optional value (`glossaryId=`) as not given.
                        let empty_is_absent = (rule["type"] == "string" || name == "numberOfSpeakers")
                            && param.get("in").and_then(Value::as_str) == Some("query")
                            && param.get("required").and_then(Value::as_bool) != Some(true);
                        if let Some(schema) = param.get_mut("schema") {
                            merge(schema, rule);
                        }
                        if empty_is_absent {
                            param["allowEmptyValue"] = Value::Bool(true);
                        }
                    }
                }
            }
        }
    }
    let Some(schemas) = doc.pointer_mut("/components/schemas").and_then(Value::as_object_mut) else { return };
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
                if let Some(rule) = rule(schema_name, &name) {
                    merge(prop, rule);
                }
            }
        }
        let required: Vec<String> = schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(|v| v.as_str().map(str::to_owned)).collect();
        let Some(obj) = schema.as_object_mut() else { continue };
        if let Some((_, must)) = body {
            let mut all = required.clone();
            for m in must {
                if !all.iter().any(|r| r == m) {
                    all.push(m.to_owned());
                }
            }
            obj.insert("required".into(), json!(all));
            // Optional fields of a request body may be sent as null, read as "not given".
            let props = obj.get_mut("properties").and_then(Value::as_object_mut).expect("checked above");
            for (name, prop) in props.iter_mut() {
                if !all.iter().any(|r| r == name) {
                    if let Some(p) = prop.as_object_mut() {
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
            }
        } else if schema_name == "Job" {
            nullable(obj, "notes");
        }
    }
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
        assert_eq!(param("/jobs", "get", "pageSize")["maximum"], 100);
        assert_eq!(param("/jobs", "get", "status")["enum"], json!(["OPEN", "ERROR", "DONE"]));
        assert!(param("/jobs/upload-media", "post", "language")["enum"].as_array().unwrap().contains(&json!("fr-ca")));
        assert_eq!(param("/jobs/upload-media", "post", "numberOfSpeakers")["type"], "integer");
        assert_eq!(param("/jobs/export-srt", "get", "maxCharsPerRow")["minimum"], 30);
        let schemas = &doc["components"]["schemas"];
        assert_eq!(schemas["Job"]["properties"]["notes"]["nullable"], true);
        assert_eq!(schemas["UploadFromUrl"]["properties"]["numberOfSpeakers"]["maximum"], 5);
        assert_eq!(schemas["UploadFromUrl"]["properties"]["numberOfSpeakers"]["type"], "integer");
        assert!(schemas["UserGlossary"]["required"].as_array().unwrap().contains(&json!("name")));
    }

    #[test]
    fn parse_failures_are_said_as_a_person_would() {
        assert_eq!(
            parse_failure("maxCharsPerRow", r#"failed to parse "integer_int64": invalid digit found in string"#),
            "maxCharsPerRow must be a whole number between 30 and 45"
        );
        assert_eq!(parse_failure("jobId", r#"Type "string" expects an input value"#), "jobId is required");
        assert_eq!(parse_failure("maxScreenTimePerRowSeconds", "failed to parse"), "maxScreenTimePerRowSeconds must be a number between 1 and 10");
        assert_eq!(parse_failure("page", "failed"), "page must be a whole number, 0 or more");
        assert_eq!(parse_failure("includeSpeakers", r#"failed to parse "boolean""#), "includeSpeakers must be true or false");
    }
}
