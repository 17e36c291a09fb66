//! k6/http features beyond the basics: callbacks, batch, url, file uploads, cookie jars.

use serde_json::Value;

use crate::support::TestServer;
use crate::{count, metric, run_export, Dir};

/// The `Point` lines of a JSON output file.
pub(crate) fn points(dir: &Dir, file: &str) -> Vec<Value> {
    std::fs::read_to_string(dir.path(file))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["type"] == "Point")
        .collect()
}

/// Runs a script whose `checks` must all pass and returns its export.
fn run_checked(dir: &Dir, script: &str, extra: &[&str]) -> Value {
    let (run, export) = run_export(dir, script, extra);
    run.assert_code(0);
    assert_eq!(
        metric(&export, "checks")["fails"].as_f64(),
        Some(0.0),
        "failed checks\n{}\n{}",
        run.stdout,
        run.stderr
    );
    export
}

#[test]
fn response_callbacks_decide_expected_response_and_http_req_failed() {
    let srv = TestServer::start();
    let dir = Dir::new("callbacks");
    let script = format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
const BASE = 'http://{base}';
export const options = {{ iterations: 1 }};
http.setResponseCallback(http.expectedStatuses(200, {{ min: 400, max: 404 }}));
export default function () {{
  http.get(BASE + '/status/404', {{ tags: {{ name: 'vu404' }} }});
  http.get(BASE + '/status/500', {{ tags: {{ name: 'vu500' }} }});
  http.get(BASE + '/status/500', {{ tags: {{ name: 'own500' }}, responseCallback: http.expectedStatuses(500) }});
  http.get(BASE + '/status/200', {{ tags: {{ name: 'none' }}, responseCallback: null }});
  let threw = false;
  try {{ http.expectedStatuses('x'); }} catch (e) {{ threw = true; }}
  check(threw, {{ 'bad status throws': (t) => t }});
}}
"#,
        base = srv.addr
    );
    let export = run_checked(&dir, &script, &["-o", "json=out.json"]);
    assert_eq!(count(&export, "http_reqs"), 4.0);
    let failed = metric(&export, "http_req_failed");
    assert_eq!(failed["passes"].as_f64(), Some(1.0), "{failed}");
    assert_eq!(failed["fails"].as_f64(), Some(2.0), "{failed}");
    let points = points(&dir, "out.json");
    let expected = |name: &str| -> Vec<Value> {
        points
            .iter()
            .filter(|p| p["metric"] == "http_reqs" && p["data"]["tags"]["name"] == name)
            .map(|p| p["data"]["tags"]["expected_response"].clone())
            .collect()
    };
    assert_eq!(expected("vu404"), vec![Value::from("true")]);
    assert_eq!(expected("vu500"), vec![Value::from("false")]);
    assert_eq!(expected("own500"), vec![Value::from("true")]);
    assert_eq!(expected("none"), vec![Value::Null]);
}

#[test]
fn null_response_callback_disables_http_req_failed() {
    let srv = TestServer::start();
    let dir = Dir::new("nocallback");
    let script = format!(
        r#"
import http from 'k6/http';
export const options = {{ iterations: 2 }};
http.setResponseCallback(null);
export default function () {{ http.get('{}'); }}
"#,
        srv.url("/status/500")
    );
    let (run, export) = run_export(&dir, &script, &["-o", "json=out.json"]);
    run.assert_code(0);
    assert_eq!(count(&export, "http_reqs"), 2.0);
    assert!(metric(&export, "http_req_failed").is_null(), "{export}");
    let points = points(&dir, "out.json");
    assert!(points.iter().all(|p| p["metric"] != "http_req_failed"));
    assert!(points
        .iter()
        .all(|p| p["data"]["tags"]["expected_response"].is_null()));
}

