//! URL downloads against a real HTTP server on 127.0.0.1: success, file names, redirects,
//! HTTP errors, size caps, timeouts, unreachable hosts and the address guard.

mod common;

use std::time::Duration;

use poem::http::StatusCode;
use poem::listener::{Acceptor, Listener, TcpListener};
use poem::web::{Path, Redirect};
use poem::{Body, Response, Route, Server, get, handler};
use scribe_actors::media::{FetchConfig, FetchError, Fetcher, GuardError, MediaStore};

fn jfk() -> Vec<u8> {
    std::fs::read(common::jfk()).unwrap()
}

#[handler]
fn audio() -> Response {
    Response::builder().content_type("audio/wav").body(jfk())
}

#[handler]
fn named() -> Response {
    Response::builder()
        .content_type("audio/wav")
        .header("Content-Disposition", "attachment; filename=\"../speech.wav\"")
        .body(jfk())
}

/// The same bytes without a Content-Length (chunked), in 64 KiB pieces.
#[handler]
fn chunked() -> Body {
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> = jfk().chunks(64 * 1024).map(|c| Ok(c.to_vec())).collect();
    Body::from_bytes_stream(futures::stream::iter(chunks))
}

/// `/hop/n` redirects n more times before landing on the audio.
#[handler]
fn hop(Path(n): Path<u32>) -> Redirect {
    if n == 0 { Redirect::temporary("/audio/en_jfk.wav") } else { Redirect::see_other(format!("/hop/{}", n - 1)) }
}

#[handler]
async fn slow_headers() -> &'static str {
    tokio::time::sleep(Duration::from_secs(30)).await;
    "too late"
}

/// Sends the first bytes, then nothing more.
#[handler]
fn stalled_body() -> Body {
    let first = futures::stream::iter([Ok::<_, std::io::Error>(jfk()[..1000].to_vec())]);
    Body::from_bytes_stream(futures::StreamExt::chain(first, futures::stream::pending()))
}

#[handler]
fn web_page() -> poem::web::Html<&'static str> {
    poem::web::Html("<html><body>Sign in to download</body></html>")
}

#[handler]
fn gone() -> StatusCode {
    StatusCode::GONE
}

/// Starts the test server on an ephemeral loopback port and returns its base URL.
async fn serve() -> String {
    let app = Route::new()
        .at("/audio/en_jfk.wav", get(audio))
        .at("/download", get(named))
        .at("/chunked/talk.wav", get(chunked))
        .at("/hop/:n", get(hop))
        .at("/slow", get(slow_headers))
        .at("/stalled.wav", get(stalled_body))
        .at("/gone", get(gone))
        .at("/share/talk.wav", get(web_page));
    let acceptor = TcpListener::bind("127.0.0.1:0").into_acceptor().await.unwrap();
    let addr = *acceptor.local_addr()[0].as_socket_addr().unwrap();
    tokio::spawn(Server::new_with_acceptor(acceptor).run(app));
    format!("http://{addr}")
}

fn fetcher(config: FetchConfig) -> Fetcher {
    Fetcher::new(FetchConfig { allow_private: true, ..config })
}

fn short_timeouts() -> FetchConfig {
    FetchConfig {
        connect_timeout: Duration::from_secs(2),
        read_timeout: Duration::from_millis(300),
        allow_private: true,
        ..FetchConfig::default()
    }
}

async fn media_store() -> (tempfile::TempDir, MediaStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = MediaStore::open(dir.path()).await.unwrap();
    (dir, store)
}

/// No temp or committed file is left in the media directory.
fn assert_media_dir_empty(store: &MediaStore) {
    let left: Vec<_> = std::fs::read_dir(store.media_dir()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "a failed download leaves no file behind, found {left:?}");
}

#[tokio::test]
async fn a_file_is_downloaded_whole_under_its_url_name() {
    let base = serve().await;
    let (_dir, store) = media_store().await;
    let stored = fetcher(FetchConfig::default())
        .fetch_to_store(&format!("{base}/audio/en_jfk.wav"), &store, "job-1")
        .await
        .unwrap();
    assert_eq!(stored.file_name, "en_jfk.wav");
    assert_eq!(stored.size, jfk().len() as u64);
    assert_eq!(std::fs::read(&stored.path).unwrap(), jfk(), "the stored bytes equal the served file");
    assert_eq!(stored.path, store.media_path("job-1", "en_jfk.wav").unwrap());
}

#[tokio::test]
async fn a_host_name_is_resolved_once_and_pinned() {
    let base = serve().await.replace("127.0.0.1", "localhost");
    let (_dir, store) = media_store().await;
    let stored = fetcher(FetchConfig::default())
        .fetch_to_store(&format!("{base}/chunked/talk.wav"), &store, "job-2")
        .await
        .unwrap();
    assert_eq!((stored.file_name.as_str(), stored.size), ("talk.wav", jfk().len() as u64));
}

#[tokio::test]
async fn content_disposition_names_the_file_safely() {
    let base = serve().await;
    let (_dir, store) = media_store().await;
    let stored =
        fetcher(FetchConfig::default()).fetch_to_store(&format!("{base}/download"), &store, "job-3").await.unwrap();
    assert_eq!(stored.file_name, "speech.wav", "the header's name, without its path");
    assert!(stored.path.starts_with(store.media_dir()));
}

