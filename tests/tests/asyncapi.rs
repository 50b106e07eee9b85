//! The live transcription protocol as tools read it: the AsyncAPI document served at
//! `/api/asyncapi.json` passes the official AsyncAPI parser (npm `@asyncapi/parser`, installed by
//! `ops/setup.sh`) with no error, every example in it matches its message's schema, it names
//! every encoding and message type of the protocol, and Swagger UI's description points at it.
//! The live tests' check of every server message against this document
//! (`scribe_tests::live::ServerMessages`) knows every message the server sends and refuses one
//! that breaks its schema, so it cannot pass everything unseen.

use std::process::Command;

use scribe_tests::live::ServerMessages;
use scribe_tests::{Reply, TestServer, paths};
use serde_json::{Value, json};

/// Parses the document at `argv[2]` with the official parser and checks each message's examples
/// against its payload schema with the JSON Schema validator the parser itself uses. Prints every
/// diagnostic; exits non-zero on any of severity error or any example that does not match.
const VALIDATE_JS: &str = r#"
const fs = require("fs");
const parserPath = require.resolve("@asyncapi/parser");
const { Parser, DiagnosticSeverity } = require(parserPath);
const Ajv = require(require.resolve("ajv", { paths: [parserPath] }));
const addFormats = require(require.resolve("ajv-formats", { paths: [parserPath] }));

(async () => {
  const { document, diagnostics } = await new Parser().parse(fs.readFileSync(process.argv[2], "utf8"));
  const severity = ["error", "warning", "information", "hint"];
  for (const d of diagnostics) {
    console.log(`${severity[d.severity]} ${d.code} at ${JSON.stringify(d.path)}: ${d.message}`);
  }
  let failed = !document || diagnostics.some((d) => d.severity === DiagnosticSeverity.Error);
  if (document) {
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    let examples = 0;
    for (const message of document.messages()) {
      if (!message.hasPayload()) continue;
      const validate = ajv.compile(message.payload().json());
      for (const example of message.examples().all()) {
        examples += 1;
        if (!validate(example.payload())) {
          failed = true;
          console.log(`error example ${message.id()}/${example.name()}: ${ajv.errorsText(validate.errors)}`);
        }
      }
    }
    console.log(`AsyncAPI ${document.version()}: ${document.messages().length} messages, ${document.operations().length} operations, ${examples} examples checked`);
  }
  process.exit(failed ? 1 : 0);
})().catch((e) => {
  console.error(e);
  process.exit(2);
});
"#;

const ENCODINGS: [&str; 14] = [
    "f32be", "f32le", "s16be", "s16le", "s24be", "s24le", "s32be", "s32le", "u16be", "u16le", "u24be", "u24le",
    "u32be", "u32le",
];

/// The message types of the protocol: what a client sends, and the `type` of what it receives.
const MESSAGE_TYPES: [&str; 7] = ["INIT", "END", "Info", "Warning", "Error", "PartialResult", "FinalResult"];

#[test]
fn the_asyncapi_document_passes_the_official_parser_and_names_the_whole_protocol() {
    let server = TestServer::start();
    let reply = Reply::send(server.http().get(server.url("/api/asyncapi.json")));
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    let doc: Value = reply.json();
    assert_eq!(doc["asyncapi"], "3.0.0");
    // The server is the one the request reached.
    assert_eq!(doc["servers"]["scribe"]["host"], server.addr().to_string(), "{}", doc["servers"]);
    assert_eq!(doc["channels"]["realTime"]["address"], "/api/real-time");

    let encodings = doc.pointer("/components/schemas/AudioConfig/properties/encoding/enum").expect("the encodings");
    for encoding in ENCODINGS {
        assert!(encodings.as_array().unwrap().iter().any(|e| e == encoding), "{encoding} missing from {encodings}");
    }
    let message_names: Vec<&str> = doc["components"]["messages"]
        .as_object()
        .expect("messages")
        .values()
        .filter_map(|m| m["name"].as_str())
        .collect();
    for message in MESSAGE_TYPES {
        assert!(message_names.contains(&message), "message {message} missing: {message_names:?}");
    }
    let ops = doc["operations"].as_object().expect("operations");
    assert_eq!(ops.len(), 8, "INIT, audio and END received; five message types sent: {:?}", ops.keys());

    let work = tempfile::tempdir().expect("a temp dir");
    let document = work.path().join("asyncapi.json");
    std::fs::write(&document, &reply.text).unwrap();
    let script = work.path().join("validate.js");
    std::fs::write(&script, VALIDATE_JS).unwrap();
    let parser = paths::node_package("@asyncapi/parser");
    let out = Command::new("node")
        .arg(&script)
        .arg(&document)
        .env("NODE_PATH", parser.parent().and_then(|p| p.parent()).expect("node_modules"))
        .output()
        .expect("running node (install it with `bash ops/setup.sh`)");
    let printed = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the AsyncAPI parser refuses the document:\n{printed}");
    assert!(printed.contains("8 messages"), "{printed}");
}

