//! A lean HTTP/1.1 keep-alive connection for scriptless benchmarking (`rk6 bench`).
//!
//! [`Client`](crate::Client) serves k6 scripts: cookie jar, DNS cache, pool, redirects,
//! per-phase timings and hyper's dispatcher task. A benchmark sends one fixed request over
//! and over, so [`KeepAlive`] does only that: it writes bytes built once
//! ([`RequestBytes`]), reads the answer into a buffer it reuses, parses the head with
//! `httparse` and skips the body by its framing ([`crate::h1::framing`]). Nothing on the
//! request path allocates. Plain `http://` only: a TLS origin may pick HTTP/2 by ALPN, which
//! is the client's job.

use std::net::SocketAddr;
use std::pin::Pin;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Sleep;
use url::{Host, Url};

use crate::error::{self, HttpError, Side};
use crate::h1::framing::{self, BodyKind, Chunked};
use crate::headers;

/// Read buffer of a connection; a response head must fit in [`MAX_HEAD`].
const BUFFER: usize = 16 * 1024;
/// Largest response head accepted (the buffer grows up to this for a big head only).
const MAX_HEAD: usize = 1024 * 1024;

/// One request, serialized once and written as is for every exchange.
#[derive(Clone, Debug)]
pub struct RequestBytes {
    wire: Box<[u8]>,
    /// The origin the request goes to.
    host: Host<String>,
    port: u16,
    /// A HEAD request: its response never has a body.
    head_request: bool,
}

impl RequestBytes {
    /// Serializes `method url` with the user `headers` (a `Host` among them replaces the
    /// URL's) and `body`, adding `Host`, `Content-Length` and URL credentials as the client
    /// does, and no `User-Agent`.
    pub fn new(
        method: &http::Method,
        url: &Url,
        user_headers: &[(String, String)],
        body: &[u8],
    ) -> Result<RequestBytes, HttpError> {
        let host = match url.host() {
            Some(host) if url.scheme() == "http" && !url.host_str().is_none_or(str::is_empty) => {
                host.to_owned()
            }
            _ => {
                return Err(HttpError::new(
                    error::INVALID_URL,
                    format!("not a plain http:// URL with a host: {:?}", url.as_str()),
                ))
            }
        };
        let mut host_header = headers::host_header(url).to_owned();
        let mut lines = Vec::new();
        let (mut has_len, mut has_auth) = (false, false);
        for (k, v) in user_headers {
            headers::name(k)?;
            headers::value(k, v)?;
            if k.eq_ignore_ascii_case("host") {
                host_header.clone_from(v);
                continue;
            }
            has_len |= k.eq_ignore_ascii_case("content-length");
            has_auth |= k.eq_ignore_ascii_case("authorization");
            push_header(&mut lines, k, v);
        }
        // Go sends Content-Length: 0 for body-less POST/PUT/PATCH and omits it otherwise.
        let wants_zero = matches!(method.as_str(), "POST" | "PUT" | "PATCH");
        if !has_len && (!body.is_empty() || wants_zero) {
            push_header(&mut lines, "Content-Length", &body.len().to_string());
        }
        if !has_auth && !url.username().is_empty() {
            push_header(&mut lines, "Authorization", &headers::basic_auth(url));
        }
        headers::value("Host", &host_header)?;
        let mut wire = Vec::with_capacity(64 + host_header.len() + lines.len() + body.len());
        wire.extend_from_slice(method.as_str().as_bytes());
        wire.push(b' ');
        wire.extend_from_slice(headers::path_and_query(url).as_bytes());
        wire.extend_from_slice(b" HTTP/1.1\r\n");
        push_header(&mut wire, "Host", &host_header);
        wire.extend_from_slice(&lines);
        wire.extend_from_slice(b"\r\n");
        wire.extend_from_slice(body);
        Ok(RequestBytes {
            wire: wire.into_boxed_slice(),
            host,
            port: url.port_or_known_default().unwrap_or(80),
            head_request: method == http::Method::HEAD,
        })
    }

