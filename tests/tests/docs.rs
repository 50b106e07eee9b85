//! What the binary serves besides the API: the OpenAPI document (`/api/openapi.json`, every
//! endpoint in scope), Swagger UI (`/api/docs`, with no internet: its script comes from this
//! server), `/health`, and `/metrics` in Prometheus text format.

use scribe_tests::{Reply, TestServer, clips, paths};

#[test]
fn the_openapi_document_lists_every_endpoint_in_scope() {
    let server = TestServer::start();
    let reply = Reply::send(server.http().get(server.url("/api/openapi.json")));
    let doc = reply.ok();
    assert!(doc["openapi"].as_str().is_some_and(|v| v.starts_with("3.")), "{}", doc["openapi"]);
    let paths = doc["paths"].as_object().expect("paths");
    let expected = [
        ("/jobs/upload-media", "post"),
        ("/jobs/upload-media-from-url", "post"),
        ("/jobs/status", "get"),
        ("/jobs", "get"),
        ("/jobs", "delete"),
        ("/glossary", "get"),
        ("/glossary", "post"),
        ("/glossary/{glossaryId}", "put"),
        ("/glossary/{glossaryId}", "delete"),
        ("/jobs/translatedSubtitles", "post"),
        ("/work/tasks", "get"),
        ("/work/tasks/{taskId}", "get"),
        ("/work/tasks/{taskId}/claim", "post"),
        ("/work/tasks/{taskId}/document", "put"),
        ("/work/tasks/{taskId}/submit", "post"),
        ("/work/tasks/{taskId}/release", "post"),
        // Beyond the spec: what this server's models can do.
        ("/capabilities", "get"),
        // Beyond the spec: the editor's subtitle preview (its waveform peaks, like the media, are
        // a signed link without a key).
        ("/subtitles/preview", "post"),
    ];
    for (path, method) in expected {
        let op = &paths.get(path).unwrap_or_else(|| panic!("{path} missing from {:?}", paths.keys()))[method];
        assert!(op.is_object(), "{method} {path} missing");
        assert!(op["operationId"].is_string(), "{method} {path} has no operationId");
        let params = op["parameters"].as_array().cloned().unwrap_or_default();
        let security = op["security"].as_array().cloned().unwrap_or_default();
        assert!(
            !security.is_empty() || params.iter().any(|p| p["name"] == "apiKey"),
            "{method} {path}: the apiKey is not declared"
        );
    }
    let servers = doc["servers"].as_array().expect("servers");
    assert!(servers.iter().any(|s| s["url"] == "/api"), "paths are relative to /api: {servers:?}");
}

#[test]
fn swagger_ui_loads_without_the_internet() {
    let server = TestServer::start();
    let reply = Reply::send(server.http().get(server.url("/api/docs")));
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert!(reply.header("content-type").unwrap_or("").starts_with("text/html"));
    assert!(
        reply.text.to_lowercase().contains("swagger"),
        "not Swagger UI: {}",
        &reply.text[..reply.text.len().min(300)]
    );
    for cdn in ["unpkg.com", "cdn.jsdelivr", "cdnjs.cloudflare"] {
        assert!(!reply.text.contains(cdn), "Swagger UI loads from {cdn}, which needs the internet");
    }
    let spec_ref = reply.text.contains("openapi.json") || reply.text.contains("\"openapi\"");
    assert!(spec_ref, "the page does not point at (or embed) the OpenAPI document");
}

#[test]
fn health_and_metrics() {
    let server = TestServer::start();
    let health = Reply::send(server.http().get(server.url("/health"))).ok();
    assert_eq!(health["status"], "ok");

    let key = server.key();
    server.upload_ok(key, &paths::corpus_file(clips::SHORT), &[("jobType", "perfect")]);
    server.get("/jobs", key, &[]).ok();
    let metrics = Reply::send(server.http().get(server.url("/metrics")));
    assert_eq!(metrics.status, 200);
    assert!(
        metrics.header("content-type").unwrap_or("").starts_with("text/plain")
            || metrics.header("content-type").unwrap_or("").contains("openmetrics")
    );
    let text = &metrics.text;
    let has_sample = |needle: &str| text.lines().any(|l| !l.starts_with('#') && l.contains(needle));
    assert!(text.contains("# TYPE"), "Prometheus text format: {text}");
    assert!(has_sample("_bucket{"), "a latency histogram: {text}");
    assert!(has_sample("status=\"OPEN\"") || has_sample("status=\"open\""), "jobs by status: {text}");
    assert!(text.to_lowercase().contains("queue"), "the ASR queue length: {text}");
}

#[test]
fn the_web_app_is_served_from_the_binary_and_revalidated_with_304() {
    let server = TestServer::start();
    let page = Reply::send(server.http().get(server.url("/")));
    assert_eq!(page.status, 200);
    assert_eq!(page.header("content-type"), Some("text/html; charset=utf-8"));
    assert!(page.header("content-security-policy").is_some_and(|csp| csp.contains("default-src 'self'")));
    let script = Reply::send(server.http().get(server.url("/app/app.js")));
    assert_eq!(script.status, 200);
    assert!(
        script.header("content-type").is_some_and(|t| t.contains("javascript")),
        "{:?}",
        script.header("content-type")
    );
    assert_eq!(script.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(script.header("cache-control"), Some("no-cache"));
    // What a browser does on reload: the unchanged file answers 304, with no body and no error.
    let etag = script.header("etag").expect("an ETag").to_owned();
    let again = Reply::send(server.http().get(server.url("/app/app.js")).header("if-none-match", &etag));
    assert_eq!(again.status, 304, "{}", again.text);
    assert!(again.text.is_empty(), "{}", again.text);
    let page_etag = page.header("etag").expect("the page's ETag").to_owned();
    let page_again = Reply::send(server.http().get(server.url("/")).header("if-none-match", &page_etag));
    assert_eq!(page_again.status, 304, "{}", page_again.text);
    assert_eq!(Reply::send(server.http().get(server.url("/app/nothing.js"))).status, 404);
    assert_eq!(Reply::send(server.http().get(server.url("/app/index.html"))).status, 404);
}
