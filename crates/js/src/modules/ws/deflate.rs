//! permessage-deflate (RFC 7692) as k6's WebSocket dialer (gorilla) speaks it: the offer,
//! the reading of the server's answer, and [`WsConn`], the connection tungstenite runs
//! over, which inflates the server's compressed messages and deflates the script's.
//!
//! tungstenite has no extension support (it fails any frame with a reserved bit set), so
//! the extension lives below it, on the byte stream: once the upgrade answer accepted the
//! offer, `WsConn` reads whole frames off the wire and hands tungstenite the same frames
//! uncompressed, and rewrites the frames tungstenite writes. Both directions use no
//! context takeover (the only mode k6 offers), so each message is (de)compressed alone
//! and the sockets of a thread share one (de)compressor, reset per message. The byte counters
//! below it (`RawConn`) see the compressed frames, as k6's `data_sent`/`data_received` do.

use std::cell::RefCell;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};
use rk6_http::RawConn;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The `Sec-WebSocket-Extensions` value k6 sends with `compression: 'deflate'`.
pub(crate) const OFFER: &str =
    "permessage-deflate; server_no_context_takeover; client_no_context_takeover";

/// gorilla's error when the server accepts the offer without both no-context-takeover
/// parameters.
pub(crate) const INVALID: &str = "websocket: invalid compression negotiation";

/// The ending a sync flush leaves, which RFC 7692 has the sender remove.
const TAIL: [u8; 4] = [0x00, 0x00, 0xff, 0xff];

/// The compression level. gorilla uses Go's level 1 (BestSpeed); miniz's level 1 is a
/// cruder fast path (a 5.8 kB JSON message: Go 1013 bytes, miniz 1078 at level 1, 1024
/// at level 2), so level 2 keeps `data_sent` nearest to k6's at a like cost.
const LEVEL: u32 = 2;

/// The largest message inflated (tungstenite's own default message limit): a small
/// frame must not grow without bound.
const MAX_MESSAGE: usize = 64 << 20;

/// Bytes written and not yet on the wire above which a write waits.
const HIGH_WATER: usize = 1 << 20;

/// A thread's (de)compressors and the buffer they write into.
struct Codec {
    inflate: Decompress,
    deflate: Compress,
    out: Vec<u8>,
}

thread_local! {
    /// With no context takeover a message needs the (de)compressor only while it is
    /// (de)compressed, so the sockets of a thread's VUs share one (its state is hundreds
    /// of KiB), and its output buffer.
    static CODEC: RefCell<Codec> = RefCell::new(Codec {
        inflate: Decompress::new(false),
        deflate: Compress::new(Compression::new(LEVEL), false),
        out: Vec::new(),
    });
}

/// What the thread's codec buffer keeps between messages at most.
const KEPT: usize = 1 << 20;

/// What the server's `Sec-WebSocket-Extensions` values say about the offer.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub(crate) enum Answer {
    /// Not accepted: messages go uncompressed.
    None,
    /// Accepted with both no-context-takeover parameters.
    Deflate,
    /// Accepted otherwise, which gorilla refuses ([`INVALID`]).
    Invalid,
}

/// Reads the server's answer as gorilla does: the first `permessage-deflate` among the
/// comma-separated extensions decides; other extensions are ignored.
pub(crate) fn answer<'a>(values: impl IntoIterator<Item = &'a str>) -> Answer {
    for value in values {
        for ext in value.split(',') {
            let mut parts = ext.split(';').map(str::trim);
            if !parts
                .next()
                .is_some_and(|n| n.eq_ignore_ascii_case("permessage-deflate"))
            {
                continue;
            }
            let (mut server, mut client) = (false, false);
            for p in parts {
                let name = p.split('=').next().unwrap_or("").trim();
                server |= name.eq_ignore_ascii_case("server_no_context_takeover");
                client |= name.eq_ignore_ascii_case("client_no_context_takeover");
            }
            return if server && client {
                Answer::Deflate
            } else {
                Answer::Invalid
            };
        }
    }
    Answer::None
}

