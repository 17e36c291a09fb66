//! The `thresholds` option: parsing, validation against the registry, and evaluation.

use std::time::Duration;

use serde_json::Value;
use thiserror::Error;

use rk6_options::duration::duration_from_json;
use rk6_options::GoDuration;

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
    /// `parent{inner}`, e.g. `http_req_duration{expected_response:true}`; the first key
    /// that named this tag set.
    pub name: String,
    /// The selector's tags, one value per key, in first-written order.
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
    /// The metric's type.
    pub kind: MetricType,
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
    /// `delayAbortEval`: `abort_on_fail` acts once the test has run longer than this; `None`
    /// (not given) acts at once. Signed, as k6 accepts negative durations here.
    pub delay_abort_eval: Option<GoDuration>,
}

/// When a threshold is evaluated: k6 skips metrics without samples while the test runs
/// and judges them at the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// The periodic evaluation during the run: a metric without samples is not judged.
    During,
    /// The end of the test: every threshold is judged.
    Final,
}

impl Threshold {
    /// Whether the threshold holds, and the value it was judged on (`None` when it was not
    /// judged). At the end of the test a metric without samples is judged on k6's zeros —
    /// a Counter's count and rate, a Gauge's value and every Trend statistic are 0 — except
    /// a Rate, which has no rate to compare and passes.
    pub fn check(&self, sink: &Sink, elapsed: Duration, pass: Pass) -> (bool, Option<f64>) {
        if sink.is_empty() && (pass == Pass::During || self.kind == MetricType::Rate) {
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

    /// Whether a failure now stops the test (`abortOnFail` past its `delayAbortEval`).
    pub fn aborts_at(&self, elapsed: Duration) -> bool {
        self.abort_on_fail
            && self
                .delay_abort_eval
                .is_none_or(|d| d < GoDuration::from_std(elapsed))
    }
}

/// All thresholds of a test, plus the sub-metrics their keys create.
#[derive(Debug, Clone, Default)]
pub struct ThresholdSet {
    /// Thresholds in declaration order.
    pub thresholds: Vec<Threshold>,
    /// Sub-metrics in first-declared order, unique by parent and tag set.
    pub submetrics: Vec<SubMetricSpec>,
    /// Metrics and sub-metrics the summary shows even without samples: every threshold key
    /// (even one with no thresholds) and the parent of every sub-metric key, as k6 marks
    /// them observed.
    pub observed: Vec<Target>,
}

impl ThresholdSet {
    /// Parses the `thresholds` option object (`null` means none) and validates it against
    /// the registry, reading values as k6's Go JSON decoder does: each key (`metric` or
    /// `metric{tag:value,...}`) holds `null` or an array of expression strings, `null`s (an
    /// empty expression) and `{threshold, abortOnFail, delayAbortEval}` objects, whose field
    /// names match in any case.
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
                .ok_or_else(|| key_err(format!("no metric name \"{key}\" found")))?;
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
            set.observe(target);
            if let Target::SubMetric(_) = target {
                set.observe(Target::Metric(id));
            }
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
                    kind,
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

    /// Index of the sub-metric of `parent` with exactly these tags (whatever the key's
    /// spelling, as k6 finds it by tag set), adding it as `name` when new.
    pub(crate) fn submetric(
        &mut self,
        parent: MetricId,
        name: String,
        tags: Vec<(String, String)>,
    ) -> usize {
        let sorted = |t: &[(String, String)]| {
            let mut t = t.to_vec();
            t.sort();
            t
        };
        let wanted = sorted(&tags);
        if let Some(i) = self
            .submetrics
            .iter()
            .position(|s| s.parent == parent && sorted(&s.tags) == wanted)
        {
            return i;
        }
        self.submetrics.push(SubMetricSpec { parent, name, tags });
        self.submetrics.len() - 1
    }

    fn observe(&mut self, target: Target) {
        if !self.observed.contains(&target) {
            self.observed.push(target);
        }
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
    delay_abort_eval: Option<GoDuration>,
}

const SHAPE: &str =
    "thresholds must be an array of strings and {threshold, abortOnFail, delayAbortEval} objects";

fn definitions(defs: &Value) -> Result<Vec<Definition>, String> {
    match defs {
        // k6 decodes null into an empty list: the metric is shown, nothing is judged.
        Value::Null => Ok(Vec::new()),
        Value::Array(a) => a.iter().map(definition).collect(),
        _ => Err(SHAPE.into()),
    }
}

/// Whether a JSON field name matches `field` as Go's decoder matches struct fields: exactly
/// or case-insensitively (with Unicode simple folding, so `ſ` is `s` and `K` is `k`).
fn field_is(name: &str, field: &str) -> bool {
    let fold = |c: char| c.to_uppercase().flat_map(char::to_lowercase);
    name.chars().flat_map(fold).eq(field.chars().flat_map(fold))
}

fn definition(v: &Value) -> Result<Definition, String> {
    let mut def = Definition {
        source: String::new(),
        abort_on_fail: false,
        delay_abort_eval: None,
    };
    match v {
        // A JSON null decodes to the empty expression, which then fails to parse.
        Value::Null => {}
        Value::String(s) => def.source = s.clone(),
        Value::Object(o) => {
            // Go's decoder lets the last of several matching fields win.
            for (name, value) in o {
                if field_is(name, "threshold") {
                    def.source = match value {
                        Value::Null => String::new(),
                        Value::String(s) => s.clone(),
                        other => return Err(format!("threshold must be a string, got {other}")),
                    };
                } else if field_is(name, "abortOnFail") {
                    def.abort_on_fail = match value {
                        Value::Null => false,
                        Value::Bool(b) => *b,
                        other => return Err(format!("abortOnFail must be a boolean, got {other}")),
                    };
                } else if field_is(name, "delayAbortEval") {
                    def.delay_abort_eval = duration_from_json(value).map_err(|e| {
                        format!(
                            "delayAbortEval: {e}: a duration string or a number of milliseconds"
                        )
                    })?;
                }
            }
        }
        _ => return Err(SHAPE.into()),
    }
    Ok(def)
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
    fn arrays_of_strings_and_objects() {
        let set = parse(json!({
            "http_req_duration": ["p(95)<500", {"threshold": "avg<100", "abortOnFail": true, "delayAbortEval": "1m30s"}],
            "http_req_failed": ["rate<0.01"],
        }))
        .unwrap();
        assert_eq!(set.len(), 3);
        let t = &set.thresholds[1];
        assert_eq!(t.source, "avg<100");
        assert_eq!(t.metric, "http_req_duration");
        assert_eq!(t.target, Target::Metric(builtin::HTTP_REQ_DURATION));
        assert!(t.abort_on_fail);
        assert_eq!(t.delay_abort_eval, Some(GoDuration::from_secs(90)));
        assert_eq!(
            set.thresholds[2].target,
            Target::Metric(builtin::HTTP_REQ_FAILED)
        );
        assert!(!set.thresholds[0].abort_on_fail);
        assert!(set.submetrics.is_empty());
    }

    #[test]
    fn objects_are_read_as_go_reads_them() {
        // Field names in any case, the last match winning; unknown fields ignored.
        let set = parse(json!({"http_reqs": [
            {"Threshold": "count>0", "ABORTONFAIL": true, "extra": 1},
            {"threshold": "count>1", "threshold": "count>2"},
            {"threſhold": "count>3"},
            {"threshold": "count>4", "delayAbortEval": -10},
            {"threshold": "count>5", "delayAbortEval": 1e30, "abortOnFail": null},
        ]}))
        .unwrap();
        let sources: Vec<_> = set.thresholds.iter().map(|t| t.source.as_str()).collect();
        assert_eq!(
            sources,
            ["count>0", "count>2", "count>3", "count>4", "count>5"]
        );
        assert!(set.thresholds[0].abort_on_fail);
        assert_eq!(
            set.thresholds[3].delay_abort_eval,
            Some(GoDuration(-10_000_000)),
            "negative delays are accepted"
        );
        assert_eq!(
            set.thresholds[4].delay_abort_eval,
            Some(GoDuration(i64::MIN)),
            "Go's overflowing float conversion, not a panic"
        );
        // `null` for a key: no thresholds, but the metric is observed.
        let set = parse(json!({"http_reqs": null, "vus": []})).unwrap();
        assert!(set.is_empty());
        assert_eq!(
            set.observed,
            [
                Target::Metric(builtin::HTTP_REQS),
                Target::Metric(builtin::VUS)
            ]
        );
    }

    #[test]
    fn submetrics_are_unique_by_tag_set_and_observe_their_parent() {
        let set = parse(json!({
            "http_req_duration{scenario:a}": ["p(99)<1000"],
            "http_req_duration{ scenario:'a' }": ["p(90)<1000"],
            "http_reqs{status:200,method:GET}": ["count>0"],
            "http_reqs{method:GET, status:\"200\"}": ["count>1"],
        }))
        .unwrap();
        assert_eq!(set.submetrics.len(), 2);
        assert_eq!(set.submetrics[0].name, "http_req_duration{scenario:a}");
        assert_eq!(set.submetrics[0].parent, builtin::HTTP_REQ_DURATION);
        assert_eq!(
            set.thresholds[1].target,
            Target::SubMetric(0),
            "same tags, same sub-metric"
        );
        assert_eq!(set.thresholds[1].metric, "http_req_duration{scenario:a}");
        assert_eq!(
            set.submetrics[1].tags,
            vec![
                ("status".into(), "200".into()),
                ("method".into(), "GET".into())
            ]
        );
        assert_eq!(set.thresholds[3].target, Target::SubMetric(1));
        assert_eq!(
            set.observed,
            [
                Target::SubMetric(0),
                Target::Metric(builtin::HTTP_REQ_DURATION),
                Target::SubMetric(1),
                Target::Metric(builtin::HTTP_REQS),
            ]
        );
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
        assert!(e.contains("no metric name \"nope{a:b}\" found"), "{e}");
    }

    #[test]
    fn every_type_accepts_its_methods() {
        parse(json!({
            "http_reqs": ["count>0", "rate>0"],
            "vus": ["value>0"],
            "checks": ["rate>0.9"],
            "http_req_duration": ["avg<1", "min<1", "max<1", "med<1", "p(99.9)<1", "p<1"],
        }))
        .unwrap();
    }

    #[test]
    fn bad_inputs() {
        for bad in [
            json!({"http_reqs": 5}),
            json!({"http_reqs": "count>0"}),
            json!({"http_reqs": {"threshold": "count>0"}}),
            json!({"http_reqs": [5]}),
            json!({"http_reqs": [true]}),
            json!({"http_reqs": [["count>0"]]}),
            json!({"http_reqs": [null]}),
            json!({"http_reqs": [{}]}),
            json!({"http_reqs": [{"abortOnFail": true}]}),
            json!({"http_reqs": [{"threshold": 5}]}),
            json!({"http_reqs": [{"threshold": "count>0", "abortOnFail": "yes"}]}),
            json!({"http_reqs": [{"threshold": "count>0", "delayAbortEval": "soon"}]}),
            json!({"http_reqs": [{"threshold": "count>0", "delayAbortEval": ""}]}),
            json!({"http_reqs": [{"threshold": "count>0", "delayAbortEval": true}]}),
            json!({"http_reqs": ["count>"]}),
            json!({"http_reqs": ["count"]}),
            json!({"http_req_duration": ["p(200)<5"]}),
            json!({"http_req_duration{status:200": ["avg<5"]}),
            json!({"http_req_duration{status:}": ["avg<5"]}),
            json!({"http_req_duration{}": ["avg<5"]}),
            json!({"http_req_duration{:200}": ["avg<5"]}),
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

    fn threshold(v: Value) -> Threshold {
        parse(v).unwrap().thresholds.remove(0)
    }

    #[test]
    fn empty_sinks_are_judged_at_the_end_on_zeros_except_rates() {
        let secs = Duration::from_secs(1);
        let cases = [
            ("http_req_duration", "p(95)<0", MetricType::Trend, false),
            ("http_req_duration", "p(95)>=0", MetricType::Trend, true),
            ("http_req_duration", "avg>=1", MetricType::Trend, false),
            ("http_reqs", "count>=1", MetricType::Counter, false),
            ("http_reqs", "rate>=1", MetricType::Counter, false),
            ("http_reqs", "count<1", MetricType::Counter, true),
            ("vus", "value>=1", MetricType::Gauge, false),
            ("checks", "rate>=1", MetricType::Rate, true),
            ("checks", "rate<1", MetricType::Rate, true),
        ];
        for (metric, expr, kind, ok) in cases {
            let t = threshold(json!({ metric: [expr] }));
            let sink = Sink::new(kind);
            assert_eq!(
                t.check(&sink, secs, Pass::During),
                (true, None),
                "{metric} {expr}: not judged while running"
            );
            assert_eq!(
                t.check(&sink, secs, Pass::Final).0,
                ok,
                "{metric} {expr} at the end"
            );
        }
        let t = threshold(json!({"http_req_duration": ["p(95)<500"]}));
        let mut sink = Sink::new(MetricType::Trend);
        assert_eq!(t.check(&sink, secs, Pass::Final), (true, Some(0.0)));
        sink.add(600.0);
        assert_eq!(t.check(&sink, secs, Pass::During), (false, Some(600.0)));
    }

    #[test]
    fn nan_values_compare_as_go_does() {
        let mut sink = Sink::new(MetricType::Counter);
        sink.add(1.0);
        let secs = Duration::from_secs(1);
        let t = threshold(json!({"http_reqs": ["count<NaN"]}));
        assert!(!t.check(&sink, secs, Pass::Final).0);
        let t = threshold(json!({"http_reqs": ["count!=NaN"]}));
        assert!(t.check(&sink, secs, Pass::Final).0);
    }

    #[test]
    fn abort_waits_until_the_delay_has_passed() {
        let t = |delay: Value| {
            let mut def = json!({"threshold": "count>0", "abortOnFail": true});
            def["delayAbortEval"] = delay;
            threshold(json!({"http_reqs": [def]}))
        };
        assert!(
            t(Value::Null).aborts_at(Duration::ZERO),
            "no delay: at once"
        );
        let ten = t(json!("10s"));
        assert!(
            !ten.aborts_at(Duration::from_secs(10)),
            "k6 compares strictly"
        );
        assert!(ten.aborts_at(Duration::from_millis(10_001)));
        assert!(t(json!(-5)).aborts_at(Duration::ZERO));
        assert!(!threshold(json!({"http_reqs": ["count>0"]})).aborts_at(Duration::MAX));
    }
}