    /// The bytes written for each request.
    pub fn as_bytes(&self) -> &[u8] {
        &self.wire
    }
}

fn push_header(out: &mut Vec<u8>, name: &str, value: &str) {
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(value.as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// A finished exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exchange {
    /// Response status.
    pub status: u16,
    /// First byte of the request written → last byte of the response read (k6's
    /// `http_req_duration`: sending + waiting + receiving; connecting is not in it).
    pub duration: Duration,
    /// Bytes written to the socket.
    pub bytes_sent: u64,
    /// Bytes read from the socket, head included.
    pub bytes_received: u64,
}

/// A failed exchange: k6's error for it and the bytes that moved before it failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{error}")]
pub struct ExchangeError {
    /// k6 error code and message (1050 when the deadline passed).
    pub error: HttpError,
    /// Bytes written before the failure.
    pub bytes_sent: u64,
    /// Bytes read before the failure.
    pub bytes_received: u64,
}

/// One HTTP/1.1 connection to one origin, reopened whenever the server closes it.
pub struct KeepAlive {
    io: Io,
    /// Armed once and moved only when it fires early, so a request sets no timer.
    timer: Option<Pin<Box<Sleep>>>,
}

/// The part of [`KeepAlive`] one exchange borrows (the timer watches it from outside).
struct Io {
    host: Host<String>,
    port: u16,
    /// Resolved on first connect and kept for the test.
    addr: Option<SocketAddr>,
    stream: Option<TcpStream>,
    buf: Buffer,
    counts: Counts,
    /// When the current attempt began writing.
    started: Option<Instant>,
}

#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    sent: u64,
    received: u64,
}

impl KeepAlive {
    /// A connection to the origin of `req` (the request it will send); nothing is opened
    /// until the first [`send`](Self::send).
    pub fn new(req: &RequestBytes) -> KeepAlive {
        KeepAlive {
            io: Io {
                host: req.host.clone(),
                port: req.port,
                addr: None,
                stream: None,
                buf: Buffer::new(),
                counts: Counts::default(),
                started: None,
            },
            timer: None,
        }
    }

    /// Sends `req` (to the origin given to [`new`](Self::new)) and reads its whole response,
    /// connecting first if needed. A kept-alive connection that the server closed before
    /// answering is replaced and the request sent once more. Past `deadline` the exchange
    /// fails with k6's request timeout (1050).
    pub async fn send(
        &mut self,
        req: &RequestBytes,
        deadline: Instant,
    ) -> Result<Exchange, ExchangeError> {
        let KeepAlive { io, timer } = self;
        io.counts = Counts::default();
        io.started = None;
        let at = tokio::time::Instant::from_std(deadline);
        let timer = match timer {
            Some(t) => {
                if t.deadline() > at {
                    t.as_mut().reset(at);
                }
                t
            }
            None => timer.insert(Box::pin(tokio::time::sleep_until(at))),
        };
        let result = {
            let exchange = io.round_trip(req);
            tokio::pin!(exchange);
            loop {
                tokio::select! {
                    biased;
                    r = &mut exchange => break r,
                    () = timer.as_mut() => {
                        if Instant::now() >= deadline {
                            break Err(HttpError::timeout());
                        }
                        // Set for an earlier request's deadline: move it to this one's.
                        timer.as_mut().reset(at);
                    }
                }
            }
        };
        let finished = Instant::now();
        match result {
            Ok(status) => Ok(Exchange {
                status,
                duration: finished - io.started.unwrap_or(finished),
                bytes_sent: io.counts.sent,
                bytes_received: io.counts.received,
            }),
            Err(error) => {
                // Whatever the failure left on the connection belongs to no request.
                io.stream = None;
                Err(ExchangeError {
                    error,
                    bytes_sent: io.counts.sent,
                    bytes_received: io.counts.received,
                })
            }
        }
    }
}

