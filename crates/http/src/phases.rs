//! Turns the instants observed during one hop into k6's timing phases.
//!
//! ```text
//! start ─ blocked ─ conn_at ─ sending ─ send_end ─ waiting ─ first_byte ─ receiving ─ body_done
//!          └ looking_up, connecting, tls_handshaking (new connections only) ┘
//! ```
//! A hop that fails or times out part-way gets the phases completed so far, with `now`
//! closing the request phase (sending, waiting, receiving) that was running. As in k6, a
//! connection step that failed or was cut short counts 0, and so does `blocked` when no
//! connection was obtained.
//!
//! On HTTP/2 the socket is shared by streams, so the later boundaries come from
//! [`StreamMarks`] instead: `blocked` still ends when the connection is held, `sending` when
//! hyper has taken the whole body, `waiting` when the head is parsed.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};

use crate::body::StreamMarks;
use crate::timing_io::IoStats;
use crate::timings::Timings;

/// Everything recorded about the hop in flight; survives a timeout that drops the future.
#[derive(Debug)]
pub(crate) struct Progress {
    pub(crate) start: Instant,
    pub(crate) looking_up: Duration,
    pub(crate) connecting: Duration,
    pub(crate) tls_handshaking: Duration,
    /// TCP connections this hop opened (`http_conns_opened`): counted where the connect
    /// succeeds, so a replay on a fresh connection counts and a reused one does not.
    pub(crate) conns_opened: u32,
    /// When a connection was held.
    pub(crate) conn_at: Option<Instant>,
    pub(crate) stats: Option<Arc<IoStats>>,
    pub(crate) h2: bool,
    /// Request fully written; fixed when the head arrives.
    pub(crate) send_end: Option<Instant>,
    /// First response byte; fixed when the head arrives.
    pub(crate) first_byte: Option<Instant>,
    pub(crate) body_done: Option<Instant>,
    /// HTTP/2 stream instants reported by the request body.
    pub(crate) marks: Option<Arc<StreamMarks>>,
    /// Bytes (sent, received) claimed from the connection when the body was done.
    pub(crate) claimed: Option<(u64, u64)>,
    pub(crate) proto: &'static str,
    pub(crate) tls_version: &'static str,
    pub(crate) tls_cipher_suite: &'static str,
    pub(crate) remote_addr: Option<SocketAddr>,
    /// Headers of the request as sent on this hop.
    pub(crate) request_headers: Option<Vec<(http::HeaderName, http::HeaderValue)>>,
    /// Body bytes read so far, kept here so that a failure or timeout mid-body can still
    /// hand them out (k6 returns the partial body with the error).
    pub(crate) body: BodyBuf,
}

/// A response body being read; a single chunk is kept without a copy.
#[derive(Debug, Default)]
pub(crate) struct BodyBuf {
    first: Option<Bytes>,
    rest: BytesMut,
}

/// Single-chunk bodies up to this size are copied out of hyper's read buffer. Larger
/// chunks come from a buffer grown to their size, so keeping the slice wastes at most as
/// much as it holds, and the copy would cost more.
const COPY_BELOW: usize = 32 << 10;

impl BodyBuf {
    /// Appends a chunk; `hint` is the expected total size for the first reallocation.
    pub(crate) fn push(&mut self, data: Bytes, hint: usize) {
        // Single-chunk bodies are passed through without a copy, except small ones: a
        // chunk is a slice of the connection's read buffer (8 KiB or more), and the
        // script's response object would keep that whole buffer alive until the JS GC
        // collects it, while hyper allocates a new one for the next response.
        match self.first.take() {
            None if self.rest.is_empty() && data.len() <= COPY_BELOW => {
                self.first = Some(Bytes::copy_from_slice(&data))
            }
            None if self.rest.is_empty() => self.first = Some(data),
            None => self.rest.extend_from_slice(&data),
            Some(f) => {
                self.rest.reserve(hint.max(f.len() + data.len()));
                self.rest.extend_from_slice(&f);
                self.rest.extend_from_slice(&data);
            }
        }
    }

    /// Appends bytes read by the HTTP/1 connection (a copy out of its read buffer).
    pub(crate) fn extend(&mut self, data: &[u8], hint: usize) {
        if let Some(f) = self.first.take() {
            self.rest.extend_from_slice(&f);
        }
        if self.rest.capacity() == 0 {
            self.rest.reserve(hint.max(data.len()));
        }
        self.rest.extend_from_slice(data);
    }

    /// Everything read so far.
    pub(crate) fn take(&mut self) -> Bytes {
        if let Some(f) = self.first.take() {
            return f;
        }
        let rest = std::mem::take(&mut self.rest);
        // A body grown by doubling (chunked, no length to size it) would keep up to as much
        // again in slack while the script's response object lives.
        if rest.capacity() - rest.len() > rest.len() / 4 + 256 && rest.len() <= COPY_BELOW {
            return Bytes::copy_from_slice(&rest);
        }
        rest.freeze()
    }
}

impl Progress {
    pub(crate) fn new() -> Self {
        Self {
            start: Instant::now(),
            looking_up: Duration::ZERO,
            connecting: Duration::ZERO,
            tls_handshaking: Duration::ZERO,
            conns_opened: 0,
            conn_at: None,
            stats: None,
            h2: false,
            send_end: None,
            first_byte: None,
            body_done: None,
            marks: None,
            claimed: None,
            proto: "",
            tls_version: "",
            tls_cipher_suite: "",
            remote_addr: None,
            request_headers: None,
            body: BodyBuf::default(),
        }
    }

