//! The scriptless wrk-style mode (`rk6 bench`), through the real binary.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::AsyncWriteExt;

use crate::support::{accept_loop, next_request_head, TestServer};
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
    let port = crate::support::free_port();
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

/// What a raw HTTP/1.1 test server saw.
#[derive(Default)]
struct Seen {
    conns: AtomicUsize,
    requests: AtomicUsize,
    /// The first request head received.
    first: Mutex<String>,
}

/// How a raw test server answers.
#[derive(Clone, Copy)]
struct Script {
    /// The whole response, written for every request.
    response: &'static [u8],
    /// Written in pieces of this many bytes (flushed one by one) to split the client's reads.
    piece: usize,
    /// Close the connection after this many responses, without saying so in the response.
    close_after: Option<usize>,
    /// Never answer (for timeouts).
    silent: bool,
}

impl Script {
    fn answer(response: &'static [u8]) -> Script {
        Script {
            response,
            piece: usize::MAX,
            close_after: None,
            silent: false,
        }
    }
}

/// A hand-written HTTP/1.1 server on 127.0.0.1 that answers every request head with
/// `script.response`; returns its base URL and what it saw.
fn raw_server(script: Script) -> (String, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let counters = Arc::clone(&seen);
    let addr = accept_loop(Duration::from_secs(30), move |mut stream| {
        let seen = Arc::clone(&counters);
        async move {
            seen.conns.fetch_add(1, Ordering::SeqCst);
            let _ = stream.set_nodelay(true);
            let mut pending = Vec::new();
            let mut answered = 0;
            while let Some(head) = next_request_head(&mut stream, &mut pending).await {
                if seen.requests.fetch_add(1, Ordering::SeqCst) == 0 {
                    *seen.first.lock().unwrap() = String::from_utf8_lossy(&head).into_owned();
                }
                if script.silent {
                    continue;
                }
                for piece in script
                    .response
                    .chunks(script.piece.min(script.response.len()))
                {
                    if stream.write_all(piece).await.is_err() {
                        return;
                    }
                    let _ = stream.flush().await;
                }
                answered += 1;
                if script.close_after == Some(answered) {
                    return;
                }
            }
        }
    });
    (format!("http://{addr}"), seen)
}

