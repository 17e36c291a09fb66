//! The HTTP client the outputs push with (remote write, OpenTelemetry over HTTP, InfluxDB,
//! aggregate): hyper's client over a rustls connector (http and https, HTTP/2 when ALPN
//! picks it), no connection kept between pushes, and short texts for its failures in the
//! words rk6's load-testing client uses.

use std::error::Error as StdError;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{HeaderMap, HeaderName, HeaderValue};
use http::{Method, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use percent_encoding::percent_decode_str;
use rk6_http::TrustedCerts;
use rustls::crypto::ring;
use url::Url;

/// A response the endpoint gave.
pub(crate) struct Answer {
    /// The status code.
    pub(crate) status: StatusCode,
    /// The server's reason phrase when it sent one (HTTP/1).
    pub(crate) reason: Option<String>,
    /// The response body.
    pub(crate) body: Bytes,
}

impl Answer {
    /// `"404 Not Found"`: the code and the server's reason phrase, else the canonical one.
    pub(crate) fn status_text(&self) -> String {
        let reason = self
            .reason
            .as_deref()
            .or(self.status.canonical_reason())
            .unwrap_or_default();
        if reason.is_empty() {
            self.status.as_str().to_owned()
        } else {
            format!("{} {reason}", self.status.as_str())
        }
    }
}

/// POSTs to one remote-write URL with fixed headers.
pub(crate) struct Transport {
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    uri: Uri,
    /// Every request's headers: the protocol's, the user's, `User-Agent`, URL credentials.
    headers: Result<HeaderMap, String>,
    timeout: Duration,
}

static TLS13_ONLY: &[&rustls::SupportedProtocolVersion] = &[&rustls::version::TLS13];

/// The oldest TLS version a client accepts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum TlsMinimum {
    /// TLS 1.2 and 1.3 (rustls has nothing older).
    #[default]
    Tls12,
    /// TLS 1.3 only.
    Tls13,
}

impl TlsMinimum {
    fn versions(self) -> &'static [&'static rustls::SupportedProtocolVersion] {
        match self {
            TlsMinimum::Tls12 => rustls::DEFAULT_VERSIONS,
            TlsMinimum::Tls13 => TLS13_ONLY,
        }
    }
}

impl Transport {
    /// A client for `url`; `headers` go on every request in order (a user `User-Agent` or
    /// `Authorization` wins over the default agent and the URL's credentials).
    pub(crate) fn new(
        url: &Url,
        headers: &[(String, String)],
        user_agent: &str,
        insecure_skip_tls_verify: bool,
        timeout: Duration,
    ) -> Transport {
        Transport::with_tls_minimum(
            url,
            headers,
            user_agent,
            insecure_skip_tls_verify,
            TlsMinimum::default(),
            timeout,
        )
    }

    /// [`Transport::new`] accepting no TLS version below `minimum`.
    pub(crate) fn with_tls_minimum(
        url: &Url,
        headers: &[(String, String)],
        user_agent: &str,
        insecure_skip_tls_verify: bool,
        minimum: TlsMinimum,
        timeout: Duration,
    ) -> Transport {
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls_config(insecure_skip_tls_verify, None, minimum))
            .https_or_http()
            .enable_all_versions()
            .build();
        let client = Client::builder(TokioExecutor::new())
            // The pusher thread sleeps between pushes without driving idle connections, so
            // each push opens its own (one connection every few seconds costs nothing).
            .pool_max_idle_per_host(0)
            .build(connector);
        Transport {
            client,
            uri: without_credentials(url),
            headers: header_map(url, headers, user_agent),
            timeout,
        }
    }

    /// Sends `body`; the error is the failure's text (timeouts included).
    pub(crate) async fn post(&self, body: Bytes) -> Result<Answer, String> {
        let headers = self.headers.clone()?;
        let mut req = http::Request::new(Full::new(body));
        *req.method_mut() = Method::POST;
        *req.uri_mut() = self.uri.clone();
        *req.headers_mut() = headers;
        let exchange = async {
            let res = self.client.request(req).await.map_err(|e| describe(&e))?;
            let (parts, body) = res.into_parts();
            let body = body.collect().await.map_err(|e| describe(&e))?.to_bytes();
            let reason = parts
                .extensions
                .get::<hyper::ext::ReasonPhrase>()
                .map(|r| String::from_utf8_lossy(r.as_bytes()).into_owned());
            Ok(Answer {
                status: parts.status,
                reason,
                body,
            })
        };
        tokio::time::timeout(self.timeout, exchange)
            .await
            .unwrap_or_else(|_| Err("request timeout".to_owned()))
    }
}

