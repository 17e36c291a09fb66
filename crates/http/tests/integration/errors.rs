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
    assert!(r.hops[0].timings.connecting > Duration::ZERO);
}

#[tokio::test]
async fn invalid_url_is_1020() {
    let r = get(&mut client(), "ftp://127.0.0.1/x").await;
    assert_eq!(r.error_code, 1020);
    assert_eq!(r.hops.len(), 1);
    let r = get(&mut client(), "data:text/plain,hi").await;
    assert_eq!(r.error_code, 1020);
}

#[tokio::test]
async fn unknown_host_is_dns_error() {
    let mut req = Request::get(url("http://no-such-host.invalid/"));
    req.timeout = Some(Duration::from_secs(10));
    let r = client().send(req).await;
    assert_eq!(r.status, 0);
    // Sandboxes without a resolver answer EAI_AGAIN (1100) instead of NXDOMAIN (1101).
    assert!(matches!(r.error_code, 1100 | 1101), "{:?}", r.error);
    assert!(r.hops[0].timings.looking_up > Duration::ZERO);
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
    assert!(r.error.unwrap().message.contains("malformed"));
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