/// Runs `rk6 bench ARGS URL --json out.json` and returns the JSON result.
fn bench_json(name: &str, args: &[&str], url: &str) -> Value {
    let dir = Dir::new(name);
    let mut all = vec!["bench"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--json", "out.json", url]);
    let run = rk6(&all, &dir.0);
    run.assert_code(0);
    serde_json::from_str(&std::fs::read_to_string(dir.path("out.json")).unwrap())
        .unwrap_or_else(|e| panic!("{e}\n{}", run.stdout))
}

const KEEP_ALIVE: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";

#[test]
fn bench_keeps_one_connection_per_bench_connection() {
    let (base, seen) = raw_server(Script::answer(KEEP_ALIVE));
    let json = bench_json(
        "bench-keepalive",
        &[
            "-c",
            "3",
            "-d",
            "500ms",
            "-H",
            "X-Test: yes",
            "-m",
            "post",
            "-b",
            "abc",
        ],
        &format!("{base}/p?q=1"),
    );
    let n = json["responses"].as_u64().unwrap();
    assert!(n > 3, "{json}");
    assert_eq!(json["errors_total"], 0, "{json}");
    assert_eq!(json["status_codes"]["200"], n, "{json}");
    assert_eq!(seen.conns.load(Ordering::SeqCst), 3, "one connection each");
    // Requests cut off by the end of the test reach the server but are not counted.
    assert!(seen.requests.load(Ordering::SeqCst) as u64 >= n);
    assert_eq!(
        json["bytes_received"],
        n * KEEP_ALIVE.len() as u64,
        "{json}"
    );
    let first = seen.first.lock().unwrap().clone();
    let sent = json["bytes_sent"].as_u64().unwrap();
    assert_eq!(sent, n * (first.len() as u64 + 3), "{json}\n{first}");
    assert!(first.starts_with("POST /p?q=1 HTTP/1.1\r\n"), "{first}");
    let host = format!("Host: {}\r\n", base.trim_start_matches("http://"));
    for line in [host.as_str(), "X-Test: yes\r\n", "Content-Length: 3\r\n"] {
        assert!(first.contains(line), "{line:?} missing from\n{first}");
    }
    assert!(
        !first.to_ascii_lowercase().contains("user-agent"),
        "{first}"
    );
}

#[test]
fn bench_reconnects_after_connection_close_responses() {
    const CLOSE: &[u8] = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok";
    let (base, seen) = raw_server(Script {
        close_after: Some(1),
        ..Script::answer(CLOSE)
    });
    let json = bench_json("bench-close", &["-c", "2", "-d", "500ms"], &base);
    let n = json["responses"].as_u64().unwrap();
    assert!(n > 2, "{json}");
    assert_eq!(json["errors_total"], 0, "{json}");
    assert!(
        seen.conns.load(Ordering::SeqCst) as u64 >= n,
        "a connection per request"
    );
}

#[test]
fn bench_reads_chunked_bodies_split_across_reads() {
    const CHUNKED: &[u8] = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
        5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: yes\r\n\r\n";
    let (base, seen) = raw_server(Script {
        piece: 7,
        ..Script::answer(CHUNKED)
    });
    let json = bench_json("bench-chunked", &["-c", "2", "-d", "500ms"], &base);
    let n = json["responses"].as_u64().unwrap();
    assert!(n > 2, "{json}");
    assert_eq!(json["errors_total"], 0, "{json}");
    assert_eq!(json["bytes_received"], n * CHUNKED.len() as u64, "{json}");
    // The decoder found each body's end, so the connections stayed in use.
    assert_eq!(seen.conns.load(Ordering::SeqCst), 2);
}

#[test]
fn bench_replays_once_when_the_server_closes_idle_connections() {
    // Keep-alive by the headers, but the server hangs up after each answer: the next
    // request finds the connection closed and goes out again on a new one.
    let (base, seen) = raw_server(Script {
        close_after: Some(1),
        ..Script::answer(KEEP_ALIVE)
    });
    let json = bench_json("bench-idle-close", &["-c", "2", "-d", "500ms"], &base);
    let n = json["responses"].as_u64().unwrap();
    assert!(n > 2, "{json}");
    assert_eq!(json["errors_total"], 0, "{json}");
    assert!(seen.conns.load(Ordering::SeqCst) as u64 >= n);
}

#[test]
fn bench_times_out_silent_servers_and_reports_malformed_responses() {
    let (base, _) = raw_server(Script {
        silent: true,
        ..Script::answer(KEEP_ALIVE)
    });
    let json = bench_json(
        "bench-timeout",
        &["-c", "1", "-d", "1s", "--timeout", "200ms"],
        &base,
    );
    assert_eq!(json["responses"], 0, "{json}");
    let timeouts = json["errors"]["1050"]["count"].as_u64().unwrap_or(0);
    // 200 ms each within 1 s; the one the end of the test cuts off is not counted.
    assert!((2..=5).contains(&timeouts), "{json}");
    assert_eq!(json["errors"]["1050"]["message"], "request timeout");

    let (base, _) = raw_server(Script::answer(b"HTTP/1.1 abc OK\r\n\r\n"));
    let json = bench_json("bench-malformed", &["-c", "1", "-d", "300ms"], &base);
    assert_eq!(json["responses"], 0, "{json}");
    assert!(
        json["errors"]["1000"]["count"].as_u64().unwrap() > 0,
        "{json}"
    );
    assert_eq!(
        json["errors"]["1000"]["message"],
        "malformed HTTP status code \"abc\""
    );
}