/// The URL as hyper takes it: credentials go in `Authorization`, not in the URI.
fn without_credentials(url: &Url) -> Uri {
    let mut url = url.clone();
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url.as_str()
        .parse()
        .expect("a parsed http(s) URL is a valid URI")
}

/// The request headers, or the error every request reports when one is invalid.
fn header_map(url: &Url, user: &[(String, String)], user_agent: &str) -> Result<HeaderMap, String> {
    let mut map = HeaderMap::with_capacity(user.len() + 3);
    for (k, v) in user {
        let name = HeaderName::from_bytes(k.as_bytes())
            .map_err(|_| format!("net/http: invalid header field name {k:?}"))?;
        let value = HeaderValue::from_str(v)
            .map_err(|_| format!("net/http: invalid header field value for {k:?}"))?;
        map.append(name, value);
    }
    if !map.contains_key(http::header::USER_AGENT) {
        map.insert(
            http::header::USER_AGENT,
            HeaderValue::from_str(user_agent).expect("the agent is ASCII"),
        );
    }
    if !map.contains_key(http::header::AUTHORIZATION) && !url.username().is_empty() {
        let decode = |s: &str| percent_decode_str(s).decode_utf8_lossy().into_owned();
        let user = decode(url.username());
        let pass = url.password().map(decode).unwrap_or_default();
        let token = base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            format!("{user}:{pass}"),
        );
        let value = HeaderValue::from_str(&format!("Basic {token}"))
            .map_err(|_| "net/http: invalid header field value for \"Authorization\"".to_owned())?;
        map.insert(http::header::AUTHORIZATION, value);
    }
    // As Go's client with keep-alives off; HTTP/2 drops the header.
    map.insert(http::header::CONNECTION, HeaderValue::from_static("close"));
    Ok(map)
}

/// rustls with the ring provider, `roots` (when `None`: the bundled roots plus what
/// `SSL_CERT_FILE` and `SSL_CERT_DIR` name, as the k6/http client trusts) or none checked,
/// ALPN h2 and http/1.1.
pub(crate) fn tls_config(
    insecure_skip_tls_verify: bool,
    roots: Option<TrustedCerts>,
    minimum: TlsMinimum,
) -> rustls::ClientConfig {
    // hyper-rustls sets ALPN (h2, http/1.1) itself from `enable_all_versions`.
    tls_builder(insecure_skip_tls_verify, roots, minimum).with_no_client_auth()
}

/// [`tls_config`] before the choice of a client certificate.
pub(crate) fn tls_builder(
    insecure_skip_tls_verify: bool,
    roots: Option<TrustedCerts>,
    minimum: TlsMinimum,
) -> rustls::ConfigBuilder<rustls::ClientConfig, rustls::client::WantsClientCert> {
    let provider = Arc::new(ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(minimum.versions())
        .expect("ring supports TLS 1.2 and 1.3");
    if insecure_skip_tls_verify {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(rk6_http::AcceptAnyCert(
                provider.signature_verification_algorithms,
            )))
    } else {
        let roots = roots.unwrap_or_else(|| {
            let mut trusted = TrustedCerts::bundled();
            for pem in rk6_http::trust::go_env_roots(|k| std::env::var(k).ok()) {
                trusted.add_pem(&pem);
            }
            trusted
        });
        // rk6-http's verifier: Go's checks, so a trusted self-signed certificate works.
        builder
            .dangerous()
            .with_custom_certificate_verifier(roots.verifier(&provider))
    }
}

