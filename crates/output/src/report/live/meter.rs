//! The aggregates of k6's dashboard stream: one [`Meter`] sums the whole run
//! (`cumulative`), a fresh one each period (`snapshot`). Each formats as a JSON array with
//! one entry per metric, in byte order of the metric names (sub-metrics `name{tag:value}`
//! and the pseudo-metric `time` included), each entry the values of its type's aggregates
//! in the order the `param` event lists them.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::time::{Duration, SystemTime};

use rk6_metrics::{builtin, MetricId, MetricInfo, MetricType, Sample, Sink, Stat, ValueType};

/// Distinct values of one split tag kept per metric; later values are not split out, so
/// a tag with unbounded values (e.g. `url`) cannot grow the stream without bound.
const MAX_TAG_VALUES: usize = 100;

/// The aggregates of each metric type, in the order their values appear.
pub(crate) const AGGREGATES: [(&str, &[&str]); 4] = [
    ("counter", &["count", "rate"]),
    ("gauge", &["value"]),
    ("rate", &["rate"]),
    (
        "trend",
        &["avg", "max", "med", "min", "p(90)", "p(95)", "p(99)"],
    ),
];

/// Built-in metrics of k6 that rk6 registers on first use rather than up front.
const LATE_BUILTINS: &[&str] = &[
    "grpc_req_duration",
    "grpc_streams",
    "grpc_streams_msgs_received",
    "grpc_streams_msgs_sent",
];

/// One metric's sinks: its own and one per split-tag value.
struct Entry {
    sink: Sink,
    /// `(tag index, value)` → sink, for the tags in [`Meter::tags`].
    subs: Vec<HashMap<String, Sink>>,
}

/// Aggregates of a span of the run.
pub(crate) struct Meter {
    entries: Vec<Option<Entry>>,
    tags: Vec<String>,
}

/// One metric as the `metric` event announces it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MetricMeta {
    /// `http_reqs` or `http_reqs{group:::shop}`.
    pub name: String,
    /// The parent's type.
    pub kind: MetricType,
    /// The parent's value type.
    pub contains: ValueType,
    /// Whether the parent is a script's own metric.
    pub custom: bool,
}

impl Meter {
    /// An empty meter that splits metrics by `tags`.
    pub(crate) fn new(tags: &[String]) -> Meter {
        Meter {
            entries: Vec::new(),
            tags: tags.to_vec(),
        }
    }

    /// A meter with the same metrics and sub-metrics as this one, all empty: a snapshot
    /// lists every metric the run has seen so far, so its arrays line up with the
    /// cumulative ones.
    pub(crate) fn empty_like(&self) -> Meter {
        Meter {
            entries: self
                .entries
                .iter()
                .map(|e| {
                    e.as_ref().map(|e| Entry {
                        sink: Sink::new(kind(&e.sink)),
                        subs: e
                            .subs
                            .iter()
                            .map(|m| {
                                m.iter()
                                    .map(|(k, s)| (k.clone(), Sink::new(kind(s))))
                                    .collect()
                            })
                            .collect(),
                    })
                })
                .collect(),
            tags: self.tags.clone(),
        }
    }

    /// Adds one sample of a metric of type `kind`.
    pub(crate) fn add(&mut self, s: &Sample, kind: MetricType) {
        let i = s.metric.index();
        if i >= self.entries.len() {
            self.entries.resize_with(i + 1, || None);
        }
        let ntags = self.tags.len();
        let e = self.entries[i].get_or_insert_with(|| Entry {
            sink: Sink::new(kind),
            subs: (0..ntags).map(|_| HashMap::new()).collect(),
        });
        e.sink.add(s.value);
        for (t, tag) in self.tags.iter().enumerate() {
            let Some(v) = s.tags.get(tag).filter(|v| !v.is_empty()) else {
                continue;
            };
            let subs = &mut e.subs[t];
            if let Some(sink) = subs.get_mut(v) {
                sink.add(s.value);
            } else if subs.len() < MAX_TAG_VALUES {
                let mut sink = Sink::new(kind);
                sink.add(s.value);
                subs.insert(v.to_string(), sink);
            }
        }
    }

    /// The metric's own sink, if it has had a sample.
    pub(crate) fn sink(&self, id: MetricId) -> Option<&Sink> {
        self.entries.get(id.index())?.as_ref().map(|e| &e.sink)
    }

