//! The output's log lines, in k6's logfmt layout.

use std::time::SystemTime;

use crate::timestamp::rfc3339;

/// Logs one warning line tagged with this output.
pub(crate) fn log_warning(msg: &str, error: &str) {
    eprintln!(
        "time=\"{}\" level=warning msg={} error={} output=opentelemetry",
        rfc3339(SystemTime::now(), false),
        quote(msg),
        quote(error)
    );
}

/// Logs one warning line of its own, as k6 logs those not tied to an export.
pub(crate) fn log_line(msg: &str) {
    eprintln!(
        "time=\"{}\" level=warning msg={}",
        rfc3339(SystemTime::now(), false),
        quote(msg)
    );
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}
