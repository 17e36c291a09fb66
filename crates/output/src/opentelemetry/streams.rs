//! Per-stream aggregation and k6's metric-to-OTLP mapping.
//!
//! A stream is a metric plus its attributes: the sample's tags without empty keys or
//! values, in key order (tag sets that differ only in empty tags share one stream). Every
//! export carries every stream's state since its first sample (cumulative temporality),
//! as the OpenTelemetry SDK k6 uses sends them:
//! * a Counter is a monotonic Sum of doubles, unit `ms` for time and `By` for data;
//! * a Gauge is a Gauge of doubles (its last value), with the same units;
//! * a Trend is a Histogram with the SDK's default explicit buckets ([`BOUNDS`], a value
//!   counting in the first bucket whose bound is not below it), sum, min and max;
//! * a Rate, as k6 1.4 and later send it ([`RateEncoding::SingleCounter`]), is one
//!   monotonic integer Sum without unit, `<name>.total`, counting every sample under its
//!   tags plus `condition` = `nonzero` or `zero`: a stream has a point per condition it
//!   saw. As k6 1.1 sent it ([`RateEncoding::CounterPair`]), it is two such Sums:
//!   `<name>.occurred` (non-zero samples) and `<name>.total` (all samples); a stream that
//!   never saw a non-zero value has no `.occurred` point, and a metric without any has no
//!   `.occurred` metric.
//!
//! Metrics go out in the order their first sample arrived, all in one resource (`service.name`,
//! `service.version`, `telemetry.sdk.*`) and one scope named `k6`.

use std::collections::HashMap;
use std::time::{SystemTime, UNIX_EPOCH};

use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, InstrumentationScope, KeyValue};
use opentelemetry_proto::tonic::metrics::v1::{
    metric, number_data_point, AggregationTemporality, Gauge, Histogram, HistogramDataPoint,
    Metric, NumberDataPoint, ResourceMetrics, ScopeMetrics, Sum,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use rk6_metrics::{MetricId, MetricType, Registry, Sample, TagSet, ValueType};

/// The explicit bucket bounds of every Trend histogram (the SDK's default).
pub const BOUNDS: [f64; 15] = [
    0.0, 5.0, 10.0, 25.0, 50.0, 75.0, 100.0, 250.0, 500.0, 750.0, 1000.0, 2500.0, 5000.0, 7500.0,
    10000.0,
];

/// The resource's schema: the semantic conventions its attribute names come from.
const SCHEMA_URL: &str = "https://opentelemetry.io/schemas/1.26.0";

/// The attribute telling a Rate's non-zero samples from its zero ones.
const CONDITION: &str = "condition";

/// How a k6 Rate is exported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateEncoding {
    /// One counter `<name>.total` with a `condition` attribute (k6 1.4 and later).
    SingleCounter,
    /// Two counters, `<name>.occurred` and `<name>.total` (k6 1.1, and k6 1.4 to 1.7 with
    /// `K6_OTEL_SINGLE_COUNTER_FOR_RATE=false`).
    CounterPair,
}

/// What the mapping needs to know of a metric.
#[derive(Debug, Clone)]
struct MetricMeta {
    /// The prefix and the k6 name.
    name: String,
    kind: MetricType,
    unit: &'static str,
    /// Its streams, in creation order.
    streams: Vec<usize>,
}

/// The running value of one stream.
#[derive(Debug, Clone, PartialEq)]
enum State {
    Counter(f64),
    Gauge(f64),
    Rate { occurred: u64, total: u64 },
    Trend(Buckets),
}

/// A Trend stream's histogram.
#[derive(Debug, Clone, PartialEq)]
struct Buckets {
    count: u64,
    sum: f64,
    min: f64,
    max: f64,
    counts: [u64; BOUNDS.len() + 1],
}

impl Buckets {
    fn add(&mut self, v: f64) {
        self.count += 1;
        self.sum += v;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.counts[BOUNDS.partition_point(|b| *b < v)] += 1;
    }
}

#[derive(Debug)]
struct Stream {
    attributes: Vec<KeyValue>,
    start_ns: u64,
    state: State,
}

