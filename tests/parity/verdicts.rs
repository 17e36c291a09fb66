//! Verdicts a pipeline gates on, side by side with k6 1.1: thresholds on metrics and
//! sub-metrics that got no samples (per metric type and aggregation, with the line the
//! summary prints for each), the iteration that called `test.abort()`, and a cookie the
//! jar refuses.

use std::process::Command;

use super::{compare, k6, verdicts};
use crate::{rk6, Dir};

/// Thresholds on empty metrics of every type, every aggregation each type allows, and
/// sub-metrics that never match: k6 judges them on zeros at the end (a Rate passes).
const EMPTY_METRICS: &str = r#"
import { Counter, Trend, Rate, Gauge } from 'k6/metrics';
const c = new Counter('c_empty');
const t = new Trend('t_empty');
const r = new Rate('r_empty');
const g = new Gauge('g_empty');
export const options = { iterations: 1, thresholds: {
  c_empty: ['count>=1', 'rate>0', 'count<1'],
  t_empty: ['p(95)<0', 'avg<1', 'min>0', 'max>=0', 'med==0', 'p(99.9)!=0', 'avg>0'],
  r_empty: ['rate>0.5', 'rate<0.5'],
  g_empty: ['value>0', 'value==0'],
  'http_reqs{status:500}': ['count>=1'],
  'iteration_duration{scenario:nope}': ['p(95)<0', 'max<1'],
  'checks{scenario:nope}': ['rate>0'],
}};
export default function () {}
"#;

/// The `█ THRESHOLDS` block of a summary on stdout, up to `█ TOTAL RESULTS`.
fn thresholds_block(stdout: &str) -> String {
    let start = stdout.find("█ THRESHOLDS").unwrap_or(stdout.len());
    let end = stdout.find("█ TOTAL RESULTS").unwrap_or(stdout.len());
    stdout[start..end.max(start)].to_owned()
}

#[test]
fn thresholds_on_empty_metrics_fail_as_in_k6() {
    compare("verdicts-empty", EMPTY_METRICS);
}

#[test]
fn thresholds_block_for_empty_metrics_matches_k6() {
    let Some(bin) = k6() else { return };
    let dir = Dir::new("verdicts-empty-block");
    let path = dir.write("script.js", EMPTY_METRICS);
    let path = path.to_str().unwrap();
    let theirs = Command::new(&bin)
        .args(["run", "-q", "--address", "127.0.0.1:0", path])
        .env("K6_NO_USAGE_REPORT", "true")
        .current_dir(&dir.0)
        .output()
        .expect("run k6");
    let their_error = crossed_line(&String::from_utf8_lossy(&theirs.stderr));
    let theirs = thresholds_block(&String::from_utf8_lossy(&theirs.stdout));
    let ours = rk6(&["run", "-q", path], &dir.0);
    assert!(theirs.contains("✗ 'count>=1' count=0"), "{theirs}");
    assert_eq!(thresholds_block(&ours.stdout), theirs);
    assert!(their_error.is_some());
    assert_eq!(crossed_line(&ours.stderr), their_error);
}

/// The `thresholds on metrics '…' have been crossed` message of a run's log.
fn crossed_line(stderr: &str) -> Option<String> {
    let start = stderr.find("thresholds on metrics")?;
    let end = stderr[start..].find("crossed")? + start + "crossed".len();
    Some(stderr[start..end].to_owned())
}

#[test]
fn aborted_iteration_keeps_its_samples_as_in_k6() {
    // `compare` also checks the `iterations` counts: k6 counts the aborted iteration.
    compare(
        "verdicts-abort",
        r#"
import exec from 'k6/execution';
export const options = { iterations: 3, thresholds: {
  iterations: ['count==1'], iteration_duration: ['max>=0'],
  data_sent: ['count==0'], data_received: ['count==0'],
}};
export default function () { exec.test.abort('stop'); }
"#,
    );
}

#[test]
fn cookie_for_another_domain_is_dropped_silently_as_in_k6() {
    let Some(bin) = k6() else { return };
    let script = r#"
import http from 'k6/http';
import { check } from 'k6';
export const options = { iterations: 1, thresholds: { checks: ['rate==1'] } };
export default function () {
  const jar = http.cookieJar();
  jar.set('http://a.test/', 'x', '1', { domain: 'other.test' });
  jar.set('http://a.test/', 'y', '2');
  const got = jar.cookiesForURL('http://a.test/');
  check(got, {
    'mismatched domain dropped': (c) => c.x === undefined,
    'matching kept': (c) => c.y !== undefined && c.y[0] === '2',
  });
}
"#;
    let dir = Dir::new("verdicts-cookie");
    let path = dir.write("script.js", script);
    let k6 = super::run_k6(&bin, &path, &dir);
    let rk6 = super::run_rk6(&path, &dir);
    assert_eq!(rk6.code, k6.code);
    assert_eq!(super::checks(&rk6.export), super::checks(&k6.export));
    assert_eq!(verdicts(&rk6.export), verdicts(&k6.export));
    assert_eq!(super::checks(&k6.export).len(), 2, "both checks ran in k6");
}

