//! An I/O wrapper that observes a connection without hooks into hyper.
//!
//! Two facts per request are enough to split a round trip into k6's phases: when the last
//! write of the request completed and when the first response byte arrived. Byte counts
//! give `data_sent`/`data_received`. Everything lives in atomics because the connection
//! driver task may run on another thread than the [`Client`](crate::Client).
//!
//! For TLS two wrappers are stacked: one under TLS counts wire bytes (handshake and record
//! overhead included, as k6 does), one above TLS takes the timestamps so that post-handshake
//! messages such as session tickets do not look like the first byte of a response.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Per-connection counters and request-scoped timestamps.
#[derive(Debug)]
pub(crate) struct IoStats {
    /// Origin of the nanosecond timestamps below.
    base: Instant,
    read: AtomicU64,
    written: AtomicU64,
    /// Nanoseconds since `base` + 1 of the latest write; 0 = none since `arm`.
    last_write: AtomicU64,
    /// Nanoseconds since `base` + 1 of the first read since `arm`; 0 = none yet.
    first_read: AtomicU64,
    /// `last_write` as it was when `first_read` was taken: the end of sending.
    write_at_first_read: AtomicU64,
    /// The start of the first read since `arm`, kept so that a response head hyper cannot
    /// parse can be reported with Go's message, which quotes the offending token.
    head: Mutex<HeadSample>,
    /// Byte counters already attributed to a request (see [`IoStats::claim`]).
    claimed_read: AtomicU64,
    claimed_written: AtomicU64,
}

/// Up to [`HEAD_SAMPLE`] bytes of the first read of a response.
#[derive(Debug)]
struct HeadSample {
    buf: [u8; HEAD_SAMPLE],
    len: usize,
}

/// Enough for any status line worth quoting in an error message.
const HEAD_SAMPLE: usize = 64;

impl IoStats {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self {
            base: Instant::now(),
            read: AtomicU64::new(0),
            written: AtomicU64::new(0),
            last_write: AtomicU64::new(0),
            first_read: AtomicU64::new(0),
            write_at_first_read: AtomicU64::new(0),
            head: Mutex::new(HeadSample {
                buf: [0; HEAD_SAMPLE],
                len: 0,
            }),
            claimed_read: AtomicU64::new(0),
            claimed_written: AtomicU64::new(0),
        })
    }

    fn now(&self) -> u64 {
        // +1 keeps 0 free as the "unset" marker.
        u64::try_from(self.base.elapsed().as_nanos()).unwrap_or(u64::MAX - 1) + 1
    }

    fn instant(&self, v: u64) -> Option<Instant> {
        (v != 0).then(|| self.base + Duration::from_nanos(v - 1))
    }

    /// Starts observing a new request on this connection.
    pub(crate) fn arm(&self) {
        self.last_write.store(0, Ordering::Relaxed);
        self.write_at_first_read.store(0, Ordering::Relaxed);
        self.first_read.store(0, Ordering::Release);
    }

    /// Total bytes read from the socket so far.
    #[cfg(test)]
    pub(crate) fn bytes_read(&self) -> u64 {
        self.read.load(Ordering::Relaxed)
    }

    /// Total bytes written to the socket so far.
    #[cfg(test)]
    pub(crate) fn bytes_written(&self) -> u64 {
        self.written.load(Ordering::Relaxed)
    }

    /// Bytes (written, read) since the previous claim, attributed to the caller's request.
    ///
    /// On an exclusively used HTTP/1 connection that is exactly the request's traffic (the
    /// first request also gets the handshake). Streams of a shared HTTP/2 connection each
    /// take what accumulated since the last one finished, so their sum is the wire total
    /// and nothing is counted twice.
    pub(crate) fn claim(&self) -> (u64, u64) {
        fn take(total: &AtomicU64, claimed: &AtomicU64) -> u64 {
            let now = total.load(Ordering::Relaxed);
            // fetch_max keeps the mark monotonic when two streams finish at once.
            let prev = claimed.fetch_max(now, Ordering::AcqRel);
            now.saturating_sub(prev)
        }
        (
            take(&self.written, &self.claimed_written),
            take(&self.read, &self.claimed_read),
        )
    }

    /// When the latest write since `arm` completed.
    pub(crate) fn last_write(&self) -> Option<Instant> {
        self.instant(self.last_write.load(Ordering::Acquire))
    }

    /// When the first byte since `arm` was read.
    pub(crate) fn first_read(&self) -> Option<Instant> {
        self.instant(self.first_read.load(Ordering::Acquire))
    }

    /// The first bytes read since `arm` (the start of the response head).
    pub(crate) fn head_sample(&self) -> Vec<u8> {
        let h = self.head.lock().unwrap_or_else(|p| p.into_inner());
        h.buf[..h.len].to_vec()
    }

    /// When the last write before the first read completed (end of the request).
    pub(crate) fn write_before_first_read(&self) -> Option<Instant> {
        self.instant(self.write_at_first_read.load(Ordering::Acquire))
    }

    fn on_write(&self, n: usize, timed: bool) {
        if n == 0 {
            return;
        }
        if timed {
            self.last_write.store(self.now(), Ordering::Release);
        } else {
            self.written.fetch_add(n as u64, Ordering::Relaxed);
        }
    }

    fn on_read(&self, data: &[u8], timed: bool) {
        let n = data.len();
        if n == 0 {
            return;
        }
        if timed {
            let now = self.now();
            if self
                .first_read
                .compare_exchange(0, now, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                let w = self.last_write.load(Ordering::Acquire);
                self.write_at_first_read.store(w, Ordering::Release);
                // Only the first read of a response: one short copy per request, no lock
                // contention (the connection serves one request at a time).
                let mut h = self.head.lock().unwrap_or_else(|p| p.into_inner());
                let len = n.min(HEAD_SAMPLE);
                h.buf[..len].copy_from_slice(&data[..len]);
                h.len = len;
            }
        } else {
            self.read.fetch_add(n as u64, Ordering::Relaxed);
        }
    }
}

