//! What k6 added or changed after 1.1 (1.2 → 2.3), run end to end. No k6 2.x runs here:
//! each test cites the release note or document it follows (docs/reference/k6-after-1.1.md).

use crate::{rk6, rk6_env, Dir};

/// Counts the iterations per scenario in a JSON output file.
fn iterations_by_scenario(out: &std::path::Path) -> std::collections::BTreeMap<String, u64> {
    let mut by = std::collections::BTreeMap::new();
    for line in std::fs::read_to_string(out).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v["type"] == "Point" && v["metric"] == "iterations" {
            let s = v["data"]["tags"]["scenario"]
                .as_str()
                .unwrap_or("")
                .to_string();
            *by.entry(s).or_insert(0) += 1;
        }
    }
    by
}

const TWO_SCENARIOS: &str = r#"
export const options = {
  scenarios: {
    api: { executor: 'per-vu-iterations', vus: 2, iterations: 3, exec: 'api', startTime: '200ms' },
    ui: { executor: 'shared-iterations', vus: 1, iterations: 2, exec: 'ui' },
  },
  thresholds: { 'iterations{scenario:ui}': ['count>100'], iterations: ['count>0'] },
};
export function api() {}
export function ui() {}
"#;

/// k6 2.3 `--scenario` (release notes v2.3.0, #6360; docs using-k6/k6-options/reference
/// "Scenario selection"): only the named scenarios run, as configured; thresholds on the
/// others are dropped with a warning; an unknown name is exit 104 with the choices.
#[test]
fn scenario_runs_only_the_named_ones() {
    let dir = Dir::new("k6x-scenario");
    let path = dir.write("script.js", TWO_SCENARIOS);
    let out = dir.path("out.json");
    let run = rk6(
        &[
            "run",
            "-q",
            "--scenario",
            "api",
            "-o",
            &format!("json={}", out.display()),
            path.to_str().unwrap(),
        ],
        &dir.0,
    );
    // The threshold on `ui` would fail (count>100): dropped, so the run passes.
    run.assert_code(0);
    assert_eq!(
        iterations_by_scenario(&out),
        [("api".to_string(), 6)].into()
    );
    assert!(
        run.stderr.contains(
            "--scenario skipped thresholds for excluded scenarios: iterations{scenario:ui}"
        ),
        "{}",
        run.stderr
    );
    let run = rk6(
        &["run", "-q", "--scenario", "web", path.to_str().unwrap()],
        &dir.0,
    );
    run.assert_code(104);
    assert!(
        run.stderr
            .contains("not found; available scenarios: api, ui"),
        "{}",
        run.stderr
    );
    let run = rk6(
        &[
            "run",
            "-q",
            "--scenario",
            "api",
            "--vus",
            "2",
            path.to_str().unwrap(),
        ],
        &dir.0,
    );
    run.assert_code(104);
    assert!(
        run.stderr
            .contains("--scenario cannot be combined with --vus"),
        "{}",
        run.stderr
    );
}

/// k6 2.3 `--once` (release notes v2.3.0, #6338): each selected scenario runs one
/// iteration on one VU, its `exec` kept; with several scenarios and no `--scenario` it is
/// exit 104.
#[test]
fn once_runs_one_iteration_of_each_selected_scenario() {
    let dir = Dir::new("k6x-once");
    let path = dir.write("script.js", TWO_SCENARIOS);
    let out = dir.path("out.json");
    let run = rk6(
        &[
            "run",
            "-q",
            "--once",
            "--scenario",
            "api,ui",
            "--no-thresholds",
            "-o",
            &format!("json={}", out.display()),
            path.to_str().unwrap(),
        ],
        &dir.0,
    );
    run.assert_code(0);
    assert_eq!(
        iterations_by_scenario(&out),
        [("api".to_string(), 1), ("ui".to_string(), 1)].into()
    );
    let run = rk6(&["run", "-q", "--once", path.to_str().unwrap()], &dir.0);
    run.assert_code(104);
    assert!(
        run.stderr
            .contains("--once can run only with a single scenario, but got: api, ui"),
        "{}",
        run.stderr
    );
}

/// k6 2.1 (release notes v2.1.0, #5794): `--vus N` alone runs N iterations shared by N
/// VUs and overrides the script's scenarios, with k6's warning.
#[test]
fn vus_alone_overrides_the_scripts_scenarios() {
    let dir = Dir::new("k6x-vus");
    let path = dir.write("script.js", TWO_SCENARIOS);
    let out = dir.path("out.json");
    let run = rk6(
        &[
            "run",
            "-q",
            "--vus",
            "3",
            "--no-thresholds",
            "-o",
            &format!("json={}", out.display()),
            path.to_str().unwrap(),
        ],
        &dir.0,
    );
    // The script has no default function: the generated `default` scenario cannot run.
    run.assert_code(104);
    assert!(
        run.stderr
            .contains("`vus=3` overrides scenarios configuration"),
        "{}",
        run.stderr
    );
    let path = dir.write("plain.js", "export default function () {}\n");
    let run = rk6(
        &[
            "run",
            "-q",
            "--vus",
            "3",
            "-o",
            &format!("json={}", out.display()),
            path.to_str().unwrap(),
        ],
        &dir.0,
    );
    run.assert_code(0);
    assert_eq!(
        iterations_by_scenario(&out),
        [("default".to_string(), 3)].into()
    );
}

