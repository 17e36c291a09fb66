//! `-o opentelemetry` and `-o experimental-opentelemetry` against an OTLP receiver built on
//! the official protobufs (`support::otlp`): names, types, units, attributes and data-point
//! counts as k6 sends them, the final export equal to the end-of-test summary, a collector
//! that is down, and k6's exit codes for bad settings; and what k6 changed after 1.1 (the
//! stable name, `K6_OTEL_EXPORTER_PROTOCOL`, a Rate as one counter, basic auth, TLS 1.3).

use std::collections::BTreeMap;
use std::time::Duration;

use opentelemetry_proto::tonic::common::v1::any_value;

use crate::support::otlp::{histogram_count, metrics, shape, sum_total, Receiver};
use crate::support::{closed_addr, TestServer};
use crate::{count, rk6_env, run_file, Dir};

/// The start of k6's warning for the experimental name.
const GRADUATED: &str =
    "level=warning msg=\"OpenTelemetry output has been graduated as a stable output. You can now use just \\\"opentelemetry\\\" instead of \\\"experimental-opentelemetry\\\".";

const SCRIPT: &str = r#"
import http from 'k6/http';
import { check } from 'k6';
import { Counter, Gauge, Rate, Trend } from 'k6/metrics';
const c = new Counter('my_counter');
const g = new Gauge('my_gauge');
const r = new Rate('my_rate');
const t = new Trend('my_trend', true);
// An open-model executor, so rk6's own `iteration_start_delay` exists to be left out.
export const options = {
  scenarios: {
    a: { executor: 'constant-arrival-rate', rate: 8, timeUnit: '1s', duration: '1s', preAllocatedVUs: 2 },
  },
};
export default function () {
  const res = http.get(__ENV.URL);
  check(res, { ok: (x) => x.status === 200 });
  c.add(2, { k: 'v' });
  g.add(7);
  r.add(0);
  t.add(12.5);
}
"#;

/// The metrics of the last export by name.
fn last_by_name(
    rx: &Receiver,
) -> BTreeMap<String, opentelemetry_proto::tonic::metrics::v1::Metric> {
    let exports = rx.exports();
    let last = exports.last().expect("at least one export");
    metrics(last)
        .iter()
        .map(|m| (m.name.clone(), m.clone()))
        .collect()
}

