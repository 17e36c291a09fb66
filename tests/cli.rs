//! End-to-end tests: the real `rk6` binary against in-process servers on 127.0.0.1:0.

mod parity;
mod support;

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
    let path = dir.write("script.js", script);
    let export = dir.path("summary.json");
    let mut args = vec!["run", "-q", "--summary-export", export.to_str().unwrap()];
    args.extend_from_slice(extra);
    args.push(path.to_str().unwrap());
    let run = rk6(&args, &dir.0);
    let json = std::fs::read_to_string(&export)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    (run, json)
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
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let script = format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
export default function () {{
  const refused = http.get('http://{closed}/');
  check(refused, {{ 'refused status 0': (r) => r.status === 0, 'refused 1212': (r) => r.error_code === 1212, 'refused error': (r) => r.error.length > 0 }});
  const slow = http.get('{slow}', {{ timeout: '200ms' }});
  check(slow, {{ 'timeout 1050': (r) => r.error_code === 1050 && r.status === 0, 'timeout message': (r) => r.error === 'request timeout' }});
  const bad = http.get('not a url');
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
    'timings': (r) => ['duration','blocked','connecting','tls_handshaking','sending','waiting','receiving'].every((k) => typeof r.timings[k] === 'number' && r.timings[k] >= 0),
    'duration is the sum': (r) => Math.abs(r.timings.duration - (r.timings.sending + r.timings.waiting + r.timings.receiving)) < 0.001,
    'request': (r) => r.request.method === 'GET' && r.request.headers['X-Test'][0] === 'yes',
    'remote': (r) => r.remote_ip === '127.0.0.1' && r.remote_port > 0,
    'no error': (r) => r.error === '' && r.error_code === 0,
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
    assert_eq!(obj.len(), 15, "{checks}");
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
    assert!(
        run.stderr
            .contains("level=info msg=\"a 1 {\\\"x\\\":2}\" source=console"),
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
