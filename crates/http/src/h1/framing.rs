//! HTTP/1.x response framing, shared by the scripted client's connections
//! ([`super::conn`]) and the `rk6 bench` engine ([`crate::keepalive`]): the response head
//! (parsed by `httparse`) and where the body ends (Content-Length, chunked transfer coding,
//! or the connection closing).
//!
//! Nothing here owns I/O: the functions look at buffered bytes and say how many they used,
//! so split reads (down to one byte at a time) only mean calling them again with more.

use std::mem::MaybeUninit;

use bytes::{Bytes, BytesMut};

use crate::error::{self, HttpError};
use crate::response_head::HeaderFields;

/// Response headers looked at; a head with more is rejected, as an oversized one is.
const MAX_HEADERS: usize = 100;

/// How the body of a response ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BodyKind {
    /// No body: HEAD, 1xx, 204, 304.
    Empty,
    /// Exactly this many bytes.
    Length(u64),
    /// Chunked transfer coding.
    Chunked,
    /// Everything until the server closes the connection.
    UntilClose,
}

/// What the head of a response says about the exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Head {
    /// Status code.
    pub(crate) status: u16,
    /// Bytes of the head, blank line included.
    pub(crate) len: usize,
    /// Where the body ends.
    pub(crate) body: BodyKind,
    /// The connection cannot carry another request afterwards.
    pub(crate) close: bool,
}

impl Head {
    /// A 1xx other than 101 announces the real response, which follows on the wire.
    pub(crate) fn is_interim(&self) -> bool {
        (100..200).contains(&self.status) && self.status != 101
    }
}

/// A response the framing cannot follow.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum FramingError {
    /// The head does not parse; carries the k6 error Go would report for it.
    #[error("{0}")]
    Head(HttpError),
    /// Content-Length is not a number, or two of them disagree.
    #[error("bad Content-Length {0:?}")]
    ContentLength(String),
    /// A chunk-size line does not parse.
    #[error("invalid byte in chunk length")]
    ChunkSize,
    /// A chunk's data is not followed by CRLF.
    #[error("malformed chunked encoding")]
    ChunkEnd,
}

impl From<FramingError> for HttpError {
    fn from(e: FramingError) -> HttpError {
        match e {
            FramingError::Head(e) => e,
            // Go's net/http words these as below; k6 leaves them unclassified.
            FramingError::ContentLength(v) => HttpError::new(
                error::GENERIC,
                format!("malformed HTTP response: bad Content-Length {v:?}"),
            ),
            other => HttpError::new(error::GENERIC, other.to_string()),
        }
    }
}

/// What the scripted client keeps of a head besides its framing.
#[derive(Debug, Default)]
pub(crate) struct HeadParts {
    /// HTTP/1.0 or HTTP/1.1.
    pub(crate) version: http::Version,
    /// The header fields in wire order, in one copy of the head.
    pub(crate) headers: HeaderFields,
    /// The reason phrase when it is not the status code's canonical one (hyper's rule).
    pub(crate) reason: Option<Bytes>,
}

/// Parses the response head at the start of `buf`; `Ok(None)` means it is not complete yet.
/// `head_request` says the request was a HEAD (its response has no body).
pub(crate) fn parse_head(buf: &[u8], head_request: bool) -> Result<Option<Head>, FramingError> {
    parse(buf, head_request, None)
}

/// [`parse_head`], also filling `parts` with the version, headers and reason phrase.
pub(crate) fn parse_head_parts(
    buf: &[u8],
    head_request: bool,
    parts: &mut HeadParts,
) -> Result<Option<Head>, FramingError> {
    parse(buf, head_request, Some(parts))
}