/// The `Sec-WebSocket-Extensions` values of a raw HTTP answer head (status line included),
/// if it is a 101.
fn head_answer(head: &[u8]) -> Answer {
    let text = String::from_utf8_lossy(head);
    let mut lines = text.split("\r\n");
    let upgraded = lines
        .next()
        .and_then(|status| status.split_whitespace().nth(1))
        .is_some_and(|code| code == "101");
    if !upgraded {
        return Answer::None;
    }
    answer(lines.filter_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.trim()
            .eq_ignore_ascii_case("sec-websocket-extensions")
            .then(|| value.trim())
    }))
}

/// Bytes with a read position: what is queued for the reader (or the wire).
#[derive(Default)]
struct Queue {
    buf: Vec<u8>,
    pos: usize,
}

impl Queue {
    fn pending(&self) -> &[u8] {
        &self.buf[self.pos..]
    }

    fn consume(&mut self, n: usize) {
        self.pos += n;
        if self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        }
    }

    fn is_empty(&self) -> bool {
        self.pos == self.buf.len()
    }
}

/// A frame's header, parsed.
struct Header {
    fin: bool,
    rsv1: bool,
    /// RSV2 or RSV3, which no extension here defines.
    other_rsv: bool,
    opcode: u8,
    mask: Option<[u8; 4]>,
    /// Where the payload starts.
    start: usize,
    len: usize,
}

/// The header of the frame at the start of `b`, once `b` holds the whole frame.
fn whole_frame(b: &[u8]) -> Option<Header> {
    if b.len() < 2 {
        return None;
    }
    let (len, mut at) = match b[1] & 0x7f {
        126 => (u16::from_be_bytes(b.get(2..4)?.try_into().ok()?) as u64, 4),
        127 => (u64::from_be_bytes(b.get(2..10)?.try_into().ok()?), 10),
        n => (u64::from(n), 2),
    };
    let mask = if b[1] & 0x80 != 0 {
        let key: [u8; 4] = b.get(at..at + 4)?.try_into().ok()?;
        at += 4;
        Some(key)
    } else {
        None
    };
    let len = usize::try_from(len).ok()?;
    if b.len() - at < len {
        return None;
    }
    Some(Header {
        fin: b[0] & 0x80 != 0,
        rsv1: b[0] & 0x40 != 0,
        other_rsv: b[0] & 0x30 != 0,
        opcode: b[0] & 0x0f,
        mask,
        start: at,
        len,
    })
}

/// Appends a frame header (FIN set) to `out`.
fn put_header(out: &mut Vec<u8>, rsv1: bool, opcode: u8, mask: Option<[u8; 4]>, len: usize) {
    out.push(0x80 | if rsv1 { 0x40 } else { 0 } | opcode);
    let m = if mask.is_some() { 0x80 } else { 0 };
    if len < 126 {
        out.push(m | len as u8);
    } else if len <= usize::from(u16::MAX) {
        out.push(m | 126);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(m | 127);
        out.extend_from_slice(&(len as u64).to_be_bytes());
    }
    if let Some(key) = mask {
        out.extend_from_slice(&key);
    }
}

fn apply_mask(data: &mut [u8], key: [u8; 4]) {
    for (i, b) in data.iter_mut().enumerate() {
        *b ^= key[i & 3];
    }
}

fn invalid(text: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, text.to_string())
}

/// Where the reading side is.
#[derive(PartialEq, Eq)]
enum Reading {
    /// Waiting for the end of the upgrade answer's head.
    Head,
    /// The extension is on: frames are inflated.
    Frames,
    /// Bytes pass as they are.
    Plain,
}

