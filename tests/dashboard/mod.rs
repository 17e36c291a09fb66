//! The live web dashboard (`K6_WEB_DASHBOARD=true`): k6's `/events` stream read while the
//! test runs, its endpoints, a busy port, and rk6's live page in headless Chromium.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::report::{chromium, run_chromium};
use crate::support::{free_port, TestServer};
use crate::{count, rk6_env, Dir};

/// Two VUs for `secs` seconds: a GET in a group with a check, and a 404.
fn script(srv: &TestServer, secs: u32) -> String {
    format!(
        r#"
import http from 'k6/http';
import {{ check, group, sleep }} from 'k6';
export const options = {{
  vus: 2,
  duration: '{secs}s',
  thresholds: {{ http_req_duration: ['p(95)<10000'] }},
}};
export default function () {{
  group('shop', () => {{
    const res = http.get('{get}');
    check(res, {{ 'status is 200': (r) => r.status === 200 }});
  }});
  http.get('{missing}');
  sleep(0.05);
}}
"#,
        get = srv.url("/get"),
        missing = srv.url("/status/404"),
    )
}

/// rk6 running in the background with the dashboard on `port`.
struct Running {
    child: Child,
    port: u16,
}

impl Running {
    fn start(dir: &Dir, args: &[&str], env: &[(&str, &str)], port: u16) -> Running {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_rk6"));
        cmd.args(args)
            .current_dir(&dir.0)
            .env("NO_COLOR", "1")
            .env("K6_WEB_DASHBOARD", "true")
            .env("K6_WEB_DASHBOARD_PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("start rk6");
        // The port is bound before the test starts; wait for it.
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Some(status) = child.try_wait().unwrap() {
                let out = child.wait_with_output().unwrap();
                panic!(
                    "rk6 ended ({status}) before serving:\n{}\n{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            assert!(Instant::now() < deadline, "the dashboard never listened");
            std::thread::sleep(Duration::from_millis(20));
        }
        Running { child, port }
    }

    /// Waits for the exit: code, stdout, stderr.
    fn wait(self) -> (i32, String, String) {
        let out = self.child.wait_with_output().expect("rk6 output");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

/// A plain HTTP/1.0 GET (so the body is not chunked), read until the connection closes,
/// `until` appears, or 30 s pass.
fn get(port: u16, path: &str, until: Option<&str>) -> (String, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect to the dashboard");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n").unwrap();
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let n = s.read(&mut chunk).unwrap_or(0);
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(u) = until {
            if String::from_utf8_lossy(&buf).contains(u) {
                break;
            }
        }
        assert!(Instant::now() < deadline, "no end to {path}");
    }
    let text = String::from_utf8(buf).expect("UTF-8 response");
    let (head, body) = text.split_once("\r\n\r\n").expect("a header block");
    (head.to_ascii_lowercase(), body.to_string())
}

/// `(event, data)` pairs of an event-stream body.
fn events(body: &str) -> Vec<(String, String)> {
    body.split("\n\n")
        .filter(|b| !b.trim().is_empty())
        .map(|block| {
            let field = |name: &str| {
                block
                    .lines()
                    .find_map(|l| l.strip_prefix(name))
                    .unwrap_or("")
                    .to_string()
            };
            (field("event: "), field("data: "))
        })
        .collect()
}

#[test]
fn events_stream_in_k6s_layout_while_the_test_runs() {
    let srv = TestServer::start();
    let dir = Dir::new("dash-events");
    let path = dir.write("script.js", &script(&srv, 3));
    let port = free_port();
    let export = dir.path("summary.json");
    let run = Running::start(
        &dir,
        &[
            "run",
            "--summary-export",
            export.to_str().unwrap(),
            path.to_str().unwrap(),
        ],
        &[("K6_WEB_DASHBOARD_PERIOD", "500ms")],
        port,
    );

    // k6's redirect to its UI, and rk6's page and report while the test runs.
    let (head, _) = get(port, "/", None);
    assert!(
        head.starts_with("http/1.0 307") || head.starts_with("http/1.1 307"),
        "{head}"
    );
    assert!(head.contains("location: /ui?endpoint=/"), "{head}");
    let (head, _) = get(port, "/ui?endpoint=/", None);
    assert!(
        head.contains(" 301 ") && head.contains("location: /ui/?endpoint=/"),
        "{head}"
    );
    let (head, page) = get(port, "/ui/?endpoint=/", None);
    assert!(head.contains("content-type: text/html"), "{head}");
    assert!(page.contains("<div id=\"app\" data-live=\"events\">"));
    let (_, report) = get(port, "/report", None);
    assert!(report.contains("id=\"report-data\"") && !report.contains("data-live=\"events\">"));
    let (head, _) = get(port, "/nothing", None);
    assert!(head.contains(" 404 "), "{head}");

    let (head, body) = get(
        port,
        "/events",
        Some("event: stop\nretry: 9007199254740991\n\n"),
    );
    for h in [
        "content-type: text/event-stream",
        "cache-control: no-cache",
        "access-control-allow-origin: *",
    ] {
        assert!(head.contains(h), "{h} in\n{head}");
    }
    let (code, stdout, stderr) = run.wait();
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stdout.contains(&format!(" web dashboard: http://127.0.0.1:{port}\n")),
        "{stdout}"
    );
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();

    let evs = events(&body);
    let names: Vec<&str> = evs.iter().map(|(e, _)| e.as_str()).collect();
    assert_eq!(
        &names[..4],
        &["config", "param", "metric", "start"],
        "{names:?}"
    );
    assert_eq!(names.last(), Some(&"stop"));
    assert_eq!(
        names[names.len() - 2],
        "cumulative",
        "the last period has no snapshot"
    );
    let param: Value = serde_json::from_str(&evs[1].1).unwrap();
    assert_eq!(param["period"], 500);
    assert_eq!(param["endOffset"], 33000, "3 s plus the 30 s graceful stop");
    assert_eq!(param["scenarios"], serde_json::json!(["default"]));
    assert_eq!(param["aggregates"]["trend"][5], "p(95)");
    assert_eq!(param["thresholds"]["http_req_duration"][0], "p(95)<10000");
    assert!(param["scriptPath"]
        .as_str()
        .unwrap()
        .starts_with("file:///"));

    // Every array lists the metrics announced so far, sorted by name; each cumulative is
    // followed by a snapshot of the same rows, and counters only grow.
    let mut known: Vec<String> = Vec::new();
    let mut reqs = Vec::new();
    let mut snapshot_sum = 0.0;
    let mut rows_before = 0;
    for (i, (event, data)) in evs.iter().enumerate() {
        let v: Value = serde_json::from_str(data).unwrap_or(Value::Null);
        match event.as_str() {
            "metric" => {
                for (k, meta) in v.as_object().unwrap() {
                    assert!(meta["type"].is_string(), "{data}");
                    known.push(k.clone());
                }
                known.sort();
            }
            "cumulative" | "snapshot" | "start" | "stop" => {
                let rows = v.as_array().unwrap();
                if event == "start" || event == "stop" {
                    assert_eq!(rows.len(), 1, "only the clock: {data}");
                    continue;
                }
                assert_eq!(rows.len(), known.len(), "{event} #{i}: {known:?}\n{data}");
                let at = |name: &str| known.iter().position(|k| k == name).unwrap();
                let time = rows[at("time")][0].as_f64().unwrap();
                assert!(time > 1.6e12, "time is a Unix time in ms: {time}");
                if let Some(n) = known.iter().position(|k| k == "http_reqs") {
                    let entry = rows[n].as_array().unwrap();
                    if event == "cumulative" {
                        assert_eq!(entry.len(), 2, "count and rate: {data}");
                        reqs.push(entry[0].as_f64().unwrap());
                    } else {
                        snapshot_sum += entry.first().and_then(Value::as_f64).unwrap_or(0.0);
                        assert_eq!(
                            rows.len(),
                            rows_before,
                            "a snapshot has the cumulative's rows"
                        );
                    }
                }
                if event == "cumulative" {
                    rows_before = rows.len();
                    let trend = rows[at("http_req_duration")].as_array().unwrap();
                    if !trend.is_empty() {
                        assert_eq!(trend.len(), 7, "avg max med min p90 p95 p99");
                        let (max, min) = (trend[1].as_f64().unwrap(), trend[3].as_f64().unwrap());
                        assert!(max >= min);
                    }
                }
            }
            "config" | "param" => assert!(v.is_object(), "{data}"),
            other => assert_eq!(other, "threshold", "unexpected event {other}"),
        }
    }
    assert!(
        known.contains(&"checks{group:::shop}".to_string()),
        "{known:?}"
    );
    assert!(
        known.contains(&"http_reqs{group:::shop}".to_string()),
        "{known:?}"
    );
    let snapshots = names.iter().filter(|n| **n == "snapshot").count();
    assert!(snapshots >= 3, "3 s at 500 ms: {names:?}");
    assert!(reqs.windows(2).all(|w| w[0] <= w[1]), "{reqs:?}");
    assert!(
        reqs.first() < reqs.last(),
        "the count grew during the run: {reqs:?}"
    );
    let total = count(&summary, "http_reqs");
    assert_eq!(
        reqs.last(),
        Some(&total),
        "the last cumulative is the summary's count"
    );
    assert!(
        snapshot_sum <= total && snapshot_sum > 0.0,
        "{snapshot_sum} of {total}"
    );
}

#[test]
fn a_busy_port_fails_before_the_test_as_k6_does() {
    let dir = Dir::new("dash-busy");
    let path = dir.write(
        "s.js",
        "export default function () { console.log('iteration ran'); }\n",
    );
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port().to_string();
    let run = rk6_env(
        &["run", "--iterations", "1", path.to_str().unwrap()],
        &dir.0,
        &[
            ("K6_WEB_DASHBOARD", "true"),
            ("K6_WEB_DASHBOARD_PORT", &port),
        ],
    );
    // k6 1.1.0: `level=error msg="listen tcp 127.0.0.1:5665: bind: address already in
    // use"`, exit 255, the test not run.
    run.assert_code(255);
    assert!(
        run.stderr.contains(&format!(
            "listen tcp 127.0.0.1:{port}: bind: address already in use"
        )),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("iteration ran"), "{}", run.stderr);
    drop(busy);

    // `port=-1` turns the server off (k6's way for CI): the test runs, nothing listens.
    let run = rk6_env(
        &[
            "run",
            "-o",
            "web-dashboard=port=-1",
            "--iterations",
            "1",
            path.to_str().unwrap(),
        ],
        &dir.0,
        &[],
    );
    run.assert_code(0);
    assert!(run.stdout.contains(" web dashboard:\n"), "{}", run.stdout);
    let run = rk6_env(
        &[
            "run",
            "-q",
            "-o",
            "web-dashboard=port=x",
            path.to_str().unwrap(),
        ],
        &dir.0,
        &[],
    );
    run.assert_code(255);
    assert!(
        run.stderr.contains("strconv.Atoi: parsing") && run.stderr.contains("invalid syntax"),
        "{}",
        run.stderr
    );
}

/// The `Requests` card's number in a dumped page.
fn requests_card(dom: &str) -> f64 {
    let at = dom
        .find("<div class=\"label\">Requests</div>")
        .expect("requests card");
    let rest = &dom[at..];
    let start = rest.find("<div class=\"value\">").unwrap() + "<div class=\"value\">".len();
    let end = start + rest[start..].find('<').unwrap();
    rest[start..end]
        .parse()
        .unwrap_or_else(|_| panic!("number in {}", &rest[start..end]))
}

/// The JSON a page was served with.
fn embedded_data(page: &str) -> Value {
    let open = r#"<script type="application/json" id="report-data">"#;
    let start = page.find(open).expect("data element") + open.len();
    let end = start + page[start..].find("</script>").unwrap();
    serde_json::from_str(&page[start..end]).unwrap()
}

/// The request count in the JSON the page was served with.
fn embedded_requests(dom: &str) -> f64 {
    embedded_data(dom)["totals"]["http_reqs"].as_f64().unwrap()
}

#[test]
fn live_page_in_headless_chromium_shows_growing_numbers() {
    let Some(bin) = chromium() else { return };
    let srv = TestServer::start();
    let dir = Dir::new("dash-chromium");
    let path = dir.write("script.js", &script(&srv, 7));
    let port = free_port();
    let run = Running::start(&dir, &["run", "-q", path.to_str().unwrap()], &[], port);
    // Unwatched, the served copy is refreshed every 2 s: let it hold requests.
    std::thread::sleep(Duration::from_millis(2300));
    let url = format!("http://127.0.0.1:{}/", run.port);
    // Two browsers at once: a plain load draws the figures the page was served with; one
    // given virtual time follows the feed, each `report` event redrawing the page, so its
    // numbers grow past those it was served with.
    let following = {
        let (bin, profile, url) = (bin.clone(), dir.path("profile-2"), url.clone());
        std::thread::spawn(move || {
            run_chromium(
                &bin,
                &profile,
                &["--virtual-time-budget=5000", "--dump-dom", &url],
            )
        })
    };
    let first = run_chromium(&bin, &dir.path("profile-1"), &["--dump-dom", &url]);
    let first = &first[..first.find("<script").unwrap_or(first.len())];
    assert!(first.contains("data-rendered=\"true\""), "{first}");
    assert!(first.contains("● running"), "{first}");
    assert_eq!(
        first.matches("<svg class=\"chart-svg\"").count(),
        4,
        "{first}"
    );
    let a = requests_card(first);
    assert!(a > 0.0, "{first}");
    let second = following.join().expect("chromium thread");
    let served = embedded_requests(&second);
    let drawn_dom = &second[..second.find("<script").unwrap_or(second.len())];
    let updates: u32 = drawn_dom
        .split("data-updates=\"")
        .nth(1)
        .and_then(|r| r[..r.find('"')?].parse().ok())
        .unwrap_or_else(|| panic!("no live update:\n{drawn_dom}"));
    assert!(updates >= 2, "{updates} updates");
    let b = requests_card(drawn_dom);
    assert!(
        served > 0.0 && served < b,
        "served {served}, then drawn {b} (plain load {a})"
    );
    assert!(drawn_dom.contains("status is 200"), "live checks table");
    assert!(
        drawn_dom.contains("p(95)&lt;10000"),
        "live thresholds table"
    );
    let (code, stdout, stderr) = run.wait();
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    if let Ok(keep) = std::env::var("RK6_KEEP_DASHBOARD_DOM") {
        std::fs::write(keep, &second).unwrap();
    }
}

#[test]
fn the_server_stays_up_until_the_summary_is_out() {
    let dir = Dir::new("dash-linger");
    // handleSummary runs after the stream's `stop`; it takes a while here.
    let path = dir.write(
        "s.js",
        r#"
export const options = { iterations: 3, thresholds: { iterations: ['count>=3'] } };
export default function () {}
export function handleSummary() {
  const t = Date.now();
  while (Date.now() - t < 1500) {}
  return { stdout: 'summary done\n' };
}
"#,
    );
    let port = free_port();
    let run = Running::start(&dir, &["run", "-q", path.to_str().unwrap()], &[], port);
    let (_, body) = get(port, "/events", Some("event: stop\n"));
    assert!(body.contains("event: cumulative"), "{body}");
    // While the summary is being made, the report shows the end-of-test verdicts.
    let (head, report) = get(port, "/report", None);
    assert!(head.contains(" 200 "), "{head}");
    let data = embedded_data(&report);
    assert_eq!(data["live"], false);
    assert_eq!(data["totals"]["iterations"], 3.0);
    assert_eq!(data["summary"]["thresholds"][0]["ok"], true, "{data}");
    let (code, stdout, stderr) = run.wait();
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stdout.contains("summary done"), "{stdout}");
    // Then it is gone.
    assert!(TcpStream::connect(("127.0.0.1", port)).is_err());
}
