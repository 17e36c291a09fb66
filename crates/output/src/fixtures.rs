//! Summary data the text, export and handleSummary tests share.

use std::time::Duration;

use rk6_metrics::{
    md5_hex, CheckSummary, GroupSummary, MetricSummary, MetricType, SummaryData, ThresholdResult,
    ValueType,
};

pub(crate) fn metric(
    name: &str,
    kind: MetricType,
    contains: ValueType,
    values: &[(&str, f64)],
) -> MetricSummary {
    let parent = name.find('{').map(|i| name[..i].to_owned());
    MetricSummary {
        name: name.into(),
        kind,
        contains,
        values: values.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        thresholds: Vec::new(),
        submetric_tags: Vec::new(),
        parent,
    }
}

pub(crate) fn threshold(source: &str, stat: &str, value: f64, ok: bool) -> ThresholdResult {
    ThresholdResult {
        source: source.into(),
        ok,
        stat: stat.into(),
        value: Some(value),
    }
}

pub(crate) fn group(checks: &[(&str, u64, u64)]) -> GroupSummary {
    GroupSummary {
        name: String::new(),
        path: String::new(),
        id: md5_hex(""),
        groups: Vec::new(),
        checks: checks
            .iter()
            .map(|(n, p, f)| CheckSummary {
                name: n.to_string(),
                path: format!("::{n}"),
                id: md5_hex(&format!("::{n}")),
                passes: *p,
                fails: *f,
            })
            .collect(),
    }
}

/// The numbers of the 2-second k6 run in the reference (§7.1), full-mode trends added.
pub(crate) fn basic_run() -> SummaryData {
    use MetricType::*;
    use ValueType::*;
    let dur = |avg, min, med, max, p90, p95| {
        vec![
            ("avg", avg),
            ("min", min),
            ("med", med),
            ("max", max),
            ("p(90)", p90),
            ("p(95)", p95),
        ]
    };
    let http = dur(2.5512, 0.7022, 1.4405, 15.661, 4.2301, 5.4102);
    let mut duration = metric("http_req_duration", Trend, Time, &http);
    duration.thresholds = vec![threshold("p(95)<500", "p(95)", 5.4102, true)];
    let mut expected = metric(
        "http_req_duration{expected_response:true}",
        Trend,
        Time,
        &http,
    );
    expected.submetric_tags = vec![("expected_response".into(), "true".into())];
    let mut failed = metric(
        "http_req_failed",
        Rate,
        Default,
        &[("rate", 0.0), ("passes", 0.0), ("fails", 40.0)],
    );
    failed.thresholds = vec![threshold("rate<0.01", "rate", 0.0, true)];
    let rate = 19.297_569_4;
    SummaryData {
        metrics: vec![
            metric(
                "checks",
                Rate,
                Default,
                &[("rate", 1.0), ("passes", 40.0), ("fails", 0.0)],
            ),
            metric(
                "data_received",
                Counter,
                Data,
                &[("count", 10160.0), ("rate", 4901.5)],
            ),
            metric(
                "data_sent",
                Counter,
                Data,
                &[("count", 3000.0), ("rate", 1449.0)],
            ),
            metric(
                "http_req_blocked",
                Trend,
                Time,
                &dur(0.03315, 0.00284, 0.00971, 0.73199, 0.01408, 0.06108),
            ),
            duration,
            expected,
            failed,
            metric(
                "http_req_waiting",
                Trend,
                Time,
                &dur(1.12, 0.64033, 0.98912, 2.81, 1.65, 1.93),
            ),
            metric(
                "http_reqs",
                Counter,
                Default,
                &[("count", 40.0), ("rate", rate)],
            ),
            metric(
                "iteration_duration",
                Trend,
                Time,
                &dur(103.51, 101.19, 102.42, 117.54, 105.05, 109.22),
            ),
            metric(
                "iterations",
                Counter,
                Default,
                &[("count", 40.0), ("rate", rate)],
            ),
            metric(
                "vus",
                Gauge,
                Default,
                &[("value", 2.0), ("min", 2.0), ("max", 2.0)],
            ),
            metric(
                "vus_max",
                Gauge,
                Default,
                &[("value", 2.0), ("min", 2.0), ("max", 2.0)],
            ),
        ],
        root_group: group(&[("status is 200", 40, 0)]),
        checks: group(&[("status is 200", 40, 0)]).checks,
        duration: Duration::from_secs_f64(40.0 / rate),
        sections: None,
        connections: rk6_metrics::ConnectionTally::default(),
    }
}
