//! k6 error codes and the mapping from transport failures to them.
//!
//! The numbers and their ranges follow k6's documented error-code table; the messages
//! imitate what k6 shows in `res.error` (short, Go-flavoured, e.g. `dial: connection refused`).

use std::error::Error as StdError;
use std::fmt;
use std::io;

/// Generic failure with no better classification.
pub const GENERIC: u32 = 1000;
/// A network error that is not a TCP one (k6 files TLS alerts from the server here).
pub const NETWORK: u32 = 1010;
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
/// A dial failing with an errno k6 has no code for (out of file descriptors).
pub const TCP_DIAL_UNKNOWN_ERRNO: u32 = 1213;
/// The peer reset the connection.
pub const TCP_RESET_BY_PEER: u32 = 1220;
/// Generic TLS failure.
pub const TLS_GENERIC: u32 = 1300;
/// The server's first bytes are not a TLS record (plain HTTP on an https URL).
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
    /// Go's own error text where it says more than `message` (addresses, the failing
    /// check): k6 shows it in its "Request Failed" warning.
    pub detail: Option<String>,
}

impl HttpError {
    /// Builds an error from a code and message.
    pub fn new(code: u32, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            detail: None,
        }
    }

    /// The same error with Go's fuller text for the log line.
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    /// The text k6's "Request Failed" warning shows for this error (without Go's
    /// `Method "url": ` prefix).
    pub fn log_text(&self) -> &str {
        self.detail.as_deref().unwrap_or(&self.message)
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

/// Maps an error from `TcpStream::connect` to `addr`.
pub(crate) fn from_dial(addr: std::net::SocketAddr, e: &io::Error) -> HttpError {
    match e.kind() {
        io::ErrorKind::ConnectionRefused => {
            HttpError::new(TCP_DIAL_REFUSED, "dial: connection refused")
                .with_detail(format!("dial tcp {addr}: connect: connection refused"))
        }
        io::ErrorKind::TimedOut => HttpError::new(TCP_DIAL_TIMEOUT, "dial: i/o timeout")
            .with_detail(format!("dial tcp {addr}: i/o timeout")),
        // Out of file descriptors: the socket itself could not be made. k6 reports the
        // errno as one it has no code for.
        _ if matches!(e.raw_os_error(), Some(23 | 24)) => {
            let text = if e.raw_os_error() == Some(24) {
                "too many open files"
            } else {
                "too many open files in system"
            };
            let errno = e.raw_os_error().unwrap_or_default();
            HttpError::new(
                TCP_DIAL_UNKNOWN_ERRNO,
                format!("dial: unknown errno {errno} error with msg `{text}`"),
            )
            .with_detail(format!("dial tcp {addr}: socket: {text}"))
        }
        _ => HttpError::new(TCP_DIAL, format!("dial: {e}")),
    }
}

/// Adds Go's connection addresses to an I/O error seen on an established connection
/// (`read tcp 127.0.0.1:50000->127.0.0.1:8080: read: connection reset by peer`).
pub(crate) fn on_connection(
    err: HttpError,
    local: Option<std::net::SocketAddr>,
    remote: std::net::SocketAddr,
) -> HttpError {
    let side = match err.message.split_once(':') {
        Some((side @ ("read" | "write"), _)) if err.detail.is_none() => side,
        _ => return err,
    };
    let Some(local) = local else {
        return err;
    };
    let detail = format!("{side} tcp {local}->{remote}: {}", err.message);
    err.with_detail(detail)
}

/// Maps a failed name lookup.
/// k6 words lookup errors without the host; Go's text for the log line has it.
pub(crate) fn from_dns(host: &str, e: &io::Error) -> HttpError {
    let text = e.to_string();
    let lower = text.to_ascii_lowercase();
    // getaddrinfo's EAI_NONAME / EAI_NODATA texts; everything else (EAI_AGAIN, …) is generic.
    if lower.contains("not known")
        || lower.contains("no address associated")
        || lower.contains("no such host")
        || lower.contains("nodename nor servname")
    {
        no_such_host(host)
    } else {
        HttpError::new(DNS_GENERIC, format!("lookup: {text}"))
    }
}

/// The error for a name that resolves to nothing, worded as k6 words it.
pub(crate) fn no_such_host(host: &str) -> HttpError {
    HttpError::new(DNS_NO_SUCH_HOST, "lookup: no such host")
        .with_detail(format!("lookup {host}: no such host"))
}

/// Maps a failed TLS handshake (tokio-rustls reports rustls errors wrapped in io::Error).
pub(crate) fn from_tls(_host: &str, e: &io::Error) -> HttpError {
    if let Some(tls) = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
        return from_rustls(tls);
    }
    from_io(e, Side::Read)
}

