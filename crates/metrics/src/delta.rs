//! What a runner of a distributed test sends its aggregator (`-o aggregate`, `rk6
//! aggregate`): a [`Delta`], everything its sinks gathered since the last one, in a form
//! that merges exactly. Counters are sums, Rates (non-zero, total) pairs, Gauges their last
//! value with min and max, Trends their [`TrendState`] (exact values while small, HDR
//! buckets after, and the exact counts at threshold boundaries), so merged percentiles are
//! those of one sink fed every sample — never an average of percentiles.
//!
//! The runner's [`Recorder`] routes samples as the [`crate::Aggregator`] does (metrics,
//! the sub-metrics its thresholds name, checks per group, groups, connections);
//! [`crate::Aggregator::merge`] adds a delta to the aggregator's own sinks.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::builtin;
use crate::connections::ConnectionTally;
use crate::metric::{MetricId, MetricInfo, MetricType, ValueType};
use crate::registry::Registry;
use crate::sample::Sample;
use crate::sink::{CounterSink, GaugeSink, RateSink, Sink};
use crate::stat::Stat;
use crate::threshold::{Target, ThresholdSet};
use crate::trend::{TrendSink, TrendState, TrendStateError, EXACT_LIMIT};

/// The sub-metric k6 always keeps (also kept by the aggregator).
const EXPECTED_RESPONSE_TAGS: (&str, &str) = ("expected_response", "true");

/// Everything one runner gathered over an interval, mergeable into an aggregator.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Delta {
    /// Metrics with samples in the interval.
    #[serde(default)]
    pub metrics: Vec<MetricDelta>,
    /// Sub-metrics (threshold selectors) with samples in the interval.
    #[serde(default)]
    pub submetrics: Vec<SubMetricDelta>,
    /// Group paths first seen in the interval, in first-seen order.
    #[serde(default)]
    pub groups: Vec<String>,
    /// Check outcomes per (group, check) in the interval.
    #[serde(default)]
    pub checks: Vec<CheckDelta>,
    /// Connections opened and requests made in the interval.
    #[serde(default)]
    pub connections: ConnectionTally,
}

/// One metric's part of a delta.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricDelta {
    /// The metric name.
    pub name: String,
    /// Its type.
    #[serde(rename = "type")]
    pub kind: MetricType,
    /// Its value type.
    pub contains: ValueType,
    /// What its sink gathered.
    pub sink: SinkState,
}

/// One sub-metric's part of a delta, named as its threshold key names it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubMetricDelta {
    /// `metric{tag:value}`.
    pub name: String,
    /// What its sink gathered.
    pub sink: SinkState,
}

/// Outcomes of one check in one group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckDelta {
    /// The group path (`""` for the root, `::g1::g2`).
    pub group: String,
    /// The check name.
    pub name: String,
    /// Passed runs.
    pub passes: u64,
    /// Failed runs.
    pub fails: u64,
}

/// A sink's content as it travels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum SinkState {
    /// A Counter: exact sum.
    Counter {
        /// Sum of the values.
        sum: f64,
        /// Number of samples.
        samples: u64,
    },
    /// A Gauge: the last value and the extremes.
    Gauge {
        /// The most recent value.
        last: f64,
        /// Smallest value.
        min: f64,
        /// Largest value.
        max: f64,
        /// Number of samples.
        samples: u64,
    },
    /// A Rate: non-zero samples of all.
    Rate {
        /// Non-zero samples.
        trues: u64,
        /// All samples.
        total: u64,
    },
    /// A Trend: see [`TrendState`].
    Trend(TrendState),
}

/// Why a delta could not be merged.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DeltaError {
    /// The delta's metric has another type here.
    #[error("metric '{name}' is a {here} here but a {there} in the delta")]
    KindMismatch {
        /// The metric (or sub-metric) name.
        name: String,
        /// Its type in the aggregator.
        here: MetricType,
        /// Its type in the delta.
        there: &'static str,
    },
    /// A metric the aggregator could not register.
    #[error("metric '{0}': {1}")]
    Register(String, String),
    /// A Trend state that does not add up.
    #[error("metric '{0}': {1}")]
    Trend(String, TrendStateError),
}

