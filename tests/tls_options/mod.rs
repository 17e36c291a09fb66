//! TLS options end to end through the rk6 binary against in-process rustls servers:
//! `tlsVersion`, `tlsCipherSuites`, `tlsAuth`, no session resumption (as k6), k6's TLS
//! error codes, `res.tls_version` / `res.tls_cipher_suite`, and start-up validation.

pub(crate) mod server;

use std::sync::Arc;

use serde_json::Value;

use crate::{metric, rk6_env, Dir, Run};
use server::{Ca, Leaf, Setup, TlsServer};

/// A script running `body` once per iteration with `options` merged in; every `expect`
/// is a check, and `checks: rate==1` makes any mismatch exit 99.
fn script(options: &str, body: &str) -> String {
    format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
export const options = Object.assign({{ iterations: 1, thresholds: {{ checks: ['rate==1'] }} }}, {options});
function expect(name, got, want) {{
  if (!check(got, {{ [name]: (g) => JSON.stringify(g) === JSON.stringify(want) }})) {{
    console.log(`MISMATCH ${{name}}: got ${{JSON.stringify(got)}} want ${{JSON.stringify(want)}}`);
  }}
}}
export default function () {{
{body}
}}
"#
    )
}

/// Runs `script` in `dir` with `env`; returns the run and the number of passed checks.
fn run(dir: &Dir, script: &str, env: &[(&str, &str)]) -> (Run, u64) {
    let path = dir.write("script.js", script);
    let export = dir.path("summary.json");
    let run = rk6_env(
        &[
            "run",
            "-q",
            "--summary-export",
            export.to_str().unwrap(),
            path.to_str().unwrap(),
        ],
        &dir.0,
        env,
    );
    let json: Value = std::fs::read_to_string(&export)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    let passes = metric(&json, "checks")["passes"].as_u64().unwrap_or(0);
    (run, passes)
}

/// Asserts a clean run with exactly `checks` passed checks.
fn assert_passes(run: &Run, passes: u64, checks: u64) {
    run.assert_code(0);
    assert_eq!(passes, checks, "passed checks\n{}", run.stderr);
}

fn server_leaf(ca: &Ca) -> Leaf {
    ca.leaf("server", &["localhost", "127.0.0.1"])
}

#[test]
fn versions_and_cipher_suites_are_negotiated_as_asked() {
    let ca = Ca::new("rk6 tls ca");
    let leaf = server_leaf(&ca);
    let both = TlsServer::start(Setup::new(&leaf));
    let dir = Dir::new("tls-versions");
    let url = both.url("127.0.0.1", "/");
    let body = |version: &str, suite: &str, server_suite: &str| {
        format!(
            r#"const r = http.get('{url}');
expect('status', r.status, 200);
expect('tls_version', r.tls_version, '{version}');
expect('tls_cipher_suite', r.tls_cipher_suite, '{suite}');
expect('server suite', r.json('cipher'), '{server_suite}');"#
        )
    };
    let cases = [
        // Go's preference order: AES-128-GCM first.
        (
            "{insecureSkipTLSVerify: true}",
            body("tls1.3", "TLS_AES_128_GCM_SHA256", "TLS13_AES_128_GCM_SHA256"),
        ),
        (
            "{insecureSkipTLSVerify: true, tlsVersion: http.TLS_1_2}",
            body(
                "tls1.2",
                "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
                "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
            ),
        ),
        (
            "{insecureSkipTLSVerify: true, tlsVersion: {min: 'tls1.2', max: 'tls1.2'}, tlsCipherSuites: ['TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305']}",
            body(
                "tls1.2",
                "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305",
                "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
            ),
        ),
        // TLS 1.3 suites cannot be restricted (as in Go): the list only limits TLS 1.2.
        (
            "{insecureSkipTLSVerify: true, tlsCipherSuites: ['TLS_CHACHA20_POLY1305_SHA256']}",
            body("tls1.3", "TLS_AES_128_GCM_SHA256", "TLS13_AES_128_GCM_SHA256"),
        ),
    ];
    for (options, body) in &cases {
        let (r, passes) = run(&dir, &script(options, body), &[]);
        assert_passes(&r, passes, 4);
    }
    let versions: Vec<String> = both
        .handshakes()
        .iter()
        .map(|h| h.version.clone())
        .collect();
    assert_eq!(versions, ["TLSv1_3", "TLSv1_2", "TLSv1_2", "TLSv1_3"]);
}

