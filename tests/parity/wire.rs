//! The bytes of an HTTP/1 request head, as k6 and rk6 write them for the same script:
//! header order and the case of header names. (One known difference is left out: with
//! `noConnectionReuse` and a script's own `Connection` header, Go sends its
//! `Connection: close` last, rk6 next to the script's value.)

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use super::{k6, run_k6, run_rk6};
use crate::Dir;

/// A server that keeps each request head it reads (up to the blank line) and answers 200
/// with `Connection: close`.
fn head_recorder() -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let heads = Arc::new(Mutex::new(Vec::new()));
    let seen = heads.clone();
    // Ends with the test binary; both tools together make a handful of requests.
    std::thread::spawn(move || {
        for mut s in listener.incoming().flatten().take(64) {
            let mut head = Vec::new();
            let mut b = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") {
                match s.read(&mut b) {
                    Ok(1) => head.push(b[0]),
                    _ => break,
                }
            }
            seen.lock()
                .unwrap()
                .push(String::from_utf8_lossy(&head).into_owned());
            let _ =
                s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
        }
    });
    (port, heads)
}

#[test]
fn http1_request_heads_match_k6_byte_for_byte() {
    let Some(bin) = k6() else { return };
    let (port, heads) = head_recorder();
    let script = format!(
        r#"
import http from 'k6/http';
export const options = {{ iterations: 1, noConnectionReuse: true }};
const BASE = 'http://127.0.0.1:{port}';
export default function () {{
  http.post(`${{BASE}}/post`, 'abc', {{ headers: {{ 'x-probe': '1', 'content-type': 'text/plain', 'X-UPPER': '2', 'b-h': 'first', 'a-h': '2', 'User-Agent': 'ua/1', 'Host': 'example.test' }} }});
  http.get(`http://u:p@127.0.0.1:{port}/get`, {{ cookies: {{ c: '1' }}, headers: {{ 'zz': 'z', 'Accept': '*/*', 'User-Agent': 'ua/1' }} }});
  http.put(`${{BASE}}/empty`, null, {{ headers: {{ 'User-Agent': 'ua/1' }} }});
}}
"#
    );
    let dir = Dir::new("parity-wire");
    let path = dir.write("script.js", &script);
    let k6_run = run_k6(&bin, &path, &dir);
    let k6_heads = std::mem::take(&mut *heads.lock().unwrap());
    let rk6_run = run_rk6(&path, &dir);
    let rk6_heads = std::mem::take(&mut *heads.lock().unwrap());
    assert_eq!((k6_run.code, rk6_run.code), (0, 0));
    assert_eq!(k6_heads.len(), 3, "{k6_heads:#?}");
    assert_eq!(rk6_heads, k6_heads);
}
