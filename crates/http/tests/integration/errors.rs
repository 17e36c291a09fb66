//! Transport failures and their k6 error codes.

use std::time::Duration;

use rk6_http::Request;

use crate::support::*;

#[tokio::test]
async fn connection_refused_is_1212() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let r = get(&mut client(), &format!("http://127.0.0.1:{port}/")).await;
    assert_eq!(r.status, 0);
    assert_eq!(r.error_code, 1212);
    assert_eq!(r.error.unwrap().message, "dial: connection refused");
    assert_eq!(r.hops.len(), 1);
    assert_eq!(r.hops[0].status, 0);
    // k6 counts only completed steps and `blocked` only once a connection is held.
    assert_eq!(r.hops[0].timings, rk6_http::Timings::default());
}

#[tokio::test]
async fn invalid_url_is_1020() {
    let r = get(&mut client(), "ftp://127.0.0.1/x").await;
    assert_eq!(r.error_code, 1020);
    assert_eq!(r.hops.len(), 1);
    let r = get(&mut client(), "data:text/plain,hi").await;
    assert_eq!(r.error_code, 1020);
}

/// A name glibc and Go both reject before asking any resolver: a label longer than 63
/// bytes. `.invalid` alone would still send a query to the configured nameserver.
pub fn unresolvable_host() -> String {
    format!("{}.invalid", "a".repeat(64))
}

#[tokio::test]
async fn unknown_host_is_1101_without_a_query() {
    let mut req = Request::get(url(&format!("http://{}/", unresolvable_host())));
    req.timeout = Some(Duration::from_secs(10));
    let r = client().send(req).await;
    assert_eq!(r.status, 0);
    let e = r.error.unwrap();
    assert_eq!((e.code, e.message.as_str()), (1101, "lookup: no such host"));
    assert_eq!(r.hops.len(), 1);
    assert_eq!(r.hops[0].error_code, 1101);
    assert_eq!(r.hops[0].timings, rk6_http::Timings::default());
}

#[tokio::test]
async fn reset_mid_body_is_1220() {
    let srv = raw_server(|mut s, _| async move {
        if read_request(&mut s).await.is_some() {
            write(
                &mut s,
                b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial",
            )
            .await;
            tokio::time::sleep(Duration::from_millis(20)).await;
            reset(s);
        }
    })
    .await;
    let r = get(&mut client(), &srv.url("/")).await;
    assert_eq!(r.status, 0);
    assert_eq!(r.error_code, 1220, "{:?}", r.error);
    assert_eq!(r.error.unwrap().message, "read: connection reset by peer");
    assert!(r.hops[0].timings.receiving > Duration::ZERO);
    assert_eq!(&r.body[..], b"partial", "k6 keeps the bytes that arrived");
}

#[tokio::test]
async fn eof_mid_body_is_generic() {
    let srv = raw_server(|mut s, _| async move {
        if read_request(&mut s).await.is_some() {
            write(
                &mut s,
                b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial",
            )
            .await;
        }
    })
    .await;
    let r = get(&mut client(), &srv.url("/")).await;
    assert_eq!(r.status, 0);
    assert_eq!(r.error_code, 1000, "{:?}", r.error);
    assert_eq!(r.error.unwrap().message, "unexpected EOF");
}

#[tokio::test]
async fn malformed_response_is_1000() {
    let srv = raw_server(|mut s, _| async move {
        if read_request(&mut s).await.is_some() {
            write(&mut s, b"this is not http\r\n\r\n").await;
        }
    })
    .await;
    let r = get(&mut client(), &srv.url("/")).await;
    assert_eq!(r.status, 0);
    assert_eq!(r.error_code, 1000, "{:?}", r.error);
    // Go's wording: the second word is taken for the status code.
    assert_eq!(
        r.error.unwrap().message,
        "malformed HTTP status code \"is\""
    );
}

#[tokio::test]
async fn server_hangs_up_without_answer() {
    let srv = raw_server(|mut s, _| async move {
        let _ = read_request(&mut s).await;
    })
    .await;
    let r = get(&mut client(), &srv.url("/")).await;
    assert_eq!(r.status, 0);
    assert_eq!(r.error_code, 1000);
    assert_eq!(r.error.unwrap().message, "EOF");
}

