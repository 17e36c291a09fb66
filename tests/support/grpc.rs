//! An in-process gRPC server for the `k6/net/grpc` tests: h2c on 127.0.0.1:0, the Echo
//! service of `examples/grpc/echo.proto` (compiled with protox, messages handled as
//! prost-reflect dynamic messages) and server reflection v1.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderMap, HeaderValue};
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use prost::Message;
use prost_reflect::{DescriptorPool, DynamicMessage, MapKey, Value as PValue};

/// The folder of echo.proto (and its import `common/inner.proto`): the example's.
pub fn proto_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/grpc")
}

/// Starts the server for `life`; returns its address.
pub fn start(life: Duration) -> SocketAddr {
    serve(life, None)
}

/// [`start`] over TLS (ALPN h2) with a certificate for `localhost`; returns the address
/// and the certificate as PEM (the roots a client must trust).
pub fn start_tls(life: Duration) -> (SocketAddr, String) {
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let tls = super::tls_server_config(&cert, &key, &[b"h2"]);
    (serve(life, Some(tls)), cert.pem())
}

/// [`start`] over TLS with the certificate of `tls` (which should offer ALPN `h2`).
pub fn start_tls_with(life: Duration, tls: Arc<rustls::ServerConfig>) -> SocketAddr {
    serve(life, Some(tls))
}

fn serve(life: Duration, tls: Option<Arc<rustls::ServerConfig>>) -> SocketAddr {
    let mut compiler = protox::Compiler::new([proto_dir()]).expect("proto dir");
    compiler.include_imports(true);
    compiler
        .open_file("echo.proto")
        .expect("echo.proto compiles");
    compiler
        .open_file("stream.proto")
        .expect("stream.proto compiles");
    let files: Vec<Vec<u8>> = compiler
        .file_descriptor_set()
        .file
        .iter()
        .map(|f| f.encode_to_vec())
        .collect();
    let state = Arc::new((compiler.descriptor_pool(), files));
    super::accept_loop(life, move |stream| {
        let state = state.clone();
        let tls = tls.clone();
        async move {
            let service = service_fn(move |req| handle(req, state.clone()));
            let h2 = hyper::server::conn::http2::Builder::new(TokioExecutor::new());
            match tls {
                Some(tls) => {
                    let Ok(stream) = tokio_rustls::TlsAcceptor::from(tls).accept(stream).await
                    else {
                        return;
                    };
                    let _ = h2.serve_connection(TokioIo::new(stream), service).await;
                }
                None => {
                    let _ = h2.serve_connection(TokioIo::new(stream), service).await;
                }
            }
        }
    })
}

type Body = BoxBody<Bytes, Infallible>;

fn frames(messages: &[Vec<u8>]) -> Bytes {
    let mut out = BytesMut::new();
    for m in messages {
        out.put_u8(0);
        out.put_u32(m.len() as u32);
        out.put_slice(m);
    }
    out.freeze()
}

fn unframe(mut data: Bytes) -> Vec<Bytes> {
    let mut out = Vec::new();
    while data.len() >= 5 {
        data.advance(1);
        let len = data.get_u32() as usize;
        out.push(data.split_to(len));
    }
    out
}

fn reply(
    headers: &[(&str, &str)],
    messages: &[Vec<u8>],
    trailers: &[(&str, String)],
) -> Response<Body> {
    let mut t = HeaderMap::new();
    for (k, v) in trailers {
        t.insert(
            hyper::header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
            HeaderValue::from_str(v).unwrap(),
        );
    }
    let body = Full::new(frames(messages))
        .with_trailers(std::future::ready(Some(Ok::<_, Infallible>(t))))
        .boxed();
    let mut resp = Response::builder().header("content-type", "application/grpc");
    for (k, v) in headers {
        resp = resp.header(*k, *v);
    }
    resp.body(body).unwrap()
}

fn field_u64(msg: &DynamicMessage, name: &str) -> u64 {
    match &*msg.get_field_by_name(name).unwrap() {
        PValue::I32(n) => *n as u64,
        PValue::I64(n) => *n as u64,
        _ => 0,
    }
}

