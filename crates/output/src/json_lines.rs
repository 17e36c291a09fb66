//! The `json` output: one JSON object per line. A `Metric` line describes a metric the
//! first time one of its samples is written; every sample is a `Point` line.
//!
//! ```text
//! {"type":"Metric","data":{"name":"http_reqs","type":"counter","contains":"default","thresholds":[],"submetrics":null},"metric":"http_reqs"}
//! {"metric":"http_reqs","type":"Point","data":{"time":"2026-11-30T01:48:04.25132088Z","value":1,"tags":{"group":"","scenario":"default"}}}
//! ```

use std::collections::HashMap;
use std::io::{self, Write};

use rk6_metrics::threshold::Target;
use rk6_metrics::{MetricId, Registry, Sample, ThresholdSet};
use serde_json::{Map, Value};

use crate::json::num;
use crate::out_file::OutFile;
use crate::sample_writer::SampleFormat;
use crate::timestamp::rfc3339;

/// k6's JSON lines.
pub(crate) struct JsonLines {
    /// Threshold sources declared on each metric itself.
    thresholds: HashMap<MetricId, Vec<String>>,
    /// `{name, suffix, tags}` of each metric's sub-metrics.
    submetrics: HashMap<MetricId, Vec<Value>>,
    line: Vec<u8>,
}

impl JsonLines {
    /// Lines whose `Metric` entries list the thresholds and sub-metrics of `thresholds`.
    pub(crate) fn new(thresholds: &ThresholdSet) -> JsonLines {
        let mut by_metric: HashMap<MetricId, Vec<String>> = HashMap::new();
        for t in &thresholds.thresholds {
            if let Target::Metric(id) = t.target {
                by_metric.entry(id).or_default().push(t.source.clone());
            }
        }
        let mut subs: HashMap<MetricId, Vec<Value>> = HashMap::new();
        for s in &thresholds.submetrics {
            let suffix = s
                .name
                .split_once('{')
                .map_or("", |(_, rest)| rest.strip_suffix('}').unwrap_or(rest));
            let mut tags: Vec<&(String, String)> = s.tags.iter().collect();
            tags.sort_by(|a, b| a.0.cmp(&b.0));
            let tags: Map<String, Value> = tags
                .into_iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect();
            let mut m = Map::new();
            m.insert("name".into(), Value::String(s.name.clone()));
            m.insert("suffix".into(), Value::String(suffix.to_string()));
            m.insert("tags".into(), Value::Object(tags));
            subs.entry(s.parent).or_default().push(Value::Object(m));
        }
        JsonLines {
            thresholds: by_metric,
            submetrics: subs,
            line: Vec::with_capacity(512),
        }
    }

    fn metric_line(&self, registry: &Registry, id: MetricId) -> Value {
        let info = registry.info(id);
        let thresholds: Vec<Value> = self
            .thresholds
            .get(&id)
            .map(|v| v.iter().cloned().map(Value::String).collect())
            .unwrap_or_default();
        // Go marshals a nil slice as null.
        let submetrics = self
            .submetrics
            .get(&id)
            .map_or(Value::Null, |v| Value::Array(v.clone()));
        let mut data = Map::new();
        data.insert("name".into(), Value::String(info.name.clone()));
        data.insert("type".into(), Value::String(info.kind.as_str().into()));
        data.insert(
            "contains".into(),
            Value::String(info.contains.as_str().into()),
        );
        data.insert("thresholds".into(), Value::Array(thresholds));
        data.insert("submetrics".into(), submetrics);
        let mut line = Map::new();
        line.insert("type".into(), Value::String("Metric".into()));
        line.insert("data".into(), Value::Object(data));
        line.insert("metric".into(), Value::String(info.name));
        Value::Object(line)
    }
}

impl SampleFormat for JsonLines {
    const NAME: &'static str = "json";

    fn write(
        &mut self,
        out: &mut OutFile,
        registry: &Registry,
        name: &str,
        first: bool,
        s: &Sample,
    ) -> io::Result<()> {
        if first {
            let line = self.metric_line(registry, s.metric);
            serde_json::to_writer(&mut *out, &line)?;
            out.write_all(b"\n")?;
        }
        point_line(&mut self.line, name, s);
        out.write_all(&self.line)
    }
}

