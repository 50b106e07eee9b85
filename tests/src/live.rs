//! A plain live-protocol client for the tests, written from the protocol's documentation (the
//! README and `/api/asyncapi.json`), not from the server's code: a WebSocket (tokio-tungstenite),
//! the INIT as JSON, audio as binary frames paced like a microphone (or faster), END, and every
//! message the server sends, with when it arrived.
//!
//! Audio in any of the protocol's encodings and rates comes from `ffmpeg`, an independent
//! encoder: `pcm("audio/en_jfk.wav", 44_100, "s24be")`.

use std::path::Path;
use std::process::Command;
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

    /// The finals' transcripts joined.
    pub fn final_text(&self) -> String {
        self.of_type("FinalResult")
            .iter()
            .filter_map(|m| m["message"]["transcript"].as_str())
            .collect::<Vec<_>>()
            .join(" ")
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
                Message::Text(text) => messages.push((opened.elapsed(), serde_json::from_str(&text).expect("JSON"))),
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