/// k6 replaces Go's long verification errors with fixed texts for 1310 and 1311, and
/// reports a TLS alert from the server as a network error (1010) with Go's alert text.
fn from_rustls(e: &rustls::Error) -> HttpError {
    use rustls::CertificateError as C;
    match e {
        rustls::Error::InvalidCertificate(C::UnknownIssuer) => unknown_authority(),
        rustls::Error::InvalidCertificate(C::Other(o))
            if o.0.downcast_ref::<crate::verify::AiaIncomplete>().is_some() =>
        {
            unknown_authority().with_detail(format!(
                "tls: failed to verify certificate: x509: certificate signed by unknown authority ({})",
                crate::aia::INCOMPLETE
            ))
        }
        rustls::Error::General(text) if text == crate::aia::IP_LITERAL => HttpError::new(
            TLS_GENERIC,
            format!("tls: failed to verify certificate: {text}"),
        ),
        // `openssl req -x509` makes self-signed certificates with CA:TRUE; webpki rejects
        // those as leaves before looking for an issuer, where Go reports an unknown authority.
        rustls::Error::InvalidCertificate(C::Other(o))
            if o.0.downcast_ref::<webpki::Error>() == Some(&webpki::Error::CaUsedAsEndEntity) =>
        {
            unknown_authority()
        }
        rustls::Error::InvalidCertificate(
            C::NotValidForName | C::NotValidForNameContext { .. },
        ) => HttpError::new(
            TLS_HOSTNAME_MISMATCH,
            "x509: certificate doesn't match hostname",
        ),
        rustls::Error::InvalidCertificate(C::ExpiredContext { time, not_after }) => expired(
            format!("{} is after {}", rfc3339(*time), rfc3339(*not_after)),
        ),
        rustls::Error::InvalidCertificate(C::NotValidYetContext { time, not_before }) => expired(
            format!("{} is before {}", rfc3339(*time), rfc3339(*not_before)),
        ),
        rustls::Error::InvalidCertificate(C::Expired | C::NotValidYet) => {
            HttpError::new(GENERIC, "x509: certificate has expired or is not yet valid")
        }
        rustls::Error::InvalidCertificate(C::InvalidPurpose | C::InvalidPurposeContext { .. }) => {
            let text = "x509: certificate specifies an incompatible key usage";
            HttpError::new(GENERIC, text)
                .with_detail(format!("tls: failed to verify certificate: {text}"))
        }
        rustls::Error::InvalidMessage(
            rustls::InvalidMessage::InvalidContentType
            | rustls::InvalidMessage::UnknownProtocolVersion,
        ) => HttpError::new(
            TLS_HEADER,
            "tls: first record does not look like a TLS handshake",
        )
        // Go words it so when the first bytes are HTTP, by far the usual cause: an http
        // server on the port of an https URL.
        .with_detail("http: server gave HTTP response to HTTPS client"),
        rustls::Error::AlertReceived(alert) => HttpError::new(
            NETWORK,
            format!("remote error: tls: {}", alert_text(*alert)),
        ),
        other => HttpError::new(TLS_GENERIC, format!("tls: {other}")),
    }
}

/// k6's 1310, with Go's full text for the log line.
fn unknown_authority() -> HttpError {
    HttpError::new(TLS_UNKNOWN_AUTHORITY, "x509: unknown authority").with_detail(
        "tls: failed to verify certificate: x509: certificate signed by unknown authority",
    )
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
        let message = format!("malformed HTTP {what} {token:?}");
        let detail = format!("net/http: HTTP/1.x transport connection broken: {message}");
        Some(HttpError::new(GENERIC, message).with_detail(detail))
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

/// k6 leaves Go's validity error unclassified (1000), with Go's text.
fn expired(times: String) -> HttpError {
    HttpError::new(
        GENERIC,
        format!("x509: certificate has expired or is not yet valid: current time {times}"),
    )
}

/// `2026-11-30T09:09:56Z`, as Go prints times in certificate errors.
fn rfc3339(t: rustls::pki_types::UnixTime) -> String {
    let secs = t.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Days since 1970-01-01 to a proleptic Gregorian date (era-based civil-from-days).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3_600,
        rem % 3_600 / 60,
        rem % 60
    )
}

