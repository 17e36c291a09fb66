//! From samples to printed summary: rk6-metrics and rk6-output together.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use rk6_metrics::{builtin, Aggregator, MetricId, Registry, Sample, TagSet, ThresholdSet};
use rk6_output::{handle_summary_data, render_text, summary_export, TextOptions};
use serde_json::json;

fn stats() -> Vec<String> {
    ["avg", "min", "med", "max", "p(90)", "p(95)"]
        .map(String::from)
        .to_vec()
}

fn push(batch: &mut Vec<Sample>, metric: MetricId, value: f64, tags: &TagSet) {
    batch.push(Sample {
        metric,
        tags: tags.clone(),
        value,
        time: SystemTime::now(),
    });
}

#[test]
fn samples_to_summary_text_and_json() {
    let registry = Arc::new(Registry::new());
    let my_trend = registry
        .register(
            "my_trend",
            rk6_metrics::MetricType::Trend,
            rk6_metrics::ValueType::Default,
        )
        .unwrap();
    let thresholds = ThresholdSet::parse(
        &json!({
            "http_req_duration": ["p(95)<500"],
            "http_req_duration{scenario:default}": ["max<1000"],
            "my_trend": ["avg>0"],
        }),
        &registry,
    )
    .unwrap();
    let mut agg = Aggregator::new(registry, thresholds);
    let req = TagSet::from_pairs([
        ("expected_response", "true"),
        ("group", ""),
        ("scenario", "default"),
        ("status", "200"),
    ]);
    let check = TagSet::from_pairs([
        ("check", "status is 200"),
        ("group", ""),
        ("scenario", "default"),
    ]);
    let iter = TagSet::from_pairs([("group", ""), ("scenario", "default")]);
    for i in 0..10 {
        let mut batch = Vec::new();
        push(&mut batch, builtin::HTTP_REQS, 1.0, &req);
        push(&mut batch, builtin::HTTP_REQ_DURATION, 1.0 + i as f64, &req);
        push(&mut batch, builtin::HTTP_REQ_FAILED, 0.0, &req);
        push(&mut batch, builtin::CHECKS, 1.0, &check);
        push(&mut batch, builtin::ITERATIONS, 1.0, &iter);
        push(&mut batch, builtin::DATA_SENT, 75.0, &iter);
        push(&mut batch, my_trend, 0.5 * i as f64, &iter);
        agg.add(&batch);
    }
    let elapsed = Duration::from_secs(2);
    assert!(!agg.evaluate(elapsed, rk6_metrics::Pass::Final).failed);
    let data = agg.summary(elapsed, &stats());

    let text = render_text(&data, &TextOptions::default());
    assert!(text.contains("    ✓ 'p(95)<500' p(95)=9.55ms\n"), "{text}");
    assert!(
        // As k6: a sub-metric whose parent has thresholds too is listed under it.
        text.contains("    ✓ 'p(95)<500' p(95)=9.55ms\n\n      {scenario:default}\n      ✓ 'max<1000' max=10ms\n"),
        "{text}"
    );
    assert!(text.contains("      { scenario:default }......"), "{text}");
    assert!(
        text.contains("      { expected_response:true }......"),
        "{text}"
    );
    assert!(text.contains("    CUSTOM\n    my_trend......"), "{text}");
    assert!(
        text.contains(": avg=2.25  min=0   med=2.25  max=4.5  p(90)=4.05  p(95)=4.275 \n"),
        "{text}"
    );
    assert!(
        text.contains("    checks_total.......................: 10      5/s\n"),
        "{text}"
    );
    assert!(text.contains("    data_sent...............................................................: 750 B 375 B/s\n"), "{text}");

    let export = summary_export(&data);
    assert_eq!(
        export["metrics"]["http_reqs"],
        json!({"count": 10, "rate": 5})
    );
    assert_eq!(
        export["metrics"]["my_trend"]["thresholds"],
        json!({"avg>0": false})
    );

    let hs = handle_summary_data(&data, &stats(), None, false, false, false, None);
    assert_eq!(
        hs["metrics"]["http_req_duration{scenario:default}"]["thresholds"],
        json!({"max<1000": {"ok": true}})
    );
    assert_eq!(hs["root_group"]["checks"][0]["passes"], json!(10));
}