/// The text of a failed push, worded as rk6's client words `res.error` (`dial: connection
/// refused`, `lookup: no such host`, `x509: unknown authority`, ...); otherwise the error
/// chain joined by `: `.
pub(crate) fn describe(err: &(dyn StdError + 'static)) -> String {
    let mut dns = false;
    let mut connecting = false;
    let mut chain = Vec::new();
    let mut next = Some(err);
    while let Some(e) = next {
        let text = e.to_string();
        dns |= text == "dns error";
        connecting |= text == "tcp connect error";
        if let Some(h) = e.downcast_ref::<hyper::Error>() {
            if h.is_incomplete_message() {
                return "EOF".to_owned();
            }
        }
        if let Some(io) = e.downcast_ref::<io::Error>() {
            return from_io(io, dns, connecting);
        }
        chain.push(text);
        next = e.source();
    }
    chain.join(": ")
}

fn from_io(e: &io::Error, dns: bool, connecting: bool) -> String {
    // The connector may wrap tokio-rustls' I/O error in another one.
    let mut inner: Option<&(dyn StdError + 'static)> = e.get_ref().map(|i| i as _);
    while let Some(i) = inner {
        if let Some(tls) = i.downcast_ref::<rustls::Error>() {
            return from_rustls(tls);
        }
        inner = match i.downcast_ref::<io::Error>() {
            Some(io) => io.get_ref().map(|i| i as _),
            None => i.source(),
        };
    }
    if dns {
        let text = e.to_string();
        let lower = text.to_ascii_lowercase();
        // getaddrinfo's EAI_NONAME / EAI_NODATA texts; anything else is a generic failure.
        return if lower.contains("not known")
            || lower.contains("no address associated")
            || lower.contains("no such host")
        {
            "lookup: no such host".to_owned()
        } else {
            format!("lookup: {text}")
        };
    }
    match e.kind() {
        io::ErrorKind::ConnectionRefused => "dial: connection refused".to_owned(),
        io::ErrorKind::TimedOut if connecting => "dial: i/o timeout".to_owned(),
        _ if connecting => format!("dial: {e}"),
        io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted => {
            "read: connection reset by peer".to_owned()
        }
        io::ErrorKind::BrokenPipe => "write: broken pipe".to_owned(),
        io::ErrorKind::UnexpectedEof => "unexpected EOF".to_owned(),
        _ => format!("read: {e}"),
    }
}

fn from_rustls(e: &rustls::Error) -> String {
    use rustls::CertificateError as C;
    match e {
        rustls::Error::InvalidCertificate(C::UnknownIssuer) => "x509: unknown authority".into(),
        // `openssl req -x509` makes self-signed certificates with CA:TRUE; webpki rejects
        // those as leaves before looking for an issuer, where Go reports an unknown authority.
        rustls::Error::InvalidCertificate(C::Other(o))
            if o.0.downcast_ref::<webpki::Error>() == Some(&webpki::Error::CaUsedAsEndEntity) =>
        {
            "x509: unknown authority".into()
        }
        rustls::Error::InvalidCertificate(
            C::NotValidForName | C::NotValidForNameContext { .. },
        ) => "x509: certificate doesn't match hostname".into(),
        rustls::Error::InvalidCertificate(
            C::Expired | C::ExpiredContext { .. } | C::NotValidYet | C::NotValidYetContext { .. },
        ) => "x509: certificate has expired or is not yet valid".into(),
        rustls::Error::InvalidCertificate(C::InvalidPurpose | C::InvalidPurposeContext { .. }) => {
            "x509: certificate specifies an incompatible key usage".into()
        }
        rustls::Error::InvalidMessage(
            rustls::InvalidMessage::InvalidContentType
            | rustls::InvalidMessage::UnknownProtocolVersion,
        ) => "tls: first record does not look like a TLS handshake".into(),
        // A server below the client's minimum TLS version, in Go's words.
        rustls::Error::AlertReceived(rustls::AlertDescription::ProtocolVersion) => {
            "remote error: tls: protocol version not supported".into()
        }
        other => format!("tls: {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_in_order_with_agent_and_url_credentials() {
        let url = Url::parse("http://al%40ice:p%3Aw@127.0.0.1:9/api/v1/write").unwrap();
        let user = [
            ("X-Scope-OrgID".to_owned(), "t1".to_owned()),
            ("x-a".to_owned(), "1".to_owned()),
            ("X-A".to_owned(), "2".to_owned()),
        ];
        let map = header_map(&url, &user, "rk6/0").unwrap();
        assert_eq!(map["x-scope-orgid"], "t1");
        let a: Vec<_> = map.get_all("x-a").iter().collect();
        assert_eq!(a, ["1", "2"]);
        assert_eq!(map["user-agent"], "rk6/0");
        // base64("al@ice:p:w")
        assert_eq!(map["authorization"], "Basic YWxAaWNlOnA6dw==");
        assert_eq!(map["connection"], "close");
        assert_eq!(
            without_credentials(&url).to_string(),
            "http://127.0.0.1:9/api/v1/write"
        );

        let own = [
            ("Authorization".to_owned(), "Bearer x".to_owned()),
            ("User-Agent".to_owned(), "me".to_owned()),
        ];
        let map = header_map(&url, &own, "rk6/0").unwrap();
        assert_eq!(map["authorization"], "Bearer x");
        assert_eq!(map["user-agent"], "me");

        let bad = [("bad name".to_owned(), "v".to_owned())];
        assert_eq!(
            header_map(&url, &bad, "rk6/0").unwrap_err(),
            "net/http: invalid header field name \"bad name\""
        );
    }

    #[test]
    fn status_text_prefers_the_servers_reason() {
        let answer = |status: u16, reason: Option<&str>| Answer {
            status: StatusCode::from_u16(status).unwrap(),
            reason: reason.map(str::to_owned),
            body: Bytes::new(),
        };
        assert_eq!(answer(404, None).status_text(), "404 Not Found");
        assert_eq!(answer(400, Some("Nope")).status_text(), "400 Nope");
        assert_eq!(answer(599, None).status_text(), "599");
    }

    /// What a TLS 1.2-only server and a client of `minimum` say to each other's first
    /// flight: the server's error, then the client's on reading the answer.
    fn against_a_tls12_server(minimum: TlsMinimum) -> (rustls::Error, Option<rustls::Error>) {
        /// No certificate: the version is chosen before one is needed.
        #[derive(Debug)]
        struct NoCert;
        impl rustls::server::ResolvesServerCert for NoCert {
            fn resolve(
                &self,
                _: rustls::server::ClientHello<'_>,
            ) -> Option<Arc<rustls::sign::CertifiedKey>> {
                None
            }
        }
        let server =
            rustls::ServerConfig::builder_with_provider(Arc::new(ring::default_provider()))
                .with_protocol_versions(&[&rustls::version::TLS12])
                .unwrap()
                .with_no_client_auth()
                .with_cert_resolver(Arc::new(NoCert));
        let mut server = rustls::ServerConnection::new(Arc::new(server)).unwrap();
        let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
        let config = Arc::new(tls_config(false, None, minimum));
        let mut client = rustls::ClientConnection::new(config, name).unwrap();
        let mut wire = Vec::new();
        client.write_tls(&mut wire).unwrap();
        server.read_tls(&mut &wire[..]).unwrap();
        let server_error = server.process_new_packets().unwrap_err();
        let mut answer = Vec::new();
        while server.wants_write() {
            server.write_tls(&mut answer).unwrap();
        }
        client.read_tls(&mut &answer[..]).unwrap();
        (server_error, client.process_new_packets().err())
    }

    #[test]
    fn tls_minimum_limits_the_versions_offered() {
        assert_eq!(TlsMinimum::default(), TlsMinimum::Tls12);
        // TLS 1.2 offered: the server gets as far as looking for its certificate.
        let (server, _) = against_a_tls12_server(TlsMinimum::Tls12);
        assert!(
            !matches!(server, rustls::Error::PeerIncompatible(_)),
            "{server:?}"
        );
        // TLS 1.3 only: refused for the version, which the client reports in Go's words.
        let (server, client) = against_a_tls12_server(TlsMinimum::Tls13);
        assert!(
            matches!(server, rustls::Error::PeerIncompatible(_)),
            "{server:?}"
        );
        let client = client.expect("the server's alert");
        assert_eq!(
            from_rustls(&client),
            "remote error: tls: protocol version not supported"
        );
    }

    #[tokio::test]
    async fn refused_and_timed_out_pushes_say_why() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .unwrap()
            .port();
        let url = Url::parse(&format!("http://127.0.0.1:{port}/w")).unwrap();
        let t = Transport::new(&url, &[], "rk6/0", false, Duration::from_secs(5));
        assert_eq!(
            t.post(Bytes::new()).await.err().unwrap(),
            "dial: connection refused"
        );

        // Accepts and never answers.
        let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = Url::parse(&format!("http://{}/w", silent.local_addr().unwrap())).unwrap();
        let t = Transport::new(&url, &[], "rk6/0", false, Duration::from_millis(200));
        let hold = tokio::spawn(async move { silent.accept().await });
        assert_eq!(t.post(Bytes::new()).await.err().unwrap(), "request timeout");
        hold.abort();
    }
}
