//! Slow clients cannot hold connections forever. hyper, as poem runs it, waits without limit for
//! a request head, between keep-alive requests and for body bytes, so a client that opens
//! connections and sends nothing (or half a head, or part of a body) keeps each one, and with
//! it a file descriptor and a task, for as long as it likes. Four limits, each a `scribe serve`
//! setting ([`ConnectionLimits`]):
//!
//! - **header read timeout**: a request's line and headers must arrive within it, counted from
//!   the connection's opening for its first request and from the first byte of each later one;
//!   bytes trickling in do not extend it.
//! - **idle timeout**: a keep-alive connection with no request in flight that neither sends nor
//!   receives anything for this long is closed (an answer still being sent counts as traffic:
//!   a client reading a long download slowly keeps its connection while it reads).
//! - **body timeout**: a request body that stops arriving (no byte for this long while the
//!   handler waits for it) ends the request with 408; a slow upload that keeps moving is never
//!   cut, however long it takes.
//! - **max connections**: at most this many connections are served at once. The others are not
//!   refused: they are not accepted until a connection closes, and wait in the operating
//!   system's listen queue meanwhile (their requests are answered once a place frees, which the
//!   three timeouts guarantee happens).
//!
//! [`GuardedAcceptor`] wraps the listener's acceptor: it takes a place before accepting, and
//! each connection's reads and writes pass through [`GuardedIo`], which closes the connection
//! (an I/O error that hyper answers by dropping it) when the head or idle deadline passes. Only
//! the edge knows when a request is in flight (from the moment hyper hands it over until the
//! handler answers), so it says so through [`OpenConnections`], where each connection is found
//! by its peer address; while a request is in flight the handler owns the time, and the body
//! timeout ([`StallGuard`], put on the body by the edge) is the limit on the client.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::os::fd::AsFd;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body as HttpBody, Frame, SizeHint};
use poem::http::uri::Scheme;
use poem::listener::Acceptor;
use poem::web::{LocalAddr, RemoteAddr};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep};

/// The limits on every connection. `Default` gives the values the service ships with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Longest a request head may take to arrive.
    pub header_read_timeout: Duration,
    /// Longest a connection may stay silent with no request in flight.
    pub idle_timeout: Duration,
    /// Longest a request body may go without a byte while its handler waits for it.
    pub body_timeout: Duration,
    /// Connections served at once; more wait in the listen queue.
    pub max_connections: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            header_read_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
            body_timeout: Duration::from_secs(60),
            max_connections: 512,
        }
    }
}

/// What one connection is doing, as its I/O and the edge see it.
#[derive(Debug)]
struct Pace {
    /// Requests handed to handlers and not yet answered (more than one only with HTTP/2).
    in_flight: usize,
    /// When the head now being waited for began: the opening for the first request, then the
    /// first byte after the last answer. `None` while idle between requests.
    head_started: Option<Instant>,
    /// When the last request was answered; `None` before the first.
    answered_at: Option<Instant>,
    /// When bytes last went out.
    wrote_at: Option<Instant>,
    /// A second handle on the connection's socket, to see whether the client hung up while a
    /// handler works on its request (hyper reads nothing then, so it would not notice).
    probe: Option<std::net::TcpStream>,
}

impl Pace {
    fn opened(now: Instant) -> Pace {
        Pace { in_flight: 0, head_started: Some(now), answered_at: None, wrote_at: None, probe: None }
    }

    /// When the connection is closed unless something happens first; `None` while a handler
    /// owns the time, and why.
    fn deadline(&self, limits: &ConnectionLimits) -> Option<(Instant, Overdue)> {
        if self.in_flight > 0 {
            return None;
        }
        let after_writes = |t: Instant| self.wrote_at.map_or(t, |w| w.max(t));
        match (self.head_started, self.answered_at) {
            (Some(started), _) => Some((after_writes(started) + limits.header_read_timeout, Overdue::Head)),
            (None, Some(answered)) => Some((after_writes(answered) + limits.idle_timeout, Overdue::Idle)),
            (None, None) => None,
        }
    }
}

