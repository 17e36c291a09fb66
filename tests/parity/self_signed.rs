//! A staging server's self-signed certificate, made as users make it (`openssl req -x509`,
//! which marks it `CA:TRUE`) and trusted through `SSL_CERT_FILE` or `SSL_CERT_DIR`: k6 (Go)
//! accepts it because it is itself in the trusted pool, and so must rk6, everywhere it
//! checks a server: HTTP/1 and HTTP/2 requests, remote modules, WebSockets, gRPC and the
//! outputs. The refusals (another self-signed certificate, an expired one, a wrong host
//! name, a key usage for clients only, a common name without alternative names) carry k6's
//! codes. rk6's checks must all pass; when k6 is installed it must agree.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};

use crate::support::user_cert::UserCert;
use crate::support::{grpc, ws_server};
use crate::{run_file, Dir};

/// An HTTPS server presenting one certificate: `/lib.js` is a module exporting `answer = 42`,
/// a POST (a metrics push) gets an empty 200, anything else `ok`; it records each request
/// as `METHOD PATH`.
struct Https {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Https {
    fn start(cert: &UserCert, alpn: &[&[u8]]) -> Https {
        let acceptor = tokio_rustls::TlsAcceptor::from(cert.server_config(alpn));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = seen.clone();
        let addr = crate::support::accept_loop(Duration::from_secs(120), move |tcp| {
            let (acceptor, record) = (acceptor.clone(), record.clone());
            async move {
                let Ok(Ok(tls)) =
                    tokio::time::timeout(Duration::from_secs(10), acceptor.accept(tcp)).await
                else {
                    return;
                };
                let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
                let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                    let record = record.clone();
                    async move {
                        record.lock().unwrap().push(format!(
                            "{} {}",
                            req.method(),
                            req.uri().path()
                        ));
                        let post = req.method() == hyper::Method::POST;
                        let js = req.uri().path() == "/lib.js";
                        let _ = req.into_body().collect().await;
                        let (kind, body) = match (post, js) {
                            (true, _) => ("application/x-protobuf", ""),
                            (false, true) => ("text/javascript", "export const answer = 42;\n"),
                            (false, false) => ("text/plain", "ok"),
                        };
                        Ok::<_, Infallible>(
                            Response::builder()
                                .header("content-type", kind)
                                .body(Full::new(Bytes::from(body)))
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
        Https { addr, seen }
    }

    fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Requests so far with this method.
    fn count(&self, method: &str) -> usize {
        let prefix = format!("{method} ");
        let seen = self.seen.lock().unwrap();
        seen.iter().filter(|s| s.starts_with(&prefix)).count()
    }

    fn clear(&self) {
        self.seen.lock().unwrap().clear();
    }
}

/// Runs `script.js` of `dir` under rk6 with `env`: it must exit `code` with all of its
/// `checks` checks passed. Then, when k6 is installed, k6 must exit alike with the same
/// checks. Returns rk6's stderr.
fn agree(name: &str, dir: &Dir, env: &[(&str, &str)], code: i32, checks: usize) -> String {
    let (run, export) = run_file(dir, "script.js", &[], env);
    let found = super::checks(&export);
    let failed: Vec<_> = found.iter().filter(|c| c.2 > 0 || c.1 == 0).collect();
    assert!(
        run.code == code && failed.is_empty() && found.len() == checks,
        "{name}: rk6 exited {} with checks {found:?}, failed {failed:?}\n{}",
        run.code,
        run.stderr
    );
    let checks = found;
    if let Some(bin) = super::k6() {
        let script = dir.path("script.js");
        let k6 = if code == 0 {
            let k6 = super::run_k6_env(&bin, &script, dir, env);
            assert_eq!(
                super::checks(&k6.export),
                checks,
                "{name}: k6's checks differ"
            );
            k6.code
        } else {
            // A script that cannot load writes no summary.
            let out = std::process::Command::new(&bin)
                .args(["run", "-q", "--address", "127.0.0.1:0"])
                .arg(&script)
                .env("K6_NO_USAGE_REPORT", "true")
                .envs(env.iter().copied())
                .current_dir(&dir.0)
                .output()
                .expect("run k6");
            out.status.code().unwrap_or(-1)
        };
        assert_eq!(k6, code, "{name}: k6's exit code");
    }
    run.stderr
}

/// The certificates of one test: the staging one every server trusts it with, and the
/// refused ones (all but `other` trusted too, so they fail for their own reason).
struct Certs {
    staging: UserCert,
    other: UserCert,
    expired: UserCert,
    client_only: UserCert,
    common_name_only: UserCert,
    issued: UserCert,
}

impl Certs {
    fn new() -> Certs {
        Certs {
            staging: UserCert::staging(),
            other: UserCert::staging(),
            expired: UserCert::expired(),
            client_only: UserCert::openssl(&[
                "-addext",
                "subjectAltName=DNS:localhost,IP:127.0.0.1",
                "-addext",
                "extendedKeyUsage=clientAuth",
            ]),
            common_name_only: UserCert::openssl(&[]),
            issued: UserCert::issued_by_private_ca(),
        }
    }

    /// The trusted bundle: every certificate but `other`.
    fn bundle(&self) -> String {
        [
            &self.staging,
            &self.expired,
            &self.client_only,
            &self.common_name_only,
            &self.issued,
        ]
        .iter()
        .map(|c| c.cert_pem.as_str())
        .collect()
    }
}

#[test]
fn self_signed_certificate_over_http1_http2_and_a_remote_module_agrees_with_k6() {
    let certs = Certs::new();
    let h1 = Https::start(&certs.staging, &[b"http/1.1"]);
    let h2 = Https::start(&certs.staging, &[b"h2", b"http/1.1"]);
    let other = Https::start(&certs.other, &[b"http/1.1"]);
    let expired = Https::start(&certs.expired, &[b"http/1.1"]);
    let client_only = Https::start(&certs.client_only, &[b"http/1.1"]);
    let cn_only = Https::start(&certs.common_name_only, &[b"http/1.1"]);
    let issued = Https::start(&certs.issued, &[b"http/1.1"]);
    let script = format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
import {{ answer }} from 'https://localhost:{h1}/lib.js';
export const options = {{ iterations: 1, hosts: {{ 'staging.test': '127.0.0.1' }} }};
const get = (host, port) => http.get(`https://${{host}}:${{port}}/`);
export default function () {{
  check(answer, {{ 'remote module from the staging server': (a) => a === 42 }});
  check(get('localhost', {h1}), {{ 'HTTP/1.1 by name': (r) => r.status === 200 && r.proto === 'HTTP/1.1' && r.body === 'ok' }});
  check(get('127.0.0.1', {h1}), {{ 'HTTP/1.1 by address': (r) => r.status === 200 }});
  check(get('localhost', {h2}), {{ 'HTTP/2 by name': (r) => r.status === 200 && r.proto === 'HTTP/2.0' }});
  check(get('127.0.0.1', {h2}), {{ 'HTTP/2 by address': (r) => r.status === 200 && r.proto === 'HTTP/2.0' }});
  check(get('localhost', {issued}), {{ 'a trusted certificate of an unknown issuer': (r) => r.status === 200 }});
  check(get('staging.test', {h1}), {{ 'another host name 1311': (r) => r.status === 0 && r.error_code === 1311 && r.error === "x509: certificate doesn't match hostname" }});
  check(get('localhost', {other}), {{ 'another self-signed certificate 1310': (r) => r.status === 0 && r.error_code === 1310 && r.error === 'x509: unknown authority' }});
  check(get('staging.test', {other}), {{ 'another certificate for another name 1311 (the name first)': (r) => r.error_code === 1311 }});
  check(get('localhost', {expired}), {{ 'expired 1000': (r) => r.error_code === 1000 && r.error.startsWith('x509: certificate has expired or is not yet valid: current time ') && r.error.endsWith(' is after 2021-01-01T00:00:00Z') }});
  check(get('localhost', {client_only}), {{ 'for clients only 1000': (r) => r.error_code === 1000 && r.error === 'x509: certificate specifies an incompatible key usage' }});
  check(get('localhost', {cn_only}), {{ 'common name only 1311': (r) => r.error_code === 1311 }});
}}
"#,
        h1 = h1.port(),
        h2 = h2.port(),
        other = other.port(),
        expired = expired.port(),
        client_only = client_only.port(),
        cn_only = cn_only.port(),
        issued = issued.port(),
    );
    let dir = Dir::new("self-signed-http");
    dir.write("script.js", &script);
    let bundle = dir.write("trusted.pem", &certs.bundle());
    let bundle = bundle.to_str().unwrap();
    agree("SSL_CERT_FILE", &dir, &[("SSL_CERT_FILE", bundle)], 0, 12);
    // The module was downloaded once per run (`?_k6=1` answers).
    assert!(h1.count("GET") >= 2);

    // The same through SSL_CERT_DIR (a directory holding the bundle).
    let certs_dir = dir.path("certs");
    std::fs::create_dir_all(&certs_dir).unwrap();
    std::fs::write(certs_dir.join("staging.pem"), certs.bundle()).unwrap();
    agree(
        "SSL_CERT_DIR",
        &dir,
        &[("SSL_CERT_DIR", certs_dir.to_str().unwrap())],
        0,
        12,
    );
}

#[test]
fn self_signed_certificate_nobody_trusts_stops_a_remote_import_as_in_k6() {
    let (staging, other) = (UserCert::staging(), UserCert::staging());
    let srv = Https::start(&other, &[b"http/1.1"]);
    let dir = Dir::new("self-signed-module");
    dir.write(
        "script.js",
        &format!(
            "import {{ answer }} from 'https://localhost:{}/lib.js';\nexport default function () {{ answer; }}\n",
            srv.port()
        ),
    );
    let trusted = dir.write("staging.pem", &staging.cert_pem);
    let stderr = agree(
        "untrusted module",
        &dir,
        &[("SSL_CERT_FILE", trusted.to_str().unwrap())],
        107,
        0,
    );
    assert!(
        stderr.contains("x509: certificate signed by unknown authority"),
        "{stderr}"
    );
}

#[test]
fn self_signed_certificate_over_wss_and_grpc_agrees_with_k6() {
    let (staging, other) = (UserCert::staging(), UserCert::staging());
    let ws = ws_server::start_tls_with(staging.server_config(&[b"http/1.1"]));
    let ws_other = ws_server::start_tls_with(other.server_config(&[b"http/1.1"]));
    let life = Duration::from_secs(120);
    let grpc_staging = grpc::start_tls_with(life, staging.server_config(&[b"h2"]));
    let grpc_other = grpc::start_tls_with(life, other.server_config(&[b"h2"]));
    let script = format!(
        r#"
import ws from 'k6/ws';
import grpc from 'k6/net/grpc';
import {{ check }} from 'k6';
const clients = [0, 1, 2].map(() => new grpc.Client());
clients.forEach((c) => c.load([{proto}], 'echo.proto'));
const otherCa = open('other.pem');
export const options = {{ iterations: 1 }};
function thrown(f) {{
  try {{ f(); return ''; }} catch (e) {{ return String(e); }}
}}
function say(client, addr, params) {{
  let r = null;
  const e = thrown(() => {{ client.connect(addr, params); r = client.invoke('rk6.test.Echo/Say', {{ text: 'staging' }}); }});
  return e || (r.status === grpc.StatusOK && r.message.text === 'staging');
}}
export default function () {{
  let echoed = '';
  const res = ws.connect('wss://localhost:{ws}/echo', null, (s) => {{
    s.on('open', () => s.send('hello'));
    s.on('message', (m) => {{ echoed = m; s.close(); }});
  }});
  check(res, {{ 'wss to the staging server': (r) => r && r.status === 101 && echoed === 'hello' }});
  const refused = ws.connect('wss://localhost:{ws_other}/echo', null, (s) => s.close());
  check(refused, {{ 'wss to another self-signed server refused': (r) => r.status === 0 && r.error.includes('x509: certificate signed by unknown authority') }});
  check(say(clients[0], 'localhost:{grpc}', {{}}), {{ 'gRPC to the staging server': (ok) => ok === true }});
  check(say(clients[1], 'localhost:{grpc_other}', {{ tls: {{ cacerts: [otherCa] }} }}), {{ 'gRPC with its certificate as cacerts': (ok) => ok === true }});
  check(thrown(() => clients[2].connect('localhost:{grpc_other}', {{ timeout: '2s' }})), {{ 'gRPC to another self-signed server refused': (e) => e.includes('x509: certificate signed by unknown authority') }});
}}
"#,
        proto = serde_json::to_string(grpc::proto_dir().to_str().unwrap()).unwrap(),
        ws = ws.port(),
        ws_other = ws_other.port(),
        grpc = grpc_staging.port(),
        grpc_other = grpc_other.port(),
    );
    let dir = Dir::new("self-signed-ws-grpc");
    dir.write("script.js", &script);
    dir.write("other.pem", &other.cert_pem);
    let trusted = dir.write("staging.pem", &staging.cert_pem);
    agree(
        "wss and gRPC",
        &dir,
        &[("SSL_CERT_FILE", trusted.to_str().unwrap())],
        0,
        5,
    );
}

/// Waits up to 10 s for `srv` to have seen a POST.
fn wait_for_post(srv: &Https) -> usize {
    let end = Instant::now() + Duration::from_secs(10);
    while srv.count("POST") == 0 && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(50));
    }
    srv.count("POST")
}

#[test]
fn self_signed_certificate_of_an_output_receiver_agrees_with_k6() {
    let (staging, other) = (UserCert::staging(), UserCert::staging());
    let receiver = Https::start(&staging, &[b"h2", b"http/1.1"]);
    let untrusted = Https::start(&other, &[b"h2", b"http/1.1"]);
    let dir = Dir::new("self-signed-outputs");
    let script = dir.write(
        "script.js",
        "import { sleep } from 'k6';\nexport const options = { iterations: 1 };\nexport default function () { sleep(1.5); }\n",
    );
    let trusted = dir.write("staging.pem", &staging.cert_pem);
    let trusted = trusted.to_str().unwrap();
    let k6 = super::k6();
    let mut tools = vec!["rk6"];
    if k6.is_some() {
        tools.push("k6");
    }
    // Prometheus remote write trusts SSL_CERT_FILE, OpenTelemetry its own certificate file.
    let prometheus = |port: u16| {
        vec![
            ("K6_OUT".to_owned(), "experimental-prometheus-rw".to_owned()),
            (
                "K6_PROMETHEUS_RW_SERVER_URL".to_owned(),
                format!("https://localhost:{port}/api/v1/write"),
            ),
            ("SSL_CERT_FILE".to_owned(), trusted.to_owned()),
        ]
    };
    let otel = |port: u16| {
        vec![
            ("K6_OUT".to_owned(), "experimental-opentelemetry".to_owned()),
            ("K6_OTEL_EXPORTER_TYPE".to_owned(), "http".to_owned()),
            (
                "K6_OTEL_HTTP_EXPORTER_ENDPOINT".to_owned(),
                format!("localhost:{port}"),
            ),
            ("K6_OTEL_TLS_CERTIFICATE".to_owned(), trusted.to_owned()),
            ("K6_OTEL_FLUSH_INTERVAL".to_owned(), "100ms".to_owned()),
            ("K6_OTEL_EXPORT_INTERVAL".to_owned(), "500ms".to_owned()),
        ]
    };
    for (output, env_for) in [
        (
            "prometheus",
            &prometheus as &dyn Fn(u16) -> Vec<(String, String)>,
        ),
        ("opentelemetry", &otel),
    ] {
        for tool in &tools {
            for (srv, trusted) in [(&receiver, true), (&untrusted, false)] {
                srv.clear();
                let env = env_for(srv.port());
                let env: Vec<(&str, &str)> =
                    env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
                let (code, stderr) = if *tool == "rk6" {
                    let (run, _) = run_file(&dir, "script.js", &[], &env);
                    (run.code, run.stderr)
                } else {
                    let out = std::process::Command::new(k6.as_deref().unwrap())
                        .args(["run", "-q", "--address", "127.0.0.1:0"])
                        .arg(&script)
                        .env("K6_NO_USAGE_REPORT", "true")
                        .envs(env.iter().copied())
                        .current_dir(&dir.0)
                        .output()
                        .expect("run k6");
                    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
                    (out.status.code().unwrap_or(-1), stderr)
                };
                assert_eq!(code, 0, "{tool} {output}: {stderr}");
                if trusted {
                    assert!(
                        wait_for_post(srv) > 0,
                        "{tool} {output}: nothing pushed to the staging receiver\n{stderr}"
                    );
                } else {
                    std::thread::sleep(Duration::from_millis(200));
                    assert_eq!(srv.count("POST"), 0, "{tool} {output}");
                    assert!(
                        stderr.contains("x509:"),
                        "{tool} {output}: no certificate error\n{stderr}"
                    );
                }
            }
        }
    }
}
