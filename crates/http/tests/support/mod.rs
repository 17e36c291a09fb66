//! In-process servers on 127.0.0.1:0 for the integration and timing tests.

// Shared by two test binaries, each of which uses only part of it.
#![allow(dead_code)]

use std::convert::Infallible;
use std::future::Future;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rk6_http::{Client, ClientConfig, Request, Response};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Parses a URL (tests only use valid ones).
pub fn url(s: &str) -> url::Url {
    url::Url::parse(s).unwrap()
}

/// A client with default settings.
pub fn client() -> Client {
    Client::new(Arc::new(ClientConfig::default()))
}

/// A client with a custom config.
pub fn client_with(cfg: ClientConfig) -> Client {
    Client::new(Arc::new(cfg))
}

/// GET `u` and return the response.
pub async fn get(c: &mut Client, u: &str) -> Response {
    c.send(Request::get(url(u))).await
}

/// Milliseconds as f64, for readable assertions.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Asserts `d` is within [want - 5ms, want + slack].
#[track_caller]
pub fn near(what: &str, d: Duration, want_ms: f64, slack_ms: f64) {
    let got = ms(d);
    eprintln!("{what}: {got:.2}ms (want ~{want_ms}ms)");
    assert!(
        got >= want_ms - 5.0 && got <= want_ms + slack_ms,
        "{what}: got {got:.1}ms, want ~{want_ms}ms (+{slack_ms})"
    );
}

/// Asserts `d` is essentially zero.
#[track_caller]
pub fn zeroish(what: &str, d: Duration) {
    assert!(ms(d) < 5.0, "{what}: got {:.2}ms, want ~0", ms(d));
}

// ---------- hyper test server ----------

/// A running test server and how many TCP connections it accepted.
pub struct TestServer {
    pub addr: SocketAddr,
    pub conns: Arc<AtomicUsize>,
}

impl TestServer {
    /// `http://127.0.0.1:port{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// Connections accepted so far.
    pub fn conns(&self) -> usize {
        self.conns.load(Ordering::SeqCst)
    }
}

fn compress(kind: &str, data: &[u8]) -> Vec<u8> {
    match kind {
        "gzip" => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        "deflate" => {
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        "br" => {
            let mut out = Vec::new();
            {
                let mut w = brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
                w.write_all(data).unwrap();
            }
            out
        }
        "zstd" => zstd::encode_all(data, 3).unwrap(),
        _ => unreachable!(),
    }
}

type Resp = hyper::Response<Full<Bytes>>;

fn resp(status: u16, headers: &[(&str, &str)], body: impl Into<Bytes>) -> Resp {
    let mut b = hyper::Response::builder().status(status);
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    b.body(Full::new(body.into())).unwrap()
}

/// The routes every test server knows.
async fn route(req: hyper::Request<Incoming>) -> Result<Resp, Infallible> {
    let path = req.uri().path().to_owned();
    let method = req.method().to_string();
    let version = format!("{:?}", req.version());
    let mut head = format!("{method} {} {version}\n", req.uri());
    for (k, v) in req.headers() {
        head.push_str(&format!("{}: {}\n", k, v.to_str().unwrap_or("?")));
    }
    let cookie = req
        .headers()
        .get("cookie")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let body = req
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let r = match path.as_str() {
        "/echo" => {
            head.push('\n');
            let mut out = head.into_bytes();
            out.extend_from_slice(&body);
            resp(200, &[("content-type", "text/plain")], out)
        }
        "/404" => resp(404, &[], "nope"),
        "/multi" => resp(
            200,
            &[("x-multi", "a"), ("x-multi", "b"), ("x-lower-case", "v")],
            "m",
        ),
        "/setcookie" => resp(
            200,
            &[
                ("set-cookie", "a=1; Path=/"),
                ("set-cookie", "b=2; Path=/; HttpOnly"),
            ],
            "set",
        ),
        "/cookies" => resp(200, &[], cookie),
        "/redirect-cookie" => resp(
            302,
            &[("set-cookie", "r=9; Path=/"), ("location", "/cookies")],
            "",
        ),
        "/close" => resp(200, &[("connection", "close")], "bye"),
        "/bad-gzip" => resp(200, &[("content-encoding", "gzip")], "definitely not gzip"),
        "/big" => resp(200, &[], vec![b'x'; 1 << 20]),
        p if p.starts_with("/enc/") => {
            let kind = &p[5..];
            resp(
                200,
                &[("content-encoding", kind)],
                compress(kind, b"hello compressed world"),
            )
        }
        p if p.starts_with("/status/") => {
            let (code, to) = p[8..].split_once('/').unwrap_or((&p[8..], "echo"));
            resp(
                code.parse().unwrap(),
                &[("location", &format!("/{to}"))],
                "moved",
            )
        }
        p if p.starts_with("/chain/") => {
            let n: u32 = p[7..].parse().unwrap();
            if n == 0 {
                resp(200, &[], "end of chain")
            } else {
                resp(302, &[("location", &format!("/chain/{}", n - 1))], "")
            }
        }
        _ => resp(404, &[], "unknown route"),
    };
    Ok(r)
}

/// Starts the HTTP/1.1 test server.
pub async fn http_server() -> TestServer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let conns = Arc::new(AtomicUsize::new(0));
    let counter = conns.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            counter.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service_fn(route))
                    .await;
            });
        }
    });
    TestServer { addr, conns }
}