/// All streams seen so far.
#[derive(Debug)]
pub struct Streams {
    prefix: String,
    rates: RateEncoding,
    resource: Resource,
    metrics: Vec<Option<MetricMeta>>,
    /// Metrics in the order of their first sample.
    order: Vec<MetricId>,
    by_tags: HashMap<(MetricId, TagSet), usize>,
    by_attributes: HashMap<(MetricId, Vec<(String, String)>), usize>,
    streams: Vec<Stream>,
}

impl Streams {
    /// An empty set naming metrics `prefix` + k6 name, for the service `name`/`version`;
    /// `extra` resource attributes (`OTEL_RESOURCE_ATTRIBUTES`) yield to those.
    pub fn new(
        prefix: &str,
        service_name: &str,
        service_version: &str,
        extra: &[(String, String)],
        rates: RateEncoding,
    ) -> Streams {
        let own = [
            ("service.name", service_name),
            ("service.version", service_version),
            ("telemetry.sdk.language", "rust"),
            ("telemetry.sdk.name", "rk6"),
            ("telemetry.sdk.version", env!("CARGO_PKG_VERSION")),
        ];
        let mut pairs: Vec<(&str, &str)> = extra
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .filter(|(k, _)| own.iter().all(|(o, _)| o != k))
            .chain(own)
            .collect();
        // In key order, as the SDK k6 uses sends an attribute set.
        pairs.sort_by(|a, b| a.0.cmp(b.0));
        let attributes = pairs.into_iter().map(|(k, v)| key_value(k, v)).collect();
        Streams {
            prefix: prefix.to_string(),
            rates,
            resource: Resource {
                attributes,
                ..Default::default()
            },
            metrics: Vec::new(),
            order: Vec::new(),
            by_tags: HashMap::new(),
            by_attributes: HashMap::new(),
            streams: Vec::new(),
        }
    }

    /// Adds one sample to its stream (NaN values are dropped, as they mean nothing here).
    pub fn add(&mut self, registry: &Registry, s: &Sample) {
        if s.value.is_nan() {
            return;
        }
        let i = s.metric.index();
        if i >= self.metrics.len() {
            self.metrics.resize(i + 1, None);
        }
        if self.metrics[i].is_none() {
            let info = registry.info(s.metric);
            let unit = match info.contains {
                ValueType::Time => "ms",
                ValueType::Data => "By",
                ValueType::Default => "",
            };
            self.metrics[i] = Some(MetricMeta {
                name: format!("{}{}", self.prefix, info.name),
                kind: info.kind,
                // The SDK's Rate counters are created without a unit.
                unit: if info.kind == MetricType::Rate {
                    ""
                } else {
                    unit
                },
                streams: Vec::new(),
            });
            self.order.push(s.metric);
        }
        let key = (s.metric, s.tags.clone());
        let idx = match self.by_tags.get(&key) {
            Some(&idx) => idx,
            None => {
                let pairs: Vec<(String, String)> = s
                    .tags
                    .iter()
                    .filter(|(k, v)| !k.is_empty() && !v.is_empty())
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                let meta = self.metrics[i].as_mut().expect("metric seen");
                let streams = &mut self.streams;
                let idx = *self
                    .by_attributes
                    .entry((s.metric, pairs))
                    .or_insert_with_key(|(_, pairs)| {
                        streams.push(Stream {
                            attributes: pairs.iter().map(|(k, v)| key_value(k, v)).collect(),
                            start_ns: unix_ns(s.time),
                            state: match meta.kind {
                                MetricType::Counter => State::Counter(0.0),
                                MetricType::Gauge => State::Gauge(0.0),
                                MetricType::Rate => State::Rate {
                                    occurred: 0,
                                    total: 0,
                                },
                                MetricType::Trend => State::Trend(Buckets {
                                    count: 0,
                                    sum: 0.0,
                                    min: f64::INFINITY,
                                    max: f64::NEG_INFINITY,
                                    counts: [0; BOUNDS.len() + 1],
                                }),
                            },
                        });
                        meta.streams.push(streams.len() - 1);
                        streams.len() - 1
                    });
                self.by_tags.insert(key, idx);
                idx
            }
        };
        match &mut self.streams[idx].state {
            State::Counter(sum) => *sum += s.value,
            State::Gauge(last) => *last = s.value,
            State::Rate { occurred, total } => {
                *occurred += u64::from(s.value != 0.0);
                *total += 1;
            }
            State::Trend(b) => b.add(s.value),
        }
    }

