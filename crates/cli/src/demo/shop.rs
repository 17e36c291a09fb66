//! The demo shop: login, a product catalogue, orders, a slow endpoint and logout.
//!
//! All state lives in memory for the lifetime of one [`serve`] call, so every
//! `rk6 demo` run starts from a clean shop.

use std::collections::HashMap;
use std::convert::Infallible;
use std::hash::{BuildHasher, Hasher, RandomState};
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{json, Map, Value};
use tokio::net::TcpListener;
use tokio::task::JoinSet;

use super::storefront;

type Resp = Response<Full<Bytes>>;

/// The password every demo user shares; the README tells people to use it.
const PASSWORD: &str = "secret";
const SESSION_COOKIE: &str = "session";
const DEFAULT_SLOW_MS: u64 = 200;
const MAX_SLOW_MS: u64 = 5000;
const MAX_QUANTITY: u64 = 100;
/// Request bodies are tiny in the demo; the cap keeps a misbehaving script from ballooning memory.
const MAX_BODY_BYTES: usize = 64 * 1024;

struct Product {
    id: u64,
    name: &'static str,
    price: f64,
}

const PRODUCTS: [Product; 5] = [
    Product {
        id: 1,
        name: "Ferris Mug",
        price: 12.5,
    },
    Product {
        id: 2,
        name: "Latency Socks",
        price: 7.25,
    },
    Product {
        id: 3,
        name: "Throughput Hoodie",
        price: 49.0,
    },
    Product {
        id: 4,
        name: "p99 Sticker Pack",
        price: 3.99,
    },
    Product {
        id: 5,
        name: "Virtual User Plush",
        price: 24.0,
    },
];

const INDEX_HTML: &str =
    "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>rk6 demo shop</title></head>\n\
<body><h1>rk6 demo shop</h1>\n<p>A tiny API to point load tests at: \
<code>POST /api/login</code>, <code>GET /api/products</code>, <code>POST /api/orders</code>, \
<code>GET /api/slow?ms=N</code>, <code>GET /api/logout</code>; and a storefront for browser tests at \
<a href=\"/shop/login\">/shop/login</a>.</p></body></html>\n";

#[derive(Default)]
struct Shop {
    /// Session token -> user name.
    sessions: Mutex<HashMap<String, String>>,
    last_order_id: AtomicU64,
    token_counter: AtomicU64,
    /// Randomly keyed per process, so tokens are not guessable from the counter alone.
    token_keys: RandomState,
}

impl Shop {
    fn new_token(&self) -> String {
        let n = self.token_counter.fetch_add(1, Ordering::Relaxed);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let half = |salt: u64| {
            let mut h = self.token_keys.build_hasher();
            h.write_u64(salt);
            h.write_u64(n);
            h.write_u128(nanos);
            h.finish()
        };
        format!("{:016x}{:016x}", half(1), half(2))
    }

    fn session_user(&self, headers: &HeaderMap) -> Option<String> {
        let token = cookie_value(headers, SESSION_COOKIE)?;
        self.sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&token)
            .cloned()
    }
}

