//! The single owner of all sinks: routes sample batches, evaluates thresholds, snapshots.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use crate::builtin;
use crate::connections::ConnectionTally;
use crate::delta::{Delta, DeltaError};
use crate::group_tree::GroupTree;
use crate::metric::{MetricId, MetricInfo};
use crate::metric_values::metric_values;
use crate::registry::Registry;
use crate::sample::Sample;
use crate::sections::{CheckList, SectionSinks};
use crate::sink::Sink;
use crate::stat::Stat;
use crate::summary::{GroupSummary, MetricSummary, SummaryData, ThresholdResult};
use crate::tags::TagSet;
use crate::threshold::{Pass, Target, ThresholdSet};

/// The sub-metric k6 always keeps, so the summary can show successful request times.
const EXPECTED_RESPONSE_SUBMETRIC: &str = "http_req_duration{expected_response:true}";

/// Outcome of one threshold evaluation pass.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verdict {
    /// Some threshold fails.
    pub failed: bool,
    /// A failing threshold has `abortOnFail` and its `delayAbortEval` has passed.
    pub abort: bool,
    /// Names of metrics (with selector for sub-metrics) with a failing threshold, sorted.
    pub crossed: Vec<String>,
}

/// A sub-metric's selector and sink.
#[derive(Debug)]
struct SubSink {
    tags: Vec<(Box<str>, Box<str>)>,
    sink: Sink,
}

/// Aggregates samples into per-metric and per-sub-metric sinks. Not shared: one task owns
/// it and feeds it batches.
#[derive(Debug)]
pub struct Aggregator {
    registry: Arc<Registry>,
    thresholds: ThresholdSet,
    /// Metric infos cached by id, so `summary` needs no lock per metric.
    infos: Vec<MetricInfo>,
    sinks: Vec<Sink>,
    subs: Vec<SubSink>,
    /// Sub-metric indices per parent metric id.
    subs_by_metric: Vec<Vec<usize>>,
    groups: GroupTree,
    /// All checks merged by name, in first-seen order.
    checks: CheckList,
    /// Per-scenario and per-group sinks, only when the summary shows those sections.
    sections: Option<SectionSinks>,
    connections: ConnectionTally,
    /// Per metric (or `metric{tags}`) with thresholds, whether one was crossed when they
    /// were last judged (k6's `tainted`); absent until then. During the run a metric
    /// without samples is not judged, so it keeps its earlier state.
    tainted: HashMap<String, bool>,
}

impl Aggregator {
    /// Creates sinks for every registered metric, a sub-metric sink for every `metric{...}`
    /// threshold key, and always one for `http_req_duration{expected_response:true}`.
    pub fn new(registry: Arc<Registry>, mut thresholds: ThresholdSet) -> Self {
        thresholds.submetric(
            builtin::HTTP_REQ_DURATION,
            EXPECTED_RESPONSE_SUBMETRIC.to_owned(),
            vec![("expected_response".into(), "true".into())],
        );
        let mut agg = Aggregator {
            registry,
            infos: Vec::new(),
            sinks: Vec::new(),
            subs: Vec::new(),
            subs_by_metric: Vec::new(),
            groups: GroupTree::default(),
            checks: CheckList::default(),
            sections: None,
            connections: ConnectionTally::default(),
            tainted: HashMap::new(),
            thresholds,
        };
        agg.sync_registry();
        for (i, spec) in agg.thresholds.submetrics.iter().enumerate() {
            agg.subs.push(SubSink {
                tags: spec
                    .tags
                    .iter()
                    .map(|(k, v)| (k.as_str().into(), v.as_str().into()))
                    .collect(),
                sink: Sink::new(agg.infos[spec.parent.index()].kind),
            });
            agg.subs_by_metric[spec.parent.index()].push(i);
        }
        // Percentile thresholds get exact counts at their boundaries (see trend.rs).
        let pivots: Vec<(Target, f64)> = agg
            .thresholds
            .thresholds
            .iter()
            .filter(|t| matches!(t.stat, Stat::Percentile(_) | Stat::Med))
            .map(|t| (t.target, t.value))
            .collect();
        for (target, boundary) in pivots {
            let sink = match target {
                Target::Metric(id) => &mut agg.sinks[id.index()],
                Target::SubMetric(i) => &mut agg.subs[i].sink,
            };
            if let Sink::Trend(t) = sink {
                t.add_pivot(boundary);
            }
        }
        agg
    }

