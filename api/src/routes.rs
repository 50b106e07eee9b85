//! The API's routes as the OpenAPI document declares them: for a request path, which template it
//! matches (a low-cardinality label for metrics), which methods the path allows (the `Allow`
//! header of a 405) and which media types each operation answers with (the 406 check). Built
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
            for (method, op) in item.as_object().into_iter().flatten() {
                let Ok(method) = Method::from_bytes(method.to_ascii_uppercase().as_bytes()) else { continue };
                if op.get("security").and_then(Value::as_array).is_some_and(|s| !s.is_empty()) {
                    secured.push(method.clone());
                }
                operations.push((method, success_media_types(op)));
            }
            operations.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
            routes.push(RouteEntry { template, segments, operations, secured });
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
}
