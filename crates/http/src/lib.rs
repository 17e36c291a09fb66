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
//! The client owns the connect path and the pool (hyper's low-level `client::conn` API, not
//! a pooled client), and every socket is wrapped in an observing I/O layer
//! (`timing_io`). That makes every phase boundary an instant the crate sees directly:
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

mod auth;
mod body;
mod client;
mod connect;
mod cookies;
mod debug;
mod decode;
mod dns;
mod encode;
pub mod error;
mod headers;
pub mod keepalive;
mod local_ips;
mod phases;
mod pool;
mod rate;
mod redirect;
mod target;
mod timing_io;
mod tls;
mod tls_auth;
mod tls_suites;
pub mod trust;

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use url::Url;

pub use auth::Auth;
pub use client::Client;
pub use cookies::CookieJar;
pub use debug::{Dump, HttpDebug};
pub use dns::{DnsOptions, DnsPolicy, DnsSelect, DnsValueError};
pub use encode::compress;
pub use error::HttpError;
pub use headers::{response_headers as header_list, script_view as request_header_list};
pub use keepalive::{Exchange, ExchangeError, KeepAlive, RequestBytes};
pub use local_ips::{LocalIps, LocalIpsError};
pub use rate::RateLimiter;
pub use target::{Cidr, HostOverrides, HostnameBlocklist, RuleError};
pub use tls::{ClientCertPem, TlsCache, TlsOptionError, TlsOptions, TlsSpec, TlsVersion};

/// A cookie jar that requests of one VU (running concurrently) can share.
pub type SharedJar = std::sync::Arc<std::sync::Mutex<CookieJar>>;

/// Settings shared by all VUs of a test (wrap in an `Arc`).
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// Accept any server certificate (`insecureSkipTLSVerify`).
    pub insecure_skip_tls_verify: bool,
    /// Default `User-Agent`; `None` sends none. A user-set header always wins.
    pub user_agent: Option<String>,
    /// Redirects followed before the 3xx itself is returned (`maxRedirects`, default 10).
    pub max_redirects: u32,
    /// Default per-request timeout covering redirects and body (default 60 s).
    pub timeout: Duration,
    /// Never keep connections alive (`noConnectionReuse`).
    pub no_connection_reuse: bool,
    /// `httpDebug`: dump every request and response into [`Response::debug`].
    pub http_debug: HttpDebug,
    /// Idle HTTP/1 connections kept per origin (k6: `batchPerHost`, default 6).
    pub max_idle_per_host: usize,
    /// Send plain `http://` requests as HTTP/2 with prior knowledge (h2c, rk6's `h2c` option).
    pub h2c: bool,
    /// Extra trusted root certificates, PEM encoded (for tests and private CAs).
    pub extra_root_certs_pem: Vec<Vec<u8>>,
    /// `tlsVersion`, `tlsCipherSuites` and `tlsAuth`, validated.
    pub tls: TlsOptions,
    /// The rustls config built from the fields above on first use; leave at default.
    pub tls_cache: TlsCache,
    /// DNS cache and address choice (`dns`).
    pub dns: DnsOptions,
    /// Name → address overrides (`hosts`).
    pub hosts: HostOverrides,
    /// Names never connected to (`blockHostnames`, error 1111).
    pub block_hostnames: HostnameBlocklist,
    /// Addresses never connected to (`blacklistIPs`, error 1110).
    pub blacklist_ips: Vec<Cidr>,
    /// Source addresses handed to VUs by id (`localIPs`); `None` lets the OS choose.
    pub local_ips: Option<LocalIps>,
    /// Global request rate limit shared by all clients of the config (`rps`).
    pub rps: Option<std::sync::Arc<RateLimiter>>,
}

impl Default for ClientConfig {
    fn default() -> Self {
        Self {
            insecure_skip_tls_verify: false,
            user_agent: None,
            max_redirects: 10,
            timeout: Duration::from_secs(60),
            no_connection_reuse: false,
            http_debug: HttpDebug::Off,
            max_idle_per_host: 6,
            h2c: false,
            extra_root_certs_pem: Vec::new(),
            tls: TlsOptions::default(),
            tls_cache: TlsCache::default(),
            dns: DnsOptions::default(),
            hosts: HostOverrides::default(),
            block_hostnames: HostnameBlocklist::default(),
            blacklist_ips: Vec::new(),
            local_ips: None,
            rps: None,
        }
    }
}

/// One request as the script asked for it.
#[derive(Clone, Debug)]
pub struct Request {
    /// HTTP method.
    pub method: http::Method,
    /// Target URL (`http` or `https`).
    pub url: Url,
    /// User headers as given; `Host` here overrides the URL's host.
    pub headers: Vec<(String, String)>,
    /// Request body; empty means none.
    pub body: Bytes,
    /// Overall deadline incl. redirects and body; `None` uses [`ClientConfig::timeout`].
    pub timeout: Option<Duration>,
    /// Redirect limit; `None` uses [`ClientConfig::max_redirects`], 0 returns the 3xx.
    pub max_redirects: Option<u32>,
    /// Request-scoped cookies, sent after the user's `Cookie` header and before the jar's.
    pub cookies: Vec<(String, String)>,
    /// Read and drop the body (its bytes still count) instead of buffering it.
    pub discard_body: bool,
    /// How the URL's credentials authenticate the request.
    pub auth: Auth,
    /// A jar to use instead of the client's (the `jar` param).
    pub jar: Option<SharedJar>,
    /// Overrides [`ClientConfig::h2c`] for this request (the `h2c` param).
    pub h2c: Option<bool>,
}

