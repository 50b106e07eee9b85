//! The live benchmark's client: one session of the live protocol over a WebSocket, audio sent as
//! a microphone would (each 100 ms frame once its audio has been "spoken"), and, for the latency
//! figures, when each frame was sent and when each message arrived, on one clock.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, bail};
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;

/// The audio the benchmark streams: 16 kHz mono s16le.
pub const RATE: usize = 16_000;
const BYTES_PER_SECOND: usize = RATE * 2;
/// Audio per binary frame.
const FRAME_S: f64 = 0.1;

/// What one session saw. Times are seconds since the session's first frame was due.
#[derive(Debug, Default)]
pub struct SessionLog {
    /// Every text message the server sent, parsed, with its arrival time.
    pub messages: Vec<(f64, Value)>,
    /// For each frame: when it was sent, and the seconds of audio sent up to and with it.
    pub sent: Vec<(f64, f64)>,
    /// The close frame's code (None: the connection ended without one).
    pub close: Option<u16>,
}

impl SessionLog {
    fn of_type<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = (f64, &'a Value)> + 'a {
        self.messages.iter().filter(move |(_, m)| m["type"] == kind).map(|(t, m)| (*t, &m["message"]))
    }

    /// The finals as first sent (a revision, `outputConfig.revisions`, is not a final of its own).
    fn finals_sent(&self) -> impl Iterator<Item = (f64, &Value)> + '_ {
        self.of_type("FinalResult").filter(|(_, m)| m["revised"] != true)
    }

    /// The finals' transcripts joined, as first sent.
    pub fn final_text(&self) -> String {
        self.finals_sent().filter_map(|(_, m)| m["transcript"].as_str()).collect::<Vec<_>>().join(" ")
    }

    /// The finals' transcripts joined, each as revised when it was.
    pub fn revised_text(&self) -> String {
        let mut texts: Vec<(&Value, &str)> = Vec::new();
        for (_, m) in self.of_type("FinalResult") {
            let text = m["transcript"].as_str().unwrap_or_default();
            match texts.iter_mut().find(|(id, _)| **id == m["id"]) {
                Some(earlier) => earlier.1 = text,
                None => texts.push((&m["id"], text)),
            }
        }
        texts.iter().map(|(_, t)| *t).filter(|t| !t.is_empty()).collect::<Vec<_>>().join(" ")
    }

    /// For each revision: its arrival − its final's.
    pub fn revision_delays(&self) -> Vec<f64> {
        self.of_type("FinalResult")
            .filter(|(_, m)| m["revised"] == true)
            .filter_map(|(at, m)| Some(at - self.finals_sent().find(|(_, f)| f["id"] == m["id"])?.0))
            .collect()
    }

    pub fn finals(&self) -> usize {
        self.finals_sent().count()
    }

    pub fn partials(&self) -> usize {
        self.of_type("PartialResult").count()
    }

    /// When the audio up to `stream_s` seconds of the stream had been sent (the frame holding it).
    fn sent_by(&self, stream_s: f64) -> Option<f64> {
        self.sent.iter().find(|(_, audio)| *audio >= stream_s - 1e-6).or(self.sent.last()).map(|(t, _)| *t)
    }

    /// Each final's text, arrival, and where its last word and its utterance end.
    fn timed_finals(&self) -> Vec<TimedFinal> {
        self.finals_sent()
            .filter_map(|(arrived, m)| {
                let segments = m["segments"].as_array()?;
                let words = segments.iter().filter_map(|s| s["words"].as_array()).flatten();
                Some(TimedFinal {
                    text: m["transcript"].as_str().unwrap_or_default().to_string(),
                    arrived,
                    last_word_s: words.filter_map(|w| w["end"].as_f64()).reduce(f64::max),
                    end_s: segments.iter().filter_map(|s| s["end"].as_f64()).reduce(f64::max)?,
                })
            })
            .collect()
    }

    /// For each final with words: its arrival − when the audio up to the end of its last word
    /// (the word's time as the final gives it) had been sent: how long after the speaker
    /// stopped the caption was complete.
    pub fn final_latencies(&self) -> Vec<f64> {
        self.timed_finals().iter().filter_map(|f| Some(f.arrived - self.sent_by(f.last_word_s?)?)).collect()
    }

