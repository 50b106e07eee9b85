//! A client generated from our OpenAPI document works unedited: `openapi-python-client` (PyPI)
//! generates a Python package from `/api/openapi.json` of a running server, and a Python script
//! uses its `AuthenticatedClient` (the key as a Bearer token, no `apiKey` anywhere) for
//! upload → status → list → glossary create → delete. A second test holds the document to
//! generating without warnings (each warning is a schema a generated client gets wrong) and to
//! one Python enum per list of values (named component schemas, referenced wherever used).
//!
//! Needs the tools venv (`$SCRIBE_VENV`, default `<repo>/.venv`): `bash ops/setup.sh`.

use std::path::Path;
use std::process::Command;

use scribe_tests::{Reply, TestServer, clips, paths};
use serde_json::Value;

/// Uses only the generated package (and the standard library). Prints one JSON line of what it saw.
const SCRIPT: &str = r#"
import json, sys, time
from scribe_client import AuthenticatedClient
from scribe_client.api.jobs import upload_media, get_job_status, list_jobs, delete_job
from scribe_client.api.exports import export_srt, export_vtt
from scribe_client.api.glossaries import create_glossary, list_glossaries
from scribe_client.models import JobStatusFilter, Language, UploadMediaBody, UserGlossary
from scribe_client.types import File

base_url, key, media = sys.argv[1], sys.argv[2], sys.argv[3]
client = AuthenticatedClient(base_url=base_url, token=key, raise_on_unexpected_status=True)

with open(media, "rb") as f:
    body = UploadMediaBody(file=File(payload=f, file_name="en_jfk.wav", mime_type="audio/wav"))
    uploaded = upload_media.sync_detailed(client=client, body=body, language=Language("en"))
assert uploaded.status_code == 200, (uploaded.status_code, uploaded.content)
job = uploaded.parsed.job_status
job_id = job.job_id

status = get_job_status.sync(client=client, job_id=job_id).job_status
deadline = time.time() + 600
while status.status.value == "OPEN" and time.time() < deadline:
    time.sleep(1)
    status = get_job_status.sync(client=client, job_id=job_id).job_status
# Subtitles come back parsed as text (no UnexpectedStatus on a 200 of a subtitle media type).
srt = export_srt.sync_detailed(client=client, job_id=job_id, max_chars_per_row=37)
vtt = export_vtt.sync_detailed(client=client, job_id=job_id)
listed = list_jobs.sync(client=client, page_size=10, status=JobStatusFilter("DONE"))

glossary = create_glossary.sync(client=client, body=UserGlossary(name="Inauguration", names=["Kennedy"]))
glossaries = list_glossaries.sync(client=client)

deleted = delete_job.sync(client=client, job_id=job_id)

print(json.dumps({
    "uploaded": {"jobId": job_id, "status": job.status.value, "nrAudioSeconds": job.nr_audio_seconds,
                 "filename": job.filename, "jobType": job.job_type.value},
    "status": {"jobId": status.job_id, "status": status.status.value},
    "srt": {"status": int(srt.status_code), "text": srt.parsed},
    "vtt": {"status": int(vtt.status_code), "text": vtt.parsed},
    "listed": [j.job_id for j in listed],
    "glossary": {"id": glossary.id, "name": glossary.name, "names": list(glossary.names), "userName": glossary.user_name},
    "glossaries": [g.id for g in glossaries],
    "deleted": deleted.message,
}))
"#;