impl SinkState {
    /// The state of `sink`; see [`TrendSink::to_state`] for `histograms`.
    pub fn of(sink: &Sink, histograms: bool) -> SinkState {
        match sink {
            Sink::Counter(c) => SinkState::Counter {
                sum: c.sum,
                samples: c.samples,
            },
            Sink::Gauge(g) => SinkState::Gauge {
                last: g.last,
                min: g.min,
                max: g.max,
                samples: g.samples,
            },
            Sink::Rate(r) => SinkState::Rate {
                trues: r.trues,
                total: r.total,
            },
            Sink::Trend(t) => SinkState::Trend(t.to_state(histograms)),
        }
    }

    fn kind_name(&self) -> &'static str {
        match self {
            SinkState::Counter { .. } => "counter",
            SinkState::Gauge { .. } => "gauge",
            SinkState::Rate { .. } => "rate",
            SinkState::Trend(_) => "trend",
        }
    }

    /// Whether it holds no sample (nor, for a Trend, an unserved arrival).
    pub fn is_empty(&self) -> bool {
        match self {
            SinkState::Counter { samples, .. } | SinkState::Gauge { samples, .. } => *samples == 0,
            SinkState::Rate { total, .. } => *total == 0,
            SinkState::Trend(t) => t.count == 0 && t.unserved == 0,
        }
    }

    /// Adds this state to `sink` (of the same kind): sums, extremes, the Gauge's last
    /// value, Trend values or buckets. `name` is for the error.
    pub fn merge_into(&self, sink: &mut Sink, name: &str) -> Result<(), DeltaError> {
        if self.is_empty() {
            return Ok(());
        }
        match (sink, self) {
            (Sink::Counter(c), SinkState::Counter { sum, samples }) => {
                c.sum += sum;
                c.samples += samples;
            }
            (
                Sink::Gauge(g),
                SinkState::Gauge {
                    last,
                    min,
                    max,
                    samples,
                },
            ) => {
                if g.samples == 0 {
                    (g.min, g.max) = (*min, *max);
                } else {
                    g.min = g.min.min(*min);
                    g.max = g.max.max(*max);
                }
                g.last = *last;
                g.samples += samples;
            }
            (Sink::Rate(r), SinkState::Rate { trues, total }) => {
                r.trues += trues;
                r.total += total;
            }
            (Sink::Trend(t), SinkState::Trend(state)) => {
                let other = TrendSink::from_state(state)
                    .map_err(|e| DeltaError::Trend(name.to_owned(), e))?;
                t.merge(&other);
            }
            (sink, state) => {
                return Err(DeltaError::KindMismatch {
                    name: name.to_owned(),
                    here: sink_kind(sink),
                    there: state.kind_name(),
                })
            }
        }
        Ok(())
    }
}

fn sink_kind(sink: &Sink) -> MetricType {
    match sink {
        Sink::Counter(_) => MetricType::Counter,
        Sink::Gauge(_) => MetricType::Gauge,
        Sink::Rate(_) => MetricType::Rate,
        Sink::Trend(_) => MetricType::Trend,
    }
}

/// An empty sink of `sink`'s kind that keeps a Trend's threshold boundaries.
fn empty_like(sink: &Sink) -> Sink {
    match sink {
        Sink::Counter(_) => Sink::Counter(CounterSink::default()),
        Sink::Gauge(_) => Sink::Gauge(GaugeSink::default()),
        Sink::Rate(_) => Sink::Rate(RateSink::default()),
        Sink::Trend(t) => Sink::Trend(Box::new(t.empty_like())),
    }
}

/// A sub-metric the recorder keeps.
#[derive(Debug)]
struct SubRecord {
    name: String,
    tags: Vec<(String, String)>,
    sink: Sink,
    /// Values of a Trend already sent (see [`Recorder::take`]).
    sent: u64,
}

/// A metric the recorder keeps.
#[derive(Debug)]
struct MetricRecord {
    info: MetricInfo,
    sink: Sink,
    sent: u64,
    /// Sub-metric indices of this metric.
    subs: Vec<usize>,
}

