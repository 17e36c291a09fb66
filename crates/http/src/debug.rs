//! `httpDebug`: text dumps of every request and response on the wire, laid out as k6 prints
//! them (request line or status line, headers, a blank line, then the body when `full`).

use http::header::HeaderMap;

use crate::headers::{build_request, canonical, HeaderInputs, OutRequest};
use crate::redirect::HopRequest;

/// How much of each hop `httpDebug` dumps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HttpDebug {
    /// No dumps (the default).
    #[default]
    Off,
    /// Request and response heads.
    Headers,
    /// Heads and bodies (`httpDebug: "full"`); bodies as received, before decompression.
    Full,
}

/// One dump, for the caller to log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dump {
    /// Index into [`crate::Response::hops`] of the hop it belongs to (a request and its
    /// response share it).
    pub hop: usize,
    /// `Request:\n...` or `Response:\n...`; bodies as they are, so maybe not UTF-8.
    pub text: Vec<u8>,
}

/// The dump of the request `hop` is about to send (built as for HTTP/1.1, as k6 shows even
/// HTTP/2 requests); `None` if the request cannot be built (sending it fails the same way).
pub(crate) fn request_dump(
    hop: &HopRequest,
    inputs: HeaderInputs<'_>,
    level: HttpDebug,
) -> Option<Vec<u8>> {
    let req = build_request(hop, false, inputs).ok()?;
    Some(request(&req, level))
}

/// The dump of a request as HTTP/1.1 text: Host, User-Agent and Content-Length first, the
/// other headers sorted by name (as Go writes a request).
fn request(req: &OutRequest<'_>, level: HttpDebug) -> Vec<u8> {
    let mut out = format!("Request:\n{} {} HTTP/1.1\n", req.method, req.target);
    let first = ["host", "user-agent", "content-length"];
    for name in first {
        for (_, v) in req.headers.iter().filter(|(k, _)| k == name) {
            line(&mut out, name, v.as_bytes());
        }
    }
    let map: HeaderMap = req.headers.iter().cloned().collect();
    sorted(&mut out, &map, &first);
    finish(out, req.body, level)
}

/// The dump of a response: status line, `Connection: close` and the framing header first,
/// then the other headers sorted by name (as Go writes a response).
pub(crate) fn response(
    proto: &str,
    status: &str,
    headers: &HeaderMap,
    closes: bool,
    body: &[u8],
    level: HttpDebug,
) -> Vec<u8> {
    let mut out = format!("Response:\n{proto} {status}\n");
    if closes {
        out.push_str("Connection: close\n");
    }
    let framing = ["content-length", "transfer-encoding"];
    for name in framing {
        for v in headers.get_all(name) {
            line(&mut out, name, v.as_bytes());
        }
    }
    let mut skip = framing.to_vec();
    if closes {
        skip.push("connection");
    }
    sorted(&mut out, headers, &skip);
    finish(out, body, level)
}

fn line(out: &mut String, name: &str, value: &[u8]) {
    out.push_str(&canonical(name));
    out.push_str(": ");
    out.push_str(&String::from_utf8_lossy(value));
    out.push('\n');
}

/// Every header not in `skip`, by canonical name, values in order.
fn sorted(out: &mut String, headers: &HeaderMap, skip: &[&str]) {
    let mut names: Vec<(String, &http::HeaderName)> = headers
        .keys()
        .filter(|k| !skip.contains(&k.as_str()))
        .map(|k| (canonical(k.as_str()), k))
        .collect();
    names.sort_by(|a, b| a.0.cmp(&b.0));
    for (canon, key) in names {
        for v in headers.get_all(key) {
            out.push_str(&canon);
            out.push_str(": ");
            out.push_str(&String::from_utf8_lossy(v.as_bytes()));
            out.push('\n');
        }
    }
}

/// The blank line ending the head, the body when dumping in full, and a last newline.
fn finish(head: String, body: &[u8], level: HttpDebug) -> Vec<u8> {
    let mut out = head.into_bytes();
    out.push(b'\n');
    if level == HttpDebug::Full {
        out.extend_from_slice(body);
    }
    out.push(b'\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn text(v: Vec<u8>) -> String {
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn full_dumps_keep_body_bytes_as_they_are() {
        let out = response(
            "HTTP/1.1",
            "200 OK",
            &HeaderMap::new(),
            false,
            b"\x1f\x8b",
            HttpDebug::Full,
        );
        assert!(out.ends_with(b"\n\n\x1f\x8b\n"));
    }

    #[test]
    fn request_layout_puts_host_agent_length_first_then_sorted() {
        let pair = |k: &'static str, v: &'static str| {
            (
                http::HeaderName::from_static(k),
                HeaderValue::from_static(v),
            )
        };
        let body = bytes::Bytes::from_static(b"hello=1");
        let req = OutRequest {
            method: &http::Method::POST,
            target: "/p?q=1".into(),
            headers: vec![
                pair("x-b", "2"),
                pair("content-length", "7"),
                pair("accept", "*/*"),
                pair("user-agent", "ua"),
                pair("host", "h.test:8080"),
            ],
            body: &body,
        };
        assert_eq!(
            text(request(&req, HttpDebug::Full)),
            "Request:\nPOST /p?q=1 HTTP/1.1\nHost: h.test:8080\nUser-Agent: ua\nContent-Length: 7\nAccept: */*\nX-B: 2\n\nhello=1\n"
        );
        assert_eq!(
            text(request(&req, HttpDebug::Headers)),
            "Request:\nPOST /p?q=1 HTTP/1.1\nHost: h.test:8080\nUser-Agent: ua\nContent-Length: 7\nAccept: */*\nX-B: 2\n\n\n"
        );
    }

    #[test]
    fn response_layout_leads_with_close_and_length() {
        let mut h = HeaderMap::new();
        h.insert("server", HeaderValue::from_static("s"));
        h.insert("connection", HeaderValue::from_static("close"));
        h.insert("content-length", HeaderValue::from_static("2"));
        h.append("set-cookie", HeaderValue::from_static("a=1"));
        h.append("set-cookie", HeaderValue::from_static("b=2"));
        h.insert("content-type", HeaderValue::from_static("text/plain"));
        assert_eq!(
            text(response("HTTP/1.1", "200 OK", &h, true, b"ok", HttpDebug::Full)),
            "Response:\nHTTP/1.1 200 OK\nConnection: close\nContent-Length: 2\nContent-Type: text/plain\nServer: s\nSet-Cookie: a=1\nSet-Cookie: b=2\n\nok\n"
        );
        assert_eq!(
            text(response(
                "HTTP/1.1",
                "204 No Content",
                &HeaderMap::new(),
                false,
                b"",
                HttpDebug::Headers
            )),
            "Response:\nHTTP/1.1 204 No Content\n\n\n"
        );
    }
}
