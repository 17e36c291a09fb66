//! The dashboard's HTTP server: a hyper HTTP/1 server on a thread of its own with a
//! one-thread runtime, so serving pages never takes time from the VUs' runtime.
//!
//! Routes, as in k6: `/` redirects (307) to `/ui?endpoint=/`, `/ui` (301) to
//! `/ui/?endpoint=/`; `/ui/` is rk6's live page; `/events` is k6's event stream;
//! `/report` the HTML report of the run so far. rk6 adds `/ui/events`, the page's own feed
//! (the report data, about once a second).

use std::convert::Infallible;
use std::net::{SocketAddr, TcpListener as StdListener, ToSocketAddrs};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::Bytes;
use http::{header, Request, Response, StatusCode};
use http_body_util::{combinators::BoxBody, BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use tokio::sync::Notify;

use super::stream::Stream;

/// Connections served at once; more are closed on accept, so a flood of tabs or scripts
/// cannot grow the server's memory or tasks.
pub(crate) const MAX_CONNECTIONS: usize = 64;

/// How long the server waits at shutdown for responses still being written.
const DRAIN: Duration = Duration::from_millis(500);

/// What the handlers read, shared with the metrics thread that fills it.
pub(crate) struct Shared {
    /// k6's event stream (`/events`).
    pub k6: Stream,
    /// The page's feed (`/ui/events`).
    pub page: Stream,
    /// The latest report data (JSON), for `/ui/` and `/report`.
    pub latest: Mutex<Arc<String>>,
}

/// A running server; [`Server::stop`] ends it.
pub(crate) struct Server {
    addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: Arc<Notify>,
    thread: Option<JoinHandle<()>>,
}

type Body = BoxBody<Bytes, Infallible>;

/// Go's wording for a failed listen, e.g. `listen tcp 127.0.0.1:5665: bind: address
/// already in use` (k6 logs this and exits with 255).
fn listen_error(addr: &str, e: &std::io::Error) -> String {
    if e.kind() == std::io::ErrorKind::AddrInUse {
        format!("listen tcp {addr}: bind: address already in use")
    } else {
        format!("listen tcp {addr}: {e}")
    }
}

impl Server {
    /// Binds `host:port` now (so a busy port fails before the test starts) and serves
    /// `shared` on a new thread.
    pub(crate) fn start(host: &str, port: u16, shared: Arc<Shared>) -> Result<Server, String> {
        let host = if host.is_empty() { "0.0.0.0" } else { host };
        let shown = if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        let addrs: Vec<SocketAddr> = (host, port)
            .to_socket_addrs()
            .map_err(|e| format!("listen tcp {shown}: {e}"))?
            .collect();
        let listener = StdListener::bind(&addrs[..]).map_err(|e| listen_error(&shown, &e))?;
        listener
            .set_nonblocking(true)
            .map_err(|e| listen_error(&shown, &e))?;
        let addr = listener
            .local_addr()
            .map_err(|e| listen_error(&shown, &e))?;
        let shutdown = Arc::new(Notify::new());
        let thread = {
            let shared = shared.clone();
            let shutdown = shutdown.clone();
            std::thread::Builder::new()
                .name("rk6-dashboard".into())
                .spawn(move || serve(listener, shared, shutdown))
                .map_err(|e| format!("web dashboard: cannot start its thread: {e}"))?
        };
        Ok(Server {
            addr,
            shared,
            shutdown,
            thread: Some(thread),
        })
    }

    /// The bound address (the real port when 0 was asked for).
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Ends the event streams, stops accepting and waits for the thread.
    pub(crate) fn stop(&mut self) {
        self.shared.k6.close();
        self.shared.page.close();
        self.shutdown.notify_one();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

fn serve(listener: StdListener, shared: Arc<Shared>, shutdown: Arc<Notify>) {
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    rt.block_on(async move {
        let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
            return;
        };
        let active = Arc::new(AtomicUsize::new(0));
        loop {
            let accepted = tokio::select! {
                _ = shutdown.notified() => break,
                a = listener.accept() => a,
            };
            let Ok((tcp, _)) = accepted else { continue };
            if active.load(Ordering::Relaxed) >= MAX_CONNECTIONS {
                drop(tcp);
                continue;
            }
            active.fetch_add(1, Ordering::Relaxed);
            let (shared, active) = (shared.clone(), active.clone());
            tokio::spawn(async move {
                let io = hyper_util::rt::TokioIo::new(tcp);
                let svc = service_fn(move |req| {
                    let shared = shared.clone();
                    async move { Ok::<_, Infallible>(route(&shared, &req)) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .timer(hyper_util::rt::TokioTimer::new())
                    .header_read_timeout(Duration::from_secs(5))
                    .serve_connection(io, svc)
                    .await;
                active.fetch_sub(1, Ordering::Relaxed);
            });
        }
        // The streams are closed: give the last bytes a moment to leave.
        let deadline = tokio::time::Instant::now() + DRAIN;
        while active.load(Ordering::Relaxed) > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
}

fn full(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Response<Body> {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, content_type)
        .body(Full::new(body.into()).boxed())
        .expect("static response parts are valid")
}

/// Go's redirect response: the status, `Location` and a one-link HTML body.
fn redirect(status: StatusCode, to: &str) -> Response<Body> {
    let text = status.canonical_reason().unwrap_or("Redirect");
    let mut r = full(
        status,
        "text/html; charset=utf-8",
        format!("<a href=\"{to}\">{text}</a>.\n\n"),
    );
    r.headers_mut().insert(
        header::LOCATION,
        to.parse()
            .expect("redirect targets are valid header values"),
    );
    r
}

fn events(stream: &Stream) -> Response<Body> {
    Response::builder()
        .header("Access-Control-Allow-Origin", "*")
        .header(header::CACHE_CONTROL, "no-cache")
        .header(header::CONNECTION, "keep-alive")
        .header(header::CONTENT_TYPE, "text/event-stream")
        .body(stream.subscribe().boxed())
        .expect("static response parts are valid")
}

fn route(shared: &Shared, req: &Request<Incoming>) -> Response<Body> {
    let latest = || shared.latest.lock().map(|l| l.clone()).unwrap_or_default();
    let query = req.uri().query();
    match req.uri().path() {
        "/" => redirect(StatusCode::TEMPORARY_REDIRECT, "/ui?endpoint=/"),
        "/ui" => {
            let to = match query {
                Some(q) => format!("/ui/?{q}"),
                None => "/ui/".to_string(),
            };
            redirect(StatusCode::MOVED_PERMANENTLY, &to)
        }
        "/ui/" | "/ui/index.html" => full(
            StatusCode::OK,
            "text/html; charset=utf-8",
            crate::report::html::live_page(&latest()),
        ),
        "/events" => events(&shared.k6),
        "/ui/events" => events(&shared.page),
        "/report" => full(
            StatusCode::OK,
            "text/html; charset=utf-8",
            crate::report::html::page(&latest()),
        ),
        _ => full(
            StatusCode::NOT_FOUND,
            "text/plain; charset=utf-8",
            "404 page not found\n",
        ),
    }
}
