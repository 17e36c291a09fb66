//! Per-series aggregation and k6's metric-to-Prometheus mapping.
//!
//! A series is a metric plus its tags (as labels). Each keeps its own sink, so a push
//! carries the series' state since the start of the test: counters are cumulative sums,
//! rates the share of non-zero values so far, gauges the last value and trends the
//! configured stats (or a native histogram). Only series that received samples since the
//! previous push are sent;
//! Prometheus keeps showing the others' last values.
//!
//! Names, as k6 maps them: `k6_` + metric name, then `_total` for a Counter, `_rate` for
//! a Rate, nothing for a Gauge and `_<stat>` for each Trend stat. Trend stats of time
//! metrics are in seconds (k6 divides every one of them by 1000, its `count` too). A
//! Trend as a native histogram is `k6_<name>_seconds` for time metrics (values in
//! seconds), `k6_<name>_bytes` for data metrics and `k6_<name>` otherwise.

use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rk6_metrics::{MetricId, MetricType, Registry, Sample, Sink, TagSet, ValueType};

use super::config::{TrendStat, TrendStatKind};
use super::histogram::NativeHistogram;
use super::wire::{self, Label, TimeSeries, WriteRequest};

/// Every series name starts with this.
pub const PREFIX: &str = "k6_";

/// What the mapping needs to know of a metric.
#[derive(Debug, Clone)]
struct MetricMeta {
    /// `k6_<name>`.
    name: String,
    kind: MetricType,
    contains: ValueType,
}

/// One series and its running state.
#[derive(Debug)]
struct Series {
    metric: MetricId,
    /// Labels without `__name__`, sorted by name.
    labels: Vec<Label>,
    sink: Sink,
    /// The Trend's buckets when Trends go out as native histograms.
    histogram: Option<NativeHistogram>,
    /// Milliseconds of the newest sample.
    latest_ms: i64,
    /// Timestamp of the last push of this series (`i64::MIN` before the first).
    sent_ms: i64,
    dirty: bool,
}

/// All series seen so far.
#[derive(Debug)]
pub struct SeriesStore {
    trend_stats: Vec<TrendStat>,
    native_histograms: bool,
    static_labels: Vec<(String, String)>,
    metrics: Vec<Option<MetricMeta>>,
    by_tags: HashMap<(MetricId, TagSet), usize>,
    by_labels: HashMap<(MetricId, Vec<Label>), usize>,
    series: Vec<Series>,
}

impl SeriesStore {
    /// An empty store pushing `trend_stats` for Trends (or, with `native_histograms`,
    /// one histogram) and adding `static_labels`.
    pub fn new(
        trend_stats: Vec<TrendStat>,
        native_histograms: bool,
        static_labels: Vec<(String, String)>,
    ) -> Self {
        SeriesStore {
            trend_stats,
            native_histograms,
            static_labels,
            metrics: Vec::new(),
            by_tags: HashMap::new(),
            by_labels: HashMap::new(),
            series: Vec::new(),
        }
    }

    /// Adds one sample to its series.
    pub fn add(&mut self, registry: &Registry, s: &Sample) {
        let i = s.metric.index();
        if i >= self.metrics.len() {
            self.metrics.resize(i + 1, None);
        }
        let meta = self.metrics[i].get_or_insert_with(|| {
            let info = registry.info(s.metric);
            MetricMeta {
                name: format!("{PREFIX}{}", info.name),
                kind: info.kind,
                contains: info.contains,
            }
        });
        let kind = meta.kind;
        let time_unit = meta.contains == ValueType::Time;
        let native = self.native_histograms && kind == MetricType::Trend;
        let key = (s.metric, s.tags.clone());
        let idx = match self.by_tags.get(&key) {
            Some(&idx) => idx,
            None => {
                let labels = labels_of(&s.tags, &self.static_labels);
                // Tag sets that differ only in empty or reserved tags share one series.
                let idx = *self
                    .by_labels
                    .entry((s.metric, labels.clone()))
                    .or_insert_with(|| {
                        self.series.push(Series {
                            metric: s.metric,
                            labels,
                            sink: Sink::new(kind),
                            histogram: native.then(NativeHistogram::default),
                            latest_ms: 0,
                            sent_ms: i64::MIN,
                            dirty: false,
                        });
                        self.series.len() - 1
                    });
                self.by_tags.insert(key, idx);
                idx
            }
        };
        let series = &mut self.series[idx];
        match &mut series.histogram {
            Some(h) if time_unit => h.add(s.value / 1000.0),
            Some(h) => h.add(s.value),
            None => series.sink.add(s.value),
        }
        series.latest_ms = series.latest_ms.max(unix_ms(s.time));
        series.dirty = true;
    }