impl Request {
    /// A request with no headers, body or overrides.
    pub fn new(method: http::Method, url: Url) -> Self {
        Self {
            method,
            url,
            headers: Vec::new(),
            body: Bytes::new(),
            timeout: None,
            max_redirects: None,
            cookies: Vec::new(),
            discard_body: false,
            auth: Auth::Basic,
            jar: None,
            h2c: None,
        }
    }

    /// Shorthand for a GET.
    pub fn get(url: Url) -> Self {
        Self::new(http::Method::GET, url)
    }
}

/// The outcome of [`Client::send`].
#[derive(Clone, Debug)]
pub struct Response {
    /// HTTP status; 0 when the request failed.
    pub status: u16,
    /// The server's reason phrase, when it differs from the canonical one.
    pub reason: Option<hyper::ext::ReasonPhrase>,
    /// `"HTTP/1.1"`, `"HTTP/2.0"`, `"HTTP/1.0"`, or empty on error.
    pub proto: &'static str,
    /// Response headers as received (empty on error); [`Response::header_list`] gives
    /// k6's presentation. Kept raw because most scripts never look at them.
    pub headers: http::HeaderMap,
    /// Decoded body (gzip/deflate/br/zstd); empty when discarded; on an error mid-body,
    /// the raw bytes read before it.
    pub body: Bytes,
    /// Final URL after redirects.
    pub url: Url,
    /// Peer address of the final hop's connection.
    pub remote_addr: Option<SocketAddr>,
    /// `"tls1.3"`, `"tls1.2"`, or empty for plain HTTP.
    pub tls_version: &'static str,
    /// k6's name of the negotiated cipher suite (`TLS_AES_128_GCM_SHA256`), or empty.
    pub tls_cipher_suite: &'static str,
    /// Transport failure, timeout or decode failure; `None` for any HTTP status.
    pub error: Option<HttpError>,
    /// k6 `error_code`: the error's code, else `1000 + status` for status >= 400, else 0.
    pub error_code: u32,
    /// Headers of the first hop's request as sent; [`Response::request_header_list`] gives
    /// k6's view of them (`res.request.headers`).
    pub request_headers: http::HeaderMap,
    /// The request's headers as the script gave them (they decide that view).
    pub script_headers: Vec<(String, String)>,
    /// The redirect limit stopped the chain; this is the last 3xx (k6 logs a warning).
    pub too_many_redirects: bool,
    /// The request failed while its body was read, after the response head had arrived.
    pub failed_in_body: bool,
    /// One entry per request sent, redirect hops first, final last.
    pub hops: Vec<Hop>,
    /// `httpDebug` dumps in the order they happened; empty when it is off.
    pub debug: Vec<Dump>,
}

impl Response {
    /// First value of header `name` (case-insensitive; `None` if not valid UTF-8).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// k6 style status text, `"200 OK"`; empty on error.
    pub fn status_text(&self) -> String {
        status_text(self.status, self.reason.as_ref())
    }

    /// Response headers as k6 shows them: canonical names, repeated values joined by `", "`.
    pub fn header_list(&self) -> Vec<(String, String)> {
        header_list(&self.headers)
    }

    /// The request headers as k6 shows them to the script, canonical names.
    pub fn request_header_list(&self) -> Vec<(String, String)> {
        request_header_list(&self.request_headers, &self.script_headers)
    }

    /// Raw `Set-Cookie` values of the final response (joining them loses information).
    pub fn set_cookies(&self) -> impl Iterator<Item = String> + '_ {
        self.headers
            .get_all(http::header::SET_COOKIE)
            .iter()
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
    }

    /// Timings of the final hop (what k6 exposes as `res.timings`).
    pub fn timings(&self) -> Timings {
        self.hops.last().map(|h| h.timings).unwrap_or_default()
    }
}

/// Go's `Response.Status`: the code and the server's reason phrase (the canonical one when
/// the server's is the same or absent, e.g. on HTTP/2); empty for status 0.
pub(crate) fn status_text(status: u16, reason: Option<&hyper::ext::ReasonPhrase>) -> String {
    if status == 0 {
        return String::new();
    }
    let reason = match reason {
        Some(r) => String::from_utf8_lossy(r.as_bytes()),
        None => http::StatusCode::from_u16(status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or_default()
            .into(),
    };
    if reason.is_empty() {
        status.to_string()
    } else {
        format!("{status} {reason}")
    }
}

/// One request on the wire, for per-hop metric samples.
#[derive(Clone, Debug)]
pub struct Hop {
    /// Method sent.
    pub method: http::Method,
    /// URL requested.
    pub url: Url,
    /// Status received; 0 if none.
    pub status: u16,
    /// Protocol of the response (empty if none).
    pub proto: &'static str,
    /// Phase durations.
    pub timings: Timings,
    /// Wire bytes written (incl. TLS handshake for a new connection).
    pub bytes_sent: u64,
    /// Wire bytes read, headers included.
    pub bytes_received: u64,
    /// k6 error code; `1000 + status` for status >= 400; 0 = none.
    pub error_code: u32,
    /// Error message if the hop failed.
    pub error: Option<String>,
    /// TLS version of the connection.
    pub tls_version: &'static str,
}

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
