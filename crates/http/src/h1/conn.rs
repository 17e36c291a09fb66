//! One HTTP/1.1 connection of the scripted client, driven by the request's own task.
//!
//! hyper's HTTP/1 client runs each connection as a task of its own, talks to it through a
//! channel and keeps an 8 KiB read buffer, an 8 KiB header buffer and a write queue per
//! connection for as long as it lives (~35 KiB per VU in design 004). Here the exchange is a
//! plain sequence of awaits on the socket: write the head (and body), read until the head
//! parses, read the body by its framing. The read buffer is borrowed from a per-thread
//! stock for the exchange and given back when the body is done, so an idle connection holds
//! only its socket.
//!
//! What hyper's client did and k6 users see is kept: header names in Go's canonical case
//! (hyper's `title_case_headers`), interim 1xx responses skipped, obsolete line folding
//! unfolded, bytes counted and timed by the [`MeteredIo`](crate::timing_io::MeteredIo) the
//! socket is wrapped in.

use std::cell::RefCell;
use std::io;
use std::pin::Pin;
use std::task::{Context, Waker};

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};

use super::framing::{self, BodyKind, Chunked, HeadParts};
use crate::error::{self, HttpError};
use crate::headers::OutRequest;
use crate::phases::BodyBuf;
use crate::response_head::ResponseHead;

/// A socket the connection can run on (plain TCP or TLS, metered).
pub(crate) trait Io: AsyncRead + AsyncWrite + Send + Unpin {}

impl<T: AsyncRead + AsyncWrite + Send + Unpin> Io for T {}

/// Why an exchange failed; the client words it as k6 does.
#[derive(Debug)]
pub(crate) enum H1Error {
    /// The socket failed (or ended inside a body: `UnexpectedEof`).
    Io(io::Error),
    /// The server closed the connection before a complete response head (Go: `EOF`).
    Eof,
    /// The head or the body framing is malformed; already in Go's words.
    Framing(HttpError),
}

/// A read buffer's size when first borrowed, and the least free room a read gets.
const READ_MIN: usize = 8 << 10;
/// The most a single read asks for (large bodies).
const READ_MAX: usize = 128 << 10;
/// Buffers that grew past this are freed instead of going back to the stock.
const KEEP_AT_MOST: usize = 32 << 10;
/// Spare buffers a thread keeps: its peak number of exchanges in flight, up to this.
const SPARES: usize = 64;
/// A response head may not be larger (hyper's default limit).
const MAX_HEAD: usize = 400 << 10;
/// Request bodies up to this size go out in the same write as the head.
const INLINE_BODY: usize = 16 << 10;

thread_local! {
    /// Read buffers of finished exchanges, for the thread's next ones.
    static STOCK: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
}

fn borrow_buf() -> Vec<u8> {
    STOCK
        .with_borrow_mut(Vec::pop)
        .unwrap_or_else(|| Vec::with_capacity(READ_MIN))
}

fn give_back(mut buf: Vec<u8>) {
    if buf.capacity() == 0 || buf.capacity() > KEEP_AT_MOST {
        return;
    }
    buf.clear();
    // `try_with`: a connection dropped while the thread exits has no stock to return to.
    let _ = STOCK.try_with(|s| {
        let mut s = s.borrow_mut();
        if s.len() < SPARES {
            s.push(buf);
        }
    });
}

/// An HTTP/1.1 connection used for one exchange at a time.
pub(crate) struct H1Conn {
    io: Box<dyn Io>,
    /// The current exchange's bytes; empty, without capacity, between exchanges.
    buf: Vec<u8>,
    /// How much of `buf` is consumed.
    pos: usize,
    /// The connection cannot carry another request.
    done: bool,
}

impl H1Conn {
    /// A connection over an established (and, for `https`, handshaken) socket.
    pub(crate) fn new(io: Box<dyn Io>) -> H1Conn {
        H1Conn {
            io,
            buf: Vec::new(),
            pos: 0,
            done: false,
        }
    }