/// Go's wording of a TLS alert.
fn alert_text(a: rustls::AlertDescription) -> String {
    use rustls::AlertDescription as A;
    let text = match a {
        A::CloseNotify => "close notify",
        A::UnexpectedMessage => "unexpected message",
        A::BadRecordMac => "bad record MAC",
        A::DecryptionFailed => "decryption failed",
        A::RecordOverflow => "record overflow",
        A::DecompressionFailure => "decompression failure",
        A::HandshakeFailure => "handshake failure",
        A::BadCertificate => "bad certificate",
        A::UnsupportedCertificate => "unsupported certificate",
        A::CertificateRevoked => "revoked certificate",
        A::CertificateExpired => "expired certificate",
        A::CertificateUnknown => "unknown certificate",
        A::IllegalParameter => "illegal parameter",
        A::UnknownCA => "unknown certificate authority",
        A::AccessDenied => "access denied",
        A::DecodeError => "error decoding message",
        A::DecryptError => "error decrypting message",
        A::ExportRestriction => "export restriction",
        A::ProtocolVersion => "protocol version not supported",
        A::InsufficientSecurity => "insufficient security level",
        A::InternalError => "internal error",
        A::InappropriateFallback => "inappropriate fallback",
        A::UserCanceled => "user canceled",
        A::NoRenegotiation => "no renegotiation",
        A::MissingExtension => "missing extension",
        A::UnsupportedExtension => "unsupported extension",
        A::CertificateUnobtainable => "certificate unobtainable",
        A::UnrecognisedName => "unrecognized name",
        A::BadCertificateStatusResponse => "bad certificate status response",
        A::BadCertificateHashValue => "bad certificate hash value",
        A::UnknownPSKIdentity => "unknown PSK identity",
        A::CertificateRequired => "certificate required",
        A::NoApplicationProtocol => "no application protocol",
        A::EncryptedClientHelloRequired => "ECH required",
        other => return format!("alert({})", u8::from(other)),
    };
    text.to_string()
}

/// Maps an I/O error seen while talking on an established connection.
pub(crate) fn from_io(e: &io::Error, side: Side) -> HttpError {
    if let Some(tls) = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
        // TLS 1.3 servers reject a client certificate after the client's handshake is done,
        // so their alert arrives with the response.
        return from_rustls(tls);
    }
    match e.kind() {
        io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted => HttpError::new(
            TCP_RESET_BY_PEER,
            format!("{side}: connection reset by peer"),
        ),
        io::ErrorKind::BrokenPipe => HttpError::new(TCP_BROKEN_PIPE, "write: broken pipe"),
        io::ErrorKind::UnexpectedEof => HttpError::new(GENERIC, "unexpected EOF"),
        io::ErrorKind::TimedOut => HttpError::new(TCP_GENERIC, format!("{side}: i/o timeout")),
        // hyper's chunked decoder; Go's reader fails the same bodies outside the TCP codes.
        io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData => {
            HttpError::new(GENERIC, go_chunk_error(&e.to_string()))
        }
        _ => HttpError::new(TCP_GENERIC, format!("{side}: {e}")),
    }
}

