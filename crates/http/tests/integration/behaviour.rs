//! Requests, responses, redirects, cookies and decoding against the hyper test server.

use std::time::Duration;

use bytes::Bytes;
use http::Method;
use rk6_http::{ClientConfig, Request};

use crate::support::*;

fn body(r: &rk6_http::Response) -> String {
    String::from_utf8_lossy(&r.body).into_owned()
}

#[tokio::test]
async fn echo_get_defaults_and_reuse() {
    let srv = http_server().await;
    let mut c = client_with(ClientConfig {
        user_agent: Some("rk6-test/1".into()),
        ..ClientConfig::default()
    });
    let r = get(&mut c, &srv.url("/echo?q=1")).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.status_text(), "200 OK");
    assert_eq!(r.proto, "HTTP/1.1");
    assert_eq!(r.error_code, 0);
    assert_eq!(r.tls_version, "");
    assert_eq!(r.remote_addr, Some(srv.addr));
    assert_eq!(r.header("content-type"), Some("text/plain"));
    let b = body(&r);
    assert!(b.starts_with("GET /echo?q=1 HTTP/1.1\n"), "{b}");
    assert!(b.contains(&format!("host: {}\n", srv.addr)), "{b}");
    assert!(b.contains("user-agent: rk6-test/1\n"));
    assert!(
        !b.contains("accept-encoding"),
        "k6 sends no Accept-Encoding"
    );
    assert!(r
        .request_header_list()
        .contains(&("User-Agent".into(), "rk6-test/1".into())));
    let hop = &r.hops[0];
    assert!(hop.bytes_sent > 50 && hop.bytes_received > r.body.len() as u64);
    for _ in 0..3 {
        assert_eq!(get(&mut c, &srv.url("/echo")).await.status, 200);
    }
    assert_eq!(srv.conns(), 1, "keep-alive reuses one connection");
}

#[tokio::test]
async fn user_headers_post_body_and_no_user_agent() {
    let srv = http_server().await;
    let mut c = client();
    let mut req = Request::new(Method::POST, url(&srv.url("/echo")));
    req.headers = vec![
        ("X-Custom".into(), "v".into()),
        ("User-Agent".into(), "mine".into()),
    ];
    req.body = Bytes::from_static(b"a=1&b=x+y");
    let b = body(&c.send(req).await);
    assert!(
        b.contains("x-custom: v\n") && b.contains("user-agent: mine\n"),
        "{b}"
    );
    assert!(b.contains("content-length: 9\n"));
    assert!(b.ends_with("\n\na=1&b=x+y"));

    let b = body(&get(&mut c, &srv.url("/echo")).await);
    assert!(!b.contains("user-agent"), "None → no User-Agent: {b}");
    assert!(
        !b.contains("content-length"),
        "GET without body has no Content-Length"
    );

    let b = body(
        &c.send(Request::new(Method::PUT, url(&srv.url("/echo"))))
            .await,
    );
    assert!(
        b.contains("content-length: 0\n"),
        "PUT without body sends 0 like Go"
    );
}

#[tokio::test]
async fn host_header_override_and_basic_auth_from_url() {
    let srv = http_server().await;
    let c = client();
    let mut req = Request::get(url(&format!("http://user:p%40ss@{}/echo", srv.addr)));
    req.headers = vec![("Host".into(), "example.test".into())];
    let b = body(&c.send(req).await);
    assert!(b.contains("host: example.test\n"), "{b}");
    assert!(b.contains("authorization: Basic dXNlcjpwQHNz\n"), "{b}");
}

#[tokio::test]
async fn status_404_is_not_an_error_but_has_code() {
    let srv = http_server().await;
    let r = get(&mut client(), &srv.url("/404")).await;
    assert_eq!(r.status, 404);
    assert_eq!(r.status_text(), "404 Not Found");
    assert!(r.error.is_none());
    assert_eq!(r.error_code, 1404);
    assert_eq!(r.hops[0].error_code, 1404);
    assert_eq!(body(&r), "nope");
}

#[tokio::test]
async fn headers_are_canonical_and_joined() {
    let srv = http_server().await;
    let r = get(&mut client(), &srv.url("/multi")).await;
    assert!(
        r.header_list().contains(&("X-Multi".into(), "a, b".into())),
        "{:?}",
        r.headers
    );
    assert!(r
        .header_list()
        .contains(&("X-Lower-Case".into(), "v".into())));
    assert!(r.header_list().iter().any(|(k, _)| k == "Content-Length"));
}

