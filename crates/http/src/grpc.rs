//! gRPC's transport for `k6/net/grpc`: one HTTP/2 connection per script client (h2c or TLS
//! with ALPN `h2`), dialed with the VU's `hosts`/`blockHostnames`/DNS rules and TLS
//! settings, and unary calls and streams on it as length-prefixed frames. The crate knows
//! nothing of protobuf: messages go in and out as encoded bytes.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Buf, BufMut, Bytes, BytesMut};
use http_body_util::{BodyExt, Either, Full};
use hyper::client::conn::http2::SendRequest;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio::net::TcpStream;

use crate::client::Client;
use crate::error::{self, HttpError};
use crate::target::resolve_target;
use crate::timing_io::{IoStats, MeteredIo, Role};
use crate::verify::TrustedCerts;

/// How `client.connect()` dials.
#[derive(Debug, Clone, Default)]
pub struct GrpcConnectOptions {
    /// h2c instead of TLS.
    pub plaintext: bool,
    /// Extra roots for this connection (`tls.cacerts`), PEM.
    pub ca_pem: Option<Vec<u8>>,
    /// Client certificate and key (`tls.cert`, `tls.key`), PEM.
    pub client_cert: Option<(Vec<u8>, Vec<u8>)>,
    /// `authority`: the `:authority` of every call instead of the address, and (as
    /// grpc-go's TLS credentials take it) the name the server's certificate must match.
    pub authority: Option<String>,
}

/// One gRPC connection (`client.connect()` until `client.close()`).
pub struct GrpcConn {
    sender: SendRequest<CallBody>,
    stats: Arc<IoStats>,
    scheme: &'static str,
    authority: String,
    user_agent: String,
}

/// A unary call's outcome: the status, the metadata and the reply message's bytes.
#[derive(Debug, Default)]
pub struct GrpcReply {
    /// gRPC status code (0 = OK).
    pub code: u32,
    /// `grpc-message`, percent-decoded (or the transport error's text).
    pub message: String,
    /// Response headers, lower-case names, in arrival order.
    pub headers: Vec<(String, String)>,
    /// Response trailers, lower-case names, in arrival order (gRPC's own removed but
    /// `grpc-status-details-bin`, which grpc-go shows as metadata). `-bin` values are
    /// base64-decoded, their bytes read as Go reads a string (invalid UTF-8 as U+FFFD).
    pub trailers: Vec<(String, String)>,
    /// The decoded `grpc-status-details-bin` (a `google.rpc.Status`) when the status came
    /// with exactly one, as grpc-go reads it.
    pub status_details: Option<Bytes>,
    /// The reply message of a successful unary call.
    pub body: Option<Bytes>,
    /// Every message the server sent ([`GrpcConn::exchange`]).
    pub messages: Vec<Bytes>,
    /// When the call was started and how long it took.
    pub started: Option<Instant>,
    /// Wall time of the call.
    pub duration: Duration,
    /// The call's own deadline ended it (not a status the server sent).
    pub timed_out: bool,
    /// The call never left: its connection had already closed (a server's GOAWAY, a
    /// dropped socket), so it can be sent again on a new connection.
    pub unsent: bool,
}

/// gRPC's status codes: their numbers and the names Go's `codes.Code` prints, the one table
/// of them in rk6 (the JS module's `Status*` constants and status objects read it).
pub mod code {
    /// Not an error.
    pub const OK: u32 = 0;
    /// The caller cancelled.
    pub const CANCELED: u32 = 1;
    /// HTTP status that maps to no gRPC code, or an error of no other kind.
    pub const UNKNOWN: u32 = 2;
    /// The request was invalid.
    pub const INVALID_ARGUMENT: u32 = 3;
    /// The call's deadline passed.
    pub const DEADLINE_EXCEEDED: u32 = 4;
    /// What was asked for is not there.
    pub const NOT_FOUND: u32 = 5;
    /// It exists already.
    pub const ALREADY_EXISTS: u32 = 6;
    /// Not allowed (HTTP 403).
    pub const PERMISSION_DENIED: u32 = 7;
    /// A message was larger than allowed, or a quota ran out.
    pub const RESOURCE_EXHAUSTED: u32 = 8;
    /// The system is not in a state for this.
    pub const FAILED_PRECONDITION: u32 = 9;
    /// Aborted (a concurrency conflict).
    pub const ABORTED: u32 = 10;
    /// Past the valid range.
    pub const OUT_OF_RANGE: u32 = 11;
    /// The method is not implemented (HTTP 404).
    pub const UNIMPLEMENTED: u32 = 12;
    /// Not a gRPC answer, or a protocol error.
    pub const INTERNAL: u32 = 13;
    /// The connection failed.
    pub const UNAVAILABLE: u32 = 14;
    /// Data was lost.
    pub const DATA_LOSS: u32 = 15;
    /// No valid credentials (HTTP 401).
    pub const UNAUTHENTICATED: u32 = 16;

