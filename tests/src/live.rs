//! A plain live-protocol client for the tests, written from the protocol's documentation (the
//! README and `/api/asyncapi.json`), not from the server's code: a WebSocket (tokio-tungstenite),
//! the INIT as JSON, audio as binary frames paced like a microphone (or faster), END, and every
//! message the server sends, with when it arrived.
//!
//! The document and the server's behaviour are held to agree: every text message the server sends
//! this client is checked against the schema of the message of the AsyncAPI document it claims to
//! be ([`ServerMessages`], built from the document the server under test serves), and one that
//! matches none, or fails its schema, panics with the message, the schema and the validator's
//! errors.
//!
//! Audio in any of the protocol's encodings and rates comes from `ffmpeg`, an independent
//! encoder: `pcm("audio/en_jfk.wav", 44_100, "s24be")`.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

use crate::paths;

/// How fast audio is sent.
#[derive(Debug, Clone, Copy)]
pub enum Pace {
    /// As a microphone: each frame when its audio would have been spoken.
    RealTime,
    /// `n` times faster than real time.
    Faster(f64),
    /// As fast as the socket takes it.
    Burst,
}

/// What one session saw.
#[derive(Debug, Clone)]
pub struct LiveRun {
    /// Every text message, parsed, with its arrival time since the connection opened.
    pub messages: Vec<(Duration, Value)>,
    /// The close frame's code and reason (None: the connection ended without one).
    pub close: Option<(u16, String)>,
    /// When the last audio frame was sent, since the connection opened.
    pub audio_sent_at: Vec<(Duration, f64)>,
}

impl LiveRun {
    /// Messages of one type (`Info`, `FinalResult`, ...).
    pub fn of_type(&self, kind: &str) -> Vec<&Value> {
        self.messages.iter().filter(|(_, m)| m["type"] == kind).map(|(_, m)| m).collect()
    }

