//! k6 error codes and the mapping from transport failures to them.
//!
//! The numbers and their ranges follow k6's documented error-code table; the messages
//! imitate what k6 shows in `res.error` (short, Go-flavoured, e.g. `dial: connection refused`).

use std::error::Error as StdError;
use std::fmt;
use std::io;

/// Generic failure with no better classification.
pub const GENERIC: u32 = 1000;
/// The URL could not be used (parse failure, unsupported scheme, no host).
pub const INVALID_URL: u32 = 1020;
/// The request did not complete within its timeout.
pub const REQUEST_TIMEOUT: u32 = 1050;
/// Generic DNS failure.
pub const DNS_GENERIC: u32 = 1100;
/// The name does not resolve.
pub const DNS_NO_SUCH_HOST: u32 = 1101;
/// The address is in a `blacklistIPs` range.
pub const BLACKLISTED_IP: u32 = 1110;
/// The name matches a `blockHostnames` pattern.
pub const BLOCKED_HOSTNAME: u32 = 1111;
/// Generic TCP failure.
pub const TCP_GENERIC: u32 = 1200;
/// Writing to a socket the peer already closed.
pub const TCP_BROKEN_PIPE: u32 = 1201;
/// Generic dial failure.
pub const TCP_DIAL: u32 = 1210;
/// The TCP connect timed out at the OS level.
pub const TCP_DIAL_TIMEOUT: u32 = 1211;
/// Nobody listens on the port.
pub const TCP_DIAL_REFUSED: u32 = 1212;
/// The peer reset the connection.
pub const TCP_RESET_BY_PEER: u32 = 1220;
/// Generic TLS failure.
pub const TLS_GENERIC: u32 = 1300;
/// The server did not answer with TLS (e.g. plain HTTP on an `https` URL).
pub const TLS_HEADER: u32 = 1301;
/// The certificate chain does not lead to a trusted root.
pub const TLS_UNKNOWN_AUTHORITY: u32 = 1310;
/// The certificate is not valid for the requested host name.
pub const TLS_HOSTNAME_MISMATCH: u32 = 1311;
/// Generic HTTP/2 failure.
pub const HTTP2_GENERIC: u32 = 1600;
/// HTTP/2 GOAWAY received (1611.. add the HTTP/2 error code + 1).
pub const HTTP2_GOAWAY: u32 = 1610;
/// HTTP/2 stream error (1631.. add the HTTP/2 error code + 1).
pub const HTTP2_STREAM: u32 = 1630;
/// HTTP/2 connection error (1651.. add the HTTP/2 error code + 1).
pub const HTTP2_CONNECTION: u32 = 1650;
/// The response body could not be decompressed.
pub const DECOMPRESSION: u32 = 1701;

/// A failed request: a k6 error code and the message k6 would show in `res.error`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct HttpError {
    /// k6 error code (1000–1701).
    pub code: u32,
    /// Human-readable message, k6 style.
    pub message: String,
}

impl HttpError {
    /// Builds an error from a code and message.
    pub fn new(code: u32, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    /// The error k6 reports when the request timeout expires.
    pub fn timeout() -> Self {
        Self::new(REQUEST_TIMEOUT, "request timeout")
    }

    /// True for the request-timeout error (1050).
    pub fn is_timeout(&self) -> bool {
        self.code == REQUEST_TIMEOUT
    }

    /// True for the DNS family (11xx).
    pub fn is_dns(&self) -> bool {
        (1100..1200).contains(&self.code)
    }

    /// True for the TLS family (13xx).
    pub fn is_tls(&self) -> bool {
        (1300..1400).contains(&self.code)
    }
}

/// Which side of the exchange an I/O error happened on; only changes the message prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    Read,
    Write,
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::Read => "read",
            Side::Write => "write",
        })
    }
}

/// Maps an error from `TcpStream::connect`.
pub(crate) fn from_dial(e: &io::Error) -> HttpError {
    match e.kind() {
        io::ErrorKind::ConnectionRefused => {
            HttpError::new(TCP_DIAL_REFUSED, "dial: connection refused")
        }
        io::ErrorKind::TimedOut => HttpError::new(TCP_DIAL_TIMEOUT, "dial: i/o timeout"),
        _ => HttpError::new(TCP_DIAL, format!("dial: {e}")),
    }
}

/// Maps a failed name lookup.
/// k6 words lookup errors without the host (or resolver address), hence `_host` unused.
pub(crate) fn from_dns(_host: &str, e: &io::Error) -> HttpError {
    let text = e.to_string();
    let lower = text.to_ascii_lowercase();
    // getaddrinfo's EAI_NONAME / EAI_NODATA texts; everything else (EAI_AGAIN, …) is generic.
    if lower.contains("not known")
        || lower.contains("no address associated")
        || lower.contains("no such host")
        || lower.contains("nodename nor servname")
    {
        no_such_host()
    } else {
        HttpError::new(DNS_GENERIC, format!("lookup: {text}"))
    }
}

