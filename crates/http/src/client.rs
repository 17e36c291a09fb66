//! The per-VU client: concurrent requests sharing one pool, redirects, cookies, timeouts,
//! stale-connection retry.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use bytes::Bytes;
use http::Method;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use url::Url;

use crate::auth::{self, Auth};
use crate::body::{ReqBody, StreamMarks};
use crate::config::ClientConfig;
use crate::connect::connect;
use crate::cookies::CookieJar;
use crate::debug::{self, Dump, HttpDebug};
use crate::decode::decode;
use crate::dns::DnsCache;
use crate::error::{self, HttpError, Side};
use crate::h1::conn::H1Error;
use crate::h1::framing::BodyKind;
use crate::headers::{self, HeaderInputs};
use crate::phases::Progress;
use crate::pool::{Checkout, Conn, Pool, PoolKey, Sender};
use crate::raw::{self, RawConn};
use crate::redirect::{self, HopRequest};
use crate::request::{Request, SharedJar};
use crate::response::{Hop, Response};
use crate::response_head::{HeaderFields, ResponseHead};

/// Largest body size trusted from `Content-Length` for preallocation.
const MAX_PREALLOC: usize = 16 << 20;

/// A VU's HTTP client: keep-alive pool, DNS cache and cookie jar.
///
/// [`Client::send`] takes `&self`, so one VU can run several requests at once (`http.batch`,
/// `http.asyncRequest`). The state behind the mutexes is only ever touched by its own VU,
/// so they are uncontended; none is held across an await except the DNS cache's, which makes
/// concurrent lookups of one host wait for a single answer.
pub struct Client {
    config: Arc<ClientConfig>,
    tls: Arc<rustls::ClientConfig>,
    pool: Mutex<Pool>,
    dns: tokio::sync::Mutex<DnsCache>,
    jar: SharedJar,
    /// Source address of this VU's connections (`localIPs`).
    local_ip: Option<std::net::IpAddr>,
    /// `tls` with ALPN `http/1.1` only, for upgrades ([`Client::connect_raw`]).
    upgrade_tls: std::sync::OnceLock<Arc<rustls::ClientConfig>>,
}

/// Locks a mutex of this client; a panic elsewhere cannot leave its data half-updated
/// in a way later requests would trip over, so poisoning is ignored.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A response head and its connection, before the body is read.
struct Head {
    head: ResponseHead,
    body: RespBody,
    conn: Conn,
}

/// Where a response's body comes from.
enum RespBody {
    /// Read by the HTTP/1 connection itself, framed as said.
    H1(BodyKind),
    /// hyper's HTTP/2 stream.
    H2(Incoming),
}

/// How a request failed before its response head.
enum SendFailure {
    H1(H1Error),
    H2(hyper::Error),
}

/// Words an HTTP/1 connection's failure as k6 does; `side` is where an I/O error happened.
fn from_h1(e: H1Error, side: Side, conn: &Conn) -> HttpError {
    match e {
        H1Error::Framing(err) => err,
        // Go's words for a server that hangs up before (or while) sending the head.
        H1Error::Eof => HttpError::new(error::GENERIC, "EOF"),
        H1Error::Io(io) => {
            error::on_connection(error::from_io(&io, side), conn.local_addr, conn.remote_addr)
        }
    }
}

/// What has happened so far in one `send`, kept outside the future so a timeout can report it.
struct Chain {
    hops: Vec<Hop>,
    /// `httpDebug` dumps so far.
    debug: Vec<Dump>,
    /// The first hop's request headers as sent (`res.request.headers` shows a view of them).
    script_headers: Vec<(http::HeaderName, http::HeaderValue)>,
    progress: Progress,
    method: Method,
    url: Url,
}

impl Chain {
    fn begin(&mut self, hop: &HopRequest) {
        self.progress = Progress::new();
        // The first hop is the request as made, already in `url` and `method`.
        if !self.hops.is_empty() {
            self.method = hop.method.clone();
            self.url = hop.url.clone();
        }
    }

