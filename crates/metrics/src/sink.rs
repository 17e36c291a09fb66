//! Per-metric accumulators.

use std::time::Duration;

use crate::metric::MetricType;
use crate::stat::Stat;
use crate::trend::TrendSink;

/// Counter accumulator: the sum of values.
#[derive(Debug, Clone, Default)]
pub struct CounterSink {
    /// Sum of all values.
    pub sum: f64,
    /// Number of samples.
    pub samples: u64,
}

/// Gauge accumulator: last value plus extremes.
#[derive(Debug, Clone, Default)]
pub struct GaugeSink {
    /// Most recent value.
    pub last: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Number of samples.
    pub samples: u64,
}

/// Rate accumulator: how many samples were non-zero.
#[derive(Debug, Clone, Default)]
pub struct RateSink {
    /// Non-zero samples.
    pub trues: u64,
    /// All samples.
    pub total: u64,
}

/// The accumulator of one metric or sub-metric.
#[derive(Debug, Clone)]
pub enum Sink {
    /// For Counter metrics.
    Counter(CounterSink),
    /// For Gauge metrics.
    Gauge(GaugeSink),
    /// For Rate metrics.
    Rate(RateSink),
    /// For Trend metrics.
    Trend(Box<TrendSink>),
}

impl Sink {
    /// An empty sink for a metric of `kind`.
    pub fn new(kind: MetricType) -> Sink {
        match kind {
            MetricType::Counter => Sink::Counter(CounterSink::default()),
            MetricType::Gauge => Sink::Gauge(GaugeSink::default()),
            MetricType::Rate => Sink::Rate(RateSink::default()),
            MetricType::Trend => Sink::Trend(Box::default()),
        }
    }

    /// Adds one sample value.
    pub fn add(&mut self, value: f64) {
        match self {
            Sink::Counter(c) => {
                c.sum += value;
                c.samples += 1;
            }
            Sink::Gauge(g) => {
                if g.samples == 0 {
                    g.min = value;
                    g.max = value;
                } else {
                    g.min = g.min.min(value);
                    g.max = g.max.max(value);
                }
                g.last = value;
                g.samples += 1;
            }
            Sink::Rate(r) => {
                r.total += 1;
                if value != 0.0 {
                    r.trues += 1;
                }
            }
            Sink::Trend(t) => t.add(value),
        }
    }

    /// Counts `n` unserved arrivals in a Trend (rk6's corrected Trends); other kinds have
    /// no such value.
    pub fn add_unserved(&mut self, n: u64) {
        if let Sink::Trend(t) = self {
            t.add_unserved(n);
        }
    }

    /// Whether there is nothing at all to pass on: no sample and no unserved arrival.
    pub fn holds_nothing(&self) -> bool {
        self.is_empty() && !matches!(self, Sink::Trend(t) if t.unserved() > 0)
    }

    /// Whether no sample arrived yet (k6 lets thresholds on such sinks pass).
    pub fn is_empty(&self) -> bool {
        match self {
            Sink::Counter(c) => c.samples == 0,
            Sink::Gauge(g) => g.samples == 0,
            Sink::Rate(r) => r.total == 0,
            Sink::Trend(t) => t.is_empty(),
        }
    }

    /// The value of `stat`, or `None` when this kind of sink does not report it.
    /// `elapsed` is the test run time, the divisor of a Counter's `rate`.
    pub fn stat(&self, stat: Stat, elapsed: Duration) -> Option<f64> {
        match (self, stat) {
            (Sink::Counter(c), Stat::Count) => Some(c.sum),
            (Sink::Counter(c), Stat::Rate) => {
                let secs = elapsed.as_secs_f64();
                Some(if secs > 0.0 { c.sum / secs } else { 0.0 })
            }
            (Sink::Gauge(g), Stat::Value) => Some(g.last),
            (Sink::Gauge(g), Stat::Min) => Some(g.min),
            (Sink::Gauge(g), Stat::Max) => Some(g.max),
            (Sink::Rate(r), Stat::Rate) => Some(if r.total == 0 {
                0.0
            } else {
                r.trues as f64 / r.total as f64
            }),
            (Sink::Rate(r), Stat::Passes) => Some(r.trues as f64),
            (Sink::Rate(r), Stat::Fails) => Some((r.total - r.trues) as f64),
            (Sink::Trend(t), Stat::Count) => Some(t.count() as f64),
            (Sink::Trend(t), Stat::Avg) => Some(t.avg()),
            (Sink::Trend(t), Stat::Min) => Some(t.min()),
            (Sink::Trend(t), Stat::Max) => Some(t.max()),
            (Sink::Trend(t), Stat::Med) => Some(t.med()),
            (Sink::Trend(t), Stat::Percentile(p)) => Some(t.percentile(p)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_S: Duration = Duration::from_secs(2);

    #[test]
    fn counter_sums_and_rates() {
        let mut s = Sink::new(MetricType::Counter);
        assert!(s.is_empty());
        s.add(1.0);
        s.add(2.5);
        assert!(!s.is_empty());
        assert_eq!(s.stat(Stat::Count, TWO_S), Some(3.5));
        assert_eq!(s.stat(Stat::Rate, TWO_S), Some(1.75));
        assert_eq!(s.stat(Stat::Rate, Duration::ZERO), Some(0.0));
        assert_eq!(s.stat(Stat::Avg, TWO_S), None);
    }

    #[test]
    fn gauge_keeps_last_min_max() {
        let mut s = Sink::new(MetricType::Gauge);
        for v in [3.0, 1.0, 5.0, 2.0] {
            s.add(v);
        }
        assert_eq!(s.stat(Stat::Value, TWO_S), Some(2.0));
        assert_eq!(s.stat(Stat::Min, TWO_S), Some(1.0));
        assert_eq!(s.stat(Stat::Max, TWO_S), Some(5.0));
        assert_eq!(s.stat(Stat::Count, TWO_S), None);
        let mut neg = Sink::new(MetricType::Gauge);
        neg.add(-4.0);
        assert_eq!(
            neg.stat(Stat::Max, TWO_S),
            Some(-4.0),
            "first sample seeds min and max"
        );
    }

    #[test]
    fn rate_counts_non_zero_values() {
        let mut s = Sink::new(MetricType::Rate);
        assert_eq!(s.stat(Stat::Rate, TWO_S), Some(0.0));
        for v in [1.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0] {
            s.add(v);
        }
        assert_eq!(s.stat(Stat::Rate, TWO_S), Some(0.25));
        assert_eq!(s.stat(Stat::Passes, TWO_S), Some(2.0));
        assert_eq!(s.stat(Stat::Fails, TWO_S), Some(6.0));
    }

    #[test]
    fn trend_reports_distribution() {
        let mut s = Sink::new(MetricType::Trend);
        for v in [1.0, 2.0, 3.0, 4.0] {
            s.add(v);
        }
        assert_eq!(s.stat(Stat::Count, TWO_S), Some(4.0));
        assert_eq!(s.stat(Stat::Avg, TWO_S), Some(2.5));
        assert_eq!(s.stat(Stat::Med, TWO_S), Some(2.5));
        assert_eq!(s.stat(Stat::Percentile(100.0), TWO_S), Some(4.0));
        assert_eq!(s.stat(Stat::Rate, TWO_S), None);
    }
}
