//! End-to-end tests: the real `rk6` binary against in-process servers on 127.0.0.1:0.

mod aggregate;
mod archive;
mod auth_compression;
mod bench_mode;
mod browser;
mod compare;
mod conns;
mod dashboard;
mod data;
mod event_loop;
mod faults;
mod grpc;
mod html;
pub(crate) mod http_concurrency;
pub(crate) mod http_errors;
mod http_extras;
mod influxdb;
mod k6_after_1_1;
mod later_modules;
mod layering;
pub(crate) mod module_loading;
mod modules;
mod net_options;
mod open_model;
mod opentelemetry;
mod operator;
pub(crate) mod parity;
mod portable;
mod prometheus;
mod report;
mod scenarios;
mod scripting;
mod summary_modes;
mod support;
mod tags;
mod tls_options;
mod webcrypto;
mod worker_threads;
mod ws;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;
use support::TestServer;

/// An isolated directory per test, removed when the test passes.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!("rk6-test-{}-{name}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Dir(p)
    }

    fn write(&self, name: &str, body: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, body).unwrap();
        path
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// A finished rk6 run.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn assert_code(&self, code: i32) -> &Self {
        assert_eq!(
            self.code, code,
            "exit code\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout, self.stderr
        );
        self
    }
}

fn rk6(args: &[&str], cwd: &Path) -> Run {
    rk6_env(args, cwd, &[])
}

fn rk6_env(args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rk6"));
    cmd.args(args).current_dir(cwd).env("NO_COLOR", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let Output {
        status,
        stdout,
        stderr,
    } = cmd.output().expect("run rk6");
    Run {
        code: status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    }
}

/// Runs `script` quietly with a summary export and returns (run, export JSON).
fn run_export(dir: &Dir, script: &str, extra: &[&str]) -> (Run, Value) {
    dir.write("script.js", script);
    run_file(dir, "script.js", extra, &[])
}

/// Runs the file `main` of `dir` quietly with `extra` flags, `env` and a summary export;
/// returns (run, export JSON, `Null` when the run wrote none).
fn run_file(dir: &Dir, main: &str, extra: &[&str], env: &[(&str, &str)]) -> (Run, Value) {
    let export = dir.path("summary.json");
    let _ = std::fs::remove_file(&export);
    let mut args = vec!["run", "-q", "--summary-export", export.to_str().unwrap()];
    args.extend_from_slice(extra);
    let main = dir.path(main);
    args.push(main.to_str().unwrap());
    let run = rk6_env(&args, &dir.0, env);
    let json = std::fs::read_to_string(&export)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    (run, json)
}

/// Asserts the run exited 0 with `passes` checks passed and none failed.
fn assert_checks(run: &Run, export: &Value, passes: f64) {
    run.assert_code(0);
    let checks = metric(export, "checks");
    assert_eq!(
        (checks["passes"].as_f64(), checks["fails"].as_f64()),
        (Some(passes), Some(0.0)),
        "checks\n{}\n{}",
        run.stdout,
        run.stderr
    );
}

fn metric<'a>(export: &'a Value, name: &str) -> &'a Value {
    &export["metrics"][name]
}

fn count(export: &Value, name: &str) -> f64 {
    metric(export, name)["count"].as_f64().unwrap_or(-1.0)
}

#[test]
fn user_journey_with_cookies_groups_checks_and_setup_data() {
    let srv = TestServer::start();
    let dir = Dir::new("journey");
    let script = format!(
        r#"
import http from 'k6/http';
import {{ check, group, sleep }} from 'k6';
const BASE = '{base}';
export const options = {{
  vus: 2, iterations: 6,
  thresholds: {{
    http_req_failed: ['rate<0.01'],
    'http_req_duration{{expected_response:true}}': ['p(95)<2000'],
    'checks{{group:::login}}': ['rate==1'],
    checks: ['rate>0.99'],
  }},
}};
export function setup() {{ return {{ user: 'alice', started: 1 }}; }}
export default function (data) {{
  group('login', () => {{
    const r = http.post(`${{BASE}}/login`, {{ user: data.user, pass: 'pw' }});
    check(r, {{ 'logged in': (r) => r.status === 200 }});
  }});
  group('me', () => {{
    const r = http.get(`${{BASE}}/me`);
    check(r, {{ 'is alice': (r) => r.json('user') === 'alice', 'json body': (r) => r.json().user === 'alice' }});
  }});
  const p = http.post(`${{BASE}}/post`, JSON.stringify({{ a: 1 }}), {{ headers: {{ 'Content-Type': 'application/json' }} }});
  check(p, {{ 'echoed json': (r) => r.json('json.a') === 1, 'status text': (r) => r.status_text === '200 OK' }});
  sleep(0.01);
}}
export function teardown(data) {{ console.log('teardown user=' + data.user); }}
"#,
        base = srv.url("")
    );
    let (run, export) = run_export(&dir, &script, &[]);
    run.assert_code(0);
    assert_eq!(count(&export, "iterations"), 6.0);
    assert_eq!(count(&export, "http_reqs"), 18.0);
    let checks = &export["metrics"]["checks"];
    assert_eq!(checks["passes"], 30);
    assert_eq!(checks["fails"], 0);
    let groups = &export["root_group"]["groups"];
    assert_eq!(groups["login"]["checks"]["logged in"]["passes"], 6);
    assert_eq!(groups["me"]["checks"]["is alice"]["passes"], 6);
    assert_eq!(groups["login"]["path"], "::login");
    assert!(export["metrics"]["checks{group:::login}"]["thresholds"]["rate==1"] == false);
    assert!(
        run.stderr
            .contains("msg=\"teardown user=alice\" source=console"),
        "{}",
        run.stderr
    );
}

#[test]
fn failed_threshold_exits_99_after_the_summary() {
    let srv = TestServer::start();
    let dir = Dir::new("thfail");
    let script = format!(
        r#"
import http from 'k6/http';
export const options = {{ iterations: 2, thresholds: {{ http_req_duration: ['p(95)<0.000001', 'avg<100000'], http_reqs: ['count==2'] }} }};
export default function () {{ http.get('{}'); }}
"#,
        srv.url("/get")
    );
    let path = dir.write("t.js", &script);
    let run = rk6(&["run", path.to_str().unwrap()], &dir.0);
    run.assert_code(99);
    assert!(run.stdout.contains("✗ 'p(95)<0.000001'"), "{}", run.stdout);
    assert!(run.stdout.contains("✓ 'avg<100000'"), "{}", run.stdout);
    assert!(
        run.stdout.contains("✓ 'count==2' count=2"),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr
            .contains("thresholds on metrics 'http_req_duration' have been crossed"),
        "{}",
        run.stderr
    );
}

