//! `auth: "digest"` (and basic, and the refused ntlm), the `compression` param and
//! `httpDebug`, end to end through the rk6 binary against a recording HTTP/1.1 server.

use std::collections::HashMap;
use std::io::Read;

use serde_json::Value;

use crate::support::recorder::{Recorder, Reply, Seen};
use crate::{count, metric, run_export, Dir};

/// A recording server on 127.0.0.1: `/digest/...` requires Digest auth (MD5, qop auth)
/// for user `u@x`, password `p:w`, realm `r`; every other path answers 200 `ok`.
fn start_recorder() -> Recorder {
    Recorder::start(|seen| {
        if seen.target.starts_with("/digest/") && !digest_ok(seen) {
            Reply::new(401, "text/plain", "denied").header(
                "www-authenticate",
                format!("Digest realm=\"{REALM}\", nonce=\"{NONCE}\", opaque=\"op\", qop=\"auth\", algorithm=MD5"),
            )
        } else {
            Reply::new(200, "text/plain", "ok")
        }
    })
}

const REALM: &str = "r";
const NONCE: &str = "n0nce";

/// The parameters of an `Authorization: Digest ...` header.
fn digest_params(value: &str) -> Option<HashMap<String, String>> {
    let rest = value.strip_prefix("Digest ")?;
    let mut out = HashMap::new();
    for part in rest.split(", ") {
        let (k, v) = part.split_once('=')?;
        out.insert(k.trim().to_owned(), v.trim_matches('"').to_owned());
    }
    Some(out)
}

/// Checks the answer as RFC 2617 defines it for MD5 and qop `auth`.
fn digest_ok(req: &Seen) -> bool {
    let Some(p) = digest_params(req.header("authorization")) else {
        return false;
    };
    let h = |s: String| {
        use md5_digest::Digest as _;
        format!("{:x}", md5_digest::Md5::digest(s))
    };
    let get = |k: &str| p.get(k).cloned().unwrap_or_default();
    let ha1 = h(format!("{}:{REALM}:p:w", get("username")));
    let ha2 = h(format!("{}:{}", req.method, req.target));
    let expected = h(format!(
        "{ha1}:{NONCE}:{}:{}:{}:{ha2}",
        get("nc"),
        get("cnonce"),
        get("qop")
    ));
    get("username") == "u@x" && get("uri") == req.target && get("response") == expected
}

/// The `Point` lines of a JSON output file for `metric`.
fn points(dir: &Dir, file: &str, metric: &str) -> Vec<Value> {
    std::fs::read_to_string(dir.path(file))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["type"] == "Point" && l["metric"] == metric)
        .collect()
}

