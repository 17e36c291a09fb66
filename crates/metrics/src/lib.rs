//! Samples, tags, sinks, the aggregator and thresholds of rk6. No I/O.
//!
//! # How the types fit
//!
//! * A [`Registry`] (shared as `Arc<Registry>`) maps metric names to dense [`MetricId`]s.
//!   [`Registry::new`] pre-registers k6's built-ins at the fixed ids of [`builtin`]; custom
//!   metrics are added during the init phase with [`Registry::register`].
//! * VUs produce [`Sample`]s: a metric id, a [`TagSet`] (sorted, immutable, `Arc` inside so
//!   one set is shared by all samples of a request), a value and a time. They are sent in
//!   batches, one per iteration.
//! * [`ThresholdSet::parse`] reads the `thresholds` option and validates it against the
//!   registry with k6's messages; `metric{tag:value}` keys create sub-metrics.
//! * The [`Aggregator`] is owned by one task. [`Aggregator::add`] routes each sample to the
//!   [`Sink`] at its id's index and to every sub-metric whose selector tags it carries, and
//!   tallies checks per group. [`Aggregator::evaluate`] runs the thresholds (every 2 s and
//!   at the end) and returns a [`Verdict`]. [`Aggregator::summary`] returns a plain
//!   [`SummaryData`] that rk6-output renders as text, `--summary-export` JSON or the
//!   `handleSummary` argument.
//!
//! # Percentile precision
//!
//! k6 keeps every Trend sample, sorts them and interpolates linearly at index `p·(n−1)`.
//! rk6 does exactly that for the first [`trend::EXACT_LIMIT`] (10 000) samples of each
//! Trend, so short tests print the same numbers as k6. Beyond that a Trend switches to
//! bounded memory: HDR histograms with 3 significant figures over integers of
//! `value × 1 000 000` (a millisecond value is held in nanoseconds). The same rank
//! interpolation then runs over bucket midpoints, so a percentile is within 0.1 % of k6's
//! (absolute error under 1e-6 for values below 0.002), and it is clamped to the exact
//! min and max, which together with count, sum and avg stay exact. Fractional custom
//! values keep six decimals; negative values go to a second histogram of their
//! magnitudes; magnitudes above ~4.6e12 are clamped inside the histogram (min/max/avg
//! still exact).

pub mod aggregator;
pub mod builtin;
mod connections;
pub mod delta;
pub mod group_tree;
pub mod metric;
mod metric_values;
pub mod registry;
pub mod sample;
mod sections;
pub mod sink;
pub mod stat;
pub mod summary;
pub mod tags;
pub mod threshold;
pub mod threshold_parser;
pub mod trend;

pub use aggregator::{Aggregator, Verdict};
pub use connections::ConnectionTally;
pub use metric::{is_valid_metric_name, MetricId, MetricInfo, MetricType, ValueType};
pub use registry::{MetricError, Registry};
pub use sample::Sample;
pub use sink::Sink;
pub use stat::Stat;
pub use summary::{
    md5_hex, CheckSummary, GroupSummary, MetricSummary, SectionSummary, Sections, SummaryData,
    ThresholdResult,
};
pub use tags::TagSet;
pub use threshold::{Pass, Threshold, ThresholdError, ThresholdSet};
pub use trend::TrendSink;

/// The property tests' case count: `default` in the normal test run (sized for CI), or
/// `PROPTEST_CASES` when set, for a longer fuzzing run (docs/reliability.md).
#[cfg(test)]
pub(crate) fn prop_config(default: u32) -> proptest::test_runner::Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    proptest::test_runner::Config {
        cases,
        failure_persistence: None,
        ..proptest::test_runner::Config::default()
    }
}

#[cfg(test)]
mod tests {
    fn assert_send<T: Send>() {}
    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn types_cross_threads() {
        assert_send_sync::<super::Registry>();
        assert_send_sync::<super::TagSet>();
        assert_send_sync::<super::Sample>();
        assert_send_sync::<super::ThresholdSet>();
        assert_send::<super::Aggregator>();
    }
}
