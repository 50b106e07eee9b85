//! The HTTP layer's own refusals, in the API's words. hyper answers a request it cannot read
//! (a request head over its limits: 431; a URL too long: 414; a malformed request line or
//! header: 400) by itself, before poem or any of our code sees the request, and with an empty
//! body; poem gives no hook there. [`WordedRefusals`] wraps the listener's acceptor so every
//! connection's writes pass through [`WordedIo`], which recognises exactly that automatic
//! answer and sends the API's JSON error body in its place.
//!
//! How the automatic answer is told from ours: hyper writes it as a bare head (status line,
//! `connection: close`, `content-length: 0`, `date`, nothing else) at the start of a write,
//! and closes the connection after it. Every 400, 414 or 431 of the API itself carries a JSON
//! body and its content type, so a bare head with one of those statuses can only be hyper's.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use poem::http::uri::Scheme;
use poem::listener::Acceptor;
use poem::web::{LocalAddr, RemoteAddr};
use poem_openapi::types::ToJSON;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::error::{ErrorBody, ErrorCode};

/// hyper's limits on a request head (its defaults, which the server keeps).
const MAX_HEADER_FIELDS: usize = 100;
const MAX_HEAD_KIB: usize = (8192 + 4096 * 100) / 1024;
const MAX_URI_BYTES: usize = 65_534;

/// An acceptor whose connections answer hyper's automatic refusals with the API's error body.
pub struct WordedRefusals<A> {
    inner: A,
}

impl<A: Acceptor> WordedRefusals<A> {
    pub fn new(inner: A) -> WordedRefusals<A> {
        WordedRefusals { inner }
    }
}

impl<A: Acceptor> Acceptor for WordedRefusals<A> {
    type Io = WordedIo<A::Io>;

    fn local_addr(&self) -> Vec<LocalAddr> {
        self.inner.local_addr()
    }

    async fn accept(&mut self) -> io::Result<(Self::Io, LocalAddr, RemoteAddr, Scheme)> {
        let (io, local, remote, scheme) = self.inner.accept().await?;
        Ok((WordedIo { inner: io, reworded: Vec::new(), sent: 0 }, local, remote, scheme))
    }
}

/// One connection: reads pass through; a write that is hyper's bare refusal is replaced.
pub struct WordedIo<T> {
    inner: T,
    /// The reworded answer still to send (empty when none), and how much of it went out.
    reworded: Vec<u8>,
    sent: usize,
}