#[tokio::test]
async fn decodes_every_content_encoding() {
    let srv = http_server().await;
    let mut c = client();
    for enc in ["gzip", "deflate", "br", "zstd"] {
        let r = get(&mut c, &srv.url(&format!("/enc/{enc}"))).await;
        assert_eq!(body(&r), "hello compressed world", "{enc}");
        assert_eq!(r.header("content-encoding"), Some(enc));
    }
    let r = get(&mut c, &srv.url("/bad-gzip")).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.error_code, 1701);
    assert_eq!(r.error.as_ref().unwrap().code, 1701);
    assert_eq!(r.hops[0].error_code, 1701);
}

#[tokio::test]
async fn discard_body_counts_but_drops() {
    let srv = http_server().await;
    let mut req = Request::get(url(&srv.url("/big")));
    req.discard_body = true;
    let r = client().send(req).await;
    assert_eq!(r.status, 200);
    assert!(r.body.is_empty());
    assert!(r.hops[0].bytes_received > 1 << 20);
}

#[tokio::test]
async fn redirect_chain_hops_and_limits() {
    let srv = http_server().await;
    let mut c = client();
    let r = get(&mut c, &srv.url("/chain/3")).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.url.path(), "/chain/0");
    assert_eq!(r.hops.len(), 4);
    assert_eq!(
        r.hops.iter().map(|h| h.status).collect::<Vec<_>>(),
        vec![302, 302, 302, 200]
    );
    assert_eq!(r.hops[1].url.path(), "/chain/2");
    assert!(!r.too_many_redirects);

    // redirects: 0 returns the 3xx itself.
    let mut req = Request::get(url(&srv.url("/chain/3")));
    req.max_redirects = Some(0);
    let r = c.send(req).await;
    assert_eq!((r.status, r.hops.len()), (302, 1));
    assert!(r.too_many_redirects && r.error.is_none());
    assert_eq!(r.header("location"), Some("/chain/2"));

    // Limit 2 follows two redirects and returns the third 3xx.
    let mut req = Request::get(url(&srv.url("/chain/5")));
    req.max_redirects = Some(2);
    let r = c.send(req).await;
    assert_eq!((r.status, r.hops.len()), (302, 3));
    assert_eq!(r.url.path(), "/chain/3");
}

#[tokio::test]
async fn redirect_method_rewrite_and_referer() {
    let srv = http_server().await;
    let c = client();
    for (code, method, has_body) in [
        (301, "GET", false),
        (302, "GET", false),
        (303, "GET", false),
        (307, "POST", true),
        (308, "POST", true),
    ] {
        let mut req = Request::new(Method::POST, url(&srv.url(&format!("/status/{code}/echo"))));
        req.headers = vec![("Content-Type".into(), "text/plain".into())];
        req.body = Bytes::from_static(b"payload");
        let r = c.send(req).await;
        assert_eq!(r.status, 200, "{code}");
        assert_eq!(r.hops[0].method, Method::POST);
        assert_eq!(r.hops[1].method.as_str(), method, "{code}");
        let b = body(&r);
        assert!(b.starts_with(&format!("{method} /echo")), "{code}: {b}");
        assert_eq!(b.ends_with("\n\npayload"), has_body, "{code}: {b}");
        assert_eq!(b.contains("content-type"), has_body, "{code}: {b}");
        assert!(
            b.contains(&format!(
                "referer: http://{}/status/{code}/echo\n",
                srv.addr
            )),
            "{b}"
        );
    }
}

#[tokio::test]
async fn cookies_stored_from_every_hop_and_sent() {
    let srv = http_server().await;
    let mut c = client();
    let r = get(&mut c, &srv.url("/setcookie")).await;
    assert_eq!(r.set_cookies().count(), 2);
    let u = url(&srv.url("/"));
    let mut jar = c.cookies().cookies_for_url(&u);
    jar.sort();
    assert_eq!(
        jar,
        vec![("a".into(), "1".into()), ("b".into(), "2".into())]
    );

    // A redirect's Set-Cookie applies to the next hop.
    let r = get(&mut c, &srv.url("/redirect-cookie")).await;
    let b = body(&r);
    assert!(
        b.contains("r=9") && b.contains("a=1") && b.contains("b=2"),
        "{b}"
    );

    // User header, request-scoped cookies, then the jar.
    c.cookies().clear();
    c.cookies().set(&u, "j=1").unwrap();
    let mut req = Request::get(url(&srv.url("/cookies")));
    req.headers = vec![("Cookie".into(), "h=0".into())];
    req.cookies = vec![("s".into(), "2".into())];
    let r = c.send(req).await;
    assert_eq!(body(&r), "h=0; s=2; j=1");
    assert_eq!(
        c.cookies().cookies_for_url(&u),
        vec![("j".into(), "1".into())],
        "request cookies not stored"
    );
}