/// The extension's state on a connection, from the upgrade to the answer's verdict (and on
/// while the extension is on).
struct Deflate {
    reading: Reading,
    /// Bytes read from the wire, not yet handed on.
    raw: Vec<u8>,
    /// What the reader (tungstenite) gets next.
    out: Queue,
    /// The opcode and compressed payload of a fragmented compressed message so far.
    inflating: Option<(u8, Vec<u8>)>,
    /// The peer closed the connection.
    eof: bool,
    /// Bytes tungstenite wrote, not yet a whole frame.
    written: Vec<u8>,
    /// The opcode, mask and unmasked payload of a fragmented message being written.
    deflating: Option<(u8, [u8; 4], Vec<u8>)>,
    /// Frames ready for the wire.
    wire: Queue,
    /// A payload unmasked before compressing, kept for its capacity.
    scratch: Vec<u8>,
}

impl Deflate {
    fn new() -> Box<Self> {
        Box::new(Deflate {
            reading: Reading::Head,
            raw: Vec::new(),
            out: Queue::default(),
            inflating: None,
            eof: false,
            written: Vec::new(),
            deflating: None,
            wire: Queue::default(),
            scratch: Vec::new(),
        })
    }

    /// Hands the head on once it is complete and decides what follows it.
    fn take_head(&mut self) {
        let Some(end) = self.raw.windows(4).position(|w| w == b"\r\n\r\n") else {
            if self.eof {
                self.reading = Reading::Plain;
                self.out.buf.append(&mut self.raw);
            }
            return;
        };
        let head = &self.raw[..end + 4];
        self.reading = match head_answer(head) {
            Answer::Deflate => Reading::Frames,
            _ => Reading::Plain,
        };
        self.out.buf.extend_from_slice(head);
        self.raw.drain(..end + 4);
        if self.reading == Reading::Plain {
            self.out.buf.append(&mut self.raw);
        }
    }

    /// Moves the whole frames in `raw` to `out`, inflating compressed messages.
    fn take_frames(&mut self) -> io::Result<()> {
        let mut at = 0;
        while let Some(h) = whole_frame(&self.raw[at..]) {
            let frame = at..at + h.start + h.len;
            let payload = &self.raw[at + h.start..frame.end];
            let data = h.opcode == 1 || h.opcode == 2;
            let continuation = h.opcode == 0;
            if data && self.inflating.is_some() {
                return Err(invalid("websocket: data frame inside a fragmented message"));
            }
            let compressed = h.mask.is_none()
                && !h.other_rsv
                && (data && h.rsv1 || continuation && !h.rsv1)
                && (data || self.inflating.is_some());
            if compressed && h.fin && self.inflating.is_none() {
                // A whole message in one frame, the usual case: inflated where it lies.
                put_inflated(&mut self.out.buf, h.opcode, payload)?;
            } else if compressed {
                let (_, message) = self.inflating.get_or_insert_with(|| (h.opcode, Vec::new()));
                message.extend_from_slice(payload);
                if h.fin {
                    let (opcode, message) = self.inflating.take().expect("set above");
                    put_inflated(&mut self.out.buf, opcode, &message)?;
                }
            } else {
                // Uncompressed messages and control frames pass as they are; so does a
                // frame breaking the rules, for tungstenite to refuse.
                self.out.buf.extend_from_slice(&self.raw[frame.clone()]);
            }
            at = frame.end;
        }
        self.raw.drain(..at);
        Ok(())
    }

    /// Moves the whole frames tungstenite wrote to `wire`, compressing data messages.
    fn take_written(&mut self) -> io::Result<()> {
        let mut at = 0;
        while let Some(h) = whole_frame(&self.written[at..]) {
            let frame = at..at + h.start + h.len;
            let data = h.opcode == 1 || h.opcode == 2;
            let continuation = h.opcode == 0 && self.deflating.is_some();
            match h.mask {
                Some(key) if data || continuation => {
                    let (_, _, message) = self
                        .deflating
                        .get_or_insert_with(|| (h.opcode, key, Vec::new()));
                    let start = message.len();
                    message.extend_from_slice(&self.written[at + h.start..frame.end]);
                    apply_mask(&mut message[start..], key);
                    if h.fin {
                        let (opcode, key, message) = self.deflating.take().expect("set above");
                        self.scratch = message;
                        self.put_deflated(opcode, key)?;
                    }
                }
                _ => self
                    .wire
                    .buf
                    .extend_from_slice(&self.written[frame.clone()]),
            }
            at = frame.end;
        }
        self.written.drain(..at);
        Ok(())
    }