#[test]
fn grpc_export_holds_the_summary() {
    let srv = TestServer::start();
    let rx = Receiver::start(Duration::from_secs(60));
    let dir = Dir::new("otel-grpc");
    dir.write("script.js", SCRIPT);
    let url = srv.url("/get");
    let endpoint = rx.grpc.to_string();
    let (run, export) = run_file(
        &dir,
        "script.js",
        &["-o", "experimental-opentelemetry", "--tag", "testid=t1"],
        &[
            ("URL", &url),
            ("K6_OTEL_GRPC_EXPORTER_ENDPOINT", &endpoint),
            ("K6_OTEL_GRPC_EXPORTER_INSECURE", "true"),
            ("K6_OTEL_HEADERS", "x-tenant=a%20b"),
            ("K6_OTEL_SERVICE_NAME", "shop"),
        ],
    );
    run.assert_code(0);
    let exports = rx.exports();
    let last = exports.last().expect("the final export arrived");
    assert_eq!(last.transport, "grpc");
    assert_eq!(
        last.path,
        "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export"
    );
    assert_eq!(last.headers["content-type"], "application/grpc");
    assert_eq!(last.headers["x-tenant"], "a b");
    let rm = &last.request.resource_metrics[0];
    let resource: BTreeMap<&str, String> = rm
        .resource
        .as_ref()
        .unwrap()
        .attributes
        .iter()
        .map(|kv| {
            let v = match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
                Some(any_value::Value::StringValue(s)) => s.clone(),
                other => format!("{other:?}"),
            };
            (kv.key.as_str(), v)
        })
        .collect();
    assert_eq!(resource["service.name"], "shop");
    assert!(resource.contains_key("service.version"), "{resource:?}");
    assert_eq!(rm.scope_metrics[0].scope.as_ref().unwrap().name, "k6");

    let by_name = last_by_name(&rx);
    let kinds: BTreeMap<&str, (String, String, usize)> = by_name
        .values()
        .map(|m| {
            let (_, kind, unit, points) = shape(m);
            (m.name.as_str(), (kind, unit, points.len()))
        })
        .collect();
    let expect = |name: &str, kind: &str, unit: &str| {
        assert_eq!(
            kinds.get(name),
            Some(&(kind.to_string(), unit.to_string(), 1)),
            "{name} in {kinds:?}"
        );
    };
    expect("http_reqs", "sum", "");
    expect("http_req_duration", "histogram", "ms");
    expect("http_req_failed.total", "int-sum", "");
    expect("checks.occurred", "int-sum", "");
    expect("checks.total", "int-sum", "");
    expect("my_counter", "sum", "");
    expect("my_gauge", "gauge", "");
    expect("my_rate.total", "int-sum", "");
    expect("my_trend", "histogram", "ms");
    expect("data_sent", "sum", "By");
    expect("iterations", "sum", "");
    // Rates that never saw a non-zero value have no `.occurred` metric, as in k6.
    assert!(
        !kinds.contains_key("my_rate.occurred") && !kinds.contains_key("http_req_failed.occurred")
    );
    // rk6's own metrics stay out without --rk6-metrics.
    assert!(!kinds.contains_key("iteration_start_delay"), "{kinds:?}");

    // Flushed before exit: the final export equals the summary (k6 loses its last second).
    assert_eq!(
        sum_total(&by_name["http_reqs"]),
        count(&export, "http_reqs")
    );
    assert_eq!(
        sum_total(&by_name["iterations"]),
        count(&export, "iterations")
    );
    let iterations = count(&export, "iterations");
    assert!(iterations >= 2.0, "{iterations}");
    assert_eq!(sum_total(&by_name["my_counter"]), 2.0 * iterations);
    assert_eq!(sum_total(&by_name["checks.total"]), iterations);
    assert_eq!(sum_total(&by_name["checks.occurred"]), iterations);
    // The summary export has no Trend counts: one duration per request.
    assert_eq!(
        histogram_count(&by_name["http_req_duration"]) as f64,
        count(&export, "http_reqs")
    );
    assert_eq!(histogram_count(&by_name["my_trend"]) as f64, iterations);
    assert_eq!(
        sum_total(&by_name["data_received"]),
        count(&export, "data_received")
    );
    let (_, _, _, points) = shape(&by_name["http_reqs"]);
    assert_eq!(
        points[0],
        [
            "expected_response",
            "method",
            "name",
            "proto",
            "scenario",
            "status",
            "testid",
            "url"
        ]
    );
    let (_, _, _, points) = shape(&by_name["my_counter"]);
    assert_eq!(points[0], ["k", "scenario", "testid"]);
}

#[test]
fn http_export_with_prefix_and_rk6_metrics() {
    let srv = TestServer::start();
    let rx = Receiver::start(Duration::from_secs(60));
    let dir = Dir::new("otel-http");
    dir.write("script.js", SCRIPT);
    let url = srv.url("/get");
    let endpoint = rx.http.to_string();
    let (run, export) = run_file(
        &dir,
        "script.js",
        &["-o", "experimental-opentelemetry", "--rk6-metrics"],
        &[
            ("URL", &url),
            ("K6_OTEL_EXPORTER_TYPE", "http"),
            ("K6_OTEL_HTTP_EXPORTER_ENDPOINT", &endpoint),
            ("K6_OTEL_HTTP_EXPORTER_INSECURE", "true"),
            ("K6_OTEL_HTTP_EXPORTER_URL_PATH", "/otlp/v1/metrics"),
            ("K6_OTEL_METRIC_PREFIX", "k6_"),
        ],
    );
    run.assert_code(0);
    let exports = rx.exports();
    let last = exports.last().expect("the final export arrived");
    assert_eq!(last.transport, "http");
    assert_eq!(last.path, "/otlp/v1/metrics");
    assert_eq!(last.headers["content-type"], "application/x-protobuf");
    let by_name = last_by_name(&rx);
    assert_eq!(
        sum_total(&by_name["k6_http_reqs"]),
        count(&export, "http_reqs")
    );
    assert!(
        by_name.keys().all(|n| n.starts_with("k6_")),
        "{:?}",
        by_name.keys()
    );
    assert!(by_name.contains_key("k6_iteration_start_delay"));
}