async fn handle(
    req: Request<Incoming>,
    state: Arc<(DescriptorPool, Vec<Vec<u8>>)>,
) -> Result<Response<Body>, Infallible> {
    let (pool, files) = &*state;
    let path = req.uri().path().to_owned();
    // The call's `:authority`, which Metadata reports beside the `x-` metadata.
    let authority = req
        .uri()
        .authority()
        .map(|a| a.as_str().to_owned())
        .unwrap_or_default();
    let metadata: Vec<(String, String)> = req
        .headers()
        .iter()
        .filter(|(k, _)| k.as_str().starts_with("x-"))
        .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap_or("").to_owned()))
        .collect();
    let body = req
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let msgs = unframe(body);
    let first = msgs.first().cloned().unwrap_or_default();
    let ok = || vec![("grpc-status", "0".to_owned())];
    let msg = |name: &str, bytes: &Bytes| {
        DynamicMessage::decode(pool.get_message_by_name(name).unwrap(), bytes.clone()).unwrap()
    };
    Ok(match path.as_str() {
        "/rk6.test.Echo/Say" => {
            let mut t = ok();
            t.push(("x-trailer", "done".to_owned()));
            reply(&[("x-echo", "yes")], &[first.to_vec()], &t)
        }
        "/rk6.test.Echo/Fail" => {
            let m = msg("rk6.test.FailRequest", &first);
            let text = match &*m.get_field_by_name("message").unwrap() {
                PValue::String(s) => s.clone(),
                _ => String::new(),
            };
            let code = field_u64(&m, "code");
            let mut t = vec![
                ("grpc-status", code.to_string()),
                ("grpc-message", text.replace(' ', "%20")),
            ];
            if let Some(kind) = text.strip_prefix("details:") {
                t.push(("grpc-status-details-bin", status_details(code, kind)));
            }
            reply(&[], &[], &t)
        }
        "/rk6.test.Echo/Sleep" => {
            let m = msg("rk6.test.SleepRequest", &first);
            tokio::time::sleep(Duration::from_millis(field_u64(&m, "ms"))).await;
            let mut out =
                DynamicMessage::new(pool.get_message_by_name("rk6.test.EchoRequest").unwrap());
            out.set_field_by_name("text", PValue::String("slept".into()));
            reply(&[], &[out.encode_to_vec()], &ok())
        }
        "/rk6.test.Echo/Metadata" => {
            let mut out =
                DynamicMessage::new(pool.get_message_by_name("rk6.test.MetadataReply").unwrap());
            let map = metadata
                .into_iter()
                .chain([(":authority".to_owned(), authority)])
                .map(|(k, v)| (MapKey::String(k), PValue::String(v)))
                .collect();
            out.set_field_by_name("metadata", PValue::Map(map));
            reply(&[], &[out.encode_to_vec()], &ok())
        }
        // The streams answer once the client's half ended: enough for scripts that write
        // everything, then end().
        "/rk6.test.Streams/Repeat" => {
            let m = msg("rk6.test.EchoRequest", &first);
            if let PValue::String(s) = &*m.get_field_by_name("text").unwrap() {
                if let Some(kind) = s.strip_prefix("details:") {
                    let t = vec![
                        ("grpc-status", "5".to_owned()),
                        ("grpc-message", "with%20details".to_owned()),
                        ("grpc-status-details-bin", status_details(5, kind)),
                    ];
                    return Ok(reply(&[], &[first.to_vec()], &t));
                }
            }
            if matches!(&*m.get_field_by_name("text").unwrap(), PValue::String(s) if s == "fail") {
                let t = vec![
                    ("grpc-status", "5".to_owned()),
                    ("grpc-message", "no%20such%20thing".to_owned()),
                ];
                reply(&[], &[first.to_vec()], &t)
            } else {
                let n = field_u64(&m, "count") as usize;
                reply(&[], &vec![first.to_vec(); n], &ok())
            }
        }
        "/rk6.test.Streams/Collect" => {
            let texts: Vec<String> = msgs
                .iter()
                .map(|b| {
                    match &*msg("rk6.test.EchoRequest", b)
                        .get_field_by_name("text")
                        .unwrap()
                    {
                        PValue::String(s) => s.clone(),
                        _ => String::new(),
                    }
                })
                .collect();
            let mut out =
                DynamicMessage::new(pool.get_message_by_name("rk6.test.EchoRequest").unwrap());
            out.set_field_by_name("text", PValue::String(texts.join(",")));
            out.set_field_by_name("count", PValue::I64(msgs.len() as i64));
            reply(&[], &[out.encode_to_vec()], &ok())
        }
        "/rk6.test.Streams/Chat" => {
            let back: Vec<Vec<u8>> = msgs.iter().map(|b| b.to_vec()).collect();
            reply(&[], &back, &ok())
        }
        "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo" => {
            let answers: Vec<Vec<u8>> = msgs.iter().map(|m| reflection_answer(m, files)).collect();
            reply(&[], &answers, &ok())
        }
        _ => reply(&[], &[], &[("grpc-status", "12".to_owned())]),
    })
}

