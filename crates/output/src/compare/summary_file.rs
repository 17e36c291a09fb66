//! A `--summary-export` document read back: every metric with its stats, in one order
//! whoever wrote the file (k6 writes a metric's keys in Go's random map order).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::error::CompareError;

/// The stats of one run, by metric name (sorted), each metric's stats in display order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunStats {
    /// Metric (or `metric{tags}` sub-metric) → `(stat, value)` pairs.
    pub metrics: BTreeMap<String, Vec<(String, f64)>>,
}

impl RunStats {
    /// Reads a `--summary-export` file written by rk6 or k6.
    pub fn read(path: &Path) -> Result<RunStats, CompareError> {
        let bad = |why: String| CompareError::File {
            path: path.to_owned(),
            why,
        };
        let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
        let value: Value =
            serde_json::from_str(&text).map_err(|e| bad(format!("not JSON: {e}")))?;
        RunStats::from_export(&value).map_err(bad)
    }

    /// The stats of an export document; the error says which part is not in its layout.
    pub fn from_export(doc: &Value) -> Result<RunStats, String> {
        let metrics = doc
            .get("metrics")
            .and_then(Value::as_object)
            .ok_or("no \"metrics\" object: not a --summary-export file")?;
        let mut out = BTreeMap::new();
        for (name, stats) in metrics {
            let stats = stats
                .as_object()
                .ok_or_else(|| format!("metric {name:?} is not an object"))?;
            // A Rate's share is `value` in this format and `rate` in thresholds; the
            // threshold name is the one a limit uses.
            let is_rate = stats.contains_key("passes") && stats.contains_key("fails");
            let mut list = Vec::new();
            for (stat, v) in stats {
                if stat == "thresholds" {
                    continue;
                }
                let v = match v {
                    Value::Number(n) => n.as_f64().unwrap_or(f64::NAN),
                    // NaN and infinities are written as null: no value to compare.
                    Value::Null => continue,
                    _ => return Err(format!("{name:?}.{stat:?} is not a number")),
                };
                let stat = if is_rate && stat == "value" {
                    "rate"
                } else {
                    stat
                };
                list.push((stat.to_owned(), v));
            }
            list.sort_by(|(a, _), (b, _)| rank(a).total_cmp(&rank(b)).then(a.cmp(b)));
            out.insert(name.clone(), list);
        }
        Ok(RunStats { metrics: out })
    }

    /// A stat's value; for a Rate, `value` is an alias of `rate`.
    pub fn get(&self, metric: &str, stat: &str) -> Option<f64> {
        let stats = self.metrics.get(metric)?;
        let find = |s: &str| stats.iter().find(|(k, _)| k == s).map(|&(_, v)| v);
        find(stat).or_else(|| {
            let rate = stats.iter().any(|(k, _)| k == "passes");
            (rate && stat == "value").then(|| find("rate")).flatten()
        })
    }
}

/// Display order of stats: a Gauge's `value`, a Counter's `count`, `rate`, a Trend's
/// `avg`, `min`, `med`, `max` and percentiles ascending, a Rate's `passes`, `fails`.
fn rank(stat: &str) -> f64 {
    match stat {
        "value" => 0.0,
        "count" => 1.0,
        "rate" => 2.0,
        "avg" => 3.0,
        "min" => 4.0,
        "med" => 5.0,
        "max" => 6.0,
        "passes" => 1000.0,
        "fails" => 1001.0,
        _ => stat
            .strip_prefix("p(")
            .and_then(|s| s.strip_suffix(')'))
            .and_then(|p| p.parse::<f64>().ok())
            .map_or(2000.0, |p| 10.0 + p),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stats_come_in_one_order_and_rates_are_named_as_in_thresholds() {
        let doc = json!({"metrics": {
            "http_req_duration": {"p(95)": 3, "max": 4, "p(90)": 2.5, "avg": 1, "med": 1.5,
                                  "min": 0.5, "thresholds": {"p(95)<1": true}},
            "checks": {"fails": 1, "value": 0.75, "passes": 3},
            "vus": {"max": 2, "value": 1, "min": 1},
            "http_reqs": {"rate": 10.5, "count": 21},
            "odd": {"zeta": 1, "p(99.9)": 2, "alpha": 3, "nan": null}
        }, "root_group": {}});
        let run = RunStats::from_export(&doc).unwrap();
        let stats =
            |m: &str| -> Vec<&str> { run.metrics[m].iter().map(|(s, _)| s.as_str()).collect() };
        assert_eq!(
            stats("http_req_duration"),
            ["avg", "min", "med", "max", "p(90)", "p(95)"]
        );
        assert_eq!(stats("checks"), ["rate", "passes", "fails"]);
        assert_eq!(stats("vus"), ["value", "min", "max"]);
        assert_eq!(stats("http_reqs"), ["count", "rate"]);
        assert_eq!(stats("odd"), ["p(99.9)", "alpha", "zeta"]);
        assert_eq!(run.get("checks", "rate"), Some(0.75));
        assert_eq!(run.get("checks", "value"), Some(0.75));
        assert_eq!(run.get("vus", "value"), Some(1.0));
        assert_eq!(run.get("vus", "rate"), None);
        assert_eq!(run.get("nope", "avg"), None);
    }

    #[test]
    fn documents_of_another_shape_are_refused() {
        assert!(RunStats::from_export(&json!({"state": {}}))
            .unwrap_err()
            .contains("no \"metrics\""));
        assert!(RunStats::from_export(&json!({"metrics": []})).is_err());
        assert!(RunStats::from_export(&json!({"metrics": {"a": 1}}))
            .unwrap_err()
            .contains("\"a\" is not an object"));
        assert!(
            RunStats::from_export(&json!({"metrics": {"a": {"avg": "1"}}}))
                .unwrap_err()
                .contains("\"a\".\"avg\"")
        );
    }

    #[test]
    fn unreadable_files_name_the_file() {
        let err = RunStats::read(Path::new("/nonexistent/base.json")).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/base.json"), "{err}");
    }
}