impl Io {
    async fn round_trip(&mut self, req: &RequestBytes) -> Result<u16, HttpError> {
        let mut retried = false;
        loop {
            let reused = self.stream.is_some();
            if !reused {
                self.connect().await?;
            }
            let Some(stream) = self.stream.as_mut() else {
                unreachable!("connect() leaves a stream");
            };
            self.started = Some(Instant::now());
            match exchange(stream, &mut self.buf, req, &mut self.counts).await {
                Ok(answer) => {
                    if answer.close {
                        self.stream = None;
                    }
                    return Ok(answer.status);
                }
                Err(failed) => {
                    self.stream = None;
                    // The server closed the kept-alive connection while it was idle. Go
                    // replays only requests without side effects; a benchmark repeats the
                    // same request anyway, and hyper's idle close detection (which the
                    // client relies on) makes the same choice for every method.
                    if reused && failed.unanswered && !retried {
                        retried = true;
                        continue;
                    }
                    return Err(failed.error);
                }
            }
        }
    }

    async fn connect(&mut self) -> Result<(), HttpError> {
        let addr = match self.addr {
            Some(addr) => addr,
            None => {
                let addr = resolve(&self.host, self.port).await?;
                self.addr = Some(addr);
                addr
            }
        };
        let tcp = TcpStream::connect(addr)
            .await
            .map_err(|e| error::from_dial(addr, &e))?;
        // Go's dialer disables Nagle; small request heads must not wait for ACKs.
        let _ = tcp.set_nodelay(true);
        self.stream = Some(tcp);
        Ok(())
    }
}

async fn resolve(host: &Host<String>, port: u16) -> Result<SocketAddr, HttpError> {
    match host {
        Host::Ipv4(ip) => Ok(SocketAddr::new((*ip).into(), port)),
        Host::Ipv6(ip) => Ok(SocketAddr::new((*ip).into(), port)),
        Host::Domain(name) => tokio::net::lookup_host((name.as_str(), port))
            .await
            .map_err(|e| error::from_dns(name, &e))?
            .next()
            .ok_or_else(|| error::no_such_host(name)),
    }
}

/// The read buffer: `data[start..end]` is received and not yet consumed.
struct Buffer {
    data: Vec<u8>,
    start: usize,
    end: usize,
}

impl Buffer {
    fn new() -> Buffer {
        Buffer {
            data: vec![0; BUFFER],
            start: 0,
            end: 0,
        }
    }

    fn filled(&self) -> &[u8] {
        &self.data[self.start..self.end]
    }

    fn consume(&mut self, n: usize) {
        self.start += n;
        if self.start == self.end {
            self.clear();
        }
    }

    fn clear(&mut self) {
        self.start = 0;
        self.end = 0;
    }

    /// Free space after the data, moving the data to the front (or growing, for a large
    /// head) when there is none; `None` when the pending bytes already fill [`MAX_HEAD`].
    fn space(&mut self) -> Option<&mut [u8]> {
        if self.end == self.data.len() {
            if self.start > 0 {
                self.data.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            } else if self.data.len() < MAX_HEAD {
                self.data.resize((self.data.len() * 2).min(MAX_HEAD), 0);
            } else {
                return None;
            }
        }
        Some(&mut self.data[self.end..])
    }
}

/// What a completed exchange tells the connection.
struct Answer {
    status: u16,
    /// The connection cannot be used again.
    close: bool,
}

/// An exchange that failed.
struct Failed {
    error: HttpError,
    /// No byte of a response arrived: the server may have closed an idle connection.
    unanswered: bool,
}

impl From<framing::FramingError> for Failed {
    fn from(e: framing::FramingError) -> Failed {
        Failed {
            error: e.into(),
            unanswered: false,
        }
    }
}

