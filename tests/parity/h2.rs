//! HTTP/2 over TLS (negotiated by ALPN) side by side with k6: protocol, TLS fields, status
//! codes, headers, bodies, `http.batch`, redirects, gzip and cookies must check the same,
//! and the server counts the TLS connections each tool opened.

use std::convert::Infallible;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};

use crate::Dir;

type Resp = Response<Full<Bytes>>;

/// What the server saw, over all connections since it started.
#[derive(Default)]
struct Counts {
    /// TLS handshakes completed.
    conns: AtomicUsize,
    /// Of those, the ones that negotiated `h2`.
    h2_conns: AtomicUsize,
    /// Requests that arrived as HTTP/2.
    h2_requests: AtomicUsize,
    /// The most requests one connection held at once.
    max_streams: AtomicUsize,
}

/// A TLS server on 127.0.0.1 offering `h2` and `http/1.1` by ALPN, with a self-signed
/// certificate (scripts set `insecureSkipTLSVerify`).
pub(crate) struct H2Server {
    addr: SocketAddr,
    counts: Arc<Counts>,
}

impl H2Server {
    pub(crate) fn start() -> H2Server {
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["127.0.0.1".into(), "localhost".into()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let config = crate::support::tls_server_config(&cert, &key, &[b"h2", b"http/1.1"]);
        let acceptor = tokio_rustls::TlsAcceptor::from(config);
        let counts = Arc::new(Counts::default());
        let c = counts.clone();
        let addr = crate::support::accept_loop(Duration::from_secs(120), move |tcp| {
            serve(acceptor.clone(), tcp, c.clone())
        });
        H2Server { addr, counts }
    }

    pub(crate) fn base(&self) -> String {
        format!("https://{}", self.addr)
    }

    pub(crate) fn conns(&self) -> usize {
        self.counts.conns.load(Ordering::SeqCst)
    }

    pub(crate) fn h2_conns(&self) -> usize {
        self.counts.h2_conns.load(Ordering::SeqCst)
    }
}

async fn serve(acceptor: tokio_rustls::TlsAcceptor, tcp: tokio::net::TcpStream, c: Arc<Counts>) {
    let Ok(Ok(tls)) = tokio::time::timeout(Duration::from_secs(10), acceptor.accept(tcp)).await
    else {
        return;
    };
    let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
    c.conns.fetch_add(1, Ordering::SeqCst);
    if h2 {
        c.h2_conns.fetch_add(1, Ordering::SeqCst);
    }
    let in_flight = Arc::new(AtomicUsize::new(0));
    let svc = service_fn(move |req: Request<Incoming>| {
        let (c, in_flight) = (c.clone(), in_flight.clone());
        async move {
            if req.version() == hyper::Version::HTTP_2 {
                c.h2_requests.fetch_add(1, Ordering::SeqCst);
            }
            let n = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            c.max_streams.fetch_max(n, Ordering::SeqCst);
            let resp = handle(req, &in_flight).await;
            in_flight.fetch_sub(1, Ordering::SeqCst);
            Ok::<_, Infallible>(resp)
        }
    });
    let io = TokioIo::new(tls);
    if h2 {
        let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
            .serve_connection(io, svc)
            .await;
    } else {
        let _ = hyper::server::conn::http1::Builder::new()
            .serve_connection(io, svc)
            .await;
    }
}

fn respond(status: u16, body: impl Into<Bytes>) -> Resp {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = StatusCode::from_u16(status).unwrap();
    r
}

fn query(req: &Request<Incoming>) -> Vec<(String, String)> {
    req.uri()
        .query()
        .unwrap_or_default()
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The test endpoints; bodies name the HTTP version the request arrived with, so a script
/// sees the server's view of the protocol as well as its own `res.proto`.
async fn handle(req: Request<Incoming>, in_flight: &AtomicUsize) -> Resp {
    let version = format!("{:?}", req.version());
    let path = req.uri().path().to_string();
    let q = query(&req);
    match path.as_str() {
        "/hello" => {
            let mut r = respond(200, format!("hello over {version}"));
            r.headers_mut()
                .insert("x-served-by", HeaderValue::from_static("h2-test"));
            r.headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
            r
        }
        "/echo" => {
            let content_type = req.headers().get(header::CONTENT_TYPE).cloned();
            let body = match Limited::new(req.into_body(), 1 << 20).collect().await {
                Ok(b) => b.to_bytes(),
                Err(_) => return respond(400, "body too large"),
            };
            let mut r = respond(200, body);
            if let Some(ct) = content_type {
                r.headers_mut().insert(header::CONTENT_TYPE, ct);
            }
            r
        }
        "/redirect" => {
            let mut r = respond(302, "");
            r.headers_mut()
                .insert(header::LOCATION, HeaderValue::from_static("/hello"));
            r
        }
        "/gzip" => {
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            enc.write_all(format!("compressed over {version}").as_bytes())
                .unwrap();
            let mut r = respond(200, enc.finish().unwrap());
            r.headers_mut()
                .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
            r
        }
        "/cookies/set" => {
            let mut r = respond(200, "set");
            for (k, v) in &q {
                let cookie = HeaderValue::from_str(&format!("{k}={v}; Path=/")).unwrap();
                r.headers_mut().append(header::SET_COOKIE, cookie);
            }
            r
        }
        "/cookies" => {
            // HTTP/2 clients may split the Cookie header into one field per cookie.
            let mut cookies: Vec<String> = req
                .headers()
                .get_all(header::COOKIE)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .flat_map(|v| v.split(';'))
                .map(|c| c.trim().to_string())
                .filter(|c| !c.is_empty())
                .collect();
            cookies.sort();
            respond(200, cookies.join("; "))
        }
        _ => {
            if let Some(code) = path.strip_prefix("/status/") {
                return respond(code.parse().unwrap_or(400), format!("status {code}"));
            }
            if path.starts_with("/batch/") {
                // Held until `gate` requests share the connection (at most 500 ms), then
                // `hold` ms more, so completion order differs from request order.
                let arg = |key: &str| -> u64 {
                    q.iter()
                        .find(|(k, _)| k == key)
                        .and_then(|(_, v)| v.parse().ok())
                        .unwrap_or(0)
                };
                let (gate, hold) = (arg("gate") as usize, arg("hold").min(2000));
                for _ in 0..50 {
                    if in_flight.load(Ordering::SeqCst) >= gate {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                tokio::time::sleep(Duration::from_millis(hold)).await;
                return respond(200, format!("{path} {version}"));
            }
            respond(404, "no such endpoint")
        }
    }
}

/// The test script: the batch comes first so each VU starts it on a cold connection pool.
/// `tls` is the k6 version constant to pin (`TLS_1_2` / `TLS_1_3`) and `suite` what it
/// negotiates.
fn script(base: &str, vus: usize, tls: &str, suite: &str) -> String {
    format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
const B = '{base}';
export const options = {{
  insecureSkipTLSVerify: true,
  tlsVersion: http.{tls},
  scenarios: {{ h2: {{ executor: 'per-vu-iterations', vus: {vus}, iterations: 2 }} }},
}};
export default function () {{
  const reqs = [];
  for (let i = 0; i < 6; i++) reqs.push(['GET', `${{B}}/batch/${{i}}?gate=6&hold=${{(6 - i) * 15}}`]);
  reqs.push(['POST', `${{B}}/echo`, 'batched body']);
  const rs = http.batch(reqs);
  check(rs, {{
    'batch all HTTP/2.0': (rs) => rs.every((r) => r.proto === 'HTTP/2.0' && r.status === 200),
    'batch order kept': (rs) => rs.slice(0, 6).every((r, i) => r.body === `/batch/${{i}} HTTP/2.0`),
    'batch post': (rs) => rs[6].body === 'batched body',
  }});

  const r = http.get(`${{B}}/hello`);
  check(r, {{
    'proto HTTP/2.0': (r) => r.proto === 'HTTP/2.0',
    'status 200': (r) => r.status === 200,
    'body': (r) => r.body === 'hello over HTTP/2.0',
    'header': (r) => r.headers['X-Served-By'] === 'h2-test',
    'content type': (r) => r.headers['Content-Type'] === 'text/plain',
    'tls version': (r) => r.tls_version === http.{tls},
    'cipher suite': (r) => r.tls_cipher_suite === '{suite}',
    'url': (r) => r.url === `${{B}}/hello`,
    'timings': (r) => r.timings.duration > 0,
  }});
  check(http.get(`${{B}}/status/404`), {{
    'status 404': (r) => r.status === 404 && r.proto === 'HTTP/2.0' && r.body === 'status 404',
  }});
  check(http.get(`${{B}}/status/500`), {{
    'status 500': (r) => r.status === 500 && r.proto === 'HTTP/2.0' && r.error_code === 1500,
  }});
  check(http.get(`${{B}}/nowhere`), {{ 'unknown path 404': (r) => r.status === 404 }});

  const payload = {{ name: 'h2', list: [1, 2, 3], nested: {{ ok: true }} }};
  const post = http.post(`${{B}}/echo`, JSON.stringify(payload), {{
    headers: {{ 'Content-Type': 'application/json' }},
  }});
  check(post, {{
    'post echoed json': (r) => r.json('name') === 'h2' && r.json('list.2') === 3 && r.json('nested.ok') === true,
    'post content type': (r) => r.headers['Content-Type'] === 'application/json',
    'post proto': (r) => r.proto === 'HTTP/2.0' && r.request.method === 'POST',
  }});

  const red = http.get(`${{B}}/redirect`);
  check(red, {{
    'redirect followed': (r) => r.status === 200 && r.url === `${{B}}/hello` && r.body === 'hello over HTTP/2.0',
    'redirect proto': (r) => r.proto === 'HTTP/2.0',
  }});
  const noFollow = http.get(`${{B}}/redirect`, {{ redirects: 0 }});
  check(noFollow, {{
    'redirect not followed': (r) => r.status === 302 && r.headers['Location'] === '/hello',
  }});

  const gz = http.get(`${{B}}/gzip`);
  check(gz, {{
    'gzip decoded': (r) => r.body === 'compressed over HTTP/2.0',
    'gzip proto': (r) => r.proto === 'HTTP/2.0',
  }});

  const set = http.get(`${{B}}/cookies/set?flavor=oat&size=big`);
  check(set, {{
    'cookies in response': (r) => r.cookies.flavor[0].value === 'oat' && r.cookies.size[0].value === 'big',
  }});
  check(http.get(`${{B}}/cookies`), {{
    'cookies sent back': (r) => r.body === 'flavor=oat; size=big',
  }});
  check(http.get(`${{B}}/cookies`, {{ cookies: {{ extra: 'x' }} }}), {{
    'request cookie added': (r) => r.body === 'extra=x; flavor=oat; size=big',
  }});
}}
"#
    )
}

#[test]
fn http2_over_tls13_agrees_with_k6() {
    compare_h2("parity-h2-tls13", "TLS_1_3", "TLS_AES_128_GCM_SHA256");
}

#[test]
fn http2_over_tls12_agrees_with_k6() {
    // rcgen's default key is ECDSA P-256.
    compare_h2(
        "parity-h2-tls12",
        "TLS_1_2",
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    );
}

/// Runs the script under k6 then rk6 against one server: every check passes under both,
/// the same number of requests arrive over HTTP/2, and rk6 uses one connection per VU.
fn compare_h2(name: &str, tls: &str, suite: &str) {
    let Some(bin) = super::k6() else { return };
    let vus = 2;
    let srv = H2Server::start();
    let dir = Dir::new(name);
    let path = dir.write("script.js", &script(&srv.base(), vus, tls, suite));

    let k6 = super::run_k6(&bin, &path, &dir);
    let (k6_conns, k6_h2_conns) = (srv.conns(), srv.h2_conns());
    let k6_h2_requests = srv.counts.h2_requests.load(Ordering::SeqCst);
    let k6_streams = srv.counts.max_streams.swap(0, Ordering::SeqCst);

    let rk6 = super::run_rk6(&path, &dir);
    let rk6_conns = srv.conns() - k6_conns;
    let rk6_h2_conns = srv.h2_conns() - k6_h2_conns;
    let rk6_h2_requests = srv.counts.h2_requests.load(Ordering::SeqCst) - k6_h2_requests;
    let rk6_streams = srv.counts.max_streams.load(Ordering::SeqCst);

    assert_eq!(rk6.code, k6.code, "{name}: exit codes differ");
    let checks = super::checks(&k6.export);
    assert_eq!(super::checks(&rk6.export), checks, "checks differ");
    assert_eq!(checks.len(), 26, "{checks:?}");
    for (check, passes, fails) in &checks {
        assert_eq!(
            (*passes, *fails),
            (2 * vus as u64, 0),
            "k6 and rk6: {check}"
        );
    }
    let reqs = |e| super::count(e, "http_reqs");
    assert_eq!(reqs(&rk6.export), reqs(&k6.export), "http_reqs differ");
    // 7 batched + 11 single requests + 1 redirect hop, per iteration.
    assert_eq!(reqs(&rk6.export), 19.0 * 2.0 * vus as f64);
    assert_eq!(rk6_h2_requests, k6_h2_requests, "requests over HTTP/2");
    assert_eq!(rk6_h2_requests, 19 * 2 * vus);

    eprintln!(
        "{name}: TLS connections: k6 {k6_conns} ({k6_h2_conns} h2, at most {k6_streams} streams at once), \
         rk6 {rk6_conns} ({rk6_h2_conns} h2, at most {rk6_streams} streams at once)"
    );
    // rk6 multiplexes each VU's requests, the cold batch included, on one connection. k6 1.1
    // (Go) dials one TLS connection per request of the cold batch and closes all but one
    // after ALPN (9 to 12 for 2 VUs here), still sending every request over a single one; that
    // depends on Go's dial races, so only rk6's count is asserted exactly.
    assert_eq!(
        rk6_h2_conns, rk6_conns,
        "every rk6 connection negotiated h2"
    );
    assert_eq!(rk6_conns, vus, "one connection per VU");
    assert_eq!(
        rk6_streams, 6,
        "batchPerHost (6) streams at once on one connection"
    );
    assert_eq!(k6_h2_conns, k6_conns, "every k6 connection negotiated h2");
    assert!(k6_conns >= vus, "k6 opened {k6_conns} connections");
}