#[test]
fn invalid_thresholds_exit_104() {
    let dir = Dir::new("thbad");
    let unknown = dir.write("a.js", "export const options = { thresholds: { nope_metric: ['count>0'] } };\nexport default function () {}\n");
    let run = rk6(&["run", "-q", unknown.to_str().unwrap()], &dir.0);
    run.assert_code(104);
    assert!(
        run.stderr
            .contains("no metric name \\\"nope_metric\\\" found"),
        "{}",
        run.stderr
    );
    let bad_agg = dir.write("b.js", "export const options = { thresholds: { http_reqs: ['avg>1'] } };\nexport default function () {}\n");
    let run = rk6(&["run", "-q", bad_agg.to_str().unwrap()], &dir.0);
    run.assert_code(104);
    assert!(
        run.stderr
            .contains("unsupported aggregation method avg on metric of type counter"),
        "{}",
        run.stderr
    );
}

#[test]
fn syntax_error_names_file_line_and_column() {
    let dir = Dir::new("syntax");
    let path = dir.write(
        "bad.js",
        "import http from 'k6/http';\nexport default function () {\n  let x = ;\n}\n",
    );
    let run = rk6(&["run", "-q", path.to_str().unwrap()], &dir.0);
    run.assert_code(107);
    assert!(run.stderr.contains("bad.js:3:11"), "{}", run.stderr);
    assert!(
        run.stderr.contains("hint=\"script exception\""),
        "{}",
        run.stderr
    );
}

#[test]
fn syntax_error_in_an_imported_module_names_that_module() {
    let dir = Dir::new("syntax2");
    dir.write("lib/util.js", "export function f() {\n  return (;\n}\n");
    let path = dir.write(
        "main.js",
        "import { f } from './lib/util.js';\nexport default function () { f(); }\n",
    );
    let run = rk6(&["run", "-q", path.to_str().unwrap()], &dir.0);
    run.assert_code(107);
    assert!(run.stderr.contains("lib/util.js:2:"), "{}", run.stderr);
}

