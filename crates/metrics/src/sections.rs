//! Per-scenario and per-group aggregates behind the full text summary's `█ SCENARIO` and
//! `↳ GROUP` sections. Only built when that summary asks for them, so the compact summary
//! pays nothing; every sink is a normal [`Sink`] (Trends switch to HDR histograms), so
//! memory stays bounded by scenarios × groups × metrics.

use rustc_hash::FxHashMap as HashMap;
use std::time::Duration;

use crate::builtin;
use crate::group_tree::GroupTree;
use crate::metric::MetricInfo;
use crate::metric_values::metric_values;
use crate::sample::Sample;
use crate::sink::Sink;
use crate::summary::{md5_hex, CheckSummary, MetricSummary, SectionSummary, Sections};

/// k6 lists the scenario called `default` (the `vus`/`duration` shortcut) under top-level
/// groups instead of in a section of its own.
const UNLISTED_SCENARIO: &str = "default";

/// The pseudo-groups that `setup()` and `teardown()` run in: their own samples are not
/// shown in any section, only groups created inside them are.
const LIFECYCLE_GROUPS: [&str; 2] = ["::setup", "::teardown"];

/// One sink per metric id, created on the metric's first sample here.
#[derive(Debug, Default)]
struct SinkSet(Vec<Option<Sink>>);

impl SinkSet {
    fn add(&mut self, s: &Sample, info: &MetricInfo) {
        let i = s.metric.index();
        if self.0.len() <= i {
            self.0.resize_with(i + 1, || None);
        }
        self.0[i]
            .get_or_insert_with(|| Sink::new(info.kind))
            .add(s.value);
    }

    /// Summaries of the metrics with samples, sorted by name.
    fn summary(
        &self,
        infos: &[MetricInfo],
        elapsed: Duration,
        trend_stats: &[String],
    ) -> Vec<MetricSummary> {
        let mut out: Vec<MetricSummary> = self
            .0
            .iter()
            .zip(infos)
            .filter_map(|(sink, info)| {
                let sink = sink.as_ref().filter(|s| !s.is_empty())?;
                Some(MetricSummary {
                    name: info.name.clone(),
                    kind: info.kind,
                    contains: info.contains,
                    values: metric_values(info.kind, sink, elapsed, trend_stats),
                    thresholds: Vec::new(),
                    parent: None,
                    submetric_tags: Vec::new(),
                })
            })
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }
}

/// A group tree with a sink set per group.
#[derive(Debug, Default)]
struct GroupSinks {
    tree: GroupTree,
    /// Indexed by the tree's node index.
    sinks: Vec<SinkSet>,
}

impl GroupSinks {
    /// Records a sample of the group at `path` (never the root or a lifecycle group).
    fn add(&mut self, path: &str, s: &Sample, info: &MetricInfo) {
        let node = self.tree.see(path);
        if s.metric == builtin::CHECKS {
            if let Some(check) = s.tags.get("check") {
                self.tree.add_check(path, check, s.value != 0.0);
            }
        }
        if self.sinks.len() <= node {
            self.sinks.resize_with(node + 1, SinkSet::default);
        }
        self.sinks[node].add(s, info);
    }

    /// Sections of the root's sub-groups, recursively.
    fn sections(
        &self,
        infos: &[MetricInfo],
        elapsed: Duration,
        trend_stats: &[String],
    ) -> Vec<SectionSummary> {
        fn walk(
            g: &crate::summary::GroupSummary,
            me: &GroupSinks,
            infos: &[MetricInfo],
            elapsed: Duration,
            trend_stats: &[String],
        ) -> SectionSummary {
            let metrics = me
                .tree
                .index(&g.path)
                .and_then(|i| me.sinks.get(i))
                .map(|s| s.summary(infos, elapsed, trend_stats))
                .unwrap_or_default();
            SectionSummary {
                name: g.name.clone(),
                metrics,
                checks: g.checks.clone(),
                groups: g
                    .groups
                    .iter()
                    .map(|sub| walk(sub, me, infos, elapsed, trend_stats))
                    .collect(),
            }
        }
        self.tree
            .summary()
            .groups
            .iter()
            .map(|g| walk(g, self, infos, elapsed, trend_stats))
            .collect()
    }
}