#[tokio::test]
async fn timeout_covers_the_body() {
    let srv = raw_server(|mut s, _| async move {
        if read_request(&mut s).await.is_some() {
            write(&mut s, b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nab").await;
            tokio::time::sleep(Duration::from_secs(30)).await;
        }
    })
    .await;
    let mut req = Request::get(url(&srv.url("/")));
    req.timeout = Some(Duration::from_millis(150));
    let r = client().send(req).await;
    assert_eq!(r.error_code, 1050);
    assert_eq!(&r.body[..], b"ab", "k6 keeps the bytes that arrived");
    let t = r.timings();
    near("receiving at timeout", t.receiving, 150.0, 60.0);
}

#[tokio::test]
async fn timeout_covers_redirects() {
    let srv = raw_server(|mut s, n| async move {
        if read_request(&mut s).await.is_some() {
            if n == 0 {
                let resp = b"HTTP/1.1 302 Found\r\nLocation: /next\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
                write(&mut s, resp).await;
            } else {
                tokio::time::sleep(Duration::from_secs(30)).await;
            }
        }
    })
    .await;
    let mut req = Request::get(url(&srv.url("/")));
    req.timeout = Some(Duration::from_millis(200));
    let r = client().send(req).await;
    assert_eq!(r.error_code, 1050);
    assert_eq!(r.hops.len(), 2);
    assert_eq!((r.hops[0].status, r.hops[1].status), (302, 0));
    assert_eq!(r.url.path(), "/next");
}

/// First connection: answers one request, then reads the next and hangs up (RST if
/// `rst`); later connections answer every request with `second`.
async fn closes_after_one(rst: bool) -> TestServer {
    raw_server(move |mut s, n| async move {
        if n == 0 {
            if read_request(&mut s).await.is_some() {
                write(&mut s, &ok_response("first")).await;
            }
            if read_request(&mut s).await.is_some() && rst {
                reset(s);
            }
        } else {
            while read_request(&mut s).await.is_some() {
                write(&mut s, &ok_response("second")).await;
            }
        }
    })
    .await
}

#[tokio::test]
async fn closed_keep_alive_connection_replays_a_get_once() {
    for rst in [false, true] {
        let srv = closes_after_one(rst).await;
        let mut c = client();
        assert_eq!(&get(&mut c, &srv.url("/")).await.body[..], b"first");
        let r = get(&mut c, &srv.url("/")).await;
        assert!(r.error.is_none(), "rst={rst}: {:?}", r.error);
        assert_eq!((r.status, &r.body[..]), (200, &b"second"[..]));
        assert_eq!(r.hops.len(), 1, "the replay is not a hop of its own");
        assert_eq!(srv.conns(), 2);
        // The replay opened a connection, and its phases say so.
        assert!(r.timings().connecting > Duration::ZERO);
    }
}

#[tokio::test]
async fn closed_keep_alive_connection_does_not_replay_put_or_post() {
    for (rst, code, message) in [
        (false, 1000, "EOF"),
        (true, 1220, "read: connection reset by peer"),
    ] {
        let srv = closes_after_one(rst).await;
        let mut c = client();
        assert_eq!(get(&mut c, &srv.url("/")).await.status, 200);
        let mut put = Request::new(http::Method::PUT, url(&srv.url("/")));
        put.body = bytes::Bytes::from_static(b"x");
        let r = c.send(put).await;
        let e = r.error.expect("PUT is not replayed");
        assert_eq!((e.code, e.message.as_str()), (code, message), "rst={rst}");
        assert_eq!(srv.conns(), 1);
    }
    // An idempotency key makes any method replayable (Go's rule).
    let srv = closes_after_one(false).await;
    let mut c = client();
    assert_eq!(get(&mut c, &srv.url("/")).await.status, 200);
    let mut post = Request::new(http::Method::POST, url(&srv.url("/")));
    post.headers = vec![("Idempotency-Key".into(), "k1".into())];
    let r = c.send(post).await;
    assert_eq!(
        (r.status, &r.body[..]),
        (200, &b"second"[..]),
        "{:?}",
        r.error
    );
}

#[tokio::test]
async fn server_that_never_reads_times_out_in_waiting() {
    let srv = raw_server(|s, _| async move {
        tokio::time::sleep(Duration::from_secs(30)).await;
        drop(s);
    })
    .await;
    let mut req = Request::get(url(&srv.url("/")));
    req.timeout = Some(Duration::from_millis(200));
    let r = client().send(req).await;
    let e = r.error.clone().unwrap();
    assert_eq!((e.code, e.message.as_str()), (1050, "request timeout"));
    let t = r.timings();
    assert!(t.waiting >= Duration::from_millis(190), "{t:?}");
    assert_eq!(t.receiving, Duration::ZERO);
}

#[tokio::test]
async fn too_many_redirects_returns_the_last_3xx_without_error() {
    let srv = raw_server(|mut s, _| async move {
        while read_request(&mut s).await.is_some() {
            let resp = b"HTTP/1.1 302 Found\r\nLocation: /again\r\nContent-Length: 0\r\n\r\n";
            write(&mut s, resp).await;
        }
    })
    .await;
    let mut c = client();
    let r = get(&mut c, &srv.url("/")).await;
    assert_eq!((r.status, r.error_code), (302, 0));
    assert!(r.error.is_none() && r.too_many_redirects);
    assert_eq!(r.hops.len(), 11, "the first request and 10 redirects");
    assert_eq!(r.url.path(), "/again");
    let mut req = Request::get(url(&srv.url("/")));
    req.max_redirects = Some(2);
    let r = c.send(req).await;
    assert_eq!((r.status, r.hops.len()), (302, 3));
}

#[tokio::test]
async fn plain_http_answer_to_tls_is_1301() {
    let srv = raw_server(|mut s, _| async move {
        let mut buf = [0u8; 64];
        let _ = tokio::io::AsyncReadExt::read(&mut s, &mut buf).await;
        write(&mut s, b"HTTP/1.1 400 Bad Request\r\n\r\n").await;
    })
    .await;
    let r = get(&mut client(), &format!("https://{}/", srv.addr)).await;
    let e = r.error.unwrap();
    assert_eq!(
        (e.code, e.message.as_str()),
        (1301, "tls: first record does not look like a TLS handshake")
    );
}

#[tokio::test]
async fn timeout_while_connecting_reports_no_phase() {
    // A full backlog (0, with one connection queued) drops the SYN: the connect hangs.
    let sock = tokio::net::TcpSocket::new_v4().unwrap();
    sock.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let l = sock.listen(0).unwrap();
    let addr = l.local_addr().unwrap();
    let _occupier = std::net::TcpStream::connect(addr).unwrap();
    let mut req = Request::get(url(&format!("http://{addr}/")));
    req.timeout = Some(Duration::from_millis(300));
    let r = client().send(req).await;
    assert_eq!(r.error_code, 1050, "{:?}", r.error);
    // As k6: nothing completed, so every phase is 0 (not 300 ms of `blocked`).
    assert_eq!(r.timings(), rk6_http::Timings::default());
    drop(l);
}
