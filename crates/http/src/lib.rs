//! rk6-http: the HTTP client behind rk6's `k6/http`, with k6's timing phases, per-VU
//! connection pool and cookie jar, and k6's error codes.
//!
//! The crate knows nothing of JavaScript or metrics. One [`Client`] belongs to one VU; it
//! sends [`Request`]s (several at once if the VU asks: `http.batch`, `http.asyncRequest`)
//! and returns for each a [`Response`] that carries, besides the final answer, one [`Hop`]
//! per request actually put on the wire (redirect hops first).
//! Each hop has its own [`Timings`], byte counts and error code, which is what the caller
//! needs to emit k6's `http_req_*`, `data_sent` and `data_received` samples.
//!
//! # Phase model
//!
//! The client owns the connect path and the pool, speaks HTTP/1.1 itself (`h1`: the
//! request's own task reads and writes the socket, no connection task) and HTTP/2 through
//! hyper's low-level `client::conn` API, and every socket is wrapped in an observing I/O
//! layer (`timing_io`). That makes every phase boundary an instant the crate sees directly:
//!
//! | phase | from | to |
//! |---|---|---|
//! | `blocked` | asking the pool for a connection | holding one (a new connection includes DNS, TCP and TLS) |
//! | `looking_up` | DNS query start | answer (0 for IP literals, cache hits and reused connections) |
//! | `connecting` | TCP connect start | established (0 when reused) |
//! | `tls_handshaking` | TLS handshake start | finished (0 when reused or plain HTTP) |
//! | `sending` | holding the connection | last write of the request completed |
//! | `waiting` | request written | first byte of the response head |
//! | `receiving` | first response byte | body fully read |
//!
//! `duration = sending + waiting + receiving`, as in k6.
//!
//! ## HTTP/2 (TLS or h2c)
//!
//! Requests to one HTTP/2 origin are streams of one shared connection, so the socket cannot
//! say which bytes are whose. The boundaries are then what hyper reports per request (the
//! request body type observes hyper's connection task, see `body.rs`):
//!
//! | phase | from | to |
//! |---|---|---|
//! | `blocked` | asking the pool for a connection | hyper opens the request's stream: includes dialing (or waiting for another request's dial to the origin), waiting for a free stream slot, and the hand-over to hyper's connection task (tens of µs on a reused connection) |
//! | `sending` | stream opened | hyper has taken the whole body into the stream (≈0 without a body); writing the frames to the socket falls in `waiting` |
//! | `waiting` | request taken | hyper hands over the parsed response head |
//! | `receiving` | head | body fully read |
//!
//! `looking_up`/`connecting`/`tls_handshaking` are non-zero only for the request that
//! opened the connection. Byte counts of a shared connection are split, not duplicated:
//! each finished request takes what the connection transferred since the previous one
//! finished, so `data_sent`/`data_received` add up to the wire totals.
//!
//! A request that fails or times out still yields a hop with the phases it reached; the
//! request phase (sending, waiting, receiving) that was running is closed at the moment of
//! failure. As in k6, DNS, connect and TLS count only when they completed, and `blocked`
//! only once a connection was held: a refused connection reports all zeros.
//!
//! # Errors
//!
//! [`Client::send`] never returns `Err` and never panics: transport failures become
//! [`Response::error`] with k6's code ([`error`] lists them). HTTP 4xx/5xx statuses are not
//! errors, but [`Response::error_code`] and [`Hop::error_code`] carry `1000 + status` as k6
//! tags them.

#![warn(missing_docs)]

mod aia;
mod auth;
mod body;
mod client;
mod config;
mod connect;
mod cookies;
mod debug;
mod decode;
mod der;
mod dns;
mod encode;
pub mod error;
pub mod grpc;
mod h1;
mod headers;
pub mod keepalive;
mod legacy_pem;
mod local_ips;
mod phases;
mod pool;
mod rate;
mod raw;
mod redirect;
mod request;
mod response;
mod response_head;
mod target;
mod timing_io;
mod timings;
mod tls;
mod tls_auth;
mod tls_suites;
pub mod trust;
mod verify;

pub use aia::AiaFetcher;
pub use auth::Auth;
pub use client::Client;
pub use config::ClientConfig;
pub use cookies::CookieJar;
pub use debug::{Dump, HttpDebug};
pub use dns::{DnsOptions, DnsPolicy, DnsSelect, DnsValueError};
pub use encode::compress;
pub use error::HttpError;
pub use headers::{response_headers as header_list, script_view as request_header_list};
pub use hyper::ext::ReasonPhrase;
pub use keepalive::{Exchange, ExchangeError, KeepAlive, RequestBytes};
pub use legacy_pem::decrypt_legacy_pem_key;
pub use local_ips::{LocalIps, LocalIpsError};
pub use rate::RateLimiter;
pub use raw::{RawConn, Traffic};
pub use request::{Request, SharedJar};
pub use response::{status_text, Hop, Response};
pub use response_head::HeaderFields;
pub use target::{Cidr, HostOverrides, HostnameBlocklist, RuleError};
pub use timings::Timings;
pub use tls::{
    AcceptAnyCert, ClientCertPem, TlsCache, TlsOptionError, TlsOptions, TlsSpec, TlsVersion,
};
pub use verify::{ServerVerifier, TrustedCerts};

/// The property tests' case count: `default` in the normal test run (sized for CI), or
/// `PROPTEST_CASES` when set, for a longer fuzzing run (docs/reliability.md).
#[cfg(test)]
pub(crate) fn prop_config(default: u32) -> proptest::test_runner::Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    proptest::test_runner::Config {
        cases,
        failure_persistence: None,
        ..proptest::test_runner::Config::default()
    }
}
