//! Opening a WebSocket: the VU's connect rules and TLS settings (rk6-http's
//! `connect_raw`), then the HTTP/1.1 upgrade (tokio-tungstenite), with the VU's cookie jar
//! and User-Agent as k6 sends them.

use std::time::Instant;

use rk6_http::{Client, HttpError, SharedJar, Traffic};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::{HeaderName, HeaderValue};
use tokio_tungstenite::tungstenite::Error as WsError;
use tokio_tungstenite::WebSocketStream;
use url::Url;

use super::deflate::{self, WsConn};

/// An open WebSocket.
pub(crate) type Stream = WebSocketStream<WsConn>;

/// What the upgrade asks for besides the URL.
pub(crate) struct Upgrade<'a> {
    /// Header names and values, set over the generated ones as Go's `Header.Set` does.
    pub(crate) headers: &'a [(String, String)],
    /// `Sec-WebSocket-Protocol` values (the WebSocket API's `protocols`).
    pub(crate) protocols: &'a [String],
    /// The script's own jar (`jar` param) instead of the VU's.
    pub(crate) jar: Option<SharedJar>,
    /// Offer permessage-deflate (`compression: 'deflate'`).
    pub(crate) deflate: bool,
}

/// The server's answer to the upgrade, as `ws.connect` returns it.
#[derive(Default, Debug)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    /// Go-canonical names, values of a repeated header joined with ", ".
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: String,
    /// The `Sec-WebSocket-Protocol` the server chose.
    pub(crate) subprotocol: String,
    /// The `Sec-WebSocket-Extensions` values, one per header line.
    pub(crate) extensions: Vec<String>,
}

/// A finished attempt: the socket (on a 101), the server's answer (if it gave one), the
/// error (if it failed), and how long connecting took.
pub(crate) struct Attempt {
    pub(crate) stream: Option<Stream>,
    pub(crate) answer: Option<Answer>,
    pub(crate) error: Option<String>,
    pub(crate) connecting: std::time::Duration,
    /// The connection's byte counters, once it was opened.
    pub(crate) traffic: Option<Traffic>,
}

/// Headers k6's dialer (gorilla) generates itself and refuses from the script.
const OWN_HEADERS: &[&str] = &[
    "upgrade",
    "connection",
    "sec-websocket-key",
    "sec-websocket-version",
    "sec-websocket-extensions",
];

/// Go's canonical form of a header name (`sec-websocket-accept` → `Sec-Websocket-Accept`).
pub(crate) fn canonical(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = true;
    for c in name.chars() {
        out.push(if upper {
            c.to_ascii_uppercase()
        } else {
            c.to_ascii_lowercase()
        });
        upper = c == '-';
    }
    out
}

/// The URL the cookie jar is asked about (cookies are kept for http and https).
fn jar_url(url: &Url) -> Url {
    let mut u = url.clone();
    let scheme = if url.scheme() == "wss" {
        "https"
    } else {
        "http"
    };
    let _ = u.set_scheme(scheme);
    u
}

fn answer_of<T>(resp: &tokio_tungstenite::tungstenite::http::Response<T>, body: String) -> Answer {
    let mut headers: Vec<(String, String)> = Vec::new();
    for (name, value) in resp.headers() {
        let name = canonical(name.as_str());
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        match headers.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => {
                v.push_str(", ");
                v.push_str(&value);
            }
            None => headers.push((name, value)),
        }
    }
    let subprotocol = resp
        .headers()
        .get("sec-websocket-protocol")
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .unwrap_or_default();
    let extensions = resp
        .headers()
        .get_all("sec-websocket-extensions")
        .iter()
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .collect();
    Answer {
        status: resp.status().as_u16(),
        headers,
        body,
        subprotocol,
        extensions,
    }
}

/// The text of a connect error as k6 reports it (Go's error string).
fn dial_text(e: &HttpError) -> String {
    e.detail.clone().unwrap_or_else(|| e.message.clone())
}

/// Stores the answer's `Set-Cookie`s in the jar used for the upgrade, as Go's dialer does.
fn store_cookies(
    client: &Client,
    jar: &Option<SharedJar>,
    url: &Url,
    headers: &tokio_tungstenite::tungstenite::http::HeaderMap,
) {
    let url = jar_url(url);
    for value in headers.get_all("set-cookie") {
        let Ok(cookie) = value.to_str() else { continue };
        let _ = match jar {
            Some(j) => j
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .set(&url, cookie),
            None => client.cookies().set(&url, cookie),
        };
    }
}