    /// For each final: its arrival − when the audio of its utterance's end (the VAD's end of
    /// speech plus the utterance's padding) had been sent.
    pub fn final_latencies_from_utterance_end(&self) -> Vec<f64> {
        self.final_latencies_from_end_of_speech(0.0)
    }

    /// For each final: its arrival − when the audio up to the VAD's end of speech had been
    /// sent, the utterance's end less its `padding_s`.
    pub fn final_latencies_from_end_of_speech(&self, padding_s: f64) -> Vec<f64> {
        self.timed_finals().iter().filter_map(|f| Some(f.arrived - self.sent_by(f.end_s - padding_s)?)).collect()
    }

    /// The finals that arrived more than `over_s` after the audio up to their last word had
    /// been sent.
    pub fn finals_late_after_last_word(&self, over_s: f64) -> Vec<TimedFinal> {
        self.timed_finals()
            .into_iter()
            .filter(|f| f.last_word_s.and_then(|w| self.sent_by(w)).is_some_and(|sent| f.arrived - sent > over_s))
            .collect()
    }

    /// Seconds of audio sent ÷ seconds from the first frame until the last final arrived: 1.0
    /// when the session's captions were done the moment its audio was (less when it lagged).
    pub fn pace(&self) -> Option<f64> {
        let audio = self.sent.last()?.1;
        let last_final = self.finals_sent().map(|(t, _)| t).reduce(f64::max)?;
        Some(audio / last_final.max(audio))
    }

    /// For each utterance that had partials: its first partial's arrival − when the audio of its
    /// start (its final's first segment's start) had been sent.
    pub fn first_partial_latencies(&self) -> Vec<f64> {
        let mut first_partial: HashMap<&str, f64> = HashMap::new();
        for (arrived, m) in self.of_type("PartialResult") {
            if let Some(id) = m["id"].as_str() {
                first_partial.entry(id).or_insert(arrived);
            }
        }
        self.finals_sent()
            .filter_map(|(_, m)| {
                let partial = first_partial.get(m["id"].as_str()?)?;
                let start = m["segments"][0]["start"].as_f64()?;
                Some(partial - self.sent_by(start)?)
            })
            .collect()
    }

    /// `BEHIND_REAL_TIME` warnings.
    pub fn behind_warnings(&self) -> usize {
        self.of_type("Warning").filter(|(_, m)| m["code"] == "BEHIND_REAL_TIME").count()
    }

    /// The first Error message, if any.
    pub fn error(&self) -> Option<&Value> {
        self.of_type("Error").map(|(_, m)| m).next()
    }

    /// Whether the session ended as it should: no Error, closed with 1000.
    pub fn ended_normally(&self) -> bool {
        self.error().is_none() && self.close == Some(1000)
    }
}

/// A final as the session saw it (stream seconds).
pub struct TimedFinal {
    pub text: String,
    pub arrived: f64,
    /// The end of its last word (none: a final without words).
    pub last_word_s: Option<f64>,
    /// Its utterance's end: the VAD's end of speech plus the utterance's padding.
    pub end_s: f64,
}

/// What a session asks for, and how its audio is sent.
#[derive(Clone, Copy, Debug, Default)]
pub struct Asks {
    /// `outputConfig.partials`.
    pub partials: bool,
    /// `outputConfig.revisions`.
    pub revisions: bool,
    /// As fast as the socket takes it, not at real-time pace.
    pub burst: bool,
}

