//! TLS side by side with k6: negotiated versions and suites, client-certificate choice,
//! no session resumption, and TLS error codes, against in-process rustls servers.

use crate::tls_options::server::{Ca, Setup, TlsServer};

use crate::Dir;

/// Like [`super::compare`] (same exit code and checks under k6 and rk6), and also every
/// check passed: a failure both tools share would be agreement, not correct TLS.
fn compare(name: &str, script: &str) {
    let Some(bin) = super::k6() else { return };
    let dir = Dir::new(name);
    let path = dir.write("script.js", script);
    let k6 = super::run_k6(&bin, &path, &dir);
    let rk6 = super::run_rk6(&path, &dir);
    assert_eq!(rk6.code, k6.code, "{name}: exit codes differ");
    let checks = super::checks(&k6.export);
    assert_eq!(super::checks(&rk6.export), checks, "{name}: checks differ");
    assert!(!checks.is_empty(), "{name}: no checks ran");
    for (check, _, fails) in &checks {
        assert_eq!(*fails, 0, "{name}: both failed {check}");
    }
}

fn js(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

#[test]
fn tls_negotiation_and_client_certs_agree_with_k6() {
    let (server_ca, trusted, other) = (
        Ca::new("server ca"),
        Ca::new("client ca"),
        Ca::new("other ca"),
    );
    let leaf = server_ca.leaf("server", &["localhost", "127.0.0.1"]);
    let clients = vec![
        other.leaf("from-other", &["client.test"]),
        trusted.leaf("first", &["client.test"]),
        trusted.leaf("second", &["client.test"]),
    ];
    let mut a = Setup::new(&leaf);
    a.client_ca = Some(&trusted);
    a.known_clients = clients.clone();
    let a = TlsServer::start(a);
    let mut b = Setup::new(&leaf);
    b.versions = vec![&rustls::version::TLS12];
    b.known_clients = clients.clone();
    let b = TlsServer::start(b);
    let mut c = Setup::new(&leaf);
    c.client_ca = Some(&server_ca);
    c.known_clients = clients.clone();
    let c = TlsServer::start(c);

    let auth: Vec<String> = clients
        .iter()
        .map(|l| {
            format!(
                "{{domains: ['127.0.0.1'], cert: {}, key: {}}}",
                js(&l.cert_pem),
                js(&l.key_pem)
            )
        })
        .collect();
    let script = format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
export const options = {{
  vus: 2, iterations: 4, insecureSkipTLSVerify: true, noConnectionReuse: true,
  tlsAuth: [{auth}],
}};
export default function () {{
  check(http.get('{a}'), {{
    'a status': (r) => r.status === 200,
    'a tls1.3': (r) => r.tls_version === http.TLS_1_3,
    'a suite': (r) => r.tls_cipher_suite === 'TLS_AES_128_GCM_SHA256',
    'a server suite': (r) => r.json('cipher') === 'TLS13_AES_128_GCM_SHA256',
    'a first acceptable cert': (r) => r.json('client') === 1,
    'a full handshake': (r) => r.json('resumed') === false,
  }});
  check(http.get('{b}'), {{
    'b tls1.2': (r) => r.tls_version === http.TLS_1_2,
    'b suite': (r) => r.tls_cipher_suite === 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256',
    'b no cert asked': (r) => r.json('client') === -1,
    'b full handshake': (r) => r.json('resumed') === false,
  }});
  check(http.get('{c}'), {{
    'c no acceptable cert': (r) => r.status === 200 && r.json('client') === -1,
  }});
}}
"#,
        auth = auth.join(", "),
        a = a.url("localhost", "/"),
        b = b.url("127.0.0.1", "/"),
        c = c.url("localhost", "/"),
    );
    compare("tls-negotiation", &script);
}

#[test]
fn tls_options_and_failures_agree_with_k6() {
    let untrusted = Ca::new("untrusted ca");
    let leaf = untrusted.leaf("server", &["localhost", "127.0.0.1"]);
    let both = TlsServer::start(Setup::new(&leaf));
    let mut only12 = Setup::new(&leaf);
    only12.versions = vec![&rustls::version::TLS12];
    let only12 = TlsServer::start(only12);
    let expired_leaf = untrusted.expired_leaf(&["localhost"]);
    let expired = TlsServer::start(Setup::new(&expired_leaf));
    let plain = crate::support::TestServer::start();
    let script = format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
export const options = {{ iterations: 2, tlsVersion: {{ min: 'tls1.3', max: 'tls1.3' }} }};
export default function () {{
  check(http.get('{both}'), {{
    'unknown authority': (r) => r.status === 0 && r.error_code === 1310 && r.error === 'x509: unknown authority',
    'no tls fields': (r) => r.tls_version === '' && r.tls_cipher_suite === '',
  }});
  check(http.get('{only12}'), {{
    'version refused': (r) => r.error_code === 1010 && r.error === 'remote error: tls: protocol version not supported',
  }});
  check(http.get('{expired}'), {{
    'expired': (r) => r.error_code === 1000 && r.error.startsWith('x509: certificate has expired or is not yet valid: current time ') && r.error.endsWith(' is after 2021-01-01T00:00:00Z'),
  }});
  check(http.get('{plain}'), {{
    'not TLS': (r) => r.error_code === 1301 && r.error === 'tls: first record does not look like a TLS handshake',
  }});
}}
"#,
        both = both.url("localhost", "/"),
        only12 = only12.url("localhost", "/"),
        expired = expired.url("localhost", "/"),
        plain = plain.url("/get").replace("http://", "https://"),
    );
    compare("tls-failures", &script);
}