    /// The names, by number, as Go's `codes.Code` prints them (`NotFound`).
    pub const NAMES: [&str; 17] = [
        "OK",
        "Canceled",
        "Unknown",
        "InvalidArgument",
        "DeadlineExceeded",
        "NotFound",
        "AlreadyExists",
        "PermissionDenied",
        "ResourceExhausted",
        "FailedPrecondition",
        "Aborted",
        "OutOfRange",
        "Unimplemented",
        "Internal",
        "Unavailable",
        "DataLoss",
        "Unauthenticated",
    ];

    /// `code` as Go prints a `codes.Code`: its name, or `Code(17)` for a number gRPC does
    /// not define.
    pub fn name(code: u32) -> std::borrow::Cow<'static, str> {
        match NAMES.get(code as usize) {
            Some(n) => (*n).into(),
            None => format!("Code({code})").into(),
        }
    }
}

impl Client {
    /// Dials `address` (`host:port`) as gRPC's client does, within `timeout`.
    pub async fn grpc_connect(
        &self,
        address: &str,
        opts: &GrpcConnectOptions,
        timeout: Duration,
    ) -> Result<GrpcConn, HttpError> {
        match tokio::time::timeout(timeout, self.grpc_dial(address, opts)).await {
            Ok(r) => r,
            Err(_) => Err(HttpError::new(
                error::TCP_DIAL_TIMEOUT,
                "context deadline exceeded",
            )),
        }
    }

    async fn grpc_dial(
        &self,
        address: &str,
        opts: &GrpcConnectOptions,
    ) -> Result<GrpcConn, HttpError> {
        let (host_text, port) = split_host_port(address).ok_or_else(|| {
            HttpError::new(error::INVALID_URL, format!("invalid address {address:?}"))
        })?;
        let host = url::Host::parse(host_text).map_err(|e| {
            HttpError::new(
                error::INVALID_URL,
                format!("invalid host {host_text:?}: {e}"),
            )
        })?;
        let addr = {
            let mut dns = self.dns().lock().await;
            let mut looking_up = Duration::ZERO;
            resolve_target(
                &host,
                port,
                &self.config().target_rules(),
                &mut dns,
                &mut looking_up,
            )
            .await?
        };
        let tcp = TcpStream::connect(addr)
            .await
            .map_err(|e| error::from_dial(addr, &e))?;
        let _ = tcp.set_nodelay(true);
        let stats = IoStats::new();
        let user_agent = self
            .config()
            .user_agent
            .clone()
            .map(|ua| format!("{ua} grpc-rk6"))
            .unwrap_or_else(|| "grpc-rk6".to_owned());
        let authority = opts.authority.clone().unwrap_or_else(|| address.to_owned());
        if opts.plaintext {
            let io = MeteredIo::new(tcp, stats.clone(), Role::Count);
            let sender = handshake(io).await?;
            return Ok(GrpcConn {
                sender,
                stats,
                scheme: "http",
                authority,
                user_agent,
            });
        }
        let tls = self.grpc_tls(opts)?;
        // grpc-go's TLS credentials verify the server as the authority's host.
        let host = match &opts.authority {
            Some(a) => {
                let name = split_host_port(a).map_or(a.as_str(), |(h, _)| h);
                url::Host::parse(name).map_err(|e| {
                    HttpError::new(error::INVALID_URL, format!("invalid authority {a:?}: {e}"))
                })?
            }
            None => host,
        };
        let server_name = match host {
            url::Host::Ipv4(ip) => ServerName::IpAddress(IpAddr::V4(ip).into()),
            url::Host::Ipv6(ip) => ServerName::IpAddress(IpAddr::V6(ip).into()),
            url::Host::Domain(name) => ServerName::try_from(name.clone()).map_err(|e| {
                HttpError::new(error::INVALID_URL, format!("invalid host {name:?}: {e}"))
            })?,
        };
        let counted = MeteredIo::new(tcp, stats.clone(), Role::Count);
        let stream = tokio_rustls::TlsConnector::from(tls)
            .connect(server_name, counted)
            .await
            .map_err(|e| error::from_tls(host_text, &e))?;
        let sender = handshake(stream).await?;
        Ok(GrpcConn {
            sender,
            stats,
            scheme: "https",
            authority,
            user_agent,
        })
    }