#[test]
fn plain_http_has_empty_tls_fields_and_samples_carry_the_tls_version_tag() {
    let ca = Ca::new("rk6 tls ca");
    let leaf = server_leaf(&ca);
    let srv = TlsServer::start(Setup::new(&leaf));
    let plain = crate::support::TestServer::start();
    let dir = Dir::new("tls-tag");
    let body = format!(
        r#"const r = http.get('{}');
expect('plain version', r.tls_version, '');
expect('plain suite', r.tls_cipher_suite, '');
const empty = {{ produced_at: 0, this_update: 0, next_update: 0, revoked_at: 0, revocation_reason: '', status: '' }};
expect('plain ocsp', r.ocsp, empty);
const t = http.get('{}');
expect('tls version', t.tls_version, 'tls1.2');
expect('tls ocsp', t.ocsp, empty);
expect('tls ocsp again', http.get(t.url).ocsp, empty);"#,
        plain.url("/get"),
        srv.url("localhost", "/")
    );
    let path = dir.write(
        "script.js",
        &script("{insecureSkipTLSVerify: true, tlsVersion: 'tls1.2'}", &body),
    );
    let out = dir.path("out.json");
    let r = rk6_env(
        &[
            "run",
            "-q",
            "-o",
            &format!("json={}", out.display()),
            path.to_str().unwrap(),
        ],
        &dir.0,
        &[],
    );
    r.assert_code(0);
    // Reading `ocsp` of a TLS response says, once, that stapled answers are not decoded;
    // a plain-HTTP response has nothing to decode and says nothing.
    assert_eq!(
        r.stderr.matches("does not decode stapled OCSP").count(),
        1,
        "{}",
        r.stderr
    );
    let text = std::fs::read_to_string(&out).unwrap();
    let tags: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["metric"] == "http_reqs" && v["type"] == "Point")
        .map(|v| v["data"]["tags"]["tls_version"].clone())
        .collect();
    assert_eq!(
        tags,
        [Value::Null, Value::from("tls1.2"), Value::from("tls1.2")],
        "{text}"
    );
}

#[test]
fn client_certificate_is_the_first_one_the_server_accepts() {
    let (server_ca, trusted, other) = (
        Ca::new("server ca"),
        Ca::new("client ca"),
        Ca::new("other ca"),
    );
    let leaf = server_leaf(&server_ca);
    let from_other = other.leaf("from-other", &["client.test"]);
    let first_trusted = trusted.leaf("first", &["client.test"]);
    let second_trusted = trusted.leaf("second", &["client.test"]);
    let known = vec![
        from_other.clone(),
        first_trusted.clone(),
        second_trusted.clone(),
    ];
    let mut asks = Setup::new(&leaf);
    asks.client_ca = Some(&trusted);
    asks.known_clients = known.clone();
    let asks13 = TlsServer::start(asks);
    let mut asks12 = Setup::new(&leaf);
    asks12.client_ca = Some(&trusted);
    asks12.known_clients = known.clone();
    asks12.versions = vec![&rustls::version::TLS12];
    let asks12 = TlsServer::start(asks12);
    let mut asks_unrelated = Setup::new(&leaf);
    asks_unrelated.client_ca = Some(&server_ca);
    asks_unrelated.known_clients = known;
    let asks_unrelated = TlsServer::start(asks_unrelated);
    let silent = TlsServer::start(Setup::new(&leaf));

    let dir = Dir::new("tls-auth");
    for (i, l) in [&from_other, &first_trusted, &second_trusted]
        .iter()
        .enumerate()
    {
        dir.write(&format!("c{i}.pem"), &l.cert_pem);
        dir.write(&format!("k{i}.pem"), &l.key_pem);
    }
    // `domains` name only 127.0.0.1, yet k6 (and rk6) present the certificate to localhost
    // too: the choice follows the server's acceptable CAs and the list order.
    let options = "{insecureSkipTLSVerify: true, tlsAuth: [0, 1, 2].map((i) => ({domains: ['127.0.0.1'], cert: open(`./c${i}.pem`), key: open(`./k${i}.pem`)}))}";
    let mut body = String::new();
    for (srv, want) in [
        (&asks13, 1),
        (&asks12, 1),
        (&asks_unrelated, -1),
        (&silent, -1),
    ] {
        for host in ["localhost", "127.0.0.1"] {
            body.push_str(&format!(
                "expect('{host}:{port} client', http.get('{url}').json('client'), {want});\n",
                port = srv.addr.port(),
                url = srv.url(host, "/"),
            ));
        }
    }
    let (r, passes) = run(&dir, &script(options, &body), &[]);
    assert_passes(&r, passes, 8);
    assert!(r.stderr.contains("tlsAuth domains"), "{}", r.stderr);
    assert_eq!(asks13.handshakes().len(), 2);
}

