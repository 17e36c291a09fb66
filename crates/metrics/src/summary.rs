//! Plain snapshot of a test's results, consumed by rk6-output and by `handleSummary`.

use std::time::Duration;

use md5_digest::{Digest as _, Md5};

use crate::connections::ConnectionTally;
use crate::metric::{MetricType, ValueType};

/// Everything the end-of-test outputs need.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryData {
    /// Metrics and sub-metrics with samples or thresholds, sorted by name.
    pub metrics: Vec<MetricSummary>,
    /// The group tree with check tallies.
    pub root_group: GroupSummary,
    /// Every check merged by name over all groups, in first-seen order (the list under
    /// TOTAL RESULTS); `path` and `id` are those of the group it was first seen in.
    pub checks: Vec<CheckSummary>,
    /// Test run time the rates were computed over.
    pub duration: Duration,
    /// Per-scenario and per-group results; `None` unless the aggregator was asked to keep
    /// them ([`crate::Aggregator::keep_sections`]), as the full text summary is.
    pub sections: Option<Sections>,
    /// Connections opened against requests made (rk6's `http connections:` line).
    pub connections: ConnectionTally,
}

/// The per-scenario and per-group parts of the full text summary.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Sections {
    /// Top-level groups of samples outside any named scenario (including the scenario
    /// called `default`, which k6 does not list separately), in first-seen order.
    pub groups: Vec<SectionSummary>,
    /// One section per named scenario with samples, sorted by name.
    pub scenarios: Vec<SectionSummary>,
}

/// Results of one scenario or group.
#[derive(Debug, Clone, PartialEq)]
pub struct SectionSummary {
    /// Scenario or group name.
    pub name: String,
    /// Metrics with samples here, sorted by name; never sub-metrics or thresholds.
    pub metrics: Vec<MetricSummary>,
    /// A scenario's checks merged by name over all its groups, or a group's own checks,
    /// in first-seen order.
    pub checks: Vec<CheckSummary>,
    /// Sub-groups in first-seen order.
    pub groups: Vec<SectionSummary>,
}

impl SummaryData {
    /// The metric or sub-metric with exactly this name.
    pub fn metric(&self, name: &str) -> Option<&MetricSummary> {
        self.metrics.iter().find(|m| m.name == name)
    }
}

/// Aggregated values of one metric or sub-metric.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricSummary {
    /// Metric name; sub-metrics are `parent{tag:value}`.
    pub name: String,
    /// Metric type.
    pub kind: MetricType,
    /// Value type.
    pub contains: ValueType,
    /// k6's keys in k6's order: Trend → the requested trend stats; Counter → count, rate;
    /// Gauge → value, min, max; Rate → rate, passes, fails.
    pub values: Vec<(String, f64)>,
    /// Thresholds declared on exactly this name, in declaration order.
    pub thresholds: Vec<ThresholdResult>,
    /// The parent metric's name, for sub-metrics.
    pub parent: Option<String>,
    /// The sub-metric's selector tags in written order; empty for plain metrics.
    pub submetric_tags: Vec<(String, String)>,
}

impl MetricSummary {
    /// The value under `key` (e.g. `"p(95)"`, `"count"`).
    pub fn value(&self, key: &str) -> Option<f64> {
        self.values.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }
}

/// Outcome of one threshold.
#[derive(Debug, Clone, PartialEq)]
pub struct ThresholdResult {
    /// The expression as written, e.g. `p(95)<500`.
    pub source: String,
    /// Whether it held.
    pub ok: bool,
    /// The left-hand side as written, e.g. `p(95)`.
    pub stat: String,
    /// The left-hand side's value; `None` when the metric had no samples.
    pub value: Option<f64>,
}

/// A group with its sub-groups and checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupSummary {
    /// Group name; `""` for the root.
    pub name: String,
    /// `::parent::name`; `""` for the root.
    pub path: String,
    /// MD5 hex of `path`.
    pub id: String,
    /// Sub-groups in first-seen order.
    pub groups: Vec<GroupSummary>,
    /// Checks in first-seen order.
    pub checks: Vec<CheckSummary>,
}

/// Pass/fail tally of one check in one group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckSummary {
    /// Check name.
    pub name: String,
    /// Group path + `::` + name.
    pub path: String,
    /// MD5 hex of `path`.
    pub id: String,
    /// Times the predicate held.
    pub passes: u64,
    /// Times it did not.
    pub fails: u64,
}

/// Lower-case hex MD5, k6's group and check id.
pub fn md5_hex(s: &str) -> String {
    format!("{:x}", Md5::digest(s.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_md5_of_paths() {
        assert_eq!(md5_hex(""), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(md5_hex("::g1"), "9ccb03cc5acd728a2fe595bbd1f14da3");
        assert_eq!(md5_hex("::g1::ok"), "a78dc076641b6ca35ffd09a7c2c8ee7d");
        assert_eq!(
            md5_hex("::status is 200"),
            "6210a8cd14cd70477eba5c5e4cb3fb5f"
        );
    }
}
