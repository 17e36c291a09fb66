//! A TLS server on 127.0.0.1 serving module files, with a certificate of its own written
//! to a PEM file the test points `SSL_CERT_FILE` at (as a private CA would be); it counts
//! the requests per path and query.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper_util::rt::TokioIo;

/// What a path answers.
#[derive(Clone)]
pub(crate) enum Answer {
    /// 200 with this body.
    File(String),
    /// 302 to this location.
    Redirect(String),
}

/// A running module server.
pub(crate) struct ModuleServer {
    pub(crate) addr: SocketAddr,
    /// `path?query` → requests seen.
    hits: Arc<Mutex<HashMap<String, usize>>>,
    /// The server's certificate, PEM.
    pub(crate) cert_pem: String,
}

impl ModuleServer {
    /// Serves `files` (path → answer); any other path is 404.
    pub(crate) fn start(files: &[(&str, Answer)]) -> ModuleServer {
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["127.0.0.1".into()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let cert_pem = cert.pem();
        let acceptor =
            tokio_rustls::TlsAcceptor::from(crate::support::tls_server_config(&cert, &key, &[]));
        let files: Arc<HashMap<String, Answer>> = Arc::new(
            files
                .iter()
                .map(|(p, a)| (p.to_string(), a.clone()))
                .collect(),
        );
        let hits = Arc::new(Mutex::new(HashMap::new()));
        let seen = hits.clone();
        let addr = crate::support::accept_loop(Duration::from_secs(120), move |tcp| {
            let acceptor = acceptor.clone();
            let files = files.clone();
            let seen = seen.clone();
            async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let service = hyper::service::service_fn(
                    move |req: hyper::Request<hyper::body::Incoming>| {
                        let files = files.clone();
                        let seen = seen.clone();
                        async move {
                            let key = req
                                .uri()
                                .path_and_query()
                                .map(|p| p.to_string())
                                .unwrap_or_default();
                            *seen.lock().unwrap().entry(key).or_insert(0) += 1;
                            let res = match files.get(req.uri().path()) {
                                Some(Answer::File(body)) => hyper::Response::builder()
                                    .status(200)
                                    .body(Full::new(Bytes::from(body.clone()))),
                                Some(Answer::Redirect(to)) => hyper::Response::builder()
                                    .status(302)
                                    .header("location", to.as_str())
                                    .body(Full::new(Bytes::new())),
                                None => hyper::Response::builder()
                                    .status(404)
                                    .body(Full::new(Bytes::from_static(b"not here"))),
                            };
                            Ok::<_, std::convert::Infallible>(res.unwrap())
                        }
                    },
                );
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            }
        });
        ModuleServer {
            addr,
            hits,
            cert_pem,
        }
    }

    /// `https://127.0.0.1:PORT/path`.
    pub(crate) fn url(&self, path: &str) -> String {
        format!("https://{}{path}", self.addr)
    }

    /// Requests seen for `path_and_query`.
    pub(crate) fn hits(&self, path_and_query: &str) -> usize {
        self.hits
            .lock()
            .unwrap()
            .get(path_and_query)
            .copied()
            .unwrap_or(0)
    }

    /// Every request seen, by path and query.
    pub(crate) fn all_hits(&self) -> HashMap<String, usize> {
        self.hits.lock().unwrap().clone()
    }
}
