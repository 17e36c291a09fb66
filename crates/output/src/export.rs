//! `--summary-export`: k6's legacy JSON summary file.

use serde_json::{json, Map, Value};

use rk6_metrics::{GroupSummary, MetricType, SummaryData};

use crate::json::num;

/// The `--summary-export` document: per metric its values (Rates as `passes`, `fails`,
/// `value`) and a `thresholds` map of `{expr: true}` when the threshold FAILED; groups and
/// checks under `root_group` as objects keyed by name.
pub fn summary_export(data: &SummaryData) -> Value {
    let mut metrics = Map::new();
    for m in &data.metrics {
        let mut obj = Map::new();
        if m.kind == MetricType::Rate {
            // The legacy format names a Rate's share `value` and lists it last.
            for key in ["passes", "fails", "value"] {
                let src = if key == "value" { "rate" } else { key };
                obj.insert(key.to_owned(), num(m.value(src).unwrap_or(0.0)));
            }
        } else {
            for (k, v) in &m.values {
                obj.insert(k.clone(), num(*v));
            }
        }
        if !m.thresholds.is_empty() {
            let th: Map<String, Value> = m
                .thresholds
                .iter()
                .map(|t| (t.source.clone(), Value::Bool(!t.ok)))
                .collect();
            obj.insert("thresholds".into(), Value::Object(th));
        }
        metrics.insert(m.name.clone(), Value::Object(obj));
    }
    json!({
        "metrics": metrics,
        "root_group": group(&data.root_group),
    })
}

fn group(g: &GroupSummary) -> Value {
    let groups: Map<String, Value> = g
        .groups
        .iter()
        .map(|s| (s.name.clone(), group(s)))
        .collect();
    let checks: Map<String, Value> = g
        .checks
        .iter()
        .map(|c| {
            (
                c.name.clone(),
                json!({
                    "name": c.name,
                    "path": c.path,
                    "id": c.id,
                    "passes": c.passes,
                    "fails": c.fails,
                }),
            )
        })
        .collect();
    json!({
        "name": g.name,
        "path": g.path,
        "id": g.id,
        "groups": groups,
        "checks": checks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::basic_run;

    #[test]
    fn rates_thresholds_and_groups_in_legacy_shape() {
        let mut data = basic_run();
        // One failing threshold to check the inverted polarity.
        data.metrics
            .iter_mut()
            .find(|m| m.name == "http_req_duration")
            .unwrap()
            .thresholds
            .push(rk6_metrics::ThresholdResult {
                source: "p(95)<0.001".into(),
                ok: false,
                stat: "p(95)".into(),
                value: Some(5.41),
            });
        let v = summary_export(&data);
        let m = &v["metrics"];
        assert_eq!(
            m["http_req_failed"],
            json!({"passes": 0, "fails": 40, "value": 0, "thresholds": {"rate<0.01": false}})
        );
        assert_eq!(m["checks"], json!({"passes": 40, "fails": 0, "value": 1}));
        assert_eq!(m["http_reqs"]["count"], json!(40));
        assert_eq!(m["vus"], json!({"value": 2, "min": 2, "max": 2}));
        assert_eq!(
            m["http_req_duration"]["thresholds"],
            json!({"p(95)<500": false, "p(95)<0.001": true}),
            "true means FAILED"
        );
        let keys: Vec<_> = m["http_req_duration"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(
            keys,
            ["avg", "min", "med", "max", "p(90)", "p(95)", "thresholds"]
        );
        assert!(m["http_req_duration{expected_response:true}"]
            .get("thresholds")
            .is_none());
        assert_eq!(
            v["root_group"],
            json!({
                "name": "", "path": "", "id": "d41d8cd98f00b204e9800998ecf8427e",
                "groups": {},
                "checks": {"status is 200": {
                    "name": "status is 200", "path": "::status is 200",
                    "id": "6210a8cd14cd70477eba5c5e4cb3fb5f", "passes": 40, "fails": 0
                }}
            })
        );
    }

    #[test]
    fn nested_groups_are_objects_keyed_by_name() {
        let mut data = basic_run();
        let mut g = data.root_group.clone();
        g.name = "g1".into();
        g.path = "::g1".into();
        g.id = rk6_metrics::md5_hex("::g1");
        g.checks.clear();
        data.root_group.groups.push(g);
        let v = summary_export(&data);
        assert_eq!(
            v["root_group"]["groups"]["g1"]["id"],
            "9ccb03cc5acd728a2fe595bbd1f14da3"
        );
        assert_eq!(v["root_group"]["groups"]["g1"]["checks"], json!({}));
    }
}