    /// Whether no sample arrived yet.
    pub fn is_empty(&self) -> bool {
        self.streams.is_empty()
    }

    /// The state of every stream as one export request stamped `now`.
    pub fn request(&self, now: SystemTime) -> ExportMetricsServiceRequest {
        let now = unix_ns(now);
        let mut metrics = Vec::with_capacity(self.order.len() + 4);
        for id in &self.order {
            let meta = self.metrics[id.index()].as_ref().expect("metric seen");
            let streams = meta.streams.iter().map(|&i| &self.streams[i]);
            match meta.kind {
                MetricType::Counter | MetricType::Gauge => {
                    let points = streams
                        .map(|s| {
                            let v = match s.state {
                                State::Counter(v) | State::Gauge(v) => v,
                                _ => unreachable!("a counter or gauge stream"),
                            };
                            number_point(s, now, number_data_point::Value::AsDouble(v))
                        })
                        .collect();
                    let data = if meta.kind == MetricType::Counter {
                        monotonic_sum(points)
                    } else {
                        metric::Data::Gauge(Gauge {
                            data_points: points,
                        })
                    };
                    metrics.push(named(meta.name.clone(), meta.unit, data));
                }
                MetricType::Rate if self.rates == RateEncoding::SingleCounter => {
                    metrics.push(named(
                        format!("{}.total", meta.name),
                        "",
                        monotonic_sum(conditions(streams, now)),
                    ));
                }
                MetricType::Rate => {
                    let counts = |pick: fn(u64, u64) -> u64| -> Vec<NumberDataPoint> {
                        meta.streams
                            .iter()
                            .map(|&i| &self.streams[i])
                            .filter_map(|s| match s.state {
                                State::Rate { occurred, total } => {
                                    let n = pick(occurred, total);
                                    (n > 0).then(|| {
                                        number_point(
                                            s,
                                            now,
                                            number_data_point::Value::AsInt(
                                                i64::try_from(n).unwrap_or(i64::MAX),
                                            ),
                                        )
                                    })
                                }
                                _ => None,
                            })
                            .collect()
                    };
                    let occurred = counts(|o, _| o);
                    if !occurred.is_empty() {
                        metrics.push(named(
                            format!("{}.occurred", meta.name),
                            "",
                            monotonic_sum(occurred),
                        ));
                    }
                    metrics.push(named(
                        format!("{}.total", meta.name),
                        "",
                        monotonic_sum(counts(|_, t| t)),
                    ));
                }
                MetricType::Trend => {
                    let points = streams
                        .filter_map(|s| match &s.state {
                            State::Trend(b) => Some(HistogramDataPoint {
                                attributes: s.attributes.clone(),
                                start_time_unix_nano: s.start_ns,
                                time_unix_nano: now,
                                count: b.count,
                                sum: Some(b.sum),
                                bucket_counts: b.counts.to_vec(),
                                explicit_bounds: BOUNDS.to_vec(),
                                min: Some(b.min),
                                max: Some(b.max),
                                ..Default::default()
                            }),
                            _ => None,
                        })
                        .collect();
                    let data = metric::Data::Histogram(Histogram {
                        data_points: points,
                        aggregation_temporality: AggregationTemporality::Cumulative as i32,
                    });
                    metrics.push(named(meta.name.clone(), meta.unit, data));
                }
            }
        }
        ExportMetricsServiceRequest {
            resource_metrics: vec![ResourceMetrics {
                resource: Some(self.resource.clone()),
                scope_metrics: vec![ScopeMetrics {
                    scope: Some(InstrumentationScope {
                        name: "k6".into(),
                        ..Default::default()
                    }),
                    metrics,
                    schema_url: String::new(),
                }],
                schema_url: SCHEMA_URL.into(),
            }],
        }
    }
}