/// The error for a name that resolves to nothing, worded as k6 words it.
pub(crate) fn no_such_host() -> HttpError {
    HttpError::new(DNS_NO_SUCH_HOST, "lookup: no such host")
}

/// Maps a failed TLS handshake (tokio-rustls reports rustls errors wrapped in io::Error).
pub(crate) fn from_tls(host: &str, e: &io::Error) -> HttpError {
    if let Some(tls) = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
        return from_rustls(host, tls);
    }
    from_io(e, Side::Read)
}

/// k6 words certificate errors without the host name, hence `_host` unused.
fn from_rustls(_host: &str, e: &rustls::Error) -> HttpError {
    use rustls::CertificateError as C;
    match e {
        rustls::Error::InvalidCertificate(C::UnknownIssuer) => unknown_authority(),
        // A self-signed certificate that is its own CA: webpki stops at "CA used as end
        // entity" before it would find the issuer unknown, which is what Go reports.
        rustls::Error::InvalidCertificate(C::Other(o))
            if format!("{o:?}").contains("CaUsedAsEndEntity") =>
        {
            unknown_authority()
        }
        rustls::Error::InvalidCertificate(
            C::NotValidForName | C::NotValidForNameContext { .. },
        ) => HttpError::new(
            TLS_HOSTNAME_MISMATCH,
            "x509: certificate doesn't match hostname",
        ),
        rustls::Error::InvalidCertificate(
            C::Expired | C::ExpiredContext { .. } | C::NotValidYet | C::NotValidYetContext { .. },
        ) => HttpError::new(
            TLS_GENERIC,
            "x509: certificate has expired or is not yet valid",
        ),
        // The first bytes were not a TLS record at all (typically plain HTTP).
        rustls::Error::InvalidMessage(
            rustls::InvalidMessage::InvalidContentType
            | rustls::InvalidMessage::UnknownProtocolVersion,
        ) => HttpError::new(
            TLS_HEADER,
            "tls: first record does not look like a TLS handshake",
        ),
        other => HttpError::new(TLS_GENERIC, format!("tls: {other}")),
    }
}

fn unknown_authority() -> HttpError {
    HttpError::new(TLS_UNKNOWN_AUTHORITY, "x509: unknown authority")
}

/// Go's message for a response head whose status line does not parse, from the first
/// bytes of the response; `None` when the status line is fine (the fault is in a header).
///
/// Go checks, in this order: a space after the protocol, a three-digit status code, then
/// the protocol version.
pub(crate) fn malformed_status_line(head: &[u8]) -> Option<HttpError> {
    let line = head.split(|&b| b == b'\n').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line);
    let line = line.strip_suffix('\r').unwrap_or(&line);
    let err = |what: &str, token: &str| {
        Some(HttpError::new(
            GENERIC,
            format!("malformed HTTP {what} {token:?}"),
        ))
    };
    let Some((proto, status)) = line.split_once(' ') else {
        return err("response", line);
    };
    let status = status.trim_start_matches(' ');
    let code = status.split_once(' ').map_or(status, |(c, _)| c);
    if code.len() != 3 || !code.bytes().all(|b| b.is_ascii_digit()) {
        return err("status code", code);
    }
    let version_ok = proto
        .strip_prefix("HTTP/")
        .and_then(|v| v.split_once('.'))
        .is_some_and(|(a, b)| {
            !a.is_empty()
                && !b.is_empty()
                && a.bytes().all(|c| c.is_ascii_digit())
                && b.bytes().all(|c| c.is_ascii_digit())
        });
    if !version_ok {
        return err("version", proto);
    }
    None
}

/// Maps an I/O error seen while talking on an established connection.
pub(crate) fn from_io(e: &io::Error, side: Side) -> HttpError {
    if let Some(tls) = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
        return HttpError::new(TLS_GENERIC, format!("tls: {tls}"));
    }
    match e.kind() {
        io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted => HttpError::new(
            TCP_RESET_BY_PEER,
            format!("{side}: connection reset by peer"),
        ),
        io::ErrorKind::BrokenPipe => HttpError::new(TCP_BROKEN_PIPE, "write: broken pipe"),
        io::ErrorKind::UnexpectedEof => HttpError::new(GENERIC, "unexpected EOF"),
        io::ErrorKind::TimedOut => HttpError::new(TCP_GENERIC, format!("{side}: i/o timeout")),
        _ => HttpError::new(TCP_GENERIC, format!("{side}: {e}")),
    }
}

