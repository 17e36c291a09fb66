//! The JSON:API documents of k6's REST API for metrics and groups, built from a summary
//! snapshot, with k6's field order and number forms (the k6-operator and other Go clients
//! decode them).

use rk6_metrics::{GroupSummary, MetricSummary, MetricType, SummaryData};
use serde_json::{json, Map, Value};

/// The trend statistics k6's API reports, in its (alphabetical) order.
pub const TREND_STATS: [&str; 6] = ["avg", "max", "med", "min", "p(90)", "p(95)"];

/// Compact JSON text as Go's `json.Marshal` writes it: `<`, `>`, `&`, U+2028 and U+2029
/// escaped (they can only occur inside strings, so the text is safe to rewrite).
pub fn go_escape(text: String) -> String {
    if !text.contains(['<', '>', '&', '\u{2028}', '\u{2029}']) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// A number as Go's `encoding/json` writes a float64: integral values without a fraction
/// (`0`, not `0.0`), so the documents read the same as k6's.
pub fn go_number(v: f64) -> Value {
    if !v.is_finite() {
        return json!(0);
    }
    if v.fract() == 0.0 && v.abs() < 1e15 {
        return json!(v as i64);
    }
    json!(v)
}

/// One metric resource: `{"type":"metrics","id":NAME,"attributes":{…}}`. `tainted` is
/// `None` (`null`) until thresholds were first evaluated and for metrics without thresholds.
pub fn metric_resource(m: &MetricSummary, tainted: Option<bool>) -> Value {
    let keys: &[&str] = match m.kind {
        MetricType::Counter => &["count", "rate"],
        MetricType::Gauge => &["value"],
        MetricType::Rate => &["rate"],
        MetricType::Trend => &TREND_STATS,
    };
    let sample: Map<String, Value> = keys
        .iter()
        .map(|k| ((*k).to_owned(), go_number(m.value(k).unwrap_or(0.0))))
        .collect();
    json!({"type": "metrics", "id": m.name, "attributes": {
        "type": m.kind.as_str(),
        "contains": m.contains.as_str(),
        "tainted": tainted,
        "sample": sample,
    }})
}

/// `GET /v1/metrics`: every metric with samples or a threshold.
pub fn metrics_document(data: &SummaryData, tainted: impl Fn(&str) -> Option<bool>) -> Value {
    let list: Vec<Value> = data
        .metrics
        .iter()
        .map(|m| metric_resource(m, tainted(&m.name)))
        .collect();
    json!({ "data": list })
}

/// Every group of the tree, the root first, each parent before its children.
pub fn group_resources(root: &GroupSummary) -> Vec<Value> {
    let mut out = Vec::new();
    push_group(root, None, &mut out);
    out
}

fn push_group(g: &GroupSummary, parent: Option<&str>, out: &mut Vec<Value>) {
    // Go writes a nil slice as null: a group without checks has `"checks":null`.
    let checks = if g.checks.is_empty() {
        Value::Null
    } else {
        g.checks
            .iter()
            .map(|c| {
                json!({"id": c.id, "path": c.path, "name": c.name, "passes": c.passes, "fails": c.fails})
            })
            .collect()
    };
    let children: Vec<Value> = g
        .groups
        .iter()
        .map(|c| json!({"type": "groups", "id": c.id}))
        .collect();
    let parent = parent.map_or(Value::Null, |p| json!({"type": "groups", "id": p}));
    out.push(json!({"type": "groups", "id": g.id,
        "attributes": {"path": g.path, "name": g.name, "checks": checks},
        "relationships": {"groups": {"data": children}, "parent": {"data": parent}}}));
    for c in &g.groups {
        push_group(c, Some(&g.id), out);
    }
}

/// The setupData document's text: `attributes` holds `data` only when some was set (`null`
/// included), as k6's; `data` is the JSON text as set, number forms included.
pub fn setup_document(data: Option<&str>) -> String {
    let attributes = match data {
        Some(d) => format!(r#"{{"data":{d}}}"#),
        None => "{}".to_owned(),
    };
    format!(r#"{{"data":{{"type":"setupData","id":"default","attributes":{attributes}}}}}"#)
}

/// Valid JSON text without the whitespace between its tokens, as Go compacts a raw
/// message: strings and number forms stay as written (`2.5e-3` is not `0.0025`).
pub fn compact(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in json.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !c.is_ascii_whitespace() {
            out.push(c);
        }
    }
    out
}

/// JSON text with every object's keys sorted (unparsable text unchanged).
pub fn sorted_json(text: &str) -> String {
    serde_json::from_str::<Value>(text)
        .map(|v| sort_keys(v).to_string())
        .unwrap_or_else(|_| text.to_owned())
}

/// Sorts every object's keys, as k6's setup data comes out of a Go map.
pub fn sort_keys(v: Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(String, Value)> = m.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k, sort_keys(v)))
                    .collect(),
            )
        }
        Value::Array(a) => Value::Array(a.into_iter().map(sort_keys).collect()),
        v => v,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rk6_metrics::{CheckSummary, ValueType};

    fn metric(kind: MetricType, values: &[(&str, f64)]) -> MetricSummary {
        MetricSummary {
            name: "m".into(),
            kind,
            contains: ValueType::Default,
            values: values.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect(),
            thresholds: Vec::new(),
            parent: None,
            submetric_tags: Vec::new(),
        }
    }

    #[test]
    fn metric_samples_have_k6s_keys_and_go_numbers() {
        let counter = metric(MetricType::Counter, &[("count", 0.0), ("rate", 0.0)]);
        assert_eq!(
            metric_resource(&counter, None).to_string(),
            r#"{"type":"metrics","id":"m","attributes":{"type":"counter","contains":"default","tainted":null,"sample":{"count":0,"rate":0}}}"#
        );
        let gauge = metric(
            MetricType::Gauge,
            &[("value", 2.0), ("min", 0.0), ("max", 2.0)],
        );
        assert_eq!(
            metric_resource(&gauge, None)["attributes"]["sample"].to_string(),
            r#"{"value":2}"#
        );
        let rate = metric(MetricType::Rate, &[("rate", 0.5), ("passes", 1.0)]);
        assert_eq!(
            metric_resource(&rate, None)["attributes"]["sample"].to_string(),
            r#"{"rate":0.5}"#
        );
        assert_eq!(
            metric_resource(&counter, Some(true))["attributes"]["tainted"],
            true
        );
    }

    #[test]
    fn documents_escape_html_characters_as_go() {
        // Recorded from k6 1.1.0 (PUT /v1/setup with {"a":"<x>&\u2028"}).
        assert_eq!(
            go_escape(setup_document(Some("{\"a\":\"<x>&\u{2028}\"}"))),
            r#"{"data":{"type":"setupData","id":"default","attributes":{"data":{"a":"\u003cx\u003e\u0026\u2028"}}}}"#
        );
    }

    #[test]
    fn groups_are_listed_root_first_with_relationships() {
        let root = GroupSummary {
            name: String::new(),
            path: String::new(),
            id: "d41d8cd98f00b204e9800998ecf8427e".into(),
            groups: vec![GroupSummary {
                name: "g1".into(),
                path: "::g1".into(),
                id: "9ccb03cc5acd728a2fe595bbd1f14da3".into(),
                groups: Vec::new(),
                checks: vec![CheckSummary {
                    name: "ok".into(),
                    path: "::g1::ok".into(),
                    id: "a78dc076641b6ca35ffd09a7c2c8ee7d".into(),
                    passes: 6,
                    fails: 0,
                }],
            }],
            checks: Vec::new(),
        };
        let doc = json!({ "data": group_resources(&root) });
        // Recorded from k6 1.1.0's GET /v1/groups.
        assert_eq!(
            doc.to_string(),
            r#"{"data":[{"type":"groups","id":"d41d8cd98f00b204e9800998ecf8427e","attributes":{"path":"","name":"","checks":null},"relationships":{"groups":{"data":[{"type":"groups","id":"9ccb03cc5acd728a2fe595bbd1f14da3"}]},"parent":{"data":null}}},{"type":"groups","id":"9ccb03cc5acd728a2fe595bbd1f14da3","attributes":{"path":"::g1","name":"g1","checks":[{"id":"a78dc076641b6ca35ffd09a7c2c8ee7d","path":"::g1::ok","name":"ok","passes":6,"fails":0}]},"relationships":{"groups":{"data":[]},"parent":{"data":{"type":"groups","id":"d41d8cd98f00b204e9800998ecf8427e"}}}}]}"#
        );
    }

    #[test]
    fn setup_documents_tell_no_data_from_null() {
        assert_eq!(
            setup_document(None),
            r#"{"data":{"type":"setupData","id":"default","attributes":{}}}"#
        );
        assert_eq!(
            setup_document(Some("null")),
            r#"{"data":{"type":"setupData","id":"default","attributes":{"data":null}}}"#
        );
        assert_eq!(
            compact("{ \"a\" : [1, 2.5e-3],\n \"s\": \"x \\\" y\" }"),
            r#"{"a":[1,2.5e-3],"s":"x \" y"}"#
        );
        let sorted =
            sort_keys(serde_json::from_str(r#"{"token":"abc","n":{"b":1,"a":2}}"#).unwrap());
        assert_eq!(sorted.to_string(), r#"{"n":{"a":2,"b":1},"token":"abc"}"#);
    }
}
