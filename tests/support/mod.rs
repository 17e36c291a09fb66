//! In-process httpbin-style HTTP server for the CLI integration tests.
//!
//! Each [`TestServer`] owns a background thread with its own tokio runtime, so
//! plain `#[test]` functions can start one, point an `rk6` run at it and have it
//! shut down when the value goes out of scope.
//!
//! Echo endpoints report header names lowercased (as they arrive through hyper);
//! repeated query keys are reported as arrays, single ones as strings.

// Each integration-test binary uses a different subset of this module.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{json, Map, Value};
use tokio::sync::oneshot;
use tokio::task::JoinSet;

pub mod grpc;
pub mod otlp;
pub mod py_ws;
pub mod recorder;
mod rest_call;
pub mod user_cert;
pub mod ws_server;

pub use rest_call::rest_call;

type Resp = Response<Full<Bytes>>;

/// A 127.0.0.1 address nothing listens on (bound to find a free port, then released): a
/// connection there is refused.
pub fn closed_addr() -> SocketAddr {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    l.local_addr().expect("local address")
}

/// Kills the processes it names when the test panics before it waited for them, so a
/// failing test leaves no paused or lingering `rk6 run` behind.
pub struct KillOnPanic(pub Vec<u32>);

impl Drop for KillOnPanic {
    fn drop(&mut self) {
        if std::thread::panicking() {
            for pid in &self.0 {
                let _ = std::process::Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status();
            }
        }
    }
}

/// A free port on 127.0.0.1, for a server the test starts as another process.
pub fn free_port() -> u16 {
    closed_addr().port()
}

/// Upper bounds keep a buggy test from hanging or exhausting memory.
const MAX_DELAY_MS: u64 = 10_000;
const MAX_BYTES: usize = 10 * 1024 * 1024;
const MAX_BODY_BYTES: usize = 10 * 1024 * 1024;
/// The fixed session token `/login` hands out and `/me` accepts.
const SESSION_TOKEN: &str = "abc";

/// A rustls server configuration presenting `cert` (signed with `key`) and offering `alpn`.
pub fn tls_server_config(
    cert: &rcgen::Certificate,
    key: &rcgen::KeyPair,
    alpn: &[&[u8]],
) -> Arc<rustls::ServerConfig> {
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![CertificateDer::from(cert.der().to_vec())],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        )
        .unwrap();
    cfg.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Arc::new(cfg)
}

/// Binds 127.0.0.1:0 and, on a background thread with its own runtime, hands every
/// accepted connection to `on_conn` (each on its own task) for `life`; the port accepts
/// before this returns. For tests that need a server of their own (HTTP/2, TLS, counters).
pub fn accept_loop<F, Fut>(life: Duration, on_conn: F) -> SocketAddr
where
    F: Fn(tokio::net::TcpStream) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind test server");
    listener
        .set_nonblocking(true)
        .expect("non-blocking listener");
    let addr = listener.local_addr().expect("test server address");
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("test server runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
            // Bounded: a test ends long before this.
            let deadline = tokio::time::Instant::now() + life;
            while let Ok(Ok((stream, _))) =
                tokio::time::timeout_at(deadline, listener.accept()).await
            {
                tokio::spawn(on_conn(stream));
            }
        });
    });
    addr
}

/// The next request head (through its blank line) on a keep-alive connection of a raw
/// test server; bytes read past it stay in `pending` for the next call. `None` once the
/// client is gone.
pub async fn next_request_head(
    stream: &mut tokio::net::TcpStream,
    pending: &mut Vec<u8>,
) -> Option<Vec<u8>> {
    use tokio::io::AsyncReadExt;
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
            return Some(pending.drain(..end + 4).collect());
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => pending.extend_from_slice(&chunk[..n]),
        }
    }
}

