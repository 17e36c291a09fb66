//! An in-process WebSocket server (tokio-tungstenite) on 127.0.0.1:0 for the `k6/ws` and
//! WebSocket API tests, plain or behind TLS with a throwaway certificate.
//!
//! Paths: `/echo` echoes text and binary messages (and answers pings, as tungstenite does);
//! `/close/<code>` closes at once with that code and reason `bye`; `/ping` pings first
//! (payload `srv`), then echoes; `/reject` answers the upgrade with 403 and a body;
//! `/headers` sends one text message, a JSON object of the request's headers (lowercase
//! names), then echoes; `/drop` drops the TCP connection without a close frame;
//! `/bad-deflate` accepts permessage-deflate without its no-context-takeover parameters
//! (tungstenite cannot compress: k6 refuses that answer before any frame).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;

/// How long a test server accepts connections.
const LIFE: Duration = Duration::from_secs(60);

/// Starts a plain server; returns its address.
pub fn start() -> SocketAddr {
    super::accept_loop(LIFE, |tcp| async move { session(tcp).await })
}

/// Starts a TLS server for `127.0.0.1` with a self-signed certificate; returns its address.
pub fn start_tls() -> SocketAddr {
    let key = rcgen::KeyPair::generate().unwrap();
    let params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap();
    let cert = params.self_signed(&key).unwrap();
    start_tls_with(super::tls_server_config(&cert, &key, &[b"http/1.1"]))
}

/// Starts a TLS server presenting the certificate of `config`; returns its address.
pub fn start_tls_with(config: Arc<rustls::ServerConfig>) -> SocketAddr {
    let acceptor = tokio_rustls::TlsAcceptor::from(config);
    super::accept_loop(LIFE, move |tcp| {
        let acceptor = acceptor.clone();
        async move {
            if let Ok(tls) = acceptor.accept(tcp).await {
                session(tls).await;
            }
        }
    })
}

async fn session<S: AsyncRead + AsyncWrite + Unpin>(io: S) {
    let seen = Arc::new(std::sync::Mutex::new((String::new(), String::new())));
    let record = seen.clone();
    // The error type is tungstenite's (its callback's signature), not ours to shrink.
    #[allow(clippy::result_large_err)]
    let callback = move |req: &Request, mut resp: Response| -> Result<Response, ErrorResponse> {
        let path = req.uri().path().to_string();
        if path == "/reject" {
            let mut err = ErrorResponse::new(Some("go away\n".to_string()));
            *err.status_mut() = tokio_tungstenite::tungstenite::http::StatusCode::FORBIDDEN;
            return Err(err);
        }
        let mut headers = serde_json::Map::new();
        for (k, v) in req.headers() {
            headers.insert(
                k.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned().into(),
            );
        }
        if let Some(p) = req.headers().get("sec-websocket-protocol") {
            let first = p
                .to_str()
                .unwrap_or("")
                .split(',')
                .next()
                .unwrap_or("")
                .trim();
            resp.headers_mut()
                .insert("sec-websocket-protocol", first.parse().unwrap());
        }
        resp.headers_mut()
            .insert("set-cookie", "srv=1; Path=/".parse().unwrap());
        if path == "/bad-deflate" {
            resp.headers_mut().insert(
                "sec-websocket-extensions",
                "permessage-deflate".parse().unwrap(),
            );
        }
        *record.lock().unwrap() = (path, serde_json::Value::Object(headers).to_string());
        Ok(resp)
    };
    let Ok(mut ws) = tokio_tungstenite::accept_hdr_async(io, callback).await else {
        return;
    };
    let (path, headers) = seen.lock().unwrap().clone();
    if let Some(code) = path.strip_prefix("/close/") {
        let code: u16 = code.parse().unwrap_or(1000);
        let _ = ws
            .close(Some(CloseFrame {
                code: CloseCode::from(code),
                reason: "bye".into(),
            }))
            .await;
        // Let the client's reply arrive before the connection goes.
        while let Some(Ok(_)) = ws.next().await {}
        return;
    }
    match path.as_str() {
        "/drop" => return,
        "/headers" => {
            let _ = ws.send(Message::text(headers)).await;
        }
        "/ping" => {
            let _ = ws.send(Message::Ping(b"srv".to_vec().into())).await;
        }
        _ => {}
    }
    while let Some(Ok(msg)) = ws.next().await {
        let reply = match msg {
            Message::Text(_) | Message::Binary(_) => msg,
            // tungstenite queues the close reply; the next read sends it and ends.
            Message::Close(_) => continue,
            _ => continue,
        };
        if ws.send(reply).await.is_err() {
            break;
        }
    }
}