    /// Every metric and sub-metric held, with its sink, sorted by name; `time` excluded.
    fn rows<'a>(&'a self, infos: &Infos) -> Vec<(String, MetricMeta, &'a Sink)> {
        let mut rows = Vec::new();
        for (i, e) in self.entries.iter().enumerate() {
            let Some(e) = e else { continue };
            let Some(info) = infos.get(MetricId(i as u32)) else {
                continue;
            };
            let meta = |name: String| MetricMeta {
                name,
                kind: info.kind,
                contains: info.contains,
                custom: i >= builtin::ALL.len() && !LATE_BUILTINS.contains(&info.name.as_str()),
            };
            rows.push((info.name.clone(), meta(info.name.clone()), &e.sink));
            for (t, subs) in e.subs.iter().enumerate() {
                for (v, sink) in subs {
                    let name = format!("{}{{{}:{}}}", info.name, self.tags[t], v);
                    rows.push((name.clone(), meta(name), sink));
                }
            }
        }
        rows.push((
            "time".to_string(),
            MetricMeta {
                name: "time".to_string(),
                kind: MetricType::Gauge,
                contains: ValueType::Time,
                custom: false,
            },
            &TIME_PLACEHOLDER,
        ));
        rows.sort_by(|a, b| a.0.cmp(&b.0));
        rows
    }

    /// Every metric of the next array, in order (for the `metric` event).
    pub(crate) fn metas(&self, infos: &Infos) -> Vec<MetricMeta> {
        self.rows(infos).into_iter().map(|r| r.1).collect()
    }

    /// The JSON array: `now` is the value of `time`, `span` the divisor of counter rates.
    pub(crate) fn format(&self, infos: &Infos, now: SystemTime, span: Duration) -> String {
        let mut out = String::from("[");
        for (n, (name, _, sink)) in self.rows(infos).into_iter().enumerate() {
            if n > 0 {
                out.push(',');
            }
            if name == "time" {
                let ms = now
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .unwrap_or_default()
                    .as_millis();
                let _ = write!(out, "[{ms}]");
                continue;
            }
            out.push('[');
            if !sink.is_empty() {
                for (k, stat) in stats(kind(sink)).iter().enumerate() {
                    if k > 0 {
                        out.push(',');
                    }
                    let v = sink.stat(*stat, span).unwrap_or(0.0);
                    push_number(&mut out, significant(v));
                }
            }
            out.push(']');
        }
        out.push(']');
        out
    }
}

/// Names and types of the metrics seen, by id: copied from the registry as samples
/// arrive, so formatting needs no registry.
#[derive(Default)]
pub(crate) struct Infos(Vec<Option<MetricInfo>>);

impl Infos {
    /// Records `id`'s info once (`info` runs only for a new id).
    pub(crate) fn learn(&mut self, id: MetricId, info: impl FnOnce() -> MetricInfo) {
        let i = id.index();
        if i >= self.0.len() {
            self.0.resize_with(i + 1, || None);
        }
        if self.0[i].is_none() {
            self.0[i] = Some(info());
        }
    }

    /// One past the highest id learned.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// The info of `id`, if learned.
    pub(crate) fn get(&self, id: MetricId) -> Option<&MetricInfo> {
        self.0.get(id.index())?.as_ref()
    }
}

/// Stands in for `time`, whose value is the clock rather than samples.
static TIME_PLACEHOLDER: Sink = Sink::Counter(rk6_metrics::sink::CounterSink {
    sum: 0.0,
    samples: 0,
});

fn kind(s: &Sink) -> MetricType {
    match s {
        Sink::Counter(_) => MetricType::Counter,
        Sink::Gauge(_) => MetricType::Gauge,
        Sink::Rate(_) => MetricType::Rate,
        Sink::Trend(_) => MetricType::Trend,
    }
}

fn stats(kind: MetricType) -> &'static [Stat] {
    match kind {
        MetricType::Counter => &[Stat::Count, Stat::Rate],
        MetricType::Gauge => &[Stat::Value],
        MetricType::Rate => &[Stat::Rate],
        MetricType::Trend => &[
            Stat::Avg,
            Stat::Max,
            Stat::Med,
            Stat::Min,
            Stat::Percentile(90.0),
            Stat::Percentile(95.0),
            Stat::Percentile(99.0),
        ],
    }
}