    /// Also aggregates per scenario and per group from now on, for the full text summary's
    /// sections; `scenarios` are the configured scenario names.
    pub fn keep_sections<S: AsRef<str>>(&mut self, scenarios: impl IntoIterator<Item = S>) {
        self.sections = Some(SectionSinks::new(scenarios));
    }

    /// Picks up metrics registered after construction.
    fn sync_registry(&mut self) {
        for (_, info) in self.registry.all().into_iter().skip(self.infos.len()) {
            self.sinks.push(Sink::new(info.kind));
            self.subs_by_metric.push(Vec::new());
            self.infos.push(info);
        }
    }

    /// Routes each sample to its metric's sink and every sub-metric whose selector tags it
    /// carries; tallies checks per (group, check name) and records groups seen.
    pub fn add(&mut self, samples: &[Sample]) {
        // The samples of one request share one interned tag set: look its group up once.
        let mut last_tags: Option<&TagSet> = None;
        let mut group = "";
        for s in samples {
            let new_tags = !last_tags.is_some_and(|t| t.same(&s.tags));
            if new_tags {
                last_tags = Some(&s.tags);
                group = s.tags.get("group").unwrap_or("");
            }
            let i = s.metric.index();
            if i >= self.sinks.len() {
                self.sync_registry();
                if i >= self.sinks.len() {
                    continue; // an id from another registry; nothing to attach it to
                }
            }
            self.sinks[i].add(s.value);
            if let Some(sections) = &mut self.sections {
                sections.add(s, &self.infos[i]);
            }
            for &sub in &self.subs_by_metric[i] {
                let sub = &mut self.subs[sub];
                if sub.tags.iter().all(|(k, v)| s.tags.get(k) == Some(&**v)) {
                    sub.sink.add(s.value);
                }
            }
            self.connections.add(s);
            if s.metric == builtin::ITERATIONS_UNSERVED {
                self.add_unserved(s);
            }
            if s.metric == builtin::CHECKS {
                if let Some(check) = s.tags.get("check") {
                    self.groups.add_check(group, check, s.value != 0.0);
                    self.checks.add(group, check, s.value != 0.0);
                }
            } else if s.metric == builtin::GROUP_DURATION && !group.is_empty() {
                // As k6, a group exists once a `group()` call ended (or a check ran in it):
                // setup's and teardown's own samples (`::setup`, `::teardown`) make none.
                // A map hit borrows the &str; only a new group allocates.
                self.groups.see(group);
            }
        }
    }

    /// Adds a runner's [`Delta`] (a distributed test, `rk6 aggregate`): its metrics by name
    /// (registering a custom one the script here did not), the sub-metrics this aggregator
    /// keeps by name (others are dropped), groups, checks and connections. Deltas carry no
    /// per-scenario or per-group sections.
    pub fn merge(&mut self, delta: &Delta) -> Result<(), DeltaError> {
        for m in &delta.metrics {
            let id = self
                .registry
                .register(&m.name, m.kind, m.contains)
                .map_err(|e| DeltaError::Register(m.name.clone(), e.to_string()))?;
            self.sync_registry();
            m.sink.merge_into(&mut self.sinks[id.index()], &m.name)?;
        }
        for s in &delta.submetrics {
            if let Some(i) = self
                .thresholds
                .submetrics
                .iter()
                .position(|x| x.name == s.name)
            {
                s.sink.merge_into(&mut self.subs[i].sink, &s.name)?;
            }
        }
        for g in &delta.groups {
            self.groups.see(g);
        }
        for c in &delta.checks {
            self.groups.add_checks(&c.group, &c.name, c.passes, c.fails);
            self.checks.add_n(&c.group, &c.name, c.passes, c.fails);
        }
        self.connections.absorb(&delta.connections);
        Ok(())
    }

    /// An `iterations_unserved` sample: that many arrivals count as unserved in each
    /// corrected Trend and its sub-metrics whose tags the sample has.
    fn add_unserved(&mut self, s: &Sample) {
        let n = s.value.max(0.0) as u64;
        for metric in builtin::CORRECTED {
            let i = metric.index();
            if i >= self.sinks.len() {
                continue;
            }
            self.sinks[i].add_unserved(n);
            for &sub in &self.subs_by_metric[i] {
                let sub = &mut self.subs[sub];
                if sub.tags.iter().all(|(k, v)| s.tags.get(k) == Some(&**v)) {
                    sub.sink.add_unserved(n);
                }
            }
        }
    }