/// What a [`MeteredIo`] layer records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// Byte counts only (under TLS).
    Count,
    /// Timestamps only (above TLS).
    Time,
    /// Both (plain TCP, where one layer sees everything).
    Both,
}

/// Tokio I/O wrapper feeding an [`IoStats`].
#[derive(Debug)]
pub(crate) struct MeteredIo<S> {
    inner: S,
    stats: Arc<IoStats>,
    role: Role,
}

impl<S> MeteredIo<S> {
    pub(crate) fn new(inner: S, stats: Arc<IoStats>, role: Role) -> Self {
        Self { inner, stats, role }
    }

    fn record_write(&self, n: usize) {
        if self.role != Role::Time {
            self.stats.on_write(n, false);
        }
        if self.role != Role::Count {
            self.stats.on_write(n, true);
        }
    }

    fn record_read(&self, data: &[u8]) {
        if self.role != Role::Time {
            self.stats.on_read(data, false);
        }
        if self.role != Role::Count {
            self.stats.on_read(data, true);
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for MeteredIo<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let res = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = res {
            this.record_read(&buf.filled()[before..]);
        }
        res
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for MeteredIo<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let res = Pin::new(&mut this.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = res {
            this.record_write(n);
        }
        res
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let res = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        if let Poll::Ready(Ok(n)) = res {
            this.record_write(n);
        }
        res
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_read_snapshots_last_write() {
        let s = IoStats::new();
        s.arm();
        assert!(s.first_read().is_none());
        s.on_write(10, true);
        s.on_write(10, false);
        let w = s.last_write().unwrap();
        s.on_read(b"HTTP/", true);
        s.on_read(b"HTTP/", false);
        s.on_read(b"1.1 200", true);
        assert_eq!(s.head_sample(), b"HTTP/", "only the first read is sampled");
        assert_eq!(s.write_before_first_read(), Some(w));
        assert!(s.first_read().unwrap() >= w);
        assert_eq!((s.bytes_written(), s.bytes_read()), (10, 5));
        assert_eq!(s.claim(), (10, 5));
        assert_eq!(s.claim(), (0, 0));
        s.on_write(3, false);
        assert_eq!(s.claim(), (3, 0));
        let long = [b'x'; 100];
        s.arm();
        s.on_read(&long, true);
        assert_eq!(s.head_sample().len(), HEAD_SAMPLE);
        s.arm();
        assert!(s.first_read().is_none() && s.last_write().is_none());
    }
}
