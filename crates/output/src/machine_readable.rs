//! k6 1.5's machine-readable summary (`--new-machine-readable-summary`, schema `1.0.0`): the
//! `data` of `handleSummary(data)` and the `--summary-export` document when it is on.
//!
//! ```text
//! { config:   { duration (s), execution: "local", script (the main script's text) },
//!   metadata: { generated_at (RFC 3339), k6_version },
//!   results:  { checks: { metrics: [checks_total, checks_failed, checks_succeeded],
//!                         results: [{ fails, name, passes }] },
//!               metrics: [{ contains, name, type, values }] },
//!   version:  "1.0.0" }
//! ```
//!
//! The key names are those k6's JavaScript bridge gives its Go types (snake_case, so a
//! trend's `p90`/`p95`, not `p(90)`), in their declaration order, which is alphabetical.
//! `values` per type: counter `{count}`, gauge `{max, min, value}`, rate `{matches, rate,
//! total}` (`matches`: the non-zero samples), trend `{avg, max, med, min, p90, p95}`, each
//! `null` when `summaryTrendStats` does not ask for it (the bridge shows a missing
//! optional field as `null`). Thresholds are not part of the schema.
//!
//! The metric list is the summary's: k6 leaves out `checks` (it is the `checks` block) and
//! `group_duration`, in compact mode the HTTP timing phases besides `http_req_duration`,
//! each by name prefix as k6 does. The metrics come by k6's sections (HTTP, execution,
//! network, browser, web vitals, gRPC, WebSocket, custom); k6 orders a section at random
//! (a Go map), rk6 by name.

use std::time::SystemTime;

use serde_json::{json, Value};

use rk6_metrics::{MetricSummary, MetricType, SummaryData};

use crate::json::num;
use crate::text::SummaryMode;
use crate::timestamp::rfc3339;

/// The schema version the document carries.
pub const SCHEMA_VERSION: &str = "1.0.0";

/// What the machine-readable summary tells besides the results.
#[derive(Debug, Clone, Copy)]
pub struct MachineReadableMeta<'a> {
    /// The main script's text (k6 puts the script itself there, not its path).
    pub script: &'a str,
    /// The k6 version rk6 answers for.
    pub k6_version: &'a str,
    /// When the summary was made.
    pub generated_at: SystemTime,
    /// The summary mode: compact leaves the HTTP timing phases out, as its text does.
    pub mode: SummaryMode,
}

/// The machine-readable summary of `data` (which metrics it holds is the caller's choice:
/// k6's only, unless `--rk6-metrics`).
pub fn machine_readable_summary(data: &SummaryData, meta: &MachineReadableMeta) -> Value {
    let mut listed: Vec<&MetricSummary> = data
        .metrics
        .iter()
        .filter(|m| !skipped(&m.name, meta.mode))
        .collect();
    // Stable: by name within a section, as `data.metrics` is sorted.
    listed.sort_by_key(|m| section(&m.name));
    json!({
        "config": {
            "duration": num(data.duration.as_secs_f64()),
            "execution": "local",
            "script": meta.script,
        },
        "metadata": {
            "generated_at": rfc3339(meta.generated_at, true),
            "k6_version": meta.k6_version,
        },
        "results": {
            "checks": checks(data),
            "metrics": listed.into_iter().map(metric).collect::<Vec<_>>(),
        },
        "version": SCHEMA_VERSION,
    })
}