    /// The VU's TLS settings for gRPC: ALPN `h2` only, plus the connection's own roots and
    /// client certificate when `connect()` gave them.
    fn grpc_tls(&self, opts: &GrpcConnectOptions) -> Result<Arc<rustls::ClientConfig>, HttpError> {
        let base = self.config().rustls();
        if opts.ca_pem.is_none() && opts.client_cert.is_none() {
            // The VU's own config (tlsVersion, ciphers, insecureSkipTLSVerify, tlsAuth), h2 only.
            let mut tls = (*base).clone();
            tls.alpn_protocols = vec![b"h2".to_vec()];
            return Ok(Arc::new(tls));
        }
        let bad = |what: &str| HttpError::new(error::TLS_GENERIC, what.to_owned());
        let provider = base.crypto_provider().clone();
        let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(self.config().tls.versions())
            .map_err(|e| bad(&e.to_string()))?;
        if self.config().insecure_skip_tls_verify {
            // insecureSkipTLSVerify wins over the connection's own roots, as in k6.
            let algorithms = base.crypto_provider().signature_verification_algorithms;
            let wants = builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(crate::tls::AcceptAnyCert(algorithms)));
            let mut tls = match &opts.client_cert {
                Some((cert, key)) => {
                    let (chain, key) = client_identity(cert, key)?;
                    wants
                        .with_client_auth_cert(chain, key)
                        .map_err(|e| bad(&e.to_string()))?
                }
                None => wants.with_no_client_auth(),
            };
            tls.alpn_protocols = vec![b"h2".to_vec()];
            return Ok(Arc::new(tls));
        }
        let mut trusted = TrustedCerts::bundled();
        for pem in &self.config().extra_root_certs_pem {
            trusted.add_pem(pem);
        }
        if let Some(pem) = &opts.ca_pem {
            let certs: Vec<CertificateDer<'static>> =
                rustls::pki_types::pem::PemObject::pem_slice_iter(pem)
                    .collect::<Result<_, _>>()
                    .map_err(|_| bad("failed to append ca certs from PEM"))?;
            if certs.is_empty() {
                return Err(bad("failed to append ca certs from PEM"));
            }
            for c in certs {
                trusted.add(c);
            }
        }
        // k6 makes a fetcher per connect() given `tls` params: its cache is that connection's.
        let wants = builder.dangerous().with_custom_certificate_verifier(
            trusted.verifier_fetching(&provider, self.config().aia_fetcher()),
        );
        let mut tls = match &opts.client_cert {
            Some((cert, key)) => {
                let chain: Vec<CertificateDer<'static>> =
                    rustls::pki_types::pem::PemObject::pem_slice_iter(cert)
                        .collect::<Result<_, _>>()
                        .map_err(|e| bad(&format!("failed to load client certificate: {e}")))?;
                let key =
                    <PrivateKeyDer<'static> as rustls::pki_types::pem::PemObject>::from_pem_slice(
                        key,
                    )
                    .map_err(|e| bad(&format!("failed to load client key: {e}")))?;
                wants
                    .with_client_auth_cert(chain, key)
                    .map_err(|e| bad(&e.to_string()))?
            }
            None => wants.with_no_client_auth(),
        };
        tls.alpn_protocols = vec![b"h2".to_vec()];
        Ok(Arc::new(tls))
    }
}