#[test]
fn url_template_names_the_request_and_constants_match_k6() {
    let srv = TestServer::start();
    let dir = Dir::new("urltag");
    let script = format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
import {{ TLS_1_3, OCSP_STATUS_SERVER_FAILED }} from 'k6/http';
const BASE = 'http://{base}';
export const options = {{ iterations: 1 }};
export default function () {{
  const id = 7;
  const u = http.url`${{BASE}}/anything/x?id=${{id}}`;
  const r = http.get(u);
  check(r, {{
    'status': (r) => r.status === 200,
    'query': (r) => r.json('query.id') === '7',
  }});
  check(u, {{
    'name': (u) => u.name === '${{}}/anything/x?id=${{}}',
    'url': (u) => u.url === BASE + '/anything/x?id=7' && u.getURL() === u.url,
  }});
  http.post(u, 'x', {{ tags: {{ name: 'own' }} }});
  check(http, {{
    'tls': (h) => h.TLS_1_0 === 'tls1.0' && h.TLS_1_2 === 'tls1.2' && TLS_1_3 === 'tls1.3',
    'ocsp status': (h) => h.OCSP_STATUS_GOOD === 'good' && OCSP_STATUS_SERVER_FAILED === 'server_failed',
    'ocsp reason': (h) => h.OCSP_REASON_KEY_COMPROMISE === 'key_compromise'
      && h.OCSP_REASON_AA_COMPROMISE === 'aa_compromise',
  }});
}}
"#,
        base = srv.addr
    );
    run_checked(&dir, &script, &["-o", "json=out.json"]);
    let tags: Vec<(Value, Value)> = points(&dir, "out.json")
        .iter()
        .filter(|p| p["metric"] == "http_reqs")
        .map(|p| {
            let t = &p["data"]["tags"];
            (t["name"].clone(), t["url"].clone())
        })
        .collect();
    let template = Value::from("${}/anything/x?id=${}");
    assert_eq!(
        tags,
        vec![
            (template.clone(), template),
            (Value::from("own"), Value::from("own"))
        ]
    );
}

#[test]
fn batch_returns_responses_shaped_like_its_input() {
    let srv = TestServer::start();
    let dir = Dir::new("batch");
    let script = format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
const BASE = 'http://{base}';
export const options = {{ iterations: 1 }};
export default function () {{
  const list = http.batch([
    BASE + '/anything/a',
    ['POST', BASE + '/anything/b', 'hi', {{ headers: {{ 'X-A': '1' }} }}],
    {{ method: 'PUT', url: BASE + '/anything/c', body: {{ k: 'v' }} }},
    {{ url: BASE + '/anything/d' }},
  ]);
  check(list, {{
    'array': (l) => Array.isArray(l) && l.length === 4,
    'a': (l) => l[0].json('method') === 'GET' && l[0].json('path') === '/anything/a',
    'b': (l) => l[1].json('method') === 'POST' && l[1].json('body') === 'hi'
      && l[1].json('headers.x-a') === '1',
    'c': (l) => l[2].json('method') === 'PUT' && l[2].json('body') === 'k=v',
    'd': (l) => l[3].json('method') === 'GET',
  }});
  const obj = http.batch({{ one: BASE + '/anything/1', two: ['DELETE', BASE + '/anything/2'] }});
  check(obj, {{
    'keys': (o) => Object.keys(o).sort().join() === 'one,two',
    'one': (o) => o.one.json('path') === '/anything/1',
    'two': (o) => o.two.json('method') === 'DELETE',
  }});
}}
"#,
        base = srv.addr
    );
    let export = run_checked(&dir, &script, &[]);
    assert_eq!(count(&export, "http_reqs"), 6.0);
}