impl<T: AsyncWrite + Unpin> WordedIo<T> {
    /// Sends what is left of a reworded answer; ready once all of it went out.
    fn poll_send_reworded(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.sent < self.reworded.len() {
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &self.reworded[self.sent..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.sent += n;
        }
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for WordedIo<T> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for WordedIo<T> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        ready!(self.poll_send_reworded(cx))?;
        if let Some(answer) = reword(buf) {
            self.reworded = answer;
            self.sent = 0;
            // hyper's bytes are taken whole; ours go out now or on the flush that follows.
            if let Poll::Ready(Err(e)) = self.poll_send_reworded(cx) {
                return Poll::Ready(Err(e));
            }
            return Poll::Ready(Ok(buf.len()));
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_send_reworded(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_send_reworded(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    // hyper writes a bare refusal as one buffer: alone in a vectored write (its queue holds the
    // head in a buffer of its own), so only that case is looked at and bodies pass untouched.
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let mut filled = bufs.iter().filter(|b| !b.is_empty());
        if let (Some(only), None) = (filled.next(), filled.next()) {
            return self.poll_write(cx, only);
        }
        ready!(self.poll_send_reworded(cx))?;
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

/// The API's answer in place of `written`, if `written` is exactly hyper's bare refusal.
fn reword(written: &[u8]) -> Option<Vec<u8>> {
    if !written.starts_with(b"HTTP/1.1 4") {
        return None;
    }
    let mut headers = [httparse::EMPTY_HEADER; 4];
    let mut head = httparse::Response::new(&mut headers);
    let Ok(httparse::Status::Complete(len)) = head.parse(written) else { return None };
    let bare = len == written.len()
        && head
            .headers
            .iter()
            .all(|h| ["date", "content-length", "connection"].iter().any(|n| h.name.eq_ignore_ascii_case(n)))
        && head.headers.iter().any(|h| h.name.eq_ignore_ascii_case("content-length") && h.value == b"0");
    if !bare {
        return None;
    }
    let status = head.code?;
    let (error, message) = match status {
        431 => (
            ErrorCode::HeadersTooLarge,
            format!(
                "the request's headers are too large: the server reads at most {MAX_HEADER_FIELDS} header fields and {MAX_HEAD_KIB} KiB of request line and headers"
            ),
        ),
        414 => (
            ErrorCode::UriTooLong,
            format!("the request's URL is too long: the server reads at most {MAX_URI_BYTES} bytes"),
        ),
        400 => (
            ErrorCode::MalformedRequest,
            "the request is not valid HTTP: its request line or a header could not be read".to_owned(),
        ),
        _ => return None,
    };
    let body = ErrorBody { status, error, message, field: None }.to_json_string();
    let mut answer = format!("HTTP/1.1 {status} {}\r\n", head.reason.unwrap_or_default());
    for date in head.headers.iter().filter(|h| h.name.eq_ignore_ascii_case("date")) {
        answer.push_str(&format!("date: {}\r\n", String::from_utf8_lossy(date.value)));
    }
    answer.push_str(&format!(
        "content-type: application/json; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    ));
    Some(answer.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body_of(answer: &[u8]) -> serde_json::Value {
        let text = std::str::from_utf8(answer).unwrap();
        let (_, body) = text.split_once("\r\n\r\n").unwrap();
        serde_json::from_str(body).unwrap()
    }

    #[test]
    fn hypers_bare_431_becomes_the_api_error_body() {
        let bare = b"HTTP/1.1 431 Request Header Fields Too Large\r\nconnection: close\r\ncontent-length: 0\r\ndate: Wed, 25 Nov 2026 15:00:00 GMT\r\n\r\n";
        let answer = reword(bare).expect("reworded");
        let text = std::str::from_utf8(&answer).unwrap();
        assert!(text.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"), "{text}");
        assert!(text.contains("date: Wed, 25 Nov 2026 15:00:00 GMT\r\n"), "{text}");
        assert!(text.contains("connection: close\r\n"), "{text}");
        let body = body_of(&answer);
        assert_eq!(body["status"], 431);
        assert_eq!(body["error"], "HEADERS_TOO_LARGE");
        assert!(body["message"].as_str().unwrap().contains("100 header fields"), "{body}");
        let declared: usize =
            text.split("content-length: ").nth(1).unwrap().split("\r\n").next().unwrap().parse().unwrap();
        assert_eq!(declared, text.split_once("\r\n\r\n").unwrap().1.len());
    }

    #[test]
    fn bare_414_and_400_are_reworded_too() {
        let uri = reword(b"HTTP/1.1 414 URI Too Long\r\ncontent-length: 0\r\n\r\n").unwrap();
        assert_eq!(body_of(&uri)["error"], "URI_TOO_LONG");
        let malformed = reword(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\ndate: x\r\n\r\n").unwrap();
        assert_eq!(body_of(&malformed)["error"], "MALFORMED_REQUEST");
    }

    #[test]
    fn the_apis_own_answers_pass_untouched() {
        let ours = b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}";
        assert!(reword(ours).is_none());
        let head_only = b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 0\r\n\r\n";
        assert!(reword(head_only).is_none(), "a typed answer is never hyper's");
        assert!(reword(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n").is_none(), "404 is never hyper's");
        assert!(reword(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").is_none());
        assert!(reword(b"partial body HTTP/1.1 431 ").is_none());
    }
}
