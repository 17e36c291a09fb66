//! Several requests of one client at once: HTTP/1 opens connections, HTTP/2 (TLS or h2c)
//! multiplexes them on one, and each response keeps its own timings.

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rk6_http::{Client, ClientConfig, Request, Response};
use tokio::task::JoinSet;

use crate::support::*;

/// What the gate server speaks.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    H1,
    H2c,
    Tls,
}

/// Server-side counts: requests in flight (now and at most) and connections accepted.
#[derive(Default)]
struct Counts {
    in_flight: AtomicUsize,
    max: AtomicUsize,
    conns: AtomicUsize,
}

impl Counts {
    fn max(&self) -> usize {
        self.max.load(Ordering::SeqCst)
    }
    fn conns(&self) -> usize {
        self.conns.load(Ordering::SeqCst)
    }
}

/// A server that holds each request until `gate` requests are in flight (or 2 s passed), so
/// concurrency shows up in `max` without depending on timing.
async fn gate_server(mode: Mode, gate: usize, pki: Option<&Pki>) -> (String, Arc<Counts>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let counts = Arc::new(Counts::default());
    let acceptor = pki.map(|pki| tls_acceptor(pki, &[b"h2"]));
    let c = counts.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            c.conns.fetch_add(1, Ordering::SeqCst);
            let c = c.clone();
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let svc = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                    let c = c.clone();
                    async move {
                        let body = req.into_body().collect().await.unwrap().to_bytes();
                        let n = c.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                        c.max.fetch_max(n, Ordering::SeqCst);
                        for _ in 0..200 {
                            if c.in_flight.load(Ordering::SeqCst) >= gate {
                                break;
                            }
                            tokio::time::sleep(Duration::from_millis(10)).await;
                        }
                        // Stay in flight a little so late arrivals still see the others.
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        c.in_flight.fetch_sub(1, Ordering::SeqCst);
                        let mut out = b"ok:".to_vec();
                        out.extend_from_slice(&body);
                        Ok::<_, Infallible>(hyper::Response::new(Full::new(Bytes::from(out))))
                    }
                });
                match (mode, acceptor) {
                    (Mode::Tls, Some(acceptor)) => {
                        let Ok(tls) = acceptor.accept(stream).await else {
                            return;
                        };
                        let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                            .serve_connection(TokioIo::new(tls), svc)
                            .await;
                    }
                    (Mode::H2c, _) => {
                        let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                            .serve_connection(TokioIo::new(stream), svc)
                            .await;
                    }
                    _ => {
                        let _ = hyper::server::conn::http1::Builder::new()
                            .serve_connection(TokioIo::new(stream), svc)
                            .await;
                    }
                }
            });
        }
    });
    let scheme = if mode == Mode::Tls { "https" } else { "http" };
    (format!("{scheme}://{addr}/"), counts)
}

/// Sends `n` POSTs at once (bodies `0`..`n`) and returns the responses in order.
async fn send_all(client: &Arc<Client>, url: &str, n: usize) -> Vec<Response> {
    let mut set = JoinSet::new();
    for i in 0..n {
        let client = client.clone();
        let mut req = Request::new(http::Method::POST, url::Url::parse(url).unwrap());
        req.body = Bytes::from(i.to_string());
        set.spawn(async move { (i, client.send(req).await) });
    }
    let mut out: Vec<Option<Response>> = (0..n).map(|_| None).collect();
    while let Some(r) = set.join_next().await {
        let (i, resp) = r.unwrap();
        out[i] = Some(resp);
    }
    out.into_iter().map(Option::unwrap).collect()
}

fn check_bodies(rs: &[Response], proto: &str) {
    for (i, r) in rs.iter().enumerate() {
        assert_eq!(r.status, 200, "{i}: {:?}", r.error);
        assert_eq!(r.proto, proto);
        assert_eq!(&r.body[..], format!("ok:{i}").as_bytes());
        let t = r.timings();
        assert_eq!(t.duration, t.sending + t.waiting + t.receiving);
        // The server held every request at least 50 ms before answering.
        assert!(ms(t.waiting) >= 45.0, "{i}: waiting {:?}", t);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http1_requests_run_on_parallel_connections() {
    let (url, counts) = gate_server(Mode::H1, 8, None).await;
    let client = Arc::new(client());
    let rs = send_all(&client, &url, 8).await;
    check_bodies(&rs, "HTTP/1.1");
    assert_eq!(counts.max(), 8, "all eight were in flight together");
    assert_eq!(counts.conns(), 8);
    // Six idle connections are kept (batchPerHost); the next round opens two more.
    let rs = send_all(&client, &url, 8).await;
    check_bodies(&rs, "HTTP/1.1");
    assert_eq!(counts.conns(), 10);
    // Each exchange's bytes count once: totals match what a sequential client would see.
    let sent: u64 = rs.iter().map(|r| r.hops[0].bytes_sent).sum();
    assert!(sent > 8 * 60, "{sent}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_h2_requests_multiplex_on_one_connection() {
    let pki = pki(&["127.0.0.1"]);
    let (url, counts) = gate_server(Mode::Tls, 10, Some(&pki)).await;
    let client = Arc::new(tls_client(&pki));
    let rs = send_all(&client, &url, 10).await;
    check_bodies(&rs, "HTTP/2.0");
    assert_eq!(counts.max(), 10, "all ten streams were in flight together");
    assert_eq!(counts.conns(), 1, "one TLS connection for all streams");
    // Exactly one request paid for the handshake; the others waited for it (blocked).
    let handshakes = rs
        .iter()
        .filter(|r| r.timings().tls_handshaking > Duration::ZERO)
        .count();
    assert_eq!(handshakes, 1);
    // Bytes of the shared connection are split between streams, not counted per stream.
    let received: u64 = rs.iter().map(|r| r.hops[0].bytes_received).sum();
    assert!(received > 0);
    let rs = send_all(&client, &url, 10).await;
    check_bodies(&rs, "HTTP/2.0");
    assert_eq!(counts.conns(), 1, "the shared connection is reused");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h2c_by_config_and_per_request() {
    let (url, counts) = gate_server(Mode::H2c, 10, None).await;
    let client = Arc::new(client_with(ClientConfig {
        h2c: true,
        ..ClientConfig::default()
    }));
    let rs = send_all(&client, &url, 10).await;
    check_bodies(&rs, "HTTP/2.0");
    assert_eq!(rs[0].tls_version, "");
    assert_eq!(counts.max(), 10);
    assert_eq!(counts.conns(), 1, "h2c streams share one TCP connection");

    // The per-request switch overrides the client default, both ways.
    let (url, counts) = gate_server(Mode::H2c, 1, None).await;
    let plain = crate::support::client();
    let mut req = Request::new(http::Method::POST, url::Url::parse(&url).unwrap());
    req.body = Bytes::from_static(b"0");
    req.h2c = Some(true);
    let r = plain.send(req).await;
    assert_eq!((r.status, r.proto), (200, "HTTP/2.0"), "{:?}", r.error);
    assert_eq!(counts.conns(), 1);
    // Without h2c, an HTTP/1 request to an h2c-only server fails instead of hanging.
    let mut req = Request::get(url::Url::parse(&url).unwrap());
    req.h2c = Some(false);
    req.timeout = Some(Duration::from_secs(5));
    let r = client.send(req).await;
    assert_eq!(r.status, 0);
    assert!(r.error.is_some());
}