    /// Number of distinct series.
    pub fn len(&self) -> usize {
        self.series.len()
    }

    /// Whether no sample arrived yet.
    pub fn is_empty(&self) -> bool {
        self.series.is_empty()
    }

    /// The current state of every series that changed since the last call, or `None`
    /// when none did. Marks them clean; [`SeriesStore::mark_dirty`] undoes that when the
    /// request could not be queued.
    pub fn take_changed(&mut self) -> Option<(WriteRequest, Vec<usize>)> {
        let mut req = WriteRequest::default();
        let mut taken = Vec::new();
        for (idx, series) in self.series.iter_mut().enumerate() {
            if !series.dirty {
                continue;
            }
            // Prometheus drops a sample not newer than the series' previous one, so a
            // value that changed within the same millisecond moves 1 ms later.
            let ts = series.latest_ms.max(series.sent_ms.saturating_add(1));
            series.sent_ms = ts;
            series.dirty = false;
            taken.push(idx);
            let meta = self.metrics[series.metric.index()]
                .as_ref()
                .expect("metric seen");
            if let Some(h) = &series.histogram {
                let mut out = time_series(&series.labels, histogram_name(meta), 0.0, ts);
                out.samples.clear();
                out.histograms.push(h.to_proto(ts));
                req.timeseries.push(out);
                continue;
            }
            for (name, value) in values(meta, &self.trend_stats, &series.sink) {
                req.timeseries
                    .push(time_series(&series.labels, name, value, ts));
            }
        }
        (!taken.is_empty()).then_some((req, taken))
    }

    /// Marks series changed again (their push was not sent).
    pub fn mark_dirty(&mut self, taken: &[usize]) {
        for &idx in taken {
            self.series[idx].dirty = true;
        }
    }

    /// A stale marker for every series name ever pushed, 1 ms after its last sample and
    /// no earlier than `now`.
    pub fn stale_markers(&self, now: SystemTime) -> Option<WriteRequest> {
        let now_ms = unix_ms(now);
        let stale = f64::from_bits(wire::STALE_NAN);
        let mut req = WriteRequest::default();
        for series in &self.series {
            let ts = now_ms.max(series.sent_ms).saturating_add(1);
            let meta = self.metrics[series.metric.index()]
                .as_ref()
                .expect("metric seen");
            if series.histogram.is_some() {
                // A float stale marker ends a histogram series too.
                let name = histogram_name(meta);
                req.timeseries
                    .push(time_series(&series.labels, name, stale, ts));
                continue;
            }
            for (name, _) in values(meta, &self.trend_stats, &series.sink) {
                req.timeseries
                    .push(time_series(&series.labels, name, stale, ts));
            }
        }
        (!req.timeseries.is_empty()).then_some(req)
    }
}

/// The series names and values one k6 series maps to.
fn values(meta: &MetricMeta, stats: &[TrendStat], sink: &Sink) -> Vec<(String, f64)> {
    let zero = Duration::ZERO;
    match sink {
        Sink::Counter(c) => vec![(format!("{}_total", meta.name), c.sum)],
        Sink::Gauge(g) => vec![(meta.name.clone(), g.last)],
        Sink::Rate(r) => {
            let rate = if r.total == 0 {
                0.0
            } else {
                r.trues as f64 / r.total as f64
            };
            vec![(format!("{}_rate", meta.name), rate)]
        }
        Sink::Trend(t) => stats
            .iter()
            .map(|st| {
                let v = match st.kind {
                    TrendStatKind::Sum => t.sum(),
                    TrendStatKind::Stat(stat) => sink.stat(stat, zero).unwrap_or(0.0),
                };
                // Prometheus' base unit of time is the second; k6 measures in ms.
                let v = if meta.contains == ValueType::Time {
                    v / 1000.0
                } else {
                    v
                };
                (format!("{}_{}", meta.name, st.suffix), v)
            })
            .collect(),
    }
}