/// `google.rpc.Status`, as a server puts it in `grpc-status-details-bin`.
#[derive(Clone, PartialEq, Message)]
struct RpcStatus {
    #[prost(int32, tag = "1")]
    code: i32,
    #[prost(string, tag = "2")]
    message: String,
    #[prost(message, repeated, tag = "3")]
    details: Vec<AnyMessage>,
}

#[derive(Clone, PartialEq, Message)]
struct AnyMessage {
    #[prost(string, tag = "1")]
    type_url: String,
    #[prost(bytes = "vec", tag = "2")]
    value: Vec<u8>,
}

/// `google.rpc.ErrorInfo`.
#[derive(Clone, PartialEq, Message)]
struct ErrorInfo {
    #[prost(string, tag = "1")]
    reason: String,
    #[prost(string, tag = "2")]
    domain: String,
    #[prost(map = "string, string", tag = "3")]
    metadata: std::collections::HashMap<String, String>,
}

/// The `grpc-status-details-bin` value (unpadded base64) of a Status with `code`: `info`
/// carries an ErrorInfo, `unknown` a type nobody knows, `mismatch` code 5 whatever `code`.
fn status_details(code: u64, kind: &str) -> String {
    let info = ErrorInfo {
        reason: "QUOTA".into(),
        domain: "rk6.test".into(),
        metadata: [("k".to_owned(), "v".to_owned())].into(),
    };
    let detail = match kind {
        "unknown" => AnyMessage {
            type_url: "type.googleapis.com/nope.Thing".into(),
            value: vec![8, 1],
        },
        _ => AnyMessage {
            type_url: "type.googleapis.com/google.rpc.ErrorInfo".into(),
            value: info.encode_to_vec(),
        },
    };
    let status = RpcStatus {
        code: if kind == "mismatch" { 5 } else { code as i32 },
        message: "with details".into(),
        details: vec![detail],
    };
    base64_raw(&status.encode_to_vec())
}

/// Standard base64 without padding (the tests have no base64 crate).
fn base64_raw(bytes: &[u8]) -> String {
    const ABC: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, b)| acc | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

/// `ServerReflectionRequest`'s fields this server answers.
#[derive(Clone, PartialEq, Message)]
struct ReflectionRequest {
    #[prost(string, optional, tag = "4")]
    file_containing_symbol: Option<String>,
    #[prost(string, optional, tag = "7")]
    list_services: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
struct ReflectionResponse {
    #[prost(message, optional, tag = "4")]
    file_descriptor_response: Option<FileDescriptors>,
    #[prost(message, optional, tag = "6")]
    list_services_response: Option<ServiceList>,
}

#[derive(Clone, PartialEq, Message)]
struct FileDescriptors {
    #[prost(bytes = "vec", repeated, tag = "1")]
    file_descriptor_proto: Vec<Vec<u8>>,
}

#[derive(Clone, PartialEq, Message)]
struct ServiceList {
    #[prost(message, repeated, tag = "1")]
    service: Vec<Service>,
}

#[derive(Clone, PartialEq, Message)]
struct Service {
    #[prost(string, tag = "1")]
    name: String,
}

fn reflection_answer(request: &Bytes, files: &[Vec<u8>]) -> Vec<u8> {
    let req = ReflectionRequest::decode(request.clone()).unwrap_or_default();
    let mut resp = ReflectionResponse::default();
    if req.list_services.is_some() {
        resp.list_services_response = Some(ServiceList {
            service: vec![Service {
                name: "rk6.test.Echo".into(),
            }],
        });
    } else if req.file_containing_symbol.is_some() {
        // The defining file and everything it imports, as grpc-go's server sends them.
        resp.file_descriptor_response = Some(FileDescriptors {
            file_descriptor_proto: files.to_vec(),
        });
    }
    resp.encode_to_vec()
}