/// Maps an HTTP/2 error by its kind and RFC 9113 error code.
fn from_h2(e: &h2::Error) -> HttpError {
    if let Some(io) = e.get_io() {
        return from_io(io, Side::Read);
    }
    let Some(reason) = e.reason() else {
        return HttpError::new(HTTP2_GENERIC, format!("http2: {e}"));
    };
    let code = u32::from(reason);
    // Unknown extension codes collapse into the generic slot of each range.
    let offset = if code <= 0xd { code + 1 } else { 0 };
    let base = if e.is_go_away() {
        HTTP2_GOAWAY
    } else if e.is_reset() {
        HTTP2_STREAM
    } else {
        HTTP2_CONNECTION
    };
    HttpError::new(base + offset, format!("http2: {e}"))
}

/// Maps any hyper error by walking its source chain for the root cause.
pub(crate) fn from_hyper(e: &hyper::Error, side: Side) -> HttpError {
    let mut source: Option<&(dyn StdError + 'static)> = StdError::source(e);
    while let Some(s) = source {
        if let Some(h2e) = s.downcast_ref::<h2::Error>() {
            return from_h2(h2e);
        }
        if let Some(io) = s.downcast_ref::<io::Error>() {
            return from_io(io, side);
        }
        source = s.source();
    }
    if e.is_parse() || e.is_parse_status() {
        return HttpError::new(GENERIC, format!("malformed HTTP response: {e}"));
    }
    if e.is_incomplete_message() {
        // Go reports a server that hangs up before answering as a plain EOF.
        return HttpError::new(GENERIC, "EOF");
    }
    if e.is_timeout() {
        return HttpError::timeout();
    }
    HttpError::new(GENERIC, e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dial_refused_message() {
        let e = io::Error::from(io::ErrorKind::ConnectionRefused);
        assert_eq!(
            from_dial(&e),
            HttpError::new(1212, "dial: connection refused")
        );
    }

    #[test]
    fn reset_and_pipe() {
        assert_eq!(
            from_io(&io::ErrorKind::ConnectionReset.into(), Side::Read).code,
            1220
        );
        assert_eq!(
            from_io(&io::ErrorKind::BrokenPipe.into(), Side::Write).code,
            1201
        );
        assert_eq!(
            from_io(&io::ErrorKind::Other.into(), Side::Write).code,
            1200
        );
    }

    #[test]
    fn dns_classes() {
        let e = io::Error::other("failed to lookup address information: Name or service not known");
        assert_eq!(from_dns("x.invalid", &e).code, 1101);
        let e = io::Error::other("Temporary failure in name resolution");
        assert_eq!(from_dns("x", &e).code, 1100);
    }

    #[test]
    fn malformed_status_lines_quote_the_token_go_rejects() {
        let msg = |h: &[u8]| malformed_status_line(h).map(|e| e.message);
        assert_eq!(
            msg(b"this is not http\r\n\r\n").as_deref(),
            Some("malformed HTTP status code \"is\"")
        );
        assert_eq!(
            msg(b"garbage\r\n").as_deref(),
            Some("malformed HTTP response \"garbage\"")
        );
        assert_eq!(
            msg(b"HTTX/1.1 200 OK\r\n").as_deref(),
            Some("malformed HTTP version \"HTTX/1.1\"")
        );
        assert_eq!(msg(b"HTTP/1.1 200 OK\r\nBad Header\r\n"), None);
        assert_eq!(msg(b"HTTP/1.1 404\r\n"), None);
    }

    #[test]
    fn tls_messages_are_k6s() {
        use rustls::CertificateError as C;
        let m = |e: rustls::Error| from_rustls("h", &e);
        assert_eq!(
            m(rustls::Error::InvalidCertificate(C::UnknownIssuer)),
            HttpError::new(1310, "x509: unknown authority")
        );
        assert_eq!(
            m(rustls::Error::InvalidCertificate(C::NotValidForName)).code,
            1311
        );
        assert_eq!(
            m(rustls::Error::InvalidMessage(
                rustls::InvalidMessage::InvalidContentType
            ))
            .code,
            1301
        );
        assert_eq!(m(rustls::Error::InvalidCertificate(C::Expired)).code, 1300);
    }

    #[test]
    fn h2_codes() {
        let e = h2::Error::from(h2::Reason::PROTOCOL_ERROR);
        // A locally constructed reason is neither GOAWAY nor a reset stream.
        assert_eq!(from_h2(&e).code, HTTP2_CONNECTION + 2);
    }
}