/// The name of a Trend pushed as a native histogram: its base unit as suffix.
fn histogram_name(meta: &MetricMeta) -> String {
    match meta.contains {
        ValueType::Time => format!("{}_seconds", meta.name),
        ValueType::Data => format!("{}_bytes", meta.name),
        ValueType::Default => meta.name.clone(),
    }
}

/// One series with `__name__` inserted at its sorted place among `labels`.
fn time_series(labels: &[Label], name: String, value: f64, ts: i64) -> TimeSeries {
    let mut all = Vec::with_capacity(labels.len() + 1);
    let at = labels.partition_point(|l| l.name.as_str() < "__name__");
    all.extend_from_slice(&labels[..at]);
    all.push(Label {
        name: "__name__".into(),
        value: name,
    });
    all.extend_from_slice(&labels[at..]);
    TimeSeries {
        labels: all,
        samples: vec![wire::Sample {
            value,
            timestamp: ts,
        }],
        histograms: Vec::new(),
    }
}

/// The labels of a tag set: empty values dropped (Prometheus treats an empty label as
/// absent), names made valid Prometheus label names, then `static_labels` for names not
/// already present; sorted by name.
pub fn labels_of(tags: &TagSet, static_labels: &[(String, String)]) -> Vec<Label> {
    let mut labels: Vec<Label> = Vec::with_capacity(tags.len() + static_labels.len());
    let all = tags
        .iter()
        .chain(static_labels.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    for (k, v) in all {
        if v.is_empty() {
            continue;
        }
        let name = label_name(k);
        if name.starts_with("__") || labels.iter().any(|l| l.name == name) {
            continue;
        }
        labels.push(Label {
            name,
            value: v.to_string(),
        });
    }
    labels.sort_by(|a, b| a.name.cmp(&b.name));
    labels
}

/// `name` as a valid Prometheus label name (`[a-zA-Z_][a-zA-Z0-9_]*`): other characters
/// become `_`, and a leading digit gets a `_` before it.
pub fn label_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 1);
    if name.starts_with(|c: char| c.is_ascii_digit()) || name.is_empty() {
        out.push('_');
    }
    out.extend(name.chars().map(|c| {
        if c.is_ascii_alphanumeric() || c == '_' {
            c
        } else {
            '_'
        }
    }));
    out
}

