//! One test per timing phase, each against a server that injects a known delay.

use std::time::Duration;

use bytes::Bytes;
use rk6_http::{ClientConfig, Request};

use crate::support::*;

const D: f64 = 200.0;
const SLACK: f64 = 60.0;

fn delay() -> Duration {
    Duration::from_millis(D as u64)
}

#[tokio::test]
async fn waiting_is_time_to_first_byte() {
    let _one_at_a_time = TIMING.lock().await;
    let srv = raw_server(|mut s, _| async move {
        while read_request(&mut s).await.is_some() {
            tokio::time::sleep(delay()).await;
            write(&mut s, &ok_response("hi")).await;
        }
    })
    .await;
    let mut c = client();
    let r = get(&mut c, &srv.url("/")).await;
    assert_eq!(r.status, 200, "{:?}", r.error);
    let t = r.timings();
    near("waiting", t.waiting, D, SLACK);
    zeroish("receiving", t.receiving);
    zeroish("sending", t.sending);
    assert_eq!(t.duration, t.sending + t.waiting + t.receiving);
    assert!(
        t.connecting > Duration::ZERO,
        "new connection has a connect time"
    );
    assert!(t.blocked >= t.connecting);
    assert_eq!(t.looking_up, Duration::ZERO, "IP literal skips DNS");

    // Same connection again: nothing to wait for before sending.
    let r = get(&mut c, &srv.url("/")).await;
    let t = r.timings();
    assert_eq!(srv.conns(), 1);
    zeroish("blocked (reused)", t.blocked);
    assert_eq!(t.connecting, Duration::ZERO);
    assert_eq!(t.tls_handshaking, Duration::ZERO);
    near("waiting (reused)", t.waiting, D, SLACK);
}

#[tokio::test]
async fn receiving_spans_a_trickled_body() {
    let _one_at_a_time = TIMING.lock().await;
    let srv = raw_server(|mut s, _| async move {
        if read_request(&mut s).await.is_some() {
            write(
                &mut s,
                b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello",
            )
            .await;
            tokio::time::sleep(delay()).await;
            write(&mut s, b"wor").await;
            tokio::time::sleep(delay()).await;
            write(&mut s, b"ld").await;
        }
    })
    .await;
    let r = get(&mut client(), &srv.url("/")).await;
    assert_eq!(&r.body[..], b"helloworld");
    let t = r.timings();
    near("receiving", t.receiving, 2.0 * D, SLACK);
    zeroish("waiting", t.waiting);
}

#[tokio::test]
async fn receiving_starts_at_first_byte_of_a_trickled_head() {
    let _one_at_a_time = TIMING.lock().await;
    let srv = raw_server(|mut s, _| async move {
        if read_request(&mut s).await.is_some() {
            write(&mut s, b"HTTP/1.1 200 OK\r\n").await;
            tokio::time::sleep(delay()).await;
            write(&mut s, b"Content-Length: 2\r\n\r\nok").await;
        }
    })
    .await;
    let r = get(&mut client(), &srv.url("/")).await;
    assert_eq!(r.status, 200);
    let t = r.timings();
    zeroish("waiting", t.waiting);
    near("receiving", t.receiving, D, SLACK);
}