#[test]
fn digest_auth_answers_the_challenge_and_counts_both_requests_like_k6() {
    let srv = start_recorder();
    let dir = Dir::new("digest-auth");
    let script = format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
export const options = {{ iterations: 1 }};
const HOST = '{addr}';
export default function () {{
  const ok = http.get(`http://u%40x:p%3Aw@${{HOST}}/digest/a?q=1`, {{ auth: 'digest', tags: {{ case: 'ok' }} }});
  const wrong = http.get(`http://u%40x:nope@${{HOST}}/digest/a`, {{ auth: 'digest', tags: {{ case: 'wrong' }} }});
  const free = http.get(`http://u:p@${{HOST}}/open`, {{ auth: 'digest', tags: {{ case: 'free' }} }});
  const basic = http.get(`http://u:p@${{HOST}}/basic`, {{ auth: 'basic', tags: {{ case: 'basic' }} }});
  let ntlm = '';
  try {{ http.get(`http://u:p@${{HOST}}/ntlm`, {{ auth: 'ntlm' }}); }} catch (e) {{ ntlm = String(e); }}
  check(null, {{
    'digest passes': () => ok.status === 200 && ok.body === 'ok',
    'digest url has no credentials': () => ok.url === `http://${{HOST}}/digest/a?q=1`,
    'request headers are the script view': () => ok.request.headers['Authorization'] === undefined && ok.request.headers['Host'] === undefined && ok.request.headers['User-Agent'] !== undefined,
    'wrong password ends on the second 401': () => wrong.status === 401 && wrong.body === 'denied',
    'no challenge, one request': () => free.status === 200,
    'basic keeps its url': () => basic.status === 200 && basic.url === `http://u:p@${{HOST}}/basic`,
    'ntlm is refused loudly': () => ntlm.includes('ntlm') && ntlm.includes('not supported'),
  }});
}}
"#,
        addr = srv.addr
    );
    let (run, export) = run_export(&dir, &script, &["-o", "json=out.json"]);
    run.assert_code(0);
    assert_eq!(
        metric(&export, "checks")["fails"].as_f64(),
        Some(0.0),
        "{}",
        run.stderr
    );
    // ok: 401 + 200, wrong: 401 + 401, free: 200, basic: 200; ntlm never sent.
    assert_eq!(count(&export, "http_reqs"), 6.0);
    let reqs = points(&dir, "out.json", "http_reqs");
    let tags = |case: &str| -> Vec<(String, String, String)> {
        reqs.iter()
            .map(|p| &p["data"]["tags"])
            .filter(|t| t["case"] == case)
            .map(|t| {
                (
                    t["status"].as_str().unwrap().to_owned(),
                    t["expected_response"].as_str().unwrap().to_owned(),
                    t["url"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    let url = |path: &str| format!("http://{}{path}", srv.addr);
    // The challenge is the expected first answer; a 401 after it is a failure.
    assert_eq!(
        tags("ok"),
        [
            ("401".into(), "true".into(), url("/digest/a?q=1")),
            ("200".into(), "true".into(), url("/digest/a?q=1"))
        ]
    );
    assert_eq!(
        tags("wrong"),
        [
            ("401".into(), "true".into(), url("/digest/a")),
            ("401".into(), "false".into(), url("/digest/a"))
        ]
    );
    // k6 expects a 401 first even when the server asks for nothing.
    assert_eq!(tags("free"), [("200".into(), "false".into(), url("/open"))]);
    assert_eq!(
        tags("basic"),
        [(
            "200".into(),
            "true".into(),
            format!("http://****:****@{}/basic", srv.addr)
        )]
    );
    assert_eq!(
        metric(&export, "http_req_failed")["passes"].as_f64(),
        Some(2.0)
    );

    let seen = srv.seen();
    assert_eq!(seen.len(), 6, "{seen:?}");
    let auth = |i: usize| seen[i].header("authorization").to_owned();
    // Like k6 (Go adds it), the unanswered first request carries the URL's Basic credentials.
    assert_eq!(auth(0), "Basic dUB4OnA6dw==");
    let answer = digest_params(&auth(1)).expect("a Digest answer");
    assert_eq!(answer["username"], "u@x");
    assert_eq!(answer["uri"], "/digest/a?q=1");
    assert_eq!(answer["nc"], "00000001");
    assert_eq!(answer["opaque"], "op");
    assert_eq!(auth(5), "Basic dTpw");
    assert!(seen.iter().all(|s| s.target != "/ntlm"));
}

#[test]
fn compression_param_compresses_the_body_and_sets_its_headers() {
    let srv = start_recorder();
    let dir = Dir::new("compression");
    let script = format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
export const options = {{ iterations: 1 }};
const BASE = 'http://{addr}';
const TEXT = 'compress me '.repeat(50);
export default function () {{
  for (const c of ['gzip', 'deflate', 'br', 'zstd', 'gzip, br', ' deflate,zstd ']) {{
    const r = http.post(`${{BASE}}/c?alg=${{encodeURIComponent(c)}}`, TEXT, {{ compression: c }});
    check(r, {{ 'sent': (r) => r.status === 200, 'script sees its own body': (r) => r.request.body === TEXT }});
  }}
  http.post(`${{BASE}}/form`, {{ a: '1', b: 'x y' }}, {{ compression: 'gzip' }});
  http.get(`${{BASE}}/nobody`, {{ compression: 'gzip' }});
  http.post(`${{BASE}}/none`, TEXT, {{ compression: '' }});
  const bad = http.post(`${{BASE}}/bad`, TEXT, {{ compression: 'gzip, lzma' }});
  check(bad, {{
    'unknown algorithm is k6 error': (r) => r.status === 0 && r.url === '' && r.error === 'unknown compression algorithm lzma, supported algorithms are [gzip deflate zstd br]',
  }});
}}
"#,
        addr = srv.addr
    );
    let (run, export) = run_export(&dir, &script, &[]);
    run.assert_code(0);
    assert_eq!(
        metric(&export, "checks")["fails"].as_f64(),
        Some(0.0),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("unknown compression algorithm lzma"),
        "{}",
        run.stderr
    );
    // The failed request was never sent and is not counted.
    assert_eq!(count(&export, "http_reqs"), 9.0);
    let text = "compress me ".repeat(50);
    let seen = srv.seen();
    assert_eq!(seen.len(), 9);
    for s in &seen[..6] {
        let enc = s.header("content-encoding").to_owned();
        assert_eq!(s.header("content-length"), s.body.len().to_string());
        assert!(s.body.len() < text.len(), "{enc}: not compressed");
        let decoded = enc
            .rsplit(", ")
            .fold(s.body.clone(), |b, alg| decode(alg, &b));
        assert_eq!(String::from_utf8(decoded).unwrap(), text, "{enc}");
    }
    let encodings: Vec<&str> = seen[..6]
        .iter()
        .map(|s| s.header("content-encoding"))
        .collect();
    assert_eq!(
        encodings,
        ["gzip", "deflate", "br", "zstd", "gzip, br", "deflate, zstd"]
    );
    assert_eq!(seen[6].header("content-encoding"), "gzip");
    assert_eq!(
        seen[6].header("content-type"),
        "application/x-www-form-urlencoded"
    );
    assert_eq!(decode("gzip", &seen[6].body), b"a=1&b=x+y");
    // No body, or no algorithm: nothing to compress.
    assert!(seen[7].header("content-encoding").is_empty());
    assert!(seen[8].header("content-encoding").is_empty());
    assert_eq!(seen[8].body, text.as_bytes());
}

fn decode(alg: &str, data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    match alg {
        "gzip" => {
            flate2::read::GzDecoder::new(data)
                .read_to_end(&mut out)
                .unwrap();
        }
        "deflate" => {
            flate2::read::ZlibDecoder::new(data)
                .read_to_end(&mut out)
                .unwrap();
        }
        "br" => brotli::BrotliDecompress(&mut &data[..], &mut out).unwrap(),
        "zstd" => out = zstd::decode_all(data).unwrap(),
        other => panic!("unexpected encoding {other}"),
    }
    out
}

/// The `http-debug` log lines of a run.
fn debug_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("source=http-debug"))
        .collect()
}

/// The value of `key=` in a logfmt line (unquoted values only).
fn field<'a>(line: &'a str, key: &str) -> &'a str {
    let start = line.find(&format!(" {key}=")).unwrap() + key.len() + 2;
    line[start..].split(' ').next().unwrap()
}