// ---------- raw misbehaving servers ----------

/// Accepts connections forever and runs `handler(stream, connection_index)` for each.
pub async fn raw_server<F, Fut>(handler: F) -> TestServer
where
    F: Fn(TcpStream, usize) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let conns = Arc::new(AtomicUsize::new(0));
    let counter = conns.clone();
    let handler = Arc::new(handler);
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let n = counter.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(handler(stream, n));
        }
    });
    TestServer { addr, conns }
}

/// Reads one request head (and a body per Content-Length); None on EOF.
pub async fn read_request(s: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        match s.read(&mut byte).await {
            Ok(1) => buf.push(byte[0]),
            _ => return None,
        }
    }
    let head = String::from_utf8_lossy(&buf).into_owned();
    let len = content_length_of(&head);
    let mut body = vec![0; len];
    s.read_exact(&mut body).await.ok()?;
    Some((head, body))
}

/// Reads only the head; the caller deals with any body.
pub async fn read_head(s: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        match s.read(&mut byte).await {
            Ok(1) => buf.push(byte[0]),
            _ => return None,
        }
    }
    Some(String::from_utf8_lossy(&buf).into_owned())
}

/// Content-Length of a request head, 0 if absent.
pub fn content_length_of(head: &str) -> usize {
    head.lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0)
}

/// A minimal `200 OK` with a body.
pub fn ok_response(body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Closes with RST instead of FIN (a zero linger does not block on drop).
#[allow(deprecated)]
pub fn reset(s: TcpStream) {
    let _ = s.set_linger(Some(Duration::ZERO));
    drop(s);
}

// ---------- TLS ----------

/// A CA and a leaf it signed.
pub struct Pki {
    pub ca_pem: Vec<u8>,
    pub leaf_der: CertificateDer<'static>,
    pub leaf_key: Vec<u8>,
}

/// Makes a CA and a leaf for `names` (IP literals become IP SANs).
pub fn pki(names: &[&str]) -> Pki {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, KeyUsagePurpose};
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "rk6 test CA");
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_key = KeyPair::generate().unwrap();
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let leaf =
        CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
    let leaf_key = KeyPair::generate().unwrap();
    let leaf_cert = leaf.signed_by(&leaf_key, &ca_cert, &ca_key).unwrap();
    Pki {
        ca_pem: ca_cert.pem().into_bytes(),
        leaf_der: leaf_cert.der().clone(),
        leaf_key: leaf_key.serialize_der(),
    }
}

/// Options of [`tls_server`].
pub struct TlsOpts {
    pub alpn_h2: bool,
    pub handshake_delay: Duration,
}

/// A TLS acceptor presenting the leaf of `pki` and offering `alpn`.
pub fn tls_acceptor(pki: &Pki, alpn: &[&[u8]]) -> tokio_rustls::TlsAcceptor {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![pki.leaf_der.clone()],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(pki.leaf_key.clone())),
        )
        .unwrap();
    cfg.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    tokio_rustls::TlsAcceptor::from(Arc::new(cfg))
}

/// A TLS server speaking the test routes over HTTP/1.1 or HTTP/2 (by ALPN).
pub async fn tls_server(pki: &Pki, opts: TlsOpts) -> TestServer {
    let alpn: &[&[u8]] = if opts.alpn_h2 {
        &[b"h2", b"http/1.1"]
    } else {
        &[b"http/1.1"]
    };
    let acceptor = tls_acceptor(pki, alpn);
    let delay = opts.handshake_delay;
    raw_server(move |stream, _| {
        let acceptor = acceptor.clone();
        async move {
            if !delay.is_zero() {
                // Hold the ServerHello back from the moment the ClientHello is in, so the
                // whole delay falls inside the client's handshake.
                let mut probe = [0u8; 1];
                let _ = stream.peek(&mut probe).await;
                tokio::time::sleep(delay).await;
            }
            let Ok(tls) = acceptor.accept(stream).await else {
                return;
            };
            let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
            let io = TokioIo::new(tls);
            if h2 {
                let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                    .serve_connection(io, service_fn(route))
                    .await;
            } else {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(io, service_fn(route))
                    .await;
            }
        }
    })
    .await
}

/// `https://127.0.0.1:port{path}`.
pub fn https(s: &TestServer, path: &str) -> String {
    format!("https://{}{}", s.addr, path)
}

/// A client trusting `pki`'s CA.
pub fn tls_client(pki: &Pki) -> Client {
    client_with(ClientConfig {
        extra_root_certs_pem: vec![pki.ca_pem.clone()],
        ..ClientConfig::default()
    })
}

/// Writes all of `data`, ignoring errors (the peer may be gone).
pub async fn write(s: &mut TcpStream, data: &[u8]) {
    let _ = s.write_all(data).await;
    let _ = s.flush().await;
}

/// Timing tests take this for their whole run: the phase bounds are a few percent of an
/// injected delay, which timing tests running beside each other on 2 cores exceeded.
pub static TIMING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