/// The points of a Rate's single counter: per stream, its non-zero samples under
/// `condition=nonzero` and its zero ones under `condition=zero` (a count of none gives no
/// point, as the SDK has none for an attribute set never recorded).
fn conditions<'a>(streams: impl Iterator<Item = &'a Stream>, now: u64) -> Vec<NumberDataPoint> {
    let streams: Vec<&Stream> = streams.collect();
    // A tag named `condition` gives way to the attribute (k6 passes it last, and the SDK
    // keeps the last value of a key), so two streams may share a point then.
    let merge = streams
        .iter()
        .any(|s| s.attributes.iter().any(|kv| kv.key == CONDITION));
    let mut points: Vec<NumberDataPoint> = Vec::new();
    for s in streams {
        let State::Rate { occurred, total } = s.state else {
            continue;
        };
        for (condition, n) in [("nonzero", occurred), ("zero", total - occurred)] {
            if n == 0 {
                continue;
            }
            let mut attributes = s.attributes.clone();
            attributes.retain(|kv| kv.key != CONDITION);
            let at = attributes.partition_point(|kv| kv.key.as_str() < CONDITION);
            attributes.insert(at, key_value(CONDITION, condition));
            let n = i64::try_from(n).unwrap_or(i64::MAX);
            let same = merge
                .then(|| points.iter_mut().find(|p| p.attributes == attributes))
                .flatten();
            match same {
                Some(p) => {
                    if let Some(number_data_point::Value::AsInt(v)) = &mut p.value {
                        *v = v.saturating_add(n);
                    }
                    p.start_time_unix_nano = p.start_time_unix_nano.min(s.start_ns);
                }
                None => points.push(NumberDataPoint {
                    attributes,
                    start_time_unix_nano: s.start_ns,
                    time_unix_nano: now,
                    value: Some(number_data_point::Value::AsInt(n)),
                    ..Default::default()
                }),
            }
        }
    }
    points
}

fn key_value(k: &str, v: &str) -> KeyValue {
    KeyValue {
        key: k.to_string(),
        value: Some(AnyValue {
            value: Some(any_value::Value::StringValue(v.to_string())),
        }),
        ..Default::default()
    }
}

fn number_point(s: &Stream, now: u64, value: number_data_point::Value) -> NumberDataPoint {
    NumberDataPoint {
        attributes: s.attributes.clone(),
        start_time_unix_nano: s.start_ns,
        time_unix_nano: now,
        value: Some(value),
        ..Default::default()
    }
}

fn monotonic_sum(points: Vec<NumberDataPoint>) -> metric::Data {
    metric::Data::Sum(Sum {
        data_points: points,
        aggregation_temporality: AggregationTemporality::Cumulative as i32,
        is_monotonic: true,
    })
}

fn named(name: String, unit: &str, data: metric::Data) -> Metric {
    Metric {
        name,
        unit: unit.to_string(),
        data: Some(data),
        ..Default::default()
    }
}