/// The document as k6 writes it to `--summary-export`: `JSON.stringify(data, null, 4)`.
pub fn machine_readable_text(summary: &Value) -> String {
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
    serde::Serialize::serialize(summary, &mut ser).expect("a JSON value serializes");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// Whether k6 leaves the metric out of the summary's lists: by prefix, so a custom metric
/// named `checks_…` or `group_duration_…` is left out too.
fn skipped(name: &str, mode: SummaryMode) -> bool {
    const ALWAYS: [&str; 2] = ["checks", "group_duration"];
    const COMPACT: [&str; 6] = [
        "http_req_blocked",
        "http_req_connecting",
        "http_req_receiving",
        "http_req_sending",
        "http_req_tls_handshaking",
        "http_req_waiting",
    ];
    let any = |prefixes: &[&str]| prefixes.iter().any(|p| name.starts_with(p));
    any(&ALWAYS) || (mode == SummaryMode::Compact && any(&COMPACT))
}

/// k6's summary section of a metric (by name prefix, sub-metrics with their parent), as
/// the index of its place in k6's list of sections.
fn section(name: &str) -> usize {
    const HTTP: [&str; 9] = [
        "http_reqs",
        "http_req_failed",
        "http_req_duration",
        "http_req_blocked",
        "http_req_connecting",
        "http_req_tls_handshaking",
        "http_req_sending",
        "http_req_waiting",
        "http_req_receiving",
    ];
    const EXECUTION: [&str; 5] = [
        "vus",
        "vus_max",
        "iterations",
        "iteration_duration",
        "dropped_iterations",
    ];
    const NETWORK: [&str; 2] = ["data_sent", "data_received"];
    let any = |prefixes: &[&str]| prefixes.iter().any(|p| name.starts_with(p));
    if any(&HTTP) {
        0
    } else if any(&EXECUTION) {
        1
    } else if any(&NETWORK) {
        2
    } else if name.starts_with("browser_web_vital_") {
        4
    } else if name.starts_with("browser_") {
        3
    } else if name.starts_with("grpc_") {
        5
    } else if name.starts_with("ws_") {
        6
    } else {
        7
    }
}

/// One `{contains, name, type, values}` entry.
fn metric(m: &MetricSummary) -> Value {
    json!({
        "contains": m.contains.as_str(),
        "name": m.name,
        "type": m.kind.as_str(),
        "values": values(m),
    })
}

/// The values of a metric in its type's schema; a value the summary lacks is 0, as k6
/// reads a missing one.
fn values(m: &MetricSummary) -> Value {
    let v = |key: &str| m.value(key).unwrap_or(0.0);
    match m.kind {
        MetricType::Counter => json!({ "count": num(v("count")) }),
        MetricType::Gauge => json!({
            "max": num(v("max")),
            "min": num(v("min")),
            "value": num(v("value")),
        }),
        MetricType::Rate => rate(v("passes"), v("fails"), v("rate")),
        MetricType::Trend => {
            const STATS: [(&str, &str); 6] = [
                ("avg", "avg"),
                ("max", "max"),
                ("med", "med"),
                ("min", "min"),
                ("p90", "p(90)"),
                ("p95", "p(95)"),
            ];
            let values = STATS
                .iter()
                .map(|(key, stat)| (key.to_string(), m.value(stat).map_or(Value::Null, num)));
            Value::Object(values.collect())
        }
    }
}

/// A rate's values: `matches` are the non-zero samples (integers in k6's schema).
fn rate(matches: f64, others: f64, rate: f64) -> Value {
    json!({
        "matches": matches as i64,
        "rate": num(rate),
        "total": (matches + others) as i64,
    })
}

/// The `checks` block: the three check metrics from the `checks` rate, in k6's order, and
/// every check merged by name in first-seen order; both empty without checks.
fn checks(data: &SummaryData) -> Value {
    let Some(c) = data.metric("checks") else {
        return json!({ "metrics": [], "results": [] });
    };
    let passes = c.value("passes").unwrap_or(0.0);
    let fails = c.value("fails").unwrap_or(0.0);
    let total = passes + fails;
    let failed_share = if total > 0.0 { fails / total } else { 0.0 };
    let entry = |name: &str, kind: &str, values: Value| json!({ "contains": "default", "name": name, "type": kind, "values": values });
    json!({
        "metrics": [
            entry("checks_total", "counter", json!({ "count": num(total) })),
            entry("checks_failed", "rate", rate(fails, passes, failed_share)),
            entry(
                "checks_succeeded",
                c.kind.as_str(),
                rate(passes, fails, c.value("rate").unwrap_or(0.0)),
            ),
        ],
        "results": data.checks.iter().map(|check| json!({
            "fails": check.fails,
            "name": check.name,
            "passes": check.passes,
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{basic_run, metric as summary_metric};
    use rk6_metrics::ValueType;
    use std::time::{Duration, UNIX_EPOCH};

    fn meta(mode: SummaryMode) -> MachineReadableMeta<'static> {
        MachineReadableMeta {
            script: "export default function () {}\n",
            k6_version: "1.5.0",
            generated_at: UNIX_EPOCH + Duration::new(1_796_003_284, 251_000_000),
            mode,
        }
    }

    fn names(v: &Value) -> Vec<&str> {
        v["results"]["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["name"].as_str().unwrap())
            .collect()
    }

    fn entry<'a>(v: &'a Value, name: &str) -> &'a Value {
        v["results"]["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .unwrap_or_else(|| panic!("{name} in {v:#}"))
    }

    fn keys(v: &Value) -> Vec<&str> {
        v.as_object().unwrap().keys().map(String::as_str).collect()
    }

    /// k6 v1.5.0 release notes, #5338: the schema's blocks and keys.
    #[test]
    fn schema_shape() {
        let mut data = basic_run();
        data.duration = Duration::from_micros(2_018_971);
        let v = machine_readable_summary(&data, &meta(SummaryMode::Compact));
        assert_eq!(keys(&v), ["config", "metadata", "results", "version"]);
        assert_eq!(
            v["config"],
            json!({"duration": 2.018971, "execution": "local",
                   "script": "export default function () {}\n"})
        );
        assert_eq!(
            v["metadata"],
            json!({"generated_at": "2026-11-30T01:48:04.251Z", "k6_version": "1.5.0"})
        );
        assert_eq!(keys(&v["results"]), ["checks", "metrics"]);
        assert_eq!(v["version"], "1.0.0");
        for m in v["results"]["metrics"].as_array().unwrap() {
            assert_eq!(keys(m), ["contains", "name", "type", "values"]);
            assert!(m.get("thresholds").is_none(), "{m}");
        }
    }

    #[test]
    fn value_keys_per_metric_type() {
        use MetricType::*;
        let mut data = basic_run();
        data.metrics.push(summary_metric(
            "my_rate",
            Rate,
            ValueType::Default,
            &[("rate", 0.25), ("passes", 1.0), ("fails", 3.0)],
        ));
        let v = machine_readable_summary(&data, &meta(SummaryMode::Compact));
        assert_eq!(entry(&v, "http_reqs")["values"], json!({"count": 40}));
        assert_eq!(entry(&v, "http_reqs")["type"], "counter");
        assert_eq!(entry(&v, "data_sent")["contains"], "data");
        assert_eq!(
            entry(&v, "vus")["values"],
            json!({"max": 2, "min": 2, "value": 2})
        );
        assert_eq!(
            entry(&v, "my_rate")["values"],
            json!({"matches": 1, "rate": 0.25, "total": 4})
        );
        assert_eq!(
            entry(&v, "http_req_failed")["values"],
            json!({"matches": 0, "rate": 0, "total": 40})
        );
        let trend = entry(&v, "http_req_duration");
        assert_eq!(
            (&trend["type"], &trend["contains"]),
            (&json!("trend"), &json!("time"))
        );
        assert_eq!(
            trend["values"],
            json!({"avg": 2.5512, "max": 15.661, "med": 1.4405, "min": 0.7022,
                   "p90": 4.2301, "p95": 5.4102})
        );
    }

    /// Stats `summaryTrendStats` leaves out are `null`; others than the six are not listed.
    #[test]
    fn trend_stats_not_asked_for_are_null() {
        let mut data = basic_run();
        let d = data
            .metrics
            .iter_mut()
            .find(|m| m.name == "http_req_duration")
            .unwrap();
        d.values = vec![("p(99)".into(), 9.0), ("max".into(), 15.5)];
        let v = machine_readable_summary(&data, &meta(SummaryMode::Compact));
        assert_eq!(
            entry(&v, "http_req_duration")["values"],
            json!({"avg": null, "max": 15.5, "med": null, "min": null, "p90": null, "p95": null})
        );
    }

    #[test]
    fn checks_block_in_k6s_order() {
        let mut data = basic_run();
        let c = data
            .metrics
            .iter_mut()
            .find(|m| m.name == "checks")
            .unwrap();
        c.values = vec![
            ("rate".into(), 0.75),
            ("passes".into(), 30.0),
            ("fails".into(), 10.0),
        ];
        let v = machine_readable_summary(&data, &meta(SummaryMode::Compact));
        assert_eq!(
            v["results"]["checks"]["metrics"],
            json!([
                {"contains": "default", "name": "checks_total", "type": "counter",
                 "values": {"count": 40}},
                {"contains": "default", "name": "checks_failed", "type": "rate",
                 "values": {"matches": 10, "rate": 0.25, "total": 40}},
                {"contains": "default", "name": "checks_succeeded", "type": "rate",
                 "values": {"matches": 30, "rate": 0.75, "total": 40}},
            ])
        );
        assert_eq!(
            v["results"]["checks"]["results"],
            json!([{"fails": 0, "name": "status is 200", "passes": 40}])
        );
        assert!(!names(&v).contains(&"checks"));
        data.metrics.retain(|m| m.name != "checks");
        data.checks.clear();
        let v = machine_readable_summary(&data, &meta(SummaryMode::Compact));
        assert_eq!(
            v["results"]["checks"],
            json!({"metrics": [], "results": []})
        );
    }

    /// As the summary's lists: compact hides the HTTP phases, both modes `checks` and
    /// `group_duration` (by prefix); the sections in k6's order, by name within one.
    #[test]
    fn metrics_listed_and_their_order() {
        use MetricType::*;
        let mut data = basic_run();
        for (name, kind) in [
            ("group_duration", Trend),
            ("checks_custom", Counter),
            ("ws_sessions", Counter),
            ("grpc_req_duration", Trend),
            ("browser_web_vital_lcp", Trend),
            ("browser_http_req_duration", Trend),
            ("a_custom", Counter),
        ] {
            data.metrics
                .push(summary_metric(name, kind, ValueType::Default, &[]));
        }
        data.metrics.sort_by(|a, b| a.name.cmp(&b.name));
        let compact = machine_readable_summary(&data, &meta(SummaryMode::Compact));
        let listed = names(&compact);
        for hidden in [
            "checks",
            "checks_custom",
            "group_duration",
            "http_req_blocked",
            "http_req_waiting",
        ] {
            assert!(!listed.contains(&hidden), "{hidden} in {listed:?}");
        }
        let pos = |n: &str| listed.iter().position(|m| *m == n).unwrap();
        let order = [
            "http_req_duration",
            "http_req_duration{expected_response:true}",
            "http_req_failed",
            "http_reqs",
            "iterations",
            "data_received",
            "browser_http_req_duration",
            "browser_web_vital_lcp",
            "grpc_req_duration",
            "ws_sessions",
            "a_custom",
        ];
        for pair in order.windows(2) {
            assert!(pos(pair[0]) < pos(pair[1]), "{pair:?} in {listed:?}");
        }
        let full = machine_readable_summary(&data, &meta(SummaryMode::Full));
        let listed = names(&full);
        assert!(listed.contains(&"http_req_waiting") && listed.contains(&"http_req_blocked"));
        assert!(!listed.contains(&"group_duration"));
    }

    /// `--summary-export` as k6 writes it: `JSON.stringify(data, null, 4)`.
    #[test]
    fn export_text_is_indented_by_four() {
        let text = machine_readable_text(&json!({"version": "1.0.0", "a": [1]}));
        assert_eq!(
            text,
            "{\n    \"version\": \"1.0.0\",\n    \"a\": [\n        1\n    ]\n}"
        );
    }
}
