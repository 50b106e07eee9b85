//! The API's routes as the OpenAPI document declares them: for a request path, which template it
//! matches (a low-cardinality label for metrics), which methods the path allows (the `Allow`
//! header of a 405), which media types each operation answers with (the 406 check) and which
//! query parameters it takes (the strict query check of `strict_query`). Built
//! from the document itself, so endpoints added later (exports, ...) are covered with no edit here.

use poem::http::Method;
use serde_json::Value;

/// One path of the document.
#[derive(Debug, Clone)]
pub struct RouteEntry {
    /// The full path template, e.g. `/api/glossary/{glossaryId}`.
    pub template: String,
    segments: Vec<Segment>,
    /// Each method with the media types of its 2xx responses.
    operations: Vec<(Method, Vec<String>)>,
    /// The methods whose operation needs an API key.
    secured: Vec<Method>,
    /// Each method with the query parameters its operation takes.
    queries: Vec<(Method, QueryParams)>,
}

/// The query parameters an operation declares (a key scheme in the query counts as one), and
/// the fields of its JSON body, for telling a client that put a body field in the query.
#[derive(Debug, Clone, Default)]
pub struct QueryParams {
    pub declared: Vec<String>,
    pub body_fields: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
enum Segment {
    Literal(String),
    Param,
}

impl RouteEntry {
    /// The `Allow` header value: the path's methods, comma-separated.
    pub fn allow(&self) -> String {
        self.operations.iter().map(|(m, _)| m.as_str()).collect::<Vec<_>>().join(", ")
    }

    /// The media types `method` answers with; `None` if the path has no such operation.
    pub fn produces(&self, method: &Method) -> Option<&[String]> {
        self.operations.iter().find(|(m, _)| m == method).map(|(_, types)| types.as_slice())
    }

    /// Whether `method` on this path needs an API key (its operation declares `security`).
    pub fn is_secured(&self, method: &Method) -> bool {
        self.secured.contains(method)
    }

    /// The query parameters `method` on this path takes; `None` if the path has no such operation.
    pub fn query_params(&self, method: &Method) -> Option<&QueryParams> {
        self.queries.iter().find(|(m, _)| m == method).map(|(_, q)| q)
    }

    fn matches(&self, segments: &[&str]) -> bool {
        self.segments.len() == segments.len()
            && self.segments.iter().zip(segments).all(|(s, actual)| match s {
                Segment::Literal(l) => l == actual,
                Segment::Param => !actual.is_empty(),
            })
    }
}

/// Every path of the API.
#[derive(Debug, Clone, Default)]
pub struct RouteTable {
    routes: Vec<RouteEntry>,
}

impl RouteTable {
    /// Reads the paths of an OpenAPI document whose paths are served under `prefix` (`/api`).
    pub fn from_spec(prefix: &str, spec: &Value) -> RouteTable {
        let mut routes = Vec::new();
        let Some(paths) = spec.get("paths").and_then(Value::as_object) else { return RouteTable { routes } };
        for (path, item) in paths {
            let template = format!("{prefix}{path}");
            let segments = split(&template)
                .into_iter()
                .map(|s| if s.starts_with('{') { Segment::Param } else { Segment::Literal(s.to_owned()) })
                .collect();
            let mut operations = Vec::new();
            let mut secured = Vec::new();
            let mut queries = Vec::new();
            for (method, op) in item.as_object().into_iter().flatten() {
                let Ok(method) = Method::from_bytes(method.to_ascii_uppercase().as_bytes()) else { continue };
                if op.get("security").and_then(Value::as_array).is_some_and(|s| !s.is_empty()) {
                    secured.push(method.clone());
                }
                queries.push((method.clone(), query_params(spec, op)));
                operations.push((method, success_media_types(op)));
            }
            operations.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
            routes.push(RouteEntry { template, segments, operations, secured, queries });
        }
        RouteTable { routes }
    }

