//! The values a summary shows for a metric, read from its sink.

use std::time::Duration;

use crate::metric::MetricType;
use crate::sink::Sink;
use crate::stat::Stat;

/// A sink's summary values under k6's keys, in k6's order (see [`MetricSummary::values`]).
pub(crate) fn metric_values(
    kind: MetricType,
    sink: &Sink,
    elapsed: Duration,
    trend_stats: &[String],
) -> Vec<(String, f64)> {
    let keyed = |keys: &[(&str, Stat)]| -> Vec<(String, f64)> {
        keys.iter()
            .map(|(k, st)| ((*k).to_owned(), sink.stat(*st, elapsed).unwrap_or(0.0)))
            .collect()
    };
    match kind {
        MetricType::Counter => keyed(&[("count", Stat::Count), ("rate", Stat::Rate)]),
        MetricType::Gauge => keyed(&[
            ("value", Stat::Value),
            ("min", Stat::Min),
            ("max", Stat::Max),
        ]),
        MetricType::Rate => keyed(&[
            ("rate", Stat::Rate),
            ("passes", Stat::Passes),
            ("fails", Stat::Fails),
        ]),
        MetricType::Trend => trend_stats
            .iter()
            .filter_map(|k| {
                let st = Stat::parse_trend_stat(k)?;
                Some((k.clone(), sink.stat(st, elapsed).unwrap_or(0.0)))
            })
            .collect(),
    }
}
