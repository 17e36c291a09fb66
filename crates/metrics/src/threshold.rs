//! The `thresholds` option: parsing, validation against the registry, and evaluation.

use std::time::Duration;

use serde_json::Value;
use thiserror::Error;

use crate::metric::{MetricId, MetricType};
use crate::registry::Registry;
use crate::sink::Sink;
use crate::stat::Stat;
use crate::threshold_parser::{parse_expression, parse_metric_key, Operator};

/// Why the `thresholds` option was rejected (the CLI exits with 104).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ThresholdError {
    /// The key (metric name or sub-metric selector) or the shape of its value is wrong.
    #[error("invalid threshold defined on {key}; reason: {reason}")]
    Key {
        /// The threshold key as written.
        key: String,
        /// What is wrong.
        reason: String,
    },
    /// An expression does not parse or does not fit the metric's type.
    #[error("invalid threshold \"{expression}\" applied on metric {metric}; reason: {reason}")]
    Expression {
        /// The expression as written.
        expression: String,
        /// The metric (with selector) it was declared on.
        metric: String,
        /// What is wrong.
        reason: String,
    },
    /// The option itself is not an object.
    #[error(
        "invalid thresholds option: expected an object of metric names to thresholds, got {0}"
    )]
    NotAnObject(String),
}

/// A sub-metric created by a `metric{tag:value}` threshold key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubMetricSpec {
    /// The parent metric.
    pub parent: MetricId,
    /// `parent{inner}`, e.g. `http_req_duration{expected_response:true}`.
    pub name: String,
    /// The selector's tags in written order.
    pub tags: Vec<(String, String)>,
}

/// Which sink a threshold reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The metric's own sink.
    Metric(MetricId),
    /// A sub-metric, indexing [`ThresholdSet::submetrics`].
    SubMetric(usize),
}

/// One parsed threshold.
#[derive(Debug, Clone)]
pub struct Threshold {
    /// The expression as written, e.g. `p(95)<500`.
    pub source: String,
    /// The metric name it applies to, with selector for sub-metrics.
    pub metric: String,
    /// The sink it reads.
    pub target: Target,
    /// Left-hand side.
    pub stat: Stat,
    /// Left-hand side as written, e.g. `p(95)`.
    pub stat_text: String,
    /// Comparison.
    pub op: Operator,
    /// Right-hand side.
    pub value: f64,
    /// Stop the test when this fails.
    pub abort_on_fail: bool,
    /// Test time before `abort_on_fail` may act.
    pub delay_abort_eval: Duration,
}

impl Threshold {
    /// The aggregated value and whether the threshold holds; an empty sink passes with no value.
    pub fn check(&self, sink: &Sink, elapsed: Duration) -> (bool, Option<f64>) {
        if sink.is_empty() {
            return (true, None);
        }
        // Past the exact phase, percentiles come from histograms; the exact counts kept at
        // the boundary decide the verdict whenever they can.
        let pct = match self.stat {
            Stat::Percentile(p) => Some(p),
            Stat::Med => Some(50.0),
            _ => None,
        };
        if let (Some(pct), Sink::Trend(t)) = (pct, sink) {
            if let Some(ord) = t.percentile_vs(pct, self.value) {
                let v = sink.stat(self.stat, elapsed);
                return (self.op.holds_ordering(ord), v);
            }
        }
        match sink.stat(self.stat, elapsed) {
            Some(v) => (self.op.holds(v, self.value), Some(v)),
            // Validation makes this unreachable; failing is the safe answer.
            None => (false, None),
        }
    }
}

/// All thresholds of a test, plus the sub-metrics their keys create.
#[derive(Debug, Clone, Default)]
pub struct ThresholdSet {
    /// Thresholds in declaration order.
    pub thresholds: Vec<Threshold>,
    /// Sub-metrics in first-declared order, unique by name.
    pub submetrics: Vec<SubMetricSpec>,
}

