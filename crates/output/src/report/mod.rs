//! k6's web dashboard: the live page (`K6_WEB_DASHBOARD=true`, served while the test
//! runs) and the HTML report (`K6_WEB_DASHBOARD_EXPORT=report.html` or
//! `-o web-dashboard=export=report.html`).
//!
//! [`ReportOutput`] sees every sample batch and keeps only bounded aggregates: a
//! [`Timeline`] of per-interval rates, VUs and latency percentiles, and per-`name`,
//! per-`error_code` and per-check tallies. At the end it receives the summary (checks,
//! threshold verdicts, metric values) through [`Output::end_of_test`] and writes one
//! self-contained HTML file whose inline script draws the charts from embedded JSON.
//! With the server on, [`live::Live`] also publishes k6's event stream and, about once a
//! second, the same JSON for the live page, which the same script redraws.

mod config;
mod endpoints;
mod html;
mod live;
mod rows;
mod timeline;

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Write};
use std::time::{Duration, SystemTime};

use hdrhistogram::Histogram;
use rk6_metrics::{builtin, GroupSummary, Registry, Sample, SummaryData};
use serde::Serialize;
use serde_json::Value;

pub use config::{enabled_by_env, ReportConfig};
use endpoints::{EndpointRow, Endpoints, ErrorRow};
use rows::{CheckRow, MetricRow, ThresholdRow};
use timeline::{micros, Event, Series, Timeline};

/// Distinct `(group, check)` pairs tallied for the live page; the final summary has them
/// all.
const MAX_CHECKS: usize = 500;

/// Serves the live dashboard while the run lasts and writes the HTML report at its end.
pub struct ReportOutput {
    path: Option<String>,
    /// Created when the output opens, so an unwritable path fails before the test runs.
    file: Option<File>,
    origin: SystemTime,
    timeline: Timeline,
    endpoints: Endpoints,
    totals: Totals,
    /// Check passes and fails by `(group, name)`, in first-seen order, for the live page.
    checks: Vec<CheckRow>,
    /// Row of each check: group → name → index into `checks`.
    check_index: HashMap<String, HashMap<String, usize>>,
    summary: Option<SummaryPart>,
    live: Option<live::Live>,
    /// Whether `finish` ran (the live page then shows the final data).
    finished: bool,
}

/// Whole-run numbers counted from the samples themselves.
struct Totals {
    reqs: f64,
    failed: u64,
    iterations: f64,
    vus_max: Option<f64>,
    latency: Histogram<u64>,
    latency_sum_ms: f64,
}

/// What the report takes from the end-of-test summary.
#[derive(Serialize, Clone)]
struct SummaryPart {
    duration: f64,
    checks: Vec<CheckRow>,
    thresholds: Vec<ThresholdRow>,
    metrics: Vec<MetricRow>,
}

/// The JSON embedded in the page.
#[derive(Serialize)]
struct ReportData<'a> {
    generator: String,
    /// `true` while the test runs (the live page's data before the end).
    live: bool,
    started: String,
    duration: f64,
    totals: TotalsRow,
    timeline: Series,
    endpoints: Vec<EndpointRow>,
    errors: Vec<ErrorRow>,
    /// `null` when the run ended before a summary existed; while the run lasts, figures
    /// from the live meters.
    summary: Option<std::borrow::Cow<'a, SummaryPart>>,
}

#[derive(Serialize)]
struct TotalsRow {
    http_reqs: f64,
    http_req_failed: u64,
    iterations: f64,
    vus_max: Option<f64>,
    latency: Option<LatencyRow>,
}

#[derive(Serialize)]
struct LatencyRow {
    mean: f64,
    p50: f64,
    p90: f64,
    p95: f64,
    p99: f64,
    max: f64,
}

impl ReportOutput {
    /// Creates (truncates) the report file now, when one is configured; the run starts at
    /// `origin`. The live server is started by [`ReportOutput::serve`].
    pub fn create(config: &ReportConfig, origin: SystemTime) -> io::Result<ReportOutput> {
        let file = config.export.as_ref().map(File::create).transpose()?;
        Ok(ReportOutput {
            path: config.export.clone(),
            file,
            origin,
            timeline: Timeline::new(origin, config.report_period()),
            endpoints: Endpoints::default(),
            totals: Totals {
                reqs: 0.0,
                failed: 0,
                iterations: 0.0,
                vus_max: None,
                latency: Histogram::new(3).expect("3 significant figures are valid"),
                latency_sum_ms: 0.0,
            },
            checks: Vec::new(),
            check_index: HashMap::new(),
            summary: None,
            live: None,
            finished: false,
        })
    }

