//! An in-process OTLP metrics receiver built on the official protobufs (`opentelemetry-proto`):
//! OTLP/gRPC on one 127.0.0.1:0 port (h2c, the `MetricsService/Export` method) and
//! OTLP/HTTP (`POST /v1/metrics` or any path, protobuf bodies) on another. Every decoded
//! `ExportMetricsServiceRequest` is kept with how it arrived.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::{Buf, BufMut, Bytes, BytesMut};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderMap, HeaderValue};
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use opentelemetry_proto::tonic::collector::metrics::v1::{
    ExportMetricsServiceRequest, ExportMetricsServiceResponse,
};
use opentelemetry_proto::tonic::metrics::v1::{metric, Metric};
use prost::Message;

/// One export as received.
#[derive(Debug, Clone)]
pub struct Export {
    /// `grpc` or `http`.
    pub transport: &'static str,
    /// The request path.
    pub path: String,
    /// The request headers.
    pub headers: HeaderMap,
    /// The decoded request.
    pub request: ExportMetricsServiceRequest,
}

/// The receiver; it stops accepting after the life given to [`Receiver::start`].
pub struct Receiver {
    /// Where OTLP/gRPC is served.
    pub grpc: SocketAddr,
    /// Where OTLP/HTTP is served.
    pub http: SocketAddr,
    /// The certificate (for `localhost`) presented by [`Receiver::start_tls`], as PEM.
    pub cert_pem: String,
    exports: Arc<Mutex<Vec<Export>>>,
}

type Body = BoxBody<Bytes, Infallible>;

impl Receiver {
    /// Starts both listeners for `life`.
    pub fn start(life: Duration) -> Receiver {
        Receiver::serve(life, false)
    }

    /// [`Receiver::start`] over TLS with a self-signed certificate for `localhost` (ALPN
    /// `h2` for gRPC, `http/1.1` for HTTP): clients must skip verification.
    pub fn start_tls(life: Duration) -> Receiver {
        Receiver::serve(life, true)
    }

    fn serve(life: Duration, tls: bool) -> Receiver {
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let tls_for = |alpn: &[u8]| tls.then(|| super::tls_server_config(&cert, &key, &[alpn]));
        let exports = Arc::new(Mutex::new(Vec::new()));
        let store = exports.clone();
        let grpc_tls = tls_for(b"h2");
        let grpc = super::accept_loop(life, move |stream| {
            let store = store.clone();
            let tls = grpc_tls.clone();
            async move {
                let service = service_fn(move |req| handle(req, "grpc", store.clone()));
                let h2 = hyper::server::conn::http2::Builder::new(TokioExecutor::new());
                match tls {
                    Some(tls) => {
                        if let Ok(s) = tokio_rustls::TlsAcceptor::from(tls).accept(stream).await {
                            let _ = h2.serve_connection(TokioIo::new(s), service).await;
                        }
                    }
                    None => {
                        let _ = h2.serve_connection(TokioIo::new(stream), service).await;
                    }
                }
            }
        });
        let store = exports.clone();
        let http_tls = tls_for(b"http/1.1");
        let http = super::accept_loop(life, move |stream| {
            let store = store.clone();
            let tls = http_tls.clone();
            async move {
                let service = service_fn(move |req| handle(req, "http", store.clone()));
                let h1 = hyper::server::conn::http1::Builder::new();
                match tls {
                    Some(tls) => {
                        if let Ok(s) = tokio_rustls::TlsAcceptor::from(tls).accept(stream).await {
                            let _ = h1.serve_connection(TokioIo::new(s), service).await;
                        }
                    }
                    None => {
                        let _ = h1.serve_connection(TokioIo::new(stream), service).await;
                    }
                }
            }
        });
        Receiver {
            grpc,
            http,
            cert_pem: cert.pem(),
            exports,
        }
    }

    /// Every export so far, in arrival order.
    pub fn exports(&self) -> Vec<Export> {
        self.exports.lock().unwrap().clone()
    }