    /// Records the finished hop in flight.
    fn push_hop(&mut self, status: u16, proto: &'static str, err: Option<&HttpError>) {
        let (bytes_sent, bytes_received) = self.progress.bytes();
        let error_code = match err {
            Some(e) => e.code,
            None => status_error_code(status),
        };
        self.hops.push(Hop {
            method: self.method.clone(),
            url: self.url.clone(),
            status,
            proto,
            timings: self.progress.timings(Instant::now()),
            bytes_sent,
            bytes_received,
            error_code,
            error: err.map(|e| e.message.clone()),
            tls_version: self.progress.tls_version,
            conns_opened: self.progress.conns_opened,
        });
    }

    /// Ends the chain with a failed hop; any body bytes it got are kept, as k6 keeps them.
    fn fail(mut self, err: HttpError) -> Response {
        self.push_hop(0, "", Some(&err));
        Response {
            status: 0,
            reason: None,
            proto: "",
            headers: HeaderFields::default(),
            body: self.progress.body.take(),
            url: self.url,
            remote_addr: self.progress.remote_addr,
            tls_version: self.progress.tls_version,
            tls_cipher_suite: self.progress.tls_cipher_suite,
            error_code: err.code,
            error: Some(err),
            request_headers: self.script_headers,
            script_headers: Vec::new(),
            too_many_redirects: false,
            failed_in_body: self.progress.first_byte.is_some(),
            hops: self.hops,
            debug: self.debug,
        }
    }
}

/// k6 tags 4xx/5xx responses with `1000 + status`.
fn status_error_code(status: u16) -> u32 {
    if status >= 400 {
        1000 + u32::from(status)
    } else {
        0
    }
}

impl Client {
    /// A client for one VU; the TLS config comes from (and is cached in) `config`.
    pub fn new(config: Arc<ClientConfig>) -> Self {
        Self {
            tls: config.rustls(),
            pool: Mutex::new(Pool::new(config.max_idle_per_host)),
            config,
            dns: tokio::sync::Mutex::default(),
            jar: SharedJar::default(),
            local_ip: None,
            upgrade_tls: std::sync::OnceLock::new(),
        }
    }

    /// A client for VU `vu_id`, binding its connections to the VU's `localIPs` address.
    pub fn for_vu(config: Arc<ClientConfig>, vu_id: u64) -> Self {
        let local_ip = config.local_ips.as_ref().map(|p| p.for_vu(vu_id));
        Self {
            local_ip,
            ..Self::new(config)
        }
    }

    /// The `User-Agent` the client sends (`userAgent`), if any.
    pub fn user_agent(&self) -> Option<&str> {
        self.config.user_agent.as_deref()
    }

    /// The settings this client was made with.
    pub(crate) fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// This client's DNS cache.
    pub(crate) fn dns(&self) -> &tokio::sync::Mutex<DnsCache> {
        &self.dns
    }

