//! The `--json FILE` result document.

use std::path::Path;
use std::time::Duration;

use hdrhistogram::Histogram;
use serde_json::{json, Map, Value};

use crate::plan::Plan;
use crate::stats::{Stats, DISTRIBUTION};
use crate::thresholds::Verdict;

fn histogram_json(hist: &Histogram<u64>) -> Value {
    if hist.is_empty() {
        return Value::Null;
    }
    let ms = |us: u64| us as f64 / 1000.0;
    let mut out = Map::new();
    out.insert("avg".into(), json!(hist.mean() / 1000.0));
    out.insert("stdev".into(), json!(hist.stdev() / 1000.0));
    out.insert("min".into(), json!(ms(hist.min())));
    for (label, q) in DISTRIBUTION {
        out.insert(label.into(), json!(ms(hist.value_at_quantile(q))));
    }
    out.insert("max".into(), json!(ms(hist.max())));
    out.insert("count".into(), json!(hist.len()));
    Value::Object(out)
}

/// Writes the result of the run to `path`, pretty-printed.
pub(crate) fn write(
    path: &Path,
    url: &str,
    plan: &Plan,
    stats: &Stats,
    elapsed: Duration,
    verdicts: &[Verdict],
) -> std::io::Result<()> {
    let secs = elapsed.as_secs_f64().max(f64::MIN_POSITIVE);
    let requests = stats.responses + stats.error_count();
    let mut statuses = stats.statuses.clone();
    statuses.sort_unstable();
    let status_codes: Map<String, Value> = statuses
        .iter()
        .map(|(s, n)| (s.to_string(), json!(n)))
        .collect();
    let errors: Map<String, Value> = stats
        .errors
        .iter()
        .map(|(code, (n, message))| (code.to_string(), json!({ "count": n, "message": message })))
        .collect();
    let thresholds: Vec<Value> = verdicts
        .iter()
        .map(|v| json!({ "threshold": v.text, "ok": v.ok, "value": v.value }))
        .collect();
    let corrected = plan.rate.is_some();
    let doc = json!({
        "url": url,
        "method": plan.request.method.as_str(),
        "connections": plan.connections,
        "threads": plan.threads,
        "duration_s": plan.duration.as_secs_f64(),
        "rate": plan.rate,
        "elapsed_s": elapsed.as_secs_f64(),
        "requests": requests,
        "responses": stats.responses,
        "errors_total": stats.error_count(),
        "requests_per_sec": requests as f64 / secs,
        "bytes_received": stats.bytes_received,
        "bytes_sent": stats.bytes_sent,
        "transfer_per_sec": stats.bytes_received as f64 / secs,
        "latency_ms": histogram_json(&stats.latency),
        "latency_corrected": corrected,
        "service_time_ms": if corrected { histogram_json(&stats.service) } else { Value::Null },
        "status_codes": status_codes,
        "errors": errors,
        "thresholds": thresholds,
        "thresholds_ok": verdicts.iter().all(|v| v.ok),
    });
    let mut text = serde_json::to_string_pretty(&doc).map_err(std::io::Error::other)?;
    text.push('\n');
    std::fs::write(path, text)
}
