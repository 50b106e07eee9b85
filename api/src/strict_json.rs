//! JSON request bodies read strictly. poem-openapi's `Json<T>` turns `{"name": false}` into the
//! string "false" and `[1, true]` into `["1", "true"]`; a client that sent the wrong type has a
//! bug it deserves to hear about. [`StrictJson`] documents the same schema as `Json<T>` but reads
//! the body with serde, which refuses a value of the wrong JSON type (and, for the types marked
//! `deny_unknown_fields`, a field the schema does not have), and answers 400 naming the field
//! (`name`, `items[2].description`) in a sentence.

use poem::{FromRequest, Request, RequestBody};
use poem_openapi::payload::{ParsePayload, Payload};
use poem_openapi::registry::{MetaMediaType, MetaRequest, MetaSchemaRef, Registry};
use poem_openapi::types::Type;
use poem_openapi::{ApiExtractor, ApiExtractorType, ExtractParamOptions};
use serde::de::DeserializeOwned;

use crate::error::ApiError;

/// A JSON body of type `T` (documented by `T`'s OpenAPI schema, read by `T`'s serde form).
pub struct StrictJson<T>(pub T);

const CONTENT_TYPE: &str = "application/json; charset=utf-8";

fn is_json(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    essence.strip_prefix("application/").is_some_and(|sub| sub == "json" || sub.ends_with("+json"))
}

impl<T: Type + DeserializeOwned + Send> Payload for StrictJson<T> {
    const CONTENT_TYPE: &'static str = CONTENT_TYPE;

    fn check_content_type(content_type: &str) -> bool {
        is_json(content_type)
    }

    fn schema_ref() -> MetaSchemaRef {
        T::schema_ref()
    }

    fn register(registry: &mut Registry) {
        T::register(registry);
    }
}

impl<T: Type + DeserializeOwned + Send> ParsePayload for StrictJson<T> {
    const IS_REQUIRED: bool = true;

    async fn from_request(request: &Request, body: &mut RequestBody) -> poem::Result<Self> {
        let data = <Vec<u8> as FromRequest>::from_request(request, body).await?;
        parse(&data).map(StrictJson).map_err(|e| poem::Error::from_response(poem::IntoResponse::into_response(e)))
    }
}

/// Reads `data` as `T`, or says what is wrong and where.
pub fn parse<T: DeserializeOwned>(data: &[u8]) -> Result<T, ApiError> {
    if data.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::invalid_body("The request body is empty; send a JSON object"));
    }
    let de = &mut serde_json::Deserializer::from_slice(data);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path.is_empty() || path == "." || inner.is_syntax() || inner.is_eof() {
            let what = inner.to_string();
            return ApiError::invalid_body(format!("The request body is not a valid JSON object: {what}"));
        }
        let message = inner.to_string();
        let message = message.split(" at line ").next().unwrap_or(&message);
        if let Some(expected) =
            message.strip_prefix("unknown field ").and_then(|rest| rest.split_once(", expected ")).map(|(_, e)| e)
        {
            return ApiError::invalid(&path, format!("{path} is not a field of this body (expected {expected})"));
        }
        ApiError::invalid(&path, format!("{path} has the wrong type: {}", describe(message)))
    })
}

/// serde's "invalid type: boolean `false`, expected a string at line 1 column 14" as
/// "expected a string, got boolean `false`".
fn describe(message: &str) -> String {
    let message = message.split(" at line ").next().unwrap_or(message);
    match message.strip_prefix("invalid type: ").and_then(|rest| rest.split_once(", expected ")) {
        Some((got, expected)) => format!("expected {}, got {got}", expected.replace("i64", "a whole number")),
        None => message.to_owned(),
    }
}

impl<'a, T: Type + DeserializeOwned + Send> ApiExtractor<'a> for StrictJson<T> {
    const TYPES: &'static [ApiExtractorType] = &[ApiExtractorType::RequestObject];
    type ParamType = ();
    type ParamRawType = ();

    fn register(registry: &mut Registry) {
        <Self as Payload>::register(registry);
    }

    fn request_meta() -> Option<MetaRequest> {
        Some(MetaRequest {
            description: None,
            content: vec![MetaMediaType { content_type: CONTENT_TYPE, schema: <Self as Payload>::schema_ref() }],
            required: true,
        })
    }

    async fn from_request(req: &'a Request, body: &mut RequestBody, _: ExtractParamOptions<()>) -> poem::Result<Self> {
        match req.content_type() {
            Some(content_type) if is_json(content_type) => <Self as ParsePayload>::from_request(req, body).await,
            Some(content_type) => {
                Err(poem_openapi::error::ContentTypeError::NotSupported { content_type: content_type.to_owned() }
                    .into())
            }
            None => Err(poem_openapi::error::ContentTypeError::ExpectContentType.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::UserGlossary;

    #[test]
    fn a_field_of_the_wrong_json_type_is_refused_naming_it() {
        let err = parse::<UserGlossary>(br#"{"name": false}"#).err().unwrap();
        let body = err.body();
        assert_eq!((body.status, body.field.as_deref()), (400, Some("name")));
        assert_eq!(body.message, "name has the wrong type: expected a string, got boolean `false`");
        let err = parse::<UserGlossary>(br#"{"name": "x", "items": [{"name": "a", "description": 5}]}"#).err().unwrap();
        assert_eq!(err.body().field.as_deref(), Some("items[0].description"));
        let ok = parse::<UserGlossary>(br#"{"name": "x", "names": ["a"], "items": null}"#).unwrap();
        assert_eq!(ok.name.as_deref(), Some("x"));
        assert_eq!(parse::<UserGlossary>(b"{").err().unwrap().body().field, None);
        let err = parse::<UserGlossary>(br#"{"name": "x", "userName": "ann"}"#).err().unwrap();
        assert_eq!(err.body().field.as_deref(), Some("userName"));
        assert_eq!(
            err.body().message,
            "userName is not a field of this body (expected one of `name`, `names`, `items`)"
        );
        let err = parse::<UserGlossary>(br#"{"name": "x", "items": [{"name": "a", "color": "red"}]}"#).err().unwrap();
        assert_eq!(err.body().field.as_deref(), Some("items[0].color"));
    }
}