/// A running test server on 127.0.0.1; stops (and joins its thread) on drop.
pub struct TestServer {
    pub addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl TestServer {
    /// Binds 127.0.0.1:0 and starts serving on a background thread.
    pub fn start() -> TestServer {
        // Binding on the caller's thread means the port is accepting before `start` returns.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind test server");
        listener
            .set_nonblocking(true)
            .expect("non-blocking listener");
        let addr = listener.local_addr().expect("test server address");
        let (shutdown, stop) = oneshot::channel();
        let thread = std::thread::Builder::new()
            .name(format!("test-server-{}", addr.port()))
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("test server runtime");
                runtime.block_on(run(listener, stop));
            })
            .expect("spawn test server thread");
        TestServer {
            addr,
            shutdown: Some(shutdown),
            thread: Some(thread),
        }
    }

    /// Absolute `http://` URL for `path` on this server.
    pub fn url(&self, path: &str) -> String {
        let slash = if path.starts_with('/') { "" } else { "/" };
        format!("http://{}{slash}{path}", self.addr)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[derive(Default)]
struct State {
    /// Who last logged in via `/login`; `/me` reports it for the fixed session token.
    user: Mutex<Option<String>>,
}

async fn run(listener: std::net::TcpListener, mut stop: oneshot::Receiver<()>) {
    let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
    let state = Arc::new(State::default());
    // Dropping the set at the end aborts keep-alive connections, so shutdown never waits on clients.
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            _ = &mut stop => break,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                while connections.try_join_next().is_some() {}
                let state = Arc::clone(&state);
                connections.spawn(async move {
                    let service = service_fn(move |req| {
                        let state = Arc::clone(&state);
                        async move { Ok::<_, Infallible>(handle(&state, req).await) }
                    });
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        }
    }
}

/// A fully read request, so handlers can be plain functions.
struct Req {
    method: Method,
    path: String,
    query: Vec<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
}

impl Req {
    fn content_type(&self) -> Option<&str> {
        self.headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
    }

    fn query_json(&self) -> Value {
        pairs_json(&self.query)
    }

    fn headers_json(&self) -> Value {
        let mut map = Map::new();
        for name in self.headers.keys() {
            let values: Vec<&str> = self
                .headers
                .get_all(name)
                .iter()
                .map(|v| v.to_str().unwrap_or(""))
                .collect();
            map.insert(name.as_str().to_owned(), Value::from(values.join(", ")));
        }
        Value::Object(map)
    }

    fn cookies(&self) -> Vec<(String, String)> {
        self.headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect()
    }

    fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    fn form(&self) -> Vec<(String, String)> {
        parse_urlencoded(&self.body_text())
    }

    /// Everything an echo endpoint reports.
    fn echo(&self) -> Value {
        json!({
            "method": self.method.as_str(),
            "path": self.path,
            "query": self.query_json(),
            "headers": self.headers_json(),
            "body": self.body_text(),
            "content_type": self.content_type(),
        })
    }
}

async fn handle(state: &State, req: Request<Incoming>) -> Resp {
    let (parts, body) = req.into_parts();
    let body = match Limited::new(body, MAX_BODY_BYTES).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => return error(StatusCode::BAD_REQUEST, "unreadable or oversized body"),
    };
    let req = Req {
        method: parts.method,
        path: parts.uri.path().to_owned(),
        query: parse_urlencoded(parts.uri.query().unwrap_or("")),
        headers: parts.headers,
        body,
    };
    let path = req.path.clone();
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    match segments.as_slice() {
        ["get"] => get(&req),
        ["status", code] => status(code),
        ["redirect", n] => redirect(&req, n),
        ["cookies"] => {
            let cookies = pairs_object(&req.cookies());
            json_response(StatusCode::OK, json!({ "cookies": cookies }))
        }
        ["cookies", "set"] => set_cookies(&req),
        ["post"] => post(&req),
        ["anything", ..] => json_response(StatusCode::OK, req.echo()),
        ["delay", ms] => delay(ms).await,
        ["json"] => json_response(
            StatusCode::OK,
            json!({ "hello": "world", "nested": { "items": [1, 2, 3] } }),
        ),
        ["gzip"] => gzip(&req),
        ["headers"] => json_response(StatusCode::OK, json!({ "headers": req.headers_json() })),
        ["bytes", n] => bytes(n),
        ["login"] => login(state, &req),
        ["me"] => me(state, &req),
        _ => error(StatusCode::NOT_FOUND, "not found"),
    }
}

fn get(req: &Req) -> Resp {
    json_response(
        StatusCode::OK,
        json!({
            "method": req.method.as_str(),
            "path": req.path,
            "query": req.query_json(),
            "headers": req.headers_json(),
        }),
    )
}

/// Empty body with the requested status; only final (non-1xx) codes make sense here.
fn status(code: &str) -> Resp {
    match code.parse::<u16>().ok().filter(|c| (200..=599).contains(c)) {
        Some(c) => {
            let mut resp = Response::new(Full::new(Bytes::new()));
            *resp.status_mut() = StatusCode::from_u16(c).expect("valid status range");
            resp
        }
        None => error(StatusCode::BAD_REQUEST, "status must be 200..=599"),
    }
}

/// `/redirect/n` performs exactly `n` 302 hops before landing on `/get`.
fn redirect(req: &Req, n: &str) -> Resp {
    match n.parse::<u32>() {
        Ok(0) => get(req),
        Ok(1) => found("/get"),
        Ok(n) => found(&format!("/redirect/{}", n - 1)),
        Err(_) => error(StatusCode::BAD_REQUEST, "redirect count must be an integer"),
    }
}

fn set_cookies(req: &Req) -> Resp {
    let mut resp = found("/cookies");
    for (k, v) in &req.query {
        if let Ok(value) = HeaderValue::from_str(&format!("{k}={v}; Path=/")) {
            resp.headers_mut().append(header::SET_COOKIE, value);
        }
    }
    resp
}

fn post(req: &Req) -> Resp {
    let content_type = req.content_type().unwrap_or("").to_ascii_lowercase();
    let form = if content_type.starts_with("application/x-www-form-urlencoded") {
        pairs_json(&req.form())
    } else {
        Value::Null
    };
    let parsed = serde_json::from_slice::<Value>(&req.body).unwrap_or(Value::Null);
    json_response(
        StatusCode::OK,
        json!({
            "method": req.method.as_str(),
            "body": req.body_text(),
            "content_type": req.content_type(),
            "form": form,
            "json": parsed,
        }),
    )
}