#[test]
fn init_exception_exits_107_and_iteration_exception_does_not() {
    let dir = Dir::new("exceptions");
    let init = dir.write(
        "init.js",
        "throw new Error('init boom');\nexport default function () {}\n",
    );
    let run = rk6(&["run", "-q", init.to_str().unwrap()], &dir.0);
    run.assert_code(107);
    assert!(run.stderr.contains("init boom"), "{}", run.stderr);

    let (run, export) = run_export(
        &dir,
        "export const options = { iterations: 3 };\nfunction inner() { throw new Error('iter boom'); }\nexport default function () { inner(); }\n",
        &[],
    );
    run.assert_code(0);
    assert_eq!(count(&export, "iterations"), 3.0);
    assert_eq!(
        run.stderr.matches("Error: iter boom").count(),
        3,
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("\\n\\tat inner (file://"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("source=stacktrace"), "{}", run.stderr);
}

#[test]
fn setup_exception_exits_107() {
    let dir = Dir::new("setupfail");
    let path = dir.write("s.js", "export function setup() { throw new Error('setup boom'); }\nexport default function () {}\n");
    let run = rk6(&["run", "-q", path.to_str().unwrap()], &dir.0);
    run.assert_code(107);
    assert!(run.stderr.contains("setup boom"), "{}", run.stderr);
    // As k6: the (empty) test's summary still comes out, then the error.
    assert!(run.stdout.contains("TOTAL RESULTS"), "{}", run.stdout);
}

#[test]
fn setup_and_teardown_time_out_with_k6_codes() {
    let dir = Dir::new("lifecycle-timeouts");
    let started = std::time::Instant::now();
    let sleepy = dir.write(
        "sleepy.js",
        "import { sleep } from 'k6';\n\
         export const options = { setupTimeout: '1s', iterations: 1 };\n\
         export function setup() { console.log('setup start'); sleep(20); console.log('setup end'); }\n\
         export default function () { console.log('iteration ran'); }\n",
    );
    let run = rk6(&["run", sleepy.to_str().unwrap()], &dir.0);
    run.assert_code(100);
    assert!(
        run.stderr.contains(r#"level=error msg="setup() execution timed out after 1 seconds" hint="You can increase the time limit via the setupTimeout option""#),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("setup start"), "{}", run.stderr);
    assert!(!run.stderr.contains("setup end"), "{}", run.stderr);
    assert!(!run.stderr.contains("iteration ran"), "{}", run.stderr);
    assert!(run.stdout.contains("TOTAL RESULTS"), "{}", run.stdout);

    // JS that never waits cannot be interrupted, but the test still ends.
    let spinning = dir.write(
        "spinning.js",
        "export const options = { setupTimeout: 800, iterations: 1 };\n\
         export function setup() { for (;;) {} }\n\
         export default function () {}\n",
    );
    let run = rk6(&["run", "-q", spinning.to_str().unwrap()], &dir.0);
    run.assert_code(100);
    assert!(
        run.stderr
            .contains("setup() execution timed out after 1 seconds"),
        "{}",
        run.stderr
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(15),
        "the timeouts did not cut setup short: {:?}",
        started.elapsed()
    );

    // Teardown: the limit comes from K6_TEARDOWN_TIMEOUT; the iterations ran and the
    // summary is printed before the error.
    let slow_teardown = dir.write(
        "teardown.js",
        "import { sleep } from 'k6';\n\
         export const options = { iterations: 2 };\n\
         export default function () {}\n\
         export function teardown() { sleep(20); }\n",
    );
    let run = rk6_env(
        &["run", slow_teardown.to_str().unwrap()],
        &dir.0,
        &[("K6_TEARDOWN_TIMEOUT", "1500ms")],
    );
    run.assert_code(101);
    assert!(
        run.stderr.contains(r#"msg="teardown() execution timed out after 2 seconds" hint="You can increase the time limit via the teardownTimeout option""#),
        "{}",
        run.stderr
    );
    assert!(run.stdout.contains("iterations"), "{}", run.stdout);

    // Within the limit nothing changes.
    let quick = dir.write(
        "quick.js",
        "import { sleep } from 'k6';\n\
         export const options = { setupTimeout: '5s', teardownTimeout: '5s', iterations: 1 };\n\
         export function setup() { sleep(0.2); return { ok: 1 }; }\n\
         export default function (d) { if (d.ok !== 1) throw new Error('no data'); }\n\
         export function teardown() { sleep(0.2); }\n",
    );
    rk6(&["run", "-q", quick.to_str().unwrap()], &dir.0).assert_code(0);
    let bad = dir.write(
        "bad.js",
        "export const options = { setupTimeout: 'soon' };\nexport default function () {}\n",
    );
    let run = rk6(&["run", "-q", bad.to_str().unwrap()], &dir.0);
    run.assert_code(104);
    assert!(
        run.stderr.contains("invalid setupTimeout"),
        "{}",
        run.stderr
    );
}

#[test]
fn unknown_and_unsupported_modules_fail_loudly() {
    let dir = Dir::new("modules");
    let path = dir.write(
        "m.js",
        "import x from 'k6/nope';\nexport default function () {}\n",
    );
    let run = rk6(&["run", "-q", path.to_str().unwrap()], &dir.0);
    run.assert_code(107);
    assert!(
        run.stderr.contains("unknown module: k6/nope"),
        "{}",
        run.stderr
    );
    let path = dir.write(
        "r.js",
        "import b from 'k6/experimental/browser';\nexport default function () {}\n",
    );
    let run = rk6(&["run", "-q", path.to_str().unwrap()], &dir.0);
    run.assert_code(107);
    assert!(
        run.stderr.contains("use k6/browser instead"),
        "{}",
        run.stderr
    );
}

#[test]
fn local_modules_open_env_vu_and_iter() {
    let dir = Dir::new("locals");
    dir.write("lib/util.js", "import { helper } from './deeper.js';\nexport function twice(x) { return helper(x) * 2; }\n");
    dir.write(
        "lib/deeper.js",
        "export function helper(x) { return x; }\nexport default 7;\n",
    );
    dir.write("data/users.json", "[{\"name\":\"bob\"}]");
    dir.write("data/blob.bin", "\u{1}\u{2}\u{3}");
    let script = r#"
import { twice } from './lib/util.js';
import seven from './lib/deeper.js';
import { check } from 'k6';
const users = JSON.parse(open('./data/users.json'));
const blob = open('data/blob.bin', 'b');
export const options = { vus: 2, iterations: 4 };
export default function () {
  check(null, {
    'import works': () => twice(21) === 42 && seven === 7,
    'open text': () => users[0].name === 'bob',
    'open binary': () => blob.byteLength === 3,
    'env from -e': () => __ENV.MY_VAR === 'hello',
    'system env': () => __ENV.RK6_TEST_SYSTEM === 'sys',
    'vu id': () => __VU === 1 || __VU === 2,
    'iter': () => __ITER >= 0 && __ITER < 4,
  });
}
"#;
    let path = dir.write("script.js", script);
    let export = dir.path("summary.json");
    let run = rk6_env(
        &[
            "run",
            "-q",
            "-e",
            "MY_VAR=hello",
            "--summary-export",
            export.to_str().unwrap(),
            path.to_str().unwrap(),
        ],
        &dir.0,
        &[("RK6_TEST_SYSTEM", "sys")],
    );
    run.assert_code(0);
    let export: Value = serde_json::from_str(&std::fs::read_to_string(export).unwrap()).unwrap();
    let checks = &export["root_group"]["checks"];
    for name in [
        "import works",
        "open text",
        "open binary",
        "env from -e",
        "system env",
        "vu id",
        "iter",
    ] {
        assert_eq!(checks[name]["passes"], 4, "check {name}: {}", checks);
        assert_eq!(checks[name]["fails"], 0, "check {name}");
    }
}

#[test]
fn network_failures_become_error_codes() {
    let dir = Dir::new("neterr");
    let srv = TestServer::start();
    let closed = support::closed_addr();
    let script = format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
export default function () {{
  const refused = http.get('http://{closed}/');
  check(refused, {{ 'refused status 0': (r) => r.status === 0, 'refused 1212': (r) => r.error_code === 1212, 'refused error': (r) => r.error.length > 0 }});
  const slow = http.get('{slow}', {{ timeout: '200ms' }});
  check(slow, {{ 'timeout 1050': (r) => r.error_code === 1050 && r.status === 0, 'timeout message': (r) => r.error === 'request timeout' }});
  const bad = http.get('http://[::1');
  check(bad, {{ 'invalid url 1020': (r) => r.error_code === 1020 }});
}}
"#,
        slow = srv.url("/delay/3000")
    );
    let (run, export) = run_export(&dir, &script, &[]);
    run.assert_code(0);
    let checks = &export["root_group"]["checks"];
    for name in [
        "refused status 0",
        "refused 1212",
        "refused error",
        "timeout 1050",
        "timeout message",
        "invalid url 1020",
    ] {
        assert_eq!(
            checks[name]["passes"], 1,
            "check {name}: {checks}\n{}",
            run.stderr
        );
    }
    assert!(
        run.stderr.contains("level=warning msg=\"Request Failed\""),
        "{}",
        run.stderr
    );
    assert_eq!(
        metric(&export, "http_req_failed")["passes"],
        2,
        "refused + timeout count as failed requests"
    );
}

#[test]
fn redirect_hops_are_separate_requests_and_cookies_follow() {
    let srv = TestServer::start();
    let dir = Dir::new("redirects");
    let script = format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
export default function () {{
  const r = http.get('{redir}');
  check(r, {{ 'final url': (r) => r.url.endsWith('/get'), 'final 200': (r) => r.status === 200 }});
  const none = http.get('{redir}', {{ redirects: 0 }});
  check(none, {{ 'no follow': (r) => r.status === 302 }});
  const c = http.get('{cookies}');
  check(c, {{ 'cookie sent back': (r) => r.json('cookies.flavor') === 'oat' }});
}}
"#,
        redir = srv.url("/redirect/2"),
        cookies = srv.url("/cookies/set?flavor=oat")
    );
    let (run, export) = run_export(&dir, &script, &[]);
    run.assert_code(0);
    // 3 hops + 1 unfollowed + 2 hops of the cookie redirect.
    assert_eq!(count(&export, "http_reqs"), 6.0);
    let checks = &export["root_group"]["checks"];
    for name in ["final url", "final 200", "no follow", "cookie sent back"] {
        assert_eq!(checks[name]["passes"], 1, "check {name}: {checks}");
    }
}

#[test]
fn response_object_has_k6_fields() {
    let srv = TestServer::start();
    let dir = Dir::new("response");
    let script = format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
export default function () {{
  const r = http.get('{json}', {{ headers: {{ 'X-Test': 'yes' }}, tags: {{ name: 'json' }} }});
  check(r, {{
    'proto': (r) => r.proto === 'HTTP/1.1',
    'canonical headers': (r) => r.headers['Content-Type'] === 'application/json',
    'selector': (r) => r.json('nested.items.1') === 2 && r.json('nested.items.#') === 3,
    'json() parses once, as k6': (r) => {{ r.json().extra = 5; return r.json().extra === 5 && r.json('extra') === undefined; }},
    'timings': (r) => ['duration','blocked','connecting','tls_handshaking','sending','waiting','receiving'].every((k) => typeof r.timings[k] === 'number' && r.timings[k] >= 0),
    'duration is the sum': (r) => Math.abs(r.timings.duration - (r.timings.sending + r.timings.waiting + r.timings.receiving)) < 0.001,
    'request': (r) => r.request.method === 'GET' && r.request.headers['X-Test'][0] === 'yes',
    'remote': (r) => r.remote_ip === '127.0.0.1' && r.remote_port > 0,
    'no error': (r) => r.error === '' && r.error_code === 0,
    'keys in k6 order': (r) => Object.keys(r).join() === 'remote_ip,remote_port,url,status,status_text,proto,headers,cookies,body,timings,tls_version,tls_cipher_suite,ocsp,error,error_code,request,clickLink,html,json,submitForm',
    'methods are own read-only properties, as k6': (r) => {{ const d = Object.getOwnPropertyDescriptor(r, 'json'); return typeof d.value === 'function' && !d.writable && d.enumerable && !d.configurable && Object.getPrototypeOf(r) === Object.prototype; }},
    'timings as k6': (r) => {{ const d = Object.getOwnPropertyDescriptor(r.timings, 'waiting'); return Object.keys(r.timings).join() === 'duration,blocked,looking_up,connecting,tls_handshaking,sending,waiting,receiving' && d.writable && d.enumerable && !d.configurable; }},
    'no stapled ocsp': (r) => JSON.stringify(r.ocsp) === '{{"produced_at":0,"this_update":0,"next_update":0,"revoked_at":0,"revocation_reason":"","status":""}}',
    'fields cannot be deleted': (r) => {{ try {{ delete r.status; return false; }} catch (e) {{ return r.status === 200 && e instanceof TypeError; }} }},
    'lazy fields can be assigned': (r) => {{ r.body = 'replaced'; return r.body === 'replaced'; }},
  }});
  const form = http.post('{post}', {{ b: 'x y', a: '1' }});
  check(form, {{ 'form body': (r) => r.json('body') === 'a=1&b=x+y' && r.json('content_type') === 'application/x-www-form-urlencoded' }});
  for (const m of ['put', 'patch', 'del']) {{
    const r = http[m]('{anything}', 'data');
    check(r, {{ ['verb ' + m]: (r) => r.json('method') === (m === 'del' ? 'DELETE' : m.toUpperCase()) }});
  }}
  const o = http.request('OPTIONS', '{anything}');
  check(o, {{ 'request()': (r) => r.json('method') === 'OPTIONS' }});
  const h = http.head('{json}');
  check(h, {{ 'head': (r) => r.status === 200 && r.body === '' }});
  const z = http.get('{gzip}');
  check(z, {{ 'gzip decoded': (r) => r.json('gzipped') === true }});
}}
"#,
        json = srv.url("/json"),
        post = srv.url("/post"),
        anything = srv.url("/anything"),
        gzip = srv.url("/gzip"),
    );
    let (run, export) = run_export(&dir, &script, &[]);
    run.assert_code(0);
    let checks = &export["root_group"]["checks"];
    let obj = checks.as_object().unwrap();
    assert_eq!(obj.len(), 22, "{checks}");
    for (name, c) in obj {
        assert_eq!(
            c["passes"], 1,
            "check {name} failed: {checks}\n{}",
            run.stderr
        );
    }
}

#[test]
fn executors_from_cli_flags() {
    let dir = Dir::new("executors");
    let script = "import { sleep } from 'k6';\nexport default function () { sleep(0.05); }\n";
    let (run, export) = run_export(&dir, script, &["-u", "3", "-i", "7"]);
    run.assert_code(0);
    assert_eq!(count(&export, "iterations"), 7.0);

    let (run, export) = run_export(&dir, script, &["-u", "2", "-d", "1s"]);
    run.assert_code(0);
    let n = count(&export, "iterations");
    assert!(
        (20.0..=42.0).contains(&n),
        "2 VUs × 1s of 50ms iterations: {n}"
    );

    let per_vu = "export const options = { scenarios: { p: { executor: 'per-vu-iterations', vus: 3, iterations: 2 } } };\nexport default function () {}\n";
    let (run, export) = run_export(&dir, per_vu, &[]);
    run.assert_code(0);
    assert_eq!(count(&export, "iterations"), 6.0);

    let (run, export) = run_export(&dir, "export default function () {}\n", &[]);
    run.assert_code(0);
    assert_eq!(
        count(&export, "iterations"),
        1.0,
        "no options: 1 VU, 1 iteration"
    );
}

#[test]
fn graceful_stop_interrupts_and_counts() {
    let dir = Dir::new("graceful");
    let script = "import { sleep } from 'k6';\nexport const options = { scenarios: { c: { executor: 'constant-vus', vus: 2, duration: '1s', gracefulStop: '0s' } } };\nexport default function () { sleep(30); }\n";
    let path = dir.write("g.js", script);
    let started = std::time::Instant::now();
    let run = rk6(&["run", path.to_str().unwrap()], &dir.0);
    run.assert_code(0);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
    assert!(
        run.stdout
            .contains("0 complete and 2 interrupted iterations"),
        "{}",
        run.stdout
    );
}

#[test]
fn bad_configs_exit_104() {
    let dir = Dir::new("badcfg");
    for (name, options) in [
        (
            "key",
            "{ scenarios: { a: { executor: 'constant-vus', vus: 1, duration: '1s', bogus: 1 } } }",
        ),
        ("executor", "{ scenarios: { a: { executor: 'nope' } } }"),
        ("iters", "{ vus: 4, iterations: 2 }"),
        (
            "exec",
            "{ scenarios: { a: { executor: 'shared-iterations', exec: 'missing' } } }",
        ),
    ] {
        let path = dir.write(
            &format!("{name}.js"),
            &format!("export const options = {options};\nexport default function () {{}}\n"),
        );
        let run = rk6(&["run", "-q", path.to_str().unwrap()], &dir.0);
        run.assert_code(104);
    }
    let path = dir.write(
        "iters2.js",
        "export const options = { vus: 4, iterations: 2 };\nexport default function () {}\n",
    );
    let run = rk6(&["run", "-q", path.to_str().unwrap()], &dir.0);
    assert!(
        run.stderr
            .contains("the number of iterations (2) can't be less than the number of VUs (4)"),
        "{}",
        run.stderr
    );
}

#[test]
fn handle_summary_replaces_the_default_and_falls_back_when_it_throws() {
    let dir = Dir::new("handlesummary");
    let script = r#"
import { check } from 'k6';
export const options = { iterations: 2 };
export default function () { check(1, { one: (v) => v === 1 }); }
export function handleSummary(data) {
  return { stdout: 'custom summary\n', 'out.json': JSON.stringify({ keys: Object.keys(data).sort(), checks: data.metrics.checks.values.passes }) };
}
"#;
    let path = dir.write("h.js", script);
    let run = rk6(&["run", "-q", path.to_str().unwrap()], &dir.0);
    run.assert_code(0);
    assert_eq!(run.stdout, "custom summary\n");
    let out: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path("out.json")).unwrap()).unwrap();
    assert_eq!(
        out["keys"],
        serde_json::json!(["metrics", "options", "root_group", "setup_data", "state"])
    );
    assert_eq!(out["checks"], 2);

    let throwing = dir.write("t.js", "export default function () {}\nexport function handleSummary() { throw new Error('hs boom'); }\n");
    let run = rk6(&["run", "-q", throwing.to_str().unwrap()], &dir.0);
    run.assert_code(0);
    assert!(run.stdout.contains("█ TOTAL RESULTS"), "{}", run.stdout);
    assert!(run.stderr.contains("hs boom"), "{}", run.stderr);

    let run = rk6(
        &["run", "-q", "--no-summary", path.to_str().unwrap()],
        &dir.0,
    );
    run.assert_code(0);
    assert_eq!(run.stdout, "");
}