    /// Forgets a connection that turned out stale; `start` stays so `blocked` covers the retry.
    pub(crate) fn reset_connection(&mut self) {
        let start = self.start;
        *self = Self::new();
        self.start = start;
    }

    /// Fixes `send_end`/`first_byte` when the response head is available.
    pub(crate) fn head_arrived(&mut self, now: Instant) {
        let Some(stats) = &self.stats else { return };
        if self.h2 {
            // Connection-level frames and other streams make socket reads meaningless per
            // stream; the head future resolving is the best observable instant.
            self.send_end = self.marks.as_ref().and_then(|m| m.handed());
            self.first_byte = Some(now);
        } else {
            self.first_byte = Some(stats.first_read().unwrap_or(now));
            self.send_end = stats
                .write_before_first_read()
                .or_else(|| stats.last_write());
        }
    }

    /// Phase durations as of `now`.
    pub(crate) fn timings(&self, now: Instant) -> Timings {
        let mut t = Timings {
            looking_up: self.looking_up,
            connecting: self.connecting,
            tls_handshaking: self.tls_handshaking,
            ..Timings::default()
        };
        if let Some(marks) = &self.marks {
            return self.stream_timings(marks, t, now);
        }
        let Some(conn_at) = self.conn_at else {
            // k6 records `blocked` only once a connection is held: a request that never got
            // one (refused, DNS or TLS failure, timeout while connecting) reports 0.
            return t;
        };
        t.blocked = conn_at.saturating_duration_since(self.start);
        let (send_end, first_byte) = if self.first_byte.is_some() {
            (self.send_end, self.first_byte)
        } else if let Some(stats) = &self.stats {
            // No head yet: take what the socket has seen.
            if self.h2 {
                (stats.last_write(), None)
            } else {
                match stats.first_read() {
                    Some(fr) => (stats.write_before_first_read(), Some(fr)),
                    None => (stats.last_write(), None),
                }
            }
        } else {
            (None, None)
        };
        match send_end {
            None => t.sending = now.saturating_duration_since(conn_at),
            Some(se) => {
                t.sending = se.saturating_duration_since(conn_at);
                let fb = first_byte.unwrap_or(now);
                t.waiting = fb.saturating_duration_since(se);
                if let Some(fb) = first_byte {
                    t.receiving = self.body_done.unwrap_or(now).saturating_duration_since(fb);
                }
            }
        }
        t.duration = t.sending + t.waiting + t.receiving;
        t
    }

    /// HTTP/2 phases: connection held, body handed to hyper, head parsed, body done.
    ///
    /// `blocked` ends when the connection is held, as on HTTP/1 and as in k6 (Go's `GotConn`);
    /// the wait for hyper's connection task to open the stream belongs to `sending`, where
    /// HTTP/1 has its hand-off to the connection task too and Go its header write.
    fn stream_timings(&self, marks: &StreamMarks, mut t: Timings, now: Instant) -> Timings {
        let Some(held) = self.conn_at.or_else(|| marks.opened()) else {
            t.blocked = now.saturating_duration_since(self.start);
            return t;
        };
        t.blocked = held.saturating_duration_since(self.start);
        match marks.handed() {
            None => t.sending = now.saturating_duration_since(held),
            Some(handed) => {
                t.sending = handed.saturating_duration_since(held);
                let fb = self.first_byte.unwrap_or(now);
                t.waiting = fb.saturating_duration_since(handed);
                if let Some(fb) = self.first_byte {
                    t.receiving = self.body_done.unwrap_or(now).saturating_duration_since(fb);
                }
            }
        }
        t.duration = t.sending + t.waiting + t.receiving;
        t
    }

    /// Takes this hop's share of the connection's byte counters (once the body is done).
    pub(crate) fn claim_bytes(&mut self) {
        if self.claimed.is_none() {
            self.claimed = self.stats.as_ref().map(|s| s.claim());
        }
    }

    /// Bytes written and read on the socket for this hop.
    pub(crate) fn bytes(&mut self) -> (u64, u64) {
        self.claim_bytes();
        self.claimed.unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http2_blocked_ends_when_the_connection_is_held() {
        let ms = Duration::from_millis;
        let mut p = Progress::new();
        let t0 = p.start;
        p.conn_at = Some(t0 + ms(1));
        // hyper's connection task opened the stream 2 ms after the connection was held.
        p.marks = Some(Arc::new(StreamMarks::at(t0 + ms(3), t0 + ms(4))));
        p.first_byte = Some(t0 + ms(6));
        p.body_done = Some(t0 + ms(7));
        let t = p.timings(t0 + ms(8));
        assert_eq!(t.blocked, ms(1));
        assert_eq!(t.sending, ms(3), "the stream hand-off is part of sending");
        assert_eq!(t.waiting, ms(2));
        assert_eq!(t.receiving, ms(1));
        assert_eq!(t.duration, ms(6));
    }

    #[test]
    fn http2_stream_not_yet_handed_counts_as_sending() {
        let ms = Duration::from_millis;
        let mut p = Progress::new();
        let t0 = p.start;
        p.conn_at = Some(t0 + ms(2));
        p.marks = Some(Arc::new(StreamMarks::default()));
        let t = p.timings(t0 + ms(5));
        assert_eq!((t.blocked, t.sending, t.waiting), (ms(2), ms(3), ms(0)));
    }
}