/// Which deadline passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Overdue {
    Head,
    Idle,
}

type Shared = Arc<Mutex<Pace>>;

fn lock(pace: &Shared) -> std::sync::MutexGuard<'_, Pace> {
    pace.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The open connections by peer address, for the edge to say when a request is in flight.
#[derive(Clone, Default)]
pub struct OpenConnections {
    by_peer: Arc<Mutex<HashMap<SocketAddr, Shared>>>,
}

impl OpenConnections {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<SocketAddr, Shared>> {
        self.by_peer.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A request from `peer` reached a handler; it is in flight until the guard is dropped.
    /// `None` for a connection this server did not accept through [`GuardedAcceptor`].
    pub fn request_started(&self, peer: &RemoteAddr) -> Option<InFlight> {
        let pace = self.map().get(peer.as_socket_addr()?).cloned()?;
        {
            let mut p = lock(&pace);
            p.in_flight += 1;
            p.head_started = None;
        }
        Some(InFlight { pace })
    }

    /// Whether the client of `peer` hung up: its side of the connection is closed (or reset)
    /// while a handler still works on its request. A connection this server did not accept
    /// through [`GuardedAcceptor`] is never said to be gone.
    pub fn client_gone(&self, peer: &RemoteAddr) -> bool {
        let Some(addr) = peer.as_socket_addr() else { return false };
        let Some(pace) = self.map().get(addr).cloned() else { return false };
        let pace = lock(&pace);
        let Some(probe) = &pace.probe else { return false };
        let mut byte = [0u8; 1];
        // The socket is non-blocking (tokio's): no data answers WouldBlock at once; the end of
        // the stream answers 0; a reset answers an error. Bytes waiting (a pipelined request)
        // mean the client is there.
        match probe.peek(&mut byte) {
            Ok(0) => true,
            Ok(_) => false,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock || e.kind() == io::ErrorKind::Interrupted => false,
            Err(_) => true,
        }
    }

    /// How many connections are open.
    pub fn count(&self) -> usize {
        self.map().len()
    }
}

/// A request in flight on its connection; dropping it marks the request answered.
pub struct InFlight {
    pace: Shared,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut p = lock(&self.pace);
        p.in_flight = p.in_flight.saturating_sub(1);
        if p.in_flight == 0 {
            p.answered_at = Some(Instant::now());
            p.head_started = None;
        }
    }
}

/// An acceptor whose connections keep to [`ConnectionLimits`].
pub struct GuardedAcceptor<A> {
    inner: A,
    limits: ConnectionLimits,
    places: Arc<Semaphore>,
    open: OpenConnections,
    /// Whether the last accept had to wait for a place (logged once per episode).
    full: bool,
}

impl<A: Acceptor> GuardedAcceptor<A> {
    pub fn new(inner: A, limits: ConnectionLimits, open: OpenConnections) -> GuardedAcceptor<A> {
        let places = Arc::new(Semaphore::new(limits.max_connections.max(1)));
        GuardedAcceptor { inner, limits, places, open, full: false }
    }
}