#[test]
fn quiet_and_banner() {
    let dir = Dir::new("banner");
    let path = dir.write(
        "b.js",
        "export const options = { vus: 2, iterations: 3 };\nexport default function () {}\n",
    );
    let run = rk6(&["run", path.to_str().unwrap()], &dir.0);
    run.assert_code(0);
    assert!(
        run.stdout.contains(
            "* default: 3 iterations shared among 2 VUs (maxDuration: 10m0s, gracefulStop: 30s)"
        ),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("scenarios: (100.00%) 1 scenario, 2 max VUs, 10m30s max duration (incl. graceful stop):"), "{}", run.stdout);
    let run = rk6(&["run", "-q", path.to_str().unwrap()], &dir.0);
    assert!(!run.stdout.contains("scenarios:"), "{}", run.stdout);
    assert!(run.stdout.contains("█ TOTAL RESULTS"), "{}", run.stdout);
}

#[test]
fn console_levels_are_formatted_like_k6() {
    let dir = Dir::new("console");
    let path = dir.write(
        "c.js",
        "export default function () { console.log('a', 1, {x: 2}); console.warn('w'); console.error('e'); console.debug('d'); }\n",
    );
    let run = rk6(
        &["run", "-q", "--no-summary", path.to_str().unwrap()],
        &dir.0,
    );
    // Objects as k6 1.6 and later print them (tests/later_modules has the details).
    assert!(
        run.stderr
            .contains("level=info msg=\"a 1 { x: 2 }\" source=console"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("level=warning msg=w source=console"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("level=error msg=e source=console"),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("msg=d "),
        "debug hidden without -v: {}",
        run.stderr
    );
    let run = rk6(
        &["run", "-q", "-v", "--no-summary", path.to_str().unwrap()],
        &dir.0,
    );
    assert!(
        run.stderr.contains("level=debug msg=d source=console"),
        "{}",
        run.stderr
    );
}

#[test]
fn version_and_help() {
    let dir = Dir::new("version");
    let run = rk6(&["version"], &dir.0);
    run.assert_code(0);
    assert!(run.stdout.starts_with("rk6 v"), "{}", run.stdout);
    let run = rk6(&["run", "--help"], &dir.0);
    run.assert_code(0);
    for flag in [
        "--vus",
        "--duration",
        "--iterations",
        "--env",
        "--quiet",
        "--summary-export",
        "--insecure-skip-tls-verify",
        "--no-summary",
    ] {
        assert!(run.stdout.contains(flag), "{flag} missing from --help");
    }
}

#[test]
fn demo_runs_the_journey_against_the_builtin_shop() {
    let dir = Dir::new("demo");
    let run = rk6(&["demo", "-q"], &dir.0);
    run.assert_code(0);
    assert!(
        run.stdout
            .contains("checks_succeeded...................: 100.00%"),
        "{}",
        run.stdout
    );
}

/// `k6/encoding`, `k6/crypto` and the global `crypto`: every check must pass (the same script
/// is run under the real k6 in `parity::encoding_and_crypto_agree_with_k6`).
const ENCODING_CRYPTO_SCRIPT: &str = r#"import { check } from 'k6';
import encoding, { b64encode, b64decode } from 'k6/encoding';
import crypto, { sha256, hmac, createHash, createHMAC, randomBytes, hexEncode } from 'k6/crypto';

export const options = { iterations: 1 };

function throws(f) {
  try { f(); return false; } catch (e) { return true; }
}

// A JWT signed with HS256: base64rawurl(header).base64rawurl(payload).base64rawurl(hmac).
function jwt(payload, secret) {
  const part = (o) => b64encode(JSON.stringify(o), 'rawurl');
  const unsigned = part({ alg: 'HS256', typ: 'JWT' }) + '.' + part(payload);
  return unsigned + '.' + hmac('sha256', secret, unsigned, 'base64rawurl');
}

const ABC = {
  md4: 'a448017aaf21d8525fc10ae87aa6729d',
  md5: '900150983cd24fb0d6963f7d28e17f72',
  sha1: 'a9993e364706816aba3e25717850c26c9cd0d89d',
  sha256: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
  sha384: 'cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7',
  sha512: 'ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f',
  sha512_224: '4634270f707b6a54daae7530460842e20e37ed265ceee9a43e8924aa',
  sha512_256: '53048e2681941ef99b2e29b76b4c7dabe4c2d0c634fc6d46e0e2f13107e7af23',
  ripemd160: '8eb208f7e05d987a9b044a8e98c6b087f15a0bfc',
};

export default function () {
  const bytes = new Uint8Array([1, 2, 255]);
  check(null, {
    'b64 std': () => b64encode('hi?>') === 'aGk/Pg==',
    'b64 rawstd': () => b64encode('hi?>', 'rawstd') === 'aGk/Pg',
    'b64 url': () => b64encode('hi?>', 'url') === 'aGk_Pg==',
    'b64 rawurl': () => b64encode('hi?>', 'rawurl') === 'aGk_Pg',
    'b64 utf-8': () => b64encode('héllo ☃') === 'aMOpbGxvIOKYgw==',
    'b64 buffers': () => b64encode(bytes.buffer) === 'AQL/' && b64encode(bytes) === 'AQL/',
    'b64 decode to string': () => b64decode('aGk=', 'std', 's') === 'hi' && b64decode('aGk_Pg', 'rawurl', 's') === 'hi?>',
    'b64 decode to buffer': () => {
      const b = b64decode('_-8=', 'url');
      return b instanceof ArrayBuffer && new Uint8Array(b).join() === '255,239';
    },
    'b64 round trip': () => {
      const r = randomBytes(64);
      return b64encode(b64decode(b64encode(r, 'rawurl'), 'rawurl')) === b64encode(r);
    },
    'b64 invalid input throws': () => throws(() => b64decode('!!!!')) && throws(() => b64decode('aGk', 'std')) && throws(() => b64encode(42)),
    'default exports': () => encoding.b64encode('hi') === 'aGk=' && encoding.b64decode('aGk=', 'std', 's') === 'hi',
    'digests of abc': () => Object.keys(ABC).every((alg) => crypto[alg]('abc', 'hex') === ABC[alg]),
    'digest encodings': () =>
      crypto.md5('abc', 'base64') === 'kAFQmDzST7DWlj99KOF/cg==' &&
      crypto.md5('abc', 'base64url') === 'kAFQmDzST7DWlj99KOF_cg==' &&
      crypto.md5('abc', 'base64rawurl') === 'kAFQmDzST7DWlj99KOF_cg',
    'digest binary': () => {
      const b = sha256('abc', 'binary');
      return b instanceof ArrayBuffer && b.byteLength === 32 && hexEncode(b) === ABC.sha256;
    },
    'digest of buffers': () => crypto.md5(new Uint8Array([97, 98, 99]).buffer, 'hex') === ABC.md5,
    'bad output encoding throws': () => throws(() => sha256('abc', 'HEX')) && throws(() => sha256('abc')),
    'hmac rfc4231': () => hmac('sha256', 'Jefe', 'what do ya want for nothing?', 'hex') === '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    'hmac buffer key': () =>
      hmac('sha256', new Uint8Array([107, 101, 121]).buffer, 'The quick brown fox jumps over the lazy dog', 'hex') ===
      'f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8',
    'hmac unknown algorithm throws': () => throws(() => hmac('SHA256', 'k', 'x', 'hex')),
    'createHash streams': () => {
      const h = createHash('sha256');
      h.update('a');
      h.update(new Uint8Array([98, 99]).buffer);
      return h.digest('hex') === ABC.sha256 && h.digest('base64rawurl') === 'ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0';
    },
    'createHMAC streams': () => {
      const h = createHMAC('sha256', 'key');
      h.update('The quick brown fox ');
      h.update('jumps over the lazy dog');
      return h.digest('hex') === 'f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8';
    },
    'randomBytes': () => {
      const b = randomBytes(16);
      return b instanceof ArrayBuffer && b.byteLength === 16;
    },
    'hexEncode': () => hexEncode('abc') === '616263' && hexEncode(bytes.buffer) === '0102ff',
    'jwt hs256': () =>
      jwt({ sub: '1234567890', name: 'John Doe', iat: 1516239022 }, 'your-256-bit-secret') ===
      'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c',
    'global randomUUID': () => {
      const a = globalThis.crypto.randomUUID();
      return /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(a) && a !== globalThis.crypto.randomUUID();
    },
    'global getRandomValues': () => {
      const a = new Uint8Array(64);
      const u = new Uint32Array(4);
      return globalThis.crypto.getRandomValues(a) === a && a.some((x) => x !== 0) &&
        globalThis.crypto.getRandomValues(u) === u && u.some((x) => x !== 0);
    },
    'getRandomValues rejects floats': () => throws(() => globalThis.crypto.getRandomValues(new Float64Array(2))),
    'methods are enumerable': () =>
      Object.keys(createHash('md5')).join() === 'digest,update' &&
      Object.keys(createHMAC('md5', 'k')).join() === 'digest,update' &&
      Object.keys(globalThis.crypto).indexOf('randomUUID') >= 0,
  });
}
"#;

#[test]
fn encoding_crypto_and_global_crypto_work_like_k6() {
    let dir = Dir::new("encoding-crypto");
    let (run, export) = run_export(&dir, ENCODING_CRYPTO_SCRIPT, &[]);
    run.assert_code(0);
    let checks = export["root_group"]["checks"]
        .as_object()
        .expect("checks in the export");
    assert_eq!(checks.len(), 28, "{checks:?}");
    for (name, c) in checks {
        assert_eq!(c["passes"], 1, "check {name} failed: {}", run.stderr);
        assert_eq!(c["fails"], 0, "check {name} failed: {}", run.stderr);
    }
}

#[test]
fn encoding_and_crypto_errors_are_clear() {
    let dir = Dir::new("encoding-errors");
    let cases = [
        (
            "import { b64decode } from 'k6/encoding';\nexport default function () { b64decode('aG!='); }\n",
            "illegal base64 data at input byte 2",
        ),
        (
            "import { sha256 } from 'k6/crypto';\nexport default function () { sha256(42, 'hex'); }\n",
            "sha256 failed: invalid type number",
        ),
        (
            "import { createHash } from 'k6/crypto';\nexport default function () { createHash('sha3'); }\n",
            "invalid algorithm: sha3",
        ),
        (
            "import { md5 } from 'k6/crypto';\nexport default function () { md5('x', 'b64'); }\n",
            "invalid output encoding: b64",
        ),
        (
            "export default function () { crypto.getRandomValues(new Uint8Array(65537)); }\n",
            "QuotaExceededError",
        ),
    ];
    for (script, message) in cases {
        let (run, export) = run_export(&dir, script, &[]);
        run.assert_code(0);
        assert_eq!(count(&export, "iterations"), 1.0);
        assert!(run.stderr.contains(message), "{message}: {}", run.stderr);
    }
}

const CUSTOM_METRICS_SCRIPT: &str = r#"
import { Counter, Gauge, Rate, Trend } from 'k6/metrics';
import metrics from 'k6/metrics';
import { check } from 'k6';
const c = new Counter('my_counter');
const g = new Gauge('my_gauge');
const r = new Rate('my_rate');
const t = new Trend('my_trend', true);
const plain = new metrics.Trend('plain_trend');
export const options = {
  vus: 1, iterations: 4,
  thresholds: THRESHOLDS,
};
export default function () {
  check(c, {
    'name': (m) => m.name === 'my_counter',
    'instanceof': (m) => m instanceof Counter,
    'add returns true': (m) => m.add(2) === true,
  });
  c.add(true);
  c.add(NaN);
  c.add();
  g.add(__ITER * 10);
  r.add(__ITER % 2 === 0);
  t.add(__ITER + 1, { kind: __ITER < 2 ? 'a' : 'b' });
  plain.add('5');
}
"#;

fn custom_metrics_script(thresholds: &str) -> String {
    CUSTOM_METRICS_SCRIPT.replace("THRESHOLDS", thresholds)
}

#[test]
fn custom_metrics_reach_the_summary_and_thresholds() {
    let dir = Dir::new("custom-metrics");
    let script = custom_metrics_script(
        "{ my_counter: ['count==12'], my_rate: ['rate==0.5'], 'my_trend{kind:a}': ['max<3'], my_gauge: ['value==30'] }",
    );
    let (run, export) = run_export(&dir, &script, &[]);
    run.assert_code(0);
    assert_eq!(count(&export, "my_counter"), 12.0, "{export}");
    let gauge = metric(&export, "my_gauge");
    assert_eq!(
        (
            gauge["value"].as_f64(),
            gauge["min"].as_f64(),
            gauge["max"].as_f64()
        ),
        (Some(30.0), Some(0.0), Some(30.0)),
        "{export}"
    );
    let rate = metric(&export, "my_rate");
    assert_eq!(
        (
            rate["passes"].as_f64(),
            rate["fails"].as_f64(),
            rate["value"].as_f64()
        ),
        (Some(2.0), Some(2.0), Some(0.5)),
        "{export}"
    );
    let trend = metric(&export, "my_trend");
    assert_eq!(
        (
            trend["avg"].as_f64(),
            trend["min"].as_f64(),
            trend["max"].as_f64()
        ),
        (Some(2.5), Some(1.0), Some(4.0)),
        "{export}"
    );
    assert_eq!(
        metric(&export, "my_trend{kind:a}")["max"].as_f64(),
        Some(2.0),
        "{export}"
    );
    assert_eq!(metric(&export, "plain_trend")["avg"].as_f64(), Some(5.0));
    let checks = metric(&export, "checks");
    assert_eq!(checks["fails"].as_f64(), Some(0.0), "{export}");
    assert!(run.stdout.contains("CUSTOM"), "{}", run.stdout);
    assert!(run.stdout.contains("my_trend"), "{}", run.stdout);
    assert!(
        run.stderr
            .contains("is an invalid value for metric 'my_counter'")
            && run.stderr.contains("level=warning"),
        "{}",
        run.stderr
    );
}

#[test]
fn failing_thresholds_on_custom_metrics_and_their_submetrics_exit_99() {
    let dir = Dir::new("custom-thresholds");
    let script = custom_metrics_script("{ my_counter: ['count>100'] }");
    let (run, _) = run_export(&dir, &script, &[]);
    run.assert_code(99);
    assert!(
        run.stderr
            .contains("thresholds on metrics 'my_counter' have been crossed"),
        "{}",
        run.stderr
    );
    let script =
        custom_metrics_script("{ 'my_trend{kind:a}': ['max<1.5'], 'my_trend{kind:b}': ['min>2'] }");
    let (run, export) = run_export(&dir, &script, &[]);
    run.assert_code(99);
    assert!(run.stdout.contains("✗ 'max<1.5'"), "{}", run.stdout);
    assert!(run.stdout.contains("✓ 'min>2'"), "{}", run.stdout);
    assert_eq!(
        metric(&export, "my_trend{kind:b}")["min"].as_f64(),
        Some(3.0),
        "{export}"
    );
    assert!(
        run.stderr
            .contains("thresholds on metrics 'my_trend{kind:a}' have been crossed"),
        "{}",
        run.stderr
    );
}

#[test]
fn custom_metrics_must_be_declared_and_named_correctly() {
    let dir = Dir::new("custom-rules");
    // Declaring in an iteration throws; the iteration fails, the test does not.
    let (run, export) = run_export(
        &dir,
        "import { Counter } from 'k6/metrics';\nexport const options = { iterations: 2 };\nexport default function () { new Counter('late_counter'); }\n",
        &[],
    );
    run.assert_code(0);
    assert!(
        run.stderr
            .contains("metrics must be declared in the init context"),
        "{}",
        run.stderr
    );
    assert!(metric(&export, "late_counter").is_null(), "{export}");
    // Adding in the init context throws there: a script error.
    let path = dir.write(
        "init_add.js",
        "import { Counter } from 'k6/metrics';\nconst c = new Counter('early');\nc.add(1);\nexport default function () {}\n",
    );
    let run = rk6(&["run", "-q", path.to_str().unwrap()], &dir.0);
    run.assert_code(107);
    assert!(
        run.stderr.contains("init context is not supported"),
        "{}",
        run.stderr
    );
    let path = dir.write(
        "bad_name.js",
        "import { Trend } from 'k6/metrics';\nconst t = new Trend('bad-name');\nexport default function () {}\n",
    );
    let run = rk6(&["run", "-q", path.to_str().unwrap()], &dir.0);
    run.assert_code(107);
    assert!(
        run.stderr.contains("invalid metric name: 'bad-name'"),
        "{}",
        run.stderr
    );
    let path = dir.write(
        "redefined.js",
        "import { Trend } from 'k6/metrics';\nconst t = new Trend('http_reqs');\nexport default function () {}\n",
    );
    let run = rk6(&["run", "-q", path.to_str().unwrap()], &dir.0);
    run.assert_code(107);
    assert!(
        run.stderr
            .contains("metric 'http_reqs' already exists but with type counter, instead of trend"),
        "{}",
        run.stderr
    );
}

fn gunzip(path: &Path) -> String {
    use std::io::Read;
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    text
}

#[test]
fn json_and_csv_outputs_hold_every_sample() {
    let srv = TestServer::start();
    let dir = Dir::new("outputs");
    let script = format!(
        r#"
import http from 'k6/http';
import {{ check, group }} from 'k6';
import {{ Trend }} from 'k6/metrics';
const t = new Trend('my_trend', true);
export const options = {{ vus: 2, iterations: 7, thresholds: {{ http_req_duration: ['p(95)<10000'] }} }};
export default function () {{
  group('g', () => {{
    const res = http.get('{}', {{ tags: {{ mine: 'x,y' }} }});
    check(res, {{ 'ok': (r) => r.status === 200 }});
  }});
  t.add(1.5, {{ a: '1', b: '2' }});
}}
"#,
        srv.url("/get")
    );
    let path = dir.write("script.js", &script);
    let export = dir.path("summary.json");
    let run = rk6(
        &[
            "run",
            "--summary-export",
            export.to_str().unwrap(),
            "-o",
            "json=out.json",
            "-o",
            "json=out.json.gz",
            "--out",
            "csv=out.csv",
            "-o",
            "csv=out.csv.gz",
            path.to_str().unwrap(),
        ],
        &dir.0,
    );
    run.assert_code(0);
    assert!(
        run.stdout.contains(
            "output: json (out.json), json (out.json.gz), csv (out.csv), csv (out.csv.gz)"
        ),
        "{}",
        run.stdout
    );
    let export: Value = serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    let reqs = count(&export, "http_reqs");
    assert_eq!(reqs, 7.0);

    let json = std::fs::read_to_string(dir.path("out.json")).unwrap();
    assert_eq!(
        json,
        gunzip(&dir.path("out.json.gz")),
        "gzip holds the same lines"
    );
    let lines: Vec<Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let points: Vec<&Value> = lines.iter().filter(|l| l["type"] == "Point").collect();
    let http_points = points.iter().filter(|p| p["metric"] == "http_reqs").count();
    assert_eq!(http_points as f64, reqs);
    let mut described = std::collections::HashSet::new();
    for l in &lines {
        let name = l["metric"].as_str().unwrap().to_string();
        if l["type"] == "Metric" {
            assert_eq!(l["data"]["name"], l["metric"]);
            assert!(described.insert(name), "one Metric line per metric");
        } else {
            assert!(described.contains(&name), "Metric line before points: {l}");
            let time = l["data"]["time"].as_str().unwrap();
            assert!(time.ends_with('Z') && time.len() >= 20, "{time}");
        }
    }
    let duration = lines
        .iter()
        .find(|l| l["type"] == "Metric" && l["metric"] == "http_req_duration")
        .unwrap();
    assert_eq!(
        duration["data"]["thresholds"],
        serde_json::json!(["p(95)<10000"])
    );
    assert_eq!(
        duration["data"]["submetrics"][0]["name"],
        "http_req_duration{expected_response:true}"
    );
    let custom = lines
        .iter()
        .find(|l| l["type"] == "Metric" && l["metric"] == "my_trend")
        .unwrap();
    assert_eq!(custom["data"]["contains"], "time");
    assert_eq!(custom["data"]["type"], "trend");
    let req = points.iter().find(|p| p["metric"] == "http_reqs").unwrap();
    assert_eq!(req["data"]["tags"]["group"], "::g");
    assert_eq!(req["data"]["tags"]["mine"], "x,y");
    assert_eq!(req["data"]["tags"]["scenario"], "default");
    assert_eq!(req["data"]["value"], serde_json::json!(1));

    let csv = std::fs::read_to_string(dir.path("out.csv")).unwrap();
    assert_eq!(csv, gunzip(&dir.path("out.csv.gz")));
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows[0], "metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata");
    assert_eq!(rows.len() - 1, points.len(), "one row per sample");
    let http_rows: Vec<&&str> = rows
        .iter()
        .filter(|r| r.starts_with("http_reqs,"))
        .collect();
    assert_eq!(http_rows.len() as f64, reqs);
    assert!(http_rows[0].ends_with(",\"mine=x,y\","), "{}", http_rows[0]);
    assert!(http_rows[0].contains(",1.000000,"), "{}", http_rows[0]);
    assert!(
        rows.iter()
            .any(|r| r.starts_with("my_trend,") && r.ends_with(",a=1&b=2,")),
        "{csv}"
    );
}

#[test]
fn outputs_from_k6_out_and_unsupported_outputs() {
    let dir = Dir::new("outputs-env");
    let path = dir.write(
        "s.js",
        "export const options = { iterations: 1 };\nexport default function () {}\n",
    );
    let run = rk6_env(
        &["run", "-q", path.to_str().unwrap()],
        &dir.0,
        &[("K6_OUT", "json=env.json")],
    );
    run.assert_code(0);
    let text = std::fs::read_to_string(dir.path("env.json")).unwrap();
    assert!(text.contains("\"metric\":\"iterations\""), "{text}");
    let run = rk6(
        &["run", "-q", "-o", "statsd", path.to_str().unwrap()],
        &dir.0,
    );
    // k6's code for an output it cannot create.
    run.assert_code(255);
    assert!(
        run.stderr
            .contains("output statsd is not supported by rk6 yet"),
        "{}",
        run.stderr
    );
    let run = rk6(
        &["run", "-q", "-o", "bogus", path.to_str().unwrap()],
        &dir.0,
    );
    run.assert_code(255);
}