/// The `tls.cert` chain and `tls.key` of `connect()`, from PEM.
fn client_identity(
    cert: &[u8],
    key: &[u8],
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), HttpError> {
    use rustls::pki_types::pem::PemObject;
    let bad = |what: String| HttpError::new(error::TLS_GENERIC, what);
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert)
        .collect::<Result<_, _>>()
        .map_err(|e| bad(format!("failed to load client certificate: {e}")))?;
    let key = PrivateKeyDer::from_pem_slice(key)
        .map_err(|e| bad(format!("failed to load client key: {e}")))?;
    Ok((chain, key))
}

async fn handshake<S>(io: S) -> Result<SendRequest<CallBody>, HttpError>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (sender, conn) = hyper::client::conn::http2::Builder::new(TokioExecutor::new())
        .handshake(TokioIo::new(io))
        .await
        .map_err(|e| error::from_hyper(&e, error::Side::Write))?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(sender)
}

/// `host:port`, the host without IPv6 brackets.
fn split_host_port(address: &str) -> Option<(&str, u16)> {
    let (host, port) = address.rsplit_once(':')?;
    let port = port.parse().ok()?;
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    Some((host, port))
}

/// One unary call's request.
pub struct GrpcCall<'a> {
    /// `/package.Service/Method`.
    pub path: &'a str,
    /// Metadata (`params.metadata`), names as given.
    pub metadata: &'a [(String, String)],
    /// The encoded request message.
    pub message: Bytes,
    /// The call's deadline, sent as `grpc-timeout` too (none: no deadline).
    pub timeout: Option<Duration>,
    /// Largest reply message accepted.
    pub max_receive: usize,
}

impl GrpcConn {
    /// Runs one unary call; failures are a status in the reply, never an `Err`.
    pub async fn unary(&self, call: GrpcCall<'_>) -> GrpcReply {
        let frames = [call.message.clone()];
        let mut reply = self
            .exchange(
                call.path,
                call.metadata,
                &frames,
                call.timeout,
                call.max_receive,
            )
            .await;
        let first = reply.messages.drain(..).next();
        reply.body = first;
        if reply.code == 0 && reply.body.is_none() {
            reply.code = code::INTERNAL;
            reply.message = "grpc: server returned no message for a unary call".to_owned();
        }
        if reply.code != 0 {
            reply.body = None;
        }
        reply
    }

    /// Sends `frames` as a whole client stream and reads every reply message: enough for
    /// server reflection, whose requests do not depend on earlier replies of the stream.
    pub async fn exchange(
        &self,
        path: &str,
        metadata: &[(String, String)],
        frames: &[Bytes],
        timeout: Option<Duration>,
        max_receive: usize,
    ) -> GrpcReply {
        let started = Instant::now();
        let call = self.exchange_inner(path, metadata, frames, timeout, max_receive);
        let outcome = match timeout {
            Some(t) => tokio::time::timeout(t, call).await,
            None => Ok(call.await),
        };
        let mut reply = match outcome {
            Ok(r) => r,
            Err(_) => GrpcReply {
                timed_out: true,
                ..failed(
                    code::DEADLINE_EXCEEDED,
                    "context deadline exceeded".to_owned(),
                )
            },
        };
        reply.started = Some(started);
        reply.duration = started.elapsed();
        reply
    }

    /// Whether the connection has ended (the server sent GOAWAY and its last streams
    /// finished, or the socket dropped): no new call can go on it.
    pub fn is_closed(&self) -> bool {
        self.sender.is_closed()
    }

    /// Bytes (written, read) on the socket since the previous claim: the caller's share of
    /// the traffic (the handshake and reflection go to whoever claims next).
    pub fn claim_bytes(&self) -> (u64, u64) {
        self.stats.claim()
    }