fn unix_ns(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn sample(registry: &Registry, name: &str, value: f64, tags: &[(&str, &str)]) -> Sample {
        Sample {
            metric: registry.get(name).unwrap(),
            tags: TagSet::from_pairs(tags.iter().copied()),
            value,
            time: UNIX_EPOCH + Duration::from_secs(100),
        }
    }

    fn kind(m: &Metric) -> &'static str {
        match m.data.as_ref().unwrap() {
            metric::Data::Sum(s) if s.is_monotonic => "sum",
            metric::Data::Gauge(_) => "gauge",
            metric::Data::Histogram(_) => "histogram",
            _ => "other",
        }
    }

    #[test]
    fn maps_k6_metric_types_as_k6_does() {
        let registry = Registry::new();
        registry
            .register("mc", MetricType::Counter, ValueType::Data)
            .unwrap();
        registry
            .register("mg", MetricType::Gauge, ValueType::Default)
            .unwrap();
        registry
            .register("mr", MetricType::Rate, ValueType::Default)
            .unwrap();
        registry
            .register("mt", MetricType::Trend, ValueType::Time)
            .unwrap();
        let extra = [
            ("team".to_string(), "a".to_string()),
            ("service.name".to_string(), "ignored".to_string()),
        ];
        let mut st = Streams::new("k6_", "svc", "1.2", &extra, RateEncoding::CounterPair);
        let a = [("scenario", "default"), ("group", ""), ("k", "v")];
        let b = [("scenario", "default"), ("k", "v")];
        for (name, v, tags) in [
            ("mt", 12.5, &a[..]),
            ("mc", 100.0, &a),
            ("mc", 20.0, &b),
            ("mg", 3.0, &b),
            ("mg", 7.0, &b),
            ("mr", 0.0, &a),
            ("mr", 0.0, &b),
            ("mr", 0.0, &[("k", "w")]),
            ("mt", 0.0, &b),
            ("mt", 5.0, &b),
            ("mt", 10001.0, &b),
            ("mt", f64::NAN, &b),
        ] {
            st.add(&registry, &sample(&registry, name, v, tags));
        }
        let now = UNIX_EPOCH + Duration::from_secs(200);
        let req = st.request(now);
        let rm = &req.resource_metrics[0];
        let res: Vec<(&str, String)> = rm
            .resource
            .as_ref()
            .unwrap()
            .attributes
            .iter()
            .map(|kv| {
                (
                    kv.key.as_str(),
                    format!("{:?}", kv.value.as_ref().unwrap().value),
                )
            })
            .collect();
        assert_eq!(
            res[0],
            ("service.name", "Some(StringValue(\"svc\"))".into())
        );
        assert_eq!(
            res[1],
            ("service.version", "Some(StringValue(\"1.2\"))".into())
        );
        let keys: Vec<&str> = res.iter().map(|(k, _)| *k).collect();
        assert_eq!(
            keys,
            [
                "service.name",
                "service.version",
                "team",
                "telemetry.sdk.language",
                "telemetry.sdk.name",
                "telemetry.sdk.version"
            ]
        );
        assert_eq!(rm.scope_metrics[0].scope.as_ref().unwrap().name, "k6");
        let metrics = &rm.scope_metrics[0].metrics;
        let names: Vec<(&str, &str, &str)> = metrics
            .iter()
            .map(|m| (m.name.as_str(), kind(m), m.unit.as_str()))
            .collect();
        // No `.occurred` before a non-zero rate sample.
        assert_eq!(
            names,
            [
                ("k6_mt", "histogram", "ms"),
                ("k6_mc", "sum", "By"),
                ("k6_mg", "gauge", ""),
                ("k6_mr.total", "sum", ""),
            ]
        );
        // The empty `group` tag is dropped, so `a` and `b` are one stream.
        let Some(metric::Data::Sum(c)) = &metrics[1].data else {
            panic!()
        };
        assert_eq!(c.data_points.len(), 1);
        assert_eq!(
            c.aggregation_temporality,
            AggregationTemporality::Cumulative as i32
        );
        let p = &c.data_points[0];
        assert_eq!(p.value, Some(number_data_point::Value::AsDouble(120.0)));
        let keys: Vec<&str> = p.attributes.iter().map(|kv| kv.key.as_str()).collect();
        assert_eq!(keys, ["k", "scenario"]);
        assert_eq!(p.start_time_unix_nano, 100_000_000_000);
        assert_eq!(p.time_unix_nano, 200_000_000_000);
        let Some(metric::Data::Gauge(g)) = &metrics[2].data else {
            panic!()
        };
        assert_eq!(
            g.data_points[0].value,
            Some(number_data_point::Value::AsDouble(7.0))
        );
        let Some(metric::Data::Sum(r)) = &metrics[3].data else {
            panic!()
        };
        let totals: Vec<_> = r.data_points.iter().map(|p| p.value).collect();
        use number_data_point::Value::AsInt;
        assert_eq!(totals, [Some(AsInt(2)), Some(AsInt(1))]);
        let Some(metric::Data::Histogram(h)) = &metrics[0].data else {
            panic!()
        };
        let p = &h.data_points[0];
        assert_eq!(
            (p.count, p.sum, p.min, p.max),
            (4, Some(10018.5), Some(0.0), Some(10001.0))
        );
        assert_eq!(p.explicit_bounds, BOUNDS);
        // 0 in (-inf, 0], 5 in (0, 5], 12.5 in (10, 25], 10001 above the last bound.
        assert_eq!(
            p.bucket_counts,
            [1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]
        );

        st.add(&registry, &sample(&registry, "mr", 1.0, &b));
        let req = st.request(now);
        let metrics = &req.resource_metrics[0].scope_metrics[0].metrics;
        assert_eq!(metrics[3].name, "k6_mr.occurred");
        assert_eq!(metrics[4].name, "k6_mr.total");
        let Some(metric::Data::Sum(o)) = &metrics[3].data else {
            panic!()
        };
        assert_eq!(
            o.data_points.len(),
            1,
            "only the stream with a non-zero value"
        );
        assert_eq!(o.data_points[0].value, Some(AsInt(1)));
    }

    /// Points as `(attributes, count)`.
    type IntPoints = Vec<(Vec<(String, String)>, i64)>;

    /// The `(attributes, count)` of a Sum's integer points, sorted.
    fn int_points(m: &Metric) -> IntPoints {
        let Some(metric::Data::Sum(sum)) = &m.data else {
            panic!("{} is not a sum", m.name)
        };
        assert!(sum.is_monotonic);
        assert_eq!(
            sum.aggregation_temporality,
            AggregationTemporality::Cumulative as i32
        );
        let mut points: Vec<_> = sum
            .data_points
            .iter()
            .map(|p| {
                let attrs = p
                    .attributes
                    .iter()
                    .map(|kv| {
                        let v = match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
                            Some(any_value::Value::StringValue(s)) => s.clone(),
                            other => panic!("{other:?}"),
                        };
                        (kv.key.clone(), v)
                    })
                    .collect();
                let Some(number_data_point::Value::AsInt(n)) = p.value else {
                    panic!("{p:?}")
                };
                (attrs, n)
            })
            .collect();
        points.sort();
        points
    }

    /// k6 v1.4.0 release notes, #5333: one Int64 counter `<name>.total`, each sample
    /// counted under its tags plus `condition` = `nonzero` or `zero`.
    #[test]
    fn a_rate_as_one_counter_with_a_condition() {
        let registry = Registry::new();
        registry
            .register("mr", MetricType::Rate, ValueType::Default)
            .unwrap();
        let mut st = Streams::new("p_", "svc", "1", &[], RateEncoding::SingleCounter);
        let a = [("scenario", "default"), ("group", "")];
        let b = [("scenario", "default"), ("a", "1")];
        for (v, tags) in [
            (1.0, &a[..]),
            (0.0, &a),
            (2.5, &a),
            (0.0, &b),
            (0.0, &b),
            (f64::NAN, &b),
        ] {
            st.add(&registry, &sample(&registry, "mr", v, tags));
        }
        let req = st.request(UNIX_EPOCH + Duration::from_secs(200));
        let metrics = &req.resource_metrics[0].scope_metrics[0].metrics;
        let names: Vec<(&str, &str)> = metrics
            .iter()
            .map(|m| (m.name.as_str(), m.unit.as_str()))
            .collect();
        assert_eq!(names, [("p_mr.total", "")], "no .occurred");
        let pairs = |p: &[(&str, &str)]| -> Vec<(String, String)> {
            p.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        // In key order, `condition` among the tags; `b` never saw a non-zero value.
        assert_eq!(
            int_points(&metrics[0]),
            [
                (
                    pairs(&[("a", "1"), ("condition", "zero"), ("scenario", "default")]),
                    2
                ),
                (
                    pairs(&[("condition", "nonzero"), ("scenario", "default")]),
                    2
                ),
                (pairs(&[("condition", "zero"), ("scenario", "default")]), 1),
            ]
        );
        let Some(metric::Data::Sum(sum)) = &metrics[0].data else {
            panic!()
        };
        assert!(sum
            .data_points
            .iter()
            .all(|p| p.start_time_unix_nano == 100_000_000_000
                && p.time_unix_nano == 200_000_000_000));
    }

    /// A tag named `condition` gives way to the attribute, as the SDK keeps the last value
    /// of a key: streams that then look alike share one point.
    #[test]
    fn a_condition_tag_gives_way() {
        let registry = Registry::new();
        registry
            .register("mr", MetricType::Rate, ValueType::Default)
            .unwrap();
        let mut st = Streams::new("", "svc", "1", &[], RateEncoding::SingleCounter);
        for (v, tags) in [
            (1.0, &[("k", "v")][..]),
            (1.0, &[("k", "v"), ("condition", "x")]),
            (0.0, &[("k", "v"), ("condition", "y")]),
        ] {
            st.add(&registry, &sample(&registry, "mr", v, tags));
        }
        let req = st.request(UNIX_EPOCH + Duration::from_secs(200));
        let metrics = &req.resource_metrics[0].scope_metrics[0].metrics;
        let cond = |c: &str| {
            vec![
                ("condition".to_string(), c.to_string()),
                ("k".into(), "v".into()),
            ]
        };
        assert_eq!(
            int_points(&metrics[0]),
            [(cond("nonzero"), 2), (cond("zero"), 1)]
        );
    }
}