    /// Starts the live server of `config` (binding its port now, so a busy port fails
    /// before the test starts) and opens a browser on it when `open` is set. The error is
    /// Go's listen message, which k6 prints before exiting with 255.
    pub fn serve(
        &mut self,
        config: &ReportConfig,
        thresholds: &rk6_metrics::ThresholdSet,
        run: &crate::RunInfo,
    ) -> Result<(), String> {
        let port = u16::try_from(config.port).map_err(|_| {
            format!(
                "listen tcp {}:{}: address {}: invalid port",
                config.host, config.port, config.port
            )
        })?;
        let live = live::Live::start(
            &config.host,
            port,
            config.stream_period(run.end_offset),
            &config.tags,
            thresholds,
            run,
        )?;
        if config.open {
            live::open_browser(live.url());
        }
        self.live = Some(live);
        self.publish_page(true);
        Ok(())
    }

    /// The live page's address, when the server runs.
    pub fn url(&self) -> Option<&str> {
        self.live.as_ref().map(|l| l.url())
    }

    /// Gives the live page the current data; `force` even when no page is watching.
    fn publish_page(&mut self, force: bool) {
        match &self.live {
            Some(live) if force || live.wants_page() => {}
            _ => return,
        }
        let json = serde_json::to_string(&self.data(SystemTime::now())).unwrap_or_default();
        if let Some(live) = &mut self.live {
            live.publish_page(json);
        }
    }

    fn add_check(&mut self, s: &Sample) {
        let group = s.tags.get("group").unwrap_or("");
        let name = s.tags.get("check").unwrap_or("");
        // Looked up by `&str`, so a known check costs no allocation.
        let known = self
            .check_index
            .get(group)
            .and_then(|g| g.get(name))
            .copied();
        let i = match known {
            Some(i) => i,
            None if self.checks.len() < MAX_CHECKS => {
                self.checks.push(CheckRow {
                    group: group.to_string(),
                    name: name.to_string(),
                    passes: 0,
                    fails: 0,
                });
                let i = self.checks.len() - 1;
                self.check_index
                    .entry(group.to_string())
                    .or_default()
                    .insert(name.to_string(), i);
                i
            }
            None => return,
        };
        if s.value != 0.0 {
            self.checks[i].passes += 1;
        } else {
            self.checks[i].fails += 1;
        }
    }

    fn add_sample(&mut self, s: &Sample) {
        let name = || {
            s.tags
                .get("name")
                .or_else(|| s.tags.get("url"))
                .unwrap_or("")
        };
        match s.metric {
            builtin::HTTP_REQS => {
                self.totals.reqs += s.value;
                self.timeline.add(s.time, Event::Request(s.value));
                self.endpoints.request(
                    name(),
                    s.value,
                    s.tags.get("error_code"),
                    s.tags.get("error"),
                );
            }
            builtin::HTTP_REQ_FAILED if s.value != 0.0 => {
                self.totals.failed += 1;
                self.timeline.add(s.time, Event::Failed);
                self.endpoints.failed(name());
            }
            builtin::HTTP_REQ_DURATION => {
                let _ = self.totals.latency.record(micros(s.value));
                self.totals.latency_sum_ms += s.value;
                self.timeline.add(s.time, Event::Latency(s.value));
                self.endpoints.duration(name(), s.value);
            }
            builtin::ITERATIONS => {
                self.totals.iterations += s.value;
                self.timeline.add(s.time, Event::Iteration(s.value));
            }
            builtin::VUS => {
                self.totals.vus_max = Some(self.totals.vus_max.map_or(s.value, |m| m.max(s.value)));
                self.timeline.add(s.time, Event::Vus(s.value));
            }
            // Only the live page reads these; the report takes the summary's checks.
            builtin::CHECKS if self.live.is_some() => self.add_check(s),
            _ => {}
        }
    }