    /// Whether the connection is unusable: it said so, failed, or the server closed it (or
    /// sent something unasked) while it was idle. Looks at the socket without waiting, as
    /// Go's idle-connection reader would have noticed.
    pub(crate) fn is_closed(&mut self) -> bool {
        if self.done {
            return true;
        }
        let mut cx = Context::from_waker(Waker::noop());
        let mut byte = [0u8; 1];
        let mut probe = ReadBuf::new(&mut byte);
        if Pin::new(&mut *self.io)
            .poll_read(&mut cx, &mut probe)
            .is_ready()
        {
            self.done = true;
        }
        self.done
    }

    /// Whether the last exchange left the connection reusable.
    pub(crate) fn is_done(&self) -> bool {
        self.done
    }

    /// Writes the request and reads up to the end of the final response head; the body is
    /// read with [`H1Conn::read_body`].
    pub(crate) async fn send(
        &mut self,
        req: &OutRequest<'_>,
    ) -> Result<(ResponseHead, BodyKind), H1Error> {
        if self.buf.capacity() == 0 {
            self.buf = borrow_buf();
        }
        self.buf.clear();
        self.pos = 0;
        encode_head(req, &mut self.buf);
        let body = req.body;
        let inline = body.len() <= INLINE_BODY;
        if inline {
            self.buf.extend_from_slice(body);
        }
        let written = self.write((!inline).then_some(body)).await;
        if let Err(e) = written {
            self.done = true;
            return Err(H1Error::Io(e));
        }
        self.buf.clear();
        self.done |= req.asks_close();

        let head_request = *req.method == http::Method::HEAD;
        let mut parts = HeadParts::default();
        loop {
            // Nothing to parse before the first read: the buffer was just emptied.
            let unread = &self.buf[self.pos..];
            let parsed = if unread.is_empty() {
                Ok(None)
            } else {
                framing::parse_head_parts(unread, head_request, &mut parts)
            };
            match parsed {
                Ok(Some(head)) => {
                    self.pos += head.len;
                    if head.is_interim() {
                        continue;
                    }
                    self.done |= head.close;
                    if http::StatusCode::from_u16(head.status).is_err() {
                        self.done = true;
                        return Err(H1Error::Framing(HttpError::new(
                            error::GENERIC,
                            format!("malformed HTTP status code \"{}\"", head.status),
                        )));
                    }
                    return Ok((response_head(head.status, parts), head.body));
                }
                Ok(None) => {}
                Err(e) => {
                    self.done = true;
                    return Err(H1Error::Framing(e.into()));
                }
            }
            if self.buf.len() - self.pos >= MAX_HEAD {
                self.done = true;
                return Err(H1Error::Framing(HttpError::new(
                    error::GENERIC,
                    "malformed HTTP response: message head is too large",
                )));
            }
            match self.read_more(READ_MIN).await {
                Ok(0) => {
                    self.done = true;
                    return Err(H1Error::Eof);
                }
                Ok(_) => {}
                Err(e) => {
                    self.done = true;
                    return Err(H1Error::Io(e));
                }
            }
        }
    }

    /// Reads the body framed as `kind` into `out` (or drops it when `discard`), then gives
    /// the read buffer back. `hint` is the expected size, for the first allocation.
    pub(crate) async fn read_body(
        &mut self,
        kind: BodyKind,
        discard: bool,
        out: &mut BodyBuf,
        hint: usize,
    ) -> Result<(), H1Error> {
        let res = self.body(kind, discard, out, hint).await;
        if res.is_err() || self.pos < self.buf.len() {
            // Failed mid-body, or bytes nobody asked for follow the response.
            self.done = true;
        }
        give_back(std::mem::take(&mut self.buf));
        self.pos = 0;
        res
    }