    async fn exchange_inner(
        &self,
        path: &str,
        metadata: &[(String, String)],
        frames: &[Bytes],
        timeout: Option<Duration>,
        max_receive: usize,
    ) -> GrpcReply {
        let total: usize = frames.iter().map(|f| 5 + f.len()).sum();
        let mut body = BytesMut::with_capacity(total);
        for f in frames {
            body.put_u8(0);
            body.put_u32(f.len() as u32);
            body.put_slice(f);
        }
        let req = self.request(path, metadata, timeout);
        let req = match req.body(Either::Left(Full::new(body.freeze()))) {
            Ok(r) => r,
            Err(e) => return failed(code::INTERNAL, e.to_string()),
        };
        let mut sender = self.sender.clone();
        if sender.ready().await.is_err() {
            return GrpcReply {
                unsent: true,
                ..failed(code::UNAVAILABLE, "connection closed".to_owned())
            };
        }
        let resp = match sender.send_request(req).await {
            Ok(r) => r,
            // hyper gives the request back untouched when the connection ended first.
            Err(e) => {
                return GrpcReply {
                    unsent: e.is_canceled() || e.is_closed(),
                    ..failed(code::UNAVAILABLE, e.to_string())
                }
            }
        };
        let (parts, incoming) = resp.into_parts();
        let headers = match metadata_pairs(&parts.headers) {
            Ok(h) => h,
            Err(e) => return failed(code::INTERNAL, e),
        };
        let mut reply = GrpcReply {
            headers,
            ..GrpcReply::default()
        };
        if parts.status != http::StatusCode::OK {
            reply.code = http_to_grpc(parts.status.as_u16());
            reply.message = format!(
                "unexpected HTTP status code received from server: {} ({})",
                parts.status.as_u16(),
                parts.status.canonical_reason().unwrap_or("")
            );
            return reply;
        }
        let collected = match incoming.collect().await {
            Ok(c) => c,
            Err(e) => return failed(code::INTERNAL, e.to_string()),
        };
        // A trailers-only reply carries the status in its headers.
        let trailers = collected.trailers().cloned().unwrap_or_default();
        let mut data = collected.to_bytes();
        read_status(&mut reply, &parts.headers, Some(&trailers));
        while data.len() >= 5 {
            let compressed = data.get_u8();
            let len = data.get_u32() as usize;
            if compressed != 0 {
                return failed(
                    code::INTERNAL,
                    "grpc: compressed replies are not supported by rk6".to_owned(),
                );
            }
            if len > max_receive {
                return failed(
                    code::RESOURCE_EXHAUSTED,
                    format!("grpc: received message larger than max ({len} vs. {max_receive})"),
                );
            }
            if data.len() < len {
                break;
            }
            reply.messages.push(data.split_to(len));
        }
        reply
    }
}

/// A request body fed message by message: a stream's writes, until its writer is dropped
/// or closed (which ends the client's half of the stream).
pub struct ChannelBody(tokio::sync::mpsc::UnboundedReceiver<Bytes>);

impl hyper::body::Body for ChannelBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Self::Error>>> {
        self.0
            .poll_recv(cx)
            .map(|m| m.map(|b| Ok(hyper::body::Frame::data(b))))
    }
}

/// The body of any call on a connection: a whole unary request or a stream's writes.
type CallBody = Either<Full<Bytes>, ChannelBody>;

/// What a stream reports, in order: its messages, then its end.
#[derive(Debug)]
pub enum StreamEvent {
    /// One message the server sent.
    Message(Bytes),
    /// The stream ended: the status, metadata and timing (no messages in it).
    End(GrpcReply),
}

/// The writing half of a stream (`stream.write()`, `stream.end()`).
pub struct GrpcStreamWriter(Option<tokio::sync::mpsc::UnboundedSender<Bytes>>);

impl GrpcStreamWriter {
    /// Queues one encoded message; false once the stream's writing half is closed.
    pub fn send(&mut self, message: &[u8]) -> bool {
        let Some(tx) = &self.0 else {
            return false;
        };
        let mut frame = BytesMut::with_capacity(5 + message.len());
        frame.put_u8(0);
        frame.put_u32(message.len() as u32);
        frame.put_slice(message);
        tx.send(frame.freeze()).is_ok()
    }

    /// Ends the client's half of the stream (HTTP/2 END_STREAM once the queue is written).
    pub fn close(&mut self) {
        self.0 = None;
    }
}

/// One stream's request: as a unary call's, without the message.
pub struct GrpcStreamCall<'a> {
    /// `/package.Service/Method`.
    pub path: &'a str,
    /// Metadata (`params.metadata`), names as given.
    pub metadata: &'a [(String, String)],
    /// The stream's deadline (none: the stream lasts as long as both sides keep it open).
    pub timeout: Option<Duration>,
    /// Largest message accepted.
    pub max_receive: usize,
}

