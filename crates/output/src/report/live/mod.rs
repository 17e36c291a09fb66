//! The live web dashboard (`K6_WEB_DASHBOARD=true`): an HTTP server with k6's event
//! stream and rk6's live page.
//!
//! [`Live`] lives on the metrics thread inside the report output, so it sees each sample
//! batch after the aggregator, never the VUs' hot path. Every period it formats its
//! meters into k6's `cumulative` and `snapshot` events; about once a second the report
//! output hands it the page data. Both go to the server thread through [`Stream`]s.

mod meter;
mod server;
mod stream;

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use rk6_metrics::threshold::Target;
use rk6_metrics::{Registry, Sample, Sink, ThresholdSet};
use serde::Serialize;
use serde_json::{Map, Value};

use super::rows::{MetricRow, ThresholdRow};
use crate::RunInfo;
use meter::{Infos, Meter, MetricMeta, AGGREGATES};
use server::{Server, Shared};
use stream::{Replay, Stream, STOP_RETRY};

/// The live half of the web-dashboard output.
pub(crate) struct Live {
    shared: Arc<Shared>,
    /// Held for its `Drop`, which stops the server.
    _server: Server,
    /// The page's address as the banner shows it.
    url: String,
    start: SystemTime,
    period: Duration,
    next_tick: Instant,
    cumulative: Meter,
    snapshot: Meter,
    infos: Infos,
    /// Names already announced with a `metric` event.
    announced: HashSet<String>,
    thresholds: ThresholdSet,
    /// One sink per threshold sub-metric (`metric{tag:value}` keys).
    sub_sinks: Vec<Sink>,
    /// When the page data was last made.
    page_published: Option<Instant>,
}

/// How stale the served page data may get while no page follows the feed: making it costs
/// percentiles over every table, so an unwatched run makes it rarely.
const IDLE_REFRESH: Duration = Duration::from_secs(2);

/// `param`: what the page needs to know about the run.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Param<'a> {
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    thresholds: BTreeMap<&'a str, Vec<&'a str>>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    scenarios: &'a [String],
    #[serde(skip_serializing_if = "is_zero")]
    end_offset: u128,
    period: u128,
    #[serde(skip_serializing_if = "str::is_empty")]
    script_path: &'a str,
    aggregates: BTreeMap<&'a str, &'a [&'a str]>,
}

fn is_zero(v: &u128) -> bool {
    *v == 0
}

/// One entry of a `metric` event.
#[derive(Serialize)]
struct MetricData {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "str::is_empty")]
    contains: &'static str,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    custom: bool,
}

