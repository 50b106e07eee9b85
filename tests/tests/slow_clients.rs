//! Slow clients cannot hold connections: over raw TCP against a real server started with short
//! timeouts, a connection that sends nothing, half a request head, a head trickled a byte at a
//! time, part of a body, or nothing after its answer is closed by the server within a bound
//! (ten times the timeout: a correctness bound, not a speed benchmark); a slow upload that keeps
//! moving still succeeds; and connections over `--max-connections` wait until a place frees.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use scribe_tests::{Options, TestServer, clips, paths};
use serde_json::Value;

/// The header read, idle and body timeouts of the server under test.
const TIMEOUT: Duration = Duration::from_secs(2);
/// How long the server may take to close a connection past its timeout.
const BOUND: Duration = Duration::from_secs(20);

fn server_with_short_timeouts() -> TestServer {
    let secs = format!("{}s", TIMEOUT.as_secs());
    let args = ["--header-read-timeout", &secs, "--idle-timeout", &secs, "--body-timeout", &secs];
    TestServer::start_with(Options { extra_args: args.iter().map(|a| a.to_string()).collect(), ..Options::default() })
}

fn connect(server: &TestServer) -> TcpStream {
    TcpStream::connect(server.addr()).expect("a connection to the server")
}

/// How the server ended a connection: after how long, and what it sent before.
struct Closed {
    after: Duration,
    received: Vec<u8>,
}

impl Closed {
    fn status(&self) -> Option<u16> {
        let text = String::from_utf8_lossy(&self.received);
        text.strip_prefix("HTTP/1.1 ")?.get(..3)?.parse().ok()
    }

    fn body(&self) -> Value {
        let text = String::from_utf8_lossy(&self.received);
        let (_, body) = text.split_once("\r\n\r\n").expect("a response head");
        serde_json::from_str(body).unwrap_or_else(|e| panic!("not a JSON body ({e}): {text}"))
    }
}

/// Reads from `conn` until the server closes it (end of stream or reset), at most [`BOUND`]
/// from `since`; `poke` runs between reads (for clients that keep trickling).
fn wait_closed(conn: &mut TcpStream, since: Instant, mut poke: impl FnMut(&mut TcpStream)) -> Closed {
    let mut received = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let left = BOUND.checked_sub(since.elapsed()).unwrap_or_else(|| {
            panic!(
                "the server kept the connection open for {BOUND:?}; it sent: {:?}",
                String::from_utf8_lossy(&received)
            )
        });
        conn.set_read_timeout(Some(left.min(Duration::from_millis(300)).max(Duration::from_millis(1)))).unwrap();
        match conn.read(&mut buf) {
            Ok(0) => {
                return Closed { after: since.elapsed(), received };
            }
            Ok(n) => received.extend_from_slice(&buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted | ErrorKind::BrokenPipe
                ) =>
            {
                return Closed { after: since.elapsed(), received };
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => poke(conn),
            Err(e) => panic!("reading from the server: {e}"),
        }
    }
}

fn assert_closed_by_its_timeout(what: &str, closed: &Closed) {
    assert!(
        closed.after >= TIMEOUT / 2,
        "{what}: closed after {:?}, before its timeout of {TIMEOUT:?} could pass",
        closed.after
    );
}

#[test]
fn connections_that_send_nothing_or_half_a_head_are_closed() {
    let server = server_with_short_timeouts();

    // (a) Nothing at all.
    let opened = Instant::now();
    let mut silent = connect(&server);
    let closed = wait_closed(&mut silent, opened, |_| {});
    assert_closed_by_its_timeout("a silent connection", &closed);
    assert!(closed.received.is_empty(), "{:?}", String::from_utf8_lossy(&closed.received));

    // (b) Half a request head, then nothing.
    let opened = Instant::now();
    let mut half = connect(&server);
    half.write_all(b"GET /api/jobs?apiKey=x HTTP/1.1\r\nHost: scribe\r\nX-Slow: ").unwrap();
    let closed = wait_closed(&mut half, opened, |_| {});
    assert_closed_by_its_timeout("half a head", &closed);

    // A head trickled a byte every 300 ms never completes: the header timeout counts from the
    // opening, and trickling does not extend it.
    let opened = Instant::now();
    let mut trickle = connect(&server);
    let head = b"GET /health HTTP/1.1\r\nHost: scribe\r\nX-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
    let mut sent = 0;
    let closed = wait_closed(&mut trickle, opened, |conn| {
        if sent < head.len() && conn.write_all(&head[sent..sent + 1]).is_ok() {
            sent += 1;
        }
    });
    assert_closed_by_its_timeout("a trickled head", &closed);
    assert!(sent < head.len(), "the whole head went out before the server closed the connection");
}

#[test]
fn a_keep_alive_connection_left_idle_is_closed_after_its_answer() {
    let server = server_with_short_timeouts();
    let mut conn = connect(&server);
    conn.write_all(b"GET /health HTTP/1.1\r\nHost: scribe\r\n\r\n").unwrap();
    let answered = Instant::now();
    let closed = wait_closed(&mut conn, answered, |_| {});
    assert_eq!(closed.status(), Some(200), "{:?}", String::from_utf8_lossy(&closed.received));
    assert!(String::from_utf8_lossy(&closed.received).contains("\"ok\""), "the answer came whole before the close");
    assert_closed_by_its_timeout("an idle keep-alive connection", &closed);
}