    /// Evaluates every threshold now: every 2 s during the run ([`Pass::During`], where a
    /// metric without samples is not judged) and once at the end ([`Pass::Final`]).
    /// `elapsed` is the test run time so far, the divisor of Counter rates.
    pub fn evaluate(&mut self, elapsed: Duration, pass: Pass) -> Verdict {
        let mut verdict = Verdict::default();
        let mut judged: HashMap<String, bool> = HashMap::new();
        for t in &self.thresholds.thresholds {
            let sink = self.sink(t.target);
            let (ok, _) = t.check(sink, elapsed, pass);
            if pass == Pass::Final || !sink.is_empty() {
                *judged.entry(t.metric.clone()).or_default() |= !ok;
            }
            if !ok {
                verdict.failed = true;
                verdict.crossed.push(t.metric.clone());
                if t.aborts_at(elapsed) {
                    verdict.abort = true;
                }
            }
        }
        verdict.crossed.sort();
        verdict.crossed.dedup();
        self.tainted.extend(judged);
        verdict
    }

    /// Snapshot for the end-of-test outputs. `trend_stats` are `summaryTrendStats` entries
    /// (`avg`, `min`, `med`, `max`, `count`, `p(N)`); unknown ones are skipped.
    pub fn summary(&self, elapsed: Duration, trend_stats: &[String]) -> SummaryData {
        let mut metrics = Vec::new();
        for (i, (info, sink)) in self.infos.iter().zip(&self.sinks).enumerate() {
            let target = Target::Metric(MetricId(i as u32));
            if let Some(m) =
                self.metric_summary(&info.name, info, sink, target, elapsed, trend_stats)
            {
                metrics.push(m);
            }
        }
        for (i, (spec, sub)) in self
            .thresholds
            .submetrics
            .iter()
            .zip(&self.subs)
            .enumerate()
        {
            let info = &self.infos[spec.parent.index()];
            if let Some(mut m) = self.metric_summary(
                &spec.name,
                info,
                &sub.sink,
                Target::SubMetric(i),
                elapsed,
                trend_stats,
            ) {
                m.parent = Some(info.name.clone());
                m.submetric_tags = spec.tags.clone();
                metrics.push(m);
            }
        }
        metrics.sort_by(|a, b| a.name.cmp(&b.name));
        SummaryData {
            metrics,
            root_group: self.groups.summary(),
            checks: self.checks.checks.clone(),
            duration: elapsed,
            sections: self
                .sections
                .as_ref()
                .map(|s| s.summary(&self.infos, elapsed, trend_stats)),
            connections: self.connections,
        }
    }

    /// Whether a threshold on `name` (a metric or `metric{tags}`) was crossed when its
    /// thresholds were last judged; `None` before that or when it has none (k6's
    /// `tainted`).
    pub fn tainted(&self, name: &str) -> Option<bool> {
        self.tainted.get(name).copied()
    }

    /// The group tree with its checks so far (the summary's `root_group`).
    pub fn root_group(&self) -> GroupSummary {
        self.groups.summary()
    }

    /// Whether some metric is tainted (k6's test-wide `tainted`).
    pub fn any_tainted(&self) -> bool {
        self.tainted.values().any(|t| *t)
    }

    /// The registry this aggregator reads.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The thresholds it evaluates (including the implicit sub-metric specs).
    pub fn thresholds(&self) -> &ThresholdSet {
        &self.thresholds
    }

    fn sink(&self, target: Target) -> &Sink {
        match target {
            Target::Metric(id) => &self.sinks[id.index()],
            Target::SubMetric(i) => &self.subs[i].sink,
        }
    }