#[tokio::test]
async fn sending_covers_a_slowly_consumed_upload() {
    let _one_at_a_time = TIMING.lock().await;
    // 16 MiB cannot fit in socket buffers, so the write blocks until the server reads.
    const LEN: usize = 16 << 20;
    let srv = raw_server(|mut s, _| async move {
        let Some(head) = read_head(&mut s).await else {
            return;
        };
        let head_read = std::time::Instant::now();
        tokio::time::sleep(delay()).await;
        let mut body = vec![0u8; content_length_of(&head)];
        let _ = tokio::io::AsyncReadExt::read_exact(&mut s, &mut body).await;
        // The server's view of the upload (head to last body byte) bounds the client's
        // sending phase; copying 16 MiB takes longer when other tests share the cores.
        let took = head_read.elapsed().as_micros();
        let answer = format!("HTTP/1.1 200 OK\r\nX-Read-Us: {took}\r\nContent-Length: 2\r\n\r\nok");
        write(&mut s, answer.as_bytes()).await;
    })
    .await;
    let c = client();
    let mut req = Request::new(http::Method::POST, url(&srv.url("/up")));
    req.body = Bytes::from(vec![b'a'; LEN]);
    let r = c.send(req).await;
    assert_eq!(r.status, 200, "{:?}", r.error);
    let t = r.timings();
    let server_read: f64 = r.headers.get_str("x-read-us").unwrap().parse().unwrap();
    let server_read = server_read / 1000.0;
    let got = ms(t.sending);
    eprintln!("sending: {got:.2}ms (server read the upload in {server_read:.2}ms)");
    assert!(
        got >= D - 5.0,
        "sending {got:.1}ms does not cover the {D}ms the server waited"
    );
    // The head left before the server's clock started, the last bytes before it stopped.
    assert!(
        got <= server_read + 20.0,
        "sending {got:.1}ms, but the server read the whole upload in {server_read:.1}ms"
    );
    // The last byte leaves after the server's sleep, and the answer follows the server's
    // last read: waiting is within what the server spent after sleeping.
    assert!(
        ms(t.waiting) <= server_read - D + 20.0,
        "waiting {:?}, but the server answered {:.1}ms after its sleep",
        t.waiting,
        server_read - D
    );
    assert!(r.hops[0].bytes_sent > LEN as u64);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_handshake_and_blocked_then_reuse_is_free() {
    let _one_at_a_time = TIMING.lock().await;
    let pki = pki(&["127.0.0.1"]);
    let srv = tls_server(
        &pki,
        TlsOpts {
            alpn_h2: false,
            handshake_delay: delay(),
        },
    )
    .await;
    let mut c = tls_client(&pki);
    let r = get(&mut c, &https(&srv, "/echo")).await;
    assert_eq!(r.status, 200, "{:?}", r.error);
    let t = r.timings();
    near("tls_handshaking", t.tls_handshaking, D, SLACK);
    assert!(t.blocked >= t.tls_handshaking + t.connecting);
    near("blocked", t.blocked, D, SLACK);
    assert!(ms(t.waiting) < 50.0);
    assert_eq!(r.tls_version, "tls1.3");

    let r = get(&mut c, &https(&srv, "/echo")).await;
    let t = r.timings();
    assert_eq!(srv.conns(), 1);
    zeroish("blocked (reused)", t.blocked);
    assert_eq!(t.tls_handshaking, Duration::ZERO);
    assert_eq!(t.connecting, Duration::ZERO);
}

#[tokio::test]
async fn timeout_reports_phases_so_far() {
    let _one_at_a_time = TIMING.lock().await;
    let srv = raw_server(|mut s, _| async move {
        let _ = read_request(&mut s).await;
        tokio::time::sleep(Duration::from_secs(30)).await;
    })
    .await;
    let c = client();
    let mut req = Request::get(url(&srv.url("/")));
    req.timeout = Some(delay());
    let r = c.send(req).await;
    assert_eq!(r.status, 0);
    assert_eq!(r.error_code, 1050);
    assert_eq!(r.error.as_ref().unwrap().message, "request timeout");
    assert_eq!(r.hops.len(), 1);
    assert_eq!(r.hops[0].error_code, 1050);
    let t = r.timings();
    near("waiting at timeout", t.waiting, D, SLACK);
    assert!(r.hops[0].bytes_sent > 0);
}

#[tokio::test]
async fn dns_lookup_is_timed_and_cached() {
    let _one_at_a_time = TIMING.lock().await;
    let srv = http_server().await;
    let mut c = client_with(ClientConfig::default());
    let u = format!("http://localhost:{}/echo", srv.addr.port());
    let r = get(&mut c, &u).await;
    assert_eq!(r.status, 200, "{:?}", r.error);
    assert!(r.timings().looking_up > Duration::ZERO);
    assert!(r.timings().blocked >= r.timings().looking_up + r.timings().connecting);
    assert_eq!(
        r.remote_addr.unwrap().ip().to_string(),
        "127.0.0.1",
        "prefers IPv4"
    );
    c.close_idle();
    let r = get(&mut c, &u).await;
    assert_eq!(srv.conns(), 2, "close_idle dropped the pooled connection");
    assert!(
        ms(r.timings().looking_up) < 2.0,
        "cached: {:?}",
        r.timings().looking_up
    );
}