#[tokio::test]
async fn redirects_are_followed_up_to_the_limit() {
    let base = serve().await;
    let (_dir, store) = media_store().await;
    let fetcher = fetcher(FetchConfig::default());
    let download = fetcher.download(&format!("{base}/hop/4"), &store).await.unwrap(); // 5 redirects
    assert_eq!(download.final_url.path(), "/audio/en_jfk.wav");
    assert_eq!(download.temp.written(), jfk().len() as u64);
    drop(download);

    let error = fetcher.download(&format!("{base}/hop/5"), &store).await.unwrap_err(); // 6 redirects
    assert!(matches!(error, FetchError::TooManyRedirects { max: 5 }), "{error:?}");
    assert_eq!(error.to_string(), "The URL redirected more than 5 times");
    assert_media_dir_empty(&store);
}

#[tokio::test]
async fn http_errors_name_the_status() {
    let base = serve().await;
    let (_dir, store) = media_store().await;
    let fetcher = fetcher(FetchConfig::default());
    let missing = fetcher.download(&format!("{base}/nothing-here.wav"), &store).await.unwrap_err();
    assert_eq!(missing.to_string(), "The server answered 404 Not Found");
    let gone_error = fetcher.download(&format!("{base}/gone"), &store).await.unwrap_err();
    assert!(matches!(gone_error, FetchError::HttpStatus { status: 410, .. }), "{gone_error:?}");
    assert_media_dir_empty(&store);
}

#[tokio::test]
async fn a_web_page_is_not_taken_for_media() {
    let base = serve().await;
    let (_dir, store) = media_store().await;
    let error = fetcher(FetchConfig::default()).download(&format!("{base}/share/talk.wav"), &store).await.unwrap_err();
    assert_eq!(error.to_string(), "The URL returned a web page (text/html), not a media file");
    assert_media_dir_empty(&store);
}

#[tokio::test]
async fn files_over_the_cap_are_refused_with_and_without_content_length() {
    let base = serve().await;
    let (_dir, store) = media_store().await;
    let fetcher = fetcher(FetchConfig { max_bytes: 100_000, ..FetchConfig::default() });
    for path in ["/audio/en_jfk.wav", "/chunked/talk.wav"] {
        let error = fetcher.download(&format!("{base}{path}"), &store).await.unwrap_err();
        assert!(matches!(error, FetchError::TooLarge { limit: 100_000 }), "{path}: {error:?}");
        assert_eq!(error.to_string(), "The file is larger than the limit of 100000 bytes");
    }
    assert_media_dir_empty(&store);
}

#[tokio::test]
async fn a_silent_server_times_out_before_and_during_the_body() {
    let base = serve().await;
    let (_dir, store) = media_store().await;
    let fetcher = fetcher(short_timeouts());
    for path in ["/slow", "/stalled.wav"] {
        let error = fetcher.download(&format!("{base}{path}"), &store).await.unwrap_err();
        assert!(matches!(error, FetchError::Timeout { .. }), "{path}: {error:?}");
        assert!(error.to_string().contains("did not answer within 0.3 s"), "{error}");
    }
    assert_media_dir_empty(&store);
}

#[tokio::test]
async fn unreachable_hosts_say_so() {
    let (_dir, store) = media_store().await;
    let fetcher = fetcher(short_timeouts());
    // Port 1 on loopback: nothing listens there, the connection is refused.
    let refused = fetcher.download("http://127.0.0.1:1/a.wav", &store).await.unwrap_err();
    assert!(matches!(refused, FetchError::Unreachable { .. }), "{refused:?}");
    assert!(refused.to_string().starts_with("The host 127.0.0.1 is unreachable"), "{refused}");
    let unknown = fetcher.download("http://no-such-host.invalid/a.wav", &store).await.unwrap_err();
    assert!(matches!(unknown, FetchError::Unreachable { .. }), "{unknown:?}");
    let invalid = fetcher.download("not a url", &store).await.unwrap_err();
    assert!(matches!(invalid, FetchError::InvalidUrl(_)), "{invalid:?}");
}

#[tokio::test]
async fn loopback_is_refused_unless_private_addresses_are_allowed() {
    let base = serve().await;
    let (_dir, store) = media_store().await;
    let guarded = Fetcher::new(FetchConfig::default());
    assert!(!guarded.config().allow_private, "private addresses are refused by default");
    for url in
        [format!("{base}/audio/en_jfk.wav"), format!("{}/audio/en_jfk.wav", base.replace("127.0.0.1", "localhost"))]
    {
        let error = guarded.download(&url, &store).await.unwrap_err();
        match &error {
            FetchError::Refused(GuardError::PrivateAddress { addr, .. }) => {
                assert!(addr.is_loopback(), "{error}")
            }
            other => panic!("{url}: expected a refused private address, got {other:?}"),
        }
        assert!(error.to_string().contains("non-public address"), "{error}");
    }
    assert_media_dir_empty(&store);
}
