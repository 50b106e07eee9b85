//! Query strings read strictly, on every operation of the document: a parameter the operation
//! does not take, or one given twice, is refused with a 400 naming it. poem-openapi would
//! ignore the first and read the second first-wins, so `?language=fr` beside a URL job's JSON
//! body, or a second `apiKey`, would be silently dropped. What an operation takes comes from the
//! OpenAPI document ([`crate::routes::QueryParams`]), so the check and the document cannot
//! disagree; the edge runs it before any handler.

use crate::auth::API_KEY_PARAM;
use crate::error::ApiError;
use crate::routes::QueryParams;

/// Refuses the first parameter of `query` that `params` does not declare, or that is repeated.
pub fn check(params: &QueryParams, query: Option<&str>) -> Result<(), ApiError> {
    let Some(query) = query else { return Ok(()) };
    let mut seen: Vec<String> = Vec::new();
    for (name, _) in url::form_urlencoded::parse(query.as_bytes()) {
        // The key is welcome everywhere once (a signed download link does not need it, and a
        // client that sends it with every call is not wrong).
        if name != API_KEY_PARAM && !params.declared.iter().any(|d| *d == name) {
            return Err(unknown(params, &name));
        }
        if seen.iter().any(|s| *s == name) {
            return Err(ApiError::invalid(&name, format!("{name} is given more than once; give each parameter once")));
        }
        seen.push(name.into_owned());
    }
    Ok(())
}

fn unknown(params: &QueryParams, name: &str) -> ApiError {
    let message = if params.body_fields.iter().any(|f| f == name) {
        format!("{name} is not a query parameter of this endpoint: it goes in the JSON body")
    } else if params.declared.is_empty() {
        format!("{name} is not a parameter of this endpoint, which takes no query parameters")
    } else {
        format!("{name} is not a parameter of this endpoint; it takes {}", params.declared.join(", "))
    };
    ApiError::invalid(name, message)
}

/// Whether `query` repeats `apiKey` (told before the key is checked: there is no one key to check).
pub fn repeats(query: Option<&str>, name: &str) -> bool {
    query.is_some_and(|q| url::form_urlencoded::parse(q.as_bytes()).filter(|(k, _)| k == name).count() > 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> QueryParams {
        QueryParams { declared: vec!["apiKey".into(), "jobId".into()], body_fields: vec!["language".into()] }
    }

    fn refusal(query: &str) -> (Option<String>, String) {
        let body = check(&params(), Some(query)).unwrap_err().body().clone();
        assert_eq!(body.status, 400);
        (body.field, body.message)
    }

    #[test]
    fn declared_parameters_pass_once_each() {
        assert!(check(&params(), Some("apiKey=k&jobId=j")).is_ok());
        assert!(check(&params(), Some("jobId=")).is_ok());
        assert!(check(&params(), None).is_ok());
        assert!(check(&params(), Some("")).is_ok());
    }

    #[test]
    fn unknown_and_repeated_parameters_are_refused_naming_them() {
        assert_eq!(refusal("apiKey=k&colour=red").0.as_deref(), Some("colour"));
        assert!(refusal("apiKey=k&colour=red").1.contains("apiKey, jobId"));
        let (field, message) = refusal("apiKey=k&language=fr");
        assert_eq!(field.as_deref(), Some("language"));
        assert!(message.contains("JSON body"), "{message}");
        assert_eq!(refusal("apiKey=a&jobId=1&apiKey=b").0.as_deref(), Some("apiKey"));
        assert_eq!(refusal("jobId=1&jobId=1").0.as_deref(), Some("jobId"));
        assert_eq!(refusal("job%49d=1&jobId=2").0.as_deref(), Some("jobId"), "names are compared decoded");
        assert!(repeats(Some("apiKey=a&apiKey=b"), "apiKey"));
        assert!(!repeats(Some("apiKey=a&jobId=b"), "apiKey"));
    }
}
