//! A small HTTP server on 127.0.0.1 that plays "the rest of the internet" for URL jobs and
//! callbacks: it serves the corpus files (`/corpus/<path>`), a 404 (`/missing`, or any unknown
//! path), a body that is not media (`/not-media`, octet-stream) and a web page (`/page.html`),
//! and records every JSON body POSTed to `/callback` so a test can read a job's callback.
//!
//! It runs poem on its own thread and runtime, so blocking tests can use it; dropping it stops it.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use poem::http::StatusCode;
use poem::listener::{Acceptor, Listener, TcpListener};
use poem::web::{Data, Path};
use poem::{EndpointExt, Response, Route, get, handler, post};
use serde_json::Value;

use crate::paths;

#[derive(Default)]
struct Shared {
    corpus: PathBuf,
    callbacks: Mutex<Vec<Value>>,
}

/// The running file server.
pub struct FileServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl FileServer {
    /// Serves the corpus (see [`paths::corpus_dir`]) on a free loopback port.
    pub fn start() -> FileServer {
        let shared = Arc::new(Shared { corpus: paths::corpus_dir(), callbacks: Mutex::default() });
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let app = Route::new()
            .at("/corpus/*path", get(corpus))
            .at("/not-media", get(not_media))
            .at("/page.html", get(page))
            .at("/callback", post(callback))
            .data(shared.clone());
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
            runtime.block_on(async move {
                let acceptor = TcpListener::bind("127.0.0.1:0").into_acceptor().await.expect("a loopback port");
                let addr = acceptor.local_addr()[0].as_socket_addr().copied().expect("a TCP address");
                addr_tx.send(addr).expect("the test waits for the address");
                let _ = poem::Server::new_with_acceptor(acceptor)
                    .run_with_graceful_shutdown(
                        app,
                        async {
                            let _ = stop_rx.await;
                        },
                        Some(Duration::from_secs(1)),
                    )
                    .await;
            });
        });
        let addr = addr_rx.recv_timeout(Duration::from_secs(10)).expect("the file server listens");
        FileServer { addr, shared, stop: Some(stop_tx), thread: Some(thread) }
    }

    /// `http://127.0.0.1:PORT` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The URL of a corpus file, e.g. `corpus_url("audio/en_jfk.wav")`.
    pub fn corpus_url(&self, relative: &str) -> String {
        self.url(&format!("/corpus/{relative}"))
    }

    /// The URL that records callbacks.
    pub fn callback_url(&self) -> String {
        self.url("/callback")
    }

    /// Every callback body received so far.
    pub fn callbacks(&self) -> Vec<Value> {
        self.shared.callbacks.lock().expect("callbacks lock").clone()
    }

    /// Waits for the callback of `job_id` and returns its body.
    pub fn wait_for_callback(&self, job_id: &str, timeout: Duration) -> Value {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(body) = self.callbacks().into_iter().find(|b| b["jobId"] == job_id) {
                return body;
            }
            assert!(
                Instant::now() < deadline,
                "no callback for job {job_id} within {timeout:?}; received: {:?}",
                self.callbacks()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for FileServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[handler]
async fn corpus(Path(path): Path<String>, shared: Data<&Arc<Shared>>) -> Response {
    if path.split('/').any(|part| part == ".." || part.is_empty()) {
        return Response::builder().status(StatusCode::NOT_FOUND).finish();
    }
    match tokio::fs::read(shared.corpus.join(&path)).await {
        Ok(bytes) => Response::builder().content_type(media_type(&path)).body(bytes),
        Err(_) => Response::builder().status(StatusCode::NOT_FOUND).body("no such file"),
    }
}

#[handler]
fn not_media() -> Response {
    let text = "These bytes are plain text sent as octet-stream: no audio, no video.\n".repeat(200);
    Response::builder().content_type("application/octet-stream").body(text)
}

#[handler]
fn page() -> Response {
    Response::builder()
        .content_type("text/html; charset=utf-8")
        .body("<!doctype html><html><body><p>Not a media file.</p></body></html>")
}

#[handler]
fn callback(body: poem::web::Json<Value>, shared: Data<&Arc<Shared>>) -> StatusCode {
    shared.callbacks.lock().expect("callbacks lock").push(body.0);
    StatusCode::OK
}

fn media_type(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or("") {
        "wav" => "audio/wav",
        "mp3" => "audio/mpeg",
        "flac" => "audio/flac",
        "ogg" | "opus" => "audio/ogg",
        "m4a" => "audio/mp4",
        "mp4" => "video/mp4",
        _ => "application/octet-stream",
    }
}