    /// The route `path` belongs to. Literal segments win over parameters when both match.
    pub fn find(&self, path: &str) -> Option<&RouteEntry> {
        let segments = split(path);
        self.routes
            .iter()
            .filter(|r| r.matches(&segments))
            .max_by_key(|r| r.segments.iter().filter(|s| matches!(s, Segment::Literal(_))).count())
    }
}

fn split(path: &str) -> Vec<&str> {
    path.split('/').filter(|s| !s.is_empty()).collect()
}

/// The query parameters of `op`: its `in: query` parameters, the query names of the key schemes
/// it accepts, and the properties of its JSON body schema.
fn query_params(spec: &Value, op: &Value) -> QueryParams {
    let mut declared: Vec<String> = op
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|p| p.get("in").and_then(Value::as_str) == Some("query"))
        .filter_map(|p| p.get("name").and_then(Value::as_str).map(str::to_owned))
        .collect();
    let schemes = spec.pointer("/components/securitySchemes");
    for requirement in op.get("security").and_then(Value::as_array).into_iter().flatten() {
        for name in requirement.as_object().into_iter().flat_map(|r| r.keys()) {
            let scheme = schemes.and_then(|s| s.get(name));
            let in_query = scheme.and_then(|s| s.get("in")).and_then(Value::as_str) == Some("query");
            if let Some(param) = scheme.and_then(|s| s.get("name")).and_then(Value::as_str).filter(|_| in_query)
                && !declared.iter().any(|d| d == param)
            {
                declared.push(param.to_owned());
            }
        }
    }
    let body_fields = op
        .pointer("/requestBody/content")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|content| content.iter())
        .filter(|(content_type, _)| content_type.starts_with("application/json"))
        .filter_map(|(_, media)| media.pointer("/schema/$ref").and_then(Value::as_str))
        .filter_map(|reference| reference.strip_prefix('#').and_then(|pointer| spec.pointer(pointer)))
        .flat_map(|schema| {
            schema.get("properties").and_then(Value::as_object).into_iter().flat_map(|p| p.keys().cloned())
        })
        .collect();
    QueryParams { declared, body_fields }
}

fn success_media_types(op: &Value) -> Vec<String> {
    let mut types = Vec::new();
    for (status, response) in op.get("responses").and_then(Value::as_object).into_iter().flatten() {
        if !status.starts_with('2') {
            continue;
        }
        for content_type in response.get("content").and_then(Value::as_object).into_iter().flatten().map(|(k, _)| k) {
            if !types.contains(content_type) {
                types.push(content_type.clone());
            }
        }
    }
    types
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> RouteTable {
        let spec = serde_json::json!({"paths": {
            "/jobs": {"get": {"responses": {"200": {"content": {"application/json; charset=utf-8": {}}}}},
                      "delete": {"responses": {"200": {"content": {"application/json; charset=utf-8": {}}}}}},
            "/jobs/status": {"get": {"responses": {"200": {"content": {"application/json; charset=utf-8": {}}}}}},
            "/glossary/{glossaryId}": {"put": {"responses": {}}, "delete": {"responses": {}}},
        }});
        RouteTable::from_spec("/api", &spec)
    }

    #[test]
    fn paths_match_templates_and_list_their_methods() {
        let t = table();
        let jobs = t.find("/api/jobs").unwrap();
        assert_eq!(jobs.allow(), "DELETE, GET");
        assert_eq!(jobs.produces(&Method::GET).unwrap(), ["application/json; charset=utf-8"]);
        assert!(jobs.produces(&Method::POST).is_none());
        assert_eq!(t.find("/api/glossary/abc").unwrap().template, "/api/glossary/{glossaryId}");
        assert!(t.find("/api/glossary").is_none());
        assert!(t.find("/api/nothing").is_none());
        assert_eq!(t.find("/api/jobs/status").unwrap().template, "/api/jobs/status");
    }

    #[test]
    fn an_operation_takes_its_query_parameters_its_query_key_and_names_its_body_fields() {
        let spec = serde_json::json!({
            "components": {
                "securitySchemes": {"ApiKeyAuth": {"type": "apiKey", "in": "query", "name": "apiKey"},
                                    "BearerAuth": {"type": "http", "scheme": "bearer"}},
                "schemas": {"Body": {"type": "object", "properties": {"sourceUrl": {}, "language": {}}}},
            },
            "paths": {"/jobs/url": {"post": {
                "parameters": [{"name": "dryRun", "in": "query"}, {"name": "X-Trace", "in": "header"}],
                "security": [{"ApiKeyAuth": []}, {"BearerAuth": []}],
                "requestBody": {"content": {"application/json; charset=utf-8": {"schema": {"$ref": "#/components/schemas/Body"}}}},
                "responses": {},
            }}},
        });
        let t = RouteTable::from_spec("/api", &spec);
        let q = t.find("/api/jobs/url").unwrap().query_params(&Method::POST).unwrap();
        assert_eq!(q.declared, ["dryRun", "apiKey"]);
        let mut body_fields = q.body_fields.clone();
        body_fields.sort();
        assert_eq!(body_fields, ["language", "sourceUrl"]);
    }
}
