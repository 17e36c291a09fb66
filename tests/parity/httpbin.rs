//! The issue's HTTP journey (redirects, statuses, encodings, basic and digest auth, verbs,
//! timeouts, refused connections, json selectors, batch, cookie jar, multipart) against
//! httpbin under gunicorn, side by side with the real k6.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// An httpbin served by gunicorn on 127.0.0.1, stopped on drop.
struct Httpbin {
    child: Child,
    base: String,
}

impl Httpbin {
    /// Starts httpbin; `None` (after saying why) when httpbin or gunicorn is not installed,
    /// which CI does not accept (.ci/run installs both).
    fn start() -> Option<Httpbin> {
        let spawned = Command::new("python3")
            .args([
                "-m",
                "gunicorn",
                "-b",
                "127.0.0.1:0",
                "-k",
                "gthread",
                "--threads",
                "8",
            ])
            .arg("httpbin:app")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn();
        let missing = |why: String| {
            if std::env::var_os("CI").is_some() {
                panic!("httpbin under gunicorn is required in CI: {why}");
            }
            eprintln!("skipping the httpbin parity test: {why}");
            None
        };
        let mut child = match spawned {
            Ok(c) => c,
            Err(e) => return missing(format!("python3: {e}")),
        };
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let mut seen = String::new();
        // gunicorn names the port it got once it listens; it exits at once when it cannot start.
        let base = lines.by_ref().map_while(Result::ok).find_map(|l| {
            seen.push_str(&l);
            seen.push('\n');
            let (_, rest) = l.split_once("Listening at: ")?;
            Some(rest.split(' ').next()?.to_owned())
        });
        let Some(base) = base else {
            let _ = child.wait();
            return missing(format!("gunicorn did not start:\n{seen}"));
        };
        // Keep draining its log so it never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        Some(Httpbin { child, base })
    }
}

impl Drop for Httpbin {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn httpbin_journey_agrees_with_k6() {
    if super::k6().is_none() {
        return;
    }
    let Some(httpbin) = Httpbin::start() else {
        return;
    };
    super::compare("httpbin", &SCRIPT.replace("__BASE__", &httpbin.base));
}

/// (method, status, expected_response, error_code, url, name) of every `http_reqs` sample in
/// a JSON output file, in order.
fn request_tags(path: &std::path::Path) -> Vec<[String; 6]> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|p| p["type"] == "Point" && p["metric"] == "http_reqs")
        .map(|p| {
            let t = &p["data"]["tags"];
            [
                "method",
                "status",
                "expected_response",
                "error_code",
                "url",
                "name",
            ]
            .map(|k| t[k].as_str().unwrap_or("-").to_owned())
        })
        .collect()
}

#[test]
fn auth_requests_are_tagged_like_k6() {
    let Some(bin) = super::k6() else { return };
    let Some(httpbin) = Httpbin::start() else {
        return;
    };
    let host = httpbin.base.trim_start_matches("http://");
    let script = format!(
        r#"
import http from 'k6/http';
export const options = {{ iterations: 1 }};
export default function () {{
  http.get('http://user:passwd@{host}/digest-auth/auth/user/passwd', {{ auth: 'digest' }});
  http.get('http://user:wrong@{host}/digest-auth/auth/user/passwd', {{ auth: 'digest' }});
  http.get('http://user:passwd@{host}/get', {{ auth: 'digest' }});
  http.get('http://user:passwd@{host}/digest-auth/auth/user/passwd', {{ auth: 'digest', responseCallback: null }});
  http.get('http://user:passwd@{host}/basic-auth/user/passwd');
  http.get('http://user:passwd@{host}/basic-auth/user/passwd', {{ auth: 'basic', tags: {{ name: 'named' }} }});
  http.post('http://{host}/post', 'abc', {{ compression: 'gzip, deflate' }});
  http.post('http://{host}/post', 'abc', {{ compression: 'lzma' }});
}}
"#
    );
    let dir = crate::Dir::new("parity-auth-tags");
    let path = dir.write("script.js", &script);
    let script_arg = path.to_str().unwrap();
    let theirs = Command::new(&bin)
        .args([
            "run",
            "-q",
            "--address",
            "",
            "--out",
            "json=k6.json",
            script_arg,
        ])
        .env("K6_NO_USAGE_REPORT", "true")
        .current_dir(&dir.0)
        .output()
        .expect("run k6");
    assert!(
        theirs.status.success(),
        "{}",
        String::from_utf8_lossy(&theirs.stderr)
    );
    let ours = crate::rk6(
        &[
            "run",
            "-q",
            "--address",
            "",
            "--out",
            "json=rk6.json",
            script_arg,
        ],
        &dir.0,
    );
    ours.assert_code(0);
    let theirs = request_tags(&dir.path("k6.json"));
    assert_eq!(theirs.len(), 10, "{theirs:?}");
    assert_eq!(request_tags(&dir.path("rk6.json")), theirs);
}