/// A runner's side of a distributed test: samples in, [`Delta`]s out.
#[derive(Debug, Default)]
pub struct Recorder {
    /// Indexed by metric id; `None` until the metric's first sample.
    metrics: Vec<Option<MetricRecord>>,
    subs: Vec<SubRecord>,
    /// Sub-metric indices per parent metric name, for metrics not yet seen.
    subs_by_name: HashMap<String, Vec<usize>>,
    /// Percentile threshold boundaries per metric name (sub-metric sinks get theirs at once).
    metric_pivots: HashMap<String, Vec<f64>>,
    groups: Vec<String>,
    groups_seen: HashSet<String>,
    checks: Vec<CheckDelta>,
    /// Index in `checks` by group, then check name.
    check_index: HashMap<String, HashMap<String, usize>>,
    connections: ConnectionTally,
}

impl Recorder {
    /// A recorder that keeps the sub-metrics `thresholds` name (and, as the aggregator,
    /// `http_req_duration{expected_response:true}`), with the thresholds' percentile
    /// boundaries counted exactly; `registry` names their parents.
    pub fn new(thresholds: &ThresholdSet, registry: &Registry) -> Recorder {
        let mut me = Recorder::default();
        let add_sub =
            |me: &mut Recorder, parent: String, name: String, tags: Vec<(String, String)>| {
                if me.subs.iter().any(|s| s.name == name) {
                    return;
                }
                let kind = registry
                    .get(&parent)
                    .map(|id| registry.info(id).kind)
                    .unwrap_or(MetricType::Trend);
                me.subs_by_name
                    .entry(parent)
                    .or_default()
                    .push(me.subs.len());
                me.subs.push(SubRecord {
                    name,
                    tags,
                    sink: Sink::new(kind),
                    sent: 0,
                });
            };
        for spec in &thresholds.submetrics {
            let parent = registry.info(spec.parent).name;
            add_sub(&mut me, parent, spec.name.clone(), spec.tags.clone());
        }
        let expected = format!(
            "{}{{{}:{}}}",
            "http_req_duration", EXPECTED_RESPONSE_TAGS.0, EXPECTED_RESPONSE_TAGS.1
        );
        if !thresholds.submetrics.iter().any(|s| {
            s.parent == builtin::HTTP_REQ_DURATION
                && s.tags
                    == [(
                        EXPECTED_RESPONSE_TAGS.0.to_owned(),
                        EXPECTED_RESPONSE_TAGS.1.to_owned(),
                    )]
        }) {
            add_sub(
                &mut me,
                "http_req_duration".to_owned(),
                expected,
                vec![(
                    EXPECTED_RESPONSE_TAGS.0.to_owned(),
                    EXPECTED_RESPONSE_TAGS.1.to_owned(),
                )],
            );
        }
        for t in &thresholds.thresholds {
            if !matches!(t.stat, Stat::Percentile(_) | Stat::Med) {
                continue;
            }
            match t.target {
                Target::Metric(id) => me
                    .metric_pivots
                    .entry(registry.info(id).name)
                    .or_default()
                    .push(t.value),
                Target::SubMetric(i) => {
                    let name = &thresholds.submetrics[i].name;
                    if let Some(Sink::Trend(sink)) = me
                        .subs
                        .iter_mut()
                        .find(|s| &s.name == name)
                        .map(|s| &mut s.sink)
                    {
                        sink.add_pivot(t.value);
                    }
                }
            }
        }
        me
    }

    /// The record of metric `id`, made on its first sample; `None` for an id of another
    /// registry.
    fn record(&mut self, registry: &Registry, id: MetricId) -> Option<&mut MetricRecord> {
        let i = id.index();
        if i >= self.metrics.len() {
            if i >= registry.len() {
                return None;
            }
            self.metrics.resize_with(i + 1, || None);
        }
        Some(self.metrics[i].get_or_insert_with(|| {
            let info = registry.info(id);
            let mut sink = Sink::new(info.kind);
            if let (Sink::Trend(t), Some(bounds)) = (&mut sink, self.metric_pivots.get(&info.name))
            {
                for &b in bounds {
                    t.add_pivot(b);
                }
            }
            let subs = self
                .subs_by_name
                .get(&info.name)
                .cloned()
                .unwrap_or_default();
            MetricRecord {
                info,
                sink,
                sent: 0,
                subs,
            }
        }))
    }

