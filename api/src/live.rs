//! The live door: Amberscript's real-time WebSocket protocol at `/api/real-time` (and
//! `/real-time/`, the path Amberscript serves it at).
//!
//! The door reads the INIT (parsed and checked by `scribe_domain::live`), checks the key (the
//! check every door shares, `auth::Keys`: one failed-key budget per address, one rate limit per
//! key), asks `LiveSessions` for a session, then only moves frames: binary audio and END in, the
//! session's outputs out as `{"type": ..., "message": ...}` text frames, and the close code it
//! ends with. A frame over [`MAX_FRAME_BYTES`] is refused at its header, whatever its size.
//! It also keeps the connection honest: a ping every [`PING_EVERY`], and a client that answers
//! none for [`PONG_WITHIN`] is dropped (its session still finalizes what it received).

use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use poem::web::Data;
use poem::web::websocket::{CloseCode, Message, WebSocket, WebSocketConfig, WebSocketStream};
use poem::{IntoResponse, Request, handler};
use scribe_actors::live::LiveOutput;
use scribe_domain::ids::UserName;
use scribe_domain::live::{ClientText, LiveError, LiveErrorCode, LiveResult};
use serde_json::{Value, json};

use crate::auth::{KeyRefusal, Keys, client_address};
use crate::state::ApiState;

/// The largest binary frame a session takes (about 5 s of 48 kHz 32-bit audio).
pub const MAX_FRAME_BYTES: usize = 1 << 20;
/// How long a client has to send its INIT after the connection opens.
const INIT_WITHIN: Duration = Duration::from_secs(10);
pub const PING_EVERY: Duration = Duration::from_secs(10);
pub const PONG_WITHIN: Duration = Duration::from_secs(30);
/// How long the connection stays open after the close that answers a refused frame. The rest
/// of the frame is still arriving and is never read; closing at once would reset the
/// connection, and a reset can drop the answer before the client reads it.
const LINGER_AFTER_REFUSAL: Duration = Duration::from_secs(1);
/// How long the server waits for the client to answer its Close (the closing handshake of
/// RFC 6455 §7.1.1) before it drops the connection anyway.
const CLOSE_ANSWER_WITHIN: Duration = Duration::from_secs(2);

/// `GET /api/real-time`: upgrades to a WebSocket and serves one live session on it.
#[handler]
pub fn real_time(
    ws: WebSocket,
    req: &Request,
    state: Data<&Arc<ApiState>>,
    keys: Data<&Arc<Keys>>,
) -> impl IntoResponse {
    let (state, keys, client) = (state.0.clone(), keys.0.clone(), client_address(req));
    // A frame or message over the limit is refused at its header, before its payload is read
    // (see `too_large`), whatever its size.
    let limits =
        WebSocketConfig::default().max_frame_size(Some(MAX_FRAME_BYTES)).max_message_size(Some(MAX_FRAME_BYTES));
    ws.config(limits).on_upgrade(move |socket| serve(socket, state, keys, client))
}

/// The answer to a frame the socket refused for its size: tungstenite reports it as an error
/// ("Message too long: SIZE > MAX", which poem passes on as text) and leaves the connection
/// open for the answer. `None` for any other error (the client is gone).
fn too_large(error: &std::io::Error) -> Option<LiveError> {
    let text = error.to_string();
    let (_, sizes) = text.split_once("Message too long: ")?;
    let size = sizes.split(' ').next().unwrap_or("?");
    Some(LiveError::new(
        LiveErrorCode::FrameTooLarge,
        format!(
            "A frame of {size} bytes is larger than the {MAX_FRAME_BYTES} bytes a session takes; send audio in frames of about 100 ms"
        ),
    ))
}