    async fn body(
        &mut self,
        kind: BodyKind,
        discard: bool,
        out: &mut BodyBuf,
        hint: usize,
    ) -> Result<(), H1Error> {
        let mut keep = |data: &[u8]| {
            if !discard {
                out.extend(data, hint);
            }
        };
        let cut_short = || H1Error::Io(io::ErrorKind::UnexpectedEof.into());
        match kind {
            BodyKind::Empty => Ok(()),
            BodyKind::Length(mut left) => loop {
                let have = ((self.buf.len() - self.pos) as u64).min(left) as usize;
                keep(&self.buf[self.pos..self.pos + have]);
                self.pos += have;
                left -= have as u64;
                if left == 0 {
                    return Ok(());
                }
                let want = usize::try_from(left).unwrap_or(usize::MAX);
                if self.read_more(want).await.map_err(H1Error::Io)? == 0 {
                    return Err(cut_short());
                }
            },
            BodyKind::Chunked => {
                let mut chunks = Chunked::new();
                loop {
                    let used = chunks
                        .advance_with(&self.buf[self.pos..], &mut keep)
                        .map_err(|e| H1Error::Framing(e.into()))?;
                    self.pos += used;
                    if chunks.is_done() {
                        return Ok(());
                    }
                    if self.read_more(READ_MIN).await.map_err(H1Error::Io)? == 0 {
                        return Err(cut_short());
                    }
                }
            }
            BodyKind::UntilClose => {
                self.done = true;
                loop {
                    keep(&self.buf[self.pos..]);
                    self.pos = self.buf.len();
                    if self.read_more(READ_MAX).await.map_err(H1Error::Io)? == 0 {
                        return Ok(());
                    }
                }
            }
        }
    }

    /// Writes `buf` (the head, with a small body), then a large `body` if given.
    async fn write(&mut self, body: Option<&Bytes>) -> io::Result<()> {
        self.io.write_all(&self.buf).await?;
        if let Some(body) = body {
            self.io.write_all(body).await?;
        }
        self.io.flush().await
    }

    /// Reads more bytes after the unconsumed ones; `want` is how many the caller expects.
    async fn read_more(&mut self, want: usize) -> io::Result<usize> {
        if self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        }
        let room = want.clamp(READ_MIN, READ_MAX);
        let spare = self.buf.capacity() - self.buf.len();
        if spare < READ_MIN / 2 || (self.buf.is_empty() && spare < room) {
            self.buf.reserve(room);
        }
        self.io.read_buf(&mut self.buf).await
    }
}

impl Drop for H1Conn {
    fn drop(&mut self) {
        give_back(std::mem::take(&mut self.buf));
    }
}