fn parse(
    buf: &[u8],
    head_request: bool,
    parts: Option<&mut HeadParts>,
) -> Result<Option<Head>, FramingError> {
    let mut headers = [const { MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_HEADERS];
    let mut resp = httparse::Response::new(&mut []);
    let len = match httparse::ParserConfig::default()
        // Real servers send these; Go tolerates them, so a load test should too.
        .allow_spaces_after_header_name_in_responses(true)
        .allow_obsolete_multiline_headers_in_responses(true)
        .parse_response_with_uninit_headers(&mut resp, buf, &mut headers)
    {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Ok(None),
        // Go words the error from the whole status line: wait for all of it.
        Err(_) if !buf.contains(&b'\n') => return Ok(None),
        Err(e) => {
            let err = error::malformed_status_line(buf).unwrap_or_else(|| {
                HttpError::new(error::GENERIC, format!("malformed HTTP response: {e}"))
            });
            return Err(FramingError::Head(err));
        }
    };
    let status = resp.code.unwrap_or_default();
    let http10 = resp.version == Some(0);
    let mut length: Option<u64> = None;
    let mut chunked = false;
    let mut coded = false;
    let mut close = false;
    let mut keep_alive = false;
    for h in resp.headers.iter() {
        let name = h.name.as_bytes();
        if name.eq_ignore_ascii_case(b"content-length") {
            let text = String::from_utf8_lossy(h.value);
            let n = text
                .trim()
                .parse::<u64>()
                .map_err(|_| FramingError::ContentLength(text.to_string()))?;
            if length.is_some_and(|m| m != n) {
                return Err(FramingError::ContentLength(text.to_string()));
            }
            length = Some(n);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            coded = true;
            // Chunked must be the last coding applied; only then does it frame the body.
            chunked = tokens(h.value)
                .last()
                .is_some_and(|t| t.eq_ignore_ascii_case(b"chunked"));
        } else if name.eq_ignore_ascii_case(b"connection") {
            for t in tokens(h.value) {
                close |= t.eq_ignore_ascii_case(b"close");
                keep_alive |= t.eq_ignore_ascii_case(b"keep-alive");
            }
        }
    }
    let no_body = head_request || (100..200).contains(&status) || status == 204 || status == 304;
    let body = if no_body {
        BodyKind::Empty
    } else if coded {
        // Transfer-Encoding wins over Content-Length (RFC 9112 §6.3).
        if chunked {
            BodyKind::Chunked
        } else {
            BodyKind::UntilClose
        }
    } else {
        match length {
            Some(n) => BodyKind::Length(n),
            None => BodyKind::UntilClose,
        }
    };
    let close = close || (http10 && !keep_alive) || body == BodyKind::UntilClose || status == 101;
    if let Some(parts) = parts {
        collect(&buf[..len], &resp, parts);
    }
    Ok(Some(Head {
        status,
        len,
        body,
        close,
    }))
}

/// Fills `parts` from a parsed head; `head` is the head's bytes, copied once so that the
/// fields can be slices of it without pinning the connection's read buffer. Folded values
/// are unfolded into the copy's tail. Names and values were already checked by httparse
/// (tokens; no control bytes but tab), which is what `HeaderName`/`HeaderValue` accept.
fn collect(head: &[u8], resp: &httparse::Response<'_, '_>, parts: &mut HeadParts) {
    // Folded values are rare: the copy grows for them when they come.
    let mut buf = BytesMut::with_capacity(head.len());
    buf.extend_from_slice(head);
    // The same bytes in the copy: parsed slices point into `head`.
    let span = |part: &[u8]| {
        let at = (part.as_ptr() as usize).wrapping_sub(head.as_ptr() as usize);
        if part.is_empty() || at > head.len() {
            return (0, 0);
        }
        (at as u32, (at + part.len()) as u32)
    };
    let mut spans = Vec::with_capacity(resp.headers.len());
    for h in resp.headers.iter() {
        let value = if h.value.contains(&b'\n') {
            let start = buf.len() as u32;
            buf.extend_from_slice(&unfold(h.value));
            (start, buf.len() as u32)
        } else {
            span(h.value)
        };
        spans.push((span(h.name.as_bytes()), value));
    }
    parts.version = if resp.version == Some(0) {
        http::Version::HTTP_10
    } else {
        http::Version::HTTP_11
    };
    let shared = buf.freeze();
    let code = resp.code.unwrap_or_default();
    let reason = resp.reason.unwrap_or_default();
    let canonical = http::StatusCode::from_u16(code)
        .ok()
        .and_then(|s| s.canonical_reason());
    parts.reason = (canonical != Some(reason)).then(|| {
        let (start, end) = span(reason.as_bytes());
        shared.slice(start as usize..end as usize)
    });
    parts.headers = HeaderFields::from_parts(shared, spans);
}

/// An obsolete line-folded value (RFC 9112 §5.2) as one line: each fold, with the
/// whitespace around it, becomes one space.
fn unfold(value: &[u8]) -> Vec<u8> {
    let mut lines = value.split(|&b| b == b'\n');
    let mut out = trim(lines.next().unwrap_or_default()).to_vec();
    for line in lines {
        out.push(b' ');
        out.extend_from_slice(trim(line));
    }
    out
}

/// `s` without the spaces, tabs and line ends around it.
fn trim(s: &[u8]) -> &[u8] {
    let is_ws = |b: &u8| matches!(b, b' ' | b'\t' | b'\r' | b'\n');
    let start = s.iter().position(|b| !is_ws(b)).unwrap_or(s.len());
    let end = s.iter().rposition(|b| !is_ws(b)).map_or(start, |e| e + 1);
    &s[start..end.max(start)]
}

/// The comma-separated tokens of a header value, trimmed, empty ones skipped.
fn tokens(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value
        .split(|&b| b == b',')
        .map(|t| t.trim_ascii())
        .filter(|t| !t.is_empty())
}

/// Where a chunked body's decoder is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ChunkState {
    /// Expecting a chunk-size line (extensions allowed).
    Size,
    /// Inside a chunk's data, this many bytes left.
    Data(u64),
    /// Expecting the CRLF after a chunk's data.
    DataEnd,
    /// After the last chunk: trailer lines until an empty one.
    Trailers,
    /// The body is complete.
    Done,
}