impl GrpcConn {
    fn request(
        &self,
        path: &str,
        metadata: &[(String, String)],
        timeout: Option<Duration>,
    ) -> http::request::Builder {
        let uri = format!("{}://{}{}", self.scheme, self.authority, path);
        let mut req = http::Request::builder()
            .method(http::Method::POST)
            .uri(uri)
            .header("content-type", "application/grpc")
            .header("te", "trailers")
            .header("user-agent", &self.user_agent);
        if let Some(t) = timeout {
            req = req.header("grpc-timeout", grpc_timeout(t));
        }
        for (k, v) in metadata {
            req = req.header(k.to_ascii_lowercase(), v);
        }
        req
    }

    /// Opens a stream: its writer, and the future that runs it, giving each message and
    /// then the end to `on_event`. The future must be polled for anything to happen.
    pub fn open_stream<F>(
        &self,
        call: GrpcStreamCall<'_>,
        mut on_event: F,
    ) -> (GrpcStreamWriter, impl std::future::Future<Output = ()>)
    where
        F: FnMut(StreamEvent),
    {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let req = self
            .request(call.path, call.metadata, call.timeout)
            .body(Either::Right(ChannelBody(rx)));
        let sender = self.sender.clone();
        let timeout = call.timeout;
        let max_receive = call.max_receive;
        let run = async move {
            let started = Instant::now();
            let mut reply = match req {
                Err(e) => failed(code::INTERNAL, e.to_string()),
                Ok(req) => {
                    let read = read_stream(sender, req, max_receive, &mut on_event);
                    match timeout {
                        None => read.await,
                        Some(t) => match tokio::time::timeout(t, read).await {
                            Ok(r) => r,
                            Err(_) => GrpcReply {
                                timed_out: true,
                                ..failed(
                                    code::DEADLINE_EXCEEDED,
                                    "context deadline exceeded".to_owned(),
                                )
                            },
                        },
                    }
                }
            };
            reply.started = Some(started);
            reply.duration = started.elapsed();
            on_event(StreamEvent::End(reply));
        };
        (GrpcStreamWriter(Some(tx)), run)
    }
}

/// Reads a stream's reply to its end, giving each message to `on_event` as it arrives.
async fn read_stream<F: FnMut(StreamEvent)>(
    mut sender: SendRequest<CallBody>,
    req: http::Request<CallBody>,
    max_receive: usize,
    on_event: &mut F,
) -> GrpcReply {
    if sender.ready().await.is_err() {
        return failed(code::UNAVAILABLE, "connection closed".to_owned());
    }
    let resp = match sender.send_request(req).await {
        Ok(r) => r,
        Err(e) => return failed(code::UNAVAILABLE, e.to_string()),
    };
    let (parts, mut incoming) = resp.into_parts();
    let headers = match metadata_pairs(&parts.headers) {
        Ok(h) => h,
        Err(e) => return failed(code::INTERNAL, e),
    };
    let mut reply = GrpcReply {
        headers,
        ..GrpcReply::default()
    };
    if parts.status != http::StatusCode::OK {
        reply.code = http_to_grpc(parts.status.as_u16());
        reply.message = format!(
            "unexpected HTTP status code received from server: {} ({})",
            parts.status.as_u16(),
            parts.status.canonical_reason().unwrap_or("")
        );
        return reply;
    }
    let mut data = BytesMut::new();
    let mut trailers = None;
    while let Some(frame) = incoming.frame().await {
        let frame = match frame {
            Ok(f) => f,
            Err(e) => return failed(code::INTERNAL, e.to_string()),
        };
        match frame.into_data() {
            Ok(chunk) => {
                data.extend_from_slice(&chunk);
                while data.len() >= 5 {
                    let compressed = data[0];
                    let len = u32::from_be_bytes([data[1], data[2], data[3], data[4]]) as usize;
                    if compressed != 0 {
                        return failed(
                            code::INTERNAL,
                            "grpc: compressed replies are not supported by rk6".to_owned(),
                        );
                    }
                    if len > max_receive {
                        return failed(
                            code::RESOURCE_EXHAUSTED,
                            format!(
                                "grpc: received message larger than max ({len} vs. {max_receive})"
                            ),
                        );
                    }
                    if data.len() < 5 + len {
                        break;
                    }
                    data.advance(5);
                    on_event(StreamEvent::Message(data.split_to(len).freeze()));
                }
            }
            Err(frame) => {
                if let Ok(t) = frame.into_trailers() {
                    trailers = Some(t);
                }
            }
        }
    }
    read_status(&mut reply, &parts.headers, trailers.as_ref());
    reply
}