#[test]
fn file_values_make_a_multipart_body() {
    let srv = TestServer::start();
    let dir = Dir::new("multipart");
    let script = format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
export const options = {{ iterations: 1 }};
export default function () {{
  const f = http.file('hello file', 'a.txt', 'text/plain');
  const bin = http.file(new Uint8Array([104, 105]).buffer);
  check(f, {{
    'file fields': (f) => f.data === 'hello file' && f.filename === 'a.txt'
      && f.content_type === 'text/plain',
    'defaults': () => bin.content_type === 'application/octet-stream' && /^\d+$/.test(bin.filename),
  }});
  const r = http.post('{url}', {{ upload: f, field: 'value', raw: bin }});
  const body = r.json('body');
  const ct = r.json('content_type');
  const boundary = ct.split('boundary=')[1];
  check(r, {{
    'multipart type': () => ct.startsWith('multipart/form-data; boundary='),
    'field part': () => body.includes('--' + boundary + '\r\nContent-Disposition: form-data; name="field"\r\n\r\nvalue\r\n'),
    'file part': () => body.includes('Content-Disposition: form-data; name="upload"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello file\r\n'),
    'binary part': () => body.includes('Content-Type: application/octet-stream\r\n\r\nhi\r\n'),
    'property order': () => body.indexOf('name="upload"') < body.indexOf('name="field"')
      && body.indexOf('name="field"') < body.indexOf('name="raw"'),
    'boundary length': () => boundary.length === 60,
    'closing boundary': () => body.endsWith('--' + boundary + '--\r\n'),
  }});
}}
"#,
        url = srv.url("/anything")
    );
    run_checked(&dir, &script, &[]);
}

#[test]
fn cookie_jar_reads_and_edits_the_vu_jar() {
    let srv = TestServer::start();
    let dir = Dir::new("cookiejar");
    let script = format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
const BASE = 'http://{base}';
export const options = {{ iterations: 1 }};
export default function () {{
  const jar = http.cookieJar();
  http.get(BASE + '/cookies/set?server=1');
  jar.set(BASE, 'mine', 'x', {{ path: '/' }});
  check(jar.cookiesForURL(BASE + '/cookies'), {{
    'both cookies': (c) => c.server[0] === '1' && c.mine[0] === 'x',
  }});
  check(http.get(BASE + '/cookies'), {{
    'sent': (r) => r.json('cookies.mine') === 'x' && r.json('cookies.server') === '1',
  }});
  jar.delete(BASE, 'mine');
  check(jar.cookiesForURL(BASE), {{
    'deleted': (c) => c.mine === undefined && c.server[0] === '1',
  }});
  jar.clear(BASE);
  check(jar.cookiesForURL(BASE), {{ 'cleared': (c) => Object.keys(c).length === 0 }});
  check(jar.cookiesForURL('not a url'), {{ 'bad url has no cookies': (c) => Object.keys(c).length === 0 }});
}}
"#,
        base = srv.addr
    );
    run_checked(&dir, &script, &[]);
}

#[test]
fn throw_discard_bodies_min_iteration_duration_and_system_tags() {
    let srv = TestServer::start();
    let dir = Dir::new("run-options");
    let script = format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
export const options = {{
  iterations: 2, throw: true, discardResponseBodies: true, minIterationDuration: '300ms',
  systemTags: ['status', 'method', 'vu', 'iter', 'scenario'],
  thresholds: {{ 'http_reqs{{vu:1,iter:1}}': ['count==3'], 'http_reqs{{url:{get}}}': ['count==0'] }},
}};
export default function () {{
  const r = http.get('{get}');
  const text = http.get('{get}', {{ responseType: 'text' }});
  let threw = '';
  try {{ http.get('http://127.0.0.1:1/'); }} catch (e) {{ threw = String(e); }}
  check(null, {{
    'body discarded by default': () => r.status === 200 && r.body === null,
    'responseType text still reads it': () => text.body.length > 0,
    'failed request throws': () => threw.includes('connection refused'),
  }});
}}
"#,
        get = srv.url("/get")
    );
    let (run, export) = run_export(&dir, &script, &["--address", ""]);
    run.assert_code(0);
    assert_eq!(
        metric(&export, "checks")["fails"],
        0,
        "{export}\n{}",
        run.stderr
    );
    assert!(
        metric(&export, "iteration_duration")["min"]
            .as_f64()
            .unwrap()
            >= 299.0,
        "{export}"
    );
    // `throw` replaces the warning with the exception.
    assert!(!run.stderr.contains("Request Failed"), "{}", run.stderr);
}

