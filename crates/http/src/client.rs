//! The per-VU client: one request at a time, redirects, cookies, timeouts, stale-connection retry.

use std::sync::Arc;
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use http::{HeaderMap, Method};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use url::Url;

use crate::connect::connect;
use crate::cookies::CookieJar;
use crate::decode::decode;
use crate::dns::DnsCache;
use crate::error::{self, HttpError, Side};
use crate::headers::{self, HeaderInputs};
use crate::phases::Progress;
use crate::pool::{Conn, Pool, PoolKey};
use crate::redirect::{self, HopRequest};
use crate::tls;
use crate::{ClientConfig, Hop, Request, Response};

/// Largest body size trusted from `Content-Length` for preallocation.
const MAX_PREALLOC: usize = 16 << 20;

/// Single-chunk bodies up to this size are copied out of hyper's read buffer (see
/// `read_body`). Larger chunks come from a buffer grown to their size, so keeping the
/// slice wastes at most as much as it holds, and the copy would cost more.
const COPY_BELOW: usize = 32 << 10;

/// A VU's HTTP client: keep-alive pool, DNS cache and cookie jar.
pub struct Client {
    config: Arc<ClientConfig>,
    tls: Arc<rustls::ClientConfig>,
    pool: Pool,
    dns: DnsCache,
    jar: CookieJar,
}

/// A response head and its connection, before the body is read.
struct Head {
    parts: http::response::Parts,
    body: Incoming,
    conn: Conn,
    key: PoolKey,
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
            config,
            pool: Pool::default(),
            dns: DnsCache::default(),
            jar: CookieJar::default(),
        }
    }

    /// The VU's cookie jar.
    pub fn cookies(&mut self) -> &mut CookieJar {
        &mut self.jar
    }

    /// Drops idle pooled connections (k6's `noVUConnectionReuse`, between iterations).
    pub fn close_idle(&mut self) {
        self.pool.clear();
    }

    /// Sends one request, following redirects; failures become [`Response::error`].
    pub async fn send(&mut self, req: Request) -> Response {
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

    async fn follow(&mut self, req: &Request, chain: &mut Chain) -> Result<Response, HttpError> {
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
            let key = pool_key(&hop.url)?;
            let head = self
                .round_trip(&hop, &key, req, &mut chain.progress)
                .await?;
            let status = head.parts.status.as_u16();
            let proto = proto_name(head.parts.version);
            chain.progress.proto = proto;
            self.jar.store_response(
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
            let Head {
                parts,
                body,
                conn,
                key,
            } = head;
            let body = self
                .read_body(body, discard, conn, key, &parts, &mut chain.progress)
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
        &mut self,
        hop: &HopRequest,
        key: &PoolKey,
        req: &Request,
        progress: &mut Progress,
    ) -> Result<Head, HttpError> {
        let reuse = !self.config.no_connection_reuse;
        let mut fresh_only = false;
        loop {
            let mut pooled = if reuse && !fresh_only {
                self.pool.take(key)
            } else {
                None
            };
            if let Some(c) = &mut pooled {
                if c.ready().await.is_err() {
                    pooled = None;
                }
            }
            let reused = pooled.is_some();
            let mut conn = match pooled {
                Some(c) => c,
                None => connect(key, &mut self.dns, &self.tls, progress).await?,
            };
            progress.conn_at = Some(Instant::now());
            progress.h2 = conn.is_h2();
            progress.proto = conn.proto();
            progress.tls_version = conn.tls_version;
            progress.remote_addr = Some(conn.remote_addr);
            progress.stats = Some(conn.stats.clone());
            if reused {
                progress.sent_base = conn.stats.bytes_written();
                progress.recv_base = conn.stats.bytes_read();
            }

            let inputs = HeaderInputs {
                user_agent: self.config.user_agent.as_deref(),
                jar: &self.jar,
                request_cookies: &req.cookies,
                close: !reuse,
            };
            let request = headers::build_request(hop, conn.is_h2(), inputs)?;
            progress.request_headers = Some(request.headers().clone());
            conn.stats.arm();
            match conn.send(request).await {
                Ok(resp) => {
                    progress.head_arrived(Instant::now());
                    let (parts, body) = resp.into_parts();
                    return Ok(Head {
                        parts,
                        body,
                        conn,
                        key: key.clone(),
                    });
                }
                Err(e) => {
                    let written = conn.stats.last_write().is_some();
                    let received = conn.stats.first_read().is_some();
                    // A kept-alive connection the server closed meanwhile: replay once on a
                    // fresh one when that cannot duplicate a side effect (Go's rule).
                    if reused && !fresh_only && !received && (!written || idempotent(&hop.method)) {
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

    /// Reads (or drains) the body, then returns the connection to the pool if it may be reused.
    async fn read_body(
        &mut self,
        mut body: Incoming,
        discard: bool,
        conn: Conn,
        key: PoolKey,
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
            // Single-chunk bodies are passed through without a copy, except small ones: a
            // chunk is a slice of the connection's read buffer (8 KiB or more), and the
            // script's response object would keep that whole buffer alive until the JS GC
            // collects it, while hyper allocates a new one for the next response.
            match first.take() {
                None if buf.is_empty() && data.len() <= COPY_BELOW => {
                    first = Some(Bytes::copy_from_slice(&data))
                }
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
        let keep_alive = !self.config.no_connection_reuse
            && (conn.is_h2() || !wants_close(&parts.headers, parts.version));
        if keep_alive {
            self.pool.put(key, conn);
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

/// Validates the URL and derives its pool key.
fn pool_key(url: &Url) -> Result<PoolKey, HttpError> {
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
    Ok(PoolKey { https, host, port })
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
    fn send_future_is_send(c: &mut super::Client, r: crate::Request) {
        fn check<T: Send>(_: &T) {}
        check(&c.send(r));
    }
}