/// The call's status, message and trailers: from the trailers, or from the headers of a
/// trailers-only reply (which then has no headers of its own).
fn read_status(
    reply: &mut GrpcReply,
    headers: &http::HeaderMap,
    trailers: Option<&http::HeaderMap>,
) {
    let (status_from, in_trailers) = match trailers {
        Some(t) if t.contains_key("grpc-status") => (t, true),
        _ => (headers, false),
    };
    reply.code = status_from
        .get("grpc-status")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(code::UNKNOWN);
    reply.message = status_from
        .get("grpc-message")
        .and_then(|v| v.to_str().ok())
        .map(|m| {
            percent_encoding::percent_decode_str(m)
                .decode_utf8_lossy()
                .into_owned()
        })
        .unwrap_or_default();
    if !in_trailers {
        reply.headers.clear();
    }
    // grpc-go takes the details only from a single value that decodes.
    let mut details = status_from.get_all("grpc-status-details-bin").iter();
    if let (Some(v), None) = (details.next(), details.next()) {
        reply.status_details = decode_bin(v.as_bytes()).ok().map(Bytes::from);
    }
    match metadata_pairs(status_from) {
        Ok(t) => reply.trailers = t,
        Err(e) => {
            reply.code = code::INTERNAL;
            reply.message = e;
            reply.status_details = None;
        }
    }
}

fn failed(code: u32, message: String) -> GrpcReply {
    GrpcReply {
        code,
        message,
        ..GrpcReply::default()
    }
}

/// The metadata a script sees: every header but HTTP/2's and gRPC's own, as grpc-go keeps
/// them (`grpc-status-details-bin` included); a `-bin` value is base64 (padded or not) and
/// is given decoded. A `-bin` value that does not decode fails the call, as in grpc-go.
fn metadata_pairs(headers: &http::HeaderMap) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::with_capacity(headers.len());
    for (k, v) in headers {
        let k = k.as_str();
        if matches!(
            k,
            "grpc-status"
                | "grpc-message"
                | "grpc-message-type"
                | "grpc-encoding"
                | "grpc-timeout"
                | "te"
        ) {
            continue;
        }
        let value = if k.ends_with("-bin") {
            let bytes = decode_bin(v.as_bytes()).map_err(|at| {
                format!("transport: malformed {k}: illegal base64 data at input byte {at}")
            })?;
            go_string(&bytes)
        } else {
            String::from_utf8_lossy(v.as_bytes()).into_owned()
        };
        out.push((k.to_owned(), value));
    }
    Ok(out)
}

/// A `-bin` metadata value as grpc-go decodes it: padded base64 when its length is a
/// multiple of 4, unpadded otherwise; the error is the offset Go's decoder reports.
fn decode_bin(value: &[u8]) -> Result<Vec<u8>, usize> {
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
    use base64::Engine;
    let engine = if value.len().is_multiple_of(4) {
        &STANDARD
    } else {
        &STANDARD_NO_PAD
    };
    engine.decode(value).map_err(|e| match e {
        base64::DecodeError::InvalidByte(at, _) | base64::DecodeError::InvalidLastSymbol(at, _) => {
            at
        }
        base64::DecodeError::InvalidLength(len) => len,
        base64::DecodeError::InvalidPadding => {
            value.iter().position(|b| *b == b'=').unwrap_or(value.len())
        }
    })
}

/// Bytes as a Go string reaches JS: valid UTF-8 as it is, each byte of an invalid sequence
/// as one U+FFFD (Rust's lossy conversion merges some of them).
pub fn go_string(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    let mut rest = bytes;
    loop {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                out.push_str(s);
                return out;
            }
            Err(e) => {
                let (good, bad) = rest.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(good).unwrap_or_default());
                out.push(char::REPLACEMENT_CHARACTER);
                rest = &bad[1..];
            }
        }
    }
}