    /// The page's JSON for a run that ended `now`.
    fn data(&self, now: SystemTime) -> ReportData<'_> {
        let duration = match &self.summary {
            Some(s) => Duration::from_secs_f64(s.duration),
            None => now.duration_since(self.origin).unwrap_or_default(),
        };
        let running = !self.finished && self.live.is_some();
        let summary = match (&self.summary, &self.live) {
            (Some(s), _) => Some(std::borrow::Cow::Borrowed(s)),
            (None, Some(live)) if !self.finished => Some(std::borrow::Cow::Owned(SummaryPart {
                duration: duration.as_secs_f64(),
                checks: self.checks.clone(),
                thresholds: live.threshold_rows(now),
                metrics: live.metric_rows(now),
            })),
            _ => None,
        };
        let h = &self.totals.latency;
        let q = |q: f64| h.median_equivalent(h.value_at_quantile(q)) as f64 / 1000.0;
        let latency = (!h.is_empty()).then(|| LatencyRow {
            mean: self.totals.latency_sum_ms / h.len() as f64,
            p50: q(0.50),
            p90: q(0.90),
            p95: q(0.95),
            p99: q(0.99),
            max: h.max() as f64 / 1000.0,
        });
        ReportData {
            generator: format!("rk6 {}", env!("CARGO_PKG_VERSION")),
            live: running,
            started: crate::timestamp::rfc3339(self.origin, false),
            duration: duration.as_secs_f64(),
            totals: TotalsRow {
                http_reqs: self.totals.reqs,
                http_req_failed: self.totals.failed,
                iterations: self.totals.iterations,
                vus_max: self.totals.vus_max,
                latency,
            },
            timeline: self.timeline.series(duration),
            endpoints: self.endpoints.rows(),
            errors: self.endpoints.errors(),
            summary,
        }
    }

    /// The complete HTML page.
    fn render(&self, now: SystemTime) -> String {
        let json = serde_json::to_string(&self.data(now)).unwrap_or_else(|_| "null".into());
        html::page(&json)
    }
}

impl crate::Output for ReportOutput {
    /// `web-dashboard URL`, the form k6's banner turns into its `web dashboard:` line,
    /// plus the report file.
    fn description(&self) -> String {
        let mut d = String::from("web-dashboard");
        if let Some(url) = self.url() {
            d.push(' ');
            d.push_str(url);
        }
        if let Some(path) = &self.path {
            d.push_str(&format!(" (report {path})"));
        }
        d
    }

    fn add(&mut self, registry: &Registry, batch: &[Sample]) {
        for s in batch {
            self.add_sample(s);
        }
        if let Some(live) = &mut self.live {
            live.add(registry, batch);
        }
    }

    /// The report file is written only at the end; the live page gets fresh data now
    /// (the metrics thread calls this about once a second).
    fn flush(&mut self) {
        if let Some(live) = &mut self.live {
            live.tick(std::time::Instant::now());
        }
        self.publish_page(false);
    }

    fn end_of_test(&mut self, summary: &SummaryData) {
        let mut checks = Vec::new();
        flatten_checks(&summary.root_group, &mut checks);
        let thresholds = summary
            .metrics
            .iter()
            .flat_map(|m| {
                m.thresholds.iter().map(|t| ThresholdRow {
                    metric: m.name.clone(),
                    source: t.source.clone(),
                    ok: t.ok,
                    value: t.value,
                })
            })
            .collect();
        let metrics = summary
            .metrics
            .iter()
            .map(|m| MetricRow {
                name: m.name.clone(),
                kind: m.kind.as_str(),
                contains: m.contains.as_str(),
                values: m
                    .values
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::from(*v)))
                    .collect(),
            })
            .collect();
        self.summary = Some(SummaryPart {
            duration: summary.duration.as_secs_f64(),
            checks,
            thresholds,
            metrics,
        });
    }

    /// Ends the event stream (the server keeps serving until the output is dropped,
    /// after the summary is printed) and writes the report file.
    fn finish(&mut self) -> io::Result<()> {
        if !self.finished {
            // The page's final data (with the summary's verdicts) goes out before `stop`.
            self.finished = true;
            self.publish_page(true);
            if let Some(live) = &mut self.live {
                live.finish();
            }
        }
        let Some(mut file) = self.file.take() else {
            return Ok(());
        };
        let page = self.render(SystemTime::now());
        file.write_all(page.as_bytes())?;
        file.flush()
    }
}