/// Serves the demo shop on `listener` until the returned handle is dropped / the task is aborted.
pub async fn serve(listener: TcpListener) -> io::Result<()> {
    let shop = Arc::new(Shop::default());
    // Owning the connection tasks here means aborting/dropping `serve` also closes
    // keep-alive connections instead of leaking them.
    let mut connections = JoinSet::new();
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) if is_per_connection(&e) => continue,
            Err(_) => {
                // Usually fd exhaustion under heavy load: back off rather than
                // killing the demo in the middle of a test run.
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        while connections.try_join_next().is_some() {}
        let shop = Arc::clone(&shop);
        connections.spawn(async move {
            let service = service_fn(move |req| {
                let shop = Arc::clone(&shop);
                async move { Ok::<_, Infallible>(route(&shop, req).await) }
            });
            // A failed connection (client reset, malformed request) only affects that client.
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

fn is_per_connection(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted
            | io::ErrorKind::WouldBlock
    )
}

async fn route(shop: &Shop, req: Request<Incoming>) -> Resp {
    let path = req.uri().path().to_owned();
    let method = req.method().clone();
    match (&method, path.as_str()) {
        (&Method::GET | &Method::HEAD, "/") => html(INDEX_HTML),
        (&Method::GET | &Method::HEAD, "/health") => text(StatusCode::OK, "ok"),
        (&Method::POST, "/api/login") => login(shop, req).await,
        (&Method::GET, "/api/products") => list_products(shop, req.headers()),
        (&Method::GET, p) if p.starts_with("/api/products/") => {
            product_detail(&p["/api/products/".len()..])
        }
        (&Method::POST, "/api/orders") => create_order(shop, req).await,
        (&Method::GET, "/api/slow") => slow(req.uri().query()).await,
        (&Method::GET, "/api/logout") => logout(shop, req.headers()),
        (&Method::GET, "/shop" | "/shop/") => redirect("/shop/login"),
        (&Method::GET, "/shop/login") => html_page(StatusCode::OK, storefront::login_page(None)),
        (&Method::POST, "/shop/login") => storefront_login(shop, req).await,
        (&Method::GET, "/shop/products") => match shop.session_user(req.headers()) {
            Some(user) => {
                let products: Vec<(u64, &str, f64)> =
                    PRODUCTS.iter().map(|p| (p.id, p.name, p.price)).collect();
                html_page(StatusCode::OK, storefront::products_page(&user, &products))
            }
            None => redirect("/shop/login"),
        },
        (&Method::POST, "/shop/order") => storefront_order(shop, req).await,
        (&Method::GET, "/shop/logout") => {
            let mut resp = logout(shop, req.headers());
            resp.headers_mut()
                .insert(header::LOCATION, HeaderValue::from_static("/shop/login"));
            resp
        }
        (&Method::GET, "/shop/help") => html(storefront::HELP_PAGE),
        (&Method::GET, "/shop/logo.svg") => {
            with_type(StatusCode::OK, storefront::LOGO_SVG, "image/svg+xml")
        }
        (&Method::GET, p) if p.starts_with("/shop/img/") && p.ends_with(".svg") => {
            match p["/shop/img/".len()..p.len() - 4]
                .parse::<u64>()
                .ok()
                .and_then(find_product)
            {
                Some(product) => with_type(
                    StatusCode::OK,
                    storefront::product_image(product.id),
                    "image/svg+xml",
                ),
                None => error(StatusCode::NOT_FOUND, "not found"),
            }
        }
        (
            _,
            "/" | "/health" | "/api/login" | "/api/products" | "/api/orders" | "/api/slow"
            | "/api/logout",
        ) => error(StatusCode::METHOD_NOT_ALLOWED, "method not allowed"),
        _ => error(StatusCode::NOT_FOUND, "not found"),
    }
}

async fn login(shop: &Shop, req: Request<Incoming>) -> Resp {
    let params = match read_params(req).await {
        Ok(p) => p,
        Err(resp) => return resp,
    };
    let user = field_str(&params, "username").unwrap_or_default();
    let password = field_str(&params, "password").unwrap_or_default();
    if user.is_empty() || password != PASSWORD {
        return error(StatusCode::UNAUTHORIZED, "bad credentials");
    }
    let token = shop.new_token();
    shop.sessions
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(token.clone(), user.clone());
    let mut resp = json_response(StatusCode::OK, json!({ "user": user }));
    set_cookie(
        &mut resp,
        &format!("{SESSION_COOKIE}={token}; Path=/; HttpOnly"),
    );
    resp
}

fn list_products(shop: &Shop, headers: &HeaderMap) -> Resp {
    if shop.session_user(headers).is_none() {
        return login_required();
    }
    let products: Vec<Value> = PRODUCTS.iter().map(product_json).collect();
    json_response(StatusCode::OK, json!({ "products": products }))
}

/// Product pages are public (no session), like a real shop's catalogue pages.
fn product_detail(id: &str) -> Resp {
    match id.parse::<u64>().ok().and_then(find_product) {
        Some(p) => json_response(StatusCode::OK, product_json(p)),
        None => error(StatusCode::NOT_FOUND, "product not found"),
    }
}

async fn create_order(shop: &Shop, req: Request<Incoming>) -> Resp {
    if shop.session_user(req.headers()).is_none() {
        return login_required();
    }
    let params = match read_params(req).await {
        Ok(p) => p,
        Err(resp) => return resp,
    };
    let Some(product) = field_u64(&params, "product_id").and_then(find_product) else {
        return error(StatusCode::BAD_REQUEST, "unknown or missing product_id");
    };
    let quantity = match field_u64(&params, "quantity") {
        Some(q @ 1..=MAX_QUANTITY) => q,
        _ => {
            return error(
                StatusCode::BAD_REQUEST,
                "quantity must be an integer between 1 and 100",
            )
        }
    };
    let order_id = shop.last_order_id.fetch_add(1, Ordering::Relaxed) + 1;
    // Round to cents so totals print like prices rather than float noise.
    let total = (product.price * quantity as f64 * 100.0).round() / 100.0;
    json_response(
        StatusCode::CREATED,
        json!({
            "order_id": order_id,
            "product_id": product.id,
            "quantity": quantity,
            "total": total,
        }),
    )
}

/// The storefront's login form post: a session cookie and a redirect to the catalogue.
async fn storefront_login(shop: &Shop, req: Request<Incoming>) -> Resp {
    let params = match read_params(req).await {
        Ok(p) => p,
        Err(resp) => return resp,
    };
    let user = field_str(&params, "username").unwrap_or_default();
    let password = field_str(&params, "password").unwrap_or_default();
    if user.is_empty() || password != PASSWORD {
        return html_page(
            StatusCode::UNAUTHORIZED,
            storefront::login_page(Some("Wrong user name or password")),
        );
    }
    let token = shop.new_token();
    shop.sessions
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(token.clone(), user);
    let mut resp = redirect("/shop/products");
    set_cookie(
        &mut resp,
        &format!("{SESSION_COOKIE}={token}; Path=/; HttpOnly"),
    );
    resp
}

/// The storefront's order form post: the confirmation page.
async fn storefront_order(shop: &Shop, req: Request<Incoming>) -> Resp {
    if shop.session_user(req.headers()).is_none() {
        return redirect("/shop/login");
    }
    let params = match read_params(req).await {
        Ok(p) => p,
        Err(resp) => return resp,
    };
    let product = field_u64(&params, "product").and_then(find_product);
    let quantity = field_u64(&params, "quantity").filter(|q| (1..=MAX_QUANTITY).contains(q));
    let (Some(product), Some(quantity)) = (product, quantity) else {
        return html_page(
            StatusCode::BAD_REQUEST,
            storefront::login_page(Some("Bad order")),
        );
    };
    let order_id = shop.last_order_id.fetch_add(1, Ordering::Relaxed) + 1;
    let total = (product.price * quantity as f64 * 100.0).round() / 100.0;
    let gift = field_str(&params, "gift").is_some();
    html_page(
        StatusCode::OK,
        storefront::confirmation_page(order_id, quantity, product.name, total, gift),
    )
}

fn redirect(to: &'static str) -> Resp {
    let mut resp = Response::new(Full::new(Bytes::new()));
    *resp.status_mut() = StatusCode::SEE_OTHER;
    resp.headers_mut()
        .insert(header::LOCATION, HeaderValue::from_static(to));
    resp
}

fn html_page(status: StatusCode, body: String) -> Resp {
    with_type(status, body, "text/html; charset=utf-8")
}

async fn slow(query: Option<&str>) -> Resp {
    let requested = parse_urlencoded(query.unwrap_or(""))
        .into_iter()
        .rev()
        .find(|(k, _)| k == "ms")
        .map(|(_, v)| v);
    let ms = match requested {
        None => DEFAULT_SLOW_MS,
        Some(v) => match v.parse::<u64>() {
            Ok(ms) => ms.min(MAX_SLOW_MS),
            Err(_) => return error(StatusCode::BAD_REQUEST, "ms must be a non-negative integer"),
        },
    };
    tokio::time::sleep(Duration::from_millis(ms)).await;
    json_response(StatusCode::OK, json!({ "slept_ms": ms }))
}

fn logout(shop: &Shop, headers: &HeaderMap) -> Resp {
    if let Some(token) = cookie_value(headers, SESSION_COOKIE) {
        shop.sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&token);
    }
    let mut resp = Response::new(Full::new(Bytes::new()));
    *resp.status_mut() = StatusCode::FOUND;
    resp.headers_mut()
        .insert(header::LOCATION, HeaderValue::from_static("/"));
    set_cookie(
        &mut resp,
        &format!("{SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly"),
    );
    resp
}

fn find_product(id: u64) -> Option<&'static Product> {
    PRODUCTS.iter().find(|p| p.id == id)
}