/// k6 1.3 `--summary-mode=disabled` (release notes v1.3.0, #5118) and 2.0's removal of
/// `--no-summary` (v2.0.0, #5729), which rk6 keeps with a deprecation line.
#[test]
fn summary_mode_disabled_and_the_deprecated_no_summary() {
    let dir = Dir::new("k6x-summary");
    let path = dir.write(
        "script.js",
        "export default function () {}\nexport function handleSummary() { return { 'hs.txt': 'x' }; }\n",
    );
    let run = rk6(
        &[
            "run",
            "-q",
            "--summary-mode=disabled",
            path.to_str().unwrap(),
        ],
        &dir.0,
    );
    run.assert_code(0);
    assert!(!run.stdout.contains("TOTAL RESULTS"), "{}", run.stdout);
    assert!(!dir.path("hs.txt").exists(), "handleSummary ran");
    assert!(!run.stderr.contains("deprecated"), "{}", run.stderr);
    let run = rk6(
        &["run", "-q", "--no-summary", path.to_str().unwrap()],
        &dir.0,
    );
    run.assert_code(0);
    assert!(!dir.path("hs.txt").exists(), "handleSummary ran");
    assert!(
        run.stderr.contains("--no-summary is deprecated"),
        "{}",
        run.stderr
    );
    let run = rk6(
        &["run", "-q", "--summary-mode=bogus", path.to_str().unwrap()],
        &dir.0,
    );
    run.assert_code(104);
    assert!(
        run.stderr.contains("invalid summary mode"),
        "{}",
        run.stderr
    );
}

/// k6 2.2 `handleSummaryTimeout` (release notes v2.2.0, #5854): a handleSummary that runs
/// past it is cut off with k6's error; the run's exit code does not change.
#[test]
fn handle_summary_timeout_cuts_a_slow_handle_summary() {
    let dir = Dir::new("k6x-hs-timeout");
    let path = dir.write(
        "script.js",
        "export const options = { handleSummaryTimeout: '300ms' };\nexport default function () {}\nexport function handleSummary() { const end = Date.now() + 3000; while (Date.now() < end) {} return {}; }\n",
    );
    let started = std::time::Instant::now();
    let run = rk6(&["run", "-q", path.to_str().unwrap()], &dir.0);
    run.assert_code(0);
    assert!(
        run.stderr
            .contains("handleSummary() execution timed out after 0 seconds")
            || run
                .stderr
                .contains("handleSummary() execution timed out after"),
        "{}",
        run.stderr
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
    let run = rk6_env(
        &["run", "-q", path.to_str().unwrap()],
        &dir.0,
        &[("K6_HANDLE_SUMMARY_TIMEOUT", "nope")],
    );
    run.assert_code(104);
}

/// k6 2.0 (release notes v2.0.0, #5876): no REST API unless `--address` or `K6_ADDRESS`
/// names one.
#[test]
fn the_rest_api_listens_only_with_an_address() {
    let dir = Dir::new("k6x-address");
    // Held by this test: had rk6 tried it, it would say so.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = listener.local_addr().unwrap().to_string();
    let path = dir.write("script.js", "export default function () {}\n");
    let run = rk6_env(&["run", "-q", path.to_str().unwrap()], &dir.0, &[]);
    run.assert_code(0);
    assert!(!run.stderr.contains("API"), "{}", run.stderr);
    let run = rk6_env(
        &["run", "-q", path.to_str().unwrap()],
        &dir.0,
        &[("K6_ADDRESS", &taken)],
    );
    run.assert_code(106);
    let run = rk6(
        &["run", "-q", "--address", &taken, path.to_str().unwrap()],
        &dir.0,
    );
    run.assert_code(106);
}

/// k6 2.1/2.2 feature flags (release notes v2.1.0 #6055, #6056; v2.2.0 #5714, #6032):
/// `rk6 features` lists them; `--features` turns them on, adds `k6_feature_*` run tags and
/// `__ENV.K6_FEATURES`; `freeze-env` freezes `__ENV`; an unknown name is logged.
#[test]
fn feature_flags_turn_on_what_they_name() {
    let dir = Dir::new("k6x-features");
    let list = rk6(&["features"], &dir.0);
    list.assert_code(0);
    for flag in [
        "freeze-env",
        "merge-run-tags",
        "native-histograms",
        "async-metric-context",
    ] {
        assert!(list.stdout.contains(flag), "{}", list.stdout);
    }
    let json = rk6(&["features", "--json"], &dir.0);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v[0]["lifecycle"], "Experimental");

    let path = dir.write(
        "script.js",
        r#"
import { check } from 'k6';
export const options = { scenarios: { s: { executor: 'shared-iterations', env: { EXTRA: 'yes' } } } };
export default function () {
  let threw = false;
  try { __ENV.X = '1'; } catch (e) { threw = e instanceof TypeError; }
  check(__ENV, {
    'K6_FEATURES': (e) => e.K6_FEATURES === 'freeze-env,merge-run-tags',
    'frozen': () => threw && Object.isFrozen(__ENV),
    'scenario env kept': (e) => e.EXTRA === 'yes',
  });
}
"#,
    );
    let out = dir.path("out.json");
    let run = rk6(
        &[
            "run",
            "-q",
            "--features",
            "freeze-env",
            "--features",
            "merge-run-tags,nope",
            "-o",
            &format!("json={}", out.display()),
            path.to_str().unwrap(),
        ],
        &dir.0,
    );
    run.assert_code(0);
    assert!(
        run.stdout
            .contains("checks_succeeded...................: 100.00% 3 out of 3"),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    assert!(
        run.stderr.contains("Unknown feature flag"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("feature=nope"), "{}", run.stderr);
    let text = std::fs::read_to_string(&out).unwrap();
    let point = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["type"] == "Point" && v["metric"] == "iterations")
        .unwrap();
    assert_eq!(point["data"]["tags"]["k6_feature_freeze_env"], "true");
    assert_eq!(point["data"]["tags"]["k6_feature_merge_run_tags"], "true");
    // Without the flag __ENV stays writable.
    let run = rk6(&["run", "-q", path.to_str().unwrap()], &dir.0);
    assert!(run.stdout.contains("✗ frozen"), "{}", run.stdout);
}

/// k6 1.6 `k6 deps` (release notes v1.6.0, #5410): the imports through local files, build
/// dependencies of `k6/x/…` imports and `"use k6 with …"` directives.
#[test]
fn deps_lists_imports_and_build_dependencies() {
    let dir = Dir::new("k6x-deps");
    dir.write(
        "lib/util.js",
        "import { sleep } from 'k6';\nexport const u = 1;\n",
    );
    let path = dir.write(
        "script.js",
        "\"use k6 with k6/x/faker >= 0.3\";\nimport http from 'k6/http';\nimport { u } from './lib/util.js';\nimport faker from 'k6/x/faker';\nexport default function () {}\n",
    );
    let run = rk6(&["deps", path.to_str().unwrap()], &dir.0);
    run.assert_code(0);
    let util = url::Url::from_file_path(dir.path("lib/util.js")).unwrap();
    let want = format!(
        "Build Dependencies:\n  k6/x/faker: >= 0.3\n\nImports:\n  {util}\n  k6\n  k6/http\n  k6/x/faker\n\nCustom Build Required: yes\n"
    );
    assert_eq!(run.stdout, want);
    let run = rk6(&["deps", "--json", path.to_str().unwrap()], &dir.0);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["customBuildRequired"], true);
    assert_eq!(v["buildDependencies"]["k6/x/faker"], ">= 0.3");
}