#[test]
fn swagger_ui_points_at_the_asyncapi_document() {
    let server = TestServer::start();
    let doc = Reply::send(server.http().get(server.url("/api/openapi.json"))).ok();
    let description = doc["info"]["description"].as_str().expect("a description");
    assert!(
        description.contains("/api/asyncapi.json") && description.contains("AsyncAPI"),
        "Swagger UI's description does not point at the AsyncAPI document: {description}"
    );
    let page = Reply::send(server.http().get(server.url("/api/docs")));
    assert!(page.text.contains("/api/asyncapi.json"), "Swagger UI does not show the link");
}

#[test]
fn the_live_clients_schema_check_knows_every_server_message_and_refuses_what_breaks_its_schema() {
    let server = TestServer::start();
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    // The same document, fetched and compiled the same way, as every live test's client uses.
    let declared = runtime.block_on(ServerMessages::of_server(&server.ws_url("/api/real-time")));
    assert_eq!(declared.types(), ["Error", "FinalResult", "Info", "PartialResult", "Warning"]);

    // The document's own examples of what the server sends pass, as the named message.
    let doc = Reply::send(server.http().get(server.url("/api/asyncapi.json"))).ok();
    let mut examples = 0;
    for name in declared.types() {
        for example in doc["components"]["messages"][name]["examples"].as_array().expect("examples") {
            assert_eq!(declared.check(&example["payload"]), Ok(name), "{example}");
            examples += 1;
        }
    }
    assert!(examples >= 5, "{examples} examples");

    let session_started = json!({"type": "Info", "message": {
        "type": "Info", "message": "Session started", "sessionId": "5d0c1f9a-3b7e-4a57-9a53-1c2d3e4f5a6b",
        "language": "en", "audioConfig": {"sample_rate": 16000, "encoding": "s16le"},
        "outputConfig": {"format": "transcription", "partials": false, "saveAsJob": false}, "glossaryId": null,
        "jobId": null}});
    assert_eq!(declared.check(&session_started), Ok("Info"));
    let final_result = json!({"type": "FinalResult", "message": {
        "id": "0b6f3f5e-2f4e-4c1e-9d0a-7f1c2a3b4c5d", "version": "1.0",
        "segments": [{"words": [{"word": "Testing.", "start": 0.0, "end": 0.61, "length": 0.61, "confidence": 0.97}],
                      "start": 0.0, "end": 0.61, "length": 0.61}],
        "transcript": "Testing."}});
    assert_eq!(declared.check(&final_result), Ok("FinalResult"));

    // Each break is refused, naming the message, where the message breaks its schema and the
    // keyword of the document it breaks.
    let broken = |message: Value, name: &str, at: &str, keyword: &str| {
        let why = declared.check(&message).expect_err(&format!("{message} passed"));
        let named = why.contains(&format!("the AsyncAPI message {name} (#/components/messages/{name}/payload)"));
        assert!(
            named && why.contains(&format!("at `{at}`: ")) && why.contains(&format!("(schema {keyword})")),
            "{why}"
        );
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| declared.assert_valid(&message)));
        assert!(panicked.is_err(), "assert_valid let {message} through");
    };
    broken(
        json!({"type": "Warning", "message": {"type": "Warning", "code": "TOO_LOUD", "message": "Mind the gain"}}),
        "Warning",
        "/message/code",
        "#/components/schemas/WarningMessage/properties/code/enum",
    );
    broken(
        json!({"type": "Info", "message": {"type": "Info", "language": "en"}}),
        "Info",
        "/message",
        "#/components/schemas/InfoMessage/required",
    );
    broken(
        json!({"type": "Error", "message": {"type": "Error", "code": "IDLE"}}),
        "Error",
        "/message",
        "#/components/schemas/ErrorMessage/required",
    );
    // The Info that starts a session names its glossary (or null): the document types it.
    broken(
        json!({"type": "Info", "message": {"type": "Info", "message": "Session started", "glossaryId": 42}}),
        "Info",
        "/message/glossaryId",
        "#/components/schemas/InfoMessage/properties/glossaryId/type",
    );
    let mut extra = session_started;
    extra["closeCode"] = json!(1000);
    broken(extra, "Info", "", "#/components/messages/Info/payload/additionalProperties");
    let mut no_confidence = final_result.clone();
    no_confidence["message"]["segments"][0]["words"][0].as_object_mut().unwrap().remove("confidence");
    broken(no_confidence, "FinalResult", "/message/segments/0/words/0", "#/components/schemas/FinalWord/required");
    let mut not_an_id = final_result.clone();
    not_an_id["type"] = json!("PartialResult");
    not_an_id["message"]["id"] = json!("utterance-1");
    not_an_id["message"]["segments"] = json!([{"words": [{"word": "Testing."}]}]);
    broken(not_an_id, "PartialResult", "/message/id", "#/components/schemas/PartialTranscript/properties/id/format");
    let mut late_version = final_result;
    late_version["message"]["version"] = json!("2.0");
    broken(
        late_version,
        "FinalResult",
        "/message/version",
        "#/components/schemas/FinalTranscript/properties/version/const",
    );

    // A message that claims no server message of the document is refused too.
    for stray in [json!({"type": "Hello", "message": {}}), json!({"message": "no type"}), json!("Info")] {
        let why = declared.check(&stray).expect_err(&format!("{stray} passed"));
        assert!(why.contains("no server message of the AsyncAPI document"), "{why}");
    }
}
