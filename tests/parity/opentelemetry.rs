//! `-o experimental-opentelemetry` against k6: both export the same script to one OTLP
//! receiver over gRPC, and the last export of each must hold the same metric names, data
//! kinds, units, attribute keys and data-point counts, the same resource attribute keys
//! (`OTEL_RESOURCE_ATTRIBUTES` included) and the same scope. rk6 runs twice: as
//! `experimental-opentelemetry` (k6 1.1's name, whose Rate encoding rk6 keeps), and as
//! `opentelemetry` with `K6_OTEL_SINGLE_COUNTER_FOR_RATE=false`, the switch k6 1.4 to 1.7
//! had for bringing k6 1.1's Rate encoding back (k6 v1.4.0 release notes, #5333).

use std::collections::BTreeMap;
use std::time::Duration;

use super::{k6, run_k6_env, run_rk6_env};
use crate::support::otlp::{metrics, shape, Export, Receiver};
use crate::support::TestServer;
use crate::Dir;

const SCRIPT: &str = r#"
import http from 'k6/http';
import { check, group, sleep } from 'k6';
import { Counter, Gauge, Rate, Trend } from 'k6/metrics';
const c = new Counter('my_counter');
const g = new Gauge('my_gauge');
const r = new Rate('my_rate');
const t = new Trend('my_trend');
// Run tags reach every sample, `vus` and `vus_max` included.
export const options = { vus: 1, duration: '2s', tags: { testid: 'p1' } };
export default function () {
  group('g1', () => {
    const res = http.get(__ENV.URL, { tags: { mytag: 'x' } });
    check(res, { ok: (x) => x.status === 200, empty: (x) => x.body === '' });
  });
  http.get(__ENV.URL + '?other=1');
  c.add(2, { k: 'v' });
  g.add(7);
  r.add(1);
  r.add(0, { k: 'z' });
  t.add(12.5);
  sleep(0.2);
}
"#;

type Shape = BTreeMap<String, (String, String, Vec<Vec<String>>)>;

fn shapes(e: &Export) -> Shape {
    metrics(e)
        .iter()
        .map(|m| {
            let (name, kind, unit, points) = shape(m);
            (name, (kind, unit, points))
        })
        .collect()
}

fn resource_keys(e: &Export) -> Vec<String> {
    let rm = &e.request.resource_metrics[0];
    let mut keys: Vec<String> = rm
        .resource
        .as_ref()
        .map(|r| r.attributes.iter().map(|kv| kv.key.clone()).collect())
        .unwrap_or_default();
    keys.sort();
    keys
}

#[test]
fn exports_what_k6_exports() {
    let Some(bin) = k6() else { return };
    let srv = TestServer::start();
    let dir = Dir::new("parity-otel");
    let script = dir.write("script.js", SCRIPT);
    let url = srv.url("/get");
    let mut last = Vec::new();
    for (tool, out) in [
        ("k6", "experimental-opentelemetry"),
        ("rk6", "experimental-opentelemetry"),
        ("rk6", "opentelemetry"),
    ] {
        let rx = Receiver::start(Duration::from_secs(60));
        let endpoint = rx.grpc.to_string();
        let mut env = vec![
            ("URL", url.as_str()),
            ("K6_OUT", out),
            ("K6_OTEL_GRPC_EXPORTER_ENDPOINT", endpoint.as_str()),
            ("K6_OTEL_GRPC_EXPORTER_INSECURE", "true"),
            // k6 hands samples to its SDK once per flush interval and drops the last ones.
            ("K6_OTEL_FLUSH_INTERVAL", "100ms"),
            ("K6_OTEL_EXPORT_INTERVAL", "500ms"),
            ("K6_OTEL_METRIC_PREFIX", "p_"),
            ("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=ci"),
        ];
        if out == "opentelemetry" {
            env.push(("K6_OTEL_SINGLE_COUNTER_FOR_RATE", "false"));
        }
        let res = if tool == "k6" {
            run_k6_env(&bin, &script, &dir, &env)
        } else {
            run_rk6_env(&script, &dir, &env)
        };
        assert_eq!(res.code, 0, "{tool} {out}");
        let exports = rx.wait_for(1, Duration::from_secs(5));
        let e = exports
            .last()
            .unwrap_or_else(|| panic!("{tool} {out} exported nothing"))
            .clone();
        assert_eq!(e.transport, "grpc");
        last.push(e);
    }
    for rk6 in &last[1..] {
        same_export(&last[0], rk6);
    }
}

/// The k6 export `k6` and the rk6 one agree in resource keys, scope and metric shapes.
fn same_export(k6: &Export, rk6: &Export) {
    assert_eq!(resource_keys(k6), resource_keys(rk6));
    let scope = |e: &Export| e.request.resource_metrics[0].scope_metrics[0].scope.clone();
    assert_eq!(scope(k6).map(|s| s.name), scope(rk6).map(|s| s.name));
    let (k6, rk6) = (shapes(k6), shapes(rk6));
    let names = |s: &Shape| s.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(&k6), names(&rk6), "metric names");
    for (name, want) in &k6 {
        assert_eq!(
            &rk6[name], want,
            "{name}: (kind, unit, attribute keys per point)"
        );
    }
    // The mapping is exercised, not assumed: these are in both.
    for name in [
        "p_my_rate.occurred",
        "p_my_trend",
        "p_checks.total",
        "p_vus",
    ] {
        assert!(k6.contains_key(name), "{name} in {:?}", names(&k6));
    }
}