/// Milliseconds since the Unix epoch (0 before it).
pub fn unix_ms(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rk6_metrics::builtin;

    fn sample(metric: MetricId, tags: &[(&str, &str)], value: f64, ms: u64) -> Sample {
        Sample {
            metric,
            tags: TagSet::from_pairs(tags.iter().copied()),
            value,
            time: UNIX_EPOCH + Duration::from_millis(ms),
        }
    }

    /// Name, other labels, value and timestamp of one pushed series.
    type Pushed = (String, Vec<(String, String)>, f64, i64);

    fn by_name(req: &WriteRequest) -> Vec<Pushed> {
        let mut out: Vec<_> = req
            .timeseries
            .iter()
            .map(|ts| {
                let name = ts
                    .labels
                    .iter()
                    .find(|l| l.name == "__name__")
                    .unwrap()
                    .value
                    .clone();
                let rest = ts
                    .labels
                    .iter()
                    .filter(|l| l.name != "__name__")
                    .map(|l| (l.name.clone(), l.value.clone()))
                    .collect();
                (name, rest, ts.samples[0].value, ts.samples[0].timestamp)
            })
            .collect();
        out.sort_by(|a, b| a.partial_cmp(b).unwrap());
        out
    }

    #[test]
    fn maps_names_values_and_units_like_k6() {
        let registry = Registry::new();
        let trend = registry
            .register("my_trend", MetricType::Trend, ValueType::Default)
            .unwrap();
        let stats =
            super::super::config::TrendStat::parse_list("p(99),min,max,count,sum,avg").unwrap();
        let mut store = SeriesStore::new(stats, false, vec![]);
        let t = [("scenario", "default"), ("group", "")];
        for (m, v) in [
            (builtin::HTTP_REQS, 1.0),
            (builtin::HTTP_REQS, 1.0),
            (builtin::VUS, 3.0),
            (builtin::VUS, 2.0),
            (builtin::CHECKS, 1.0),
            (builtin::CHECKS, 0.0),
            (builtin::CHECKS, 1.0),
            (builtin::CHECKS, 1.0),
            (builtin::HTTP_REQ_DURATION, 100.0),
            (builtin::HTTP_REQ_DURATION, 300.0),
            (trend, 100.0),
            (trend, 300.0),
        ] {
            store.add(&registry, &sample(m, &t, v, 5_000));
        }
        let (req, taken) = store.take_changed().unwrap();
        assert_eq!(taken.len(), 5);
        let got = by_name(&req);
        let labels = vec![("scenario".to_string(), "default".to_string())];
        let want: Vec<(&str, f64)> = vec![
            ("k6_checks_rate", 0.75),
            ("k6_http_req_duration_avg", 0.2),
            ("k6_http_req_duration_count", 0.002),
            ("k6_http_req_duration_max", 0.3),
            ("k6_http_req_duration_min", 0.1),
            ("k6_http_req_duration_p99", 0.298),
            ("k6_http_req_duration_sum", 0.4),
            ("k6_http_reqs_total", 2.0),
            ("k6_my_trend_avg", 200.0),
            ("k6_my_trend_count", 2.0),
            ("k6_my_trend_max", 300.0),
            ("k6_my_trend_min", 100.0),
            ("k6_my_trend_p99", 298.0),
            ("k6_my_trend_sum", 400.0),
            ("k6_vus", 2.0),
        ];
        assert_eq!(got.len(), want.len(), "{got:?}");
        for ((name, l, v, ts), (wn, wv)) in got.iter().zip(&want) {
            assert_eq!(name, wn);
            assert!((v - wv).abs() < 1e-9, "{name}: {v} != {wv}");
            assert_eq!(l, &labels, "{name}");
            assert_eq!(*ts, 5_000);
        }
        assert!(store.take_changed().is_none(), "nothing changed since");
    }

    #[test]
    fn pushes_cumulative_state_of_changed_series_only() {
        let registry = Registry::new();
        let stats = super::super::config::TrendStat::parse_list("p(99)").unwrap();
        let mut store = SeriesStore::new(stats, false, vec![]);
        let a = [("status", "200")];
        let b = [("status", "500")];
        store.add(&registry, &sample(builtin::HTTP_REQS, &a, 1.0, 1_000));
        store.add(&registry, &sample(builtin::HTTP_REQS, &b, 1.0, 1_000));
        assert_eq!(store.len(), 2);
        let (first, _) = store.take_changed().unwrap();
        assert_eq!(first.timeseries.len(), 2);
        // Same millisecond again: the value changes, so the timestamp must move on.
        store.add(&registry, &sample(builtin::HTTP_REQS, &a, 1.0, 1_000));
        let (second, taken) = store.take_changed().unwrap();
        let got = by_name(&second);
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].2, got[0].3), (2.0, 1_001));
        // A push that could not be queued is retried with the newer state.
        store.mark_dirty(&taken);
        store.add(&registry, &sample(builtin::HTTP_REQS, &a, 1.0, 3_000));
        let (third, _) = store.take_changed().unwrap();
        let got = by_name(&third);
        assert_eq!((got[0].2, got[0].3), (3.0, 3_000));
    }

    #[test]
    fn stale_markers_cover_every_series_name() {
        let registry = Registry::new();
        let stats = super::super::config::TrendStat::parse_list("p(95),max").unwrap();
        let mut store = SeriesStore::new(stats, false, vec![]);
        assert!(store.stale_markers(UNIX_EPOCH).is_none());
        store.add(
            &registry,
            &sample(builtin::ITERATION_DURATION, &[], 5.0, 9_000),
        );
        store.add(&registry, &sample(builtin::ITERATIONS, &[], 1.0, 9_000));
        store.take_changed().unwrap();
        let req = store
            .stale_markers(UNIX_EPOCH + Duration::from_millis(8_000))
            .unwrap();
        let got = by_name(&req);
        let names: Vec<&str> = got.iter().map(|g| g.0.as_str()).collect();
        assert_eq!(
            names,
            [
                "k6_iteration_duration_max",
                "k6_iteration_duration_p95",
                "k6_iterations_total"
            ]
        );
        for ts in &req.timeseries {
            assert_eq!(ts.samples[0].value.to_bits(), wire::STALE_NAN);
            assert_eq!(ts.samples[0].timestamp, 9_001, "after the last push");
        }
    }

    #[test]
    fn labels_are_sorted_valid_and_deduplicated() {
        let tags = TagSet::from_pairs([
            ("status", "200"),
            ("group", ""),
            ("Zed", "z"),
            ("my-tag", "x"),
            ("1st", "y"),
            ("__name__", "evil"),
            ("env", "from-tag"),
        ]);
        let statics = vec![
            ("env".to_string(), "static".to_string()),
            ("server".to_string(), "srv1".to_string()),
        ];
        let labels = labels_of(&tags, &statics);
        let pairs: Vec<(&str, &str)> = labels
            .iter()
            .map(|l| (l.name.as_str(), l.value.as_str()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("Zed", "z"),
                ("_1st", "y"),
                ("env", "from-tag"),
                ("my_tag", "x"),
                ("server", "srv1"),
                ("status", "200"),
            ]
        );
        let ts = time_series(&labels, "k6_x".into(), 1.0, 1);
        let names: Vec<&str> = ts.labels.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(
            names,
            ["Zed", "_1st", "__name__", "env", "my_tag", "server", "status"]
        );
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted, "remote write requires byte-order sorting");
        assert_eq!(label_name("ok_name9"), "ok_name9");
        assert_eq!(label_name(""), "_");
    }

    #[test]
    fn tag_sets_differing_in_empty_tags_share_a_series() {
        let registry = Registry::new();
        let mut store = SeriesStore::new(vec![], false, vec![]);
        store.add(
            &registry,
            &sample(builtin::ITERATIONS, &[("group", "")], 1.0, 1),
        );
        store.add(&registry, &sample(builtin::ITERATIONS, &[], 1.0, 2));
        assert_eq!(store.len(), 1);
        let (req, _) = store.take_changed().unwrap();
        assert_eq!(req.timeseries[0].samples[0].value, 2.0);
    }

    #[test]
    fn trends_as_native_histograms_carry_units_in_their_names() {
        let registry = Registry::new();
        let data = registry
            .register("payload", MetricType::Trend, ValueType::Data)
            .unwrap();
        let stats = super::super::config::TrendStat::parse_list("p(99)").unwrap();
        let mut store = SeriesStore::new(stats, true, vec![]);
        store.add(
            &registry,
            &sample(builtin::HTTP_REQ_DURATION, &[], 100.0, 1_000),
        );
        store.add(
            &registry,
            &sample(builtin::HTTP_REQ_DURATION, &[], 300.0, 2_000),
        );
        store.add(&registry, &sample(data, &[], 2048.0, 2_000));
        store.add(&registry, &sample(builtin::ITERATIONS, &[], 1.0, 2_000));
        let (req, _) = store.take_changed().unwrap();
        let mut got: Vec<(String, Option<wire::Histogram>, usize)> = req
            .timeseries
            .iter()
            .map(|ts| {
                (
                    ts.labels[0].value.clone(),
                    ts.histograms.first().cloned(),
                    ts.samples.len(),
                )
            })
            .collect();
        got.sort_by(|a, b| a.0.cmp(&b.0));
        let names: Vec<&str> = got.iter().map(|g| g.0.as_str()).collect();
        assert_eq!(
            names,
            [
                "k6_http_req_duration_seconds",
                "k6_iterations_total",
                "k6_payload_bytes"
            ]
        );
        let h = got[0].1.as_ref().unwrap();
        assert_eq!((h.count_int, h.sum, h.timestamp), (Some(2), 0.4, 2_000));
        assert_eq!(got[0].2, 0, "a histogram series has no float samples");
        let h = got[2].1.as_ref().unwrap();
        assert_eq!(
            (h.count_int, h.sum),
            (Some(1), 2048.0),
            "data stays in bytes"
        );
        assert!(got[1].1.is_none());
        let stale = store.stale_markers(UNIX_EPOCH).unwrap();
        assert_eq!(stale.timeseries.len(), 3);
        assert!(stale
            .timeseries
            .iter()
            .all(|ts| ts.samples[0].value.to_bits() == wire::STALE_NAN));
    }
}