/// Writes the request and reads the response through its body's end, counting wire bytes.
async fn exchange<S>(
    stream: &mut S,
    buf: &mut Buffer,
    req: &RequestBytes,
    counts: &mut Counts,
) -> Result<Answer, Failed>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let before = counts.received;
    let io_failed = |e: std::io::Error, side: Side, counts: &Counts| Failed {
        error: error::from_io(&e, side),
        unanswered: counts.received == before,
    };
    let mut written = 0;
    while written < req.wire.len() {
        match stream.write(&req.wire[written..]).await {
            Ok(0) => {
                let e = std::io::Error::from(std::io::ErrorKind::WriteZero);
                return Err(io_failed(e, Side::Write, counts));
            }
            Ok(n) => {
                written += n;
                counts.sent += n as u64;
            }
            Err(e) => return Err(io_failed(e, Side::Write, counts)),
        }
    }
    buf.clear();
    let head = loop {
        if let Some(head) = framing::parse_head(buf.filled(), req.head_request)? {
            buf.consume(head.len);
            if head.is_interim() {
                continue;
            }
            break head;
        }
        let n = read_more(stream, buf, counts)
            .await
            .map_err(|e| io_failed(e, Side::Read, counts))?;
        if n == 0 {
            // Go's words for a server that hangs up before (or while) sending the head.
            return Err(Failed {
                error: HttpError::new(error::GENERIC, "EOF"),
                unanswered: counts.received == before,
            });
        }
    };
    let eof = || Failed {
        error: HttpError::new(error::GENERIC, "unexpected EOF"),
        unanswered: false,
    };
    let read_err = |e: std::io::Error| Failed {
        error: error::from_io(&e, Side::Read),
        unanswered: false,
    };
    let mut close = head.close;
    match head.body {
        BodyKind::Empty => {}
        BodyKind::Length(mut left) => {
            let have = (buf.filled().len() as u64).min(left);
            buf.consume(have as usize);
            left -= have;
            while left > 0 {
                buf.clear();
                let n = read_more(stream, buf, counts).await.map_err(read_err)? as u64;
                if n == 0 {
                    return Err(eof());
                }
                let take = n.min(left);
                buf.consume(take as usize);
                left -= take;
            }
        }
        BodyKind::Chunked => {
            let mut chunks = Chunked::new();
            loop {
                let used = chunks.advance(buf.filled())?;
                buf.consume(used);
                if chunks.is_done() {
                    break;
                }
                if read_more(stream, buf, counts).await.map_err(read_err)? == 0 {
                    return Err(eof());
                }
            }
        }
        BodyKind::UntilClose => loop {
            buf.clear();
            if read_more(stream, buf, counts).await.map_err(read_err)? == 0 {
                break;
            }
        },
    }
    // Bytes past the response answer no request of ours; the connection is out of step.
    close |= !buf.filled().is_empty();
    Ok(Answer {
        status: head.status,
        close,
    })
}