impl<A: Acceptor> Acceptor for GuardedAcceptor<A>
where
    A::Io: AsFd,
{
    type Io = GuardedIo<A::Io>;

    fn local_addr(&self) -> Vec<LocalAddr> {
        self.inner.local_addr()
    }

    async fn accept(&mut self) -> io::Result<(Self::Io, LocalAddr, RemoteAddr, Scheme)> {
        let place = match self.places.clone().try_acquire_owned() {
            Ok(place) => {
                self.full = false;
                place
            }
            Err(_) => {
                if !self.full {
                    tracing::warn!(
                        max_connections = self.limits.max_connections,
                        "every connection place is taken; new connections wait in the listen queue until one closes"
                    );
                    self.full = true;
                }
                self.places.clone().acquire_owned().await.map_err(io::Error::other)?
            }
        };
        let (io, local, remote, scheme) = self.inner.accept().await?;
        let mut opened = Pace::opened(Instant::now());
        opened.probe = io.as_fd().try_clone_to_owned().ok().map(std::net::TcpStream::from);
        let pace: Shared = Arc::new(Mutex::new(opened));
        let peer = remote.as_socket_addr().copied();
        if let Some(peer) = peer {
            self.open.map().insert(peer, pace.clone());
        }
        let io = GuardedIo {
            inner: io,
            pace,
            limits: self.limits,
            timer: Box::pin(tokio::time::sleep_until(Instant::now())),
            armed: None,
            overdue: None,
            registration: peer.map(|peer| (self.open.clone(), peer)),
            _place: place,
        };
        Ok((io, local, remote, scheme))
    }
}

/// One connection: reads and writes pass through, until the head or idle deadline passes.
pub struct GuardedIo<T> {
    inner: T,
    pace: Shared,
    limits: ConnectionLimits,
    timer: Pin<Box<Sleep>>,
    /// The deadline the timer is set to, if it is.
    armed: Option<Instant>,
    /// Set once a deadline passed: every later read or write fails.
    overdue: Option<Overdue>,
    registration: Option<(OpenConnections, SocketAddr)>,
    _place: OwnedSemaphorePermit,
}

impl<T> GuardedIo<T> {
    /// Called when the inner I/O is not ready: ready with the error that closes the connection
    /// once its deadline has passed, else pending (with the timer set to wake the task then).
    fn poll_deadline(&mut self, cx: &mut Context<'_>) -> Poll<io::Error> {
        if let Some(overdue) = self.overdue {
            return Poll::Ready(self.closing(overdue));
        }
        let Some((deadline, why)) = lock(&self.pace).deadline(&self.limits) else {
            return Poll::Pending;
        };
        if deadline <= Instant::now() {
            return Poll::Ready(self.closing(why));
        }
        if self.armed != Some(deadline) {
            self.timer.as_mut().reset(deadline);
            self.armed = Some(deadline);
        }
        if self.timer.as_mut().poll(cx).is_ready() {
            self.armed = None;
            // Woken at the deadline; what the edge did meanwhile may have moved it.
            return self.poll_deadline(cx);
        }
        Poll::Pending
    }

    fn closing(&mut self, why: Overdue) -> io::Error {
        if self.overdue.is_none() {
            let (what, limit) = match why {
                Overdue::Head => ("no complete request head", self.limits.header_read_timeout),
                Overdue::Idle => ("an idle connection", self.limits.idle_timeout),
            };
            tracing::debug!(?limit, "closing {what} after its timeout");
        }
        self.overdue = Some(why);
        let message = match why {
            Overdue::Head => "the request head did not arrive within the header read timeout",
            Overdue::Idle => "the connection was idle longer than the idle timeout",
        };
        io::Error::new(io::ErrorKind::TimedOut, message)
    }

    fn wrote(&self, n: usize) {
        if n > 0 {
            lock(&self.pace).wrote_at = Some(Instant::now());
        }
    }
}

