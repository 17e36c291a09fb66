//! Requests of one VU at the same time (`http.batch`, `http.asyncRequest`) and h2c, measured
//! by a server that counts how many requests it holds at once.

mod nginx;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::Value;

use crate::{count, metric, rk6, run_export, Dir};

/// Server-side counters.
#[derive(Default)]
struct Counts {
    in_flight: AtomicUsize,
    max: AtomicUsize,
    conns: AtomicUsize,
    h2_requests: AtomicUsize,
}

/// A server that holds each request until `?gate=N` requests are in flight (at most 500 ms),
/// then answers with its path after `?hold=MS` more milliseconds; `GET /max` answers the
/// most requests held at once since the previous `/max` (itself not counted). Speaks
/// HTTP/1.1, or only prior-knowledge HTTP/2 when `h2c`. Several ports may share one count.
pub(crate) struct GateServer {
    addrs: Vec<SocketAddr>,
    counts: Arc<Counts>,
}

impl GateServer {
    pub(crate) fn start(h2c: bool) -> GateServer {
        Self::start_ports(h2c, 1)
    }

    /// `ports` listeners (distinct hosts for `batchPerHost`) counting together.
    pub(crate) fn start_ports(h2c: bool, ports: usize) -> GateServer {
        let counts = Arc::new(Counts::default());
        let mut addrs = Vec::new();
        for _ in 0..ports {
            addrs.push(Self::listen(h2c, counts.clone()));
        }
        GateServer { addrs, counts }
    }

    fn listen(h2c: bool, c: Arc<Counts>) -> SocketAddr {
        crate::support::accept_loop(Duration::from_secs(60), move |stream| {
            c.conns.fetch_add(1, Ordering::SeqCst);
            let c = c.clone();
            async move {
                let svc = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                    let c = c.clone();
                    async move { Ok::<_, Infallible>(gate(&c, req).await) }
                });
                let io = TokioIo::new(stream);
                if h2c {
                    let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                        .serve_connection(io, svc)
                        .await;
                } else {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, svc)
                        .await;
                }
            }
        })
    }

    /// `http://host:port` of the first listener.
    pub(crate) fn base(&self) -> String {
        self.base_of(0)
    }

    /// `http://host:port` of listener `i`.
    pub(crate) fn base_of(&self, i: usize) -> String {
        format!("http://{}", self.addrs[i])
    }

    fn max(&self) -> usize {
        self.counts.max.load(Ordering::SeqCst)
    }

    pub(crate) fn conns(&self) -> usize {
        self.counts.conns.load(Ordering::SeqCst)
    }
}

async fn gate(
    c: &Counts,
    req: hyper::Request<hyper::body::Incoming>,
) -> hyper::Response<Full<Bytes>> {
    let query = |key: &str| -> u64 {
        req.uri()
            .query()
            .unwrap_or_default()
            .split('&')
            .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    if req.uri().path() == "/max" {
        let max = c.max.swap(0, Ordering::SeqCst);
        return hyper::Response::new(Full::new(Bytes::from(max.to_string())));
    }
    let (gate, hold) = (query("gate") as usize, query("hold").min(2000));
    if req.version() == hyper::Version::HTTP_2 {
        c.h2_requests.fetch_add(1, Ordering::SeqCst);
    }
    let n = c.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    c.max.fetch_max(n, Ordering::SeqCst);
    for _ in 0..50 {
        if c.in_flight.load(Ordering::SeqCst) >= gate {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_millis(hold)).await;
    c.in_flight.fetch_sub(1, Ordering::SeqCst);
    hyper::Response::new(Full::new(Bytes::from(req.uri().path().to_owned())))
}

/// Runs a script whose checks must all pass; returns the summary export.
fn run_checked(dir: &Dir, script: &str) -> Value {
    let (run, export) = run_export(dir, script, &[]);
    run.assert_code(0);
    assert_eq!(
        metric(&export, "checks")["fails"].as_f64(),
        Some(0.0),
        "failed checks\n{}\n{}",
        run.stdout,
        run.stderr
    );
    export
}

#[test]
fn batch_runs_batch_per_host_requests_at_once_and_keeps_order() {
    let srv = GateServer::start(false);
    let dir = Dir::new("batch-concurrency");
    // Later requests answer sooner, so completion order is the reverse of request order.
    let script = format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
export const options = {{ iterations: 1 }};
export default function () {{
  const reqs = [];
  for (let i = 0; i < 10; i++) reqs.push('{base}/r' + i + '?gate=10&hold=' + (10 - i) * 20);
  const rs = http.batch(reqs);
  check(rs, {{
    'in order': (rs) => rs.map((r) => r.body).join() === reqs.map((_, i) => '/r' + i).join(),
    'all 200': (rs) => rs.every((r) => r.status === 200),
  }});
  const obj = http.batch({{ b: '{base}/b?hold=50', a: '{base}/a' }});
  check(obj, {{ 'keyed': (o) => o.a.body === '/a' && o.b.body === '/b' }});
}}
"#,
        base = srv.base()
    );
    let export = run_checked(&dir, &script);
    assert_eq!(
        count(&export, "http_reqs"),
        12.0,
        "every request has samples"
    );
    assert_eq!(srv.max(), 6, "k6's default batchPerHost is 6");

    let srv = GateServer::start(false);
    let script = format!(
        r#"
import http from 'k6/http';
export const options = {{ iterations: 1, batch: 2 }};
export default function () {{
  const reqs = [];
  for (let i = 0; i < 6; i++) reqs.push('{base}/r' + i + '?gate=6');
  http.batch(reqs);
}}
"#,
        base = srv.base()
    );
    let (run, export) = run_export(&dir, &script, &[]);
    run.assert_code(0);
    assert_eq!(count(&export, "http_reqs"), 6.0);
    assert_eq!(srv.max(), 2, "batch: 2 caps the whole call");
}

#[test]
fn async_requests_overlap_on_the_network() {
    let srv = GateServer::start(false);
    let dir = Dir::new("async-overlap");
    let script = format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
export const options = {{ iterations: 1 }};
export default async function () {{
  const a = http.asyncRequest('GET', '{base}/a?gate=3&hold=60');
  const b = http.asyncRequest('GET', '{base}/b?gate=3&hold=30');
  const c = http.asyncRequest('POST', '{base}/c?gate=3', 'x');
  const rs = await Promise.all([a, b, c]);
  check(rs, {{ 'bodies': (rs) => rs.map((r) => r.body).join() === '/a,/b,/c' }});
  // A synchronous request made while asyncRequests run does not stop them.
  const d = http.asyncRequest('GET', '{base}/d?gate=2');
  const e = http.get('{base}/e?gate=2');
  check(await d, {{ 'd': (r) => r.body === '/d' && e.body === '/e' }});
}}
"#,
        base = srv.base()
    );
    let export = run_checked(&dir, &script);
    assert_eq!(count(&export, "http_reqs"), 5.0);
    assert_eq!(
        srv.max(),
        3,
        "the three asyncRequests were in flight together"
    );
}

