//! The summary's rows as the report page's JSON holds them (checks, thresholds, metrics),
//! shared by the end-of-test report and the live dashboard.

use serde::Serialize;
use serde_json::{Map, Value};

/// One check: its group, name and tallies.
#[derive(Serialize, Clone)]
pub(crate) struct CheckRow {
    pub(crate) group: String,
    pub(crate) name: String,
    pub(crate) passes: u64,
    pub(crate) fails: u64,
}

/// One threshold expression and its verdict.
#[derive(Serialize, Clone)]
pub(crate) struct ThresholdRow {
    pub(crate) metric: String,
    pub(crate) source: String,
    pub(crate) ok: bool,
    pub(crate) value: Option<f64>,
}

/// One metric with its summary values.
#[derive(Serialize, Clone)]
pub(crate) struct MetricRow {
    pub(crate) name: String,
    pub(crate) kind: &'static str,
    pub(crate) contains: &'static str,
    pub(crate) values: Map<String, Value>,
}