#[test]
fn tls_by_default_for_both_exporters() {
    let rx = Receiver::start_tls(Duration::from_secs(60));
    let dir = Dir::new("otel-tls");
    dir.write(
        "script.js",
        "export const options = { iterations: 2 };\nexport default function () {}\n",
    );
    let grpc = format!("localhost:{}", rx.grpc.port());
    let http = format!("localhost:{}", rx.http.port());
    for env in [
        [
            ("K6_OTEL_EXPORTER_TYPE", "grpc"),
            ("K6_OTEL_GRPC_EXPORTER_ENDPOINT", grpc.as_str()),
        ],
        [
            ("K6_OTEL_EXPORTER_TYPE", "http"),
            ("K6_OTEL_HTTP_EXPORTER_ENDPOINT", http.as_str()),
        ],
    ] {
        let mut env = env.to_vec();
        env.push(("K6_OTEL_TLS_INSECURE_SKIP_VERIFY", "true"));
        let (run, _) = run_file(
            &dir,
            "script.js",
            &["-o", "experimental-opentelemetry"],
            &env,
        );
        run.assert_code(0);
        assert!(!run.stderr.contains("Failed to export"), "{}", run.stderr);
    }
    // K6_OTEL_TLS_CERTIFICATE: the receiver's certificate as the only root.
    let ca = dir.write("ca.pem", &rx.cert_pem);
    let env = [
        ("K6_OTEL_GRPC_EXPORTER_ENDPOINT", grpc.as_str()),
        ("K6_OTEL_TLS_CERTIFICATE", ca.to_str().unwrap()),
    ];
    let (run, _) = run_file(
        &dir,
        "script.js",
        &["-o", "experimental-opentelemetry"],
        &env,
    );
    run.assert_code(0);
    assert!(!run.stderr.contains("Failed to export"), "{}", run.stderr);
    let exports = rx.exports();
    let transports: Vec<&str> = exports.iter().map(|e| e.transport).collect();
    assert_eq!(transports, ["grpc", "http", "grpc"]);
    // Without skipping verification the self-signed certificate is refused, and said so.
    let env = [("K6_OTEL_GRPC_EXPORTER_ENDPOINT", grpc.as_str())];
    let (run, _) = run_file(
        &dir,
        "script.js",
        &["-o", "experimental-opentelemetry"],
        &env,
    );
    run.assert_code(0);
    assert!(
        run.stderr.contains("error=\"x509: unknown authority\""),
        "{}",
        run.stderr
    );
}

#[test]
fn client_certificate_is_presented() {
    use crate::tls_options::server::{Ca, Setup, TlsServer};
    let ca = Ca::new("otel-ca");
    let leaf = ca.leaf("localhost", &["localhost"]);
    let client = ca.leaf("rk6-client", &[]);
    let mut setup = Setup::new(&leaf);
    setup.client_ca = Some(&ca);
    setup.known_clients = vec![client.clone()];
    // An HTTPS server that answers 200 to any request and logs each handshake.
    let srv = TlsServer::start(setup);
    let dir = Dir::new("otel-mtls");
    dir.write(
        "script.js",
        "export const options = { iterations: 1 };\nexport default function () {}\n",
    );
    let ca_pem = dir.write("ca.pem", &ca.pem());
    let cert = dir.write("client.pem", &client.cert_pem);
    let key = dir.write("client-key.pem", &client.key_pem);
    let endpoint = format!("localhost:{}", srv.addr.port());
    let (run, _) = run_file(
        &dir,
        "script.js",
        &["-o", "experimental-opentelemetry"],
        &[
            ("K6_OTEL_EXPORTER_TYPE", "http"),
            ("K6_OTEL_HTTP_EXPORTER_ENDPOINT", &endpoint),
            ("K6_OTEL_TLS_CERTIFICATE", ca_pem.to_str().unwrap()),
            ("K6_OTEL_TLS_CLIENT_CERTIFICATE", cert.to_str().unwrap()),
            ("K6_OTEL_TLS_CLIENT_KEY", key.to_str().unwrap()),
        ],
    );
    run.assert_code(0);
    assert!(!run.stderr.contains("Failed to export"), "{}", run.stderr);
    let shakes = srv.handshakes();
    assert!(!shakes.is_empty(), "no connection");
    assert!(shakes.iter().all(|h| h.client == 0), "{shakes:?}");
}

