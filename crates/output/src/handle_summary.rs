//! The `data` argument of a script's `handleSummary(data)`.

use serde_json::{json, Map, Value};

use rk6_metrics::{GroupSummary, SummaryData};

use crate::json::num;

/// Builds the object passed to JS `handleSummary`: `root_group` (groups and checks as
/// arrays), `options`, `state`, `metrics` (`{type, contains, values, thresholds?: {expr:
/// {ok}}}`) and, when setup returned something, `setup_data`.
pub fn handle_summary_data(
    data: &SummaryData,
    trend_stats: &[String],
    time_unit: Option<&str>,
    no_color: bool,
    stdout_tty: bool,
    stderr_tty: bool,
    setup_data: Option<Value>,
) -> Value {
    let mut metrics = Map::new();
    for m in &data.metrics {
        let values: Map<String, Value> =
            m.values.iter().map(|(k, v)| (k.clone(), num(*v))).collect();
        let mut obj = Map::new();
        obj.insert("type".into(), json!(m.kind));
        obj.insert("contains".into(), json!(m.contains));
        obj.insert("values".into(), Value::Object(values));
        if !m.thresholds.is_empty() {
            let th: Map<String, Value> = m
                .thresholds
                .iter()
                .map(|t| (t.source.clone(), json!({ "ok": t.ok })))
                .collect();
            obj.insert("thresholds".into(), Value::Object(th));
        }
        metrics.insert(m.name.clone(), Value::Object(obj));
    }
    let mut out = Map::new();
    out.insert("root_group".into(), group(&data.root_group));
    out.insert(
        "options".into(),
        json!({
            "summaryTrendStats": trend_stats,
            "summaryTimeUnit": time_unit.unwrap_or(""),
            "noColor": no_color,
        }),
    );
    out.insert(
        "state".into(),
        json!({
            "testRunDurationMs": num(data.duration.as_nanos() as f64 / 1e6),
            "isStdOutTTY": stdout_tty,
            "isStdErrTTY": stderr_tty,
        }),
    );
    out.insert("metrics".into(), Value::Object(metrics));
    if let Some(setup) = setup_data {
        out.insert("setup_data".into(), setup);
    }
    Value::Object(out)
}

fn group(g: &GroupSummary) -> Value {
    json!({
        "name": g.name,
        "path": g.path,
        "id": g.id,
        "groups": g.groups.iter().map(group).collect::<Vec<_>>(),
        "checks": g.checks.iter().map(|c| json!({
            "name": c.name,
            "path": c.path,
            "id": c.id,
            "passes": c.passes,
            "fails": c.fails,
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::basic_run;
    use std::time::Duration;

    fn stats() -> Vec<String> {
        ["avg", "min", "med", "max", "p(90)", "p(95)"]
            .map(String::from)
            .to_vec()
    }

    #[test]
    fn k6_shape() {
        let mut data = basic_run();
        data.duration = Duration::from_micros(1_018_971);
        let v = handle_summary_data(
            &data,
            &stats(),
            None,
            false,
            false,
            true,
            Some(json!({"t": 1})),
        );
        let keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
        assert_eq!(
            keys,
            ["root_group", "options", "state", "metrics", "setup_data"]
        );
        assert_eq!(
            v["options"],
            json!({"summaryTrendStats": ["avg","min","med","max","p(90)","p(95)"], "summaryTimeUnit": "", "noColor": false})
        );
        assert_eq!(v["state"]["testRunDurationMs"], json!(1018.971));
        assert_eq!(v["state"]["isStdErrTTY"], json!(true));
        assert_eq!(v["setup_data"], json!({"t": 1}));
        let m = &v["metrics"];
        assert_eq!(
            m["checks"],
            json!({"type": "rate", "contains": "default", "values": {"rate": 1, "passes": 40, "fails": 0}})
        );
        assert_eq!(
            m["http_req_failed"]["thresholds"],
            json!({"rate<0.01": {"ok": true}})
        );
        assert_eq!(m["http_req_duration"]["contains"], "time");
        assert_eq!(m["http_req_duration"]["type"], "trend");
        assert_eq!(m["data_sent"]["contains"], "data");
        assert_eq!(m["vus"]["values"], json!({"value": 2, "min": 2, "max": 2}));
        assert_eq!(
            v["root_group"],
            json!({"name": "", "path": "", "id": "d41d8cd98f00b204e9800998ecf8427e", "groups": [],
                   "checks": [{"name": "status is 200", "path": "::status is 200",
                               "id": "6210a8cd14cd70477eba5c5e4cb3fb5f", "passes": 40, "fails": 0}]})
        );
    }

    #[test]
    fn no_setup_data_and_time_unit() {
        let v = handle_summary_data(&basic_run(), &stats(), Some("ms"), true, true, false, None);
        assert!(v.get("setup_data").is_none());
        assert_eq!(v["options"]["summaryTimeUnit"], "ms");
        assert_eq!(v["options"]["noColor"], true);
    }
}