impl<T> Drop for GuardedIo<T> {
    fn drop(&mut self) {
        if let Some((open, peer)) = &self.registration {
            let mut map = open.map();
            if map.get(peer).is_some_and(|p| Arc::ptr_eq(p, &self.pace)) {
                map.remove(peer);
            }
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for GuardedIo<T> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        if let Some(overdue) = self.overdue {
            return Poll::Ready(Err(self.closing(overdue)));
        }
        let before = buf.filled().len();
        match Pin::new(&mut self.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    let mut p = lock(&self.pace);
                    if p.in_flight == 0 && p.head_started.is_none() {
                        p.head_started = Some(Instant::now());
                    }
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => self.poll_deadline(cx).map(Err),
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for GuardedIo<T> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        if let Some(overdue) = self.overdue {
            return Poll::Ready(Err(self.closing(overdue)));
        }
        match Pin::new(&mut self.inner).poll_write(cx, buf) {
            Poll::Ready(Ok(n)) => {
                self.wrote(n);
                Poll::Ready(Ok(n))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => self.poll_deadline(cx).map(Err),
        }
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if let Some(overdue) = self.overdue {
            return Poll::Ready(Err(self.closing(overdue)));
        }
        match Pin::new(&mut self.inner).poll_write_vectored(cx, bufs) {
            Poll::Ready(Ok(n)) => {
                self.wrote(n);
                Poll::Ready(Ok(n))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => self.poll_deadline(cx).map(Err),
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match Pin::new(&mut self.inner).poll_flush(cx) {
            Poll::Pending => self.poll_deadline(cx).map(Err),
            ready => ready,
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match Pin::new(&mut self.inner).poll_shutdown(cx) {
            Poll::Pending => self.poll_deadline(cx).map(Err),
            ready => ready,
        }
    }
}

/// A request body that fails with [`io::ErrorKind::TimedOut`] once nothing has arrived for the
/// body timeout while it is being read; `stalled` tells the edge, which answers 408.
pub struct StallGuard<B> {
    inner: B,
    timeout: Duration,
    timer: Pin<Box<Sleep>>,
    waiting: bool,
    stalled: Arc<AtomicBool>,
}

impl<B> StallGuard<B> {
    pub fn new(inner: B, timeout: Duration, stalled: Arc<AtomicBool>) -> StallGuard<B> {
        StallGuard { inner, timeout, timer: Box::pin(tokio::time::sleep(timeout)), waiting: false, stalled }
    }
}

impl<B: HttpBody<Data = Bytes, Error = io::Error> + Unpin> HttpBody for StallGuard<B> {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(frame) => {
                this.waiting = false;
                Poll::Ready(frame)
            }
            Poll::Pending => {
                if !this.waiting {
                    this.timer.as_mut().reset(Instant::now() + this.timeout);
                    this.waiting = true;
                }
                if this.timer.as_mut().poll(cx).is_ready() {
                    this.stalled.store(true, Ordering::Relaxed);
                    let message = format!("the request body stopped arriving: nothing came for {:?}", this.timeout);
                    return Poll::Ready(Some(Err(io::Error::new(io::ErrorKind::TimedOut, message))));
                }
                Poll::Pending
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: ConnectionLimits = ConnectionLimits {
        header_read_timeout: Duration::from_secs(30),
        idle_timeout: Duration::from_secs(60),
        body_timeout: Duration::from_secs(60),
        max_connections: 8,
    };

    #[test]
    fn a_new_connection_has_the_header_timeout_from_its_opening() {
        let opened = Instant::now();
        let pace = Pace::opened(opened);
        assert_eq!(pace.deadline(&LIMITS), Some((opened + LIMITS.header_read_timeout, Overdue::Head)));
    }

    #[test]
    fn a_request_in_flight_has_no_connection_deadline() {
        let mut pace = Pace::opened(Instant::now());
        pace.in_flight = 1;
        pace.head_started = None;
        assert_eq!(pace.deadline(&LIMITS), None);
    }

    #[test]
    fn after_an_answer_the_idle_timeout_counts_from_the_last_write_and_a_new_head_from_its_first_byte() {
        let t0 = Instant::now();
        let mut pace = Pace::opened(t0);
        pace.head_started = None;
        pace.answered_at = Some(t0 + Duration::from_secs(1));
        pace.wrote_at = Some(t0 + Duration::from_secs(5));
        assert_eq!(pace.deadline(&LIMITS), Some((t0 + Duration::from_secs(5) + LIMITS.idle_timeout, Overdue::Idle)));
        pace.head_started = Some(t0 + Duration::from_secs(7));
        assert_eq!(
            pace.deadline(&LIMITS),
            Some((t0 + Duration::from_secs(7) + LIMITS.header_read_timeout, Overdue::Head))
        );
    }
}