/// k6 1.5 `--secret-source=url=…` (release notes v1.5.0, #5413) and 1.7's
/// `K6_SECRET_SOURCE` (v1.7.0, #5724): each secret fetched from the URL template, picked by
/// `responsePath`, with the configured headers; 5xx retried; the value redacted from logs.
#[test]
fn url_secret_source_fetches_each_secret() {
    use crate::support::recorder::{Recorder, Reply};
    use std::sync::atomic::{AtomicUsize, Ordering};
    let flaky = std::sync::Arc::new(AtomicUsize::new(0));
    let f = flaky.clone();
    let server = Recorder::start(move |seen| {
        if seen.header("authorization") != "Bearer t0ken" {
            return Reply::new(401, "text/plain", "no");
        }
        match seen.path() {
            "/s/api-key" => Reply::new(
                200,
                "application/json",
                r#"{"data":{"value":"s3cr3t-value"}}"#,
            ),
            // Fails once, then answers: retried.
            "/s/flaky" if f.fetch_add(1, Ordering::SeqCst) == 0 => {
                Reply::new(503, "text/plain", "busy")
            }
            "/s/flaky" => Reply::new(
                200,
                "application/json",
                r#"{"data":{"value":"second-try"}}"#,
            ),
            _ => Reply::new(404, "text/plain", "none"),
        }
    });
    let dir = Dir::new("k6x-url-secrets");
    let path = dir.write(
        "script.js",
        r#"
import secrets from 'k6/secrets';
export default async function () {
  const v = await secrets.get('api-key');
  console.log(`got ${v} ${v.length}`);
  console.log(`flaky ${await secrets.get('flaky')}`);
  let err = '';
  try { await secrets.get('missing'); } catch (e) { err = String(e); }
  console.log(`missing ${err.includes('404')}`);
}
"#,
    );
    let source = format!(
        "url=urlTemplate=http://{}/s/{{key}},responsePath=data.value,headers.Authorization=Bearer t0ken,retryBackoff=10ms",
        server.addr
    );
    let run = rk6(
        &[
            "run",
            "-q",
            "--secret-source",
            &source,
            path.to_str().unwrap(),
        ],
        &dir.0,
    );
    run.assert_code(0);
    assert!(
        run.stderr.contains("got ***SECRET_REDACTED*** 12"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("flaky ***SECRET_REDACTED***"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("missing true"), "{}", run.stderr);
    // The same source from the environment.
    let run = rk6_env(
        &["run", "-q", path.to_str().unwrap()],
        &dir.0,
        &[("K6_SECRET_SOURCE", &source)],
    );
    run.assert_code(0);
    assert!(
        run.stderr.contains("got ***SECRET_REDACTED*** 12"),
        "{}",
        run.stderr
    );
    let run = rk6(
        &[
            "run",
            "-q",
            "--secret-source",
            "url=method=GET",
            path.to_str().unwrap(),
        ],
        &dir.0,
    );
    run.assert_code(255);
    assert!(
        run.stderr.contains("urlTemplate is required"),
        "{}",
        run.stderr
    );
}

/// k6 1.2's `GET /metrics` on the REST API (release notes v1.2.0, #4944): the process's own
/// metrics in Prometheus's text format (k6's Go collectors; rk6's `process_*`).
#[test]
fn the_rest_api_serves_process_metrics() {
    let dir = Dir::new("k6x-metrics-endpoint");
    let path = dir.write(
        "script.js",
        "import { sleep } from 'k6';\nexport default function () { sleep(3); }\n",
    );
    let address = format!("127.0.0.1:{}", crate::support::free_port());
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_rk6"))
        .args(["run", "-q", "--address", &address, path.to_str().unwrap()])
        .current_dir(&dir.0)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::net::TcpStream::connect(&address).is_err() {
        assert!(std::time::Instant::now() < deadline, "no API");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let (code, head, body) = crate::support::rest_call(&address, "GET", "/metrics", None, None);
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(code, 200, "{head}");
    assert!(
        head.to_lowercase()
            .contains("content-type: text/plain; version=0.0.4"),
        "{head}"
    );
    let rss: f64 = body
        .lines()
        .find_map(|l| l.strip_prefix("process_resident_memory_bytes "))
        .and_then(|v| v.parse().ok())
        .unwrap();
    assert!(rss > 1e6, "{body}");
}

/// k6 2.3's async `group()` behind `async-metric-context` (release notes v2.3.0, #6340;
/// docs javascript-api/k6/group): the callback's promise keeps the group's tag across
/// `await`, `group_duration` lasts until it settles, and `group()` returns its outcome.
#[test]
fn async_group_with_async_metric_context() {
    let dir = Dir::new("k6x-async-group");
    let path = dir.write(
        "script.js",
        r#"
import { check, group } from 'k6';
export default async function () {
  const v = await group('checkout', async () => {
    await new Promise((r) => setTimeout(r, 150));
    check(1, { 'after await': () => true });
    return 42;
  });
  check(v, { 'value': (x) => x === 42 });
  let message = '';
  try { await group('bad', async () => { throw new Error('boom'); }); } catch (e) { message = e.message; }
  check(message, { 'rejection passed on': (m) => m === 'boom' });
}
"#,
    );
    let out = dir.path("out.json");
    let run = rk6(
        &[
            "run",
            "-q",
            "--features",
            "async-metric-context",
            "-o",
            &format!("json={}", out.display()),
            path.to_str().unwrap(),
        ],
        &dir.0,
    );
    run.assert_code(0);
    let points: Vec<serde_json::Value> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|v: &serde_json::Value| v["type"] == "Point")
        .collect();
    let check_group = |name: &str| {
        points
            .iter()
            .find(|p| p["metric"] == "checks" && p["data"]["tags"]["check"] == name)
            .map(|p| {
                (
                    p["data"]["tags"]["group"]
                        .as_str()
                        .unwrap_or("")
                        .to_string(),
                    p["data"]["value"].as_f64().unwrap(),
                )
            })
            .unwrap()
    };
    assert_eq!(check_group("after await"), ("::checkout".to_string(), 1.0));
    assert_eq!(check_group("value"), (String::new(), 1.0));
    assert_eq!(check_group("rejection passed on"), (String::new(), 1.0));
    let duration = points
        .iter()
        .find(|p| p["metric"] == "group_duration" && p["data"]["tags"]["group"] == "::checkout")
        .and_then(|p| p["data"]["value"].as_f64())
        .unwrap();
    assert!(
        duration >= 140.0,
        "group_duration {duration} ms ends before the await"
    );
    // Without the flag, as k6: refused.
    let run = rk6(&["run", "-q", path.to_str().unwrap()], &dir.0);
    assert!(
        run.stderr
            .contains("group() does not support async functions"),
        "{}",
        run.stderr
    );
}

/// A script with checks and one custom metric of each type; `__ITER` makes its values
/// known in advance (one VU, two iterations).
const MACHINE_READABLE: &str = r#"
import { check } from 'k6';
import { Counter, Gauge, Rate, Trend } from 'k6/metrics';
const myTrend = new Trend('my_trend', true);
const myCounter = new Counter('my_counter');
const myGauge = new Gauge('my_gauge');
const myRate = new Rate('my_rate');
export const options = { iterations: 2, thresholds: { my_counter: ['count>0'] } };
export default function () {
  myTrend.add(__ITER === 0 ? 10 : 30);
  myCounter.add(2);
  myGauge.add(__ITER === 0 ? 5 : 3);
  myRate.add(__ITER === 0);
  check(true, { 'always': (v) => v });
  check(__ITER, { 'first fails': (i) => i > 0 });
}
"#;

/// Checks a machine-readable summary of [`MACHINE_READABLE`]: the schema's blocks, the
/// custom metrics' values per type, the checks block, what the metric list leaves out.
fn assert_machine_readable(v: &serde_json::Value, script: &str) {
    use serde_json::json;
    let keys =
        |v: &serde_json::Value| -> Vec<String> { v.as_object().unwrap().keys().cloned().collect() };
    assert_eq!(
        keys(v),
        ["config", "metadata", "results", "version"],
        "{v:#}"
    );
    assert_eq!(v["version"], "1.0.0");
    assert_eq!(v["config"]["execution"], "local");
    assert_eq!(v["config"]["script"], script);
    assert!(v["config"]["duration"].as_f64().unwrap() > 0.0, "{v:#}");
    assert_eq!(keys(&v["metadata"]), ["generated_at", "k6_version"]);
    let at = v["metadata"]["generated_at"].as_str().unwrap();
    assert!(
        at.len() >= 20 && at.as_bytes()[10] == b'T' && at.ends_with('Z'),
        "RFC 3339: {at}"
    );
    assert!(v["metadata"]["k6_version"].is_string());
    let metrics = v["results"]["metrics"].as_array().unwrap();
    let entry = |name: &str| {
        metrics
            .iter()
            .find(|m| m["name"] == name)
            .unwrap_or_else(|| panic!("{name} in {v:#}"))
    };
    assert_eq!(
        entry("my_counter"),
        &json!({"contains": "default", "name": "my_counter", "type": "counter",
                "values": {"count": 4}})
    );
    assert_eq!(
        entry("my_gauge"),
        &json!({"contains": "default", "name": "my_gauge", "type": "gauge",
                "values": {"max": 5, "min": 3, "value": 3}})
    );
    assert_eq!(
        entry("my_rate"),
        &json!({"contains": "default", "name": "my_rate", "type": "rate",
                "values": {"matches": 1, "rate": 0.5, "total": 2}})
    );
    let trend = entry("my_trend");
    assert_eq!(
        (&trend["contains"], &trend["type"]),
        (&json!("time"), &json!("trend"))
    );
    assert_eq!(
        keys(&trend["values"]),
        ["avg", "max", "med", "min", "p90", "p95"]
    );
    assert_eq!(
        [
            &trend["values"]["avg"],
            &trend["values"]["max"],
            &trend["values"]["min"]
        ],
        [&json!(20), &json!(30), &json!(10)]
    );
    assert!(trend["values"]["p90"].as_f64().unwrap() > 20.0, "{trend}");
    assert_eq!(entry("iterations")["values"], json!({"count": 2}));
    assert_eq!(entry("iteration_duration")["type"], "trend");
    assert_eq!(entry("data_received")["contains"], "data");
    for m in metrics {
        assert_eq!(keys(m), ["contains", "name", "type", "values"], "{m}");
    }
    let names: Vec<&str> = metrics
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    // `checks` is the checks block; rk6's own metrics stay out without --rk6-metrics.
    for absent in ["checks", "iteration_start_delay", "http_conns_opened"] {
        assert!(!names.contains(&absent), "{absent} in {names:?}");
    }
    assert_eq!(
        v["results"]["checks"],
        json!({
            "metrics": [
                {"contains": "default", "name": "checks_total", "type": "counter",
                 "values": {"count": 4}},
                {"contains": "default", "name": "checks_failed", "type": "rate",
                 "values": {"matches": 1, "rate": 0.25, "total": 4}},
                {"contains": "default", "name": "checks_succeeded", "type": "rate",
                 "values": {"matches": 3, "rate": 0.75, "total": 4}},
            ],
            "results": [
                {"fails": 0, "name": "always", "passes": 2},
                {"fails": 1, "name": "first fails", "passes": 1},
            ],
        })
    );
}

/// k6 v1.5.0 release notes, #5338 (k6's TestMachineReadableSummary): with
/// `--new-machine-readable-summary` or `K6_NEW_MACHINE_READABLE_SUMMARY`, `--summary-export`
/// writes the schema 1.0.0 document (as `JSON.stringify(data, null, 4)`) and
/// `handleSummary(data)` gets it (no `setup_data` key); a value of the variable Go cannot
/// read is a generic failure; off, or in the legacy mode, the old shapes stay.
#[test]
fn new_machine_readable_summary() {
    let dir = Dir::new("k6x-machine-readable");
    let path = dir.write("script.js", MACHINE_READABLE);
    let export = dir.path("summary.json");
    let script = path.to_str().unwrap();
    let with_export = |flag: &[&str], env: &[(&str, &str)]| {
        let _ = std::fs::remove_file(&export);
        let mut args = vec!["run", "-q", "--summary-export", export.to_str().unwrap()];
        args.extend_from_slice(flag);
        args.push(script);
        let run = rk6_env(&args, &dir.0, env);
        let text = std::fs::read_to_string(&export).unwrap_or_default();
        (run, text)
    };

    // The flag, --summary-export.
    let (run, text) = with_export(&["--new-machine-readable-summary"], &[]);
    run.assert_code(0);
    assert!(
        text.starts_with("{\n    \"config\": {\n        \"duration\": "),
        "{text}"
    );
    assert_machine_readable(&serde_json::from_str(&text).unwrap(), MACHINE_READABLE);
    // The text summary keeps its layout.
    assert!(run.stdout.contains("checks_total"), "{}", run.stdout);

    // The variable, handleSummary() and --summary-export.
    let hs_script = format!(
        "{MACHINE_READABLE}
export function handleSummary(data) {{
  return {{
    'hs.json': JSON.stringify(data),
    'keys.json': JSON.stringify({{ keys: Object.keys(data), setup: 'setup_data' in data }}),
  }};
}}
"
    );
    let hs_path = dir.write("hs.js", &hs_script);
    let _ = std::fs::remove_file(&export);
    let run = rk6_env(
        &[
            "run",
            "-q",
            "--summary-export",
            export.to_str().unwrap(),
            hs_path.to_str().unwrap(),
        ],
        &dir.0,
        &[("K6_NEW_MACHINE_READABLE_SUMMARY", "True")],
    );
    run.assert_code(0);
    let read = |name: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(dir.path(name)).unwrap()).unwrap()
    };
    assert_machine_readable(&read("hs.json"), &hs_script);
    assert_machine_readable(&read("summary.json"), &hs_script);
    assert_eq!(
        read("keys.json"),
        serde_json::json!({"keys": ["config", "metadata", "results", "version"], "setup": false})
    );
    // k6 builds the summary once: both carry the same time.
    assert_eq!(
        read("hs.json")["metadata"],
        read("summary.json")["metadata"]
    );

    // The flag wins over the variable; a variable Go cannot read fails even then.
    let (run, text) = with_export(
        &["--new-machine-readable-summary=false"],
        &[("K6_NEW_MACHINE_READABLE_SUMMARY", "1")],
    );
    run.assert_code(0);
    let old: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(old["metrics"]["my_rate"]["value"], 0.5, "{text}");
    assert!(old.get("root_group").is_some());
    let (run, _) = with_export(
        &["--new-machine-readable-summary"],
        &[("K6_NEW_MACHINE_READABLE_SUMMARY", "yes")],
    );
    run.assert_code(255);
    assert!(
        run.stderr.contains(
            "env var 'K6_NEW_MACHINE_READABLE_SUMMARY' is not a valid boolean value: strconv.ParseBool: parsing \\\"yes\\\": invalid syntax"
        ),
        "{}",
        run.stderr
    );

    // k6 1.5's legacy mode kept the old shapes.
    let (run, text) = with_export(
        &["--new-machine-readable-summary", "--summary-mode=legacy"],
        &[],
    );
    run.assert_code(0);
    let old: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(old.get("root_group").is_some(), "{text}");
}