/// The `grpc-timeout` header value: at most 8 digits, in the finest unit that fits.
fn grpc_timeout(d: Duration) -> String {
    let micros = d.as_micros();
    if micros < 100_000_000 {
        format!("{micros}u")
    } else if d.as_millis() < 100_000_000 {
        format!("{}m", d.as_millis())
    } else {
        format!("{}S", d.as_secs().min(99_999_999))
    }
}

/// gRPC's mapping of an HTTP status of a non-gRPC answer.
fn http_to_grpc(status: u16) -> u32 {
    match status {
        400 => code::INTERNAL,
        401 => code::UNAUTHENTICATED,
        403 => code::PERMISSION_DENIED,
        404 => code::UNIMPLEMENTED,
        429 | 502..=504 => code::UNAVAILABLE,
        _ => code::UNKNOWN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeout_header_fits_eight_digits() {
        assert_eq!(grpc_timeout(Duration::from_secs(2)), "2000000u");
        assert_eq!(grpc_timeout(Duration::from_secs(120)), "120000m");
        assert_eq!(grpc_timeout(Duration::from_secs(200_000)), "200000S");
    }

    #[test]
    fn code_names_as_go_prints_them() {
        assert_eq!(code::name(code::OK), "OK");
        assert_eq!(code::name(code::DEADLINE_EXCEEDED), "DeadlineExceeded");
        assert_eq!(code::name(code::UNAUTHENTICATED), "Unauthenticated");
        assert_eq!(code::name(17), "Code(17)");
        assert_eq!(code::NAMES.len(), code::UNAUTHENTICATED as usize + 1);
    }

    #[test]
    fn bin_metadata_is_decoded_as_grpc_go_does() {
        // Padded when the length is a multiple of 4, unpadded otherwise.
        assert_eq!(decode_bin(b"aGk="), Ok(b"hi".to_vec()));
        assert_eq!(decode_bin(b"aGk"), Ok(b"hi".to_vec()));
        assert_eq!(decode_bin(b"a!k="), Err(1));
        // Invalid UTF-8: one U+FFFD per byte, as a Go string reaches JS.
        assert_eq!(go_string(b"a\xff\xfeb"), "a\u{fffd}\u{fffd}b");
        assert_eq!(go_string(b"\xf0\x90\x80"), "\u{fffd}\u{fffd}\u{fffd}");
        assert_eq!(go_string("é".as_bytes()), "é");
        let mut headers = http::HeaderMap::new();
        headers.insert("grpc-status", "3".parse().unwrap());
        headers.insert("grpc-status-details-bin", "CAM".parse().unwrap());
        headers.insert("x-id-bin", "AP8".parse().unwrap());
        headers.insert("x-plain", "v".parse().unwrap());
        let mut reply = GrpcReply::default();
        read_status(&mut reply, &http::HeaderMap::new(), Some(&headers));
        assert_eq!(reply.code, 3);
        assert_eq!(reply.status_details.as_deref(), Some(&[8u8, 3][..]));
        assert_eq!(
            reply.trailers,
            [
                (
                    "grpc-status-details-bin".to_owned(),
                    "\u{8}\u{3}".to_owned()
                ),
                ("x-id-bin".to_owned(), "\u{0}\u{fffd}".to_owned()),
                ("x-plain".to_owned(), "v".to_owned()),
            ]
        );
        headers.insert("x-bad-bin", "a!k=".parse().unwrap());
        let mut reply = GrpcReply::default();
        read_status(&mut reply, &http::HeaderMap::new(), Some(&headers));
        assert_eq!(reply.code, code::INTERNAL);
        assert_eq!(
            reply.message,
            "transport: malformed x-bad-bin: illegal base64 data at input byte 1"
        );
    }

    #[test]
    fn host_port_split_handles_ipv6() {
        assert_eq!(
            split_host_port("127.0.0.1:50051"),
            Some(("127.0.0.1", 50051))
        );
        assert_eq!(split_host_port("[::1]:8"), Some(("::1", 8)));
        assert_eq!(split_host_port("nohost"), None);
    }
}
