//! BASE against NEW: one row per metric and stat of either run, and each limit's verdict.

use std::path::Path;

use super::error::CompareError;
use super::limit::{Direction, Limit};
use super::summary_file::RunStats;

/// One stat of one metric in both runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Metric or sub-metric name.
    pub metric: String,
    /// Stat name.
    pub stat: String,
    /// BASE's value; `None` when BASE lacks the metric or stat.
    pub base: Option<f64>,
    /// NEW's value; `None` when NEW lacks it.
    pub new: Option<f64>,
    /// Which way is worse, when known: a limit's direction, else the built-in metric's.
    pub worse: Option<Direction>,
}

impl Row {
    /// NEW's change against BASE in percent, when both have the stat.
    pub fn change(&self) -> Option<f64> {
        Some(relative_change(self.base?, self.new?))
    }
}

/// A limit and what the runs made of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The limit.
    pub limit: Limit,
    /// BASE's value of its stat.
    pub base: f64,
    /// NEW's value.
    pub new: f64,
    /// The change in percent.
    pub change: f64,
    /// The change goes beyond the limit.
    pub exceeded: bool,
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// Metrics sorted by name; a metric's stats in BASE's order, NEW's extra ones after.
    pub rows: Vec<Row>,
    /// One verdict per limit, in the order given.
    pub verdicts: Vec<Verdict>,
}

impl Comparison {
    /// Whether some limit is exceeded (the exit code 99).
    pub fn failed(&self) -> bool {
        self.verdicts.iter().any(|v| v.exceeded)
    }
}

/// Compares `new` against `base` and judges the limits; a limit naming a metric or stat
/// either side lacks is an error (a gate that cannot be judged must not pass silently).
/// `paths` name the two sides in that error.
pub fn compare(
    base: &RunStats,
    new: &RunStats,
    limits: &[Limit],
    paths: (&Path, &Path),
) -> Result<Comparison, CompareError> {
    let mut verdicts = Vec::with_capacity(limits.len());
    for limit in limits {
        let side_value = |run: &RunStats, side: &'static str, path: &Path| {
            run.get(&limit.metric, &limit.stat)
                .ok_or_else(|| CompareError::Missing {
                    limit: limit.source.clone(),
                    side,
                    path: path.to_owned(),
                    what: if run.metrics.contains_key(&limit.metric) {
                        format!("stat {:?} of {:?}", limit.stat, limit.metric)
                    } else {
                        format!("metric {:?}", limit.metric)
                    },
                })
        };
        let b = side_value(base, "BASE", paths.0)?;
        let n = side_value(new, "NEW", paths.1)?;
        let change = relative_change(b, n);
        verdicts.push(Verdict {
            limit: limit.clone(),
            base: b,
            new: n,
            change,
            exceeded: limit.exceeded_by(change),
        });
    }

    let mut names: Vec<&String> = base.metrics.keys().chain(new.metrics.keys()).collect();
    names.sort();
    names.dedup();
    let mut rows = Vec::new();
    for name in names {
        let empty = Vec::new();
        let b = base.metrics.get(name).unwrap_or(&empty);
        let n = new.metrics.get(name).unwrap_or(&empty);
        let extra = n.iter().filter(|(s, _)| !b.iter().any(|(k, _)| k == s));
        for (stat, _) in b.iter().chain(extra) {
            // A Rate's `value` is its `rate` row; a Gauge has no `rate` to confuse it with.
            let limited = limits.iter().find(|l| {
                &l.metric == name && (&l.stat == stat || (l.stat == "value" && stat == "rate"))
            });
            rows.push(Row {
                metric: name.clone(),
                stat: stat.clone(),
                base: base.get(name, stat),
                new: new.get(name, stat),
                worse: limited
                    .map(|l| l.direction)
                    .or_else(|| worse_when(name, stat)),
            });
        }
    }
    Ok(Comparison { rows, verdicts })
}

/// NEW against BASE in percent of BASE; from zero any move is infinite.
pub fn relative_change(base: f64, new: f64) -> f64 {
    if base == new {
        0.0
    } else if base == 0.0 {
        f64::INFINITY.copysign(new)
    } else {
        (new - base) / base.abs() * 100.0
    }
}