fn product_json(p: &Product) -> Value {
    json!({ "id": p.id, "name": p.name, "price": p.price })
}

/// Reads a JSON object or form-urlencoded body; k6 scripts commonly send either.
async fn read_params(req: Request<Incoming>) -> Result<Map<String, Value>, Resp> {
    let is_json = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.to_ascii_lowercase().contains("json"));
    let body = match Limited::new(req.into_body(), MAX_BODY_BYTES)
        .collect()
        .await
    {
        Ok(collected) => collected.to_bytes(),
        Err(_) => {
            return Err(error(
                StatusCode::BAD_REQUEST,
                "unreadable or oversized body",
            ))
        }
    };
    if is_json {
        match serde_json::from_slice::<Value>(&body) {
            Ok(Value::Object(map)) => Ok(map),
            _ => Err(error(StatusCode::BAD_REQUEST, "body must be a JSON object")),
        }
    } else {
        let text = String::from_utf8_lossy(&body);
        Ok(parse_urlencoded(&text)
            .into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect())
    }
}

fn field_str(params: &Map<String, Value>, key: &str) -> Option<String> {
    match params.get(key)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Accepts numbers or numeric strings, since form bodies only carry strings.
fn field_u64(params: &Map<String, Value>, key: &str) -> Option<u64> {
    match params.get(key)? {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn cookie_value(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, v)| *k == name && !v.is_empty())
        .map(|(_, v)| v.to_owned())
}

fn parse_urlencoded(s: &str) -> Vec<(String, String)> {
    s.split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect()
}

/// A form field as the text it encodes: `+` is a space, malformed escapes pass through
/// literally (as browsers do), invalid UTF-8 is replaced.
fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(&s.replace('+', " "))
        .decode_utf8_lossy()
        .into_owned()
}

