//! A keep-alive HTTP/1.1 server that records every request and answers each through a
//! handler, for tests that assert what the client sent (headers, bodies, peer address).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::Response;
use hyper_util::rt::TokioIo;
use tokio::sync::oneshot;
use tokio::task::JoinSet;

/// Bodies above this are refused, so a buggy client cannot exhaust the test's memory.
const MAX_BODY: usize = 10 << 20;

/// One request as the server received it.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: String,
    /// `HTTP/1.1` or `HTTP/1.0`.
    pub version: String,
    /// The request target as sent (path and query).
    pub target: String,
    /// Lower-case names, in the order they arrived.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The client's address.
    pub peer: SocketAddr,
}

impl Seen {
    /// The first value of header `name` (lower case), or `""`.
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map_or("", |(_, v)| v.as_str())
    }

    /// The target without its query.
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("")
    }

    /// The body as text (lossy).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// What the handler answers: status, headers, body.
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    /// `status` with a body of `content_type`.
    pub fn new(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Reply {
        Reply {
            status,
            headers: vec![("content-type", content_type.to_owned())],
            body: body.into(),
        }
    }

    /// Adds a header.
    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Reply {
        self.headers.push((name, value.into()));
        self
    }
}

type Handler = dyn Fn(&Seen) -> Reply + Send + Sync;

/// The running server; stops (and joins its thread) on drop.
pub struct Recorder {
    pub addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Recorder {
    /// Serves on 127.0.0.1:0.
    pub fn start(handler: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> Recorder {
        Recorder::bind("127.0.0.1:0", handler).expect("bind 127.0.0.1:0")
    }

    /// Serves on `bind` (port 0); `None` when that address cannot be bound (e.g. no `::1`).
    pub fn bind(
        bind: &str,
        handler: impl Fn(&Seen) -> Reply + Send + Sync + 'static,
    ) -> Option<Recorder> {
        // Bound on the caller's thread, so the port accepts before this returns.
        let listener = std::net::TcpListener::bind(bind).ok()?;
        listener.set_nonblocking(true).ok()?;
        let addr = listener.local_addr().ok()?;
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (shutdown, stop) = oneshot::channel();
        let log = Arc::clone(&seen);
        let handler: Arc<Handler> = Arc::new(handler);
        let thread = std::thread::spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("recorder runtime")
                .block_on(serve(listener, stop, log, handler));
        });
        Some(Recorder {
            addr,
            seen,
            shutdown: Some(shutdown),
            thread: Some(thread),
        })
    }

    /// `http://ADDR{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Every request so far, in arrival order.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if let Some(s) = self.shutdown.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn serve(
    listener: std::net::TcpListener,
    mut stop: oneshot::Receiver<()>,
    log: Arc<Mutex<Vec<Seen>>>,
    handler: Arc<Handler>,
) {
    let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
    // Dropping the set at the end aborts keep-alive connections, so shutdown never waits.
    let mut conns = JoinSet::new();
    loop {
        tokio::select! {
            _ = &mut stop => break,
            accepted = listener.accept() => {
                let Ok((stream, peer)) = accepted else { continue };
                while conns.try_join_next().is_some() {}
                let (log, handler) = (Arc::clone(&log), Arc::clone(&handler));
                conns.spawn(async move {
                    let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                        let (log, handler) = (Arc::clone(&log), Arc::clone(&handler));
                        async move {
                            let (parts, body) = req.into_parts();
                            let body = match Limited::new(body, MAX_BODY).collect().await {
                                Ok(b) => b.to_bytes().to_vec(),
                                Err(_) => Vec::new(),
                            };
                            let seen = Seen {
                                method: parts.method.to_string(),
                                version: format!("{:?}", parts.version),
                                target: parts
                                    .uri
                                    .path_and_query()
                                    .map_or_else(|| parts.uri.to_string(), |p| p.to_string()),
                                headers: parts
                                    .headers
                                    .iter()
                                    .map(|(k, v)| {
                                        (k.as_str().to_owned(), String::from_utf8_lossy(v.as_bytes()).into_owned())
                                    })
                                    .collect(),
                                body,
                                peer,
                            };
                            let reply = handler(&seen);
                            log.lock().unwrap().push(seen);
                            let mut resp = Response::builder().status(reply.status);
                            for (k, v) in reply.headers {
                                resp = resp.header(k, v);
                            }
                            Ok::<_, Infallible>(resp.body(Full::new(Bytes::from(reply.body))).expect("reply"))
                        }
                    });
                    // No `Date`: tests compare whole response dumps.
                    let _ = http1::Builder::new().auto_date_header(false).serve_connection(TokioIo::new(stream), service).await;
                });
            }
        }
    }
}