/// Check tallies merged by name, in first-seen order.
#[derive(Debug, Default)]
pub(crate) struct CheckList {
    pub(crate) checks: Vec<CheckSummary>,
    index: HashMap<Box<str>, usize>,
}

impl CheckList {
    /// Counts one outcome of check `name` run in the group at `group`.
    pub(crate) fn add(&mut self, group: &str, name: &str, passed: bool) {
        let (passes, fails) = if passed { (1, 0) } else { (0, 1) };
        self.add_n(group, name, passes, fails);
    }

    /// Counts `passes` and `fails` of check `name` first run in the group at `group`.
    pub(crate) fn add_n(&mut self, group: &str, name: &str, passes: u64, fails: u64) {
        let i = match self.index.get(name) {
            Some(&i) => i,
            None => {
                let path = format!("{group}::{name}");
                self.checks.push(CheckSummary {
                    name: name.to_owned(),
                    id: md5_hex(&path),
                    path,
                    passes: 0,
                    fails: 0,
                });
                self.index.insert(name.into(), self.checks.len() - 1);
                self.checks.len() - 1
            }
        };
        let c = &mut self.checks[i];
        c.passes += passes;
        c.fails += fails;
    }
}

/// One named scenario's aggregates.
#[derive(Debug)]
struct ScenarioSinks {
    name: Box<str>,
    /// Every sample of the scenario, whatever its group.
    all: SinkSet,
    checks: CheckList,
    groups: GroupSinks,
}

/// Everything the `█ SCENARIO` and `█ GROUP` sections need.
#[derive(Debug, Default)]
pub(crate) struct SectionSinks {
    by_name: HashMap<Box<str>, usize>,
    scenarios: Vec<ScenarioSinks>,
    /// Groups of samples outside the named scenarios.
    unscoped: GroupSinks,
}

impl SectionSinks {
    /// Sections for these scenario names; samples of other scenarios (and of none) count
    /// towards the top-level groups.
    pub(crate) fn new<S: AsRef<str>>(scenarios: impl IntoIterator<Item = S>) -> Self {
        let mut me = SectionSinks::default();
        for name in scenarios {
            let name = name.as_ref();
            if name == UNLISTED_SCENARIO || me.by_name.contains_key(name) {
                continue;
            }
            me.by_name.insert(name.into(), me.scenarios.len());
            me.scenarios.push(ScenarioSinks {
                name: name.into(),
                all: SinkSet::default(),
                checks: CheckList::default(),
                groups: GroupSinks::default(),
            });
        }
        me
    }

    /// Routes one sample to its scenario and group.
    pub(crate) fn add(&mut self, s: &Sample, info: &MetricInfo) {
        let group = s.tags.get("group").unwrap_or("");
        let scenario = s.tags.get("scenario").and_then(|n| self.by_name.get(n));
        let groups = match scenario {
            Some(&i) => {
                let sc = &mut self.scenarios[i];
                sc.all.add(s, info);
                if s.metric == builtin::CHECKS {
                    if let Some(check) = s.tags.get("check") {
                        sc.checks.add(group, check, s.value != 0.0);
                    }
                }
                &mut sc.groups
            }
            None => &mut self.unscoped,
        };
        if !group.is_empty() && !LIFECYCLE_GROUPS.contains(&group) {
            groups.add(group, s, info);
        }
    }

    /// The sections as summary data.
    pub(crate) fn summary(
        &self,
        infos: &[MetricInfo],
        elapsed: Duration,
        trend_stats: &[String],
    ) -> Sections {
        let mut scenarios: Vec<SectionSummary> = self
            .scenarios
            .iter()
            .filter_map(|sc| {
                let metrics = sc.all.summary(infos, elapsed, trend_stats);
                if metrics.is_empty() {
                    return None;
                }
                Some(SectionSummary {
                    name: sc.name.to_string(),
                    metrics,
                    checks: sc.checks.checks.clone(),
                    groups: sc.groups.sections(infos, elapsed, trend_stats),
                })
            })
            .collect();
        scenarios.sort_by(|a, b| a.name.cmp(&b.name));
        Sections {
            groups: self.unscoped.sections(infos, elapsed, trend_stats),
            scenarios,
        }
    }
}
