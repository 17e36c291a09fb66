//! The per-VU pool of keep-alive connections, keyed by origin.
//!
//! A client may run several requests at once (`http.batch`, `http.asyncRequest`), so the pool
//! hands out connections in two ways:
//!
//! - HTTP/1 connections are taken out exclusively for one request and put back once its
//!   response body is fully read; concurrent requests to one host open more connections.
//!   That keeps the per-request I/O timestamps of [`IoStats`] unambiguous.
//! - An HTTP/2 connection stays in the pool while in use: every request gets its own clone of
//!   hyper's `SendRequest` and runs as a stream of the one connection.
//!
//! Whether an `https` origin speaks HTTP/2 is only known after ALPN, so while a first dial
//! to such an origin (or to an h2c origin) is under way, other requests for it wait for that
//! dial instead of opening connections of their own; if it turns out to be HTTP/1 they dial
//! their own, and later ones do not wait again.
//!
//! The pool itself is synchronous; the client keeps it behind a mutex held only for the
//! bookkeeping, never across an await.

use std::net::SocketAddr;
use std::sync::Arc;

use hyper::client::conn::http2;
use rustc_hash::FxHashMap;
use tokio::sync::watch;

use crate::body::ReqBody;
use crate::h1::conn::H1Conn;
use crate::timing_io::IoStats;

/// Identifies connections that may serve a URL.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub(crate) struct PoolKey {
    pub(crate) https: bool,
    /// Plain TCP with HTTP/2 prior knowledge (h2c); always false for `https`.
    pub(crate) h2c: bool,
    pub(crate) host: String,
    pub(crate) port: u16,
}

impl PoolKey {
    /// Whether a connection for this origin may turn out to be (or is) HTTP/2.
    fn may_multiplex(&self) -> bool {
        self.https || self.h2c
    }
}

/// The connection for the negotiated protocol: rk6's own for HTTP/1.1, hyper's request
/// handle for HTTP/2.
pub(crate) enum Sender {
    H1(H1Conn),
    H2(http2::SendRequest<ReqBody>),
}

/// One established connection and what is known about it.
pub(crate) struct Conn {
    pub(crate) sender: Sender,
    pub(crate) stats: Arc<IoStats>,
    pub(crate) tls_version: &'static str,
    pub(crate) tls_cipher_suite: &'static str,
    pub(crate) local_addr: Option<SocketAddr>,
    pub(crate) remote_addr: SocketAddr,
}

impl Conn {
    /// True for an HTTP/2 connection.
    pub(crate) fn is_h2(&self) -> bool {
        matches!(self.sender, Sender::H2(_))
    }

    /// k6's `proto` value of the connection.
    pub(crate) fn proto(&self) -> &'static str {
        if self.is_h2() {
            "HTTP/2.0"
        } else {
            "HTTP/1.1"
        }
    }

    fn is_closed(&mut self) -> bool {
        match &mut self.sender {
            Sender::H1(c) => c.is_closed(),
            Sender::H2(s) => s.is_closed(),
        }
    }

    /// Another handle on an HTTP/2 connection; `None` for HTTP/1, which cannot be shared.
    pub(crate) fn share(&self) -> Option<Conn> {
        match &self.sender {
            Sender::H2(s) => Some(Conn {
                sender: Sender::H2(s.clone()),
                stats: self.stats.clone(),
                tls_version: self.tls_version,
                tls_cipher_suite: self.tls_cipher_suite,
                local_addr: self.local_addr,
                remote_addr: self.remote_addr,
            }),
            Sender::H1(_) => None,
        }
    }

    /// Waits until the connection can take a request (HTTP/2: a free stream slot).
    pub(crate) async fn ready(&mut self) -> Result<(), hyper::Error> {
        match &mut self.sender {
            Sender::H1(_) => Ok(()),
            Sender::H2(s) => s.ready().await,
        }
    }
}

/// Connections of one origin.
#[derive(Default)]
struct Origin {
    /// HTTP/1 connections not in use, most recently used last.
    idle: Vec<Conn>,
    /// The HTTP/2 connection every request to the origin multiplexes on.
    shared: Option<Conn>,
    /// Set while a dial of unknown protocol is under way; closed when the dial ends.
    dialing: Option<watch::Receiver<()>>,
    /// The last dial negotiated HTTP/1, so concurrent requests need connections of their own.
    h1_only: bool,
}

/// What [`Pool::checkout`] decided.
pub(crate) enum Checkout {
    /// A connection to use (a pooled HTTP/1 one, or a handle on the shared HTTP/2 one).
    Ready(Conn),
    /// Another request is dialing the origin: wait for it to end, then check out again.
    Wait(watch::Receiver<()>),
    /// Open a new connection; report it with [`Pool::dialed`] if a guard is given.
    Dial(Option<DialGuard>),
}