#[test]
fn collector_down_warns_and_the_run_goes_on() {
    let dir = Dir::new("otel-down");
    dir.write(
        "script.js",
        "export const options = { iterations: 2 };\nexport default function () {}\n",
    );
    let endpoint = closed_addr().to_string();
    let (run, export) = run_file(
        &dir,
        "script.js",
        &["-o", "experimental-opentelemetry"],
        &[
            ("K6_OTEL_GRPC_EXPORTER_ENDPOINT", &endpoint),
            ("K6_OTEL_GRPC_EXPORTER_INSECURE", "true"),
        ],
    );
    run.assert_code(0);
    assert_eq!(count(&export, "iterations"), 2.0);
    assert!(
        run.stderr.contains("level=warning msg=\"Failed to export metrics to the OpenTelemetry collector\" error=\"dial: connection refused\""),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("1 of 1 exports failed"),
        "{}",
        run.stderr
    );
}

#[test]
fn bad_settings_exit_as_k6_does() {
    let dir = Dir::new("otel-bad");
    dir.write("script.js", "export default function () {}\n");
    for (env, code, text) in [
        (
            ("K6_OTEL_EXPORTER_TYPE", "foo"),
            104,
            "error validating OpenTelemetry output config: unsupported exporter type \\\"foo\\\"",
        ),
        (
            ("K6_OTEL_GRPC_EXPORTER_INSECURE", "yes"),
            255,
            "invalid K6_OTEL_GRPC_EXPORTER_INSECURE",
        ),
        (
            ("K6_OTEL_HEADERS", "novalue"),
            255,
            "invalid header \\\"novalue\\\", expected format key=value",
        ),
    ] {
        let (run, _) = run_file(
            &dir,
            "script.js",
            &["-o", "experimental-opentelemetry"],
            &[env],
        );
        run.assert_code(code);
        assert!(run.stderr.contains(text), "{env:?}: {}", run.stderr);
    }
}

/// A Rate's points as (sorted attribute `key=value`s, count), sorted.
fn rate_points(m: &opentelemetry_proto::tonic::metrics::v1::Metric) -> Vec<(Vec<String>, i64)> {
    use opentelemetry_proto::tonic::metrics::v1::{metric, number_data_point::Value};
    let Some(metric::Data::Sum(sum)) = &m.data else {
        panic!("{} is not a sum", m.name)
    };
    let mut points: Vec<(Vec<String>, i64)> = sum
        .data_points
        .iter()
        .map(|p| {
            let mut attrs: Vec<String> = p
                .attributes
                .iter()
                .map(
                    |kv| match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
                        Some(any_value::Value::StringValue(v)) => format!("{}={v}", kv.key),
                        other => panic!("{other:?}"),
                    },
                )
                .collect();
            attrs.sort();
            let Some(Value::AsInt(n)) = p.value else {
                panic!("{p:?}")
            };
            (attrs, n)
        })
        .collect();
    points.sort();
    points
}

/// k6 v1.4.0 release notes, #5334 (the stable name; the experimental one warns) and
/// #5333 (a Rate as one counter `<name>.total` with `condition` = `nonzero`/`zero`, and
/// `K6_OTEL_SINGLE_COUNTER_FOR_RATE`, removed in v2.0.0, #5830). rk6: the stable name
/// counts once, the experimental name keeps k6 1.1's pair, the switch overrides either.
#[test]
fn the_stable_name_sends_a_rate_as_one_counter() {
    let dir = Dir::new("otel-rate");
    dir.write(
        "script.js",
        r#"
import { Rate } from 'k6/metrics';
const r = new Rate('my_rate');
export const options = { iterations: 3 };
export default function () {
  r.add(1, { k: 'v' });
  r.add(0, { k: 'v' });
  r.add(0);
}
"#,
    );
    let points = |attrs: &[&[&str]], counts: &[i64]| -> Vec<(Vec<String>, i64)> {
        attrs
            .iter()
            .zip(counts)
            .map(|(a, n)| (a.iter().map(|s| s.to_string()).collect(), *n))
            .collect()
    };
    for (output, switch, single) in [
        ("opentelemetry", None, true),
        ("experimental-opentelemetry", None, false),
        ("experimental-opentelemetry", Some("true"), true),
        ("opentelemetry", Some("false"), false),
    ] {
        let rx = Receiver::start(Duration::from_secs(60));
        let endpoint = rx.grpc.to_string();
        let mut env = vec![
            ("K6_OTEL_GRPC_EXPORTER_ENDPOINT", endpoint.as_str()),
            ("K6_OTEL_GRPC_EXPORTER_INSECURE", "true"),
        ];
        if let Some(v) = switch {
            env.push(("K6_OTEL_SINGLE_COUNTER_FOR_RATE", v));
        }
        let (run, _) = run_file(&dir, "script.js", &["-o", output], &env);
        run.assert_code(0);
        let case = format!("{output} {switch:?}");
        assert_eq!(
            run.stderr.contains(GRADUATED),
            output == "experimental-opentelemetry",
            "{case}: {}",
            run.stderr
        );
        assert_eq!(
            run.stderr
                .contains("K6_OTEL_SINGLE_COUNTER_FOR_RATE is deprecated and k6 2.0 removed it"),
            switch.is_some(),
            "{case}: {}",
            run.stderr
        );
        let by_name = last_by_name(&rx);
        if single {
            assert!(!by_name.contains_key("my_rate.occurred"), "{case}");
            assert!(!by_name.contains_key("checks.occurred"), "{case}");
            assert_eq!(
                rate_points(&by_name["my_rate.total"]),
                points(
                    &[
                        &["condition=nonzero", "k=v", "scenario=default"],
                        &["condition=zero", "k=v", "scenario=default"],
                        &["condition=zero", "scenario=default"],
                    ],
                    &[3, 3, 3]
                ),
                "{case}"
            );
            let (_, kind, unit, _) = shape(&by_name["my_rate.total"]);
            assert_eq!((kind.as_str(), unit.as_str()), ("int-sum", ""), "{case}");
        } else {
            assert_eq!(
                rate_points(&by_name["my_rate.occurred"]),
                points(&[&["k=v", "scenario=default"]], &[3]),
                "{case}"
            );
            assert_eq!(
                rate_points(&by_name["my_rate.total"]),
                points(
                    &[&["k=v", "scenario=default"], &["scenario=default"]],
                    &[6, 3]
                ),
                "{case}"
            );
        }
    }
}

