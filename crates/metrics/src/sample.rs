//! One measured value.

use std::time::SystemTime;

use crate::metric::MetricId;
use crate::tags::TagSet;

/// One value of one metric, with its tags and when it was taken.
#[derive(Clone, Debug)]
pub struct Sample {
    /// The metric it belongs to.
    pub metric: MetricId,
    /// Its tags (shared with other samples of the same request or iteration).
    pub tags: TagSet,
    /// The value; ms for time metrics, bytes for data metrics, 0/1 for rates.
    pub value: f64,
    /// Wall-clock time of the measurement.
    pub time: SystemTime,
}
