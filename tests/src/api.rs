//! Calls of the Scribe API as a client makes them (real HTTP, the key in `apiKey`), and the
//! checks every test repeats: a successful JSON answer, the one error body shape, a job reaching
//! a final status. Failures show the request, the answer and the server's log.

use std::path::Path;
use std::time::{Duration, Instant};

use reqwest::blocking::{RequestBuilder, multipart};
use reqwest::header::HeaderMap;
use serde_json::Value;

use crate::server::TestServer;

/// An answer: status, headers and body text, with what was asked (for messages).
#[derive(Debug, Clone)]
pub struct Reply {
    pub request: String,
    pub status: u16,
    pub headers: HeaderMap,
    pub text: String,
}

impl Reply {
    /// Sends `builder` and reads the whole answer.
    pub fn send(builder: RequestBuilder) -> Reply {
        let request = builder.try_clone().and_then(|b| b.build().ok());
        let described = match &request {
            Some(r) => format!("{} {}", r.method(), redact(r.url().as_str())),
            None => "(streamed request)".to_owned(),
        };
        let response = builder.send().unwrap_or_else(|e| panic!("{described}: {e}"));
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().unwrap_or_else(|e| panic!("{described}: reading the body: {e}"));
        Reply { request: described, status, headers, text }
    }

    /// The body as JSON (panics, showing it, if it is not).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text)
            .unwrap_or_else(|e| panic!("{}: body is not JSON ({e}): {}", self.request, self.text))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Asserts a 200 with a JSON body and returns the body.
    pub fn ok(&self) -> Value {
        assert_eq!(self.status, 200, "{} answered {}: {}", self.request, self.status, self.text);
        self.json()
    }

    /// Asserts the common error body with `status` (and `field`, when given): `{"status",
    /// "error", "message", "field"?}`, JSON content type, a non-empty message. Returns the body.
    pub fn error(&self, status: u16, field: Option<&str>) -> Value {
        assert_eq!(self.status, status, "{} answered {} (expected {status}): {}", self.request, self.status, self.text);
        let content_type = self.header("content-type").unwrap_or("");
        assert!(content_type.starts_with("application/json"), "{}: error content-type {content_type:?}", self.request);
        let body = self.json();
        assert_eq!(body["status"], status, "{}: body status: {body}", self.request);
        let code = body["error"].as_str().unwrap_or_else(|| panic!("{}: no error code: {body}", self.request));
        assert!(
            !code.is_empty() && code.chars().all(|c| c.is_ascii_uppercase() || c == '_'),
            "{}: error code {code:?}",
            self.request
        );
        let message = body["message"].as_str().unwrap_or_else(|| panic!("{}: no message: {body}", self.request));
        assert!(!message.trim().is_empty(), "{}: empty message", self.request);
        let keys: Vec<&String> = body.as_object().expect("an object").keys().collect();
        assert!(
            keys.iter().all(|k| ["status", "error", "message", "field"].contains(&k.as_str())),
            "{}: unexpected keys in the error body: {body}",
            self.request
        );
        if let Some(field) = field {
            assert_eq!(body["field"], field, "{}: the error names the wrong field: {body}", self.request);
        }
        body
    }
}

/// Hides the key in a URL shown in a message.
fn redact(url: &str) -> String {
    match url.find("apiKey=") {
        Some(i) => {
            let end = url[i..].find('&').map(|e| i + e).unwrap_or(url.len());
            format!("{}apiKey=…{}", &url[..i], &url[end..])
        }
        None => url.to_owned(),
    }
}

impl TestServer {
    /// `GET /api{path}?apiKey=KEY&query…`
    pub fn get(&self, path: &str, key: &str, query: &[(&str, &str)]) -> Reply {
        Reply::send(self.http().get(self.url(&format!("/api{path}"))).query(&[("apiKey", key)]).query(query))
    }

    /// `DELETE /api{path}?apiKey=KEY&query…`
    pub fn delete(&self, path: &str, key: &str, query: &[(&str, &str)]) -> Reply {
        Reply::send(self.http().delete(self.url(&format!("/api{path}"))).query(&[("apiKey", key)]).query(query))
    }

    /// `POST /api{path}?apiKey=KEY` with a JSON body.
    pub fn post_json(&self, path: &str, key: &str, body: &Value) -> Reply {
        Reply::send(self.http().post(self.url(&format!("/api{path}"))).query(&[("apiKey", key)]).json(body))
    }