#[test]
fn no_connection_of_a_vu_resumes_a_tls_session() {
    let ca = Ca::new("rk6 tls ca");
    let leaf = server_leaf(&ca);
    let srv = TlsServer::start(Setup::new(&leaf));
    let mut tls12 = Setup::new(&leaf);
    tls12.versions = vec![&rustls::version::TLS12];
    let srv12 = TlsServer::start(tls12);

    // The servers do resume a client that offers its session.
    for s in [&srv, &srv12] {
        let kinds = resuming_client_handshakes(s, &ca);
        assert_eq!(kinds, [false, true], "server must support resumption");
    }
    let before = (srv.handshakes().len(), srv12.handshakes().len());

    let dir = Dir::new("tls-resume");
    let body = format!(
        "for (const u of ['{}', '{}']) {{ expect('new connection', http.get(u).json('resumed'), false); }}",
        srv.url("localhost", "/"),
        srv12.url("localhost", "/")
    );
    let options = "{insecureSkipTLSVerify: true, noConnectionReuse: true, vus: 2, iterations: 6}";
    let (r, passes) = run(&dir, &script(options, &body), &[]);
    assert_passes(&r, passes, 12);
    for (s, skip) in [(&srv, before.0), (&srv12, before.1)] {
        let shakes = &s.handshakes()[skip..];
        assert_eq!(shakes.len(), 6, "one full handshake per request");
        assert!(shakes.iter().all(|h| !h.resumed), "{shakes:?}");
    }
}

/// Two connections of a rustls client that keeps sessions: were they resumed?
fn resuming_client_handshakes(srv: &TlsServer, ca: &Ca) -> Vec<bool> {
    use rustls::pki_types::pem::PemObject;
    use std::io::{Read, Write};
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(rustls::pki_types::CertificateDer::from_pem_slice(ca.pem().as_bytes()).unwrap())
        .unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let cfg = Arc::new(
        rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth(),
    );
    (0..2)
        .map(|_| {
            let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
            let conn = rustls::ClientConnection::new(cfg.clone(), name).unwrap();
            let tcp = std::net::TcpStream::connect(srv.addr).unwrap();
            tcp.set_read_timeout(Some(std::time::Duration::from_secs(10)))
                .unwrap();
            let mut s = rustls::StreamOwned::new(conn, tcp);
            s.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
                .unwrap();
            let mut buf = [0u8; 4096];
            let n = s.read(&mut buf).unwrap();
            let text = String::from_utf8_lossy(&buf[..n]).into_owned();
            // Read until the body arrived so the TLS 1.3 tickets have been processed.
            assert!(text.contains("resumed"), "{text}");
            text.contains("\"resumed\":true")
        })
        .collect()
}