/// k6 v1.4.0 release notes, #5164: `K6_OTEL_EXPORTER_PROTOCOL=http/protobuf`, over the
/// 1.x `K6_OTEL_EXPORTER_TYPE`; k6 v2.1.0 release notes, #5997 (and v2.2.0, #6145):
/// `K6_OTEL_HTTP_EXPORTER_USERNAME`/`_PASSWORD` give basic auth on both exporters, also
/// without `K6_OTEL_HEADERS`.
#[test]
fn exporter_protocol_and_basic_auth() {
    let dir = Dir::new("otel-protocol");
    dir.write(
        "script.js",
        "export const options = { iterations: 2 };\nexport default function () {}\n",
    );
    let script = dir.path("script.js");
    for protocol in ["http/protobuf", "grpc"] {
        let rx = Receiver::start(Duration::from_secs(60));
        let (http, grpc) = (rx.http.to_string(), rx.grpc.to_string());
        let run = rk6_env(
            &["run", "-o", "opentelemetry", script.to_str().unwrap()],
            &dir.0,
            &[
                ("K6_OTEL_EXPORTER_PROTOCOL", protocol),
                // Ignored beside a protocol (k6 2.0 ignores it always).
                ("K6_OTEL_EXPORTER_TYPE", "bogus"),
                ("K6_OTEL_HTTP_EXPORTER_ENDPOINT", http.as_str()),
                ("K6_OTEL_HTTP_EXPORTER_INSECURE", "true"),
                ("K6_OTEL_GRPC_EXPORTER_ENDPOINT", grpc.as_str()),
                ("K6_OTEL_GRPC_EXPORTER_INSECURE", "true"),
                ("K6_OTEL_HTTP_EXPORTER_USERNAME", "alice"),
                ("K6_OTEL_HTTP_EXPORTER_PASSWORD", "s3cret"),
            ],
        );
        run.assert_code(0);
        assert!(!run.stderr.contains("level=warning"), "{}", run.stderr);
        let banner = if protocol == "grpc" {
            format!("output: opentelemetry (grpc (insecure), {grpc})")
        } else {
            format!("output: opentelemetry (http/protobuf, http://{http}/v1/metrics)")
        };
        assert!(run.stdout.contains(&banner), "{banner}\n{}", run.stdout);
        let exports = rx.exports();
        let last = exports.last().expect("the final export arrived");
        let transport = if protocol == "grpc" { "grpc" } else { "http" };
        assert_eq!(last.transport, transport);
        // base64("alice:s3cret")
        assert_eq!(last.headers["authorization"], "Basic YWxpY2U6czNjcmV0");
    }
    // The 1.x type still chooses when no protocol is given, with a deprecation line.
    let rx = Receiver::start(Duration::from_secs(60));
    let http = rx.http.to_string();
    let (run, _) = run_file(
        &dir,
        "script.js",
        &["-o", "opentelemetry"],
        &[
            ("K6_OTEL_EXPORTER_TYPE", "http"),
            ("K6_OTEL_HTTP_EXPORTER_ENDPOINT", &http),
            ("K6_OTEL_HTTP_EXPORTER_INSECURE", "true"),
            ("K6_OTEL_HEADERS", "Authorization=Bearer%20t"),
        ],
    );
    run.assert_code(0);
    assert!(
        run.stderr.contains("level=warning msg=\"K6_OTEL_EXPORTER_TYPE is deprecated and k6 2.0 removed it: use K6_OTEL_EXPORTER_PROTOCOL (grpc or http/protobuf)\""),
        "{}",
        run.stderr
    );
    let exports = rx.exports();
    let last = exports.last().expect("the final export arrived");
    assert_eq!(last.transport, "http");
    assert_eq!(last.headers["authorization"], "Bearer t");
}

