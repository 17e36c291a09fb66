//! The scriptless wrk-style mode (`rk6 bench`), through the real binary.

use serde_json::Value;

use crate::support::TestServer;
use crate::{rk6, Dir, Run};

/// The request count of the `  N requests in Xs, ... read` line.
fn requests(run: &Run) -> u64 {
    run.stdout
        .lines()
        .find_map(|l| l.trim().split_once(" requests in "))
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or_else(|| panic!("no requests line\n--- stdout\n{}", run.stdout))
}

#[test]
fn bench_closed_loop_reports_distribution_status_codes_and_json() {
    let server = TestServer::start();
    let dir = Dir::new("bench-closed");
    let url = server.url("/get");
    let run = rk6(
        &[
            "bench",
            "-c",
            "4",
            "-d",
            "1s",
            "-H",
            "X-Test: yes",
            "--threshold",
            "p(99)<60000",
            "--json",
            "out.json",
            &url,
        ],
        &dir.0,
    );
    run.assert_code(0);
    let out = &run.stdout;
    assert!(out.contains(&format!("Running 1s test @ {url}")), "{out}");
    assert!(out.contains("  2 threads and 4 connections"), "{out}");
    for label in ["p50", "p75", "p90", "p99", "p99.9", "p99.99", "max"] {
        assert!(
            out.lines().any(|l| l.trim_start().starts_with(label)),
            "no {label} line\n{out}"
        );
    }
    assert!(out.contains("Requests/sec:"), "{out}");
    assert!(out.contains("Transfer/sec:"), "{out}");
    assert!(out.contains("✓ 'p(99)<60000'"), "{out}");
    let n = requests(&run);
    assert!(n > 0, "{out}");
    let statuses = out
        .lines()
        .find_map(|l| l.trim().strip_prefix("Status codes: "))
        .unwrap_or_else(|| panic!("no status line\n{out}"));
    assert_eq!(statuses, format!("200: {n}"), "only 200s expected\n{out}");
    assert!(!out.contains("Errors"), "{out}");

    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path("out.json")).unwrap()).unwrap();
    assert_eq!(json["requests"], n);
    assert_eq!(json["status_codes"]["200"], n);
    assert_eq!(json["connections"], 4);
    assert_eq!(json["thresholds_ok"], true);
    assert!(json["latency_ms"]["p99"].as_f64().unwrap() > 0.0, "{json}");
    assert!(json["bytes_received"].as_u64().unwrap() > 0, "{json}");
}

#[test]
fn bench_constant_rate_sends_the_planned_number_of_requests() {
    let server = TestServer::start();
    let dir = Dir::new("bench-rate");
    let run = rk6(
        &["bench", "--rate", "100", "-d", "1s", &server.url("/get")],
        &dir.0,
    );
    run.assert_code(0);
    let n = requests(&run);
    assert!((90..=110).contains(&n), "{n} requests\n{}", run.stdout);
    assert!(
        run.stdout.contains("constant rate 100 requests/sec"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("corrected"), "{}", run.stdout);
    assert!(run.stdout.contains("service"), "{}", run.stdout);
}

#[test]
fn bench_failing_threshold_exits_99() {
    let server = TestServer::start();
    let dir = Dir::new("bench-threshold");
    let run = rk6(
        &[
            "bench",
            "-c",
            "2",
            "-d",
            "300ms",
            "--threshold",
            "p(99)<0.000001",
            &server.url("/get"),
        ],
        &dir.0,
    );
    run.assert_code(99);
    assert!(run.stdout.contains("✗ 'p(99)<0.000001'"), "{}", run.stdout);
    assert!(run.stderr.contains("have been crossed"), "{}", run.stderr);
}

#[test]
fn bench_refused_port_reports_error_code_1212() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let dir = Dir::new("bench-refused");
    let run = rk6(
        &[
            "bench",
            "-c",
            "2",
            "-d",
            "300ms",
            &format!("http://127.0.0.1:{port}/"),
        ],
        &dir.0,
    );
    run.assert_code(0);
    assert!(
        run.stdout.contains("Errors (k6 error codes):"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .lines()
            .any(|l| l.trim_start().starts_with("1212 ")),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("Latency: no responses"),
        "{}",
        run.stdout
    );
}

#[test]
fn bench_bad_flags_exit_104() {
    let dir = Dir::new("bench-flags");
    let url = "http://127.0.0.1:1/";
    for args in [
        vec!["bench", "--no-such-flag", url],
        vec!["bench", "-d", "soon", url],
        vec!["bench", "-c", "0", url],
        vec!["bench", "--rate", "0", url],
        vec!["bench", "-H", "no colon", url],
        vec!["bench", "--threshold", "rate<0.1", url],
        vec!["bench", "ftp://127.0.0.1/"],
        vec!["bench"],
    ] {
        let run = rk6(&args, &dir.0);
        assert_eq!(run.code, 104, "{args:?}\n{}\n{}", run.stdout, run.stderr);
        assert!(!run.stdout.contains("Running"), "{args:?} started a test");
    }
}