#[tokio::test]
async fn connection_close_and_no_reuse() {
    let srv = http_server().await;
    let mut c = client();
    assert_eq!(get(&mut c, &srv.url("/close")).await.status, 200);
    assert_eq!(get(&mut c, &srv.url("/echo")).await.status, 200);
    assert_eq!(srv.conns(), 2, "Connection: close is honoured");

    let srv = http_server().await;
    let mut c = client_with(ClientConfig {
        no_connection_reuse: true,
        ..ClientConfig::default()
    });
    for _ in 0..3 {
        let r = get(&mut c, &srv.url("/echo")).await;
        assert!(body(&r).contains("connection: close"));
    }
    assert_eq!(srv.conns(), 3);
}

#[tokio::test]
async fn stale_keepalive_is_retried_for_idempotent_requests() {
    // Each connection answers its first request, then reads the second and hangs up.
    let srv = raw_server(|mut s, _| async move {
        if read_request(&mut s).await.is_some() {
            write(&mut s, &ok_response("first")).await;
        }
        let _ = read_request(&mut s).await;
    })
    .await;
    let mut c = client();
    assert_eq!(body(&get(&mut c, &srv.url("/")).await), "first");
    let r = get(&mut c, &srv.url("/")).await;
    assert_eq!(r.status, 200, "{:?}", r.error);
    assert_eq!(srv.conns(), 2);
    assert_eq!(r.hops.len(), 1);

    // A POST that reached the server is not replayed.
    let mut req = Request::new(Method::POST, url(&srv.url("/")));
    req.body = Bytes::from_static(b"x");
    let r = c.send(req).await;
    assert_eq!(r.status, 0);
    assert_eq!(r.error_code, 1000, "{:?}", r.error);
}

#[tokio::test]
async fn server_closing_idle_connection_is_not_an_error() {
    let srv = raw_server(|mut s, _| async move {
        if read_request(&mut s).await.is_some() {
            write(&mut s, &ok_response("once")).await;
        }
    })
    .await;
    let mut c = client();
    assert_eq!(get(&mut c, &srv.url("/")).await.status, 200);
    tokio::time::sleep(Duration::from_millis(20)).await;
    let mut req = Request::new(Method::POST, url(&srv.url("/")));
    req.body = Bytes::from_static(b"x");
    let r = c.send(req).await;
    assert_eq!(r.status, 200, "{:?}", r.error);
    assert_eq!(srv.conns(), 2);
}

#[tokio::test]
async fn http_1_0_response_read_to_eof() {
    let srv = raw_server(|mut s, _| async move {
        if read_request(&mut s).await.is_some() {
            write(&mut s, b"HTTP/1.0 200 Fine\r\nX-A: b\r\n\r\nold school").await;
        }
    })
    .await;
    let r = get(&mut client(), &srv.url("/")).await;
    assert_eq!(r.proto, "HTTP/1.0");
    assert_eq!(r.status_text(), "200 Fine");
    assert_eq!(body(&r), "old school");
}

#[tokio::test]
async fn http1_heads_go_out_as_go_writes_them() {
    // The server answers with the request head it read, byte for byte.
    let srv = raw_server(|mut s, _| async move {
        if let Some(head) = read_head(&mut s).await {
            let body = head.into_bytes();
            let mut answer =
                format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len()).into_bytes();
            answer.extend_from_slice(&body);
            write(&mut s, &answer).await;
        }
    })
    .await;
    let c = client_with(ClientConfig {
        user_agent: Some("ua/1".into()),
        ..ClientConfig::default()
    });
    let mut req = Request::new(
        http::Method::POST,
        url(&format!("http://u:p@{}/x", srv.addr)),
    );
    req.headers = vec![
        ("x-probe".into(), "1".into()),
        ("content-type".into(), "text/plain".into()),
        ("X-UPPER".into(), "2".into()),
        ("b-h".into(), "first".into()),
        ("a-h".into(), "2".into()),
        ("b-h".into(), "second".into()),
        ("Cookie".into(), "c=1".into()),
    ];
    req.body = Bytes::from_static(b"abc");
    let r = c.send(req).await;
    assert_eq!(r.status, 200, "{:?}", r.error);
    // As k6 1.1.0 writes a request (compared on the wire): Host, User-Agent, Content-Length,
    // then the rest sorted by name, each in Go's canonical case, repeated names in order.
    let want = format!(
        "POST /x HTTP/1.1\r\nHost: {}\r\nUser-Agent: ua/1\r\nContent-Length: 3\r\nA-H: 2\r\n\
         Authorization: Basic dTpw\r\nB-H: first\r\nB-H: second\r\nContent-Type: text/plain\r\n\
         Cookie: c=1\r\nX-Probe: 1\r\nX-Upper: 2\r\n\r\n",
        srv.addr
    );
    assert_eq!(String::from_utf8_lossy(&r.body), want);
}