async fn serve(socket: WebSocketStream, state: Arc<ApiState>, keys: Arc<Keys>, client: IpAddr) {
    let (mut sink, mut stream) = socket.split();
    let init = match first_message(&mut stream).await {
        Ok(Some(init)) => init,
        Ok(None) => return,
        Err(error) => return refuse(&mut sink, &mut stream, error).await,
    };
    let owner = match account_of(&keys, client, &init.api_key).await {
        Ok(owner) => owner,
        Err(error) => return refuse(&mut sink, &mut stream, error).await,
    };
    let mut session = match state.live.open(owner, init).await {
        Ok(session) => session,
        Err(error) => return refuse(&mut sink, &mut stream, error).await,
    };
    let mut ping = tokio::time::interval(PING_EVERY);
    ping.tick().await;
    let mut last_pong = Instant::now();
    let mut client_gone = false;
    // After a refused frame the rest of its payload is still on the wire: nothing more is read.
    let mut deaf = false;
    loop {
        tokio::select! {
            // What the session has to say goes first: its `Session started` before the answer to
            // anything the client sent after the INIT.
            biased;
            output = session.output.recv() => match output {
                Some(LiveOutput::Close { code, reason }) => {
                    if !client_gone {
                        let _ = sink.send(Message::Close(Some((CloseCode::from(code), reason)))).await;
                        let _ = sink.close().await;
                        if deaf {
                            tokio::time::sleep(LINGER_AFTER_REFUSAL).await;
                        } else {
                            await_close_answer(&mut stream).await;
                        }
                    }
                    return;
                }
                Some(output) => {
                    if !client_gone && sink.send(Message::Text(render(&output).to_string())).await.is_err() {
                        client_gone = true;
                        session.disconnected();
                    }
                }
                None => return,
            },
            incoming = stream.next(), if !client_gone && !deaf => match incoming {
                Some(Ok(Message::Binary(frame))) => session.audio(frame),
                Some(Ok(Message::Text(text))) => match ClientText::parse(&text) {
                    Ok(ClientText::End) => session.end(),
                    Ok(ClientText::Init(_)) => warn(&mut sink, "The session has started already: a second INIT is ignored").await,
                    Err(error) => warn(&mut sink, &format!("{} (the message was ignored)", error.message)).await,
                },
                Some(Ok(Message::Pong(_))) => last_pong = Instant::now(),
                Some(Ok(Message::Ping(_))) => {}
                Some(Err(error)) => match too_large(&error) {
                    Some(refusal) => {
                        deaf = true;
                        session.fail(refusal);
                    }
                    None => {
                        client_gone = true;
                        session.disconnected();
                    }
                },
                Some(Ok(Message::Close(_))) | None => {
                    client_gone = true;
                    session.disconnected();
                }
            },
            _ = ping.tick(), if !client_gone => {
                if last_pong.elapsed() > PONG_WITHIN {
                    tracing::info!(session = %session.session_id, "live client stopped answering pings; dropping it");
                    client_gone = true;
                    session.disconnected();
                    let _ = sink.close().await;
                } else if sink.send(Message::Ping(Vec::new())).await.is_err() {
                    client_gone = true;
                    session.disconnected();
                }
            }
        }
    }
}

/// Waits for the INIT. `Ok(None)`: the client left first.
async fn first_message(
    stream: &mut futures::stream::SplitStream<WebSocketStream>,
) -> Result<Option<scribe_domain::live::LiveInit>, LiveError> {
    let deadline = tokio::time::Instant::now() + INIT_WITHIN;
    loop {
        let message = match tokio::time::timeout_at(deadline, stream.next()).await {
            Err(_) => {
                return Err(LiveError::new(
                    LiveErrorCode::InvalidMessage,
                    format!("No INIT message within {} s of connecting", INIT_WITHIN.as_secs()),
                ));
            }
            Ok(Some(Err(error))) => return too_large(&error).map_or(Ok(None), Err),
            Ok(None | Some(Ok(Message::Close(_)))) => return Ok(None),
            Ok(Some(Ok(message))) => message,
        };
        match message {
            Message::Text(text) => {
                return match ClientText::parse(&text)? {
                    ClientText::Init(init) => Ok(Some(*init)),
                    ClientText::End => Err(LiveError::new(
                        LiveErrorCode::InvalidMessage,
                        "The first message must be the INIT; END ends a session that has started",
                    )),
                };
            }
            Message::Binary(_) => {
                return Err(LiveError::new(
                    LiveErrorCode::InvalidMessage,
                    "Audio arrived before the INIT message: send the INIT text message first, then binary audio frames",
                ));
            }
            Message::Ping(_) | Message::Pong(_) => continue,
            Message::Close(_) => return Ok(None),
        }
    }
}