impl ThresholdSet {
    /// Parses the `thresholds` option object (`null` means none) and validates it against
    /// the registry. Keys are `metric` or `metric{tag:value,...}`; values are a string or an
    /// array of strings and `{threshold, abortOnFail, delayAbortEval}` objects.
    pub fn parse(thresholds: &Value, registry: &Registry) -> Result<ThresholdSet, ThresholdError> {
        let mut set = ThresholdSet::default();
        let map = match thresholds {
            Value::Null => return Ok(set),
            Value::Object(map) => map,
            other => return Err(ThresholdError::NotAnObject(other.to_string())),
        };
        for (key, defs) in map {
            let key_err = |reason: String| ThresholdError::Key {
                key: key.clone(),
                reason,
            };
            let parsed = parse_metric_key(key).map_err(key_err)?;
            let id = registry
                .get(parsed.name)
                .ok_or_else(|| key_err(format!("no metric name \"{}\" found", parsed.name)))?;
            let kind = registry.info(id).kind;
            let target = match parsed.inner {
                None => Target::Metric(id),
                Some(inner) => {
                    let name = format!("{}{{{inner}}}", parsed.name);
                    Target::SubMetric(set.submetric(id, name, parsed.tags))
                }
            };
            let metric = match target {
                Target::Metric(_) => parsed.name.to_owned(),
                Target::SubMetric(i) => set.submetrics[i].name.clone(),
            };
            for def in definitions(defs).map_err(key_err)? {
                let expr =
                    parse_expression(&def.source).map_err(|e| ThresholdError::Expression {
                        expression: def.source.clone(),
                        metric: metric.clone(),
                        reason: e.to_string(),
                    })?;
                if !supports(kind, expr.stat) {
                    return Err(ThresholdError::Expression {
                        expression: def.source.clone(),
                        metric: metric.clone(),
                        reason: format!(
                            "unsupported aggregation method {} on metric of type {kind}. supported aggregation methods for this metric are: {}",
                            expr.stat_text,
                            supported_methods(kind)
                        ),
                    });
                }
                set.thresholds.push(Threshold {
                    source: def.source,
                    metric: metric.clone(),
                    target,
                    stat: expr.stat,
                    stat_text: expr.stat_text,
                    op: expr.op,
                    value: expr.value,
                    abort_on_fail: def.abort_on_fail,
                    delay_abort_eval: def.delay_abort_eval,
                });
            }
        }
        Ok(set)
    }

    /// Whether there are no thresholds.
    pub fn is_empty(&self) -> bool {
        self.thresholds.is_empty()
    }

    /// Number of thresholds.
    pub fn len(&self) -> usize {
        self.thresholds.len()
    }

    /// Index of the sub-metric named `name`, adding it when new.
    pub(crate) fn submetric(
        &mut self,
        parent: MetricId,
        name: String,
        tags: Vec<(String, String)>,
    ) -> usize {
        if let Some(i) = self.submetrics.iter().position(|s| s.name == name) {
            return i;
        }
        self.submetrics.push(SubMetricSpec { parent, name, tags });
        self.submetrics.len() - 1
    }
}

/// Whether k6 allows `stat` in thresholds on a metric of `kind`.
fn supports(kind: MetricType, stat: Stat) -> bool {
    matches!(
        (kind, stat),
        (MetricType::Counter, Stat::Count | Stat::Rate)
            | (MetricType::Gauge, Stat::Value)
            | (MetricType::Rate, Stat::Rate)
            | (
                MetricType::Trend,
                Stat::Avg | Stat::Min | Stat::Max | Stat::Med | Stat::Percentile(_)
            )
    )
}

fn supported_methods(kind: MetricType) -> &'static str {
    match kind {
        MetricType::Counter => "count, rate",
        MetricType::Gauge => "value",
        MetricType::Rate => "rate",
        MetricType::Trend => "avg, min, max, med, p(N)",
    }
}

/// One entry of a key's threshold list before parsing its expression.
struct Definition {
    source: String,
    abort_on_fail: bool,
    delay_abort_eval: Duration,
}

const SHAPE: &str =
    "thresholds must be a string, or an array of strings and {threshold, abortOnFail, delayAbortEval} objects";

fn definitions(defs: &Value) -> Result<Vec<Definition>, String> {
    let items: Vec<&Value> = match defs {
        Value::Array(a) => a.iter().collect(),
        Value::String(_) => vec![defs],
        _ => return Err(SHAPE.into()),
    };
    items.into_iter().map(definition).collect()
}

