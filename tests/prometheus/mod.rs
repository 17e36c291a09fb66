//! `-o experimental-prometheus-rw` against a real Prometheus (Debian's `prometheus`
//! package; CI installs it): what Prometheus stores must equal the end-of-test summary,
//! with Trends as stat gauges and as native histograms, and native histograms of several
//! runners summed in Prometheus give the whole test's percentiles.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::recorder::{Recorder, Reply};
use crate::support::TestServer;
use crate::{count, metric, rk6_env, Dir, Run};

/// The prometheus binary, or `None` when it is not installed (CI installs it and then
/// requires it).
fn prometheus_bin() -> Option<String> {
    let candidates = [
        std::env::var("PROMETHEUS_BIN").ok(),
        Some("prometheus".to_string()),
        Some("/usr/bin/prometheus".to_string()),
    ];
    let found = candidates.into_iter().flatten().find(|bin| {
        Command::new(bin)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if found.is_none() && std::env::var_os("CI").is_some() {
        panic!(
            "prometheus is required in CI for the remote-write test (apt-get install prometheus)"
        );
    }
    if found.is_none() {
        eprintln!("prometheus not installed: skipping the Prometheus remote-write test");
    }
    found
}

/// `rk6 run -q -o experimental-prometheus-rw SCRIPT` in `dir` with `env`.
fn run_rw(dir: &Dir, script: &std::path::Path, env: &[(&str, &str)]) -> Run {
    rk6_env(
        &[
            "run",
            "-q",
            "-o",
            "experimental-prometheus-rw",
            script.to_str().unwrap(),
        ],
        &dir.0,
        env,
    )
}

/// A Prometheus with the remote-write receiver on 127.0.0.1, killed on drop.
struct Prometheus {
    child: Child,
    port: u16,
}

impl Prometheus {
    fn start(bin: &str, dir: &Dir) -> Prometheus {
        // No scrape targets: the only data is what rk6 writes.
        let config = dir.write("prometheus.yml", "global:\n  scrape_interval: 1h\n");
        // Another process may grab the free port between probe and bind: try a few.
        for attempt in 0..3 {
            let port = crate::support::free_port();
            let log = std::fs::File::create(dir.path(&format!("prometheus-{attempt}.log")))
                .expect("log file");
            let child = Command::new(bin)
                .arg("--web.enable-remote-write-receiver")
                .arg("--enable-feature=native-histograms")
                .arg(format!("--web.listen-address=127.0.0.1:{port}"))
                .arg(format!(
                    "--storage.tsdb.path={}",
                    dir.path(&format!("data-{attempt}")).display()
                ))
                .arg(format!("--config.file={}", config.display()))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .expect("start prometheus");
            let mut prom = Prometheus { child, port };
            let deadline = Instant::now() + Duration::from_secs(60);
            while Instant::now() < deadline {
                if prom.child.try_wait().ok().flatten().is_some() {
                    break;
                }
                if get(port, "/-/ready").is_some_and(|(status, _)| status == 200) {
                    return prom;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = prom.child.kill();
            let _ = prom.child.wait();
        }
        let log = std::fs::read_to_string(dir.path("prometheus-2.log")).unwrap_or_default();
        panic!("prometheus did not become ready:\n{log}");
    }

    fn write_url(&self) -> String {
        format!("http://127.0.0.1:{}/api/v1/write", self.port)
    }

    /// The instant-query result vector for `query`.
    fn query(&self, query: &str) -> Vec<Value> {
        let path = format!("/api/v1/query?query={}", encode(query));
        let (status, body) = get(self.port, &path).expect("query prometheus");
        let v: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        assert_eq!(status, 200, "{query}: {body}");
        v["data"]["result"].as_array().cloned().unwrap_or_default()
    }

    /// The value of a query that must return exactly one series.
    fn value(&self, query: &str) -> f64 {
        let result = self.query(query);
        assert_eq!(result.len(), 1, "{query}: {result:?}");
        result[0]["value"][1]
            .as_str()
            .and_then(|s| s.parse().ok())
            .unwrap_or(f64::NAN)
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A plain HTTP/1.0 GET to 127.0.0.1:`port`: status and body.
fn get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n").ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let status = text.split(' ').nth(1)?.parse().ok()?;
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    Some((status, body.to_string()))
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'.' | b'-' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn script(base: &str, testid: &str) -> String {
    format!(
        r#"
import http from 'k6/http';
import {{ sleep }} from 'k6';
import {{ Counter, Trend }} from 'k6/metrics';
const hits = new Counter('my_hits');
const latency = new Trend('my_latency', true);
export const options = {{
  vus: 2, iterations: 16,
  tags: {{ testid: '{testid}' }},
  summaryTrendStats: ['avg', 'min', 'max', 'p(99)', 'count'],
}};
export default function () {{
  http.get('{base}/get');
  hits.add(2, {{ kind: 'alpha' }});
  hits.add(1, {{ kind: 'beta' }});
  latency.add(100);
  sleep(0.2);
}}
"#
    )
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn remote_write_matches_the_summary_in_a_real_prometheus() {
    let Some(bin) = prometheus_bin() else {
        return;
    };
    let dir = Dir::new("prometheus-rw");
    let prom = Prometheus::start(&bin, &dir);
    let srv = TestServer::start();
    let url = prom.write_url();

    // ~1.6 s of iterations with a 1 s push interval: pushes during the run and at the end.
    let path = dir.write("script.js", &script(&srv.url(""), "live"));
    let export_path = dir.path("summary.json");
    let run = rk6_env(
        &[
            "run",
            "-q",
            "-o",
            "experimental-prometheus-rw",
            "--summary-export",
            export_path.to_str().unwrap(),
            path.to_str().unwrap(),
        ],
        &dir.0,
        &[
            ("K6_PROMETHEUS_RW_SERVER_URL", url.as_str()),
            ("K6_PROMETHEUS_RW_PUSH_INTERVAL", "1s"),
            ("K6_PROMETHEUS_RW_TREND_STATS", "p(99),max,count"),
        ],
    );
    run.assert_code(0);
    assert!(
        !run.stderr.contains("level=error"),
        "push errors: {}",
        run.stderr
    );
    let export: Value =
        serde_json::from_str(&std::fs::read_to_string(&export_path).unwrap()).unwrap();

    let reqs = count(&export, "http_reqs");
    assert_eq!(reqs, 16.0);
    assert_eq!(
        prom.value(r#"sum(k6_http_reqs_total{testid="live"})"#),
        reqs
    );
    assert_eq!(
        prom.value(r#"k6_iterations_total{testid="live"}"#),
        count(&export, "iterations")
    );
    // Tags are labels: one series per `kind`, cumulative over the whole run.
    assert_eq!(
        prom.value(r#"k6_my_hits_total{testid="live",kind="alpha"}"#),
        32.0
    );
    assert_eq!(
        prom.value(r#"k6_my_hits_total{testid="live",kind="beta"}"#),
        16.0
    );
    assert_eq!(prom.value(r#"k6_http_req_failed_rate{testid="live"}"#), 0.0);
    // Every request hits the same URL and status, so http_req_duration is one series
    // whose stats equal the summary's (in seconds, as k6 pushes time metrics).
    let duration = metric(&export, "http_req_duration");
    let labels = prom.query(r#"k6_http_req_duration_p99{testid="live"}"#);
    assert_eq!(labels.len(), 1, "{labels:?}");
    let l = &labels[0]["metric"];
    assert_eq!(l["method"], "GET", "{l}");
    assert_eq!(l["status"], "200", "{l}");
    assert_eq!(l["scenario"], "default", "{l}");
    let p99 = prom.value(r#"k6_http_req_duration_p99{testid="live"}"#);
    let want = duration["p(99)"].as_f64().unwrap() / 1000.0;
    assert!(close(p99, want), "p99 {p99} != {want}");
    let max = prom.value(r#"k6_http_req_duration_max{testid="live"}"#);
    let want = duration["max"].as_f64().unwrap() / 1000.0;
    assert!(close(max, want), "max {max} != {want}");
    // k6 divides every stat of a time Trend by 1000, its count too.
    assert!(close(
        prom.value(r#"k6_http_req_duration_count{testid="live"}"#),
        reqs / 1000.0
    ));
    assert!(prom
        .query(r#"k6_http_req_duration_min{testid="live"}"#)
        .is_empty());
    assert_eq!(prom.value(r#"k6_my_latency_p99{testid="live"}"#), 0.1);

    // Trends as native histograms: k6's bucket layout (schema 3, bounds read from k6's
    // own pushes), counts and sums equal to the summary.
    let path = dir.write("native.js", &script(&srv.url(""), "native"));
    let export_path = dir.path("native-summary.json");
    // Through k6 2.1's feature flag (release notes v2.1.0, #6055); the runners below use
    // the legacy variable it replaced.
    let run = rk6_env(
        &[
            "run",
            "-q",
            "--features",
            "native-histograms",
            "-o",
            "experimental-prometheus-rw",
            "--summary-export",
            export_path.to_str().unwrap(),
            path.to_str().unwrap(),
        ],
        &dir.0,
        &[
            ("K6_PROMETHEUS_RW_SERVER_URL", url.as_str()),
            ("K6_PROMETHEUS_RW_PUSH_INTERVAL", "1s"),
        ],
    );
    run.assert_code(0);
    assert!(!run.stderr.contains("level=error"), "{}", run.stderr);
    let export: Value =
        serde_json::from_str(&std::fs::read_to_string(&export_path).unwrap()).unwrap();
    let latency = prom.query(r#"k6_my_latency_seconds{testid="native"}"#);
    assert_eq!(latency.len(), 1, "{latency:?}");
    let h = &latency[0]["histogram"][1];
    assert_eq!(h["count"], "16", "{h}");
    let sum: f64 = h["sum"].as_str().and_then(|s| s.parse().ok()).unwrap();
    assert!(close(sum, 1.6), "{h}");
    assert_eq!(
        h["buckets"],
        serde_json::json!([[0, "0.0963881765879963", "0.1051120519067143", "16"]]),
        "{h}"
    );
    let reqs = count(&export, "http_reqs");
    let duration = metric(&export, "http_req_duration");
    assert_eq!(
        prom.value(r#"histogram_count(k6_http_req_duration_seconds{testid="native"})"#),
        reqs
    );
    let sum = prom.value(r#"histogram_sum(k6_http_req_duration_seconds{testid="native"})"#);
    let want = duration["avg"].as_f64().unwrap() * reqs / 1000.0;
    assert!((sum - want).abs() <= 1e-6 * want, "sum {sum} != {want}");
    assert!(prom
        .query(r#"k6_http_req_duration_p99{testid="native"}"#)
        .is_empty());

    // With stale markers the series end with the test: an instant query finds nothing,
    // while the stored samples still hold the final values.
    let path = dir.write("stale.js", &script(&srv.url(""), "stale"));
    let run = run_rw(
        &dir,
        &path,
        &[
            ("K6_PROMETHEUS_RW_SERVER_URL", url.as_str()),
            ("K6_PROMETHEUS_RW_PUSH_INTERVAL", "1s"),
            ("K6_PROMETHEUS_RW_STALE_MARKERS", "true"),
        ],
    );
    run.assert_code(0);
    assert!(!run.stderr.contains("level=error"), "{}", run.stderr);
    assert!(prom
        .query(r#"k6_iterations_total{testid="stale"}"#)
        .is_empty());
    assert_eq!(
        prom.value(r#"max_over_time(k6_iterations_total{testid="stale"}[5m])"#),
        16.0
    );
}

#[test]
fn unreachable_endpoint_is_logged_once_and_the_test_still_passes() {
    // A port nobody listens on: bind, read the port, close.
    let port = crate::support::free_port();
    let dir = Dir::new("prometheus-rw-down");
    let path = dir.write(
        "script.js",
        "import { sleep } from 'k6';\nexport const options = { iterations: 4 };\nexport default function () { sleep(0.3); }\n",
    );
    let url = format!("http://127.0.0.1:{port}/api/v1/write");
    let run = run_rw(
        &dir,
        &path,
        &[
            ("K6_PROMETHEUS_RW_SERVER_URL", url.as_str()),
            ("K6_PROMETHEUS_RW_PUSH_INTERVAL", "200ms"),
        ],
    );
    run.assert_code(0);
    let errors = run
        .stderr
        .lines()
        .filter(|l| l.contains("Failed to send the time series data"))
        .count();
    assert_eq!(errors, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("Some time series data did not reach the remote write endpoint")
            && run.stderr.contains("pushes failed"),
        "the failed pushes are counted at the end: {}",
        run.stderr
    );
}

#[test]
fn hanging_endpoint_bounds_the_end_of_the_test() {
    // Accepts every connection and never answers (k6 1.1.0: each push times out after
    // 5 s, logged; the test passes, exit 0).
    use std::sync::atomic::{AtomicUsize, Ordering};
    let held = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = held.clone();
    let port = crate::support::accept_loop(Duration::from_secs(60), move |stream| {
        counter.fetch_add(1, Ordering::SeqCst);
        async move {
            // Read nothing, answer nothing, for longer than the test.
            tokio::time::sleep(Duration::from_secs(60)).await;
            drop(stream);
        }
    })
    .port();
    let dir = Dir::new("prometheus-rw-hanging");
    let path = dir.write(
        "script.js",
        "import { sleep } from 'k6';\nexport const options = { iterations: 4 };\nexport default function () { sleep(0.3); }\n",
    );
    let url = format!("http://127.0.0.1:{port}/api/v1/write");
    let started = Instant::now();
    let run = run_rw(
        &dir,
        &path,
        &[
            ("K6_PROMETHEUS_RW_SERVER_URL", url.as_str()),
            ("K6_PROMETHEUS_RW_PUSH_INTERVAL", "200ms"),
        ],
    );
    let took = started.elapsed();
    run.assert_code(0);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    assert!(run.stdout.contains("iterations"), "summary: {}", run.stdout);
    assert!(
        run.stderr.contains("request timeout")
            && run.stderr.contains("did not complete within 15s"),
        "{}",
        run.stderr
    );
    // The final push waits at most 15 s on top of the 1.2 s test.
    assert!(took < Duration::from_secs(30), "took {took:?}");
    assert!(
        held.load(Ordering::SeqCst) <= 8,
        "one connection per push at most"
    );
}

#[test]
fn bad_settings_fail_at_startup() {
    let dir = Dir::new("prometheus-rw-bad");
    let path = dir.write("script.js", "export default function () {}\n");
    for (key, value, needle) in [
        (
            "K6_PROMETHEUS_RW_SERVER_URL",
            "not a url",
            "invalid K6_PROMETHEUS_RW_SERVER_URL",
        ),
        (
            "K6_PROMETHEUS_RW_TREND_STATS",
            "p(99),mean",
            "invalid trend stat \\\"mean\\\"",
        ),
        (
            "K6_PROMETHEUS_RW_SIGV4_REGION",
            "eu-west-1",
            "not supported by rk6 yet",
        ),
        // k6 v2.3.0 release notes, #6071.
        (
            "K6_PROMETHEUS_RW_LABELS",
            "env=ci,nolabel",
            "the provided label (nolabel) does not respect the expected format <label key>=<value>",
        ),
    ] {
        let run = run_rw(&dir, &path, &[(key, value)]);
        assert_ne!(run.code, 0, "{key}={value}");
        assert!(run.stderr.contains(needle), "{key}: {}", run.stderr);
    }
}

#[test]
fn pushes_carry_protocol_headers_auth_labels_and_stale_markers() {
    use rk6_output::prometheus_rw::wire;

    let receiver = Recorder::start(|_| Reply::new(204, "text/plain", ""));
    let dir = Dir::new("prometheus-rw-fake");
    let path = dir.write(
        "script.js",
        "export const options = { iterations: 3 };\nexport default function () {}\n",
    );
    let url = receiver.url("/api/v1/write");
    let run = run_rw(
        &dir,
        &path,
        &[
            ("K6_PROMETHEUS_RW_SERVER_URL", url.as_str()),
            ("K6_PROMETHEUS_RW_USERNAME", "alice"),
            ("K6_PROMETHEUS_RW_PASSWORD", "pw"),
            ("K6_PROMETHEUS_RW_HEADERS_X-Scope-OrgID", "tenant1"),
            ("K6_PROMETHEUS_RW_LABELS", "env=ci"),
            ("K6_PROMETHEUS_RW_STALE_MARKERS", "true"),
            ("K6_PROMETHEUS_RW_PUSH_INTERVAL", "1h"),
        ],
    );
    run.assert_code(0);
    assert!(!run.stderr.contains("level=error"), "{}", run.stderr);
    let requests = receiver.seen();
    // No interval push within an hour: only the final push and the stale markers.
    assert_eq!(requests.len(), 2, "{requests:?}");
    for req in &requests {
        assert_eq!(
            (
                req.method.as_str(),
                req.target.as_str(),
                req.version.as_str()
            ),
            ("POST", "/api/v1/write", "HTTP/1.1")
        );
        for (name, value) in [
            ("content-encoding", "snappy"),
            ("content-type", "application/x-protobuf"),
            ("x-prometheus-remote-write-version", "0.1.0"),
            // base64("alice:pw")
            ("authorization", "Basic YWxpY2U6cHc="),
            ("x-scope-orgid", "tenant1"),
        ] {
            assert_eq!(req.header(name), value, "{name}: {req:?}");
        }
    }
    let values = wire::decode(&requests[0].body).unwrap();
    let iterations = values
        .timeseries
        .iter()
        .find(|ts| ts.labels.iter().any(|l| l.value == "k6_iterations_total"))
        .expect("k6_iterations_total pushed");
    assert_eq!(iterations.samples[0].value, 3.0);
    let labels: Vec<(&str, &str)> = iterations
        .labels
        .iter()
        .map(|l| (l.name.as_str(), l.value.as_str()))
        .collect();
    assert_eq!(
        labels,
        [
            ("__name__", "k6_iterations_total"),
            ("env", "ci"),
            ("scenario", "default")
        ]
    );
    let stale = wire::decode(&requests[1].body).unwrap();
    assert_eq!(stale.timeseries.len(), values.timeseries.len());
    for ts in &stale.timeseries {
        assert_eq!(ts.samples[0].value.to_bits(), wire::STALE_NAN);
    }
}

/// A remote-write receiver behind TLS with a self-signed certificate on 127.0.0.1,
/// offering `alpn`; records each request's protocol and lower-cased header names and
/// values, and answers 204.
fn tls_receiver(alpn: &[&[u8]]) -> (u16, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use http_body_util::{BodyExt, Full};
    use hyper_util::rt::{TokioExecutor, TokioIo};

    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let acceptor =
        tokio_rustls::TlsAcceptor::from(crate::support::tls_server_config(&cert, &key, alpn));
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = seen.clone();
    let addr = crate::support::accept_loop(Duration::from_secs(60), move |tcp| {
        let acceptor = acceptor.clone();
        let record = record.clone();
        async move {
            let Ok(tls) = acceptor.accept(tcp).await else {
                return;
            };
            let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
            let service =
                hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                    let record = record.clone();
                    async move {
                        let mut line = format!("{:?}", req.version());
                        for (k, v) in req.headers() {
                            line.push_str(&format!("\n{k}: {}", v.to_str().unwrap_or("")));
                        }
                        let _ = req.into_body().collect().await;
                        record.lock().unwrap().push(line.to_lowercase());
                        Ok::<_, std::convert::Infallible>(
                            hyper::Response::builder()
                                .status(204)
                                .body(Full::new(bytes::Bytes::new()))
                                .unwrap(),
                        )
                    }
                });
            let io = TokioIo::new(tls);
            if h2 {
                let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                    .serve_connection(io, service)
                    .await;
            } else {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(io, service)
                    .await;
            }
        }
    });
    (addr.port(), seen)
}

#[test]
fn https_endpoint_needs_a_trusted_certificate_or_insecure_skip_tls_verify() {
    let dir = Dir::new("prometheus-rw-tls");
    let path = dir.write(
        "script.js",
        "export const options = { iterations: 2 };\nexport default function () {}\n",
    );
    let run = |port: u16, insecure: &str| {
        let url = format!("https://127.0.0.1:{port}/api/v1/write");
        run_rw(
            &dir,
            &path,
            &[
                ("K6_PROMETHEUS_RW_SERVER_URL", url.as_str()),
                ("K6_PROMETHEUS_RW_BEARER_TOKEN", "tok"),
                ("K6_PROMETHEUS_RW_INSECURE_SKIP_TLS_VERIFY", insecure),
                ("K6_PROMETHEUS_RW_PUSH_INTERVAL", "1h"),
            ],
        )
    };

    // Verified: the self-signed certificate is refused, once, and the test still passes.
    let (port, seen) = tls_receiver(&[b"http/1.1"]);
    let refused = run(port, "false");
    refused.assert_code(0);
    let errors: Vec<&str> = refused
        .stderr
        .lines()
        .filter(|l| l.contains("Failed to send the time series data"))
        .collect();
    assert_eq!(errors.len(), 1, "{}", refused.stderr);
    assert!(
        errors[0].contains("error=\"x509: unknown authority\""),
        "{}",
        refused.stderr
    );
    assert!(seen.lock().unwrap().is_empty());

    // Skipped verification, over HTTP/1.1 and over HTTP/2 when the server picks it by ALPN.
    for (alpn, version) in [
        (&[&b"http/1.1"[..]][..], "http/1.1"),
        (&[&b"h2"[..], &b"http/1.1"[..]][..], "http/2.0"),
    ] {
        let (port, seen) = tls_receiver(alpn);
        let pushed = run(port, "true");
        pushed.assert_code(0);
        assert!(!pushed.stderr.contains("level=error"), "{}", pushed.stderr);
        let requests = seen.lock().unwrap().clone();
        assert_eq!(requests.len(), 1, "{requests:?}");
        let head = &requests[0];
        assert!(head.starts_with(version), "{head}");
        for h in [
            "content-encoding: snappy",
            "x-prometheus-remote-write-version: 0.1.0",
            "authorization: bearer tok",
            "user-agent: rk6/",
        ] {
            assert!(head.contains(h), "missing {h}: {head}");
        }
    }
}

/// k6 v1.6.0 release notes, #5537: the minimum TLS version, `1.2` allowing TLS 1.2 and
/// any other value asking for TLS 1.3, read as `K6_PROMETHEUS_RW_TLS_MINIMUM_VERSION` (k6's
/// code) or `K6_PROMETHEUS_RW_TLS_MIN_VERSION` (the notes). Unset, rk6 keeps TLS 1.2
/// allowed, as k6 1.1 did (k6 1.2 and later ask for TLS 1.3).
#[test]
fn tls_minimum_version_under_either_name() {
    use crate::tls_options::server::{Ca, Setup, TlsServer};
    let ca = Ca::new("prw-ca");
    let leaf = ca.leaf("localhost", &["localhost"]);
    let server = |versions: Vec<&'static rustls::SupportedProtocolVersion>| {
        let mut setup = Setup::new(&leaf);
        setup.versions = versions;
        TlsServer::start(setup)
    };
    let tls12 = server(vec![&rustls::version::TLS12]);
    let tls13 = server(vec![&rustls::version::TLS13]);
    let dir = Dir::new("prometheus-rw-tls-min");
    let path = dir.write(
        "script.js",
        "export const options = { iterations: 1 };\nexport default function () {}\n",
    );
    let refused = "error=\"remote error: tls: protocol version not supported\"";
    for (srv, setting, pushed) in [
        (&tls12, None, true),
        (
            &tls12,
            Some(("K6_PROMETHEUS_RW_TLS_MINIMUM_VERSION", "1.2")),
            true,
        ),
        (
            &tls12,
            Some(("K6_PROMETHEUS_RW_TLS_MIN_VERSION", "1.2")),
            true,
        ),
        (
            &tls12,
            Some(("K6_PROMETHEUS_RW_TLS_MINIMUM_VERSION", "1.3")),
            false,
        ),
        (
            &tls12,
            Some(("K6_PROMETHEUS_RW_TLS_MIN_VERSION", "1.3")),
            false,
        ),
        // Any value but `1.2` asks for TLS 1.3, as in k6.
        (
            &tls12,
            Some(("K6_PROMETHEUS_RW_TLS_MINIMUM_VERSION", "tls1.2")),
            false,
        ),
        (
            &tls13,
            Some(("K6_PROMETHEUS_RW_TLS_MINIMUM_VERSION", "1.3")),
            true,
        ),
        (&tls13, None, true),
    ] {
        let url = srv.url("localhost", "/api/v1/write");
        let mut env = vec![
            ("K6_PROMETHEUS_RW_SERVER_URL", url.as_str()),
            ("K6_PROMETHEUS_RW_INSECURE_SKIP_TLS_VERIFY", "true"),
            ("K6_PROMETHEUS_RW_PUSH_INTERVAL", "1h"),
        ];
        env.extend(setting);
        let before = srv.handshakes().len();
        let run = run_rw(&dir, &path, &env);
        run.assert_code(0);
        let shakes = srv.handshakes().len() - before;
        if pushed {
            assert!(
                !run.stderr.contains("level=error"),
                "{setting:?}: {}",
                run.stderr
            );
            assert_eq!(shakes, 1, "{setting:?}");
        } else {
            assert!(run.stderr.contains(refused), "{setting:?}: {}", run.stderr);
            assert_eq!(shakes, 0, "{setting:?}");
        }
    }
    assert!(tls12.handshakes().iter().all(|h| h.version == "TLSv1_2"));
    assert!(tls13.handshakes().iter().all(|h| h.version == "TLSv1_3"));
}

/// The schema-3 bucket `(lower, upper]` holding `v` (> 0): bucket `i` is
/// `(2^((i-1)/8), 2^(i/8)]`, the layout rk6 pushes native histograms in.
fn schema3_bucket(v: f64) -> (f64, f64) {
    let i = (v.log2() * 8.0).ceil();
    (((i - 1.0) / 8.0).exp2(), (i / 8.0).exp2())
}

/// Every `http_req_duration` value (ms) in a `-o json` file, with its `instance_id` tag.
fn json_durations(path: &std::path::Path) -> Vec<(String, f64)> {
    let text = std::fs::read_to_string(path).expect("json output");
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "Point" && v["metric"] == "http_req_duration")
        .map(|v| {
            let id = v["data"]["tags"]["instance_id"]
                .as_str()
                .unwrap_or("")
                .to_string();
            (id, v["data"]["value"].as_f64().expect("a number"))
        })
        .collect()
}

/// Three runners of one test, as k6-operator starts them (execution segments, `instance_id`
/// tags), push native histograms to one Prometheus: summed over the instances they hold
/// every request once, and `histogram_quantile` over the sum is the whole test's p(95)
/// within one bucket.
#[test]
fn native_histograms_of_three_runners_give_the_whole_tests_p95() {
    let Some(bin) = prometheus_bin() else {
        return;
    };
    let dir = Dir::new("prometheus-rw-segments");
    let prom = Prometheus::start(&bin, &dir);
    let srv = TestServer::start();
    let url = prom.write_url();
    // Delays spread uniformly over 5–60 ms, so the p(95) sits among many distinct
    // values; `http.url` keeps the URL out of the labels (one series per runner).
    let script = format!(
        r#"
import http from 'k6/http';
export const options = {{
  scenarios: {{
    spread: {{ executor: 'shared-iterations', vus: 9, iterations: 540, maxDuration: '20s' }},
  }},
}};
export default function () {{
  const ms = 5 + Math.floor(Math.random() * 56);
  http.get(http.url`{base}/delay/${{ms}}`);
}}
"#,
        base = srv.url("")
    );
    let path = dir.write("script.js", &script);
    // The three runners k6-operator would start for parallelism 3, at the same time.
    let runs: Vec<Run> = std::thread::scope(|s| {
        let handles: Vec<_> = ["0:1/3", "1/3:2/3", "2/3:1"]
            .iter()
            .enumerate()
            .map(|(i, segment)| {
                let (dir, path, url) = (&dir, &path, &url);
                s.spawn(move || {
                    let json = dir.path(&format!("runner-{}.json", i + 1));
                    rk6_env(
                        &[
                            "run",
                            "-q",
                            "--address",
                            "",
                            "--execution-segment",
                            segment,
                            "--execution-segment-sequence",
                            "0,1/3,2/3,1",
                            "--tag",
                            &format!("instance_id={}", i + 1),
                            // k6-operator's other tag (a `--tag` replaces the script's
                            // `tags`, in k6 as in rk6).
                            "--tag",
                            "testrun_name=segments",
                            "-o",
                            &format!("json={}", json.display()),
                            "-o",
                            "experimental-prometheus-rw",
                            path.to_str().unwrap(),
                        ],
                        &dir.0,
                        &[
                            ("K6_PROMETHEUS_RW_SERVER_URL", url.as_str()),
                            ("K6_PROMETHEUS_RW_PUSH_INTERVAL", "500ms"),
                            ("K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM", "true"),
                        ],
                    )
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for run in &runs {
        run.assert_code(0);
        assert!(!run.stderr.contains("level=error"), "{}", run.stderr);
    }
    let mut samples = Vec::new();
    for i in 1..=3 {
        samples.extend(json_durations(&dir.path(&format!("runner-{i}.json"))));
    }
    assert_eq!(
        samples.len(),
        540,
        "every iteration once over the three segments"
    );

    // One series per runner, each holding exactly that runner's requests.
    let series = r#"k6_http_req_duration_seconds{testrun_name="segments"}"#;
    let per_instance = prom.query(&format!("histogram_count(sum by (instance_id) ({series}))"));
    let mut got: Vec<(String, f64)> = per_instance
        .iter()
        .map(|r| {
            let id = r["metric"]["instance_id"]
                .as_str()
                .unwrap_or("")
                .to_string();
            let v = r["value"][1].as_str().and_then(|s| s.parse().ok()).unwrap();
            (id, v)
        })
        .collect();
    got.sort_by(|a, b| a.0.cmp(&b.0));
    let want: Vec<(String, f64)> = ["1", "2", "3"]
        .iter()
        .map(|id| {
            let n = samples.iter().filter(|(i, _)| i == id).count();
            (id.to_string(), n as f64)
        })
        .collect();
    assert_eq!(got, want, "per-instance counts");
    assert_eq!(
        prom.value(&format!("histogram_count(sum({series}))")),
        540.0
    );
    let sum = prom.value(&format!("histogram_sum(sum({series}))"));
    let want_sum: f64 = samples.iter().map(|(_, v)| v / 1000.0).sum();
    assert!(
        (sum - want_sum).abs() <= 1e-9 * want_sum,
        "sum {sum} != {want_sum}"
    );

    // The whole test's p(95) as k6 computes it (linear between the two nearest ranks),
    // in seconds.
    let mut values: Vec<f64> = samples.iter().map(|(_, v)| v / 1000.0).collect();
    values.sort_by(f64::total_cmp);
    let n = values.len();
    let pos = 0.95 * (n - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    let exact = values[lo] + (values[hi] - values[lo]) * (pos - lo as f64);
    let p95 = prom.value(&format!("histogram_quantile(0.95, sum({series}))"));
    // Prometheus finds the bucket where the cumulative count reaches 0.95·n — the one
    // holding the ⌈0.95·n⌉-th value — and interpolates inside it; k6's p(95) lies between
    // the values at ranks ⌊0.95·(n−1)⌋ and ⌈0.95·(n−1)⌉. So both lie in the buckets of
    // those (at most three adjacent) values: one schema-3 bucket, a factor 2^(1/8) ≈ 1.0905
    // wide, unless the values straddle a bucket boundary.
    let rank = (0.95 * n as f64).ceil() as usize - 1;
    let (bucket_lo, bucket_hi) = schema3_bucket(values[rank]);
    assert!(
        bucket_lo <= p95 && p95 <= bucket_hi,
        "p95 {p95} outside the bucket ({bucket_lo}, {bucket_hi}] of the {}-th value",
        rank + 1
    );
    let lower = schema3_bucket(values[lo.min(rank)]).0;
    let upper = schema3_bucket(values[hi.max(rank)]).1;
    assert!(
        (p95 - exact).abs() <= upper - lower,
        "histogram_quantile {p95} vs exact p(95) {exact}: more than the bucket span ({lower}, {upper}]"
    );
    eprintln!(
        "p(95): exact {exact:.6} s, histogram_quantile {p95:.6} s, difference {:+.2} % (bound {:.2} %)",
        (p95 - exact) / exact * 100.0,
        (upper - lower) / exact * 100.0
    );
}