    /// Appends the compressed frame of the message in `scratch` to `wire`.
    fn put_deflated(&mut self, opcode: u8, key: [u8; 4]) -> io::Result<()> {
        CODEC.with(|c| {
            let c = &mut *c.borrow_mut();
            deflate(&mut c.deflate, &self.scratch, &mut c.out)?;
            apply_mask(&mut c.out, key);
            put_header(&mut self.wire.buf, true, opcode, Some(key), c.out.len());
            self.wire.buf.extend_from_slice(&c.out);
            c.out.clear();
            c.out.shrink_to(KEPT);
            Ok::<(), io::Error>(())
        })?;
        self.scratch.clear();
        Ok(())
    }
}

/// Appends the uncompressed frame of the compressed message `message` to `out`.
fn put_inflated(out: &mut Vec<u8>, opcode: u8, message: &[u8]) -> io::Result<()> {
    CODEC.with(|c| {
        let c = &mut *c.borrow_mut();
        inflate(&mut c.inflate, message, &mut c.out)?;
        put_header(out, false, opcode, None, c.out.len());
        out.extend_from_slice(&c.out);
        c.out.clear();
        c.out.shrink_to(KEPT);
        Ok(())
    })
}

/// One message's payload inflated (RFC 7692 §7.2.2: the removed tail put back).
fn inflate(z: &mut Decompress, message: &[u8], data: &mut Vec<u8>) -> io::Result<()> {
    z.reset(false);
    data.clear();
    data.reserve(message.len() * 3 + 64);
    for mut input in [message, &TAIL[..]] {
        loop {
            if data.len() == data.capacity() {
                if data.len() >= MAX_MESSAGE {
                    return Err(invalid("websocket: read limit exceeded"));
                }
                data.reserve(data.len());
            }
            let (before_in, before_out) = (z.total_in(), data.len());
            let status = z
                .decompress_vec(input, data, FlushDecompress::Sync)
                .map_err(|e| invalid(&format!("flate: {e}")))?;
            input = &input[(z.total_in() - before_in) as usize..];
            let stuck = z.total_in() == before_in && data.len() == before_out;
            if status == Status::StreamEnd
                || input.is_empty() && data.len() < data.capacity()
                || stuck && data.len() < data.capacity()
            {
                break;
            }
        }
    }
    Ok(())
}

/// One message's payload deflated (RFC 7692 §7.2.1: a sync flush, its tail removed).
fn deflate(z: &mut Compress, message: &[u8], data: &mut Vec<u8>) -> io::Result<()> {
    z.reset();
    data.clear();
    data.reserve(message.len() / 2 + 64);
    let mut input = message;
    loop {
        if data.len() == data.capacity() {
            data.reserve(data.capacity());
        }
        let before = z.total_in();
        z.compress_vec(input, data, FlushCompress::Sync)
            .map_err(|e| invalid(&format!("flate: {e}")))?;
        input = &input[(z.total_in() - before) as usize..];
        if input.is_empty() && data.len() < data.capacity() {
            break;
        }
    }
    if data.ends_with(&TAIL) {
        data.truncate(data.len() - TAIL.len());
    }
    Ok(())
}

/// The connection under a WebSocket: the raw connection, with permessage-deflate when the
/// upgrade answer turned it on. As gorilla, the answer decides, offered or not; without
/// the extension the state goes once the answer's head is read.
pub(crate) struct WsConn {
    inner: RawConn,
    deflate: Option<Box<Deflate>>,
}

impl WsConn {
    /// Wraps `inner`, before the upgrade request is written.
    pub(crate) fn new(inner: RawConn) -> Self {
        WsConn {
            inner,
            deflate: Some(Deflate::new()),
        }
    }