#[test]
fn tls_failures_get_k6_codes_and_messages() {
    let ca = Ca::new("rk6 tls ca");
    let good = server_leaf(&ca);
    let wrong_name = ca.leaf("elsewhere", &["other.example"]);
    let untrusted_leaf = server_leaf(&Ca::new("unknown ca"));
    let ok = TlsServer::start(Setup::new(&good));
    let mismatch = TlsServer::start(Setup::new(&wrong_name));
    let untrusted = TlsServer::start(Setup::new(&untrusted_leaf));
    let expired_leaf = ca.expired_leaf(&["localhost"]);
    let expired = TlsServer::start(Setup::new(&expired_leaf));
    let plain = crate::support::TestServer::start();
    let mut only12 = Setup::new(&good);
    only12.versions = vec![&rustls::version::TLS12];
    let only12 = TlsServer::start(only12);

    let dir = Dir::new("tls-errors");
    let ca_file = dir.write("ca.pem", &ca.pem());
    let env = [("SSL_CERT_FILE", ca_file.to_str().unwrap())];
    let body = format!(
        r#"const ok = http.get('{ok}');
expect('trusted via SSL_CERT_FILE', [ok.status, ok.error_code], [200, 0]);
const m = http.get('{mismatch}');
expect('mismatch', [m.status, m.error_code, m.error], [0, 1311, "x509: certificate doesn't match hostname"]);
const u = http.get('{untrusted}');
expect('unknown authority', [u.status, u.error_code, u.error, u.tls_version], [0, 1310, 'x509: unknown authority', '']);
const e = http.get('{expired}');
expect('expired', [e.error_code, /^x509: certificate has expired or is not yet valid: current time 20\d\d-\d\d-\d\dT\d\d:\d\d:\d\dZ is after 2021-01-01T00:00:00Z$/.test(e.error)], [1000, true]);
const p = http.get('{plain}');
expect('plain HTTP server', [p.error_code, p.error], [1301, 'tls: first record does not look like a TLS handshake']);"#,
        expired = expired.url("localhost", "/"),
        plain = plain.url("/get").replace("http://", "https://"),
        ok = ok.url("localhost", "/"),
        mismatch = mismatch.url("localhost", "/"),
        untrusted = untrusted.url("localhost", "/"),
    );
    let (r, passes) = run(&dir, &script("{}", &body), &env);
    assert_passes(&r, passes, 5);

    // A client that insists on TLS 1.3 meets a TLS 1.2-only server: the server's alert.
    let body = format!(
        r#"const r = http.get('{}');
expect('version refused', [r.status, r.error_code, r.error], [0, 1010, 'remote error: tls: protocol version not supported']);"#,
        only12.url("localhost", "/")
    );
    let (r, passes) = run(&dir, &script("{tlsVersion: {min: 'tls1.3'}}", &body), &env);
    assert_passes(&r, passes, 1);
    assert!(only12.handshakes().is_empty());
}

#[test]
fn invalid_tls_options_stop_the_test_with_104() {
    let ca = Ca::new("rk6 tls ca");
    let leaf = ca.leaf("client", &["client.test"]);
    let dir = Dir::new("tls-invalid");
    dir.write("c.pem", &leaf.cert_pem);
    dir.write("k.pem", &leaf.key_pem);
    let cases = [
        (
            "{tlsCipherSuites: ['TLS_FOO']}",
            "unknown cipher suite 'TLS_FOO'",
        ),
        (
            "{tlsCipherSuites: ['TLS_RSA_WITH_AES_128_CBC_SHA']}",
            "cipher suite 'TLS_RSA_WITH_AES_128_CBC_SHA' is not supported by rk6",
        ),
        (
            "{tlsVersion: {min: http.TLS_1_0, max: http.TLS_1_1}}",
            "rk6 speaks only TLS 1.2 and TLS 1.3",
        ),
        (
            "{tlsVersion: 'tls1.9'}",
            "unknown TLS version \\\"tls1.9\\\"",
        ),
        (
            "{tlsAuth: [{cert: open('./c.pem'), key: open('./c.pem')}]}",
            "tlsAuth[1]: key: no PEM private key found",
        ),
        (
            "{tlsAuth: [{cert: open('./c.pem'), key: open('./k.pem'), password: 'x'}]}",
            "password-protected keys are not supported",
        ),
    ];
    for (options, message) in cases {
        let path = dir.write(
            "script.js",
            &script(options, "http.get('https://127.0.0.1:1/');"),
        );
        let r = rk6_env(&["run", "-q", path.to_str().unwrap()], &dir.0, &[]);
        r.assert_code(104);
        assert!(r.stderr.contains(message), "{options}: {}", r.stderr);
    }
    // Asking to allow TLS 1.0 as well is honoured as far as rustls can, with a warning.
    let path = dir.write(
        "script.js",
        &script("{tlsVersion: {min: 'tls1.0'}}", "expect('ran', 1, 1);"),
    );
    let r = rk6_env(&["run", "-q", path.to_str().unwrap()], &dir.0, &[]);
    r.assert_code(0);
    assert!(r.stderr.contains("tlsVersion min tls1.0"), "{}", r.stderr);
}