fn definition(v: &Value) -> Result<Definition, String> {
    match v {
        Value::String(s) => Ok(Definition {
            source: s.clone(),
            abort_on_fail: false,
            delay_abort_eval: Duration::ZERO,
        }),
        Value::Object(o) => {
            let source = o
                .get("threshold")
                .and_then(Value::as_str)
                .ok_or("a threshold object needs a \"threshold\" string")?
                .to_owned();
            let abort_on_fail = match o.get("abortOnFail") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(b)) => *b,
                Some(other) => return Err(format!("abortOnFail must be a boolean, got {other}")),
            };
            let delay_abort_eval = match o.get("delayAbortEval") {
                None | Some(Value::Null) => Duration::ZERO,
                Some(Value::String(s)) => parse_delay(s)
                    .ok_or_else(|| format!("delayAbortEval {s:?} is not a valid duration"))?,
                Some(Value::Number(n)) => n
                    .as_f64()
                    .filter(|ms| *ms >= 0.0 && ms.is_finite())
                    .map(|ms| Duration::from_secs_f64(ms / 1000.0))
                    .ok_or_else(|| format!("delayAbortEval {n} is not a valid duration"))?,
                Some(other) => {
                    return Err(format!(
                        "delayAbortEval must be a duration string, got {other}"
                    ))
                }
            };
            Ok(Definition {
                source,
                abort_on_fail,
                delay_abort_eval,
            })
        }
        _ => Err(SHAPE.into()),
    }
}