/// Finds the end of a chunked body and hands out its data (the bench skips it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Chunked {
    state: ChunkState,
}

impl Chunked {
    /// A decoder at the start of a body.
    pub(crate) fn new() -> Chunked {
        Chunked {
            state: ChunkState::Size,
        }
    }

    /// True once the last chunk and the trailers were consumed.
    pub(crate) fn is_done(&self) -> bool {
        self.state == ChunkState::Done
    }

    /// Consumes as much of `buf` as forms whole syntax elements and returns how many bytes
    /// that was; the rest (a partial size line, CRLF or trailer line) must be offered again
    /// with more bytes after it. Stops at the end of the body.
    pub(crate) fn advance(&mut self, buf: &[u8]) -> Result<usize, FramingError> {
        self.advance_with(buf, |_| {})
    }

    /// [`Chunked::advance`], passing each piece of chunk data to `data` in order.
    pub(crate) fn advance_with(
        &mut self,
        buf: &[u8],
        mut data: impl FnMut(&[u8]),
    ) -> Result<usize, FramingError> {
        let mut at = 0;
        loop {
            let rest = &buf[at..];
            match self.state {
                ChunkState::Size => match httparse::parse_chunk_size(rest) {
                    Ok(httparse::Status::Complete((n, size))) => {
                        at += n;
                        self.state = if size == 0 {
                            ChunkState::Trailers
                        } else {
                            ChunkState::Data(size)
                        };
                    }
                    Ok(httparse::Status::Partial) => return Ok(at),
                    Err(_) => return Err(FramingError::ChunkSize),
                },
                ChunkState::Data(left) => {
                    let take = left.min(rest.len() as u64);
                    if take > 0 {
                        data(&rest[..take as usize]);
                    }
                    at += take as usize;
                    if take == left {
                        self.state = ChunkState::DataEnd;
                    } else {
                        self.state = ChunkState::Data(left - take);
                        return Ok(at);
                    }
                }
                ChunkState::DataEnd => match rest {
                    [b'\r', b'\n', ..] => {
                        at += 2;
                        self.state = ChunkState::Size;
                    }
                    [] | [b'\r'] => return Ok(at),
                    _ => return Err(FramingError::ChunkEnd),
                },
                ChunkState::Trailers => {
                    let Some(eol) = rest.iter().position(|&b| b == b'\n') else {
                        return Ok(at);
                    };
                    at += eol + 1;
                    let line = &rest[..eol];
                    if line.is_empty() || line == b"\r" {
                        self.state = ChunkState::Done;
                    }
                }
                ChunkState::Done => return Ok(at),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(text: &str) -> Head {
        parse_head(text.as_bytes(), false).unwrap().unwrap()
    }

    #[test]
    fn content_length_head() {
        let text = "HTTP/1.1 200 OK\r\nContent-Length: 12\r\nX: y\r\n\r\nhello world!";
        let h = head(text);
        assert_eq!(h.status, 200);
        assert_eq!(h.len, text.len() - 12);
        assert_eq!(h.body, BodyKind::Length(12));
        assert!(!h.close);
    }

    #[test]
    fn partial_heads_need_more_bytes() {
        let text = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n";
        for end in 0..text.len() {
            assert_eq!(parse_head(&text[..end], false), Ok(None), "{end} bytes");
        }
        assert!(parse_head(text, false).unwrap().is_some());
    }

    #[test]
    fn bodiless_statuses_and_head_requests() {
        for status in ["204 No Content", "304 Not Modified", "100 Continue"] {
            let h = head(&format!("HTTP/1.1 {status}\r\nContent-Length: 5\r\n\r\n"));
            assert_eq!(h.body, BodyKind::Empty, "{status}");
            assert!(!h.close, "{status}");
        }
        assert!(head("HTTP/1.1 100 Continue\r\n\r\n").is_interim());
        assert!(!head("HTTP/1.1 200 OK\r\n\r\n").is_interim());
        let h = parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", true)
            .unwrap()
            .unwrap();
        assert_eq!(h.body, BodyKind::Empty);
    }

    #[test]
    fn connection_semantics() {
        assert!(head("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n").close);
        assert!(
            head("HTTP/1.1 200 OK\r\nConnection: Keep-Alive, CLOSE\r\nContent-Length: 0\r\n\r\n")
                .close
        );
        assert!(head("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n").close);
        assert!(
            !head("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n").close
        );
        // No length and no chunking: the body runs to the close.
        let h = head("HTTP/1.1 200 OK\r\n\r\n");
        assert_eq!(h.body, BodyKind::UntilClose);
        assert!(h.close);
    }

    #[test]
    fn transfer_encoding_framing() {
        let h = head(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\nContent-Length: 9\r\n\r\n",
        );
        assert_eq!(h.body, BodyKind::Chunked);
        let h = head("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n");
        assert_eq!(h.body, BodyKind::UntilClose);
    }

    #[test]
    fn bad_heads_are_k6_errors() {
        let err = |text: &str| HttpError::from(parse_head(text.as_bytes(), false).unwrap_err());
        let e = err("this is not http\r\n\r\n");
        assert_eq!(
            (e.code, e.message.as_str()),
            (1000, "malformed HTTP status code \"is\"")
        );
        let e = err("HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n");
        assert_eq!(e.code, 1000);
        assert!(e.message.contains("bad Content-Length"), "{}", e.message);
        assert!(parse_head(
            b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            false
        )
        .is_err());
    }

    /// Feeds `body` to a decoder `step` bytes at a time the way the engine does: unconsumed
    /// bytes stay in front of the next read. Returns the bytes left after the body.
    fn decode_in_steps(body: &[u8], step: usize) -> Result<Vec<u8>, FramingError> {
        let mut dec = Chunked::new();
        let mut pending: Vec<u8> = Vec::new();
        let mut fed = 0;
        while !dec.is_done() {
            assert!(fed < body.len(), "ran out of input before the end");
            let end = (fed + step).min(body.len());
            pending.extend_from_slice(&body[fed..end]);
            fed = end;
            let used = dec.advance(&pending)?;
            pending.drain(..used);
        }
        pending.extend_from_slice(&body[fed..]);
        Ok(pending)
    }

    #[test]
    fn chunked_bodies_in_any_split() {
        let body = b"5;name=value\r\nhello\r\n1A\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\n\r\nNEXT";
        for step in [1, 2, 3, 7, body.len()] {
            assert_eq!(decode_in_steps(body, step).unwrap(), b"NEXT", "step {step}");
        }
    }

    #[test]
    fn chunked_trailers_are_skipped() {
        let body = b"3\r\nabc\r\n0\r\nX-Checksum: 1\r\nX-Other: 2\r\n\r\nNEXT";
        for step in [1, 4, body.len()] {
            assert_eq!(decode_in_steps(body, step).unwrap(), b"NEXT", "step {step}");
        }
    }

    #[test]
    fn chunked_errors() {
        assert_eq!(
            decode_in_steps(b"zz\r\nabc\r\n0\r\n\r\n", 100),
            Err(FramingError::ChunkSize)
        );
        assert_eq!(
            decode_in_steps(b"3\r\nabcX\r\n0\r\n\r\n", 100),
            Err(FramingError::ChunkEnd)
        );
    }

    #[test]
    fn chunked_stops_at_the_end() {
        let mut dec = Chunked::new();
        let buf = b"2\r\nok\r\n0\r\n\r\nHTTP/1.1 200 OK\r\n";
        assert_eq!(dec.advance(buf), Ok(12));
        assert!(dec.is_done());
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    /// A chunked body: chunks (with optional extensions), the last chunk, trailers.
    fn chunked_body() -> impl Strategy<Value = Vec<u8>> {
        (
            prop::collection::vec(
                (
                    prop::collection::vec(any::<u8>(), 1..40),
                    any::<bool>(),
                    any::<bool>(),
                ),
                0..5,
            ),
            prop::collection::vec("[A-Za-z-]{1,8}: [ -~]{0,8}", 0..3),
        )
            .prop_map(|(chunks, trailers)| {
                let mut out = Vec::new();
                for (data, upper, ext) in chunks {
                    let size = if upper {
                        format!("{:X}", data.len())
                    } else {
                        format!("{:x}", data.len())
                    };
                    out.extend_from_slice(size.as_bytes());
                    if ext {
                        out.extend_from_slice(b";name=value");
                    }
                    out.extend_from_slice(b"\r\n");
                    out.extend_from_slice(&data);
                    out.extend_from_slice(b"\r\n");
                }
                out.extend_from_slice(b"0\r\n");
                for t in trailers {
                    out.extend_from_slice(t.as_bytes());
                    out.extend_from_slice(b"\r\n");
                }
                out.extend_from_slice(b"\r\n");
                out
            })
    }

    /// Feeds `bytes` in pieces of `step` as the engine reads: what is not consumed stays in
    /// front of the next piece. Returns where the body ended (in `bytes`), `None` when the
    /// input ran out first, or the error.
    fn feed(bytes: &[u8], step: usize) -> Result<Option<usize>, FramingError> {
        let mut dec = Chunked::new();
        let (mut pending, mut consumed, mut fed) = (Vec::new(), 0, 0);
        loop {
            let used = dec.advance(&pending)?;
            assert!(used <= pending.len(), "consumed more than offered");
            pending.drain(..used);
            consumed += used;
            if dec.is_done() {
                return Ok(Some(consumed));
            }
            if fed == bytes.len() {
                return Ok(None);
            }
            let end = (fed + step).min(bytes.len());
            pending.extend_from_slice(&bytes[fed..end]);
            fed = end;
        }
    }

    /// A response head from its parts, with the parser's expected reading of it (RFC 9112
    /// §6.3 as Go applies it).
    #[derive(Debug, Clone)]
    struct HeadCase {
        text: String,
        status: u16,
        head_request: bool,
        body: BodyKind,
        close: bool,
    }

    fn head_case() -> impl Strategy<Value = HeadCase> {
        (
            prop::sample::select(&[100u16, 101, 103, 200, 201, 204, 301, 304, 404, 500, 599][..]),
            any::<bool>(),
            any::<bool>(),
            prop::option::of(0u64..1_000_000),
            prop::option::of(prop::sample::select(
                &[
                    "chunked",
                    "gzip, chunked",
                    "gzip",
                    "chunked, gzip",
                    "CHUNKED",
                ][..],
            )),
            prop::option::of(prop::sample::select(
                &[
                    "close",
                    "keep-alive",
                    "Keep-Alive, Upgrade",
                    "upgrade, close",
                ][..],
            )),
            prop::collection::vec("X-[a-z]{1,6}: [ -~]{0,10}", 0..4),
        )
            .prop_map(
                |(status, http10, head_request, length, coding, connection, extra)| {
                    let mut text = format!("HTTP/1.{} {status} Reason\r\n", u8::from(!http10));
                    for h in &extra {
                        text.push_str(&format!("{}\r\n", h.trim_end()));
                    }
                    if let Some(n) = length {
                        text.push_str(&format!("Content-Length: {n}\r\n"));
                    }
                    if let Some(c) = coding {
                        text.push_str(&format!("Transfer-Encoding: {c}\r\n"));
                    }
                    if let Some(c) = connection {
                        text.push_str(&format!("Connection: {c}\r\n"));
                    }
                    text.push_str("\r\n");
                    let no_body = head_request
                        || (100..200).contains(&status)
                        || status == 204
                        || status == 304;
                    let body = match (no_body, coding, length) {
                        (true, _, _) => BodyKind::Empty,
                        (false, Some(c), _) if c.to_ascii_lowercase().ends_with("chunked") => {
                            BodyKind::Chunked
                        }
                        (false, Some(_), _) => BodyKind::UntilClose,
                        (false, None, Some(n)) => BodyKind::Length(n),
                        (false, None, None) => BodyKind::UntilClose,
                    };
                    let conn = connection.unwrap_or("").to_ascii_lowercase();
                    let close = conn.contains("close")
                        || (http10 && !conn.contains("keep-alive"))
                        || body == BodyKind::UntilClose
                        || status == 101;
                    HeadCase {
                        text,
                        status,
                        head_request,
                        body,
                        close,
                    }
                },
            )
    }

    proptest! {
        #![proptest_config(crate::prop_config(3000))]

        /// Any bytes as a response head: a head, "need more", or a typed error; never a panic.
        #[test]
        fn any_head_bytes_are_decided(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
            let _ = parse_head(&bytes, false);
            let _ = error::malformed_status_line(&bytes);
        }

        /// Head-like text (a status line, header lines, odd separators) is decided too.
        #[test]
        fn head_like_text_is_decided(text in "HTTP/[0-9.]{0,4} [0-9]{0,4}[ -~]{0,8}(\r?\n[A-Za-z-]{0,8}:?[ -~]{0,10}){0,3}(\r\n\r\n)?") {
            let _ = parse_head(text.as_bytes(), false);
        }

        /// A well-formed head reads as the model says (status, body framing, whether the
        /// connection closes), over its whole length, and every strict prefix of it is
        /// "need more bytes", never a different answer.
        #[test]
        fn heads_match_the_model(case in head_case()) {
            let bytes = case.text.as_bytes();
            let head = parse_head(bytes, case.head_request).unwrap().unwrap();
            prop_assert_eq!(head.status, case.status);
            prop_assert_eq!(head.len, bytes.len());
            prop_assert_eq!(head.body, case.body, "{}", case.text);
            prop_assert_eq!(head.close, case.close, "{}", case.text);
            for cut in 0..bytes.len() {
                prop_assert_eq!(parse_head(&bytes[..cut], case.head_request), Ok(None), "cut {}", cut);
            }
        }

        /// A chunked body ends exactly where it was encoded to end, however the reads split
        /// it; bytes after it are left for the next response.
        #[test]
        fn chunked_bodies_end_where_encoded(body in chunked_body(), step in 1usize..64) {
            let mut wire = body.clone();
            wire.extend_from_slice(b"HTTP/1.1 200 OK\r\n");
            prop_assert_eq!(feed(&wire, step), Ok(Some(body.len())));
            prop_assert_eq!(feed(&wire, wire.len()), Ok(Some(body.len())));
        }

        /// Any bytes as a chunked body: the same decision (end, error, or more needed)
        /// whether they arrive at once or one piece at a time; never a panic.
        #[test]
        fn chunked_decisions_ignore_read_splits(
            bytes in prop_oneof![
                prop::collection::vec(any::<u8>(), 0..48),
                "([0-9a-fA-FxX;= ]{0,4}\r?\n?[a-z]{0,5}\r?\n?){0,4}".prop_map(String::into_bytes),
            ],
            step in 1usize..8,
        ) {
            let whole = feed(&bytes, bytes.len().max(1));
            prop_assert_eq!(feed(&bytes, step), whole);
        }
    }
}