/// Metric names of a `-o json` file (its `Metric` lines), sorted.
fn json_metric_names(path: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut names: Vec<String> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["type"] == "Metric")
        .filter_map(|v| v["data"]["name"].as_str().map(str::to_owned))
        .collect();
    names.sort();
    names.dedup();
    names
}

/// `names` without `vus` and `vus_max`: k6 samples those on a one-second ticker, so a loaded
/// machine can end its 1 s test before the first sample (and rk6 emits them at the start).
fn without_ticker_metrics(mut names: Vec<String>) -> Vec<String> {
    names.retain(|n| n != "vus" && n != "vus_max");
    names
}

#[test]
fn machine_outputs_hold_k6s_metrics_only() {
    let Some(bin) = k6() else { return };
    let dir = Dir::new("verdicts-k6-metrics");
    let path = dir.write(
        "script.js",
        "export const options = { scenarios: { car: { executor: 'constant-arrival-rate', rate: 10, duration: '1s', preAllocatedVUs: 2 } } };\nexport default function () {}\n",
    );
    let theirs = super::run_k6(&bin, &path, &dir);
    let ours = super::run_rk6(&path, &dir);
    let names = |export: &serde_json::Value| -> Vec<String> {
        let mut names: Vec<String> = export["metrics"]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        names.sort();
        names
    };
    assert_eq!(
        without_ticker_metrics(names(&ours.export)),
        without_ticker_metrics(names(&theirs.export)),
        "--summary-export"
    );
    let k6_json = dir.path("k6.json");
    let out = Command::new(&bin)
        .args(["run", "-q", "--address", "127.0.0.1:0", "-o"])
        .arg(format!("json={}", k6_json.display()))
        .arg(&path)
        .env("K6_NO_USAGE_REPORT", "true")
        .current_dir(&dir.0)
        .output()
        .expect("run k6");
    assert!(out.status.success());
    let rk6_json = dir.path("rk6.json");
    let json_arg = format!("json={}", rk6_json.display());
    let path = path.to_str().unwrap();
    rk6(&["run", "-q", "-o", &json_arg, path], &dir.0).assert_code(0);
    assert_eq!(
        without_ticker_metrics(json_metric_names(&rk6_json)),
        without_ticker_metrics(json_metric_names(&k6_json)),
        "-o json"
    );
    // Asked for, rk6's own metric is written too.
    rk6(
        &["run", "-q", "--rk6-metrics", "-o", &json_arg, path],
        &dir.0,
    )
    .assert_code(0);
    assert!(json_metric_names(&rk6_json).contains(&"iteration_start_delay".to_owned()));
}

#[test]
fn handle_summary_sees_k6s_metrics_only() {
    let dir = Dir::new("verdicts-handle-summary-metrics");
    let path = dir.write(
        "script.js",
        "export const options = { scenarios: { car: { executor: 'constant-arrival-rate', rate: 10, duration: '1s', preAllocatedVUs: 2 } } };\nexport default function () {}\nexport function handleSummary(data) { return { 'keys.json': JSON.stringify(Object.keys(data.metrics).sort()) }; }\n",
    );
    let keys = || -> Vec<String> {
        let text = std::fs::read_to_string(dir.path("keys.json")).unwrap_or_default();
        serde_json::from_str(&text).unwrap_or_default()
    };
    let script = path.to_str().unwrap();
    rk6(&["run", "-q", "--address", "", script], &dir.0).assert_code(0);
    let ours = keys();
    assert!(ours.contains(&"iterations".to_owned()), "{ours:?}");
    assert!(
        !ours.contains(&"iteration_start_delay".to_owned()),
        "{ours:?}"
    );
    if let Some(bin) = k6() {
        let out = Command::new(&bin)
            .args(["run", "-q", "--address", "127.0.0.1:0"])
            .arg(&path)
            .env("K6_NO_USAGE_REPORT", "true")
            .current_dir(&dir.0)
            .output()
            .expect("run k6");
        assert!(out.status.success());
        assert_eq!(
            without_ticker_metrics(ours.clone()),
            without_ticker_metrics(keys()),
            "handleSummary data.metrics"
        );
    }
    rk6(
        &["run", "-q", "--address", "", "--rk6-metrics", script],
        &dir.0,
    )
    .assert_code(0);
    assert!(keys().contains(&"iteration_start_delay".to_owned()));
}