/// Reads a `delayAbortEval` duration: Go syntax (`1m30s`, `500ms`, `1.5h`; units ns, us, µs,
/// ms, s, m, h, and k6's d) or a bare number of milliseconds.
fn parse_delay(s: &str) -> Option<Duration> {
    let s = s.trim();
    if let Ok(ms) = s.parse::<f64>() {
        return (ms >= 0.0 && ms.is_finite()).then(|| Duration::from_secs_f64(ms / 1000.0));
    }
    let mut rest = s;
    let mut total = 0.0f64;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .filter(|&n| n > 0)?;
        let n: f64 = rest[..num_len].parse().ok()?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let secs_per_unit = match &rest[..unit_len] {
            "ns" => 1e-9,
            "us" | "µs" | "μs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            "d" => 86400.0,
            _ => return None,
        };
        total += n * secs_per_unit;
        rest = &rest[unit_len..];
    }
    Some(Duration::from_secs_f64(total))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin;
    use serde_json::json;

    fn parse(v: Value) -> Result<ThresholdSet, ThresholdError> {
        ThresholdSet::parse(&v, &Registry::new())
    }

    #[test]
    fn null_and_empty_mean_no_thresholds() {
        assert!(parse(Value::Null).unwrap().is_empty());
        assert!(parse(json!({})).unwrap().is_empty());
        assert!(matches!(
            parse(json!([1])),
            Err(ThresholdError::NotAnObject(_))
        ));
    }

    #[test]
    fn strings_arrays_and_objects() {
        let set = parse(json!({
            "http_req_duration": ["p(95)<500", {"threshold": "avg<100", "abortOnFail": true, "delayAbortEval": "1m30s"}],
            "http_req_failed": "rate<0.01",
        }))
        .unwrap();
        assert_eq!(set.len(), 3);
        let t = &set.thresholds[1];
        assert_eq!(t.source, "avg<100");
        assert_eq!(t.metric, "http_req_duration");
        assert_eq!(t.target, Target::Metric(builtin::HTTP_REQ_DURATION));
        assert!(t.abort_on_fail);
        assert_eq!(t.delay_abort_eval, Duration::from_secs(90));
        assert_eq!(
            set.thresholds[2].target,
            Target::Metric(builtin::HTTP_REQ_FAILED)
        );
        assert!(!set.thresholds[0].abort_on_fail);
        assert!(set.submetrics.is_empty());
    }

    #[test]
    fn submetric_keys_create_unique_submetrics() {
        let set = parse(json!({
            "http_req_duration{scenario:a}": ["p(99)<1000"],
            "http_req_duration{ scenario:a }": ["p(90)<1000"],
            "http_reqs{status:200,method:GET}": ["count>0"],
        }))
        .unwrap();
        assert_eq!(set.submetrics.len(), 2);
        assert_eq!(set.submetrics[0].name, "http_req_duration{scenario:a}");
        assert_eq!(set.submetrics[0].parent, builtin::HTTP_REQ_DURATION);
        assert_eq!(
            set.thresholds[1].target,
            Target::SubMetric(0),
            "trimmed selector is the same sub-metric"
        );
        assert_eq!(
            set.submetrics[1].tags,
            vec![
                ("status".into(), "200".into()),
                ("method".into(), "GET".into())
            ]
        );
        assert_eq!(set.thresholds[2].metric, "http_reqs{status:200,method:GET}");
    }

    #[test]
    fn k6_messages_for_unknown_metric_and_wrong_method() {
        assert_eq!(
            parse(json!({"nope_metric": ["count>0"]})).unwrap_err().to_string(),
            "invalid threshold defined on nope_metric; reason: no metric name \"nope_metric\" found"
        );
        assert_eq!(
            parse(json!({"http_reqs": ["avg>1"]})).unwrap_err().to_string(),
            "invalid threshold \"avg>1\" applied on metric http_reqs; reason: unsupported aggregation method avg on metric of type counter. supported aggregation methods for this metric are: count, rate"
        );
        let e = parse(json!({"vus": ["max>1"]})).unwrap_err().to_string();
        assert!(
            e.ends_with("supported aggregation methods for this metric are: value"),
            "{e}"
        );
        let e = parse(json!({"checks": ["count>1"]}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("of type rate"), "{e}");
        let e = parse(json!({"iteration_duration": ["rate>1"]}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("avg, min, max, med, p(N)"), "{e}");
        let e = parse(json!({"nope{a:b}": ["count>0"]}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("no metric name \"nope\" found"), "{e}");
    }

    #[test]
    fn every_type_accepts_its_methods() {
        parse(json!({
            "http_reqs": ["count>0", "rate>0"],
            "vus": ["value>0"],
            "checks": ["rate>0.9"],
            "http_req_duration": ["avg<1", "min<1", "max<1", "med<1", "p(99.9)<1"],
        }))
        .unwrap();
    }

    #[test]
    fn bad_inputs() {
        for bad in [
            json!({"http_reqs": 5}),
            json!({"http_reqs": [5]}),
            json!({"http_reqs": [{"abortOnFail": true}]}),
            json!({"http_reqs": [{"threshold": "count>0", "abortOnFail": "yes"}]}),
            json!({"http_reqs": [{"threshold": "count>0", "delayAbortEval": "soon"}]}),
            json!({"http_reqs": ["count>"]}),
            json!({"http_reqs": ["count"]}),
            json!({"http_req_duration": ["p(200)<5"]}),
            json!({"http_req_duration{status:200": ["avg<5"]}),
            json!({"http_req_duration{status:}": ["avg<5"]}),
            json!({"http_req_duration{}": ["avg<5"]}),
        ] {
            assert!(parse(bad.clone()).is_err(), "{bad} should fail");
        }
        let e = parse(json!({"http_req_duration{status:200": ["avg<5"]})).unwrap_err();
        assert!(matches!(e, ThresholdError::Key { .. }), "{e}");
        assert!(e
            .to_string()
            .starts_with("invalid threshold defined on http_req_duration{status:200; reason: "));
        let e = parse(json!({"http_reqs": ["count"]})).unwrap_err();
        assert!(
            e.to_string().starts_with(
                "invalid threshold \"count\" applied on metric http_reqs; reason: malformed"
            ),
            "{e}"
        );
    }

    #[test]
    fn delay_durations() {
        assert_eq!(parse_delay("10s"), Some(Duration::from_secs(10)));
        assert_eq!(parse_delay("1h2m3s"), Some(Duration::from_secs(3723)));
        assert_eq!(parse_delay("1.5s"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_delay("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(parse_delay("1d"), Some(Duration::from_secs(86400)));
        assert_eq!(parse_delay("300"), Some(Duration::from_millis(300)));
        assert_eq!(parse_delay("10x"), None);
        assert_eq!(parse_delay("s"), None);
        assert_eq!(parse_delay("-1s"), None);
    }

    #[test]
    fn empty_sink_passes_and_values_compare() {
        let set = parse(json!({"http_req_duration": ["p(95)<500"]})).unwrap();
        let t = &set.thresholds[0];
        let mut sink = Sink::new(MetricType::Trend);
        assert_eq!(t.check(&sink, Duration::from_secs(1)), (true, None));
        sink.add(600.0);
        assert_eq!(t.check(&sink, Duration::from_secs(1)), (false, Some(600.0)));
    }
}