/// Connects to `url` and upgrades; never fails, the attempt says what happened.
pub(crate) async fn open(client: &Client, url: &Url, up: Upgrade<'_>) -> Attempt {
    let start = Instant::now();
    let mut attempt = Attempt {
        stream: None,
        answer: None,
        error: None,
        connecting: Default::default(),
        traffic: None,
    };
    let mut request = match url.as_str().into_client_request() {
        Ok(r) => r,
        Err(e) => {
            attempt.error = Some(format!("malformed ws or wss URL: {e}"));
            return attempt;
        }
    };
    let headers = request.headers_mut();
    if let Some(agent) = client.user_agent() {
        if let Ok(v) = HeaderValue::from_str(agent) {
            headers.insert("user-agent", v);
        }
    }
    let cookies = {
        let jar_url = jar_url(url);
        match &up.jar {
            Some(j) => j
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .cookies_for_url(&jar_url),
            None => client.cookies().cookies_for_url(&jar_url),
        }
    };
    if !cookies.is_empty() {
        let line: Vec<String> = cookies.iter().map(|(k, v)| format!("{k}={v}")).collect();
        if let Ok(v) = HeaderValue::from_str(&line.join("; ")) {
            headers.insert("cookie", v);
        }
    }
    if up.deflate {
        headers.insert(
            "sec-websocket-extensions",
            HeaderValue::from_static(deflate::OFFER),
        );
    }
    if !up.protocols.is_empty() {
        if let Ok(v) = HeaderValue::from_str(&up.protocols.join(", ")) {
            headers.insert("sec-websocket-protocol", v);
        }
    }
    for (name, value) in up.headers {
        let lower = name.to_ascii_lowercase();
        if OWN_HEADERS.contains(&lower.as_str()) {
            attempt.error = Some(format!(
                "websocket: duplicate header not allowed: {}",
                canonical(name)
            ));
            return attempt;
        }
        let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(lower.as_bytes()),
            HeaderValue::from_str(value),
        ) else {
            attempt.error = Some(format!("net/http: invalid header field {name:?}"));
            return attempt;
        };
        headers.insert(n, v);
    }

    let conn = match client.connect_raw(url).await {
        Ok(c) => c,
        Err(e) => {
            attempt.connecting = start.elapsed();
            attempt.error = Some(dial_text(&e));
            return attempt;
        }
    };
    attempt.traffic = Some(conn.traffic());
    let result =
        tokio_tungstenite::client_async_with_config(request, WsConn::new(conn), Some(ws_config()))
            .await;
    attempt.connecting = start.elapsed();
    match result {
        Ok((stream, resp)) => {
            store_cookies(client, &up.jar, url, resp.headers());
            let answer = answer_of(&resp, String::new());
            // The connection turned the extension on for exactly this answer; a server
            // that turns it on in another mode (offered or not) is refused, as gorilla
            // refuses it.
            let accepted = deflate::answer(answer.extensions.iter().map(String::as_str));
            if accepted == deflate::Answer::Invalid {
                attempt.error = Some(deflate::INVALID.into());
            } else {
                attempt.stream = Some(stream);
            }
            attempt.answer = Some(answer);
        }
        Err(WsError::Http(resp)) => {
            let body = resp
                .body()
                .as_deref()
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_default();
            store_cookies(client, &up.jar, url, resp.headers());
            let answer = answer_of(&resp, body);
            attempt.answer = Some(answer);
            attempt.error = Some("websocket: bad handshake".into());
        }
        Err(e) => attempt.error = Some(handshake_text(&e)),
    }
    attempt
}

/// tungstenite's settings for a VU's socket. Its read buffer starts at 128 KiB and is
/// zeroed when first read into, so every open socket held 128 KiB of RSS: 4 KiB (gorilla's
/// default, which k6 uses) still reads a message of any size, growing for a large frame.
fn ws_config() -> tokio_tungstenite::tungstenite::protocol::WebSocketConfig {
    tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
        .read_buffer_size(READ_BUFFER)
}

/// The read buffer of a VU's socket (see [`ws_config`]).
const READ_BUFFER: usize = 4 * 1024;

/// Go's wording of a failed upgrade that got no HTTP answer.
fn handshake_text(e: &WsError) -> String {
    match e {
        WsError::Io(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
            "unexpected EOF".into()
        }
        WsError::Io(io) => io.to_string(),
        WsError::ConnectionClosed | WsError::AlreadyClosed => "EOF".into(),
        other => format!("websocket: {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_names_are_canonical_as_in_go() {
        assert_eq!(canonical("sec-websocket-accept"), "Sec-Websocket-Accept");
        assert_eq!(canonical("X-FOO-bar"), "X-Foo-Bar");
        assert_eq!(canonical("date"), "Date");
    }

    #[test]
    fn cookies_are_asked_for_with_http_schemes() {
        let u = |s: &str| jar_url(&Url::parse(s).unwrap()).to_string();
        assert_eq!(u("ws://a.test/x?y=1"), "http://a.test/x?y=1");
        assert_eq!(u("wss://a.test:8443/"), "https://a.test:8443/");
    }
}