/// Go's JSON encoder escapes `<`, `>` and `&` in strings; these only occur in strings.
fn go_json(json: String) -> String {
    if !json.contains(['<', '>', '&']) {
        return json;
    }
    json.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

impl Live {
    /// Binds the server and publishes k6's opening events (`config`, `param`, `metric`,
    /// `start`). `period` is the stream's period.
    pub(crate) fn start(
        host: &str,
        port: u16,
        period: Duration,
        tags: &[String],
        thresholds: &ThresholdSet,
        run: &RunInfo,
    ) -> Result<Live, String> {
        let shared = Arc::new(Shared {
            k6: Stream::new(Replay::All),
            page: Stream::new(Replay::Latest),
            latest: Mutex::new(Arc::new("null".to_string())),
        });
        let server = Server::start(host, port, shared.clone())?;
        let shown = if host.is_empty() { "127.0.0.1" } else { host };
        let url = if shown.contains(':') {
            format!("http://[{shown}]:{}", server.addr().port())
        } else {
            format!("http://{shown}:{}", server.addr().port())
        };
        let mut live = Live {
            shared,
            _server: server,
            url,
            start: SystemTime::now(),
            period,
            next_tick: Instant::now() + period,
            cumulative: Meter::new(tags),
            snapshot: Meter::new(tags),
            infos: Infos::default(),
            announced: HashSet::new(),
            thresholds: thresholds.clone(),
            sub_sinks: thresholds
                .submetrics
                .iter()
                .map(|_| Sink::new(rk6_metrics::MetricType::Counter))
                .collect(),
            page_published: None,
        };
        live.open(run);
        Ok(live)
    }

    /// The page's address, e.g. `http://127.0.0.1:5665`.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    fn open(&mut self, run: &RunInfo) {
        let config = serde_json::json!({ "title": "rk6 dashboard", "tabs": [] });
        self.shared.k6.publish("config", &config.to_string(), None);
        let mut thresholds: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for t in &self.thresholds.thresholds {
            thresholds
                .entry(t.metric.as_str())
                .or_default()
                .push(t.source.as_str());
        }
        let param = Param {
            thresholds,
            scenarios: &run.scenarios,
            end_offset: run.end_offset.as_millis(),
            period: self.period.as_millis(),
            script_path: &run.script_url,
            aggregates: AGGREGATES.iter().copied().collect(),
        };
        let json = serde_json::to_string(&param).unwrap_or_default();
        self.shared.k6.publish("param", &go_json(json), None);
        self.clock_event("start", None);
    }

    /// `start` and `stop` carry only the clock (a meter with no metrics).
    fn clock_event(&mut self, event: &str, retry: Option<u64>) {
        let empty = Meter::new(&[]);
        self.announce(&empty);
        let data = empty.format(&self.infos, SystemTime::now(), self.period);
        self.shared.k6.publish(event, &data, retry);
    }

    /// A `metric` event for the names of `m` not announced yet.
    fn announce(&mut self, m: &Meter) {
        let mut fresh: BTreeMap<String, MetricData> = BTreeMap::new();
        for MetricMeta {
            name,
            kind,
            contains,
            custom,
        } in m.metas(&self.infos)
        {
            if self.announced.insert(name.clone()) {
                let contains = match contains {
                    rk6_metrics::ValueType::Default => "",
                    c => c.as_str(),
                };
                fresh.insert(
                    name,
                    MetricData {
                        kind: kind.as_str(),
                        contains,
                        custom,
                    },
                );
            }
        }
        if !fresh.is_empty() {
            let json = serde_json::to_string(&fresh).unwrap_or_default();
            self.shared.k6.publish("metric", &go_json(json), None);
        }
    }

    /// Adds a batch (on the metrics thread) and publishes a period that has ended.
    pub(crate) fn add(&mut self, registry: &Registry, batch: &[Sample]) {
        for s in batch {
            self.infos.learn(s.metric, || registry.info(s.metric));
            let Some(kind) = self.infos.get(s.metric).map(|i| i.kind) else {
                continue;
            };
            self.cumulative.add(s, kind);
            self.snapshot.add(s, kind);
            for (spec, sink) in self.thresholds.submetrics.iter().zip(&mut self.sub_sinks) {
                if spec.parent == s.metric
                    && s.tags
                        .contains_all(spec.tags.iter().map(|(k, v)| (k.as_str(), v.as_str())))
                {
                    if sink.is_empty() {
                        *sink = Sink::new(kind);
                    }
                    sink.add(s.value);
                }
            }
        }
        self.tick(Instant::now());
    }

    /// Publishes `cumulative`, `threshold` (when one is crossed) and `snapshot` once the
    /// period has passed.
    pub(crate) fn tick(&mut self, now: Instant) {
        if now < self.next_tick {
            return;
        }
        while self.next_tick <= now {
            self.next_tick += self.period;
        }
        let wall = SystemTime::now();
        self.cumulative_event(wall);
        let data = self.snapshot.format(&self.infos, wall, self.period);
        self.shared.k6.publish("snapshot", &data, None);
        self.snapshot = self.cumulative.empty_like();
    }

    /// `cumulative`, then `threshold` when one is crossed (every period and at the end).
    fn cumulative_event(&mut self, wall: SystemTime) {
        let cumulative = std::mem::replace(&mut self.cumulative, Meter::new(&[]));
        self.announce(&cumulative);
        let span = wall.duration_since(self.start).unwrap_or_default();
        let data = cumulative.format(&self.infos, wall, span);
        self.cumulative = cumulative;
        self.shared.k6.publish("cumulative", &data, None);
        let crossed = self.crossed(wall);
        if !crossed.is_empty() {
            let json = serde_json::to_string(&crossed).unwrap_or_default();
            self.shared.k6.publish("threshold", &go_json(json), None);
        }
    }

    fn elapsed(&self, wall: SystemTime) -> Duration {
        wall.duration_since(self.start).unwrap_or_default()
    }

    /// Every threshold's verdict on the run so far.
    pub(crate) fn threshold_rows(&self, wall: SystemTime) -> Vec<ThresholdRow> {
        let elapsed = self.elapsed(wall);
        self.thresholds
            .thresholds
            .iter()
            .map(|t| {
                let (ok, value) = match self.target_sink(t.target) {
                    Some(sink) => t.check(sink, elapsed, rk6_metrics::Pass::During),
                    None => (true, None),
                };
                ThresholdRow {
                    metric: t.metric.clone(),
                    source: t.source.clone(),
                    ok,
                    value,
                }
            })
            .collect()
    }

    fn target_sink(&self, target: Target) -> Option<&Sink> {
        match target {
            Target::Metric(id) => self.cumulative.sink(id),
            Target::SubMetric(i) => self.sub_sinks.get(i).filter(|s| !s.is_empty()),
        }
    }

    /// k6's `threshold` event: crossed thresholds of whole metrics, by metric.
    fn crossed(&self, wall: SystemTime) -> BTreeMap<String, Vec<String>> {
        let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let elapsed = self.elapsed(wall);
        for t in &self.thresholds.thresholds {
            let Target::Metric(id) = t.target else {
                continue;
            };
            let Some(sink) = self.cumulative.sink(id) else {
                continue;
            };
            if !t.check(sink, elapsed, rk6_metrics::Pass::During).0 {
                out.entry(t.metric.clone())
                    .or_default()
                    .push(t.source.clone());
            }
        }
        out
    }

    /// The summary's metric rows for the run so far.
    pub(crate) fn metric_rows(&self, wall: SystemTime) -> Vec<MetricRow> {
        use rk6_metrics::{MetricId, MetricType, Stat};
        let elapsed = self.elapsed(wall);
        let mut rows = Vec::new();
        for i in 0..self.infos.len() {
            let id = MetricId(i as u32);
            let Some(info) = self.infos.get(id) else {
                continue;
            };
            let Some(sink) = self.cumulative.sink(id) else {
                continue;
            };
            let stats: &[(&str, Stat)] = match info.kind {
                MetricType::Counter => &[("count", Stat::Count), ("rate", Stat::Rate)],
                MetricType::Gauge => &[
                    ("value", Stat::Value),
                    ("min", Stat::Min),
                    ("max", Stat::Max),
                ],
                MetricType::Rate => &[
                    ("rate", Stat::Rate),
                    ("passes", Stat::Passes),
                    ("fails", Stat::Fails),
                ],
                MetricType::Trend => &[
                    ("avg", Stat::Avg),
                    ("min", Stat::Min),
                    ("med", Stat::Med),
                    ("max", Stat::Max),
                    ("p(90)", Stat::Percentile(90.0)),
                    ("p(95)", Stat::Percentile(95.0)),
                ],
            };
            let values: Map<String, Value> = stats
                .iter()
                .filter_map(|(k, st)| Some((k.to_string(), Value::from(sink.stat(*st, elapsed)?))))
                .collect();
            rows.push(MetricRow {
                name: info.name.clone(),
                kind: info.kind.as_str(),
                contains: info.contains.as_str(),
                values,
            });
        }
        rows.sort_by(|a, b| a.name.cmp(&b.name));
        rows
    }

    /// Whether the page data is worth making now: a page is following the feed, or the
    /// copy `/ui/` and `/report` serve is older than [`IDLE_REFRESH`].
    pub(crate) fn wants_page(&self) -> bool {
        self.shared.page.clients() > 0
            || self
                .page_published
                .is_none_or(|t| t.elapsed() >= IDLE_REFRESH)
    }

    /// Hands the page its data (the report JSON) and tells connected pages.
    pub(crate) fn publish_page(&mut self, json: String) {
        self.page_published = Some(Instant::now());
        let json = Arc::new(json);
        if let Ok(mut l) = self.shared.latest.lock() {
            *l = json.clone();
        }
        self.shared.page.publish("report", &json, None);
    }

    /// The run is over: the last `cumulative` (no partial snapshot, as k6) and `stop`.
    /// The server keeps serving until the output is dropped.
    pub(crate) fn finish(&mut self) {
        self.cumulative_event(SystemTime::now());
        self.clock_event("stop", Some(STOP_RETRY));
        self.shared.page.publish("stop", "{}", Some(STOP_RETRY));
    }
}

