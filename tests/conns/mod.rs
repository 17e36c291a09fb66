//! `http_conns_opened`, rk6's counter of the TCP connections the VUs' HTTP clients
//! opened, and the summary's `http connections:` line: one connection for a kept-alive
//! VU, one per request without reuse, one per HTTP/2 origin however many streams, one more
//! for a replay on a fresh connection; kept out of k6's machine outputs unless asked.

use serde_json::Value;

use crate::http_concurrency::GateServer;
use crate::http_errors::servers::Servers;
use crate::parity::h2::H2Server;
use crate::{count, metric, rk6_env, run_export, Dir, Run};

fn script(base: &str, options: &str, body: &str) -> String {
    format!(
        "import http from 'k6/http';\nexport const options = {options};\n\
         const base = '{base}';\nexport default function () {{ {body} }}\n"
    )
}

/// The `http_conns_opened` points of an `-o json` file.
fn conn_points(dir: &Dir) -> Vec<Value> {
    std::fs::read_to_string(dir.path("out.json"))
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "Point" && v["metric"] == "http_conns_opened")
        .collect()
}

fn summary_line(run: &Run) -> &str {
    run.stdout
        .lines()
        .find(|l| l.trim_start().starts_with("http connections:"))
        .unwrap_or_else(|| panic!("no connections line\n{}", run.stdout))
        .trim()
}

#[test]
fn a_kept_alive_vu_opens_one_connection_for_all_its_requests() {
    let srv = GateServer::start(false);
    let dir = Dir::new("conns-keepalive");
    let s = script(
        &srv.base(),
        "{ iterations: 20 }",
        "http.get(`${base}/a`, { tags: { name: 'home' } });",
    );
    let (run, export) = run_export(&dir, &s, &["--rk6-metrics", "-o", "json=out.json"]);
    run.assert_code(0);
    assert_eq!(srv.conns(), 1);
    assert_eq!(count(&export, "http_conns_opened"), 1.0);
    assert_eq!(
        summary_line(&run),
        "http connections: 1 opened, 20 requests (20.0 per connection)"
    );
    // The line stands for the counter's row, in the HTTP block.
    assert!(!run.stdout.contains("http_conns_opened"), "{}", run.stdout);
    let http = run.stdout.find("    HTTP\n").unwrap();
    let line = run.stdout.find("http connections:").unwrap();
    assert!(line > http && line < run.stdout.find("EXECUTION").unwrap());

    // Tagged as the request that opened it.
    let points = conn_points(&dir);
    assert_eq!(points.len(), 1);
    let tags = &points[0]["data"]["tags"];
    assert_eq!(points[0]["data"]["value"], 1);
    assert_eq!(tags["scenario"], "default");
    assert_eq!(tags["proto"], "HTTP/1.1");
    assert_eq!(tags["name"], "home");
    assert_eq!(tags["url"], "home");
    assert_eq!(tags["method"], "GET");

    // Without --rk6-metrics, k6's outputs hold k6's metrics only; the summary still says it.
    let (run, export) = run_export(&dir, &s, &["-o", "json=out.json"]);
    run.assert_code(0);
    assert!(metric(&export, "http_conns_opened").is_null(), "{export}");
    assert!(conn_points(&dir).is_empty());
    assert!(summary_line(&run).starts_with("http connections: 1 opened"));
}

#[test]
fn without_connection_reuse_every_request_opens_one() {
    let srv = GateServer::start(false);
    let dir = Dir::new("conns-noreuse");
    let s = script(
        &srv.base(),
        "{ iterations: 10, noConnectionReuse: true }",
        "http.get(`${base}/a`);",
    );
    let (run, export) = run_export(&dir, &s, &["--rk6-metrics"]);
    run.assert_code(0);
    assert_eq!(srv.conns(), 10);
    assert_eq!(count(&export, "http_conns_opened"), 10.0);
    assert_eq!(count(&export, "http_reqs"), 10.0);
    assert_eq!(
        summary_line(&run),
        "http connections: 10 opened, 10 requests (1.0 per connection)"
    );
}

#[test]
fn http2_streams_share_one_connection() {
    let srv = GateServer::start(true);
    let dir = Dir::new("conns-h2");
    let s = script(
        &srv.base(),
        "{ iterations: 2, h2c: true, batchPerHost: 10 }",
        "http.get(`${base}/one`);\n\
         const reqs = [];\n\
         for (let i = 0; i < 9; i++) reqs.push(`${base}/m${i}?gate=9`);\n\
         http.batch(reqs);",
    );
    let (run, export) = run_export(&dir, &s, &["--rk6-metrics", "-o", "json=out.json"]);
    run.assert_code(0);
    assert_eq!(srv.conns(), 1);
    assert_eq!(count(&export, "http_conns_opened"), 1.0);
    assert_eq!(
        summary_line(&run),
        "http connections: 1 opened, 20 requests over HTTP/2 (20.0 streams per connection)"
    );
    assert_eq!(conn_points(&dir)[0]["data"]["tags"]["proto"], "HTTP/2.0");
}

#[test]
fn a_replay_on_a_fresh_connection_counts() {
    // The server answers once, then drops the kept-alive connection under the next GET,
    // which the client replays on a new one.
    let servers = Servers::faults();
    let dir = Dir::new("conns-replay");
    dir.write(
        "script.js",
        "import http from 'k6/http';\n\
         const P = JSON.parse(__ENV.PORTS);\n\
         export const options = { iterations: 1 };\n\
         export default function () {\n\
           const u = `http://127.0.0.1:${P.ka_close}/`;\n\
           console.log(`BODIES ${http.get(u).body} ${http.get(u).body}`);\n\
         }\n",
    );
    let export = dir.path("summary.json");
    let run = rk6_env(
        &[
            "run",
            "-q",
            "--rk6-metrics",
            "--summary-export",
            export.to_str().unwrap(),
            "script.js",
        ],
        &dir.0,
        &[("PORTS", &servers.ports_json())],
    );
    run.assert_code(0);
    assert!(run.stderr.contains("BODIES first second"), "{}", run.stderr);
    let export: Value = serde_json::from_str(&std::fs::read_to_string(export).unwrap()).unwrap();
    assert_eq!(count(&export, "http_reqs"), 2.0);
    assert_eq!(count(&export, "http_conns_opened"), 2.0);
    assert_eq!(
        summary_line(&run),
        "http connections: 2 opened, 2 requests (1.0 per connection)"
    );
}

#[test]
fn https_counts_one_tls_connection_per_vu() {
    let srv = H2Server::start();
    let dir = Dir::new("conns-https");
    // Two VUs: one connection each, negotiated by ALPN; a batch multiplexes on it.
    let s = script(
        &srv.base(),
        "{ vus: 2, iterations: 6, insecureSkipTLSVerify: true, batchPerHost: 5 }",
        "http.get(`${base}/hello`);\n\
         http.batch([1, 2, 3].map((i) => `${base}/hello?i=${i}`));",
    );
    let (run, export) = run_export(&dir, &s, &["--rk6-metrics", "-o", "json=out.json"]);
    run.assert_code(0);
    assert_eq!((srv.conns(), srv.h2_conns()), (2, 2));
    assert_eq!(count(&export, "http_conns_opened"), 2.0);
    assert_eq!(
        summary_line(&run),
        "http connections: 2 opened, 24 requests over HTTP/2 (12.0 streams per connection)"
    );
    for p in conn_points(&dir) {
        assert_eq!(p["data"]["tags"]["proto"], "HTTP/2.0");
        assert_eq!(p["data"]["tags"]["tls_version"], "tls1.3");
    }
}