/// Writes one `Point` line (with its newline) into `buf`, replacing its contents.
fn point_line(buf: &mut Vec<u8>, metric: &str, s: &Sample) {
    buf.clear();
    buf.extend_from_slice(b"{\"metric\":");
    string(buf, metric);
    buf.extend_from_slice(b",\"type\":\"Point\",\"data\":{\"time\":\"");
    buf.extend_from_slice(rfc3339(s.time, true).as_bytes());
    buf.extend_from_slice(b"\",\"value\":");
    buf.extend_from_slice(num(s.value).to_string().as_bytes());
    buf.extend_from_slice(b",\"tags\":{");
    for (i, (k, v)) in s.tags.iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        string(buf, k);
        buf.push(b':');
        string(buf, v);
    }
    buf.extend_from_slice(b"}}}\n");
}

fn string(buf: &mut Vec<u8>, s: &str) {
    // Writing a &str to a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *buf, s);
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use rk6_metrics::{builtin, MetricType, TagSet, ValueType};

    use super::*;
    use crate::outputs::Output;
    use crate::sample_writer::SampleWriter;

    #[test]
    fn point_lines_have_k6_key_order() {
        let mut buf = Vec::new();
        let s = Sample {
            metric: builtin::HTTP_REQS,
            tags: TagSet::from_pairs([("status", "200"), ("group", ""), ("url", "http://x/\"q\"")]),
            value: 1.0,
            time: UNIX_EPOCH + Duration::new(1_796_003_284, 251_320_880),
        };
        point_line(&mut buf, "http_reqs", &s);
        assert_eq!(
            String::from_utf8(buf.clone()).unwrap(),
            "{\"metric\":\"http_reqs\",\"type\":\"Point\",\"data\":{\"time\":\"2026-11-30T01:48:04.25132088Z\",\"value\":1,\"tags\":{\"group\":\"\",\"status\":\"200\",\"url\":\"http://x/\\\"q\\\"\"}}}\n"
        );
        let s = Sample {
            value: 1.147087,
            tags: TagSet::default(),
            ..s
        };
        point_line(&mut buf, "vus", &s);
        let v: Value = serde_json::from_slice(&buf).unwrap();
        assert_eq!(v["data"]["value"], serde_json::json!(1.147087));
        assert_eq!(v["data"]["tags"], serde_json::json!({}));
    }

    #[test]
    fn metric_line_first_then_points() {
        let dir = std::env::temp_dir().join(format!("rk6-json-out-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.json");
        let registry = Registry::new();
        let custom = registry
            .register("my_trend", MetricType::Trend, ValueType::Time)
            .unwrap();
        let thresholds = ThresholdSet::parse(
            &serde_json::json!({
                "my_trend": ["p(95)<500"],
                "my_trend{kind:a}": ["avg<100"],
            }),
            &registry,
        )
        .unwrap();
        let mut out = SampleWriter::new(
            OutFile::for_test(&path),
            path.display().to_string(),
            JsonLines::new(&thresholds),
        );
        assert_eq!(out.description(), format!("json ({})", path.display()));
        let tags = TagSet::from_pairs([("kind", "a")]);
        let sample = |metric, value| Sample {
            metric,
            tags: tags.clone(),
            value,
            time: UNIX_EPOCH + Duration::from_secs(1),
        };
        out.add(
            &registry,
            &[sample(custom, 2.5), sample(builtin::HTTP_REQS, 1.0)],
        );
        out.add(&registry, &[sample(custom, 3.0)]);
        out.finish().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5, "{text}");
        assert_eq!(
            lines[0],
            r#"{"type":"Metric","data":{"name":"my_trend","type":"trend","contains":"time","thresholds":["p(95)<500"],"submetrics":[{"name":"my_trend{kind:a}","suffix":"kind:a","tags":{"kind":"a"}}]},"metric":"my_trend"}"#
        );
        assert_eq!(
            lines[1],
            r#"{"metric":"my_trend","type":"Point","data":{"time":"1970-01-01T00:00:01Z","value":2.5,"tags":{"kind":"a"}}}"#
        );
        assert_eq!(
            lines[2],
            r#"{"type":"Metric","data":{"name":"http_reqs","type":"counter","contains":"default","thresholds":[],"submetrics":null},"metric":"http_reqs"}"#
        );
        assert!(lines[3].starts_with(r#"{"metric":"http_reqs","type":"Point""#));
        assert!(lines[4].contains(r#""value":3,"#));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