#[test]
fn ntlm_auth_fails_loudly_without_sending() {
    let dir = Dir::new("not-yet");
    let script = "import http from 'k6/http';\nexport default function () { http.get('http://u:p@127.0.0.1:1/', { auth: 'ntlm' }); }\n";
    let (run, _) = run_export(&dir, script, &["--address", ""]);
    assert!(
        run.stderr
            .contains("auth \\\"ntlm\\\" is not supported by rk6"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("Request Failed"), "{}", run.stderr);
}

#[test]
fn setup_and_teardown_samples_are_tagged_like_k6() {
    let dir = Dir::new("lifecycle-tags");
    let script = r#"
import { check, group } from 'k6';
export function setup() { check(1, { 'in setup': () => true }); group('sg', () => { check(1, { 'in sg': () => true }); }); }
export default function () { check(1, { 'in default': () => true }); }
export function teardown() { check(1, { 'in teardown': () => true }); }
"#;
    run_checked(&dir, script, &["--address", "", "-o", "json=out.json"]);
    let tags: Vec<(String, String, Option<String>)> = points(&dir, "out.json")
        .iter()
        .filter(|p| p["metric"] == "checks")
        .map(|p| {
            let t = &p["data"]["tags"];
            (
                t["check"].as_str().unwrap().to_string(),
                t["group"].as_str().unwrap().to_string(),
                t["scenario"].as_str().map(str::to_string),
            )
        })
        .collect();
    // As k6 1.1: the lifecycle functions are groups of their own, outside any scenario.
    assert_eq!(
        tags,
        vec![
            ("in setup".into(), "::setup".into(), None),
            ("in sg".into(), "::setup::sg".into(), None),
            ("in default".into(), "".into(), Some("default".into())),
            ("in teardown".into(), "::teardown".into(), None),
        ]
    );
}

/// A raw HTTP/1.1 server on one keep-alive connection: the status line and header fields
/// come as written (reason phrases of its own, a name repeated in two cases), and the
/// response object shows them as k6 1.1.0 does (same script run against k6: the same
/// texts, joined values and cookies; its header key order is Go's map order, random).
#[test]
fn status_lines_and_repeated_headers_come_through_as_sent() {
    use tokio::io::AsyncWriteExt;
    let addr = crate::support::accept_loop(
        std::time::Duration::from_secs(60),
        |mut stream| async move {
            let mut pending = Vec::new();
            while let Some(head) =
                crate::support::next_request_head(&mut stream, &mut pending).await
            {
                let head = String::from_utf8_lossy(&head).into_owned();
                let path = head.split(' ').nth(1).unwrap_or("/").to_owned();
                let status = match path.as_str() {
                    "/fine" => "200 Fine",
                    "/missing" => "404 Not Found",
                    "/teapot" => "418 Short And Stout",
                    _ => "200 OK",
                };
                let reply = format!(
                "HTTP/1.1 {status}\r\nX-A: 1\r\nSet-Cookie: a=1\r\nx-a: 2\r\nSet-Cookie: b=2\r\nX-Folded: one\r\n two\r\nContent-Length: 2\r\n\r\nok"
            );
                if stream.write_all(reply.as_bytes()).await.is_err() {
                    return;
                }
            }
        },
    );
    let dir = Dir::new("status-lines");
    let script = format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
const BASE = 'http://{addr}';
export const options = {{ iterations: 1 }};
export default function () {{
  const texts = ['/ok', '/fine', '/ok', '/missing', '/teapot', '/ok'].map((p) => http.get(BASE + p).status_text);
  const r = http.get(BASE + '/ok');
  check(r, {{
    'status texts': () => texts.join('|') === '200 OK|200 Fine|200 OK|404 Not Found|418 Short And Stout|200 OK',
    'repeated names joined': (r) => r.headers['X-A'] === '1, 2',
    'folded value unfolded': (r) => r.headers['X-Folded'] === 'one two',
    'each name once': (r) => Object.keys(r.headers).sort().join() === 'Content-Length,Set-Cookie,X-A,X-Folded',
    'cookies': (r) => r.cookies.a[0].value === '1' && r.cookies.b[0].value === '2',
    // k6: Go's zero time as UnixNano() / 1e6 for a cookie without Expires.
    'session cookie expires': (r) => r.cookies.a[0].expires === -6795364578871,
    'body': (r) => r.body === 'ok',
  }});
}}
"#
    );
    let export = run_checked(&dir, &script, &[]);
    assert_eq!(count(&export, "http_reqs"), 7.0);
}