    /// A metric's summary, or `None` when it has no samples and no threshold key names it
    /// (k6 shows a metric named by a threshold key, or the parent of one, even when empty).
    fn metric_summary(
        &self,
        name: &str,
        info: &MetricInfo,
        sink: &Sink,
        target: Target,
        elapsed: Duration,
        trend_stats: &[String],
    ) -> Option<MetricSummary> {
        let thresholds: Vec<ThresholdResult> = self
            .thresholds
            .thresholds
            .iter()
            .filter(|t| t.target == target)
            .map(|t| {
                let (ok, value) = t.check(sink, elapsed, Pass::Final);
                ThresholdResult {
                    source: t.source.clone(),
                    ok,
                    stat: t.stat_text.clone(),
                    value,
                }
            })
            .collect();
        if sink.is_empty() && thresholds.is_empty() && !self.thresholds.observed.contains(&target) {
            return None;
        }
        Some(MetricSummary {
            name: name.to_owned(),
            kind: info.kind,
            contains: info.contains,
            values: metric_values(info.kind, sink, elapsed, trend_stats),
            thresholds,
            parent: None,
            submetric_tags: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::{MetricType, ValueType};
    use crate::tags::TagSet;
    use serde_json::json;
    use std::time::SystemTime;

    fn sample(metric: MetricId, value: f64, tags: &[(&str, &str)]) -> Sample {
        Sample {
            metric,
            tags: TagSet::from_pairs(tags.iter().copied()),
            value,
            time: SystemTime::UNIX_EPOCH,
        }
    }

    fn aggregator(thresholds: serde_json::Value) -> Aggregator {
        let registry = Arc::new(Registry::new());
        let set = ThresholdSet::parse(&thresholds, &registry).unwrap();
        Aggregator::new(registry, set)
    }

    fn stats() -> Vec<String> {
        ["avg", "min", "med", "max", "p(90)", "p(95)"]
            .map(String::from)
            .to_vec()
    }

    const SECS2: Duration = Duration::from_secs(2);

    #[test]
    fn groups_come_from_group_calls_and_checks_only() {
        let mut agg = aggregator(json!(null));
        agg.add(&[
            sample(builtin::ITERATIONS, 1.0, &[("group", "::teardown")]),
            sample(builtin::HTTP_REQS, 1.0, &[("group", "::setup")]),
            sample(builtin::GROUP_DURATION, 1.0, &[("group", "::setup::sg")]),
            sample(builtin::CHECKS, 1.0, &[("group", "::c"), ("check", "ok")]),
        ]);
        let root = agg.summary(SECS2, &stats()).root_group;
        let paths: Vec<&str> = root.groups.iter().map(|g| g.path.as_str()).collect();
        assert_eq!(paths, ["::setup", "::c"]);
        assert_eq!(root.groups[0].groups[0].path, "::setup::sg");
    }

    #[test]
    fn tainted_follows_the_last_pass_that_judged_the_metric() {
        let mut agg = aggregator(json!({"iterations": ["count>1"], "checks": ["rate>0"]}));
        assert_eq!(agg.tainted("iterations"), None);
        agg.evaluate(SECS2, Pass::During);
        // No samples yet: not judged during the run, as in k6.
        assert_eq!(agg.tainted("iterations"), None);
        agg.add(&[sample(builtin::ITERATIONS, 1.0, &[])]);
        agg.evaluate(SECS2, Pass::During);
        assert_eq!(agg.tainted("iterations"), Some(true));
        assert!(agg.any_tainted());
        assert_eq!(agg.tainted("checks"), None);
        assert_eq!(agg.tainted("vus"), None);
        agg.add(&[sample(builtin::ITERATIONS, 1.0, &[])]);
        agg.evaluate(SECS2, Pass::Final);
        assert_eq!(agg.tainted("iterations"), Some(false));
        // The end judges empty metrics too (an empty Rate passes).
        assert_eq!(agg.tainted("checks"), Some(false));
    }

    #[test]
    fn percentile_thresholds_do_not_flip_within_histogram_precision() {
        // 30,000 durations: p(95) is 199.95 ms, closer to the 200 ms boundary than the
        // histograms' 0.1 %. The verdicts must be what an exact sort gives.
        let mut agg = aggregator(json!({
            "http_req_duration": ["p(95)<200", "p(99)>200", "med<=199.95"],
            "http_req_duration{status:200}": ["p(95)<200"],
        }));
        let d = builtin::HTTP_REQ_DURATION;
        let batch: Vec<Sample> = (0..30_000u32)
            .map(|i| {
                let v = if i < 29_000 { 199.95 } else { 200.05 };
                sample(d, v, &[("status", "200")])
            })
            .collect();
        agg.add(&batch);
        let v = agg.evaluate(SECS2, Pass::During);
        assert!(!v.failed, "{:?}", v.crossed);
        let mut agg = aggregator(json!({"http_req_duration": ["p(95)>=200"]}));
        agg.add(&batch);
        assert!(agg.evaluate(SECS2, Pass::During).failed);
    }

    #[test]
    fn routes_to_metric_and_matching_submetrics() {
        let mut agg = aggregator(json!({
            "http_req_duration{scenario:a}": ["p(99)<1000"],
            "http_req_duration{scenario:a,status:200}": ["max<1000"],
        }));
        let d = builtin::HTTP_REQ_DURATION;
        agg.add(&[
            sample(
                d,
                10.0,
                &[
                    ("scenario", "a"),
                    ("status", "200"),
                    ("expected_response", "true"),
                ],
            ),
            sample(
                d,
                20.0,
                &[
                    ("scenario", "a"),
                    ("status", "404"),
                    ("expected_response", "false"),
                ],
            ),
            sample(
                d,
                30.0,
                &[
                    ("scenario", "b"),
                    ("status", "200"),
                    ("expected_response", "true"),
                ],
            ),
            sample(builtin::HTTP_REQS, 1.0, &[("scenario", "a")]),
        ]);
        let s = agg.summary(SECS2, &stats());
        let names: Vec<_> = s.metrics.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "http_req_duration",
                "http_req_duration{expected_response:true}",
                "http_req_duration{scenario:a,status:200}",
                "http_req_duration{scenario:a}",
                "http_reqs",
            ]
        );
        let all = s.metric("http_req_duration").unwrap();
        assert_eq!(all.value("avg"), Some(20.0));
        assert_eq!(all.parent, None);
        let exp = s
            .metric("http_req_duration{expected_response:true}")
            .unwrap();
        assert_eq!(
            (exp.value("min"), exp.value("max")),
            (Some(10.0), Some(30.0))
        );
        assert_eq!(exp.parent.as_deref(), Some("http_req_duration"));
        assert_eq!(
            exp.submetric_tags,
            vec![("expected_response".to_string(), "true".to_string())]
        );
        let a = s.metric("http_req_duration{scenario:a}").unwrap();
        assert_eq!(a.value("avg"), Some(15.0));
        assert_eq!(a.thresholds[0].source, "p(99)<1000");
        let a200 = s
            .metric("http_req_duration{scenario:a,status:200}")
            .unwrap();
        assert_eq!(a200.value("max"), Some(10.0));
        assert_eq!(a200.kind, MetricType::Trend);
        assert_eq!(a200.contains, ValueType::Time);
    }

    #[test]
    fn values_use_k6_keys_and_order() {
        let mut agg = aggregator(json!(null));
        agg.add(&[
            sample(builtin::ITERATIONS, 1.0, &[]),
            sample(builtin::ITERATIONS, 1.0, &[]),
            sample(builtin::VUS, 2.0, &[]),
            sample(builtin::VUS, 1.0, &[]),
            sample(builtin::HTTP_REQ_FAILED, 1.0, &[]),
            sample(builtin::HTTP_REQ_FAILED, 0.0, &[]),
            sample(builtin::ITERATION_DURATION, 4.0, &[]),
        ]);
        let keys = ["count", "p(99.9)", "avg", "bogus"].map(String::from);
        let s = agg.summary(SECS2, &keys);
        let v = |n: &str| s.metric(n).unwrap().values.clone();
        let pairs = |p: &[(&str, f64)]| {
            p.iter()
                .map(|(k, v)| (k.to_string(), *v))
                .collect::<Vec<_>>()
        };
        assert_eq!(v("iterations"), pairs(&[("count", 2.0), ("rate", 1.0)]));
        assert_eq!(
            v("vus"),
            pairs(&[("value", 1.0), ("min", 1.0), ("max", 2.0)])
        );
        assert_eq!(
            v("http_req_failed"),
            pairs(&[("rate", 0.5), ("passes", 1.0), ("fails", 1.0)])
        );
        assert_eq!(
            v("iteration_duration"),
            pairs(&[("count", 1.0), ("p(99.9)", 4.0), ("avg", 4.0)])
        );
        assert!(
            s.metric("http_reqs").is_none(),
            "metrics without samples are left out"
        );
        assert!(s
            .metric("http_req_duration{expected_response:true}")
            .is_none());
        assert_eq!(s.duration, SECS2);
    }

    #[test]
    fn checks_are_tallied_per_group_and_groups_remembered() {
        let mut agg = aggregator(json!(null));
        let c = builtin::CHECKS;
        agg.add(&[
            sample(builtin::HTTP_REQS, 1.0, &[("group", "::g2")]),
            sample(builtin::GROUP_DURATION, 2.0, &[("group", "::g2")]),
            sample(c, 1.0, &[("group", ""), ("check", "status is 200")]),
            sample(c, 0.0, &[("group", ""), ("check", "status is 200")]),
            sample(c, 1.0, &[("group", "::g1"), ("check", "ok")]),
            sample(c, 1.0, &[("group", "::g1::inner"), ("check", "deep")]),
            sample(builtin::GROUP_DURATION, 5.0, &[("group", "::g1")]),
            sample(c, 0.0, &[("group", ""), ("check", "late")]),
        ]);
        let s = agg.summary(SECS2, &stats());
        let root = &s.root_group;
        assert_eq!(root.checks.len(), 2);
        assert_eq!((root.checks[0].passes, root.checks[0].fails), (1, 1));
        let groups: Vec<_> = root.groups.iter().map(|g| g.path.as_str()).collect();
        assert_eq!(groups, ["::g2", "::g1"]);
        assert_eq!(root.groups[1].checks[0].name, "ok");
        assert_eq!(root.groups[1].groups[0].checks[0].path, "::g1::inner::deep");
        let merged: Vec<_> = s
            .checks
            .iter()
            .map(|c| (c.name.as_str(), c.passes, c.fails))
            .collect();
        assert_eq!(
            merged,
            [
                ("status is 200", 1, 1),
                ("ok", 1, 0),
                ("deep", 1, 0),
                ("late", 0, 1)
            ],
            "first-seen, not depth-first"
        );
        let checks = s.metric("checks").unwrap();
        assert_eq!(checks.value("passes"), Some(3.0));
        assert_eq!(checks.value("fails"), Some(2.0));
    }

    #[test]
    fn thresholds_evaluate_and_empty_sinks_pass() {
        let mut agg = aggregator(json!({
            "http_req_duration": ["p(95)<500", "avg<100"],
            "http_req_failed": ["rate<0.01"],
            "iterations": ["count>=2", "rate>0.4"],
        }));
        let v = agg.evaluate(SECS2, Pass::During);
        assert_eq!(v, Verdict::default(), "no samples yet: nothing is judged");
        let v = agg.evaluate(SECS2, Pass::Final);
        assert_eq!(
            v.crossed,
            ["iterations"],
            "at the end, an empty Counter counts 0 (count>=2 fails), an empty Trend is all \
             zeros (p(95)<500 and avg<100 hold) and an empty Rate passes"
        );
        agg.add(&[
            sample(builtin::HTTP_REQ_DURATION, 50.0, &[]),
            sample(builtin::HTTP_REQ_DURATION, 600.0, &[]),
            sample(builtin::ITERATIONS, 1.0, &[]),
        ]);
        let v = agg.evaluate(SECS2, Pass::During);
        assert!(v.failed);
        assert!(!v.abort);
        assert_eq!(v.crossed, ["http_req_duration", "iterations"]);
        let s = agg.summary(SECS2, &stats());
        let d = s.metric("http_req_duration").unwrap();
        assert_eq!(d.thresholds.len(), 2);
        assert!(!d.thresholds[0].ok);
        assert_eq!(d.thresholds[0].stat, "p(95)");
        assert!((d.thresholds[0].value.unwrap() - 572.5).abs() < 1e-9);
        assert!(!d.thresholds[1].ok, "avg 325 is not < 100");
        let failed = s
            .metric("http_req_failed")
            .expect("metrics with thresholds are kept");
        assert!(failed.thresholds[0].ok);
        assert_eq!(failed.thresholds[0].value, None);
        let it = s.metric("iterations").unwrap();
        assert_eq!(
            it.thresholds.iter().map(|t| t.ok).collect::<Vec<_>>(),
            [false, true]
        );
    }

    #[test]
    fn abort_waits_for_delay() {
        let mut agg = aggregator(json!({
            "http_req_failed": [{"threshold": "rate<0.5", "abortOnFail": true, "delayAbortEval": "10s"}],
            "checks": ["rate>0.9"],
        }));
        agg.add(&[sample(builtin::HTTP_REQ_FAILED, 1.0, &[])]);
        let early = agg.evaluate(Duration::from_secs(5), Pass::During);
        assert!(early.failed && !early.abort);
        let late = agg.evaluate(Duration::from_secs(11), Pass::During);
        assert!(late.failed && late.abort);
        assert_eq!(late.crossed, ["http_req_failed"]);
    }

    #[test]
    fn sections_split_by_scenario_and_exact_group() {
        let mut agg = aggregator(json!(null));
        assert_eq!(
            agg.summary(SECS2, &stats()).sections,
            None,
            "off by default"
        );
        agg.keep_sections(["beta", "alpha", "default"]);
        let (c, reqs) = (builtin::CHECKS, builtin::HTTP_REQS);
        agg.add(&[
            sample(reqs, 1.0, &[("group", "::setup"), ("scenario", "x")]),
            sample(c, 1.0, &[("group", "::setup"), ("check", "in setup")]),
            sample(reqs, 1.0, &[("group", "::setup::sg")]),
            sample(
                builtin::ITERATIONS,
                1.0,
                &[("group", ""), ("scenario", "alpha")],
            ),
            sample(reqs, 1.0, &[("group", "::outer"), ("scenario", "alpha")]),
            sample(
                c,
                0.0,
                &[
                    ("group", "::outer::inner"),
                    ("scenario", "alpha"),
                    ("check", "deep"),
                ],
            ),
            sample(
                c,
                1.0,
                &[("group", ""), ("scenario", "alpha"), ("check", "top")],
            ),
            sample(
                c,
                1.0,
                &[("group", "::zeta"), ("scenario", "beta"), ("check", "z")],
            ),
            sample(reqs, 1.0, &[("group", "::g"), ("scenario", "default")]),
        ]);
        let s = agg.summary(SECS2, &stats()).sections.unwrap();
        let names =
            |v: &[crate::SectionSummary]| v.iter().map(|x| x.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&s.scenarios), ["alpha", "beta"], "sorted by name");
        assert_eq!(
            names(&s.groups),
            ["setup", "g"],
            "first-seen; default is unscoped"
        );
        let setup = &s.groups[0];
        assert!(
            setup.metrics.is_empty() && setup.checks.is_empty(),
            "{setup:?}"
        );
        assert_eq!(names(&setup.groups), ["sg"]);
        assert_eq!(setup.groups[0].metrics[0].value("count"), Some(1.0));
        let alpha = &s.scenarios[0];
        let metric_names: Vec<_> = alpha.metrics.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(metric_names, ["checks", "http_reqs", "iterations"]);
        assert_eq!(alpha.metrics[1].value("rate"), Some(0.5));
        let checks: Vec<_> = alpha
            .checks
            .iter()
            .map(|c| (c.name.as_str(), c.passes, c.fails))
            .collect();
        assert_eq!(checks, [("deep", 0, 1), ("top", 1, 0)]);
        let outer = &alpha.groups[0];
        assert_eq!(outer.name, "outer");
        assert!(outer.checks.is_empty(), "a group holds only its own checks");
        assert_eq!(outer.metrics.len(), 1);
        assert_eq!(outer.groups[0].checks[0].path, "::outer::inner::deep");
        assert_eq!(outer.groups[0].metrics[0].name, "checks");
        assert_eq!(names(&s.scenarios[1].groups), ["zeta"]);
    }

    #[test]
    fn custom_metrics_registered_later_are_picked_up() {
        let registry = Arc::new(Registry::new());
        let mut agg = Aggregator::new(registry.clone(), ThresholdSet::default());
        let id = registry
            .register("my_trend", MetricType::Trend, ValueType::Time)
            .unwrap();
        agg.add(&[sample(id, 3.0, &[]), sample(MetricId(999), 1.0, &[])]);
        let s = agg.summary(SECS2, &stats());
        assert_eq!(s.metric("my_trend").unwrap().value("max"), Some(3.0));
    }
}