    /// The VU's cookie jar, locked; do not hold it across an await of [`Client::send`].
    pub fn cookies(&self) -> MutexGuard<'_, CookieJar> {
        lock(&self.jar)
    }

    /// Drops pooled connections (k6's `noVUConnectionReuse`, between iterations); requests
    /// still running keep theirs until they finish.
    pub fn close_idle(&self) {
        lock(&self.pool).clear();
    }

    /// Opens a connection to `url`'s host for a protocol that upgrades from HTTP/1.1
    /// (WebSocket), with the same rules, DNS cache and TLS settings as requests; failures
    /// are k6's errors for the connect phase.
    pub async fn connect_raw(&self, url: &Url) -> Result<RawConn, HttpError> {
        let tls = self
            .upgrade_tls
            .get_or_init(|| {
                let mut tls = (*self.tls).clone();
                tls.alpn_protocols = vec![b"http/1.1".to_vec()];
                Arc::new(tls)
            })
            .clone();
        let dialer = raw::Dialer {
            config: &self.config,
            dns: &self.dns,
            local_ip: self.local_ip,
            tls,
        };
        Box::pin(raw::open(dialer, url)).await
    }

    /// Opens a new connection for `key`. Boxed: new connections are rare, and the TLS
    /// handshake's state would otherwise make every request's future several KiB larger.
    async fn dial(&self, key: &PoolKey, progress: &mut Progress) -> Result<Conn, HttpError> {
        Box::pin(connect(
            key,
            &self.dns,
            &self.config,
            self.local_ip,
            &self.tls,
            progress,
        ))
        .await
    }

    /// Sends one request, following redirects; failures become [`Response::error`].
    /// Several sends may run at once; each keeps its own timings.
    pub async fn send(&self, req: Request) -> Response {
        // As in k6, the wait for the global rate comes before the request and its timeout.
        if let Some(limit) = &self.config.rps {
            limit.wait().await;
        }
        let timeout = req.timeout.unwrap_or(self.config.timeout);
        let mut chain = Chain {
            // Most requests are one hop; the growth path cost ~500 instructions a request.
            hops: Vec::with_capacity(1),
            debug: Vec::new(),
            script_headers: Vec::new(),
            progress: Progress::new(),
            method: req.method.clone(),
            url: req.url.clone(),
        };
        let mut resp = match tokio::time::timeout(timeout, self.follow(&req, &mut chain)).await {
            Ok(Ok(resp)) => resp,
            Ok(Err(e)) => chain.fail(e),
            Err(_) => chain.fail(HttpError::timeout()),
        };
        resp.script_headers = req.headers;
        resp
    }

    async fn follow(&self, req: &Request, chain: &mut Chain) -> Result<Response, HttpError> {
        let jar = req.jar.as_ref().unwrap_or(&self.jar);
        let h2c = req.h2c.unwrap_or(self.config.h2c);
        let first_host = req.url.host_str().unwrap_or_default();
        let max_redirects = req.max_redirects.unwrap_or(self.config.max_redirects);
        let mut hop = HopRequest {
            method: req.method.clone(),
            url: req.url.clone(),
            headers: req.headers.clone(),
            body: req.body.clone(),
            sensitive: true,
        };
        let mut redirects = 0;
        // This hop already carries our answer to a Digest challenge (one per hop, as k6).
        let mut answered = false;
        loop {
            // Dumped before the hop's clock starts, so debugging does not add to `blocked`.
            let debug = self.config.http_debug;
            if debug != HttpDebug::Off {
                let jar = lock(jar);
                let inputs = HeaderInputs {
                    user_agent: self.config.user_agent.as_deref(),
                    jar: &jar,
                    request_cookies: &req.cookies,
                    close: self.config.no_connection_reuse,
                };
                if let Some(text) = debug::request_dump(&hop, inputs, debug) {
                    let hop = chain.hops.len();
                    chain.debug.push(Dump { hop, text });
                }
            }
            chain.begin(&hop);
            let key = pool_key(&hop.url, h2c)?;
            let head = self
                .round_trip(&hop, &key, req, jar, &mut chain.progress)
                .await?;
            if chain.hops.is_empty() {
                if let Some(sent) = chain.progress.request_headers.take() {
                    chain.script_headers = sent;
                }
            }
            let status = head.head.status;
            let proto = proto_name(head.head.version);
            chain.progress.proto = proto;
            lock(jar).store_response(&hop.url, head.head.headers.get_all_str("set-cookie"));
            let location = redirect::is_redirect(status)
                .then(|| head.head.headers.get_str("location"))
                .flatten()
                .map(str::to_owned);
            let follow = location.is_some() && redirects < max_redirects;
            let digest = (req.auth == Auth::Digest && status == 401 && !answered)
                .then(|| auth::digest_answer(&head.head.headers.to_map(), &hop))
                .flatten();
            // Full debug dumps show every body, even ones the script never sees.
            let discard =
                (follow || digest.is_some() || req.discard_body) && debug != HttpDebug::Full;
            let Head {
                head: mut parts,
                body,
                conn,
            } = head;
            let body = self
                .read_body(body, discard, conn, &key, &parts, &mut chain.progress)
                .await?;
            if debug != HttpDebug::Off {
                let closes = proto != "HTTP/2.0" && wants_close(&parts.headers, parts.version);
                let text = debug::response(
                    proto,
                    &crate::response::status_text(status, parts.reason.as_ref()),
                    &parts.headers.to_map(),
                    closes,
                    &body,
                    debug,
                );
                let hop = chain.hops.len();
                chain.debug.push(Dump { hop, text });
            }
            chain.push_hop(status, proto, None);

            if let Some(answer) = digest {
                hop.headers
                    .retain(|(k, _)| !k.eq_ignore_ascii_case("authorization"));
                hop.headers.push(("Authorization".to_owned(), answer));
                answered = true;
                continue;
            }
            if let (true, Some(location)) = (follow, &location) {
                if std::mem::take(&mut answered) {
                    // The answer was for this hop's URI; the next hop gets its own challenge.
                    hop.headers
                        .retain(|(k, _)| !k.eq_ignore_ascii_case("authorization"));
                }
                hop = redirect::next_hop(&hop, first_host, status, location)?;
                redirects += 1;
                continue;
            }

            let mut error = None;
            let body = if req.discard_body {
                Bytes::new()
            } else {
                match parts.headers.get_str("content-encoding") {
                    Some(enc) => decode(body, enc).unwrap_or_else(|e| {
                        error = Some(e);
                        Bytes::new()
                    }),
                    None => body,
                }
            };
            if let (Some(e), Some(last)) = (&error, chain.hops.last_mut()) {
                last.error_code = e.code;
                last.error = Some(e.message.clone());
            }
            let error_code = error.as_ref().map_or(status_error_code(status), |e| e.code);
            return Ok(Response {
                status,
                // Only HTTP/1 has reason phrases, already in the head's own copy.
                reason: parts.reason.take(),
                proto,
                headers: parts.headers,
                body,
                url: hop.url,
                remote_addr: chain.progress.remote_addr,
                tls_version: chain.progress.tls_version,
                tls_cipher_suite: chain.progress.tls_cipher_suite,
                error,
                error_code,
                request_headers: std::mem::take(&mut chain.script_headers),
                script_headers: Vec::new(),
                too_many_redirects: location.is_some(),
                failed_in_body: false,
                hops: std::mem::take(&mut chain.hops),
                debug: std::mem::take(&mut chain.debug),
            });
        }
    }

    /// Gets a connection and sends the hop; resolves with the response head.
    async fn round_trip(
        &self,
        hop: &HopRequest,
        key: &PoolKey,
        req: &Request,
        jar: &SharedJar,
        progress: &mut Progress,
    ) -> Result<Head, HttpError> {
        let reuse = !self.config.no_connection_reuse;
        let mut fresh_only = false;
        loop {
            let (mut conn, reused) = if reuse && !fresh_only {
                self.checkout(key, progress).await?
            } else {
                let conn = self.dial(key, progress).await?;
                if reuse {
                    lock(&self.pool).adopt(key, &conn);
                }
                (conn, false)
            };
            progress.conn_at = Some(Instant::now());
            let h2 = conn.is_h2();
            progress.h2 = h2;
            progress.proto = conn.proto();
            progress.tls_version = conn.tls_version;
            progress.tls_cipher_suite = conn.tls_cipher_suite;
            progress.remote_addr = Some(conn.remote_addr);
            progress.stats = Some(conn.stats.clone());
            // A shared HTTP/2 socket cannot time one stream; the body reports for it instead.
            let marks = h2.then(|| Arc::new(StreamMarks::default()));
            progress.marks = marks.clone();

            let mut request = {
                let jar = lock(jar);
                let inputs = HeaderInputs {
                    user_agent: self.config.user_agent.as_deref(),
                    jar: &jar,
                    request_cookies: &req.cookies,
                    close: !reuse,
                };
                headers::build_request(hop, h2, inputs)?
            };
            let sent = match &mut conn.sender {
                Sender::H1(h1) => {
                    conn.stats.arm();
                    let sent = h1.send(&request).await;
                    // The headers as sent stay with the response (`res.request.headers`):
                    // moved out once written, not copied for every request.
                    progress.request_headers = Some(std::mem::take(&mut request.headers));
                    sent.map(|(head, kind)| (head, RespBody::H1(kind)))
                        .map_err(SendFailure::H1)
                }
                Sender::H2(h2) => {
                    let request = request.into_http()?;
                    progress.request_headers = Some(
                        request
                            .headers()
                            .iter()
                            .map(|(k, v)| (k.clone(), v.clone()))
                            .collect(),
                    );
                    h2.send_request(request.map(|b| ReqBody::new(b, marks.clone())))
                        .await
                        .map(|resp| {
                            let (parts, body) = resp.into_parts();
                            // One copy of the fields; hyper's map points into its read buffer.
                            (ResponseHead::from_h2(&parts), RespBody::H2(body))
                        })
                        .map_err(SendFailure::H2)
                }
            };
            match sent {
                Ok((head, body)) => {
                    progress.head_arrived(Instant::now());
                    return Ok(Head { head, body, conn });
                }
                Err(e) => {
                    let (written, received) = match &marks {
                        Some(m) => (m.opened().is_some(), false),
                        None => (
                            conn.stats.last_write().is_some(),
                            conn.stats.first_read().is_some(),
                        ),
                    };
                    // A kept-alive connection the server closed meanwhile: replay once on a
                    // fresh one when that cannot duplicate a side effect (Go's rule, which k6 inherits).
                    if reused && !fresh_only && !received && (!written || replayable(hop)) {
                        lock(&self.pool).forget(key, &conn);
                        fresh_only = true;
                        progress.reset_connection();
                        continue;
                    }
                    let side = if written { Side::Read } else { Side::Write };
                    let e = match e {
                        SendFailure::H1(e) => return Err(from_h1(e, side, &conn)),
                        SendFailure::H2(e) => e,
                    };
                    let malformed = (e.is_parse() || e.is_parse_status())
                        .then(|| error::malformed_status_line(&conn.stats.head_sample()))
                        .flatten();
                    return Err(malformed.unwrap_or_else(|| {
                        let err = error::from_hyper(&e, side);
                        error::on_connection(err, conn.local_addr, conn.remote_addr)
                    }));
                }
            }
        }
    }

    /// A pooled or shared connection, or a new one; true when it was not opened for us.
    /// Waiting for another request's dial to the origin counts as `blocked`.
    async fn checkout(
        &self,
        key: &PoolKey,
        progress: &mut Progress,
    ) -> Result<(Conn, bool), HttpError> {
        loop {
            let decision = lock(&self.pool).checkout(key);
            match decision {
                Checkout::Ready(mut conn) => {
                    if conn.ready().await.is_ok() {
                        return Ok((conn, true));
                    }
                }
                Checkout::Wait(mut rx) => {
                    // Err means the dialer gave up; either way look again.
                    let _ = rx.changed().await;
                }
                Checkout::Dial(guard) => {
                    let res = self.dial(key, progress).await;
                    if let Some(guard) = guard {
                        lock(&self.pool).dialed(key, res.as_ref().ok(), guard);
                    }
                    return res.map(|c| (c, false));
                }
            }
        }
    }

    /// Reads (or drains) the body, then returns the connection to the pool if it may be reused.
    async fn read_body(
        &self,
        body: RespBody,
        discard: bool,
        mut conn: Conn,
        key: &PoolKey,
        parts: &ResponseHead,
        progress: &mut Progress,
    ) -> Result<Bytes, HttpError> {
        let hint = match &body {
            RespBody::H1(BodyKind::Length(n)) => usize::try_from(*n).unwrap_or(usize::MAX),
            RespBody::H1(_) => 0,
            RespBody::H2(_) => content_length(&parts.headers).unwrap_or(0),
        }
        .min(MAX_PREALLOC);
        match body {
            RespBody::H1(kind) => {
                if let Sender::H1(h1) = &mut conn.sender {
                    let read = h1.read_body(kind, discard, &mut progress.body, hint).await;
                    read.map_err(|e| from_h1(e, Side::Read, &conn))?;
                }
            }
            RespBody::H2(mut body) => {
                while let Some(frame) = body.frame().await {
                    let frame = frame.map_err(|e| {
                        let err = error::from_hyper(&e, Side::Read);
                        error::on_connection(err, conn.local_addr, conn.remote_addr)
                    })?;
                    let Ok(data) = frame.into_data() else {
                        continue;
                    };
                    if discard || data.is_empty() {
                        continue;
                    }
                    progress.body.push(data, hint);
                }
            }
        }
        progress.body_done = Some(Instant::now());
        // Before the connection can serve another request, whose bytes are not ours.
        progress.claim_bytes();
        // An HTTP/1 connection knows from its head whether it may serve another request
        // (`Connection: close`, HTTP/1.0, a close-delimited body); `put` asks it. HTTP/2
        // connections stay shared in the pool and are never put back.
        if !self.config.no_connection_reuse && !conn.is_h2() {
            lock(&self.pool).put(key, conn);
        }
        Ok(progress.body.take())
    }
}