/// k6 2.3's engine update (release notes v2.3.0, #6382): Uint8Array base64 and hex,
/// the ES2025 Set methods, `JSON.rawJSON`, `Error.isError`; and `--log-ns-timestamps`
/// (#6310): log times to the nanosecond, as Go's RFC3339Nano.
#[test]
fn engine_additions_and_nanosecond_log_times() {
    let dir = Dir::new("k6x-engine");
    let path = dir.write(
        "script.js",
        r#"
import { check } from 'k6';
export default function () {
  check(null, {
    'fromBase64': () => Uint8Array.fromBase64('AQL/').join() === '1,2,255',
    'fromBase64 url, loose': () => Uint8Array.fromBase64('_-8', { alphabet: 'base64url' }).join() === '255,239',
    'fromBase64 refuses junk': () => { try { Uint8Array.fromBase64('*'); return false; } catch (e) { return e instanceof SyntaxError; } },
    'toBase64': () => new Uint8Array([1, 2, 255]).toBase64() === 'AQL/' && new Uint8Array([255]).toBase64({ omitPadding: true }) === '/w',
    'hex': () => Uint8Array.fromHex('0aff').join() === '10,255' && new Uint8Array([10, 255]).toHex() === '0aff',
    'Set methods': () => [...new Set([1, 2]).union(new Set([3]))].join() === '1,2,3',
    'rawJSON': () => JSON.stringify({ a: JSON.rawJSON('12') }) === '{"a":12}',
    'isError': () => Error.isError(new TypeError('x')) && !Error.isError({ message: 'x' }),
    'setFromBase64 fits': () => { const a = new Uint8Array(4); const r = a.setFromBase64('AQL/'); return r.read === 4 && r.written === 3 && a.join() === '1,2,255,0'; },
    'setFromBase64 stops at whole groups': () => { const a = new Uint8Array(4); const r = a.setFromBase64('AQIDBAUG'); return r.read === 4 && r.written === 3 && a.join() === '1,2,3,0'; },
    'setFromHex': () => { const a = new Uint8Array(2); const r = a.setFromHex('0aff01'); return r.read === 4 && r.written === 2 && a.join() === '10,255'; },
  });
  console.log('logged');
}
"#,
    );
    let run = rk6(
        &["run", "-q", "--log-ns-timestamps", path.to_str().unwrap()],
        &dir.0,
    );
    run.assert_code(0);
    assert!(
        run.stdout
            .contains("checks_succeeded...................: 100.00% 11 out of 11"),
        "{}",
        run.stdout
    );
    let line = run
        .stderr
        .lines()
        .find(|l| l.contains("msg=logged"))
        .unwrap();
    // `time="2026-12-07T12:00:08.123456789Z"`: a fraction unless the nanoseconds were 0.
    let time = line.split('"').nth(1).unwrap();
    assert!(
        time.ends_with('Z') && time.len() > "2026-12-07T12:00:08Z".len(),
        "{line}"
    );
    let run = rk6_env(
        &["run", "-q", path.to_str().unwrap()],
        &dir.0,
        &[("K6_LOG_NS_TIMESTAMPS", "true")],
    );
    let line = run
        .stderr
        .lines()
        .find(|l| l.contains("msg=logged"))
        .unwrap();
    assert!(line.split('"').nth(1).unwrap().contains('.'), "{line}");
    let run = rk6(&["run", "-q", path.to_str().unwrap()], &dir.0);
    let line = run
        .stderr
        .lines()
        .find(|l| l.contains("msg=logged"))
        .unwrap();
    assert_eq!(
        line.split('"').nth(1).unwrap().len(),
        "2026-12-07T12:00:08Z".len(),
        "{line}"
    );
}