/// Streams `audio` (16 kHz mono s16le) into the live door at `ws_url` at real-time pace (or in
/// a burst), asking for what `asks` says, then END. Returns everything seen once the server
/// closes.
pub async fn stream(ws_url: &str, key: &str, audio: Arc<Vec<u8>>, asks: Asks) -> anyhow::Result<SessionLog> {
    let Asks { partials, revisions, burst } = asks;
    let (socket, _) =
        tokio_tungstenite::connect_async(ws_url).await.with_context(|| format!("connecting to {ws_url}"))?;
    let (mut sink, mut source) = socket.split();
    let init = json!({
        "messageType": "INIT",
        "language": "en",
        "apiKey": key,
        "audioConfig": {"sample_rate": RATE, "encoding": "s16le"},
        "outputConfig": {"format": "transcription", "partials": partials, "revisions": revisions},
    });
    sink.send(Message::text(init.to_string())).await?;
    let mut log = SessionLog::default();
    // The session has started when its first Info arrives; the audio clock starts then.
    let first = next_text(&mut source, Duration::from_secs(60)).await?;
    if first["type"] != "Info" {
        bail!("the session did not start: {first}");
    }
    let origin = Instant::now();
    log.messages.push((0.0, first));

    let sent = Arc::new(Mutex::new(Vec::new()));
    let sender = {
        let sent = Arc::clone(&sent);
        tokio::spawn(async move {
            let frame_bytes = (RATE as f64 * FRAME_S) as usize * 2;
            let mut audio_s = 0.0;
            for frame in audio.chunks(frame_bytes) {
                audio_s += frame.len() as f64 / BYTES_PER_SECOND as f64;
                if !burst {
                    // A microphone hands over a frame once its audio has been spoken.
                    tokio::time::sleep_until(origin + Duration::from_secs_f64(audio_s)).await;
                }
                if sink.send(Message::binary(frame.to_vec())).await.is_err() {
                    return;
                }
                sent.lock().expect("not poisoned").push((origin.elapsed().as_secs_f64(), audio_s));
            }
            let _ = sink.send(Message::text(json!({"messageType": "END"}).to_string())).await;
            // Keep the sink alive (pongs) until the server closes.
            std::future::pending::<()>().await;
        })
    };

    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        match tokio::time::timeout_at(deadline, source.next()).await {
            Err(_) => {
                sender.abort();
                bail!("the session did not end within 10 minutes");
            }
            Ok(None) | Ok(Some(Err(_))) => break,
            Ok(Some(Ok(Message::Text(text)))) => {
                let value: Value = serde_json::from_str(&text).context("a server message that is not JSON")?;
                log.messages.push((origin.elapsed().as_secs_f64(), value));
            }
            Ok(Some(Ok(Message::Close(frame)))) => {
                log.close = frame.map(|f| u16::from(f.code));
                break;
            }
            Ok(Some(Ok(_))) => {}
        }
    }
    sender.abort();
    log.sent = std::mem::take(&mut *sent.lock().expect("not poisoned"));
    Ok(log)
}

async fn next_text<S>(source: &mut S, wait: Duration) -> anyhow::Result<Value>
where
    S: futures::Stream<Item = Result<Message, tokio_tungstenite::tungstenite::Error>> + Unpin,
{
    loop {
        match tokio::time::timeout(wait, source.next()).await.context("no answer to INIT")? {
            Some(Ok(Message::Text(text))) => return Ok(serde_json::from_str(&text)?),
            Some(Ok(Message::Close(frame))) => bail!("closed before the session started: {frame:?}"),
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(e.into()),
            None => bail!("the connection ended before the session started"),
        }
    }
}

/// `file` as 16 kHz mono s16le, made by ffmpeg.
pub fn pcm(file: &std::path::Path) -> anyhow::Result<Vec<u8>> {
    let out = std::process::Command::new("ffmpeg")
        .args(["-v", "error", "-nostdin", "-i"])
        .arg(file)
        .args(["-ac", "1", "-ar", &RATE.to_string(), "-f", "s16le", "-"])
        .output()
        .context("running ffmpeg")?;
    if !out.status.success() {
        bail!("ffmpeg could not read {}: {}", file.display(), String::from_utf8_lossy(&out.stderr));
    }
    Ok(out.stdout)
}

/// Seconds of audio in `pcm`.
pub fn seconds(pcm: &[u8]) -> f64 {
    pcm.len() as f64 / BYTES_PER_SECOND as f64
}

/// `seconds` of audio taken from `pcm` looped, starting `offset_s` into it.
pub fn looped(pcm: &[u8], offset_s: f64, seconds: f64) -> Vec<u8> {
    let start = ((offset_s * RATE as f64) as usize * 2) % pcm.len().max(2);
    let want = (seconds * RATE as f64) as usize * 2;
    pcm.iter().cycle().skip(start).take(want).copied().collect()
}