    /// Waits up to `wait` for at least `n` exports.
    pub fn wait_for(&self, n: usize, wait: Duration) -> Vec<Export> {
        let end = Instant::now() + wait;
        loop {
            let got = self.exports();
            if got.len() >= n || Instant::now() > end {
                return got;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

async fn handle(
    req: Request<Incoming>,
    transport: &'static str,
    store: Arc<Mutex<Vec<Export>>>,
) -> Result<Response<Body>, Infallible> {
    let (parts, body) = req.into_parts();
    let mut data = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    if transport == "grpc" {
        // One length-prefixed, uncompressed message.
        if data.len() >= 5 {
            data.advance(1);
            let len = data.get_u32() as usize;
            data.truncate(len);
        }
    }
    let Ok(request) = ExportMetricsServiceRequest::decode(data) else {
        let resp = Response::builder()
            .status(400)
            .body(Full::new(Bytes::from_static(b"bad protobuf")).boxed())
            .unwrap();
        return Ok(resp);
    };
    store.lock().unwrap().push(Export {
        transport,
        path: parts.uri.path().to_string(),
        headers: parts.headers,
        request,
    });
    let answer = ExportMetricsServiceResponse::default().encode_to_vec();
    if transport == "http" {
        let resp = Response::builder()
            .header("content-type", "application/x-protobuf")
            .body(Full::new(Bytes::from(answer)).boxed())
            .unwrap();
        return Ok(resp);
    }
    let mut framed = BytesMut::new();
    framed.put_u8(0);
    framed.put_u32(answer.len() as u32);
    framed.put_slice(&answer);
    let mut trailers = HeaderMap::new();
    trailers.insert("grpc-status", HeaderValue::from_static("0"));
    let body = Full::new(framed.freeze())
        .with_trailers(std::future::ready(Some(Ok::<_, Infallible>(trailers))))
        .boxed();
    Ok(Response::builder()
        .header("content-type", "application/grpc")
        .body(body)
        .unwrap())
}

/// The metrics of an export (its one resource and scope).
pub fn metrics(e: &Export) -> &[Metric] {
    &e.request.resource_metrics[0].scope_metrics[0].metrics
}

/// What a metric is, in a form two exporters can be compared by: its name, data kind
/// (`sum`, `int-sum`, `gauge`, `histogram`), unit, and each data point's attribute keys
/// (sorted, the points sorted too).
pub fn shape(m: &Metric) -> (String, String, String, Vec<Vec<String>>) {
    use opentelemetry_proto::tonic::metrics::v1::number_data_point::Value;
    let keys = |attrs: &[opentelemetry_proto::tonic::common::v1::KeyValue]| {
        let mut k: Vec<String> = attrs.iter().map(|a| a.key.clone()).collect();
        k.sort();
        k
    };
    let (kind, mut points) = match m.data.as_ref().expect("metric data") {
        metric::Data::Sum(s) => {
            assert!(s.is_monotonic, "{}: a monotonic sum", m.name);
            assert_eq!(s.aggregation_temporality, 2, "{}: cumulative", m.name);
            let int = s
                .data_points
                .iter()
                .all(|p| matches!(p.value, Some(Value::AsInt(_))));
            let kind = if int { "int-sum" } else { "sum" };
            (
                kind,
                s.data_points
                    .iter()
                    .map(|p| keys(&p.attributes))
                    .collect::<Vec<_>>(),
            )
        }
        metric::Data::Gauge(g) => (
            "gauge",
            g.data_points.iter().map(|p| keys(&p.attributes)).collect(),
        ),
        metric::Data::Histogram(h) => {
            assert_eq!(h.aggregation_temporality, 2, "{}: cumulative", m.name);
            (
                "histogram",
                h.data_points.iter().map(|p| keys(&p.attributes)).collect(),
            )
        }
        other => panic!("{}: unexpected data {other:?}", m.name),
    };
    points.sort();
    (m.name.clone(), kind.to_string(), m.unit.clone(), points)
}

/// The sum of a Sum metric's points (doubles and integers alike).
pub fn sum_total(m: &Metric) -> f64 {
    use opentelemetry_proto::tonic::metrics::v1::number_data_point::Value;
    let Some(metric::Data::Sum(s)) = &m.data else {
        panic!("{} is not a sum", m.name)
    };
    s.data_points
        .iter()
        .map(|p| match p.value {
            Some(Value::AsDouble(v)) => v,
            Some(Value::AsInt(v)) => v as f64,
            None => 0.0,
        })
        .sum()
}

/// The total count of a Histogram metric's points.
pub fn histogram_count(m: &Metric) -> u64 {
    let Some(metric::Data::Histogram(h)) = &m.data else {
        panic!("{} is not a histogram", m.name)
    };
    h.data_points.iter().map(|p| p.count).sum()
}
