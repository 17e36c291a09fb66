//! The output's log lines, in k6's logfmt layout with k6's `output=InfluxDBv1` field.

use std::time::SystemTime;

use crate::timestamp::rfc3339;

/// Logs one line at `level` (`error`, `warning`), with an `error=` field when given.
pub(crate) fn log(level: &str, msg: &str, error: Option<&str>) {
    let error = error
        .map(|e| format!(" error={}", quote(e)))
        .unwrap_or_default();
    eprintln!(
        "time=\"{}\" level={level} msg={}{error} output=InfluxDBv1",
        rfc3339(SystemTime::now(), false),
        quote(msg),
    );
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}