    /// The finals' transcripts joined, as first sent (revisions left out).
    pub fn final_text(&self) -> String {
        self.of_type("FinalResult")
            .iter()
            .filter(|m| m["message"]["revised"] != true)
            .filter_map(|m| m["message"]["transcript"].as_str())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The finals' transcripts joined, each as last sent: a revision (`outputConfig.revisions`)
    /// replaces the final of its id, in that final's place.
    pub fn revised_text(&self) -> String {
        let mut finals: Vec<(&Value, &str)> = Vec::new();
        for m in self.of_type("FinalResult") {
            let (id, text) = (&m["message"]["id"], m["message"]["transcript"].as_str().unwrap_or(""));
            match finals.iter_mut().find(|(i, _)| *i == id) {
                Some(earlier) => earlier.1 = text,
                None => finals.push((id, text)),
            }
        }
        finals.iter().map(|(_, t)| *t).filter(|t| !t.is_empty()).collect::<Vec<_>>().join(" ")
    }

    /// The first `Error` message's object.
    pub fn error(&self) -> Option<&Value> {
        self.of_type("Error").first().map(|m| &m["message"])
    }

    pub fn close_code(&self) -> Option<u16> {
        self.close.as_ref().map(|c| c.0)
    }
}

/// `clip` (relative to the corpus) as raw mono PCM at `rate` Hz in `encoding`, made by ffmpeg.
pub fn pcm(clip: &str, rate: u32, encoding: &str) -> Vec<u8> {
    pcm_of(&paths::corpus_file(clip), rate, encoding)
}

/// An INIT for `key`: English, 16 kHz s16le, finals only; `extra`'s fields are merged into its
/// objects (`{"outputConfig": {"saveAsJob": true}}` keeps the format) or added.
pub fn init(key: &str, extra: Value) -> Value {
    let mut init = json!({
        "messageType": "INIT",
        "language": "en",
        "apiKey": key,
        "audioConfig": {"sample_rate": 16000, "encoding": "s16le"},
        "outputConfig": {"format": "transcription", "partials": false},
    });
    for (k, v) in extra.as_object().into_iter().flatten() {
        match (init[k].as_object_mut(), v.as_object()) {
            (Some(base), Some(more)) => base.extend(more.clone()),
            _ => init[k] = v.clone(),
        }
    }
    init
}

/// A file as raw mono PCM at `rate` Hz in `encoding`.
pub fn pcm_of(file: &Path, rate: u32, encoding: &str) -> Vec<u8> {
    let out = Command::new("ffmpeg")
        .args(["-v", "error", "-nostdin", "-i"])
        .arg(file)
        .args(["-ac", "1", "-ar", &rate.to_string(), "-f", encoding, "-"])
        .output()
        .expect("ffmpeg runs");
    assert!(out.status.success(), "ffmpeg: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// Bytes per sample of a protocol encoding name.
pub fn sample_bytes(encoding: &str) -> usize {
    match &encoding[1..3] {
        "16" => 2,
        "24" => 3,
        _ => 4,
    }
}

/// A session: connects to `ws_url`, sends `init`, then `audio` in frames of `frame_ms` at
/// `pace`, then END (when `end` is true; otherwise it just closes), and collects everything
/// until the server closes (or `timeout`).
pub struct Session<'a> {
    pub ws_url: String,
    pub init: Value,
    pub audio: &'a [u8],
    pub rate: u32,
    pub encoding: &'a str,
    pub frame_ms: u32,
    pub pace: Pace,
    pub end: bool,
    pub timeout: Duration,
}

impl<'a> Session<'a> {
    pub fn new(ws_url: String, init: Value, audio: &'a [u8], rate: u32, encoding: &'a str) -> Session<'a> {
        Session {
            ws_url,
            init,
            audio,
            rate,
            encoding,
            frame_ms: 100,
            pace: Pace::Faster(4.0),
            end: true,
            timeout: Duration::from_secs(600),
        }
    }

    pub fn run(&self) -> LiveRun {
        runtime().block_on(self.run_async())
    }

    pub async fn run_async(&self) -> LiveRun {
        let declared = ServerMessages::of_server(&self.ws_url).await;
        let (socket, _) = tokio_tungstenite::connect_async(self.ws_url.as_str()).await.expect("the WebSocket opens");
        let (mut sink, mut stream) = socket.split();
        let opened = Instant::now();
        sink.send(Message::text(self.init.to_string())).await.expect("INIT sent");
        let frame_bytes = (self.rate as usize * self.frame_ms as usize / 1000) * sample_bytes(self.encoding);
        let frames: Vec<Vec<u8>> = self.audio.chunks(frame_bytes.max(1)).map(<[u8]>::to_vec).collect();
        let (rate, frame_ms, pace, end) = (self.rate, self.frame_ms, self.pace, self.end);
        let bytes_per_second = rate as f64 * sample_bytes(self.encoding) as f64;
        let sender = tokio::spawn(async move {
            let mut sent_at = Vec::new();
            let mut audio_s = 0.0;
            for frame in frames {
                audio_s += frame.len() as f64 / bytes_per_second;
                let due = match pace {
                    Pace::RealTime => Some(Duration::from_secs_f64(audio_s - frame_ms as f64 / 1000.0)),
                    Pace::Faster(n) => Some(Duration::from_secs_f64((audio_s - frame_ms as f64 / 1000.0) / n)),
                    Pace::Burst => None,
                };
                if let Some(due) = due {
                    tokio::time::sleep_until((opened + due).into()).await;
                }
                if sink.send(Message::binary(frame)).await.is_err() {
                    return (sink, sent_at);
                }
                sent_at.push((opened.elapsed(), audio_s));
            }
            if end {
                let _ = sink.send(Message::text(json!({"messageType": "END"}).to_string())).await;
            } else {
                let _ = sink.close().await;
            }
            (sink, sent_at)
        });
        let mut messages = Vec::new();
        let mut close = None;
        let deadline = tokio::time::Instant::now() + self.timeout;
        loop {
            match tokio::time::timeout_at(deadline, stream.next()).await {
                Err(_) => panic!("the session did not end within {:?}; got {messages:?}", self.timeout),
                Ok(None) | Ok(Some(Err(_))) => break,
                Ok(Some(Ok(Message::Text(text)))) => {
                    let value: Value = serde_json::from_str(&text).expect("server messages are JSON");
                    declared.assert_valid(&value);
                    messages.push((opened.elapsed(), value));
                }
                Ok(Some(Ok(Message::Close(frame)))) => {
                    close = frame.map(|f| (u16::from(f.code), f.reason.to_string()));
                    break;
                }
                Ok(Some(Ok(_))) => {}
            }
        }
        sender.abort();
        let audio_sent_at = match sender.await {
            Ok((_, sent_at)) => sent_at,
            Err(_) => Vec::new(),
        };
        LiveRun { messages, close, audio_sent_at }
    }
}

/// Sends one text message first (anything, even not an INIT) and, optionally, binary first;
/// returns what came back. For the refusal tests.
pub fn exchange(ws_url: &str, first: Message, then: Vec<Message>) -> LiveRun {
    runtime().block_on(async {
        let declared = ServerMessages::of_server(ws_url).await;
        let (socket, _) = tokio_tungstenite::connect_async(ws_url).await.expect("the WebSocket opens");
        let opened = Instant::now();
        // Sending goes on beside reading, as a real client's does: one still sending a frame the
        // server refused hears the refusal.
        let (mut sink, mut stream) = socket.split();
        let sending = tokio::spawn(async move {
            if sink.send(first).await.is_err() {
                return;
            }
            for m in then {
                if sink.send(m).await.is_err() {
                    return;
                }
            }
        });
        let mut messages = Vec::new();
        let mut close = None;
        while let Ok(Some(Ok(m))) = tokio::time::timeout(Duration::from_secs(60), stream.next()).await {
            match m {
                Message::Text(text) => {
                    let value: Value = serde_json::from_str(&text).expect("server messages are JSON");
                    declared.assert_valid(&value);
                    messages.push((opened.elapsed(), value));
                }
                Message::Close(frame) => {
                    close = frame.map(|f| (u16::from(f.code), f.reason.to_string()));
                    break;
                }
                _ => {}
            }
        }
        sending.abort();
        LiveRun { messages, close, audio_sent_at: Vec::new() }
    })
}

/// The messages a server sends, as its AsyncAPI document declares them, each with a validator
/// of its payload schema.
///
/// The document describes the server, so its server→client messages are those of its `send`
/// operations and the replies of its `receive` operations. Each payload is an envelope
/// `{"type": T, "message": ...}` whose `type` is a `const`: that is how a received message says
/// which one it is. Validators follow the AsyncAPI Schema format (JSON Schema draft 7, with
/// formats asserted and `uuid` checked as the AsyncAPI parser's Ajv does), built from a root that
/// is the whole document, so `#/components/...` references resolve inside it.
pub struct ServerMessages {
    /// By the `type` a message carries.
    by_type: BTreeMap<String, Declared>,
}

/// The name the document goes by in its validators: errors locate keywords in it.
const DOCUMENT_URI: &str = "urn:scribe:asyncapi.json";

struct Declared {
    /// The message's name in the document and where it is (`Info`, `#/components/messages/Info`).
    name: String,
    at: String,
    payload: jsonschema::Validator,
}

impl ServerMessages {
    /// The server→client messages of an AsyncAPI document. Panics when the document declares
    /// none, or one that cannot be told apart by its `type`, or a schema that does not compile.
    pub fn from_document(document: &Value) -> ServerMessages {
        let operations = document["operations"].as_object().expect("the AsyncAPI document has operations");
        let mut refs = Vec::new();
        for (name, operation) in operations {
            let sent = match operation["action"].as_str() {
                Some("send") => &operation["messages"],
                Some("receive") => &operation["reply"]["messages"],
                other => panic!("operation {name} has action {other:?}, neither send nor receive"),
            };
            refs.extend(sent.as_array().into_iter().flatten().cloned());
        }
        let mut by_type: BTreeMap<String, Declared> = BTreeMap::new();
        for reference in refs {
            let (at, message) = resolve(document, "#", &reference);
            let (payload_at, payload) = resolve(document, &format!("{at}/payload"), &message["payload"]);
            let (_, kind) = resolve(document, &format!("{payload_at}/properties/type"), &payload["properties"]["type"]);
            let kind = kind["const"]
                .as_str()
                .unwrap_or_else(|| panic!("the server message at {at} has no `type` const to tell it by: {payload}"));
            if let Some(known) = by_type.get(kind) {
                assert_eq!(known.at, at, "two server messages of type {kind}");
                continue;
            }
            let name = message["name"].as_str().or_else(|| at.rsplit('/').next()).unwrap_or(kind).to_owned();
            let mut root = document.clone();
            root["$ref"] = json!(payload_at);
            let payload = jsonschema::draft7::options()
                .should_validate_formats(true)
                .should_ignore_unknown_formats(true)
                .with_format("uuid", is_uuid)
                .with_base_uri(DOCUMENT_URI)
                .offline()
                .build(&root)
                .unwrap_or_else(|e| panic!("the payload schema of {name} ({payload_at}) does not compile: {e}"));
            by_type.insert(kind.to_owned(), Declared { name, at, payload });
        }
        assert!(!by_type.is_empty(), "the AsyncAPI document declares no message the server sends");
        ServerMessages { by_type }
    }