/// The customer account the INIT's key opens: the check every door makes (one failed-key
/// budget per address, one rate limit per key), told in the protocol's words.
async fn account_of(keys: &Keys, client: IpAddr, api_key: &str) -> Result<UserName, LiveError> {
    let unauthorized = |message: String| LiveError {
        field: Some("apiKey".into()),
        ..LiveError::new(LiveErrorCode::Unauthorized, message)
    };
    let account = keys.authenticate(client, api_key, true).await.map_err(|refusal| match refusal {
        KeyRefusal::Missing => unauthorized("The INIT has no apiKey".into()),
        KeyRefusal::NotValid => unauthorized("The apiKey is not valid (unknown or revoked)".into()),
        KeyRefusal::AddressBlocked(seconds) => {
            unauthorized(format!("Too many invalid keys from your address; retry in {seconds} s with a valid key"))
        }
        KeyRefusal::RateLimited(seconds) => LiveError::new(
            LiveErrorCode::Capacity,
            format!("This apiKey has used its request quota; retry in {seconds} s"),
        ),
        KeyRefusal::Unavailable(e) => {
            LiveError::new(LiveErrorCode::Internal, format!("Checking the apiKey failed ({e}); retry shortly"))
        }
    })?;
    if account.role.is_staff() {
        return Err(unauthorized("This is a staff key: live sessions need a customer key".into()));
    }
    Ok(account.user_name)
}

/// Sends `error` and closes with its code.
async fn refuse(
    sink: &mut futures::stream::SplitSink<WebSocketStream, Message>,
    stream: &mut futures::stream::SplitStream<WebSocketStream>,
    error: LiveError,
) {
    let code = error.close_code;
    let reason = error.code.as_str().to_owned();
    let unread = error.code == LiveErrorCode::FrameTooLarge;
    let _ = sink.send(Message::Text(render(&LiveOutput::Error(error)).to_string())).await;
    let _ = sink.send(Message::Close(Some((CloseCode::from(code), reason)))).await;
    let _ = sink.close().await;
    if unread {
        tokio::time::sleep(LINGER_AFTER_REFUSAL).await;
    } else {
        await_close_answer(stream).await;
    }
}

/// After the server's Close: reads and drops what the client still sends (audio already on its
/// way) until the client answers with its own Close, leaves, or [`CLOSE_ANSWER_WITHIN`] passes.
/// Dropping a connection with unread data resets it, and the reset can destroy the Error and
/// the Close before the client reads them.
async fn await_close_answer(stream: &mut futures::stream::SplitStream<WebSocketStream>) {
    let answered = async {
        while let Some(Ok(message)) = stream.next().await {
            if matches!(message, Message::Close(_)) {
                return;
            }
        }
    };
    let _ = tokio::time::timeout(CLOSE_ANSWER_WITHIN, answered).await;
}

async fn warn(sink: &mut futures::stream::SplitSink<WebSocketStream, Message>, message: &str) {
    let warning = json!({"type": "Warning", "code": "INVALID_MESSAGE", "message": message});
    let _ = sink.send(Message::Text(json!({"type": "Warning", "message": warning}).to_string())).await;
}

/// An output as the protocol's text frame.
pub fn render(output: &LiveOutput) -> Value {
    match output {
        LiveOutput::Info(message) => json!({"type": "Info", "message": message}),
        LiveOutput::Warning(message) => json!({"type": "Warning", "message": message}),
        LiveOutput::Error(e) => {
            let mut message = json!({"type": "Error", "code": e.code.as_str(), "message": e.message});
            if let Some(field) = &e.field {
                message["field"] = json!(field);
            }
            if !e.allowed.is_empty() {
                message["allowed"] = json!(e.allowed);
            }
            json!({"type": "Error", "message": message})
        }
        LiveOutput::Result(result) => render_result(result),
        LiveOutput::Close { code, reason } => {
            json!({"type": "Info", "message": {"type": "Info", "message": reason, "closeCode": code}})
        }
    }
}

fn render_result(result: &LiveResult) -> Value {
    let words: Vec<Value> = result
        .words
        .iter()
        .map(|w| match w.timing {
            Some(t) => json!({
                "word": w.word,
                "start": t.start,
                "end": t.end,
                "length": round_cs(t.end - t.start),
                "confidence": (f64::from(t.confidence) * 1000.0).round() / 1000.0,
            }),
            None => json!({"word": w.word}),
        })
        .collect();
    let mut segment = json!({"words": words});
    if let Some((start, end)) = result.span {
        segment["start"] = json!(round_cs(start));
        segment["end"] = json!(round_cs(end));
        segment["length"] = json!(round_cs(end - start));
    }
    let kind = if result.is_final { "FinalResult" } else { "PartialResult" };
    let mut message =
        json!({"id": result.id, "version": "1.0", "segments": [segment], "transcript": result.transcript()});
    if result.revised {
        message["revised"] = json!(true);
    }
    json!({"type": kind, "message": message})
}

fn round_cs(seconds: f64) -> f64 {
    (seconds * 100.0).round() / 100.0
}
