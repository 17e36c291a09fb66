//! The per-VU client: concurrent requests sharing one pool, redirects, cookies, timeouts,
//! stale-connection retry.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use http::{HeaderMap, Method};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use url::Url;

use crate::body::{ReqBody, StreamMarks};
use crate::connect::connect;
use crate::cookies::CookieJar;
use crate::decode::decode;
use crate::dns::DnsCache;
use crate::error::{self, HttpError, Side};
use crate::headers::{self, HeaderInputs};
use crate::phases::Progress;
use crate::pool::{Checkout, Conn, Pool, PoolKey};
use crate::redirect::{self, HopRequest};
use crate::tls;
use crate::{ClientConfig, Hop, Request, Response, SharedJar};

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
}

/// Locks a mutex of this client; a panic elsewhere cannot leave its data half-updated
/// in a way later requests would trip over, so poisoning is ignored.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A response head and its connection, before the body is read.
struct Head {
    parts: http::response::Parts,
    body: Incoming,
    conn: Conn,
}

/// What has happened so far in one `send`, kept outside the future so a timeout can report it.
struct Chain {
    hops: Vec<Hop>,
    progress: Progress,
    method: Method,
    url: Url,
}

impl Chain {
    fn begin(&mut self, hop: &HopRequest) {
        self.progress = Progress::new();
        self.method = hop.method.clone();
        self.url = hop.url.clone();
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
        });
    }

    /// Ends the chain with a failed hop.
    fn fail(mut self, err: HttpError) -> Response {
        self.push_hop(0, "", Some(&err));
        Response {
            status: 0,
            status_text: String::new(),
            proto: "",
            headers: Vec::new(),
            set_cookies: Vec::new(),
            body: Bytes::new(),
            url: self.url,
            remote_addr: self.progress.remote_addr,
            tls_version: self.progress.tls_version,
            error_code: err.code,
            error: Some(err),
            request_headers: Vec::new(),
            too_many_redirects: false,
            hops: self.hops,
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
            tls: tls::client_tls(&config),
            pool: Mutex::new(Pool::new(config.max_idle_per_host)),
            config,
            dns: tokio::sync::Mutex::default(),
            jar: SharedJar::default(),
        }
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

    /// Sends one request, following redirects; failures become [`Response::error`].
    /// Several sends may run at once; each keeps its own timings.
    pub async fn send(&self, req: Request) -> Response {
        let timeout = req.timeout.unwrap_or(self.config.timeout);
        let mut chain = Chain {
            hops: Vec::new(),
            progress: Progress::new(),
            method: req.method.clone(),
            url: req.url.clone(),
        };
        match tokio::time::timeout(timeout, self.follow(&req, &mut chain)).await {
            Ok(Ok(resp)) => resp,
            Ok(Err(e)) => chain.fail(e),
            Err(_) => chain.fail(HttpError::timeout()),
        }
    }

    async fn follow(&self, req: &Request, chain: &mut Chain) -> Result<Response, HttpError> {
        let jar = req.jar.as_ref().unwrap_or(&self.jar);
        let h2c = req.h2c.unwrap_or(self.config.h2c);
        let first_host = req.url.host_str().unwrap_or_default().to_owned();
        let max_redirects = req.max_redirects.unwrap_or(self.config.max_redirects);
        let mut hop = HopRequest {
            method: req.method.clone(),
            url: req.url.clone(),
            headers: req.headers.clone(),
            body: req.body.clone(),
            sensitive: true,
        };
        let mut redirects = 0;
        loop {
            chain.begin(&hop);
            let key = pool_key(&hop.url, h2c)?;
            let head = self
                .round_trip(&hop, &key, req, jar, &mut chain.progress)
                .await?;
            let status = head.parts.status.as_u16();
            let proto = proto_name(head.parts.version);
            chain.progress.proto = proto;
            lock(jar).store_response(
                &hop.url,
                head.parts
                    .headers
                    .get_all(http::header::SET_COOKIE)
                    .iter()
                    .filter_map(|v| v.to_str().ok()),
            );
            let location = redirect::is_redirect(status)
                .then(|| head.parts.headers.get(http::header::LOCATION))
                .flatten()
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let follow = location.is_some() && redirects < max_redirects;
            let discard = follow || req.discard_body;
            let Head { parts, body, conn } = head;
            let body = self
                .read_body(body, discard, conn, &key, &parts, &mut chain.progress)
                .await?;
            chain.push_hop(status, proto, None);

            if let (true, Some(location)) = (follow, &location) {
                hop = redirect::next_hop(&hop, &first_host, status, location)?;
                redirects += 1;
                continue;
            }

            let mut error = None;
            let body = if req.discard_body {
                Bytes::new()
            } else {
                match parts
                    .headers
                    .get(http::header::CONTENT_ENCODING)
                    .and_then(|v| v.to_str().ok())
                {
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
                status_text: status_text(&parts),
                proto,
                headers: headers::response_headers(&parts.headers),
                set_cookies: parts
                    .headers
                    .get_all(http::header::SET_COOKIE)
                    .iter()
                    .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
                    .collect(),
                body,
                url: hop.url,
                remote_addr: chain.progress.remote_addr,
                tls_version: chain.progress.tls_version,
                error,
                error_code,
                request_headers: chain.progress_request_headers(),
                too_many_redirects: location.is_some(),
                hops: std::mem::take(&mut chain.hops),
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
                let conn = connect(key, &self.dns, &self.tls, progress).await?;
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
            progress.remote_addr = Some(conn.remote_addr);
            progress.stats = Some(conn.stats.clone());
            // A shared HTTP/2 socket cannot time one stream; the body reports for it instead.
            let marks = h2.then(|| Arc::new(StreamMarks::default()));
            progress.marks = marks.clone();

            let request = {
                let jar = lock(jar);
                let inputs = HeaderInputs {
                    user_agent: self.config.user_agent.as_deref(),
                    jar: &jar,
                    request_cookies: &req.cookies,
                    close: !reuse,
                };
                headers::build_request(hop, h2, inputs)?
            };
            progress.request_headers = Some(request.headers().clone());
            let request = request.map(|b| ReqBody::new(b, marks.clone()));
            if !h2 {
                conn.stats.arm();
            }
            match conn.send(request).await {
                Ok(resp) => {
                    progress.head_arrived(Instant::now());
                    let (parts, body) = resp.into_parts();
                    return Ok(Head { parts, body, conn });
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
                    // fresh one when that cannot duplicate a side effect (Go's rule).
                    if reused && !fresh_only && !received && (!written || idempotent(&hop.method)) {
                        lock(&self.pool).forget(key, &conn);
                        fresh_only = true;
                        progress.reset_connection();
                        continue;
                    }
                    let side = if written { Side::Read } else { Side::Write };
                    return Err(error::from_hyper(&e, side));
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
                    let res = connect(key, &self.dns, &self.tls, progress).await;
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
        mut body: Incoming,
        discard: bool,
        conn: Conn,
        key: &PoolKey,
        parts: &http::response::Parts,
        progress: &mut Progress,
    ) -> Result<Bytes, HttpError> {
        let hint = content_length(&parts.headers)
            .unwrap_or(0)
            .min(MAX_PREALLOC);
        let mut first: Option<Bytes> = None;
        let mut buf = BytesMut::new();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| error::from_hyper(&e, Side::Read))?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            if discard || data.is_empty() {
                continue;
            }
            // Single-chunk bodies are passed through without a copy.
            match first.take() {
                None if buf.is_empty() => first = Some(data),
                None => buf.extend_from_slice(&data),
                Some(f) => {
                    buf.reserve(hint.max(f.len() + data.len()));
                    buf.extend_from_slice(&f);
                    buf.extend_from_slice(&data);
                }
            }
        }
        progress.body_done = Some(Instant::now());
        // Before the connection can serve another request, whose bytes are not ours.
        progress.claim_bytes();
        let keep_alive = !self.config.no_connection_reuse
            && !conn.is_h2()
            && !wants_close(&parts.headers, parts.version);
        if keep_alive {
            lock(&self.pool).put(key, conn);
        }
        Ok(first.unwrap_or_else(|| buf.freeze()))
    }
}

impl Chain {
    fn progress_request_headers(&self) -> Vec<(String, String)> {
        self.progress
            .request_headers
            .as_ref()
            .map(headers::request_headers)
            .unwrap_or_default()
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

fn idempotent(m: &Method) -> bool {
    matches!(
        m.as_str(),
        "GET" | "HEAD" | "OPTIONS" | "TRACE" | "PUT" | "DELETE"
    )
}

fn content_length(h: &HeaderMap) -> Option<usize> {
    h.get(http::header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// HTTP/1 connection semantics: `Connection: close`, or HTTP/1.0 without keep-alive.
fn wants_close(h: &HeaderMap, version: http::Version) -> bool {
    let has = |token: &str| {
        h.get_all(http::header::CONNECTION)
            .iter()
            .filter_map(|v| v.to_str().ok())
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

/// Go's `Response.Status`: the code and the server's reason phrase (canonical one for h2).
fn status_text(parts: &http::response::Parts) -> String {
    let code = parts.status.as_u16();
    let reason = parts
        .extensions
        .get::<hyper::ext::ReasonPhrase>()
        .map(|r| String::from_utf8_lossy(r.as_bytes()).into_owned())
        .or_else(|| parts.status.canonical_reason().map(str::to_owned));
    match reason {
        Some(r) if !r.is_empty() => format!("{code} {r}"),
        _ => code.to_string(),
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