/// Held by the request that dials an origin others wait for; dropping it (dial finished,
/// failed or timed out) wakes them.
pub(crate) struct DialGuard {
    _tx: watch::Sender<()>,
}

/// Idle and shared connections by origin.
pub(crate) struct Pool {
    /// Looked up twice per request (checkout, put): Fx, not SipHash (~1.2 k instructions).
    origins: FxHashMap<PoolKey, Origin>,
    /// k6's `MaxIdleConnsPerHost` (`batchPerHost`).
    max_idle_per_host: usize,
}

impl Pool {
    /// An empty pool keeping at most `max_idle_per_host` idle HTTP/1 connections per origin
    /// (0 means Go's default of 2).
    pub(crate) fn new(max_idle_per_host: usize) -> Self {
        Self {
            origins: FxHashMap::default(),
            max_idle_per_host: if max_idle_per_host == 0 {
                2
            } else {
                max_idle_per_host
            },
        }
    }

    /// Finds a connection for `key`, or says whether to wait for a dial or make one.
    pub(crate) fn checkout(&mut self, key: &PoolKey) -> Checkout {
        let origin = match self.origins.get_mut(key) {
            Some(o) => o,
            None => self.origins.entry(key.clone()).or_default(),
        };
        if let Some(shared) = &mut origin.shared {
            if let (false, Some(c)) = (shared.is_closed(), shared.share()) {
                return Checkout::Ready(c);
            }
            origin.shared = None;
        }
        while let Some(mut conn) = origin.idle.pop() {
            if !conn.is_closed() {
                return Checkout::Ready(conn);
            }
        }
        if !key.may_multiplex() || origin.h1_only {
            return Checkout::Dial(None);
        }
        if let Some(rx) = &origin.dialing {
            // A closed channel means the dialer went away without reporting.
            if rx.has_changed().is_ok() {
                return Checkout::Wait(rx.clone());
            }
        }
        let (tx, rx) = watch::channel(());
        origin.dialing = Some(rx);
        Checkout::Dial(Some(DialGuard { _tx: tx }))
    }

    /// Records the outcome of a guarded dial: an HTTP/2 connection becomes the origin's shared
    /// one. Waiters wake when the guard is dropped.
    pub(crate) fn dialed(&mut self, key: &PoolKey, conn: Option<&Conn>, guard: DialGuard) {
        if let Some(origin) = self.origins.get_mut(key) {
            origin.dialing = None;
            if let Some(conn) = conn {
                origin.h1_only = !conn.is_h2();
                if let Some(shared) = conn.share() {
                    origin.shared = Some(shared);
                }
            }
        }
        drop(guard);
    }

    /// Makes a connection opened outside [`Pool::checkout`] the origin's shared one if it is
    /// HTTP/2 and the origin has none alive.
    pub(crate) fn adopt(&mut self, key: &PoolKey, conn: &Conn) {
        let Some(shared) = conn.share() else { return };
        let origin = self.origins.entry(key.clone()).or_default();
        if origin.shared.as_mut().is_none_or(Conn::is_closed) {
            origin.shared = Some(shared);
        }
    }

    /// Stops handing out `conn` if it is the origin's shared HTTP/2 connection (it failed).
    pub(crate) fn forget(&mut self, key: &PoolKey, conn: &Conn) {
        if let Some(origin) = self.origins.get_mut(key) {
            if origin
                .shared
                .as_ref()
                .is_some_and(|s| Arc::ptr_eq(&s.stats, &conn.stats))
            {
                origin.shared = None;
            }
        }
    }

    /// Returns an HTTP/1 connection for reuse; drops it if the origin has enough idle ones.
    pub(crate) fn put(&mut self, key: &PoolKey, conn: Conn) {
        // Not `is_closed`: the exchange just ended, so the socket has nothing new to say and
        // a probe would be a wasted syscall per request; checkout looks.
        let spent = match &conn.sender {
            Sender::H1(c) => c.is_done(),
            Sender::H2(_) => true,
        };
        if spent {
            return;
        }
        let origin = match self.origins.get_mut(key) {
            Some(o) => o,
            None => self.origins.entry(key.clone()).or_default(),
        };
        if origin.idle.len() < self.max_idle_per_host {
            origin.idle.push(conn);
        }
    }

    /// Drops every pooled connection; their driver tasks end once in-flight requests holding
    /// handles finish.
    pub(crate) fn clear(&mut self) {
        for origin in self.origins.values_mut() {
            origin.idle.clear();
            origin.shared = None;
        }
    }
}
