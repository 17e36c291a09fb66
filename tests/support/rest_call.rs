//! One raw HTTP/1.1 request to rk6's or k6's REST API, as the operator's clients send it:
//! exactly the headers given, `Connection: close`, and the answer read to its end.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// The answer: status code (0 when unreadable), head as received, body.
pub fn rest_call(
    address: &str,
    method: &str,
    path: &str,
    content_type: Option<&str>,
    body: Option<&str>,
) -> (u16, String, String) {
    let mut s = TcpStream::connect(address).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let body = body.unwrap_or("");
    let content_type = content_type
        .map(|t| format!("Content-Type: {t}\r\n"))
        .unwrap_or_default();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\n{content_type}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let code = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (code, head.to_string(), body.to_string())
}