fn flatten_checks(group: &GroupSummary, out: &mut Vec<CheckRow>) {
    for c in &group.checks {
        out.push(CheckRow {
            group: group.path.clone(),
            name: c.name.clone(),
            passes: c.passes,
            fails: c.fails,
        });
    }
    for g in &group.groups {
        flatten_checks(g, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Output;
    use rk6_metrics::{Aggregator, ThresholdSet};
    use std::sync::Arc;

    fn sample(metric: rk6_metrics::MetricId, value: f64, ms: u64, tags: &[(&str, &str)]) -> Sample {
        Sample {
            metric,
            tags: rk6_metrics::TagSet::from_pairs(tags.iter().copied()),
            value,
            time: SystemTime::UNIX_EPOCH + Duration::from_millis(ms),
        }
    }

    /// The JSON inside the page's data element.
    fn embedded(page: &str) -> Value {
        let start = page.find(html::DATA_OPEN).unwrap() + html::DATA_OPEN.len();
        let end = start + page[start..].find("</script>").unwrap();
        serde_json::from_str(&page[start..end]).unwrap()
    }

    #[test]
    fn report_holds_samples_and_summary() {
        let dir = std::env::temp_dir().join(format!("rk6-report-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("r.html");
        let config = ReportConfig::parse(
            &format!("export={}&port=-1&period=1s", path.display()),
            &|_: &str| None,
        )
        .unwrap();
        let registry = Arc::new(Registry::new());
        let thresholds = ThresholdSet::parse(
            &serde_json::json!({"http_req_failed": ["rate<0.01"]}),
            &registry,
        )
        .unwrap();
        let mut agg = Aggregator::new(registry.clone(), thresholds);
        let mut out = ReportOutput::create(&config, SystemTime::UNIX_EPOCH).unwrap();
        // An attacker-controlled name must not close the data element.
        let evil = "</script><script>alert(1)</script>";
        let mut batch = Vec::new();
        for (i, name) in ["/a", "/a", evil].iter().enumerate() {
            let failed = if i == 2 { 1.0 } else { 0.0 };
            let mut tags = vec![("name", *name), ("check", "ok")];
            if i == 2 {
                tags.push(("error_code", "1404"));
            }
            batch.push(sample(
                builtin::HTTP_REQS,
                1.0,
                100 + i as u64 * 1000,
                &tags,
            ));
            batch.push(sample(
                builtin::HTTP_REQ_FAILED,
                failed,
                100 + i as u64 * 1000,
                &tags,
            ));
            batch.push(sample(
                builtin::HTTP_REQ_DURATION,
                10.0 * (i + 1) as f64,
                100,
                &tags,
            ));
            batch.push(sample(builtin::CHECKS, 1.0 - failed, 100, &tags));
        }
        batch.push(sample(builtin::VUS, 2.0, 900, &[]));
        agg.add(&batch);
        out.add(&registry, &batch);
        let summary = agg.summary(Duration::from_secs(3), &["p(95)".to_string()]);
        out.end_of_test(&summary);
        out.finish().unwrap();
        let page = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(!page.contains(evil), "names are escaped inside the data");
        let data = embedded(&page);
        assert_eq!(data["totals"]["http_reqs"], 3.0);
        assert_eq!(data["totals"]["http_req_failed"], 1);
        assert_eq!(data["totals"]["vus_max"], 2.0);
        assert_eq!(data["duration"], 3.0);
        assert_eq!(data["timeline"]["reqs"], serde_json::json!([1.0, 1.0, 1.0]));
        assert_eq!(data["timeline"]["failed"], serde_json::json!([0, 0, 1]));
        assert_eq!(data["endpoints"][0]["name"], "/a");
        assert_eq!(data["endpoints"][0]["count"], 2.0);
        assert_eq!(data["endpoints"][1]["name"], evil);
        assert_eq!(data["endpoints"][1]["failed"], 1);
        assert_eq!(data["errors"][0]["code"], "1404");
        let s = &data["summary"];
        assert_eq!(s["checks"][0]["name"], "ok");
        assert_eq!(s["checks"][0]["passes"], 2);
        assert_eq!(s["checks"][0]["fails"], 1);
        assert_eq!(s["thresholds"][0]["metric"], "http_req_failed");
        assert_eq!(s["thresholds"][0]["source"], "rate<0.01");
        assert_eq!(s["thresholds"][0]["ok"], false, "1 of 3 failed");
        let reqs = s["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == "http_reqs")
            .unwrap();
        assert_eq!(reqs["values"]["count"], 3.0);
    }

    #[test]
    fn without_a_summary_the_report_still_renders() {
        let dir = std::env::temp_dir().join(format!("rk6-report-unit2-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("r.html");
        let config = ReportConfig::parse(
            &format!("export={}&port=-1&period=1s", path.display()),
            &|_: &str| None,
        )
        .unwrap();
        let mut out = ReportOutput::create(&config, SystemTime::UNIX_EPOCH).unwrap();
        let registry = Registry::new();
        out.add(&registry, &[sample(builtin::ITERATIONS, 1.0, 10, &[])]);
        let page = out.render(SystemTime::UNIX_EPOCH + Duration::from_millis(1500));
        out.finish().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let data = embedded(&page);
        assert_eq!(data["summary"], Value::Null);
        assert_eq!(data["duration"], 1.5);
        assert_eq!(data["totals"]["iterations"], 1.0);
        assert_eq!(data["totals"]["latency"], Value::Null);
        assert_eq!(data["timeline"]["span"], serde_json::json!([1.0]));
    }
}