/// Which way k6's built-in metrics get worse, for the table's colours (limits say it
/// themselves); custom metrics have no known direction.
fn worse_when(metric: &str, stat: &str) -> Option<Direction> {
    let base = metric.split('{').next().unwrap_or(metric);
    let time_trend = matches!(
        base,
        "http_req_duration"
            | "http_req_blocked"
            | "http_req_connecting"
            | "http_req_tls_handshaking"
            | "http_req_sending"
            | "http_req_waiting"
            | "http_req_receiving"
            | "iteration_duration"
            | "iteration_start_delay"
            | "iteration_duration_corrected"
            | "first_response_corrected"
            | "group_duration"
            | "grpc_req_duration"
            | "ws_connecting"
            | "ws_ping"
    );
    match (base, stat) {
        (_, "avg" | "min" | "med" | "max") if time_trend => Some(Direction::Rise),
        (_, s) if time_trend && s.starts_with("p(") => Some(Direction::Rise),
        ("http_req_failed" | "dropped_iterations" | "iterations_unserved", "rate" | "count") => {
            Some(Direction::Rise)
        }
        ("checks" | "http_reqs" | "iterations", "rate" | "count") => Some(Direction::Drop),
        ("http_conns_opened", "count" | "rate") => Some(Direction::Rise),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(doc: serde_json::Value) -> RunStats {
        RunStats::from_export(&json!({ "metrics": doc })).unwrap()
    }

    fn paths() -> (&'static Path, &'static Path) {
        (Path::new("base.json"), Path::new("new.json"))
    }

    #[test]
    fn relative_changes() {
        assert_eq!(relative_change(100.0, 110.0), 10.0);
        assert_eq!(relative_change(2.0, 1.0), -50.0);
        assert_eq!(relative_change(-2.0, -1.0), 50.0);
        assert_eq!(relative_change(0.0, 0.0), 0.0);
        assert_eq!(relative_change(0.0, 3.0), f64::INFINITY);
        assert_eq!(relative_change(0.0, -3.0), f64::NEG_INFINITY);
    }

    #[test]
    fn rows_cover_both_runs_and_limits_are_judged() {
        let base = run(json!({
            "http_req_duration": {"avg": 10, "p(95)": 20},
            "checks": {"passes": 99, "fails": 1, "value": 0.99},
            "gone": {"count": 1, "rate": 1}
        }));
        let new = run(json!({
            "http_req_duration": {"avg": 10.5, "p(95)": 23, "p(99)": 40},
            "checks": {"passes": 90, "fails": 10, "value": 0.9},
            "fresh": {"value": 3}
        }));
        let limits = [
            Limit::parse("http_req_duration:p(95)=10%").unwrap(),
            Limit::parse("http_req_duration:avg=10%").unwrap(),
            Limit::parse("checks:value=-5%").unwrap(),
        ];
        let c = compare(&base, &new, &limits, paths()).unwrap();
        let keys: Vec<(&str, &str)> = c
            .rows
            .iter()
            .map(|r| (r.metric.as_str(), r.stat.as_str()))
            .collect();
        assert_eq!(
            keys,
            [
                ("checks", "rate"),
                ("checks", "passes"),
                ("checks", "fails"),
                ("fresh", "value"),
                ("gone", "count"),
                ("gone", "rate"),
                ("http_req_duration", "avg"),
                ("http_req_duration", "p(95)"),
                ("http_req_duration", "p(99)"),
            ]
        );
        assert_eq!(c.rows[3].base, None);
        assert_eq!(c.rows[4].new, None);
        assert_eq!(c.rows[4].change(), None);
        assert_eq!(c.rows[7].change(), Some(15.0));
        assert_eq!(c.rows[0].worse, Some(Direction::Drop), "from the limit");
        assert_eq!(c.rows[3].stat, "value");
        assert_eq!(c.rows[3].worse, None, "custom metric");
        let judged: Vec<(bool, f64)> = c
            .verdicts
            .iter()
            .map(|v| (v.exceeded, v.change.round()))
            .collect();
        assert_eq!(judged, [(true, 15.0), (false, 5.0), (true, -9.0)]);
        assert!(c.failed());
        let c = compare(&base, &new, &limits[1..2], paths()).unwrap();
        assert!(!c.failed());
    }

    #[test]
    fn a_limit_gives_its_row_a_direction() {
        let base = run(json!({"vus": {"value": 1, "min": 1, "max": 1}, "custom": {"count": 1}}));
        let new = run(json!({"vus": {"value": 2, "min": 1, "max": 2}, "custom": {"count": 2}}));
        let limits = [
            Limit::parse("vus:value=-10%").unwrap(),
            Limit::parse("custom:count=-10%").unwrap(),
        ];
        let c = compare(&base, &new, &limits, paths()).unwrap();
        let worse: Vec<_> = c.rows.iter().map(|r| (r.stat.as_str(), r.worse)).collect();
        assert_eq!(
            worse,
            [
                ("count", Some(Direction::Drop)),
                ("value", Some(Direction::Drop)),
                ("min", None),
                ("max", None),
            ]
        );
        assert!(!c.failed());
    }

    #[test]
    fn a_limit_on_what_a_run_lacks_is_an_error_naming_the_side() {
        let base = run(json!({"http_reqs": {"count": 1, "rate": 1}}));
        let new = run(json!({"http_reqs": {"count": 1}}));
        let err = |l: &str| {
            compare(&base, &new, &[Limit::parse(l).unwrap()], paths())
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err("http_reqs:rate=-5%"),
            "--max-regression \"http_reqs:rate=-5%\": stat \"rate\" of \"http_reqs\" is not in the NEW summary new.json"
        );
        assert_eq!(
            err("vus:value=5%"),
            "--max-regression \"vus:value=5%\": metric \"vus\" is not in the BASE summary base.json"
        );
    }
}