/// The request line and headers as hyper's client wrote them with `title_case_headers`.
fn encode_head(req: &OutRequest<'_>, out: &mut Vec<u8>) {
    out.extend_from_slice(req.method.as_str().as_bytes());
    out.push(b' ');
    out.extend_from_slice(req.target.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    for (name, value) in &req.headers {
        title_case(name.as_str().as_bytes(), out);
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
}

/// A lower-case header name in Go's canonical form: a capital first and after each hyphen.
fn title_case(name: &[u8], out: &mut Vec<u8>) {
    let mut after_hyphen = true;
    for &c in name {
        out.push(if after_hyphen {
            c.to_ascii_uppercase()
        } else {
            c
        });
        after_hyphen = c == b'-';
    }
}

fn response_head(status: u16, head: HeadParts) -> ResponseHead {
    ResponseHead {
        status,
        version: head.version,
        headers: head.headers,
        reason: head
            .reason
            .and_then(|r| hyper::ext::ReasonPhrase::try_from(r).ok()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{duplex, AsyncReadExt, AsyncWriteExt};

    /// A request head the tests own; [`Req::out`] lends it as the client's.
    struct Req {
        method: http::Method,
        target: String,
        headers: Vec<(http::HeaderName, http::HeaderValue)>,
        body: Bytes,
    }

    impl Req {
        fn out(&self) -> OutRequest<'_> {
            OutRequest {
                method: &self.method,
                target: self.target.as_str().into(),
                headers: self.headers.clone(),
                body: &self.body,
            }
        }
    }

    fn request(method: http::Method, path: &str, headers: &[(&str, &str)], body: Bytes) -> Req {
        Req {
            method,
            target: path.to_owned(),
            headers: headers
                .iter()
                .map(|(k, v)| {
                    (
                        http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                        http::HeaderValue::from_str(v).unwrap(),
                    )
                })
                .collect(),
            body,
        }
    }

    fn get(path: &str, headers: &[(&str, &str)]) -> Req {
        request(http::Method::GET, path, headers, Bytes::new())
    }

    /// A connection whose server side answers with `reply` (in pieces of `step` bytes) once
    /// it has read a request head; returns what the server read.
    async fn exchange(
        req: Req,
        reply: &'static [u8],
        step: usize,
    ) -> (Result<(ResponseHead, Bytes), H1Error>, Vec<u8>, H1Conn) {
        // The server hangs up after its reply, which ends close-delimited bodies.
        let (client, mut server) = duplex(1 << 16);
        let mut conn = H1Conn::new(Box::new(client));
        let srv = tokio::spawn(async move {
            let mut seen = Vec::new();
            let mut b = [0u8; 4096];
            while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = server.read(&mut b).await.unwrap();
                seen.extend_from_slice(&b[..n]);
            }
            for piece in reply.chunks(step) {
                server.write_all(piece).await.unwrap();
                tokio::task::yield_now().await;
            }
            seen
        });
        let res = async {
            let (parts, kind) = conn.send(&req.out()).await?;
            let mut body = BodyBuf::default();
            conn.read_body(kind, false, &mut body, 0).await?;
            Ok((parts, body.take()))
        }
        .await;
        (res, srv.await.unwrap(), conn)
    }

    #[tokio::test]
    async fn request_head_is_written_in_go_canonical_case() {
        let req = get("/a?b=1", &[("x-probe", "1"), ("content-type", "t")]);
        let (res, seen, _) = exchange(req, b"HTTP/1.1 204 No Content\r\n\r\n", 64).await;
        assert_eq!(res.unwrap().0.status, 204);
        assert_eq!(
            String::from_utf8(seen).unwrap(),
            "GET /a?b=1 HTTP/1.1\r\nX-Probe: 1\r\nContent-Type: t\r\n\r\n"
        );
    }

    #[tokio::test]
    async fn bodies_by_every_framing_and_split_reads() {
        let cases: [(&[u8], &[u8]); 3] = [
            (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", b"hello"),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n2;x=y\r\nlo\r\n0\r\nT: 1\r\n\r\n",
                b"hello",
            ),
            (b"HTTP/1.0 200 OK\r\n\r\nhello", b"hello"),
        ];
        for (reply, body) in cases {
            for step in [1, 7, 4096] {
                let (res, _, conn) = exchange(get("/", &[]), reply, step).await;
                let (parts, got) = res.unwrap();
                assert_eq!(parts.status, 200);
                assert_eq!(&got[..], body, "step {step}: {reply:?}");
                // Close-delimited and HTTP/1.0 bodies end the connection; the others not.
                let ends = reply.starts_with(b"HTTP/1.0");
                assert_eq!(conn.is_done(), ends, "{reply:?}");
            }
        }
    }

    #[tokio::test]
    async fn interim_responses_are_skipped_and_reasons_kept_when_not_canonical() {
        let reply = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 Fine\r\nX-A: 1\r\nX-A: 2\r\nContent-Length: 0\r\n\r\n";
        let (res, _, _) = exchange(get("/", &[]), reply, 5).await;
        let (parts, _) = res.unwrap();
        assert_eq!(parts.status, 200);
        let all: Vec<_> = parts.headers.get_all("x-a").collect();
        assert_eq!(all, [b"1", b"2"]);
        assert_eq!(parts.reason.unwrap().as_bytes(), b"Fine");
        let (res, _, _) = exchange(get("/", &[]), b"HTTP/1.1 200 OK\r\n\r\n", 64).await;
        assert!(res.unwrap().0.reason.is_none());
    }

    #[tokio::test]
    async fn folded_header_values_are_unfolded() {
        let reply = b"HTTP/1.1 200 OK\r\nX-Long: a\r\n   b\r\n\tc\r\nContent-Length: 0\r\n\r\n";
        let (res, _, _) = exchange(get("/", &[]), reply, 64).await;
        let (parts, _) = res.unwrap();
        assert_eq!(parts.headers.get_str("x-long"), Some("a b c"));
        assert_eq!(parts.headers.get_str("content-length"), Some("0"));
    }

    #[tokio::test]
    async fn failures_are_told_apart() {
        let (res, _, conn) = exchange(get("/", &[]), b"", 1).await;
        assert!(matches!(res, Err(H1Error::Eof)));
        assert!(conn.is_done());
        let reply = b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\npartial";
        let (res, _, _) = exchange(get("/", &[]), reply, 64).await;
        assert!(matches!(res, Err(H1Error::Io(e)) if e.kind() == io::ErrorKind::UnexpectedEof));
        let reply = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n";
        let (res, _, _) = exchange(get("/", &[]), reply, 64).await;
        match res {
            Err(H1Error::Framing(e)) => assert_eq!(e.message, "invalid byte in chunk length"),
            _ => panic!("chunk error expected"),
        }
        let (res, _, _) = exchange(get("/", &[]), b"this is not http\r\n\r\n", 64).await;
        match res {
            Err(H1Error::Framing(e)) => assert_eq!(e.message, "malformed HTTP status code \"is\""),
            _ => panic!("head error expected"),
        }
    }

    #[tokio::test]
    async fn an_endless_head_is_refused_at_hypers_limit() {
        let mut reply = b"HTTP/1.1 200 OK\r\nX-Big: ".to_vec();
        reply.resize(MAX_HEAD + 16 * 1024, b'a');
        let (res, _, conn) = exchange(get("/", &[]), reply.leak(), 8192).await;
        match res {
            Err(H1Error::Framing(e)) => assert!(e.message.contains("too large"), "{}", e.message),
            _ => panic!("head limit expected"),
        }
        assert!(conn.is_done());
    }

    #[tokio::test]
    async fn keep_alive_and_close_rules() {
        let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
        let (res, _, conn) = exchange(get("/", &[]), ok, 64).await;
        res.unwrap();
        assert!(!conn.is_done());
        // The buffer went back to the thread's stock: an idle connection holds none.
        assert_eq!(conn.buf.capacity(), 0);
        let (res, _, conn) = exchange(get("/", &[("connection", "close")]), ok, 64).await;
        res.unwrap();
        assert!(conn.is_done(), "the request asked to close");
        let extra = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\njunk";
        let (res, _, conn) = exchange(get("/", &[]), extra, 64).await;
        res.unwrap();
        assert!(conn.is_done(), "bytes after the response");
    }

    #[tokio::test]
    async fn an_idle_connection_the_server_closed_is_noticed() {
        let (client, server) = duplex(1024);
        let mut conn = H1Conn::new(Box::new(client));
        assert!(!conn.is_closed());
        drop(server);
        assert!(conn.is_closed());
    }

    #[tokio::test]
    async fn large_bodies_go_out_after_the_head() {
        let (client, mut server) = duplex(1 << 20);
        let mut conn = H1Conn::new(Box::new(client));
        let body = Bytes::from(vec![b'x'; 100_000]);
        let req = request(
            http::Method::POST,
            "/up",
            &[("content-length", "100000")],
            body,
        );
        let head = b"POST /up HTTP/1.1\r\nContent-Length: 100000\r\n\r\n";
        let srv = tokio::spawn(async move {
            let mut seen = Vec::new();
            let mut b = [0u8; 8192];
            while seen.len() < head.len() + 100_000 {
                let n = server.read(&mut b).await.unwrap();
                seen.extend_from_slice(&b[..n]);
            }
            server
                .write_all(b"HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n")
                .await
                .unwrap();
            (seen, server)
        });
        let (parts, _) = conn.send(&req.out()).await.unwrap();
        assert_eq!(parts.status, 201);
        let (seen, _) = srv.await.unwrap();
        assert_eq!(&seen[..head.len()], head);
        assert_eq!(seen.len(), head.len() + 100_000);
    }
}