/// Cuts a value to about five significant digits, as k6's stream does, so the numbers
/// stay short: whole numbers stay whole, others keep fewer decimals the larger they are.
pub(crate) fn significant(v: f64) -> f64 {
    if !v.is_finite() || v == v.trunc() {
        return v;
    }
    let decimals = if v > 1e4 {
        0
    } else if v > 1e3 {
        1
    } else if v > 100.0 {
        2
    } else if v > 10.0 {
        3
    } else if v > 1.0 {
        4
    } else {
        5
    };
    let scale = 10f64.powi(decimals);
    (v * scale).trunc() / scale
}

/// A number as Go's JSON encoder writes it: whole numbers without a fraction, others in
/// their shortest form; non-finite values (which Go cannot encode) as 0.
pub(crate) fn push_number(out: &mut String, v: f64) {
    if !v.is_finite() {
        out.push('0');
    } else if v == v.trunc() && v.abs() < 1e21 {
        let _ = write!(out, "{v:.0}");
    } else {
        let _ = write!(out, "{v}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rk6_metrics::TagSet;

    fn sample(metric: MetricId, value: f64, tags: &[(&str, &str)]) -> Sample {
        Sample {
            metric,
            tags: TagSet::from_pairs(tags.iter().copied()),
            value,
            time: SystemTime::UNIX_EPOCH,
        }
    }

    #[test]
    fn numbers_are_cut_as_k6_cuts_them() {
        assert_eq!(significant(8291.345), 8291.3);
        assert_eq!(significant(0.678245), 0.67824);
        assert_eq!(significant(19.98345), 19.983);
        assert_eq!(significant(102.7123), 102.71);
        assert_eq!(significant(1.45867), 1.4586);
        assert_eq!(significant(12345.6), 12345.0);
        assert_eq!(significant(20.0), 20.0);
        let mut s = String::new();
        push_number(&mut s, 1_796_194_681_028.0);
        s.push(' ');
        push_number(&mut s, 0.5);
        s.push(' ');
        push_number(&mut s, -3.0);
        assert_eq!(s, "1796194681028 0.5 -3");
    }

    #[test]
    fn arrays_are_sorted_by_name_with_group_submetrics() {
        let registry = rk6_metrics::Registry::new();
        let mut infos = Infos::default();
        let mut m = Meter::new(&["group".to_string()]);
        let t = |id, v, tags: &[(&str, &str)]| sample(id, v, tags);
        for s in [
            t(builtin::HTTP_REQS, 1.0, &[("group", "")]),
            t(builtin::HTTP_REQS, 1.0, &[("group", "::shop")]),
            t(builtin::CHECKS, 1.0, &[("group", "::shop")]),
            t(builtin::CHECKS, 0.0, &[("group", "::shop")]),
            t(builtin::VUS, 3.0, &[]),
            t(builtin::HTTP_REQ_DURATION, 10.0, &[]),
            t(builtin::HTTP_REQ_DURATION, 30.0, &[]),
        ] {
            infos.learn(s.metric, || registry.info(s.metric));
            let kind = registry.info(s.metric).kind;
            m.add(&s, kind);
        }
        let names: Vec<String> = m.metas(&infos).into_iter().map(|x| x.name).collect();
        assert_eq!(
            names,
            vec![
                "checks",
                "checks{group:::shop}",
                "http_req_duration",
                "http_reqs",
                "http_reqs{group:::shop}",
                "time",
                "vus"
            ]
        );
        let now = SystemTime::UNIX_EPOCH + Duration::from_millis(1500);
        let json = m.format(&infos, now, Duration::from_secs(2));
        assert_eq!(
            json,
            "[[0.5],[0.5],[20,30,20,10,28,29,29.8],[2,1],[1,0.5],[1500],[3]]"
        );
        // A snapshot has the same rows, empty until samples arrive.
        let mut snap = m.empty_like();
        assert_eq!(
            snap.format(&infos, now, Duration::from_secs(1)),
            "[[],[],[],[],[],[1500],[]]"
        );
        snap.add(&t(builtin::HTTP_REQS, 4.0, &[]), MetricType::Counter);
        assert_eq!(
            snap.format(&infos, now, Duration::from_secs(2)),
            "[[],[],[],[4,2],[],[1500],[]]"
        );
    }
}
