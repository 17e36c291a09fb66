//! Metric identity and kind.

use serde::{Deserialize, Serialize};

/// How a metric aggregates its samples (k6's metric "type").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MetricType {
    /// Cumulative sum; reports `count` and `rate` (per second).
    Counter,
    /// Last value seen; reports `value`, `min`, `max`.
    Gauge,
    /// Share of non-zero samples; reports `rate`, `passes`, `fails`.
    Rate,
    /// Distribution; reports avg, min, med, max, percentiles, count.
    Trend,
}

impl MetricType {
    /// The lower-case name k6 prints (`counter`, `gauge`, `rate`, `trend`).
    pub fn as_str(self) -> &'static str {
        match self {
            MetricType::Counter => "counter",
            MetricType::Gauge => "gauge",
            MetricType::Rate => "rate",
            MetricType::Trend => "trend",
        }
    }
}

impl std::fmt::Display for MetricType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a metric's values mean, which decides how they are displayed (k6's "contains").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ValueType {
    /// Plain numbers.
    Default,
    /// Durations in milliseconds.
    Time,
    /// Byte counts.
    Data,
}

impl ValueType {
    /// The lower-case name k6 prints (`default`, `time`, `data`).
    pub fn as_str(self) -> &'static str {
        match self {
            ValueType::Default => "default",
            ValueType::Time => "time",
            ValueType::Data => "data",
        }
    }
}

impl std::fmt::Display for ValueType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Dense index of a registered metric; indexes the aggregator's sink table directly.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MetricId(pub u32);

impl MetricId {
    /// The id as a `Vec` index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Name, type and value type of a registered metric.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetricInfo {
    /// The metric name, e.g. `http_req_duration`.
    pub name: String,
    /// How samples aggregate.
    pub kind: MetricType,
    /// How values display.
    pub contains: ValueType,
}

/// Whether `name` matches k6's metric name rule `^[a-zA-Z_][a-zA-Z0-9_]{1,128}$`.
pub fn is_valid_metric_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    let Some((first, rest)) = bytes.split_first() else {
        return false;
    };
    (first.is_ascii_alphabetic() || *first == b'_')
        && (1..=128).contains(&rest.len())
        && rest.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_names_follow_k6_rule() {
        assert!(is_valid_metric_name("my_trend"));
        assert!(is_valid_metric_name("_x"));
        assert!(is_valid_metric_name(&format!("a{}", "b".repeat(128))));
        assert!(!is_valid_metric_name(&format!("a{}", "b".repeat(129))));
        assert!(
            !is_valid_metric_name("a"),
            "a single character is too short"
        );
        assert!(!is_valid_metric_name(""));
        assert!(!is_valid_metric_name("1abc"));
        assert!(!is_valid_metric_name("my-metric"));
        assert!(!is_valid_metric_name("my metric"));
        assert!(!is_valid_metric_name("méter"));
    }

    #[test]
    fn types_serialize_lowercase() {
        assert_eq!(
            serde_json::to_string(&MetricType::Trend).unwrap(),
            "\"trend\""
        );
        assert_eq!(serde_json::to_string(&ValueType::Data).unwrap(), "\"data\"");
        assert_eq!(MetricType::Counter.to_string(), "counter");
        assert_eq!(ValueType::Time.to_string(), "time");
    }
}