    /// Those of the server behind `ws_url` (`ws://HOST:PORT/...`): its `/api/asyncapi.json`,
    /// fetched once per server address and kept.
    pub async fn of_server(ws_url: &str) -> Arc<ServerMessages> {
        static KNOWN: Mutex<Option<HashMap<String, Arc<ServerMessages>>>> = Mutex::new(None);
        let mut url = url::Url::parse(ws_url).expect("a WebSocket URL");
        let scheme = if url.scheme() == "wss" { "https" } else { "http" };
        url.set_scheme(scheme).expect("http(s) fits a ws(s) URL");
        url.set_path("/api/asyncapi.json");
        url.set_query(None);
        let key = url.to_string();
        let known = |key: &str| KNOWN.lock().unwrap_or_else(|p| p.into_inner()).as_ref()?.get(key).cloned();
        if let Some(messages) = known(&key) {
            return messages;
        }
        let reply = reqwest::get(url).await.unwrap_or_else(|e| panic!("fetching {key}: {e}"));
        assert!(reply.status().is_success(), "{key}: {}", reply.status());
        let document: Value = reply.json().await.unwrap_or_else(|e| panic!("{key} is not JSON: {e}"));
        let messages = Arc::new(ServerMessages::from_document(&document));
        KNOWN.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert_with(HashMap::new).insert(key, messages.clone());
        messages
    }