/// Generates the client package `scribe_client` from the running server's document into `dir`;
/// returns the generator's output.
fn generate(server: &TestServer, dir: &Path) -> (bool, String) {
    let doc = Reply::send(server.http().get(server.url("/api/openapi.json")));
    assert_eq!(doc.status, 200);
    let spec = dir.join("openapi.json");
    std::fs::write(&spec, &doc.text).unwrap();
    let config = dir.join("config.yml");
    std::fs::write(&config, "package_name_override: scribe_client\nproject_name_override: scribe-client\n").unwrap();
    let out = Command::new(paths::venv_bin("openapi-python-client"))
        .arg("generate")
        .arg("--path")
        .arg(&spec)
        .arg("--config")
        .arg(&config)
        .args(["--meta", "none", "--overwrite"])
        .arg("--output-path")
        .arg(dir.join("scribe_client"))
        .output()
        .expect("running openapi-python-client");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

#[test]
fn a_generated_python_client_uploads_lists_creates_a_glossary_and_deletes() {
    let server = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    let (ok, output) = generate(&server, dir.path());
    assert!(ok, "openapi-python-client failed:\n{output}");
    let script = dir.path().join("flow.py");
    std::fs::write(&script, SCRIPT).unwrap();
    let out = Command::new(paths::venv_bin("python"))
        .arg(&script)
        .arg(server.url("/api"))
        .arg(server.key())
        .arg(paths::corpus_file(clips::JFK))
        .env("PYTHONPATH", dir.path())
        .output()
        .expect("running python");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the generated client failed:\n{}\n{stdout}\n(generator said:\n{output})",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: Value =
        serde_json::from_str(stdout.lines().last().unwrap_or("")).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let job_id = seen["uploaded"]["jobId"].as_str().unwrap();
    assert_eq!(seen["uploaded"]["status"], "OPEN");
    assert_eq!(seen["uploaded"]["nrAudioSeconds"], 11);
    assert_eq!(seen["uploaded"]["filename"], "en_jfk.wav");
    assert_eq!(seen["status"]["jobId"], job_id);
    assert_eq!(seen["status"]["status"], "DONE", "{seen}");
    assert_eq!(seen["srt"]["status"], 200);
    let srt = seen["srt"]["text"].as_str().unwrap_or_else(|| panic!("the SRT export was not parsed: {seen}"));
    assert!(srt.starts_with("1\n") && srt.contains(" --> "), "{srt}");
    let vtt = seen["vtt"]["text"].as_str().unwrap_or_else(|| panic!("the VTT export was not parsed: {seen}"));
    assert!(vtt.starts_with("WEBVTT"), "{vtt}");
    assert_eq!(seen["listed"], serde_json::json!([job_id]));
    assert_eq!(seen["glossary"]["name"], "Inauguration");
    assert_eq!(seen["glossary"]["userName"], "admin");
    assert_eq!(seen["glossaries"], serde_json::json!([seen["glossary"]["id"]]));
    assert_eq!(seen["deleted"], "Job deleted");
    // What the client did is what the server holds.
    server.get("/jobs/status", server.key(), &[("jobId", job_id)]).error(410, Some("jobId"));
}

/// The generator has no complaint at all: every response it meets, subtitles included (listed
/// as `text/plain` beside their own media types), becomes a typed result.
#[test]
fn the_openapi_document_generates_without_other_warnings() {
    let server = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    let (ok, output) = generate(&server, dir.path());
    assert!(ok, "openapi-python-client failed:\n{output}");
    let unexpected: Vec<&str> = output
        .lines()
        .filter(|l| l.starts_with("WARNING") || l.contains("Unable") || l.contains("Unsupported content_type"))
        .collect();
    assert!(unexpected.is_empty(), "openapi-python-client warned about the document:\n{output}");

    // One enum class per list of values: the same list under two names is a duplicate type.
    let models = dir.path().join("scribe_client/models");
    let mut enums: Vec<(String, Vec<String>)> = Vec::new();
    for entry in std::fs::read_dir(&models).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        let Some(class) = text.lines().find_map(|l| l.strip_prefix("class ").filter(|rest| rest.contains("Enum):")))
        else {
            continue;
        };
        let name = class.split('(').next().unwrap().to_owned();
        let mut values: Vec<String> = text
            .lines()
            .filter_map(|l| {
                l.trim().split_once(" = ").filter(|(member, _)| {
                    member.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
                })
            })
            .map(|(_, value)| value.trim_matches('"').to_owned())
            .collect();
        values.sort();
        enums.push((name, values));
    }
    enums.sort();
    let names: Vec<&str> = enums.iter().map(|(n, _)| n.as_str()).collect();
    for (i, (name, values)) in enums.iter().enumerate() {
        for (other, other_values) in &enums[i + 1..] {
            assert_ne!(values, other_values, "{name} and {other} are the same enum ({names:?})");
        }
    }
    for expected in
        ["Language", "JobType", "TranscriptionType", "TranscriptionStyle", "TurnaroundTime", "TargetLanguage"]
    {
        assert!(names.contains(&expected), "no enum {expected} in {names:?}");
    }
}