    /// An `iterations_unserved` sample: that many arrivals count as unserved in each
    /// corrected Trend and its sub-metrics whose tags the sample has (as the aggregator).
    fn add_unserved(&mut self, registry: &Registry, s: &Sample) {
        let n = s.value.max(0.0) as u64;
        for metric in builtin::CORRECTED {
            let Some(record) = self.record(registry, metric) else {
                continue;
            };
            record.sink.add_unserved(n);
            let subs = record.subs.clone();
            for sub in subs {
                let sub = &mut self.subs[sub];
                if sub
                    .tags
                    .iter()
                    .all(|(k, v)| s.tags.get(k) == Some(v.as_str()))
                {
                    sub.sink.add_unserved(n);
                }
            }
        }
    }

    /// Routes samples as [`crate::Aggregator::add`] does.
    pub fn add(&mut self, registry: &Registry, samples: &[Sample]) {
        for s in samples {
            if self.record(registry, s.metric).is_none() {
                continue; // an id from another registry
            }
            let Some(record) = self.metrics[s.metric.index()].as_mut() else {
                continue;
            };
            record.sink.add(s.value);
            for &sub in &record.subs {
                let sub = &mut self.subs[sub];
                if sub
                    .tags
                    .iter()
                    .all(|(k, v)| s.tags.get(k) == Some(v.as_str()))
                {
                    sub.sink.add(s.value);
                }
            }
            self.connections.add(s);
            if s.metric == builtin::ITERATIONS_UNSERVED {
                self.add_unserved(registry, s);
            }
            if s.metric == builtin::CHECKS {
                if let Some(check) = s.tags.get("check") {
                    let group = s.tags.get("group").unwrap_or("");
                    self.see_group(group);
                    self.add_check(group, check, s.value != 0.0);
                }
            } else if s.metric == builtin::GROUP_DURATION {
                self.see_group(s.tags.get("group").unwrap_or(""));
            }
        }
    }

    fn see_group(&mut self, path: &str) {
        if !path.is_empty() && !self.groups_seen.contains(path) {
            self.groups_seen.insert(path.to_owned());
            self.groups.push(path.to_owned());
        }
    }

    fn add_check(&mut self, group: &str, name: &str, passed: bool) {
        // Looked up by &str: only a new (group, check) allocates.
        let known = self.check_index.get(group).and_then(|g| g.get(name));
        let i = match known {
            Some(&i) => i,
            None => {
                self.checks.push(CheckDelta {
                    group: group.to_owned(),
                    name: name.to_owned(),
                    passes: 0,
                    fails: 0,
                });
                self.check_index
                    .entry(group.to_owned())
                    .or_default()
                    .insert(name.to_owned(), self.checks.len() - 1);
                self.checks.len() - 1
            }
        };
        if passed {
            self.checks[i].passes += 1;
        } else {
            self.checks[i].fails += 1;
        }
    }

    /// Everything gathered since the last call; the sinks start again empty. A Trend whose
    /// values sent so far pass [`EXACT_LIMIT`] travels as buckets: the merged whole holds
    /// more than that many, so it is in histograms anyway.
    pub fn take(&mut self) -> Delta {
        let mut delta = Delta::default();
        for record in self.metrics.iter_mut().flatten() {
            if record.sink.holds_nothing() {
                continue;
            }
            let histograms = trend_past_limit(&record.sink, &mut record.sent);
            delta.metrics.push(MetricDelta {
                name: record.info.name.clone(),
                kind: record.info.kind,
                contains: record.info.contains,
                sink: SinkState::of(&record.sink, histograms),
            });
            record.sink = empty_like(&record.sink);
        }
        for sub in &mut self.subs {
            if sub.sink.holds_nothing() {
                continue;
            }
            let histograms = trend_past_limit(&sub.sink, &mut sub.sent);
            delta.submetrics.push(SubMetricDelta {
                name: sub.name.clone(),
                sink: SinkState::of(&sub.sink, histograms),
            });
            sub.sink = empty_like(&sub.sink);
        }
        delta.groups = std::mem::take(&mut self.groups);
        delta.checks = std::mem::take(&mut self.checks);
        self.check_index.clear();
        delta.connections = std::mem::take(&mut self.connections);
        delta
    }
}