/// Go's text for a chunked-encoding error hyper describes as `hyper_text`.
fn go_chunk_error(hyper_text: &str) -> String {
    let lower = hyper_text.to_ascii_lowercase();
    if lower.contains("overflow") {
        "http chunk length too large".into()
    } else if lower.contains("chunk size") {
        "invalid byte in chunk length".into()
    } else if lower.contains("chunk") {
        "malformed chunked encoding".into()
    } else {
        hyper_text.to_owned()
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
    fn dial_out_of_file_descriptors_is_k6s_unknown_errno() {
        let addr: std::net::SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let err = from_dial(addr, &io::Error::from_raw_os_error(24));
        // k6 1.1.0 under `prlimit --nofile=64` with 200 VUs.
        assert_eq!(
            (err.code, err.message.as_str()),
            (
                1213,
                "dial: unknown errno 24 error with msg `too many open files`"
            )
        );
        assert_eq!(
            err.log_text(),
            "dial tcp 127.0.0.1:8080: socket: too many open files"
        );
    }

    #[test]
    fn dial_refused_message() {
        let e = io::Error::from(io::ErrorKind::ConnectionRefused);
        let addr: std::net::SocketAddr = "127.0.0.1:1".parse().unwrap();
        let err = from_dial(addr, &e);
        assert_eq!(
            (err.code, err.message.as_str()),
            (1212, "dial: connection refused")
        );
        assert_eq!(
            err.log_text(),
            "dial tcp 127.0.0.1:1: connect: connection refused"
        );
    }

    #[test]
    fn log_texts_are_gos() {
        let e = io::Error::other("failed to lookup address information: Name or service not known");
        let dns = from_dns("x.invalid", &e);
        assert_eq!(dns.message, "lookup: no such host");
        assert_eq!(dns.log_text(), "lookup x.invalid: no such host");
        let reset = from_io(&io::ErrorKind::ConnectionReset.into(), Side::Read);
        let (local, remote) = (
            "127.0.0.1:50000".parse().unwrap(),
            "127.0.0.1:80".parse().unwrap(),
        );
        assert_eq!(
            on_connection(reset.clone(), Some(local), remote).log_text(),
            "read tcp 127.0.0.1:50000->127.0.0.1:80: read: connection reset by peer"
        );
        assert_eq!(
            on_connection(reset, None, remote).log_text(),
            "read: connection reset by peer"
        );
        // Only socket errors get addresses.
        assert_eq!(
            on_connection(HttpError::timeout(), Some(local), remote).log_text(),
            "request timeout"
        );
        let malformed = malformed_status_line(b"this is not http\r\n").unwrap();
        assert_eq!(
            malformed.log_text(),
            "net/http: HTTP/1.x transport connection broken: malformed HTTP status code \"is\""
        );
        assert_eq!(
            unknown_authority().log_text(),
            "tls: failed to verify certificate: x509: certificate signed by unknown authority"
        );
    }

    #[test]
    fn chunked_decoding_errors_are_generic_with_gos_text() {
        let e = |kind, text: &str| from_io(&io::Error::new(kind, text.to_owned()), Side::Read);
        let bad = e(
            io::ErrorKind::InvalidInput,
            "Invalid chunk size line: Invalid Size",
        );
        assert_eq!(
            (bad.code, bad.message.as_str()),
            (1000, "invalid byte in chunk length")
        );
        let big = e(io::ErrorKind::InvalidData, "invalid chunk size: overflow");
        assert_eq!(big.message, "http chunk length too large");
        let lf = e(io::ErrorKind::InvalidInput, "Invalid chunk body LF");
        assert_eq!(
            (lf.code, lf.message.as_str()),
            (1000, "malformed chunked encoding")
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
    fn tls_codes_and_texts() {
        use rustls::{AlertDescription as A, CertificateError as C, Error as E};
        let io = |e: E| io::Error::new(io::ErrorKind::InvalidData, e);
        assert_eq!(
            from_tls("h", &io(E::InvalidCertificate(C::UnknownIssuer))),
            unknown_authority()
        );
        assert_eq!(unknown_authority().message, "x509: unknown authority");
        assert_eq!(
            from_tls("h", &io(E::InvalidCertificate(C::NotValidForName))),
            HttpError::new(1311, "x509: certificate doesn't match hostname")
        );
        assert_eq!(
            from_tls("h", &io(E::AlertReceived(A::ProtocolVersion))),
            HttpError::new(1010, "remote error: tls: protocol version not supported")
        );
        assert_eq!(
            from_io(&io(E::AlertReceived(A::CertificateRequired)), Side::Read),
            HttpError::new(1010, "remote error: tls: certificate required")
        );
        let ca_leaf = rustls::OtherError(std::sync::Arc::new(webpki::Error::CaUsedAsEndEntity));
        assert_eq!(
            from_tls("h", &io(E::InvalidCertificate(C::Other(ca_leaf)))).code,
            1310
        );
        assert_eq!(
            from_tls("h", &io(E::InvalidCertificate(C::InvalidPurpose))),
            HttpError::new(1000, "x509: certificate specifies an incompatible key usage")
                .with_detail("tls: failed to verify certificate: x509: certificate specifies an incompatible key usage")
        );
        use rustls::pki_types::UnixTime;
        let at = |s| UnixTime::since_unix_epoch(std::time::Duration::from_secs(s));
        assert_eq!(
            from_tls(
                "h",
                &io(E::InvalidCertificate(C::ExpiredContext {
                    time: at(1_796_029_796),
                    not_after: at(1_795_943_395)
                }))
            ),
            HttpError::new(1000, "x509: certificate has expired or is not yet valid: current time 2026-11-30T09:09:56Z is after 2026-11-29T09:09:55Z")
        );
        assert!(from_tls(
            "h",
            &io(E::InvalidCertificate(C::NotValidYetContext {
                time: at(951_782_400),
                not_before: at(4_107_542_400)
            }))
        )
        .message
        .ends_with("current time 2000-02-29T00:00:00Z is before 2100-03-01T00:00:00Z"));
        assert_eq!(
            from_tls(
                "h",
                &io(E::InvalidMessage(
                    rustls::InvalidMessage::InvalidContentType
                ))
            ),
            HttpError::new(1301, "tls: first record does not look like a TLS handshake")
                .with_detail("http: server gave HTTP response to HTTPS client")
        );
        assert_eq!(
            from_tls("h", &io(E::InvalidCertificate(C::Revoked))).code,
            1300
        );
    }

    #[test]
    fn h2_codes() {
        let e = h2::Error::from(h2::Reason::PROTOCOL_ERROR);
        // A locally constructed reason is neither GOAWAY nor a reset stream.
        assert_eq!(from_h2(&e).code, HTTP2_CONNECTION + 2);
    }
}