/// Opens `url` in the desktop's browser, as k6's `open` does; like k6, a missing browser
/// is not an error.
pub(crate) fn open_browser(url: &str) {
    let cmd = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    let _ = std::process::Command::new(cmd)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;
    use rk6_metrics::{builtin, TagSet};

    #[test]
    fn events_follow_k6s_order() {
        let registry = Registry::new();
        let thresholds = ThresholdSet::parse(
            &serde_json::json!({"http_reqs": ["count<2"], "checks{group:::g}": ["rate>0.5"]}),
            &registry,
        )
        .unwrap();
        let run = RunInfo {
            script_url: "file:///s.js".into(),
            scenarios: vec!["default".into()],
            end_offset: Duration::from_secs(34),
            ..RunInfo::default()
        };
        // Long, so only the explicit ticks below end a period, however slow the machine.
        let period = Duration::from_secs(10);
        let mut live =
            Live::start("127.0.0.1", 0, period, &["group".into()], &thresholds, &run).unwrap();
        assert!(
            live.url().starts_with("http://127.0.0.1:"),
            "{}",
            live.url()
        );
        let reqs = |n: usize| -> Vec<Sample> {
            (0..n)
                .map(|_| Sample {
                    metric: builtin::HTTP_REQS,
                    tags: TagSet::from_pairs([("group", "::g")]),
                    value: 1.0,
                    time: SystemTime::now(),
                })
                .collect()
        };
        live.add(&registry, &reqs(1));
        live.tick(Instant::now() + period);
        live.add(&registry, &reqs(2));
        live.tick(Instant::now() + 3 * period);
        let rows = live.threshold_rows(SystemTime::now());
        assert_eq!(rows[0].source, "count<2");
        assert!(!rows[0].ok, "3 requests cross count<2");
        assert!(rows[1].ok && rows[1].value.is_none(), "no check ran");
        let body = live.shared.k6.subscribe();
        live.finish();
        drop(live);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let text =
            String::from_utf8(rt.block_on(body.collect()).unwrap().to_bytes().to_vec()).unwrap();
        let events: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("event: "))
            .collect();
        assert_eq!(
            events,
            vec![
                "config",
                "param",
                "metric",
                "start",
                "metric",
                "cumulative",
                "snapshot",
                "cumulative",
                "threshold",
                "snapshot",
                "cumulative",
                "threshold",
                "stop"
            ]
        );
        let data: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .collect();
        assert_eq!(
            data[4],
            r#"{"http_reqs":{"type":"counter"},"http_reqs{group:::g}":{"type":"counter"}}"#
        );
        let param: Value = serde_json::from_str(data[1]).unwrap();
        assert_eq!(param["period"], 10000);
        assert_eq!(param["endOffset"], 34000);
        assert_eq!(param["thresholds"]["http_reqs"][0], "count<2");
        let counts = |i: usize| -> Vec<f64> {
            let v: Value = serde_json::from_str(data[i]).unwrap();
            // Rows: http_reqs, http_reqs{group:::g}, time.
            vec![v[0][0].as_f64().unwrap(), v[1][0].as_f64().unwrap()]
        };
        assert_eq!(
            counts(5),
            vec![1.0, 1.0],
            "cumulative after the first period"
        );
        assert_eq!(counts(6), vec![1.0, 1.0], "snapshot of the first period");
        assert_eq!(counts(7), vec![3.0, 3.0], "cumulative grows");
        assert_eq!(counts(9), vec![2.0, 2.0], "the second period alone");
        assert_eq!(data[8], r#"{"http_reqs":["count\u003c2"]}"#);
        assert!(text.ends_with("event: stop\nretry: 9007199254740991\n\n"));
    }
}