    /// The `type`s of the declared server messages.
    pub fn types(&self) -> Vec<&str> {
        self.by_type.keys().map(String::as_str).collect()
    }

    /// Which declared message `message` is (its name), or why it is none: its `type` names no
    /// server message of the document, or it fails that message's schema (the message, the
    /// schema and every error of the validator).
    pub fn check(&self, message: &Value) -> Result<&str, String> {
        let Some(declared) = message["type"].as_str().and_then(|kind| self.by_type.get(kind)) else {
            return Err(format!(
                "the server sent {message}, which is no server message of the AsyncAPI document: its `type` is \
                 {} and the document's are {:?}",
                message["type"],
                self.types()
            ));
        };
        let errors: Vec<String> = declared
            .payload
            .iter_errors(message)
            .map(|e| {
                // The keyword broken, where it is in the document (`#/components/schemas/...`).
                let keyword = e.absolute_keyword_location().and_then(|uri| uri.as_str().split_once('#'));
                let keyword = keyword.map_or_else(|| e.evaluation_path().to_string(), |(_, at)| format!("#{at}"));
                format!("at `{}`: {e} (schema {keyword})", e.instance_path())
            })
            .collect();
        if errors.is_empty() {
            return Ok(&declared.name);
        }
        Err(format!(
            "the server sent {message}, which fails the schema of the AsyncAPI message {} ({}/payload):\n  {}",
            declared.name,
            declared.at,
            errors.join("\n  ")
        ))
    }

    /// Panics unless `message` is one of the declared server messages and matches its schema.
    pub fn assert_valid(&self, message: &Value) {
        if let Err(why) = self.check(message) {
            panic!("{why}");
        }
    }
}

/// `value` with its `$ref`s inside `document` followed, and the JSON pointer (`#/...`) it was
/// found at (`at` when it is not a reference).
fn resolve<'d>(document: &'d Value, at: &str, value: &'d Value) -> (String, &'d Value) {
    let (mut at, mut value) = (at.to_owned(), value);
    for _ in 0..32 {
        let Some(reference) = value.get("$ref").and_then(Value::as_str) else {
            return (at, value);
        };
        let pointer = reference.strip_prefix('#').unwrap_or_else(|| panic!("a $ref outside the document: {reference}"));
        value = document.pointer(pointer).unwrap_or_else(|| panic!("{reference} names nothing in the document"));
        at = reference.to_owned();
    }
    panic!("$refs in a loop at {at}")
}

/// The `uuid` format (RFC 4122's textual form), as the AsyncAPI parser's `ajv-formats` checks it.
fn is_uuid(text: &str) -> bool {
    let bytes = text.strip_prefix("urn:uuid:").unwrap_or(text).as_bytes();
    bytes.len() == 36
        && bytes.iter().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => *b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}

/// Whether `code` is the normal closure.
pub fn is_normal(code: Option<u16>) -> bool {
    code == Some(u16::from(CloseCode::Normal))
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("a tokio runtime")
}

/// Words of `text` for comparisons: lowercase, without punctuation.
pub fn words(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| w.chars().filter(|c| c.is_alphanumeric() || *c == '\'').collect::<String>().to_lowercase())
        .filter(|w| !w.is_empty())
        .collect()
}

/// Word error rate of `hypothesis` against `reference` (edit distance over words).
pub fn wer(reference: &str, hypothesis: &str) -> f64 {
    let (r, h) = (words(reference), words(hypothesis));
    if r.is_empty() {
        return if h.is_empty() { 0.0 } else { 1.0 };
    }
    let mut row: Vec<usize> = (0..=h.len()).collect();
    for i in 1..=r.len() {
        let mut previous = row[0];
        row[0] = i;
        for j in 1..=h.len() {
            let cost = if r[i - 1] == h[j - 1] { 0 } else { 1 };
            let next = (row[j] + 1).min(row[j - 1] + 1).min(previous + cost);
            previous = row[j];
            row[j] = next;
        }
    }
    row[h.len()] as f64 / r.len() as f64
}