/// Validates the URL and derives its pool key; `h2c` applies to plain `http` only.
fn pool_key(url: &Url, h2c: bool) -> Result<PoolKey, HttpError> {
    let https = match url.scheme() {
        "http" => false,
        "https" => true,
        other => {
            return Err(HttpError::new(
                error::INVALID_URL,
                format!("unsupported protocol scheme {other:?}"),
            ))
        }
    };
    let host = match url.host_str() {
        Some(h) if !h.is_empty() => h.to_owned(),
        _ => {
            return Err(HttpError::new(
                error::INVALID_URL,
                format!("no Host in request URL {:?}", url.as_str()),
            ))
        }
    };
    let port = url
        .port_or_known_default()
        .unwrap_or(if https { 443 } else { 80 });
    Ok(PoolKey {
        https,
        h2c: h2c && !https,
        host,
        port,
    })
}

/// Go's `isReplayable`: safe methods, or any method carrying an idempotency key. PUT and
/// DELETE are idempotent by RFC but Go (hence k6) does not replay them.
fn replayable(hop: &HopRequest) -> bool {
    matches!(hop.method.as_str(), "GET" | "HEAD" | "OPTIONS" | "TRACE")
        || hop.headers.iter().any(|(k, _)| {
            k.eq_ignore_ascii_case("idempotency-key") || k.eq_ignore_ascii_case("x-idempotency-key")
        })
}

fn content_length(h: &HeaderFields) -> Option<usize> {
    h.get_str("content-length")?.trim().parse().ok()
}

/// HTTP/1 connection semantics: `Connection: close`, or HTTP/1.0 without keep-alive.
fn wants_close(h: &HeaderFields, version: http::Version) -> bool {
    let has = |token: &str| {
        h.get_all_str("connection")
            .flat_map(|v| v.split(','))
            .any(|t| t.trim().eq_ignore_ascii_case(token))
    };
    has("close") || (version == http::Version::HTTP_10 && !has("keep-alive"))
}

fn proto_name(v: http::Version) -> &'static str {
    match v {
        http::Version::HTTP_10 => "HTTP/1.0",
        http::Version::HTTP_2 => "HTTP/2.0",
        http::Version::HTTP_09 => "HTTP/0.9",
        _ => "HTTP/1.1",
    }
}

#[cfg(test)]
mod tests {
    /// The binding may drive `send` from a multi-thread runtime, so the future must be `Send`.
    #[allow(dead_code)]
    fn send_future_is_send(c: &super::Client, r: crate::Request) {
        fn check<T: Send>(_: &T) {}
        check(&c.send(r));
    }
}