/// Counts a Trend's values as sent and says whether its whole passed [`EXACT_LIMIT`].
fn trend_past_limit(sink: &Sink, sent: &mut u64) -> bool {
    match sink {
        Sink::Trend(t) => {
            *sent += t.count();
            *sent > EXACT_LIMIT as u64
        }
        _ => false,
    }
}

impl Delta {
    /// Whether it carries nothing.
    pub fn is_empty(&self) -> bool {
        self.metrics.is_empty()
            && self.submetrics.is_empty()
            && self.groups.is_empty()
            && self.checks.is_empty()
            && self.connections == ConnectionTally::default()
    }

    /// Adds `later` to this delta (a runner keeps what it could not send yet this way).
    pub fn absorb(&mut self, later: Delta) -> Result<(), DeltaError> {
        fn merge_state(
            into: &mut SinkState,
            from: &SinkState,
            name: &str,
        ) -> Result<(), DeltaError> {
            let mut sink = state_sink(into, name)?;
            from.merge_into(&mut sink, name)?;
            let histograms = matches!(into, SinkState::Trend(t) if t.values.is_none());
            *into = SinkState::of(&sink, histograms);
            Ok(())
        }
        for m in later.metrics {
            match self.metrics.iter_mut().find(|x| x.name == m.name) {
                Some(x) => merge_state(&mut x.sink, &m.sink, &m.name)?,
                None => self.metrics.push(m),
            }
        }
        for m in later.submetrics {
            match self.submetrics.iter_mut().find(|x| x.name == m.name) {
                Some(x) => merge_state(&mut x.sink, &m.sink, &m.name)?,
                None => self.submetrics.push(m),
            }
        }
        for g in later.groups {
            if !self.groups.contains(&g) {
                self.groups.push(g);
            }
        }
        for c in later.checks {
            match self
                .checks
                .iter_mut()
                .find(|x| x.group == c.group && x.name == c.name)
            {
                Some(x) => {
                    x.passes += c.passes;
                    x.fails += c.fails;
                }
                None => self.checks.push(c),
            }
        }
        self.connections.absorb(&later.connections);
        Ok(())
    }
}