    /// Writes `wire` out until it is empty (`Ready`) or the connection would block.
    fn drain(inner: &mut RawConn, wire: &mut Queue, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !wire.is_empty() {
            match Pin::new(&mut *inner).poll_write(cx, wire.pending()) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => wire.consume(n),
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncRead for WsConn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        let Some(d) = me.deflate.as_mut() else {
            return Pin::new(&mut me.inner).poll_read(cx, buf);
        };
        loop {
            if !d.out.is_empty() {
                let n = d.out.pending().len().min(buf.remaining());
                buf.put_slice(&d.out.pending()[..n]);
                d.out.consume(n);
                return Poll::Ready(Ok(()));
            }
            match d.reading {
                Reading::Plain => {
                    me.deflate = None;
                    return Pin::new(&mut me.inner).poll_read(cx, buf);
                }
                Reading::Head => d.take_head(),
                Reading::Frames => d.take_frames()?,
            }
            if !d.out.is_empty() || d.reading == Reading::Plain {
                continue;
            }
            if d.eof {
                // A cut-off frame goes on as it is: tungstenite reports the end.
                d.out.buf.append(&mut d.raw);
                if d.out.is_empty() {
                    return Poll::Ready(Ok(()));
                }
                continue;
            }
            let old = d.raw.len();
            d.raw.resize(old + 16 * 1024, 0);
            let mut read = ReadBuf::new(&mut d.raw[old..]);
            let polled = Pin::new(&mut me.inner).poll_read(cx, &mut read);
            let n = read.filled().len();
            d.raw.truncate(old + n);
            match polled {
                Poll::Ready(Ok(())) => d.eof = n == 0,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

impl AsyncWrite for WsConn {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let me = self.get_mut();
        let d = match me.deflate.as_mut() {
            // Until the answer turned the extension on, the upgrade request (and frames
            // of a connection without it) go as they are.
            Some(d) if d.reading == Reading::Frames => d,
            _ => return Pin::new(&mut me.inner).poll_write(cx, buf),
        };
        match Self::drain(&mut me.inner, &mut d.wire, cx) {
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            Poll::Pending if d.wire.pending().len() >= HIGH_WATER => return Poll::Pending,
            _ => {}
        }
        d.written.extend_from_slice(buf);
        d.take_written()?;
        // As an unbuffered stream would: what can go now goes (tungstenite writes replies
        // to pings without flushing at once); the rest waits for the flush.
        if let Poll::Ready(Err(e)) = Self::drain(&mut me.inner, &mut d.wire, cx) {
            return Poll::Ready(Err(e));
        }
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        if let Some(d) = me.deflate.as_mut() {
            std::task::ready!(Self::drain(&mut me.inner, &mut d.wire, cx))?;
        }
        Pin::new(&mut me.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        if let Some(d) = me.deflate.as_mut() {
            std::task::ready!(Self::drain(&mut me.inner, &mut d.wire, cx))?;
        }
        Pin::new(&mut me.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_is_read_as_gorilla_reads_it() {
        assert_eq!(answer([]), Answer::None);
        assert_eq!(answer(["x-webkit-deflate-frame"]), Answer::None);
        assert_eq!(
            answer(["permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=12"]),
            Answer::Deflate
        );
        assert_eq!(
            answer([
                "foo, permessage-deflate;client_no_context_takeover;server_no_context_takeover"
            ]),
            Answer::Deflate
        );
        assert_eq!(
            answer(["permessage-deflate; server_no_context_takeover"]),
            Answer::Invalid
        );
        assert_eq!(answer(["permessage-deflate"]), Answer::Invalid);
    }

    #[test]
    fn only_an_upgrade_turns_the_extension_on() {
        let head = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nsec-websocket-extensions: permessage-deflate; server_no_context_takeover; client_no_context_takeover\r\n\r\n";
        assert_eq!(head_answer(head), Answer::Deflate);
        let refused = b"HTTP/1.1 403 Forbidden\r\nSec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; client_no_context_takeover\r\n\r\n";
        assert_eq!(head_answer(refused), Answer::None);
    }

    /// A frame the way a server sends it: unmasked.
    fn server_frame(fin: bool, rsv1: bool, opcode: u8, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        put_header(&mut out, rsv1, opcode, None, payload.len());
        if !fin {
            out[0] &= 0x7f;
        }
        out.extend_from_slice(payload);
        out
    }

    /// Compresses `m` as a peer would (RFC 7692 §7.2.1), tail removed.
    fn compressed(m: &[u8]) -> Vec<u8> {
        let mut c = Compress::new(Compression::new(6), false);
        let mut out = Vec::with_capacity(m.len() + 64);
        c.compress_vec(m, &mut out, FlushCompress::Sync).unwrap();
        assert!(out.ends_with(&TAIL));
        out.truncate(out.len() - 4);
        out
    }

    #[test]
    fn compressed_messages_are_inflated_fragmented_or_not_and_others_pass() {
        let mut d = Deflate::new();
        d.reading = Reading::Frames;
        let big = "ab".repeat(40_000);
        let c = compressed(big.as_bytes());
        let (first, rest) = c.split_at(10);
        d.raw
            .extend(server_frame(true, true, 1, &compressed(b"hello")));
        d.raw.extend(server_frame(false, true, 2, first));
        // A ping between the fragments passes at once.
        d.raw.extend(server_frame(true, false, 9, b"p"));
        d.raw.extend(server_frame(true, false, 0, rest));
        d.raw.extend(server_frame(true, false, 1, b"plain"));
        d.raw
            .extend(&server_frame(true, true, 1, &compressed(b"x"))[..3]);
        d.take_frames().unwrap();
        let mut expect = server_frame(true, false, 1, b"hello");
        expect.extend(server_frame(true, false, 9, b"p"));
        expect.extend(server_frame(true, false, 2, big.as_bytes()));
        expect.extend(server_frame(true, false, 1, b"plain"));
        assert_eq!(d.out.pending(), &expect[..]);
        // The cut-off frame waits for the rest of it.
        assert_eq!(d.raw.len(), 3);
    }

    #[test]
    fn written_data_frames_are_compressed_and_masked_again() {
        let mut d = Deflate::new();
        d.reading = Reading::Frames;
        let key = [1, 2, 3, 4];
        let text = "k6 ".repeat(1000);
        let mut masked = text.clone().into_bytes();
        apply_mask(&mut masked, key);
        put_header(&mut d.written, false, 1, Some(key), masked.len());
        d.written.extend_from_slice(&masked);
        put_header(&mut d.written, false, 9, Some(key), 0);
        d.take_written().unwrap();
        let wire = d.wire.pending().to_vec();
        let h = whole_frame(&wire).unwrap();
        assert!(h.fin && h.rsv1 && h.opcode == 1 && h.mask == Some(key));
        assert!(h.len < 100, "compressed to {} bytes", h.len);
        let mut payload = wire[h.start..h.start + h.len].to_vec();
        apply_mask(&mut payload, key);
        payload.extend_from_slice(&TAIL);
        let mut plain = Vec::with_capacity(text.len() + 16);
        Decompress::new(false)
            .decompress_vec(&payload, &mut plain, FlushDecompress::Sync)
            .unwrap();
        assert_eq!(plain, text.as_bytes());
        // The ping follows, untouched.
        assert_eq!(&wire[h.start + h.len..], &[0x89, 0x80, 1, 2, 3, 4]);
    }

    #[test]
    fn an_empty_message_compresses_to_one_byte() {
        let mut d = Deflate::new();
        d.reading = Reading::Frames;
        put_header(&mut d.written, false, 1, Some([0; 4]), 0);
        d.take_written().unwrap();
        assert_eq!(d.wire.pending(), &[0xc1, 0x81, 0, 0, 0, 0, 0x00]);
    }
}