/// Reads what is available after the buffered bytes; 0 at end of stream.
async fn read_more<S>(
    stream: &mut S,
    buf: &mut Buffer,
    counts: &mut Counts,
) -> std::io::Result<usize>
where
    S: AsyncRead + Unpin,
{
    let Some(space) = buf.space() else {
        return Err(std::io::Error::other("response head too large"));
    };
    let n = stream.read(space).await?;
    buf.end += n;
    counts.received += n as u64;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use std::io;
    use std::task::{Context, Poll};

    use tokio::io::ReadBuf;

    use super::*;

    /// A peer that hands out its scripted response `step` bytes per read and keeps what
    /// was written to it.
    struct Scripted {
        response: Vec<u8>,
        at: usize,
        step: usize,
        written: Vec<u8>,
    }

    impl Scripted {
        fn new(response: &[u8], step: usize) -> Scripted {
            Scripted {
                response: response.to_vec(),
                at: 0,
                step,
                written: Vec::new(),
            }
        }
    }

    impl AsyncRead for Scripted {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            out: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            let end = (self.at + self.step)
                .min(self.response.len())
                .min(self.at + out.remaining());
            let at = self.at;
            out.put_slice(&self.response[at..end]);
            self.at = end;
            Poll::Ready(Ok(()))
        }
    }

    impl AsyncWrite for Scripted {
        fn poll_write(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            data: &[u8],
        ) -> Poll<io::Result<usize>> {
            self.written.extend_from_slice(data);
            Poll::Ready(Ok(data.len()))
        }
        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    /// (status, close) of an exchange, or (error, unanswered).
    type Outcome = Result<(u16, bool), (HttpError, bool)>;

    fn get() -> RequestBytes {
        RequestBytes::new(
            &http::Method::GET,
            &"http://h:8080/p?q=1".parse().unwrap(),
            &[],
            b"",
        )
        .unwrap()
    }

    /// Runs one exchange against `response` served `step` bytes per read; returns the
    /// outcome, the bytes read and the bytes the server did not get to send.
    fn run(req: &RequestBytes, response: &[u8], step: usize) -> (Outcome, u64, usize) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let mut peer = Scripted::new(response, step);
        let mut buf = Buffer::new();
        let mut counts = Counts::default();
        let out = rt.block_on(exchange(&mut peer, &mut buf, req, &mut counts));
        assert_eq!(peer.written, req.as_bytes());
        assert_eq!(counts.sent, req.as_bytes().len() as u64);
        let out = out
            .map(|a| (a.status, a.close))
            .map_err(|f| (f.error, f.unanswered));
        (out, counts.received, response.len() - peer.at)
    }

    #[test]
    fn request_bytes_match_what_the_client_sends() {
        let req = RequestBytes::new(
            &http::Method::POST,
            &"http://u%40x:pw@127.0.0.1:81/a b?c=d".parse().unwrap(),
            &[("X-Test".into(), "yes".into())],
            b"hello",
        )
        .unwrap();
        assert_eq!(
            String::from_utf8_lossy(req.as_bytes()),
            "POST /a%20b?c=d HTTP/1.1\r\nHost: 127.0.0.1:81\r\nX-Test: yes\r\n\
             Content-Length: 5\r\nAuthorization: Basic dUB4OnB3\r\n\r\nhello"
        );
        let req = RequestBytes::new(
            &http::Method::PUT,
            &"http://example.com/".parse().unwrap(),
            &[("host".into(), "other".into())],
            b"",
        )
        .unwrap();
        assert_eq!(
            String::from_utf8_lossy(req.as_bytes()),
            "PUT / HTTP/1.1\r\nHost: other\r\nContent-Length: 0\r\n\r\n"
        );
        let bad = RequestBytes::new(
            &http::Method::GET,
            &"http://h/".parse().unwrap(),
            &[("X".into(), "a\r\nb".into())],
            b"",
        );
        assert_eq!(bad.unwrap_err().code, error::GENERIC);
        assert!(
            RequestBytes::new(&http::Method::GET, &"https://h/".parse().unwrap(), &[], b"")
                .is_err()
        );
    }

    #[test]
    fn content_length_byte_by_byte_leaves_the_next_response_unread() {
        let one = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
        let mut two = one.to_vec();
        two.extend_from_slice(b"HTTP/1.1 404 Not Found\r\n");
        for step in [1, 2, 5, 1000] {
            // The peer only sends more when asked, so the exchange must stop at the body's end.
            let (out, received, left) = run(&get(), one, step);
            assert_eq!(out, Ok((200, false)), "step {step}");
            assert_eq!(received, one.len() as u64);
            assert_eq!(left, 0);
        }
        // Bytes beyond the response in the same read put the connection out of step.
        let (out, _, _) = run(&get(), &two, 1000);
        assert_eq!(out, Ok((200, true)));
    }

    #[test]
    fn large_body_passes_through_the_buffer() {
        let body = vec![b'x'; 3 * BUFFER + 17];
        let mut resp =
            format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len()).into_bytes();
        resp.extend_from_slice(&body);
        let (out, received, left) = run(&get(), &resp, 4096);
        assert_eq!(out, Ok((200, false)));
        assert_eq!((received, left), (resp.len() as u64, 0));
    }

    #[test]
    fn chunked_with_extensions_and_trailers() {
        let resp = b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n\
                     4;ext=1\r\nwiki\r\n5\r\npedia\r\n0\r\nX-Trailer: t\r\n\r\n";
        for step in [1, 3, resp.len()] {
            let (out, received, left) = run(&get(), resp, step);
            assert_eq!(out, Ok((201, false)), "step {step}");
            assert_eq!((received, left), (resp.len() as u64, 0), "step {step}");
        }
    }

    #[test]
    fn close_delimited_body_reads_to_eof() {
        let resp = b"HTTP/1.0 200 OK\r\n\r\nall of this is body";
        let (out, received, left) = run(&get(), resp, 4);
        assert_eq!(out, Ok((200, true)));
        assert_eq!((received, left), (resp.len() as u64, 0));
    }

    #[test]
    fn bodiless_responses_do_not_wait_for_a_body() {
        for status in ["204 No Content", "304 Not Modified"] {
            let resp = format!("HTTP/1.1 {status}\r\nContent-Length: 10\r\n\r\n");
            let (out, _, _) = run(&get(), resp.as_bytes(), 1);
            assert_eq!(out.unwrap().0, status[..3].parse::<u16>().unwrap());
        }
        let head = RequestBytes::new(&http::Method::HEAD, &"http://h/".parse().unwrap(), &[], b"")
            .unwrap();
        let resp = b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n";
        assert_eq!(run(&head, resp, 1).0, Ok((200, false)));
        // A GET with the same head would wait for the 10 bytes and hit EOF.
        let (out, _, _) = run(&get(), resp, 1);
        assert_eq!(out.unwrap_err().0.message, "unexpected EOF");
    }

    #[test]
    fn interim_responses_are_skipped() {
        let resp = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
        let (out, received, _) = run(&get(), resp, 1);
        assert_eq!(out, Ok((200, false)));
        assert_eq!(received, resp.len() as u64);
    }

    #[test]
    fn connection_close_is_reported() {
        let resp = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok";
        assert_eq!(run(&get(), resp, 1).0, Ok((200, true)));
    }

    #[test]
    fn failures_map_to_k6_errors() {
        let (out, _, _) = run(&get(), b"", 1);
        let (e, unanswered) = out.unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str(), unanswered),
            (1000, "EOF", true)
        );

        let (out, _, _) = run(&get(), b"HTTP/1.1 200 O", 1);
        let (e, unanswered) = out.unwrap_err();
        assert_eq!((e.message.as_str(), unanswered), ("EOF", false));

        let (out, _, _) = run(&get(), b"HTTP/1.1 abc OK\r\n\r\n", 1);
        let (e, _) = out.unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (1000, "malformed HTTP status code \"abc\"")
        );

        let resp = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab";
        let (out, _, _) = run(&get(), resp, 2);
        assert_eq!(out.unwrap_err().0.message, "unexpected EOF");
    }

    /// A server on 127.0.0.1 that answers request `i` of a connection after `delays[i]`
    /// (`None`: never) and closes after `per_conn` answers; counts connections.
    async fn server(
        delays: Vec<Option<u64>>,
        per_conn: usize,
    ) -> (Url, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap())
            .parse()
            .unwrap();
        let conns = std::sync::Arc::new(AtomicUsize::new(0));
        let seen = conns.clone();
        tokio::spawn(async move {
            let mut served = 0;
            while let Ok((mut s, _)) = listener.accept().await {
                seen.fetch_add(1, Ordering::SeqCst);
                let mut mine = 0;
                let mut head = Vec::new();
                let mut b = [0u8; 1024];
                while mine < per_conn {
                    let Ok(n) = s.read(&mut b).await else { break };
                    if n == 0 {
                        break;
                    }
                    head.extend_from_slice(&b[..n]);
                    if !head.ends_with(b"\r\n\r\n") {
                        continue;
                    }
                    head.clear();
                    let Some(Some(ms)) = delays.get(served).copied() else {
                        continue;
                    };
                    served += 1;
                    mine += 1;
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    let _ = s
                        .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                        .await;
                }
            }
        });
        (url, conns)
    }

    #[tokio::test]
    async fn deadlines_hold_across_requests_without_a_timer_each() {
        let (url, _) = server(vec![Some(0), Some(200), None], 10).await;
        let mut conn = KeepAlive::new(&get_to(&url));
        let ms = Duration::from_millis;
        let ok = conn.send(&get_to(&url), Instant::now() + ms(100)).await;
        assert_eq!(ok.unwrap().status, 200);
        // The timer armed for that deadline fires during the next request; it must move on
        // to the later deadline instead of failing the request.
        tokio::time::sleep(ms(150)).await;
        let slow = conn.send(&get_to(&url), Instant::now() + ms(5000)).await;
        let slow = slow.unwrap();
        assert!(slow.duration >= ms(190), "{slow:?}");
        // A silent server: the deadline, not the timer's earlier setting, ends the wait.
        let started = Instant::now();
        let err = conn
            .send(&get_to(&url), started + ms(300))
            .await
            .unwrap_err();
        assert_eq!(err.error.code, error::REQUEST_TIMEOUT);
        let waited = started.elapsed();
        // Loose upper bound for a noisy machine; a timer left at the 5 s deadline fails it.
        assert!(waited >= ms(290) && waited < ms(3000), "{waited:?}");
        assert!(err.bytes_sent > 0);
    }

    #[tokio::test]
    async fn a_server_closing_idle_connections_costs_a_reconnect_not_an_error() {
        let (url, conns) = server(vec![Some(0); 3], 1).await;
        let mut conn = KeepAlive::new(&get_to(&url));
        let far = Instant::now() + Duration::from_secs(5);
        for _ in 0..3 {
            tokio::time::sleep(Duration::from_millis(20)).await;
            let done = conn.send(&get_to(&url), far).await.unwrap();
            assert_eq!(done.status, 200);
            assert_eq!(done.bytes_received, 40);
        }
        assert_eq!(conns.load(std::sync::atomic::Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn refused_connections_report_the_dial_error() {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let url: Url = format!("http://127.0.0.1:{port}/").parse().unwrap();
        let mut conn = KeepAlive::new(&get_to(&url));
        let far = Instant::now() + Duration::from_secs(5);
        let err = conn.send(&get_to(&url), far).await.unwrap_err();
        assert_eq!(
            (err.error.code, err.error.message.as_str(), err.bytes_sent),
            (1212, "dial: connection refused", 0)
        );
    }

    fn get_to(url: &Url) -> RequestBytes {
        RequestBytes::new(&http::Method::GET, url, &[], b"").unwrap()
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Go's header-name rule: a non-empty RFC 9110 token.
    fn is_token(s: &str) -> bool {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
    }

    /// A URL from parts: host (name, IPv4 or IPv6), optional port, path, optional query.
    fn url_text() -> impl Strategy<Value = String> {
        (
            prop_oneof![
                Just("h.test".to_owned()),
                Just("127.0.0.1".to_owned()),
                Just("[::1]".to_owned()),
                "[a-z]{1,6}(\\.[a-z]{1,4})?"
            ],
            prop::option::of(prop_oneof![Just(80u16), any::<u16>()]),
            "(/[a-zA-Z0-9%._~ -]{0,6}){0,3}",
            prop::option::of("[a-z0-9=&%+ ]{0,10}"),
            prop::option::of("[a-z]{1,4}(:[a-z]{0,4})?@"),
        )
            .prop_map(|(host, port, path, query, user)| {
                let port = port.map(|p| format!(":{p}")).unwrap_or_default();
                let query = query.map(|q| format!("?{q}")).unwrap_or_default();
                format!(
                    "http://{}{host}{port}{path}{query}",
                    user.unwrap_or_default()
                )
            })
    }

    proptest! {
        #![proptest_config(crate::prop_config(3000))]

        /// Any URL text, method and headers: serialized or refused with a typed error,
        /// never a panic.
        #[test]
        fn any_request_is_decided(
            url in prop_oneof![url_text(), "\\PC{0,20}", "(http|https|ftp)://[\\PC]{0,12}"],
            name in "\\PC{0,8}",
            value in "\\PC{0,8}",
        ) {
            if let Ok(u) = Url::parse(&url) {
                let _ = RequestBytes::new(&http::Method::GET, &u, &[(name, value)], b"");
            }
        }

        /// A serialized request parses back (httparse, as a server would) to the URL's
        /// path and query, its `Host`, the user headers, a Content-Length matching the body
        /// and the body itself; a header is refused exactly when Go refuses it (a name that
        /// is not a token, a value with a control character).
        #[test]
        fn requests_parse_back(
            url in url_text(),
            method in prop::sample::select(&["GET", "POST", "PUT", "HEAD", "DELETE", "PATCH"][..]),
            headers in prop::collection::vec(("[A-Za-z0-9!#_. :-]{0,8}", "[ -~\t\r\n]{0,10}"), 0..4),
            body in prop::collection::vec(any::<u8>(), 0..32),
        ) {
            let u = Url::parse(&url).unwrap();
            let m = http::Method::from_bytes(method.as_bytes()).unwrap();
            let valid = headers.iter().all(|(k, v)| {
                is_token(k) && v.bytes().all(|b| b == b'\t' || (0x20..0x7f).contains(&b))
            });
            let got = RequestBytes::new(&m, &u, &headers, &body);
            prop_assert_eq!(got.is_ok(), valid, "{:?}", headers);
            let Ok(req) = got else { return Ok(()) };
            let mut parsed = [httparse::EMPTY_HEADER; 16];
            let mut r = httparse::Request::new(&mut parsed);
            let head_len = match r.parse(req.as_bytes()) {
                Ok(httparse::Status::Complete(n)) => n,
                other => return Err(TestCaseError::fail(format!("{other:?}"))),
            };
            prop_assert_eq!(r.method, Some(method));
            prop_assert_eq!(r.path, Some(headers::path_and_query(&u)));
            let get = |name: &str| r.headers.iter().filter(|h| h.name.eq_ignore_ascii_case(name)).map(|h| std::str::from_utf8(h.value).unwrap().to_owned()).collect::<Vec<_>>();
            let user_host: Vec<&(String, String)> = headers.iter().filter(|(k, _)| k.eq_ignore_ascii_case("host")).collect();
            let want_host = user_host.last().map_or_else(|| headers::host_header(&u).to_owned(), |(_, v)| v.trim().to_owned());
            prop_assert_eq!(get("host"), vec![want_host]);
            for (k, v) in headers.iter().filter(|(k, _)| !k.eq_ignore_ascii_case("host")) {
                prop_assert!(get(k).contains(&v.trim_matches([' ', '\t']).to_owned()), "{}: {:?}", k, v);
            }
            let user_len = headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("content-length"));
            if !user_len && (!body.is_empty() || matches!(method, "POST" | "PUT" | "PATCH")) {
                prop_assert_eq!(get("content-length"), vec![body.len().to_string()]);
            }
            prop_assert_eq!(&req.as_bytes()[head_len..], &body[..]);
        }
    }
}