/// k6 2.3's `execution_result` in `GET /v1/status` (release notes v2.3.0, #6388; docs
/// k6-docs#2322 "REST API: status"): `null` while the test runs, then `{"exit_code": N}`
/// while `--linger` keeps the process up: 108 after `exec.test.abort()`, 99 when a
/// threshold fails, 0 for a clean run; the process then exits with that same code.
#[test]
fn the_status_reports_the_exit_code_while_lingering() {
    let dir = Dir::new("k6x-execution-result");
    let cases = [
        (
            "abort.js",
            "import exec from 'k6/execution';\nimport { sleep } from 'k6';\nexport const options = { vus: 1, iterations: 3 };\nexport default function () { sleep(0.5); if (exec.scenario.iterationInTest === 1) { exec.test.abort('enough'); } }\n",
            108,
        ),
        (
            "thresholds.js",
            "import { Counter } from 'k6/metrics';\nimport { sleep } from 'k6';\nconst c = new Counter('things');\nexport const options = { vus: 1, iterations: 2, thresholds: { things: ['count<1'] } };\nexport default function () { sleep(0.4); c.add(1); }\n",
            99,
        ),
        (
            "clean.js",
            "import { sleep } from 'k6';\nexport const options = { vus: 1, iterations: 2, thresholds: { iterations: ['count>0'] } };\nexport default function () { sleep(0.4); }\n",
            0,
        ),
    ];
    for (name, script, want) in cases {
        let path = dir.write(name, script);
        let address = format!("127.0.0.1:{}", crate::support::free_port());
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_rk6"))
            .args([
                "run",
                "-q",
                "--linger",
                "--address",
                &address,
                path.to_str().unwrap(),
            ])
            .current_dir(&dir.0)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let _reaper = crate::support::KillOnPanic(vec![child.id()]);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let status = || loop {
            assert!(std::time::Instant::now() < deadline, "{name}: no answer");
            if std::net::TcpStream::connect(&address).is_ok() {
                let (code, _, body) =
                    crate::support::rest_call(&address, "GET", "/v1/status", None, None);
                if code == 200 {
                    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
                    return v["data"]["attributes"].clone();
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let first = status();
        assert!(
            first["execution_result"].is_null(),
            "{name}: known before the end: {first}"
        );
        let last = loop {
            let a = status();
            if !a["execution_result"].is_null() {
                break a;
            }
        };
        assert_eq!(
            last["execution_result"]["exit_code"], want,
            "{name}: {last}"
        );
        let pid = child.id().to_string();
        std::process::Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap();
        let exit = child.wait().unwrap();
        assert_eq!(
            exit.code(),
            Some(want),
            "{name}: the process ends as announced"
        );
    }
}

/// A certificate chain as a CA hands it out: root → intermediate → leaf for `aia.test`,
/// whose AIA extension names `issuer_url` as where its issuer can be downloaded.
struct AiaChain {
    root_pem: String,
    intermediate_der: Vec<u8>,
    leaf: rcgen::Certificate,
    leaf_key: rcgen::KeyPair,
}

fn aia_chain(issuer_url: &str) -> AiaChain {
    use rcgen::{
        BasicConstraints, CertificateParams, CustomExtension, DnType, IsCa, KeyPair,
        KeyUsagePurpose,
    };
    let ca = |name: &str| {
        let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
        p.distinguished_name.push(DnType::CommonName, name);
        p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        p.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        p
    };
    let root_key = KeyPair::generate().unwrap();
    let root = ca("rk6 test root").self_signed(&root_key).unwrap();
    let int_key = KeyPair::generate().unwrap();
    let intermediate = ca("rk6 test intermediate")
        .signed_by(&int_key, &root, &root_key)
        .unwrap();
    // AuthorityInfoAccess: SEQUENCE { SEQUENCE { caIssuers OID, [6] URI } }.
    let ca_issuers = [0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x30, 0x02];
    let mut description = vec![0x06, 8];
    description.extend(ca_issuers);
    description.extend([0x86, issuer_url.len() as u8]);
    description.extend(issuer_url.as_bytes());
    let mut access = vec![0x30, description.len() as u8];
    access.extend(description);
    let mut aia = vec![0x30, access.len() as u8];
    aia.extend(access);
    let leaf_key = KeyPair::generate().unwrap();
    let mut p = CertificateParams::new(vec!["aia.test".into()]).unwrap();
    p.custom_extensions = vec![CustomExtension::from_oid_content(
        &[1, 3, 6, 1, 5, 5, 7, 1, 1],
        aia,
    )];
    let leaf = p.signed_by(&leaf_key, &intermediate, &int_key).unwrap();
    AiaChain {
        root_pem: root.pem(),
        intermediate_der: intermediate.der().to_vec(),
        leaf,
        leaf_key,
    }
}

/// k6 2.3's `tlsAIAFetch` / `K6_TLS_AIA_FETCH` (release notes v2.3.0, #6137; docs
/// "Options: TLS AIA fetch"): a server that sends its leaf without the intermediate fails
/// with 1310 by default; with the option the intermediate is fetched from the leaf's AIA URL
/// (once for the test), the request succeeds, and an IP-literal target is refused with k6's
/// message. An AIA URL that answers 404 leaves the chain incomplete: 1310 again.
#[test]
fn tls_aia_fetch_completes_a_chain_the_server_left_short() {
    use std::io::{Read, Write};
    use std::sync::atomic::{AtomicUsize, Ordering};
    let dir = Dir::new("k6x-aia");
    // The CA's download point: /int.der serves the intermediate, anything else 404.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let http_port = listener.local_addr().unwrap().port();
    let chain = aia_chain(&format!("http://127.0.0.1:{http_port}/int.der"));
    let broken = aia_chain(&format!("http://127.0.0.1:{http_port}/missing.der"));
    let fetches = std::sync::Arc::new(AtomicUsize::new(0));
    {
        let fetches = fetches.clone();
        let der = chain.intermediate_der.clone();
        std::thread::spawn(move || {
            for mut conn in listener.incoming().flatten().take(50) {
                let mut req = [0u8; 2048];
                let n = conn.read(&mut req).unwrap_or(0);
                let head = String::from_utf8_lossy(&req[..n]).into_owned();
                if head.starts_with("GET /int.der ") {
                    fetches.fetch_add(1, Ordering::SeqCst);
                    let _ = write!(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/pkix-cert\r\nContent-Length: {}\r\n\r\n", der.len());
                    let _ = conn.write_all(&der);
                } else {
                    let _ = conn.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
                }
            }
        });
    }
    // Two HTTPS servers presenting only their leaf, as a misconfigured server does.
    let serve = |c: &AiaChain| {
        let tls = tokio_rustls::TlsAcceptor::from(crate::support::tls_server_config(
            &c.leaf,
            &c.leaf_key,
            &[b"http/1.1"],
        ));
        crate::support::accept_loop(std::time::Duration::from_secs(60), move |tcp| {
            let tls = tls.clone();
            async move {
                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                let Ok(mut s) = tls.accept(tcp).await else {
                    return;
                };
                let mut buf = [0u8; 2048];
                let _ = s.read(&mut buf).await;
                let _ = s
                    .write_all(
                        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
                    )
                    .await;
                let _ = s.shutdown().await;
            }
        })
    };
    let good = serve(&chain).port();
    let bad = serve(&broken).port();
    let roots = dir.write(
        "roots.pem",
        &format!("{}{}", chain.root_pem, broken.root_pem),
    );
    let script = dir.write(
        "aia.js",
        &format!(
            "import http from 'k6/http';\n\
             export const options = {{ iterations: 1, hosts: {{ 'aia.test': '127.0.0.1' }} }};\n\
             const show = (what, url) => {{ const r = http.get(url); console.log(`${{what}} ${{r.status}} ${{r.error_code}} ${{r.error}}`); }};\n\
             export default function () {{\n\
               show('NAME', 'https://aia.test:{good}/');\n\
               show('AGAIN', 'https://aia.test:{good}/again');\n\
               show('IP', 'https://127.0.0.1:{good}/');\n\
               show('BROKEN', 'https://aia.test:{bad}/');\n\
             }}\n"
        ),
    );
    let roots = roots.to_str().unwrap();
    let off = crate::rk6_env(
        &["run", "-q", script.to_str().unwrap()],
        &dir.0,
        &[("SSL_CERT_FILE", roots)],
    );
    assert!(
        off.stderr.contains("NAME 0 1310 x509: unknown authority"),
        "{}",
        off.stderr
    );
    assert_eq!(fetches.load(Ordering::SeqCst), 0, "no fetch unless asked");
    let on = crate::rk6_env(
        &["run", "-q", script.to_str().unwrap()],
        &dir.0,
        &[("SSL_CERT_FILE", roots), ("K6_TLS_AIA_FETCH", "true")],
    );
    assert_eq!(on.code, 0, "{}", on.stderr);
    assert!(on.stderr.contains("NAME 200 0"), "{}", on.stderr);
    assert!(on.stderr.contains("AGAIN 200 0"), "{}", on.stderr);
    assert_eq!(
        fetches.load(Ordering::SeqCst),
        1,
        "fetched once for the test"
    );
    assert!(
        on.stderr.contains("IP 0 1300 tls: failed to verify certificate: tlsAIAFetch: cannot verify hostname for IP-literal target"),
        "{}",
        on.stderr
    );
    assert!(
        on.stderr.contains("BROKEN 0 1310 x509: unknown authority"),
        "{}",
        on.stderr
    );
    // The option in the script, as k6 reads it there too.
    let in_script = dir.write(
        "in_script.js",
        &format!(
            "import http from 'k6/http';\n\
             export const options = {{ iterations: 1, tlsAIAFetch: true, hosts: {{ 'aia.test': '127.0.0.1' }} }};\n\
             export default function () {{ const r = http.get('https://aia.test:{good}/'); console.log(`SCRIPT ${{r.status}}`); }}\n"
        ),
    );
    let run = crate::rk6_env(
        &["run", "-q", in_script.to_str().unwrap()],
        &dir.0,
        &[("SSL_CERT_FILE", roots)],
    );
    assert!(run.stderr.contains("SCRIPT 200"), "{}", run.stderr);
}