#[test]
fn a_body_that_stops_arriving_ends_its_request_with_408() {
    let server = server_with_short_timeouts();
    // (c) An upload that promises 1000 bytes, sends 10 and stalls.
    let started = Instant::now();
    let mut conn = connect(&server);
    let head = format!(
        "POST /api/jobs/upload-media?apiKey={} HTTP/1.1\r\nHost: scribe\r\nContent-Type: multipart/form-data; boundary=B\r\nContent-Length: 1000\r\n\r\n",
        server.key()
    );
    conn.write_all(head.as_bytes()).unwrap();
    conn.write_all(b"--B\r\nConte").unwrap();
    let closed = wait_closed(&mut conn, started, |_| {});
    assert_closed_by_its_timeout("a stalled upload body", &closed);
    assert_eq!(closed.status(), Some(408), "{:?}", String::from_utf8_lossy(&closed.received));
    let body = closed.body();
    assert_eq!(body["error"], "REQUEST_TIMEOUT", "{body}");
    assert!(body["message"].as_str().unwrap().contains("stopped arriving"), "{body}");
    assert!(server.list_jobs(server.key(), &[]).is_empty(), "a stalled upload is no job");

    // The same for a JSON body.
    let started = Instant::now();
    let mut conn = connect(&server);
    let head = format!(
        "POST /api/glossary?apiKey={} HTTP/1.1\r\nHost: scribe\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{\"name\": ",
        server.key()
    );
    conn.write_all(head.as_bytes()).unwrap();
    let closed = wait_closed(&mut conn, started, |_| {});
    assert_eq!(closed.status(), Some(408), "{:?}", String::from_utf8_lossy(&closed.received));
}

#[test]
fn a_slow_upload_that_keeps_moving_succeeds() {
    let server = server_with_short_timeouts();
    // (d) 8 KiB every half second: the whole upload takes several times the body timeout.
    let media = std::fs::read(paths::corpus_file(clips::SHORT)).expect("the corpus clip");
    let mut body = b"--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"slow.wav\"\r\nContent-Type: audio/wav\r\n\r\n".to_vec();
    body.extend_from_slice(&media);
    body.extend_from_slice(b"\r\n--B--\r\n");
    let head = format!(
        "POST /api/jobs/upload-media?apiKey={}&language=en HTTP/1.1\r\nHost: scribe\r\nContent-Type: multipart/form-data; boundary=B\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        server.key(),
        body.len()
    );
    let started = Instant::now();
    let mut conn = connect(&server);
    conn.write_all(head.as_bytes()).unwrap();
    for chunk in body.chunks(8 << 10) {
        std::thread::sleep(Duration::from_millis(500));
        conn.write_all(chunk).expect("the server keeps reading a slow upload");
    }
    let sending = started.elapsed();
    assert!(sending > TIMEOUT * 2, "the upload took {sending:?}: not slow enough to prove anything");
    let closed = wait_closed(&mut conn, Instant::now(), |_| {});
    assert_eq!(closed.status(), Some(200), "{:?}", String::from_utf8_lossy(&closed.received));
    assert_eq!(closed.body()["jobStatus"]["status"], "OPEN");
}

#[test]
fn connections_over_the_cap_wait_until_a_place_frees() {
    let args = ["--max-connections", "2", "--header-read-timeout", "8s", "--idle-timeout", "2s"];
    let server = TestServer::start_with(Options {
        extra_args: args.iter().map(|a| a.to_string()).collect(),
        ..Options::default()
    });
    // The harness's own keep-alive connection (from its health check) leaves when idle.
    std::thread::sleep(Duration::from_secs(3));

    // (e) Two silent connections take both places.
    let first = connect(&server);
    let _second = connect(&server);
    std::thread::sleep(Duration::from_millis(300));
    // A third is not refused: its request waits, unanswered, while both places are taken.
    let mut third = connect(&server);
    third.write_all(b"GET /health HTTP/1.1\r\nHost: scribe\r\nConnection: close\r\n\r\n").unwrap();
    third.set_read_timeout(Some(Duration::from_millis(1500))).unwrap();
    let mut buf = [0u8; 1024];
    match third.read(&mut buf) {
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
        other => panic!(
            "a connection over the cap was served or closed at once: {other:?} {:?}",
            String::from_utf8_lossy(&buf)
        ),
    }
    // As soon as one place frees (here the first client leaves, long before the second one's
    // header timeout of 8 s), the waiting connection is served.
    drop(first);
    let freed = Instant::now();
    let answered = wait_closed(&mut third, freed, |_| {});
    assert_eq!(answered.status(), Some(200), "{:?}", String::from_utf8_lossy(&answered.received));
    assert!(answered.after < Duration::from_secs(4), "served {:?} after a place freed", answered.after);
}