#[test]
fn h2c_option_param_and_validation() {
    let srv = GateServer::start(true);
    let dir = Dir::new("h2c");
    let script = format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
export const options = {{ iterations: 1, h2c: true, batchPerHost: 10 }};
export default function () {{
  const r = http.get('{base}/one');
  check(r, {{ 'h2c': (r) => r.status === 200 && r.proto === 'HTTP/2.0' && r.body === '/one' }});
  const reqs = [];
  for (let i = 0; i < 10; i++) reqs.push('{base}/m' + i + '?gate=10');
  const rs = http.batch(reqs);
  check(rs, {{ 'multiplexed': (rs) => rs.every((r, i) => r.proto === 'HTTP/2.0' && r.body === '/m' + i) }});
}}
"#,
        base = srv.base()
    );
    let export = run_checked(&dir, &script);
    assert_eq!(count(&export, "http_reqs"), 11.0);
    assert_eq!(srv.max(), 10, "ten streams at once");
    assert_eq!(srv.conns(), 1, "all on one h2c connection");
    assert_eq!(srv.counts.h2_requests.load(Ordering::SeqCst), 11);

    // Per request, without the option; a bad param type is a clear error.
    let srv = GateServer::start(true);
    let script = format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
export const options = {{ iterations: 1 }};
export default function () {{
  const r = http.get('{base}/p', {{ h2c: true }});
  check(r, {{ 'param': (r) => r.proto === 'HTTP/2.0' && r.body === '/p' }});
  let msg = '';
  try {{ http.get('{base}/p', {{ h2c: 'yes' }}); }} catch (e) {{ msg = String(e); }}
  check(msg, {{ 'bad param': (m) => m.includes('the h2c param must be a boolean') }});
}}
"#,
        base = srv.base()
    );
    run_checked(&dir, &script);

    let path = dir.write(
        "bad.js",
        "export const options = { h2c: 'yes' };\nexport default function () {}\n",
    );
    let run = rk6(&["run", "-q", path.to_str().unwrap()], &dir.0);
    run.assert_code(104);
    assert!(
        run.stderr
            .contains("h2c must be a boolean (true or false), got \\\"yes\\\"")
            || run
                .stderr
                .contains("h2c must be a boolean (true or false), got \"yes\""),
        "{}",
        run.stderr
    );
    let path = dir.write(
        "badbatch.js",
        "export const options = { batch: 'x' };\nexport default function () {}\n",
    );
    let run = rk6(&["run", "-q", path.to_str().unwrap()], &dir.0);
    run.assert_code(104);
    assert!(
        run.stderr.contains("batch must be a non-negative integer"),
        "{}",
        run.stderr
    );
}

#[test]
fn bench_h2c_speaks_prior_knowledge_http2() {
    let srv = GateServer::start(true);
    let dir = Dir::new("bench-h2c");
    let url = format!("{}/get", srv.base());
    let run = rk6(
        &[
            "bench", "--h2c", "-c", "2", "-d", "1s", "--json", "out.json", &url,
        ],
        &dir.0,
    );
    run.assert_code(0);
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path("out.json")).unwrap()).unwrap();
    let n = json["requests"].as_u64().unwrap();
    assert!(n > 0, "{json}");
    assert_eq!(json["status_codes"]["200"], n, "{json}");
    assert_eq!(srv.conns(), 2, "one h2c connection per bench connection");
    assert!(srv.counts.h2_requests.load(Ordering::SeqCst) as u64 >= n);

    let run = rk6(
        &["bench", "--h2c", "-d", "1s", "https://127.0.0.1:1/"],
        &dir.0,
    );
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains("--h2c needs an http:// URL"),
        "{}",
        run.stderr
    );
}
