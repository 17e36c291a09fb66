//! What [`Client::send`](crate::Client::send) returns: the final answer and one [`Hop`] per
//! request put on the wire.

use std::net::SocketAddr;

use bytes::Bytes;
use url::Url;

use crate::debug::Dump;
use crate::error::HttpError;
use crate::headers::{response_headers, script_view};
use crate::response_head::HeaderFields;
use crate::timings::Timings;

/// The outcome of [`Client::send`](crate::Client::send).
#[derive(Clone, Debug)]
pub struct Response {
    /// HTTP status; 0 when the request failed.
    pub status: u16,
    /// The server's reason phrase, when it differs from the canonical one.
    pub reason: Option<hyper::ext::ReasonPhrase>,
    /// `"HTTP/1.1"`, `"HTTP/2.0"`, `"HTTP/1.0"`, or empty on error.
    pub proto: &'static str,
    /// Response headers as received (empty on error); [`Response::header_list`] gives
    /// k6's presentation. Kept raw because most scripts never look at them.
    pub headers: HeaderFields,
    /// Decoded body (gzip/deflate/br/zstd); empty when discarded; on an error mid-body,
    /// the raw bytes read before it.
    pub body: Bytes,
    /// Final URL after redirects.
    pub url: Url,
    /// Peer address of the final hop's connection.
    pub remote_addr: Option<SocketAddr>,
    /// `"tls1.3"`, `"tls1.2"`, or empty for plain HTTP.
    pub tls_version: &'static str,
    /// k6's name of the negotiated cipher suite (`TLS_AES_128_GCM_SHA256`), or empty.
    pub tls_cipher_suite: &'static str,
    /// Transport failure, timeout or decode failure; `None` for any HTTP status.
    pub error: Option<HttpError>,
    /// k6 `error_code`: the error's code, else `1000 + status` for status >= 400, else 0.
    pub error_code: u32,
    /// Headers of the first hop's request as sent; [`Response::request_header_list`] gives
    /// k6's view of them (`res.request.headers`).
    pub request_headers: Vec<(http::HeaderName, http::HeaderValue)>,
    /// The request's headers as the script gave them (they decide that view).
    pub script_headers: Vec<(String, String)>,
    /// The redirect limit stopped the chain; this is the last 3xx (k6 logs a warning).
    pub too_many_redirects: bool,
    /// The request failed while its body was read, after the response head had arrived.
    pub failed_in_body: bool,
    /// One entry per request sent, redirect hops first, final last.
    pub hops: Vec<Hop>,
    /// `httpDebug` dumps in the order they happened; empty when it is off.
    pub debug: Vec<Dump>,
}

impl Response {
    /// First value of header `name` (case-insensitive; `None` if not valid UTF-8).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get_str(name)
    }

    /// k6 style status text, `"200 OK"`; empty on error.
    pub fn status_text(&self) -> String {
        status_text(self.status, self.reason.as_ref())
    }

    /// Response headers as k6 shows them: canonical names, repeated values joined by `", "`.
    pub fn header_list(&self) -> Vec<(String, String)> {
        response_headers(&self.headers)
    }

    /// The request headers as k6 shows them to the script, canonical names.
    pub fn request_header_list(&self) -> Vec<(String, String)> {
        script_view(&self.request_headers, &self.script_headers)
    }

    /// Raw `Set-Cookie` values of the final response (joining them loses information).
    pub fn set_cookies(&self) -> impl Iterator<Item = String> + '_ {
        self.headers
            .get_all("set-cookie")
            .map(|v| String::from_utf8_lossy(v).into_owned())
    }

    /// Timings of the final hop (what k6 exposes as `res.timings`).
    pub fn timings(&self) -> Timings {
        self.hops.last().map(|h| h.timings).unwrap_or_default()
    }
}

/// Go's `Response.Status`: the code and the server's reason phrase (the canonical one when
/// the server's is the same or absent, e.g. on HTTP/2); empty for status 0.
pub fn status_text(status: u16, reason: Option<&hyper::ext::ReasonPhrase>) -> String {
    if status == 0 {
        return String::new();
    }
    let reason = match reason {
        Some(r) => String::from_utf8_lossy(r.as_bytes()),
        None => http::StatusCode::from_u16(status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or_default()
            .into(),
    };
    // Not `format!`: it cost ~600 instructions per response (design 002).
    let mut buf = itoa::Buffer::new();
    let digits = buf.format(status);
    let mut text = String::with_capacity(digits.len() + 1 + reason.len());
    text.push_str(digits);
    if !reason.is_empty() {
        text.push(' ');
        text.push_str(&reason);
    }
    text
}

/// One request on the wire, for per-hop metric samples.
#[derive(Clone, Debug)]
pub struct Hop {
    /// Method sent.
    pub method: http::Method,
    /// URL requested.
    pub url: Url,
    /// Status received; 0 if none.
    pub status: u16,
    /// Protocol of the response (empty if none).
    pub proto: &'static str,
    /// Phase durations.
    pub timings: Timings,
    /// Wire bytes written (incl. TLS handshake for a new connection).
    pub bytes_sent: u64,
    /// Wire bytes read, headers included.
    pub bytes_received: u64,
    /// k6 error code; `1000 + status` for status >= 400; 0 = none.
    pub error_code: u32,
    /// Error message if the hop failed.
    pub error: Option<String>,
    /// TLS version of the connection.
    pub tls_version: &'static str,
    /// New TCP connections this hop opened (0 on a reused or shared one; a stale pooled
    /// connection's replay opens one).
    pub conns_opened: u32,
}

#[cfg(test)]
mod tests {
    use super::status_text;

    #[test]
    fn status_text_is_the_code_and_the_reason() {
        let reason = |r: &'static str| hyper::ext::ReasonPhrase::from_static(r.as_bytes());
        assert_eq!(status_text(200, None), "200 OK");
        assert_eq!(status_text(404, Some(&reason("Nope"))), "404 Nope");
        assert_eq!(status_text(599, None), "599");
        assert_eq!(status_text(0, None), "");
        assert_eq!(status_text(204, Some(&reason(""))), "204");
    }
}
