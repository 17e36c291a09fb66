//! k6's timing phases of one request on the wire.

use std::time::Duration;

/// k6's request timing phases; see the crate docs for their boundaries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timings {
    /// Waiting for a connection (includes DNS, connect and TLS on a new one).
    pub blocked: Duration,
    /// DNS lookup.
    pub looking_up: Duration,
    /// TCP connect.
    pub connecting: Duration,
    /// TLS handshake.
    pub tls_handshaking: Duration,
    /// Writing the request.
    pub sending: Duration,
    /// Request written → first response byte.
    pub waiting: Duration,
    /// First response byte → body complete.
    pub receiving: Duration,
    /// `sending + waiting + receiving`.
    pub duration: Duration,
}