fn set_cookie(resp: &mut Resp, cookie: &str) {
    if let Ok(v) = HeaderValue::from_str(cookie) {
        resp.headers_mut().append(header::SET_COOKIE, v);
    }
}

fn login_required() -> Resp {
    error(StatusCode::UNAUTHORIZED, "login required")
}

fn error(status: StatusCode, message: &str) -> Resp {
    json_response(status, json!({ "error": message }))
}

fn json_response(status: StatusCode, body: Value) -> Resp {
    with_type(status, body.to_string(), "application/json")
}

fn text(status: StatusCode, body: &'static str) -> Resp {
    with_type(status, body, "text/plain; charset=utf-8")
}

fn html(body: &'static str) -> Resp {
    with_type(StatusCode::OK, body, "text/html; charset=utf-8")
}

fn with_type(status: StatusCode, body: impl Into<Bytes>, content_type: &'static str) -> Resp {
    let mut resp = Response::new(Full::new(body.into()));
    *resp.status_mut() = status;
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    resp
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::SocketAddr;
    use tokio::net::TcpStream;

    struct Reply {
        status: StatusCode,
        headers: HeaderMap,
        body: String,
    }

    impl Reply {
        fn json(&self) -> Value {
            serde_json::from_str(&self.body).expect("JSON body")
        }
    }

    /// One request per connection keeps the client trivial.
    async fn send(
        addr: SocketAddr,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Reply {
        let stream = TcpStream::connect(addr).await.expect("connect");
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .expect("handshake");
        tokio::spawn(conn);
        let mut builder = Request::builder()
            .method(method)
            .uri(path)
            .header(header::HOST, addr.to_string());
        for (k, v) in headers {
            builder = builder.header(*k, *v);
        }
        let req = builder
            .body(Full::new(Bytes::from(body.to_owned())))
            .expect("request");
        let resp = sender.send_request(req).await.expect("response");
        let (parts, body) = resp.into_parts();
        let bytes = body.collect().await.expect("body").to_bytes();
        Reply {
            status: parts.status,
            headers: parts.headers,
            body: String::from_utf8(bytes.to_vec()).expect("utf-8 body"),
        }
    }

    #[tokio::test]
    async fn login_browse_order_logout() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(serve(listener));

        let health = send(addr, Method::GET, "/health", &[], "").await;
        assert_eq!(
            (health.status, health.body.as_str()),
            (StatusCode::OK, "ok")
        );

        let anon = send(addr, Method::GET, "/api/products", &[], "").await;
        assert_eq!(anon.status, StatusCode::UNAUTHORIZED);

        let form = [("Content-Type", "application/x-www-form-urlencoded")];
        let bad = send(
            addr,
            Method::POST,
            "/api/login",
            &form,
            "username=ann&password=nope",
        )
        .await;
        assert_eq!(bad.status, StatusCode::UNAUTHORIZED);
        assert_eq!(bad.json()["error"], "bad credentials");

        let login = send(
            addr,
            Method::POST,
            "/api/login",
            &form,
            "username=ann&password=secret",
        )
        .await;
        assert_eq!(login.status, StatusCode::OK);
        assert_eq!(login.json()["user"], "ann");
        let set_cookie = login.headers[header::SET_COOKIE].to_str().unwrap();
        assert!(set_cookie.ends_with("; Path=/; HttpOnly"), "{set_cookie}");
        let session = set_cookie.split(';').next().unwrap().to_owned();
        assert!(session.len() > "session=".len() + 16, "{session}");
        let auth = [("Cookie", session.as_str())];

        let products = send(addr, Method::GET, "/api/products", &auth, "").await;
        assert_eq!(products.status, StatusCode::OK);
        let products = products.json();
        assert_eq!(products["products"].as_array().unwrap().len(), 5);
        assert_eq!(products["products"][0]["price"], 12.5);

        let one = send(addr, Method::GET, "/api/products/3", &[], "").await;
        assert_eq!(one.json()["id"], 3);
        let missing = send(addr, Method::GET, "/api/products/99", &[], "").await;
        assert_eq!(missing.status, StatusCode::NOT_FOUND);

        let json_order = [auth[0], ("Content-Type", "application/json")];
        let order = send(
            addr,
            Method::POST,
            "/api/orders",
            &json_order,
            r#"{"product_id":1,"quantity":3}"#,
        )
        .await;
        assert_eq!(order.status, StatusCode::CREATED);
        assert_eq!(
            order.json(),
            json!({"order_id": 1, "product_id": 1, "quantity": 3, "total": 37.5})
        );
        let form_order = [auth[0], form[0]];
        let second = send(
            addr,
            Method::POST,
            "/api/orders",
            &form_order,
            "product_id=4&quantity=2",
        )
        .await;
        assert_eq!(second.status, StatusCode::CREATED);
        assert_eq!(second.json()["order_id"], 2);
        assert_eq!(second.json()["total"], 7.98);
        let invalid = send(
            addr,
            Method::POST,
            "/api/orders",
            &json_order,
            r#"{"product_id":1,"quantity":0}"#,
        )
        .await;
        assert_eq!(invalid.status, StatusCode::BAD_REQUEST);

        let slow = send(addr, Method::GET, "/api/slow?ms=20", &[], "").await;
        assert_eq!(slow.json()["slept_ms"], 20);

        let logout = send(addr, Method::GET, "/api/logout", &auth, "").await;
        assert_eq!(logout.status, StatusCode::FOUND);
        assert_eq!(logout.headers[header::LOCATION], "/");
        assert!(logout.headers[header::SET_COOKIE]
            .to_str()
            .unwrap()
            .contains("Max-Age=0"));
        let after = send(addr, Method::GET, "/api/products", &auth, "").await;
        assert_eq!(
            after.status,
            StatusCode::UNAUTHORIZED,
            "session must be revoked"
        );

        let index = send(addr, Method::GET, "/", &[], "").await;
        assert!(index.body.contains("rk6 demo shop"));

        server.abort();
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("a+b%20c%2Fd"), "a b c/d");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz"), "%zz");
    }
}