    /// `POST /api{path}?apiKey=KEY&query…` with no body.
    pub fn post(&self, path: &str, key: &str, query: &[(&str, &str)]) -> Reply {
        Reply::send(self.http().post(self.url(&format!("/api{path}"))).query(&[("apiKey", key)]).query(query))
    }

    /// `PUT /api{path}?apiKey=KEY` with a JSON body.
    pub fn put_json(&self, path: &str, key: &str, body: &Value) -> Reply {
        Reply::send(self.http().put(self.url(&format!("/api{path}"))).query(&[("apiKey", key)]).json(body))
    }

    /// `POST /api/jobs/upload-media` with `file` as the multipart part `file`.
    pub fn upload(&self, key: &str, file: &Path, query: &[(&str, &str)]) -> Reply {
        let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("media").to_owned();
        let bytes = std::fs::read(file).unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
        self.upload_bytes(key, &name, bytes, query)
    }

    /// `POST /api/jobs/upload-media` with `bytes` as the part `file` named `name`.
    pub fn upload_bytes(&self, key: &str, name: &str, bytes: Vec<u8>, query: &[(&str, &str)]) -> Reply {
        let part = multipart::Part::bytes(bytes).file_name(name.to_owned());
        let form = multipart::Form::new().part("file", part);
        Reply::send(
            self.http().post(self.url("/api/jobs/upload-media")).query(&[("apiKey", key)]).query(query).multipart(form),
        )
    }

    /// Uploads `file` and returns the new job (the answer's `jobStatus`), asserting a 200.
    pub fn upload_ok(&self, key: &str, file: &Path, query: &[(&str, &str)]) -> Value {
        self.upload(key, file, query).ok()["jobStatus"].clone()
    }

    /// `POST /api/jobs/upload-media-from-url` with `{"sourceUrl": url, ...extra}`; returns the job.
    pub fn upload_url_ok(&self, key: &str, url: &str, extra: &Value) -> Value {
        let mut body = serde_json::json!({ "sourceUrl": url });
        if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
            b.extend(e.clone());
        }
        self.post_json("/jobs/upload-media-from-url", key, &body).ok()["jobStatus"].clone()
    }

    /// The job as `GET /jobs/status` shows it (asserting a 200).
    pub fn status(&self, key: &str, job_id: &str) -> Value {
        self.get("/jobs/status", key, &[("jobId", job_id)]).ok()["jobStatus"].clone()
    }

    /// Polls `GET /jobs/status` until the job's status is one of `statuses`; returns the job.
    pub fn wait_for_status(&self, key: &str, job_id: &str, statuses: &[&str], timeout: Duration) -> Value {
        let deadline = Instant::now() + timeout;
        loop {
            let job = self.status(key, job_id);
            if statuses.iter().any(|s| job["status"] == *s) {
                return job;
            }
            assert!(
                Instant::now() < deadline,
                "job {job_id} is still {} after {timeout:?} (waiting for {statuses:?}): {job}\n{}",
                job["status"],
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// `GET /api/jobs` with `query`; the bare array.
    pub fn list_jobs(&self, key: &str, query: &[(&str, &str)]) -> Vec<Value> {
        match self.get("/jobs", key, query).ok() {
            Value::Array(jobs) => jobs,
            other => panic!("GET /jobs answered a non-array: {other}"),
        }
    }

    /// Waits until `GET /me` shows `expected` cents (charges and refunds arrive through the log).
    pub fn wait_for_balance(&self, key: &str, expected: u64) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let me = self.get("/me", key, &[]).ok();
            if me["balance"] == expected {
                return;
            }
            assert!(Instant::now() < deadline, "the balance stays {} instead of {expected}", me["balance"]);
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// `POST /api/glossary`; returns the created glossary.
    pub fn create_glossary(&self, key: &str, body: &Value) -> Value {
        self.post_json("/glossary", key, body).ok()
    }
}

/// The ids of a list of jobs or glossaries, in order.
pub fn ids(items: &[Value], field: &str) -> Vec<String> {
    items.iter().map(|j| j[field].as_str().unwrap_or_else(|| panic!("no {field} in {j}")).to_owned()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_hidden_in_messages() {
        assert_eq!(redact("http://h/api/jobs?apiKey=sk_1&page=2"), "http://h/api/jobs?apiKey=…&page=2");
        assert_eq!(redact("http://h/api/jobs?jobId=1&apiKey=sk_1"), "http://h/api/jobs?jobId=1&apiKey=…");
        assert_eq!(redact("http://h/health"), "http://h/health");
    }
}
