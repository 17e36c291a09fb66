//! HTTPS: verification outcomes, ALPN and HTTP/2.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use rk6_http::{ClientConfig, Request};

use crate::support::*;

fn opts(alpn_h2: bool) -> TlsOpts {
    TlsOpts {
        alpn_h2,
        handshake_delay: Duration::ZERO,
    }
}

#[tokio::test]
async fn trusted_ca_h1() {
    let pki = pki(&["127.0.0.1", "localhost"]);
    let srv = tls_server(&pki, opts(false)).await;
    let mut c = tls_client(&pki);
    let r = get(&mut c, &https(&srv, "/echo")).await;
    assert_eq!(r.status, 200, "{:?}", r.error);
    assert_eq!(r.proto, "HTTP/1.1");
    assert_eq!(r.tls_version, "tls1.3");
    assert_eq!(r.hops[0].tls_version, "tls1.3");
    // Go's client preference (AES-128-GCM first) against a server following the client's order.
    assert_eq!(r.tls_cipher_suite, "TLS_AES_128_GCM_SHA256");
    assert!(r.timings().tls_handshaking > Duration::ZERO);
    // A host name also verifies (and goes through DNS).
    let r = get(
        &mut c,
        &format!("https://localhost:{}/echo", srv.addr.port()),
    )
    .await;
    assert_eq!(r.status, 200, "{:?}", r.error);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h2_negotiated_by_alpn() {
    let pki = pki(&["127.0.0.1"]);
    let srv = tls_server(&pki, opts(true)).await;
    let mut c = tls_client(&pki);
    let mut req = Request::new(http::Method::POST, url(&https(&srv, "/echo")));
    req.headers = vec![("X-H".into(), "1".into())];
    req.body = Bytes::from_static(b"h2 body");
    let r = c.send(req).await;
    assert_eq!(r.status, 200, "{:?}", r.error);
    assert_eq!(r.proto, "HTTP/2.0");
    assert_eq!(r.status_text(), "200 OK");
    let b = String::from_utf8_lossy(&r.body).into_owned();
    assert!(
        b.starts_with(&format!("POST https://{}/echo HTTP/2.0", srv.addr)),
        "{b}"
    );
    assert!(b.contains("x-h: 1\n") && b.ends_with("h2 body"), "{b}");
    assert!(r.headers.get("content-type").is_some(), "{:?}", r.headers);
    let t = r.timings();
    assert_eq!(t.duration, t.sending + t.waiting + t.receiving);

    for path in ["/enc/gzip", "/404", "/chain/2"] {
        let r = get(&mut c, &https(&srv, path)).await;
        assert!(r.error.is_none(), "{path}: {:?}", r.error);
        assert_eq!(r.proto, "HTTP/2.0");
        zeroish("blocked on reused h2", r.timings().blocked);
    }
    assert_eq!(srv.conns(), 1);
}

#[tokio::test]
async fn unknown_authority_is_1310_unless_insecure() {
    let ck = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()]).unwrap();
    let self_signed = Pki {
        ca_pem: Vec::new(),
        leaf_der: ck.cert.der().clone(),
        leaf_key: ck.key_pair.serialize_der(),
    };
    let srv = tls_server(&self_signed, opts(true)).await;
    let r = get(&mut client(), &https(&srv, "/echo")).await;
    assert_eq!(r.status, 0);
    assert_eq!(r.error_code, 1310, "{:?}", r.error);
    assert_eq!(r.error.unwrap().message, "x509: unknown authority");
    // The failed handshake counts 0, the completed connect does not (k6's accounting).
    let t = r.hops[0].timings;
    assert_eq!(
        (t.tls_handshaking, t.blocked),
        (Duration::ZERO, Duration::ZERO)
    );
    assert!(t.connecting > Duration::ZERO);

    let mut c = client_with(ClientConfig {
        insecure_skip_tls_verify: true,
        ..ClientConfig::default()
    });
    let r = get(&mut c, &https(&srv, "/echo")).await;
    assert_eq!(r.status, 200, "{:?}", r.error);
}

#[tokio::test]
async fn hostname_mismatch_is_1311() {
    let pki = pki(&["example.com"]);
    let srv = tls_server(&pki, opts(false)).await;
    let r = get(&mut tls_client(&pki), &https(&srv, "/")).await;
    assert_eq!(r.error_code, 1311, "{:?}", r.error);
    assert_eq!(
        r.error.unwrap().message,
        "x509: certificate doesn't match hostname"
    );
}

#[tokio::test]
async fn plain_http_to_tls_port_fails_cleanly() {
    let pki = pki(&["127.0.0.1"]);
    let srv = tls_server(&pki, opts(false)).await;
    let mut req = Request::get(url(&srv.url("/")));
    req.timeout = Some(Duration::from_secs(5));
    let r = client().send(req).await;
    assert_eq!(r.status, 0);
    assert!(r.error.is_some());
}

#[tokio::test]
async fn tls_config_is_built_once_per_client_config() {
    let cfg = Arc::new(ClientConfig::default());
    let _a = rk6_http::Client::new(cfg.clone());
    let _b = rk6_http::Client::new(cfg.clone());
    assert!(format!("{:?}", cfg.tls_cache).contains("built"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h2_stream_reset_maps_to_163x() {
    let pki = pki(&["127.0.0.1"]);
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![pki.leaf_der.clone()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(pki.leaf_key.clone().into()),
        )
        .unwrap();
    cfg.alpn_protocols = vec![b"h2".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(cfg));
    let srv = raw_server(move |s, _| {
        let acceptor = acceptor.clone();
        async move {
            let Ok(tls) = acceptor.accept(s).await else {
                return;
            };
            let Ok(mut conn) = h2::server::handshake(tls).await else {
                return;
            };
            while let Some(Ok((_req, mut respond))) = conn.accept().await {
                respond.send_reset(h2::Reason::REFUSED_STREAM);
            }
        }
    })
    .await;
    let r = get(&mut tls_client(&pki), &https(&srv, "/")).await;
    assert_eq!(r.status, 0);
    // REFUSED_STREAM is 0x7: stream error base 1630 + 7 + 1.
    assert_eq!(r.error_code, 1638, "{:?}", r.error);
}