/// A sink holding `state`.
fn state_sink(state: &SinkState, name: &str) -> Result<Sink, DeltaError> {
    let kind = match state {
        SinkState::Counter { .. } => MetricType::Counter,
        SinkState::Gauge { .. } => MetricType::Gauge,
        SinkState::Rate { .. } => MetricType::Rate,
        SinkState::Trend(_) => MetricType::Trend,
    };
    let mut sink = Sink::new(kind);
    state.merge_into(&mut sink, name)?;
    Ok(sink)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::MetricId;
    use crate::summary::SummaryData;
    use crate::tags::TagSet;
    use crate::{Aggregator, Pass};
    use serde_json::json;
    use std::sync::Arc;
    use std::time::{Duration, SystemTime};

    const SECS: Duration = Duration::from_secs(10);

    fn stats() -> Vec<String> {
        [
            "avg", "min", "med", "max", "p(90)", "p(95)", "p(99)", "count",
        ]
        .map(String::from)
        .to_vec()
    }

    fn thresholds() -> serde_json::Value {
        json!({
            "http_req_duration": ["p(95)<200", "med<150"],
            "http_req_duration{name:slow}": ["p(99)<400"],
            "iterations": ["count<100000"],
            "checks": ["rate>0.5"],
            "latency": ["p(90)<50"],
        })
    }

    /// A deterministic test's samples: `n` requests with latency-like durations, checks,
    /// groups, a gauge, a custom Trend with negative values.
    fn samples(registry: &Registry, n: usize) -> Vec<Sample> {
        let latency = registry
            .register("latency", MetricType::Trend, ValueType::Time)
            .unwrap();
        let tags = |pairs: &[(&str, &str)]| TagSet::from_pairs(pairs.iter().copied());
        let fast = tags(&[
            ("group", "::g"),
            ("name", "fast"),
            ("expected_response", "true"),
            ("proto", "HTTP/1.1"),
        ]);
        let slow = tags(&[
            ("group", "::g::inner"),
            ("name", "slow"),
            ("expected_response", "false"),
            ("proto", "HTTP/1.1"),
        ]);
        let s = |metric: MetricId, value: f64, tags: &TagSet| Sample {
            metric,
            tags: tags.clone(),
            value,
            time: SystemTime::UNIX_EPOCH,
        };
        let mut out = Vec::new();
        for i in 0..n {
            let x = ((i as u64 * 7919) % 10_007) as f64;
            let t = if i % 10 == 0 { &slow } else { &fast };
            out.push(s(builtin::HTTP_REQ_DURATION, 0.3 + x * 0.03, t));
            out.push(s(builtin::HTTP_REQS, 1.0, t));
            out.push(s(builtin::HTTP_REQ_FAILED, (i % 10 == 0) as u8 as f64, t));
            out.push(s(builtin::GROUP_DURATION, 1.0 + x * 0.01, t));
            let check = tags(&[
                ("group", t.get("group").unwrap()),
                ("check", if i % 3 == 0 { "a" } else { "b" }),
            ]);
            out.push(s(builtin::CHECKS, (i % 7 != 0) as u8 as f64, &check));
            out.push(s(builtin::ITERATIONS, 1.0, &tags(&[])));
            out.push(s(builtin::VUS, (i % 13) as f64, &tags(&[])));
            out.push(s(latency, x * 0.01 - 20.0, &tags(&[])));
            if i % 50 == 0 {
                out.push(s(builtin::HTTP_CONNS_OPENED, 1.0, t));
            }
            // Open-model arrivals: served ones, and now and then two that found no VU.
            out.push(s(
                builtin::ITERATION_DURATION_CORRECTED,
                5.0 + x * 0.02,
                &tags(&[]),
            ));
            if i % 40 == 0 {
                let scenario = tags(&[("scenario", "default")]);
                out.push(s(builtin::ITERATIONS_UNSERVED, 2.0, &scenario));
            }
        }
        out
    }

    /// One aggregator fed everything, and one fed the deltas of `parts` recorders that
    /// each got every `parts`-th batch, pushing a delta every `every` batches — through
    /// JSON, as the runners send them.
    fn whole_and_merged(
        n: usize,
        parts: usize,
        every: usize,
    ) -> (SummaryData, SummaryData, Aggregator, Aggregator) {
        let registry = Arc::new(Registry::new());
        let all = samples(&registry, n);
        let set = ThresholdSet::parse(&thresholds(), &registry).unwrap();
        let mut whole = Aggregator::new(registry.clone(), set.clone());
        whole.add(&all);
        let mut hub = Aggregator::new(registry.clone(), set.clone());
        let mut recorders: Vec<Recorder> = (0..parts)
            .map(|_| Recorder::new(hub.thresholds(), &registry))
            .collect();
        let mut since = vec![0usize; parts];
        for (i, batch) in all.chunks(97).enumerate() {
            let r = i % parts;
            recorders[r].add(&registry, batch);
            since[r] += 1;
            if since[r] == every {
                since[r] = 0;
                let text = serde_json::to_string(&recorders[r].take()).unwrap();
                hub.merge(&serde_json::from_str(&text).unwrap()).unwrap();
            }
        }
        for r in &mut recorders {
            let text = serde_json::to_string(&r.take()).unwrap();
            hub.merge(&serde_json::from_str(&text).unwrap()).unwrap();
        }
        (
            whole.summary(SECS, &stats()),
            hub.summary(SECS, &stats()),
            whole,
            hub,
        )
    }

    fn assert_same(whole: &SummaryData, merged: &SummaryData, rel: f64) {
        let names = |s: &SummaryData| s.metrics.iter().map(|m| m.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(whole), names(merged));
        for (w, m) in whole.metrics.iter().zip(&merged.metrics) {
            assert_eq!(w.values.len(), m.values.len(), "{}", w.name);
            for ((k, a), (k2, b)) in w.values.iter().zip(&m.values) {
                assert_eq!(k, k2);
                let exact = ["count", "rate", "passes", "fails", "min", "max"]
                    .contains(&k.as_str())
                    || w.name == "vus";
                let tol = if exact { 1e-9 } else { rel };
                // The last gauge value depends on which part merged last.
                if w.name == "vus" && k == "value" || a == b {
                    continue;
                }
                assert!(
                    (a - b).abs() <= tol * a.abs().max(1e-9),
                    "{} {k}: whole {a}, merged {b}",
                    w.name
                );
            }
            let verdicts =
                |x: &crate::MetricSummary| x.thresholds.iter().map(|t| t.ok).collect::<Vec<_>>();
            assert_eq!(verdicts(w), verdicts(m), "{}", w.name);
        }
        assert_eq!(whole.root_group, merged.root_group);
        assert_eq!(whole.checks, merged.checks);
        assert_eq!(whole.connections, merged.connections);
    }

    #[test]
    fn merging_parts_of_a_small_test_is_exact() {
        // 3,000 requests: every Trend stays below the exact limit, so percentiles are k6's
        // sort-and-interpolate over all values, as one process would print them.
        let (whole, merged, _, _) = whole_and_merged(3_000, 3, 4);
        assert_same(&whole, &merged, 1e-12);
        let d = merged.metric("http_req_duration").unwrap();
        assert_eq!(d.value("count"), Some(3_000.0));
        let sub = merged.metric("http_req_duration{name:slow}").unwrap();
        assert_eq!(sub.value("count"), Some(300.0));
        // 75 pushes of 2 unserved arrivals travelled with the corrected Trend's values.
        let corrected = merged.metric("iteration_duration_corrected").unwrap();
        assert_eq!(corrected.value("count"), Some(3_150.0));
        assert_eq!(corrected.value("p(99)"), Some(f64::INFINITY));
        assert!(corrected.value("p(90)").unwrap().is_finite());
        assert!(merged
            .metric("http_req_duration{expected_response:true}")
            .is_some());
    }

    #[test]
    fn merging_parts_of_a_large_test_keeps_histogram_precision() {
        // 60,000 requests in 4 parts: the deltas travel as buckets once a part has sent
        // more than the exact limit, and the merged histograms equal one sink's.
        let (whole, merged, mut w, mut m) = whole_and_merged(60_000, 4, 5);
        assert_same(&whole, &merged, 1e-9);
        let p95 = merged
            .metric("http_req_duration")
            .unwrap()
            .value("p(95)")
            .unwrap();
        // Within the histograms' 0.1 % of the exact value.
        let registry = Registry::new();
        let mut values: Vec<f64> = samples(&registry, 60_000)
            .iter()
            .filter(|s| s.metric == builtin::HTTP_REQ_DURATION)
            .map(|s| s.value)
            .collect();
        values.sort_by(f64::total_cmp);
        let i = 0.95 * (values.len() - 1) as f64;
        let exact = values[i.floor() as usize]
            + (values[i.ceil() as usize] - values[i.floor() as usize]) * i.fract();
        assert!(((p95 - exact) / exact).abs() < 0.01, "p95 {p95} vs {exact}");
        assert_eq!(w.evaluate(SECS, Pass::Final), m.evaluate(SECS, Pass::Final));
    }

    #[test]
    fn boundaries_stay_exact_through_merges() {
        use std::cmp::Ordering;
        // Each part alone is exact; the merged whole is in histograms, where only the
        // pivot counts can tell 199.99 from 200.
        let mut parts: Vec<TrendSink> = (0..3)
            .map(|_| {
                let mut t = TrendSink::new();
                t.add_pivot(200.0);
                t
            })
            .collect();
        for i in 0..21_000u32 {
            parts[(i % 3) as usize].add(if i < 20_475 { 199.99 } else { 200.01 });
        }
        let mut hub = TrendSink::new();
        hub.add_pivot(200.0);
        for p in &parts {
            let state: TrendState =
                serde_json::from_str(&serde_json::to_string(&p.to_state(false)).unwrap()).unwrap();
            hub.merge(&TrendSink::from_state(&state).unwrap());
        }
        assert_eq!(hub.count(), 21_000);
        assert_eq!(hub.percentile_vs(95.0, 200.0), Some(Ordering::Less));
        assert_eq!(hub.percentile_vs(99.0, 200.0), Some(Ordering::Greater));
        // A part that never counted a boundary, merged as buckets, voids it.
        let mut blind = TrendSink::new();
        for _ in 0..(EXACT_LIMIT + 1) {
            blind.add(1.0);
        }
        hub.merge(&blind);
        assert_eq!(hub.percentile_vs(95.0, 200.0), None);
    }

    #[test]
    fn absorbed_deltas_merge_as_the_separate_ones() {
        let registry = Arc::new(Registry::new());
        let all = samples(&registry, 2_000);
        let set = ThresholdSet::parse(&thresholds(), &registry).unwrap();
        let mut rec = Recorder::new(&set, &registry);
        let (a, b) = all.split_at(all.len() / 2);
        rec.add(&registry, a);
        let mut first = rec.take();
        rec.add(&registry, b);
        first.absorb(rec.take()).unwrap();
        let mut one = Aggregator::new(registry.clone(), set.clone());
        one.merge(&first).unwrap();
        let mut fed = Aggregator::new(registry.clone(), set);
        fed.add(&all);
        assert_same(
            &fed.summary(SECS, &stats()),
            &one.summary(SECS, &stats()),
            1e-12,
        );
        assert!(rec.take().is_empty(), "taken deltas start again empty");
    }

    #[test]
    fn a_delta_of_another_kind_is_refused() {
        let registry = Arc::new(Registry::new());
        let mut agg = Aggregator::new(registry, ThresholdSet::default());
        let delta = Delta {
            metrics: vec![MetricDelta {
                name: "iterations".into(),
                kind: MetricType::Trend,
                contains: ValueType::Default,
                sink: SinkState::Rate { trues: 1, total: 1 },
            }],
            ..Delta::default()
        };
        assert!(agg.merge(&delta).is_err());
        let bad_trend = Delta {
            metrics: vec![MetricDelta {
                name: "iteration_duration".into(),
                kind: MetricType::Trend,
                contains: ValueType::Time,
                sink: SinkState::Trend(TrendState {
                    count: 3,
                    values: Some(vec![1.0]),
                    ..TrendState::default()
                }),
            }],
            ..Delta::default()
        };
        assert!(matches!(agg.merge(&bad_trend), Err(DeltaError::Trend(..))));
    }

    /// The cost docs/aggregate.md quotes: merging one runner's one-second delta of a busy
    /// test (the built-in HTTP metrics of ~5,000 requests, past the exact limit so Trends
    /// travel as buckets), decoded from JSON. Prints the figure; asserts only a loose bound.
    #[test]
    fn merge_cost_of_a_typical_delta() {
        let registry = Arc::new(Registry::new());
        let all = samples(&registry, 20_000);
        let set = ThresholdSet::parse(&thresholds(), &registry).unwrap();
        let mut rec = Recorder::new(&set, &registry);
        rec.add(&registry, &all[..all.len() * 3 / 4]);
        let _ = rec.take(); // past the exact limit from here on
        rec.add(&registry, &all[all.len() * 3 / 4..]);
        let text = serde_json::to_string(&rec.take()).unwrap();
        let mut hub = Aggregator::new(registry.clone(), set);
        hub.add(&all[..20_000]);
        let rounds = 50;
        let start = std::time::Instant::now();
        for _ in 0..rounds {
            let delta: Delta = serde_json::from_str(&text).unwrap();
            hub.merge(&delta).unwrap();
        }
        let per = start.elapsed() / rounds;
        println!("delta: {} bytes JSON, decode + merge {per:?}", text.len());
        assert!(per < Duration::from_secs(1), "{per:?}");
    }
}