#[test]
fn http_debug_dumps_requests_and_responses_like_k6() {
    let srv = start_recorder();
    let dir = Dir::new("http-debug");
    let script = format!(
        r#"
import http from 'k6/http';
export const options = {{ iterations: 1 }};
export default function () {{
  http.post('http://{addr}/echo', 'hello=1', {{ headers: {{ 'X-B': 'b', 'Accept': 'a' }} }});
  http.get('http://127.0.0.1:1/refused');
}}
"#,
        addr = srv.addr
    );
    let path = dir.write("script.js", &script);
    let script_arg = path.to_str().unwrap();
    let full = crate::rk6(
        &[
            "run",
            "-q",
            "--address",
            "",
            "--http-debug=full",
            script_arg,
        ],
        &dir.0,
    );
    full.assert_code(0);
    let lines = debug_lines(&full.stderr);
    assert_eq!(lines.len(), 3, "{}", full.stderr);
    let request = format!(
        "msg=\"Request:\\nPOST /echo HTTP/1.1\\nHost: {}\\nUser-Agent: rk6/",
        srv.addr
    );
    assert!(lines[0].contains(&request), "{}", lines[0]);
    assert!(
        lines[0].contains("\\nContent-Length: 7\\nAccept: a\\nX-B: b\\n\\nhello=1\\n\""),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains(
            "msg=\"Response:\\nHTTP/1.1 200 OK\\nContent-Length: 2\\nContent-Type: text/plain\\n\\nok\\n\""
        ),
        "{}",
        lines[1]
    );
    for l in &lines {
        assert!(l.contains("level=info"), "{l}");
        assert_eq!(field(l, "group"), "");
        assert_eq!(field(l, "iter"), "0");
        assert_eq!(field(l, "scenario"), "default");
        assert_eq!(field(l, "vu"), "1");
    }
    // A request and its response share an id; the next request has its own.
    assert_eq!(field(lines[0], "request_id"), field(lines[1], "request_id"));
    assert_ne!(field(lines[0], "request_id"), field(lines[2], "request_id"));
    assert_eq!(field(lines[0], "request_id").len(), 36);
    // A refused connection still shows the request, then the failure.
    assert!(lines[2].contains("GET /refused HTTP/1.1\\nHost: 127.0.0.1:1\\n"));
    let failed = full.stderr.find("Request Failed").unwrap();
    assert!(full.stderr.find(lines[2]).unwrap() < failed);

    // Any other value (here from the script's options) dumps heads only.
    let headers_only = script.replace("iterations: 1 }", "iterations: 1, httpDebug: 'headers' }");
    let path = dir.write("headers.js", &headers_only);
    let heads = crate::rk6(
        &["run", "-q", "--address", "", path.to_str().unwrap()],
        &dir.0,
    );
    heads.assert_code(0);
    let lines = debug_lines(&heads.stderr);
    assert_eq!(lines.len(), 3, "{}", heads.stderr);
    assert!(lines[0].contains("X-B: b\\n\\n\\n\""), "{}", lines[0]);
    assert!(lines[1].ends_with(" vu=1") && lines[1].contains("text/plain\\n\\n\\n\""));

    // And none without the option.
    let quiet = crate::rk6(&["run", "-q", "--address", "", script_arg], &dir.0);
    assert!(debug_lines(&quiet.stderr).is_empty(), "{}", quiet.stderr);
}