async fn delay(ms: &str) -> Resp {
    let Ok(ms) = ms.parse::<u64>() else {
        return error(StatusCode::BAD_REQUEST, "delay must be milliseconds");
    };
    let ms = ms.min(MAX_DELAY_MS);
    tokio::time::sleep(Duration::from_millis(ms)).await;
    json_response(StatusCode::OK, json!({ "delay_ms": ms }))
}

fn gzip(req: &Req) -> Resp {
    let body = json!({ "gzipped": true, "method": req.method.as_str() }).to_string();
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder
        .write_all(body.as_bytes())
        .expect("gzip into memory");
    let compressed = encoder.finish().expect("gzip into memory");
    let mut resp = with_type(StatusCode::OK, compressed, "application/json");
    resp.headers_mut()
        .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    resp
}

/// `n` bytes of a repeating 0..=255 pattern, so tests can verify content as well as length.
fn bytes(n: &str) -> Resp {
    match n.parse::<usize>() {
        Ok(n) if n <= MAX_BYTES => {
            let data: Vec<u8> = (0..n).map(|i| (i % 256) as u8).collect();
            with_type(StatusCode::OK, data, "application/octet-stream")
        }
        _ => error(StatusCode::BAD_REQUEST, "byte count must be 0..=10MiB"),
    }
}

/// Form login: any non-empty `user` with a non-empty `pass` gets the fixed session cookie.
fn login(state: &State, req: &Req) -> Resp {
    if req.method != Method::POST {
        return error(StatusCode::METHOD_NOT_ALLOWED, "use POST");
    }
    let form = req.form();
    let field = |name: &str| {
        form.iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    let (user, pass) = (field("user"), field("pass"));
    if user.is_empty() || pass.is_empty() {
        return error(StatusCode::UNAUTHORIZED, "user and pass required");
    }
    *state.user.lock().unwrap_or_else(|e| e.into_inner()) = Some(user.clone());
    let mut resp = json_response(StatusCode::OK, json!({ "user": user }));
    resp.headers_mut().insert(
        header::SET_COOKIE,
        HeaderValue::from_static("session=abc; Path=/; HttpOnly"),
    );
    resp
}

fn me(state: &State, req: &Req) -> Resp {
    let has_session = req
        .cookies()
        .iter()
        .any(|(k, v)| k == "session" && v == SESSION_TOKEN);
    let user = state.user.lock().unwrap_or_else(|e| e.into_inner()).clone();
    match user {
        Some(user) if has_session => json_response(StatusCode::OK, json!({ "user": user })),
        _ => error(StatusCode::UNAUTHORIZED, "not logged in"),
    }
}

fn found(location: &str) -> Resp {
    let mut resp = Response::new(Full::new(Bytes::new()));
    *resp.status_mut() = StatusCode::FOUND;
    if let Ok(value) = HeaderValue::from_str(location) {
        resp.headers_mut().insert(header::LOCATION, value);
    }
    resp
}

fn error(status: StatusCode, message: &str) -> Resp {
    json_response(status, json!({ "error": message }))
}

fn json_response(status: StatusCode, body: Value) -> Resp {
    with_type(status, body.to_string(), "application/json")
}

fn with_type(status: StatusCode, body: impl Into<Bytes>, content_type: &'static str) -> Resp {
    let mut resp = Response::new(Full::new(body.into()));
    *resp.status_mut() = status;
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    resp
}

/// Last value wins, as a cookie jar would see it.
fn pairs_object(pairs: &[(String, String)]) -> Value {
    let map: BTreeMap<&str, &str> = pairs
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    Value::Object(
        map.into_iter()
            .map(|(k, v)| (k.to_owned(), Value::from(v)))
            .collect(),
    )
}

/// Single keys map to strings, repeated keys to arrays (in request order).
fn pairs_json(pairs: &[(String, String)]) -> Value {
    let mut map = Map::new();
    for (k, v) in pairs {
        match map.get_mut(k) {
            None => {
                map.insert(k.clone(), Value::from(v.as_str()));
            }
            Some(Value::Array(items)) => items.push(Value::from(v.as_str())),
            Some(existing) => {
                let first = existing.take();
                *existing = Value::Array(vec![first, Value::from(v.as_str())]);
            }
        }
    }
    Value::Object(map)
}

fn parse_urlencoded(s: &str) -> Vec<(String, String)> {
    s.split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect()
}

fn percent_decode(s: &str) -> String {
    fn hex(b: u8) -> Option<u8> {
        match b {
            b'0'..=b'9' => Some(b - b'0'),
            b'a'..=b'f' => Some(b - b'a' + 10),
            b'A'..=b'F' => Some(b - b'A' + 10),
            _ => None,
        }
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => match bytes
                .get(i + 1..i + 3)
                .and_then(|h| Some((hex(h[0])? << 4) | hex(h[1])?))
            {
                Some(b) => {
                    out.push(b);
                    i += 2;
                }
                // Malformed escapes pass through literally rather than failing the request.
                None => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