/// Every check passes under k6 1.1.0; the thresholds pin per-tag request counts (digest
/// challenges, redirect hops, timeouts) so that a difference there shows as a verdict.
/// SHA-256 digest is left out: k6 answers it with MD5 and fails, rk6 succeeds.
const SCRIPT: &str = r#"import http from 'k6/http';
import { check, group } from 'k6';
const BASE = '__BASE__';
const HOST = BASE.replace('http://', '');
export const options = {
  iterations: 1,
  thresholds: {
    'http_reqs{group:::auth}': ['count==12'],
    'http_req_failed{group:::auth}': ['rate==0.25'],
    'http_reqs{status:401}': ['count==6'],
    'http_reqs{group:::redirects}': ['count==18'],
    'http_reqs{error_code:1050}': ['count==1'],
  },
};
export default function () {
  group('redirects', () => {
    const r = http.get(`${BASE}/redirect/3`);
    check(r, { 'followed to /get': (r) => r.status === 200 && r.url === `${BASE}/get` });
    const abs = http.get(`${BASE}/absolute-redirect/2`);
    check(abs, { 'absolute chain': (r) => r.status === 200 && r.url === `${BASE}/get` });
    const rel = http.get(`${BASE}/relative-redirect/2`);
    check(rel, { 'relative chain': (r) => r.status === 200 && r.url === `${BASE}/get` });
    const many = http.get(`${BASE}/redirect/5`, { redirects: 2 });
    check(many, { 'too many stops at a 302': (r) => r.status === 302 && r.url === `${BASE}/relative-redirect/3` });
    const none = http.get(`${BASE}/redirect-to?url=/get&status_code=307`, { redirects: 0 });
    check(none, { 'redirects: 0 returns the 307': (r) => r.status === 307 && r.headers['Location'] === '/get' });
    const post303 = http.post(`${BASE}/redirect-to?url=/anything&status_code=303`, 'x');
    check(post303, { '303 turns POST into GET': (r) => r.json('method') === 'GET' });
    const put307 = http.put(`${BASE}/redirect-to?url=/anything&status_code=307`, 'body');
    check(put307, { '307 replays PUT with body': (r) => r.json('method') === 'PUT' && r.json('data') === 'body' });
  });
  group('status codes', () => {
    for (const s of [200, 201, 204, 400, 404, 418, 500, 503]) {
      const r = http.get(`${BASE}/status/${s}`);
      check(r, { [`status ${s}`]: (r) => r.status === s, [`error_code ${s}`]: (r) => r.error_code === (s >= 400 ? 1000 + s : 0) });
    }
  });
  group('encodings', () => {
    check(http.get(`${BASE}/gzip`), { gzip: (r) => r.json('gzipped') === true });
    check(http.get(`${BASE}/deflate`), { deflate: (r) => r.json('deflated') === true });
    check(http.get(`${BASE}/brotli`), { brotli: (r) => r.json('brotli') === true });
    const c = http.post(`${BASE}/post`, 'zipped text', { compression: 'gzip' });
    check(c, { 'compressed request': (r) => r.json('headers.Content-Encoding') === 'gzip' && r.request.body === 'zipped text' });
  });
  group('auth', () => {
    check(http.get(`http://user:passwd@${HOST}/basic-auth/user/passwd`), { 'basic ok': (r) => r.status === 200 && r.json('authenticated') === true });
    check(http.get(`http://user:passwd@${HOST}/basic-auth/user/passwd`, { auth: 'basic' }), { 'basic param ok': (r) => r.json('user') === 'user' });
    check(http.get(`http://user:nope@${HOST}/basic-auth/user/passwd`), { 'basic wrong 401': (r) => r.status === 401 });
    check(http.get(`http://user:nope@${HOST}/hidden-basic-auth/user/passwd`), { 'hidden basic 404': (r) => r.status === 404 });
    check(http.get(`http://user:passwd@${HOST}/digest-auth/auth/user/passwd`, { auth: 'digest' }), { 'digest ok': (r) => r.status === 200 && r.json('authenticated') === true });
    check(http.get(`http://user:passwd@${HOST}/digest-auth/auth/user/passwd/MD5`, { auth: 'digest' }), { 'digest md5 ok': (r) => r.status === 200 });
    check(http.get(`http://user:passwd@${HOST}/digest-auth/auth-int/user/passwd`, { auth: 'digest' }), { 'digest auth-int ok': (r) => r.status === 200 });
    check(http.get(`http://user:wrong@${HOST}/digest-auth/auth/user/passwd`, { auth: 'digest' }), { 'digest wrong 401': (r) => r.status === 401 });
  });
  group('verbs', () => {
    const body = 'payload';
    check(http.get(`${BASE}/anything`), { GET: (r) => r.json('method') === 'GET' });
    check(http.post(`${BASE}/anything`, body), { POST: (r) => r.json('method') === 'POST' && r.json('data') === body });
    check(http.put(`${BASE}/anything`, body), { PUT: (r) => r.json('method') === 'PUT' && r.json('data') === body });
    check(http.patch(`${BASE}/anything`, body), { PATCH: (r) => r.json('method') === 'PATCH' && r.json('data') === body });
    check(http.del(`${BASE}/anything`, body), { DELETE: (r) => r.json('method') === 'DELETE' });
    check(http.options(`${BASE}/anything`), { OPTIONS: (r) => r.status === 200 && r.headers['Allow'] !== undefined });
    check(http.head(`${BASE}/anything`), { HEAD: (r) => r.status === 200 && r.body === '' });
    check(http.request('PUT', `${BASE}/anything`, JSON.stringify({ a: 1 }), { headers: { 'Content-Type': 'application/json' } }), { 'request() with JSON': (r) => r.json('json.a') === 1 });
    check(http.post(`${BASE}/post`, { a: '1', b: ['x', 'y'] }), { 'form body': (r) => r.json('form.a') === '1' && r.json('form.b').length === 2 });
    check(http.get(`${BASE}/redirect/1`, { headers: { 'X-A': 'b' } }), {
      'request is the first hop as the script made it': (r) => r.request.url === `${BASE}/redirect/1` && r.request.headers['X-A'][0] === 'b' && r.request.headers['User-Agent'].length === 1,
      'request headers leave out what the transport adds': (r) => ['Host', 'Referer', 'Content-Length', 'Authorization'].every((h) => r.request.headers[h] === undefined),
    });
  });
  group('failures', () => {
    const slow = http.get(`${BASE}/delay/2`, { timeout: '500ms' });
    check(slow, { 'timeout is 1050': (r) => r.status === 0 && r.error_code === 1050 });
    const refused = http.get('http://127.0.0.1:1/');
    check(refused, { 'refused is 1212': (r) => r.status === 0 && r.error_code === 1212 });
  });
  group('json', () => {
    const r = http.get(`${BASE}/json`);
    check(r, {
      'nested selector': (r) => r.json('slideshow.author') === 'Yours Truly',
      'array index': (r) => r.json('slideshow.slides.1.title') === 'Overview',
      'array count': (r) => r.json('slideshow.slides.#') === 2,
      'missing is undefined': (r) => r.json('slideshow.nope') === undefined,
      'whole document': (r) => r.json().slideshow.title === 'Sample Slide Show',
    });
  });
  group('batch', () => {
    const arr = http.batch([
      `${BASE}/get`,
      ['POST', `${BASE}/post`, 'b'],
      { method: 'GET', url: `${BASE}/status/404` },
    ]);
    check(arr, { 'array form': (r) => r.length === 3 && r[0].status === 200 && r[1].json('data') === 'b' && r[2].status === 404 });
    const obj = http.batch({ one: `${BASE}/get?x=1`, two: { method: 'GET', url: `${BASE}/get?x=2` } });
    check(obj, { 'object form': (r) => r.one.json('args.x') === '1' && r.two.json('args.x') === '2' });
  });
  group('cookies', () => {
    const jar = http.cookieJar();
    http.get(`${BASE}/cookies/set?server=1`);
    check(jar.cookiesForURL(`${BASE}/`), { 'server cookie in jar': (c) => c.server[0] === '1' });
    jar.set(BASE, 'mine', 'v');
    check(http.get(`${BASE}/cookies`), { 'jar cookie sent': (r) => r.json('cookies.mine') === 'v' && r.json('cookies.server') === '1' });
    jar.delete(BASE, 'mine');
    check(http.get(`${BASE}/cookies`), { 'deleted cookie gone': (r) => r.json('cookies.mine') === undefined });
    check(http.get(`${BASE}/cookies`, { cookies: { req: 'scoped' } }), { 'request cookie': (r) => r.json('cookies.req') === 'scoped' });
    jar.clear(BASE);
    check(http.get(`${BASE}/cookies`), { 'cleared': (r) => Object.keys(r.json('cookies')).length === 0 });
  });
  group('multipart', () => {
    const r = http.post(`${BASE}/post`, { field: 'value', file: http.file('file contents', 'a.txt', 'text/plain') });
    check(r, {
      'file part': (r) => r.json('files.file') === 'file contents',
      'form part': (r) => r.json('form.field') === 'value',
      'multipart type': (r) => r.json('headers.Content-Type').startsWith('multipart/form-data; boundary='),
    });
  });
}
"#;
