//! The per-VU pool of keep-alive connections, keyed by (scheme, host, port).
//!
//! A [`Client`](crate::Client) sends one request at a time, so a connection is taken out of
//! the pool for the duration of a request and put back once its response body is fully read.
//! That keeps the HTTP/1 and HTTP/2 paths identical and makes the per-request I/O timestamps
//! of [`IoStats`] unambiguous.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::client::conn::{http1, http2};

use crate::timing_io::IoStats;

/// k6's `MaxIdleConnsPerHost` default (`batchPerHost`).
const MAX_IDLE_PER_HOST: usize = 6;

/// Identifies connections that may serve a URL.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub(crate) struct PoolKey {
    pub(crate) https: bool,
    pub(crate) host: String,
    pub(crate) port: u16,
}

/// hyper's request handle for the negotiated protocol.
pub(crate) enum Sender {
    H1(http1::SendRequest<Full<Bytes>>),
    H2(http2::SendRequest<Full<Bytes>>),
}

/// One established connection and what is known about it.
pub(crate) struct Conn {
    pub(crate) sender: Sender,
    pub(crate) stats: Arc<IoStats>,
    pub(crate) tls_version: &'static str,
    pub(crate) tls_cipher_suite: &'static str,
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

    fn is_closed(&self) -> bool {
        match &self.sender {
            Sender::H1(s) => s.is_closed(),
            Sender::H2(s) => s.is_closed(),
        }
    }

    /// Waits until the connection can take a request (HTTP/1 finishes the previous exchange).
    pub(crate) async fn ready(&mut self) -> Result<(), hyper::Error> {
        match &mut self.sender {
            Sender::H1(s) => s.ready().await,
            Sender::H2(s) => s.ready().await,
        }
    }

    /// Sends the request; resolves when the response head has arrived.
    pub(crate) async fn send(
        &mut self,
        req: http::Request<Full<Bytes>>,
    ) -> Result<http::Response<Incoming>, hyper::Error> {
        match &mut self.sender {
            Sender::H1(s) => s.send_request(req).await,
            Sender::H2(s) => s.send_request(req).await,
        }
    }
}

/// Idle connections by origin.
#[derive(Default)]
pub(crate) struct Pool {
    idle: HashMap<PoolKey, Vec<Conn>>,
}

impl Pool {
    /// Takes the most recently used idle connection that is still open.
    pub(crate) fn take(&mut self, key: &PoolKey) -> Option<Conn> {
        let list = self.idle.get_mut(key)?;
        while let Some(conn) = list.pop() {
            if !conn.is_closed() {
                return Some(conn);
            }
        }
        None
    }

    /// Returns a connection for reuse; drops it if the host already has enough idle ones.
    pub(crate) fn put(&mut self, key: PoolKey, conn: Conn) {
        let list = self.idle.entry(key).or_default();
        if list.len() < MAX_IDLE_PER_HOST && !conn.is_closed() {
            list.push(conn);
        }
    }

    /// Drops every idle connection; their driver tasks end when the handles go away.
    pub(crate) fn clear(&mut self) {
        self.idle.clear();
    }
}