/// k6 v1.4.0 release notes, #5164: a protocol other than `grpc` or `http/protobuf` fails
/// k6's validation (104); messages name the output as given (#5334).
#[test]
fn bad_exporter_protocol_exits_104() {
    let dir = Dir::new("otel-bad-protocol");
    dir.write("script.js", "export default function () {}\n");
    for output in ["opentelemetry", "experimental-opentelemetry"] {
        for (protocol, text) in [
            (
                "http",
                "unsupported exporter protocol \\\"http\\\", only \\\"grpc\\\" and \\\"http/protobuf\\\" are supported",
            ),
            (
                "grpc/protobuf",
                "unsupported exporter protocol \\\"grpc/protobuf\\\"",
            ),
        ] {
            let (run, _) = run_file(
                &dir,
                "script.js",
                &["-o", output],
                &[("K6_OTEL_EXPORTER_PROTOCOL", protocol)],
            );
            run.assert_code(104);
            let want = format!(
                "could not create the '{output}' output: error validating OpenTelemetry output config: {text}"
            );
            assert!(run.stderr.contains(&want), "{want}\n{}", run.stderr);
        }
    }
}

/// k6 v1.2.0 release notes: the exporter asks for TLS 1.3 (k6's code: in the TLS settings
/// it builds once a `K6_OTEL_TLS_*` variable is set). rk6 does so under the stable name;
/// the experimental name keeps k6 1.1's TLS 1.2.
#[test]
fn the_stable_name_asks_for_tls13_once_tls_is_configured() {
    use crate::tls_options::server::{Ca, Setup, TlsServer};
    let ca = Ca::new("otel-ca");
    let leaf = ca.leaf("localhost", &["localhost"]);
    let mut setup = Setup::new(&leaf);
    setup.versions = vec![&rustls::version::TLS12];
    let srv = TlsServer::start(setup);
    let dir = Dir::new("otel-tls13");
    dir.write(
        "script.js",
        "export const options = { iterations: 1 };\nexport default function () {}\n",
    );
    let ca_pem = dir.write("ca.pem", &ca.pem());
    let endpoint = format!("localhost:{}", srv.addr.port());
    let run = |output: &str| {
        run_file(
            &dir,
            "script.js",
            &["-o", output],
            &[
                ("K6_OTEL_EXPORTER_PROTOCOL", "http/protobuf"),
                ("K6_OTEL_HTTP_EXPORTER_ENDPOINT", &endpoint),
                ("K6_OTEL_TLS_CERTIFICATE", ca_pem.to_str().unwrap()),
            ],
        )
        .0
    };
    let old = run("experimental-opentelemetry");
    old.assert_code(0);
    assert!(!old.stderr.contains("Failed to export"), "{}", old.stderr);
    let shakes = srv.handshakes();
    assert!(
        !shakes.is_empty() && shakes.iter().all(|h| h.version == "TLSv1_2"),
        "{shakes:?}"
    );
    let stable = run("opentelemetry");
    stable.assert_code(0);
    assert!(
        stable.stderr.contains("level=warning msg=\"Failed to export metrics to the OpenTelemetry collector\" error=\"remote error: tls: protocol version not supported\""),
        "{}",
        stable.stderr
    );
    assert_eq!(srv.handshakes().len(), shakes.len(), "no TLS 1.2 handshake");
}
