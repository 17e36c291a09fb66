//! `-o influxdb` against a real InfluxDB 1.x (Debian's `influxdb` package; CI installs it):
//! the points stored per metric must equal the end-of-test summary's counts, in the
//! measurements, tags and fields k6 1.1.0 writes (tests/parity/influxdb.rs compares them
//! with k6's own writes). A dead server must not stop the test.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::TestServer;
use crate::{count, metric, rk6_env, Dir, Run};

/// The influxd binary, or `None` when it is not installed (CI installs it and then
/// requires it).
/// The InfluxDB tests run one at a time: each starts an `influxd` on ports probed free
/// (HTTP, RPC, UDP) or points rk6 at a closed one, and side by side they took each other's
/// ports (a "closed" address answered by another test's server: `database not found`).
pub(crate) fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

pub(crate) fn influxd_bin() -> Option<String> {
    let candidates = [
        std::env::var("INFLUXD_BIN").ok(),
        Some("influxd".to_string()),
        Some("/usr/bin/influxd".to_string()),
    ];
    let found = candidates.into_iter().flatten().find(|bin| {
        Command::new(bin)
            .arg("version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if found.is_none() && std::env::var_os("CI").is_some() {
        panic!("influxd is required in CI for the InfluxDB output test (apt-get install influxdb)");
    }
    if found.is_none() {
        eprintln!("influxd not installed: skipping the InfluxDB output test");
    }
    found
}

/// An InfluxDB 1.x on 127.0.0.1 with its data in a test directory, killed on drop.
pub(crate) struct Influx {
    child: Child,
    port: u16,
    /// The UDP listener's port (writing to database `udp`), when started with one.
    udp: Option<u16>,
}

impl Influx {
    pub(crate) fn start(bin: &str, dir: &Dir) -> Influx {
        Influx::start_on(bin, dir, None, false)
    }

    /// [`Influx::start`] on `port` when given (then without retries on another port), with
    /// a UDP listener when `udp`.
    fn start_on(bin: &str, dir: &Dir, port: Option<u16>, udp: bool) -> Influx {
        // Another process may grab the free ports between probe and bind: try a few.
        let attempts = if port.is_some() { 1 } else { 3 };
        for attempt in 0..attempts {
            let port = port.unwrap_or_else(crate::support::free_port);
            let rpc = crate::support::free_port();
            let udp = udp.then(crate::support::free_port);
            let udp_section = udp.map_or(String::new(), |p| {
                format!("[[udp]]\n  enabled = true\n  bind-address = \"127.0.0.1:{p}\"\n  database = \"udp\"\n  batch-timeout = \"50ms\"\n")
            });
            let data = dir.path(&format!("influx-{attempt}"));
            // Only the HTTP API, on loopback; no usage reporting, no self-monitoring.
            let config = format!(
                r#"reporting-enabled = false
bind-address = "127.0.0.1:{rpc}"
[meta]
  dir = "{d}/meta"
[data]
  dir = "{d}/data"
  wal-dir = "{d}/wal"
  query-log-enabled = false
[monitor]
  store-enabled = false
[http]
  bind-address = "127.0.0.1:{port}"
  log-enabled = false
  pprof-enabled = false
{udp_section}[continuous_queries]
  enabled = false
[logging]
  level = "warn"
  suppress-logo = true
"#,
                d = data.display()
            );
            let config = dir.write(&format!("influxdb-{attempt}.conf"), &config);
            let log = std::fs::File::create(dir.path(&format!("influxd-{attempt}.log")))
                .expect("log file");
            let child = Command::new(bin)
                .arg("-config")
                .arg(&config)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .expect("start influxd");
            let mut influx = Influx { child, port, udp };
            let deadline = Instant::now() + Duration::from_secs(30);
            while Instant::now() < deadline {
                if influx.child.try_wait().ok().flatten().is_some() {
                    break;
                }
                if request(port, "GET", "/ping").is_some_and(|(status, _)| status == 204) {
                    return influx;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = influx.child.kill();
            let _ = influx.child.wait();
        }
        let log = std::fs::read_to_string(dir.path(&format!("influxd-{}.log", attempts - 1)))
            .unwrap_or_default();
        panic!("influxd did not become ready:\n{log}");
    }

    /// The `-o influxdb=` argument for database `db`.
    pub(crate) fn url(&self, db: &str) -> String {
        format!("http://127.0.0.1:{}/{db}", self.port)
    }

    /// The series of an InfluxQL query's first result.
    pub(crate) fn query(&self, db: &str, q: &str) -> Vec<Value> {
        let path = format!("/query?db={}&q={}", encode(db), encode(q));
        let (status, body) = request(self.port, "GET", &path).expect("query influxdb");
        assert_eq!(status, 200, "{q}: {body}");
        let v: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        assert!(v["results"][0]["error"].is_null(), "{q}: {body}");
        v["results"][0]["series"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// Points per measurement.
    pub(crate) fn counts(&self, db: &str) -> BTreeMap<String, u64> {
        self.per_measurement(db, r#"SELECT count("value") FROM /.*/"#, |s| {
            s["values"][0][1].as_u64().unwrap_or(0)
        })
    }

    /// The sum of `value` per measurement.
    pub(crate) fn sums(&self, db: &str) -> BTreeMap<String, f64> {
        self.per_measurement(db, r#"SELECT sum("value") FROM /.*/"#, |s| {
            s["values"][0][1].as_f64().unwrap_or(f64::NAN)
        })
    }

    /// Every series key (`measurement,tag=value,…`), sorted.
    pub(crate) fn series(&self, db: &str) -> Vec<String> {
        let mut out: Vec<String> = self
            .query(db, "SHOW SERIES")
            .iter()
            .flat_map(|s| s["values"].as_array().cloned().unwrap_or_default())
            .filter_map(|v| v[0].as_str().map(str::to_string))
            .collect();
        out.sort();
        out
    }

    /// `name:type` of every field, per measurement.
    pub(crate) fn fields(&self, db: &str) -> BTreeMap<String, Vec<String>> {
        self.per_measurement(db, "SHOW FIELD KEYS", |s| {
            s["values"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|v| {
                    format!(
                        "{}:{}",
                        v[0].as_str().unwrap_or(""),
                        v[1].as_str().unwrap_or("")
                    )
                })
                .collect()
        })
    }

    fn per_measurement<T>(
        &self,
        db: &str,
        q: &str,
        f: impl Fn(&Value) -> T,
    ) -> BTreeMap<String, T> {
        // What a query answers right after the writes can still change: ask until two
        // answers 300 ms apart agree (EXPERIMENT logs when they did not).
        let mut last = self.query(db, q);
        for _ in 0..10 {
            std::thread::sleep(std::time::Duration::from_millis(300));
            let now = self.query(db, q);
            if now == last {
                break;
            }
            eprintln!("EXPERIMENT: the answer changed");
            last = now;
        }
        last.iter()
            .map(|s| (s["name"].as_str().unwrap_or("").to_string(), f(s)))
            .collect()
    }
}

impl Drop for Influx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A plain HTTP/1.0 request to 127.0.0.1:`port`: status and body.
fn request(port: u16, method: &str, path: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(
        s,
        "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n"
    )
    .ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let status = text.split(' ').nth(1)?.parse().ok()?;
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    Some((status, body.to_string()))
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'.' | b'-' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A script with every kind of metric, a group, a check, a tagged custom metric, a named
/// request that fails and enough iterations (~1.2 s) for writes during the run and at its end.
pub(crate) fn script(base: &str) -> String {
    format!(
        r#"
import http from 'k6/http';
import {{ check, group, sleep }} from 'k6';
import {{ Counter, Gauge, Rate, Trend }} from 'k6/metrics';
const hits = new Counter('my_hits');
const level = new Gauge('my_level');
const ok = new Rate('my_ok');
const latency = new Trend('my_latency', true);
export const options = {{
  vus: 2, iterations: 12,
  summaryTrendStats: ['avg', 'min', 'max', 'count'],
}};
export default function () {{
  group('shop', () => {{
    const r = http.get('{base}/get');
    check(r, {{ 'is 200': (r) => r.status === 200 }});
  }});
  http.get('{base}/status/404', {{ tags: {{ name: 'missing page' }} }});
  hits.add(2, {{ kind: 'alpha beta' }});
  level.add(__VU);
  ok.add(true);
  latency.add(100);
  sleep(0.2);
}}
"#
    )
}

/// `rk6 run -q -o influxdb=URL --summary-export …`: the run and its export.
fn run_influx(dir: &Dir, script: &Path, url: &str, env: &[(&str, &str)]) -> (Run, Value) {
    run_in(&dir.0, script, url, env)
}

/// [`run_influx`] in the directory `cwd`.
fn run_in(cwd: &Path, script: &Path, url: &str, env: &[(&str, &str)]) -> (Run, Value) {
    let export = cwd.join("summary.json");
    let _ = std::fs::remove_file(&export);
    let run = rk6_env(
        &[
            "run",
            "-q",
            "--address",
            "127.0.0.1:0",
            "-o",
            &format!("influxdb={url}"),
            "--summary-export",
            export.to_str().unwrap(),
            script.to_str().unwrap(),
        ],
        cwd,
        env,
    );
    let export = std::fs::read_to_string(&export)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    (run, export)
}

/// The measurements, tag keys and field types k6 1.1.0 wrote for [`script`] (captured from
/// k6 against InfluxDB 1.6): tags only where set, `url` as a string field of HTTP metrics.
pub(crate) const K6_HTTP_TAGS: &str =
    "error_code,expected_response,group,method,name,proto,scenario,status";

#[test]
fn points_per_metric_equal_the_summary_in_a_real_influxdb() {
    let _serial = serial();
    let Some(bin) = influxd_bin() else {
        return;
    };
    let dir = Dir::new("influxdb");
    let influx = Influx::start(&bin, &dir);
    let srv = TestServer::start();
    let path = dir.write("script.js", &script(&srv.url("")));
    // The database does not exist yet: the output creates it, as k6 does.
    let (run, export) = run_influx(
        &dir,
        &path,
        &influx.url("rk6test"),
        &[("K6_INFLUXDB_PUSH_INTERVAL", "300ms")],
    );
    run.assert_code(0);
    assert!(
        !run.stderr.contains("InfluxDBv1"),
        "output errors: {}",
        run.stderr
    );
    let counts = influx.counts("rk6test");
    // What InfluxDB 1.6.7 holds can be a point or two short of what rk6 wrote when the suite
    // loads the machine (it never is when this test runs alone): the exact count of what rk6
    // writes is checked against a recording server in
    // `every_sample_is_written_as_one_point`; here every measurement is there, none over.
    assert_eq!(counts.len(), 21, "{counts:?}");
    for (m, n) in &counts {
        assert!(*n >= 1, "{m}: {counts:?}");
    }
    for m in [
        "http_reqs",
        "iterations",
        "http_req_duration",
        "group_duration",
        "my_latency",
    ] {
        assert!(counts[m] as f64 <= count(&export, m), "{m}: {counts:?}");
    }
    let sums = influx.sums("rk6test");
    assert!(sums["my_hits"] <= count(&export, "my_hits"), "{sums:?}");

    // k6's layout: tags from the sample (empty ones left out), `url` a string field.
    let series = influx.series("rk6test");
    let http_reqs: Vec<&String> = series
        .iter()
        .filter(|s| s.starts_with("http_reqs,"))
        .collect();
    let base = srv.url("");
    assert_eq!(
        http_reqs,
        [
            "http_reqs,error_code=1404,expected_response=false,method=GET,name=missing\\ page,proto=HTTP/1.1,scenario=default,status=404",
            &format!("http_reqs,expected_response=true,group=::shop,method=GET,name={base}/get,proto=HTTP/1.1,scenario=default,status=200"),
        ],
        "{series:?}"
    );
    assert!(series.contains(&"checks,check=is\\ 200,group=::shop,scenario=default".to_string()));
    assert!(series.contains(&"my_hits,kind=alpha\\ beta,scenario=default".to_string()));
    assert!(series.contains(&"vus".to_string()), "{series:?}");
    let fields = influx.fields("rk6test");
    assert_eq!(fields["http_req_duration"], ["url:string", "value:float"]);
    assert_eq!(fields["checks"], ["value:float"]);
    let tags = influx.query("rk6test", "SHOW TAG KEYS FROM http_req_waiting");
    let keys: Vec<&str> = tags[0]["values"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v[0].as_str())
        .collect();
    assert_eq!(keys.join(","), K6_HTTP_TAGS);

    // TAGS_AS_FIELDS moves `name` to a string field and leaves `url` a tag; `ms` precision
    // stores whole milliseconds.
    let (run, _) = run_influx(
        &dir,
        &path,
        &influx.url("moved"),
        &[
            ("K6_INFLUXDB_TAGS_AS_FIELDS", "name,status:int"),
            ("K6_INFLUXDB_PRECISION", "ms"),
        ],
    );
    run.assert_code(0);
    assert!(!run.stderr.contains("InfluxDBv1"), "{}", run.stderr);
    let fields = influx.fields("moved");
    assert_eq!(
        fields["http_reqs"],
        ["name:string", "status:integer", "value:float"]
    );
    // An integer field compares as a number. (At ms precision the two VUs' points of one
    // millisecond share a timestamp, and InfluxDB keeps one of them, as with k6.)
    let rows = influx.query("moved", "SELECT * FROM http_reqs WHERE status = 404");
    let row = &rows[0]["values"][0];
    assert!(row.as_array().unwrap().iter().any(|v| v == 404), "{rows:?}");
    let times = influx.query("moved", "SELECT value FROM iterations");
    let ns: Vec<i64> = times[0]["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let t = v[0].as_str().unwrap();
            // RFC 3339 with at most 3 fraction digits when stored at ms precision.
            let frac = t.split('.').nth(1).unwrap_or("Z");
            frac.trim_end_matches('Z').len() as i64
        })
        .collect();
    assert!(ns.iter().all(|&d| d <= 3), "{times:?}");
}

/// One point per sample, as the summary counted them: counters sum to its count, each Trend
/// and Rate has a point per sample; `counts`/`sums` per measurement.
fn assert_points_match_summary(
    counts: &BTreeMap<String, u64>,
    sums: &BTreeMap<String, f64>,
    export: &Value,
) {
    for m in [
        "http_reqs",
        "iterations",
        "data_sent",
        "data_received",
        "my_hits",
    ] {
        assert_eq!(sums[m], count(export, m), "{m}: {sums:?}");
    }
    assert_eq!(counts["http_reqs"], 24);
    assert_eq!(counts["iterations"], 12);
    for m in [
        "http_req_duration",
        "http_req_blocked",
        "http_req_connecting",
        "http_req_tls_handshaking",
        "http_req_sending",
        "http_req_waiting",
        "http_req_receiving",
        "iteration_duration",
        "group_duration",
        "my_latency",
    ] {
        assert_eq!(counts[m] as f64, count(export, m), "{m}: {counts:?}");
    }
    for m in ["checks", "http_req_failed", "my_ok"] {
        let rate = metric(export, m);
        let n = rate["passes"].as_f64().unwrap() + rate["fails"].as_f64().unwrap();
        assert_eq!(counts[m] as f64, n, "{m}");
    }
    assert_eq!(sums["http_req_failed"], 12.0);
    assert_eq!(counts["my_level"], 12);
    // vus and vus_max are sampled once a second.
    assert!(counts["vus"] >= 1 && counts["vus_max"] >= 1, "{counts:?}");
    assert_eq!(counts.len(), 21, "{counts:?}");
}

/// Every sample of the script is one line-protocol point in what rk6 writes, checked on
/// the wire (a recording server answering as InfluxDB 1.x does), exactly.
#[test]
fn every_sample_is_written_as_one_point() {
    let db = crate::support::recorder::Recorder::start(|seen| match seen.path() {
        "/write" => crate::support::recorder::Reply::new(204, "text/plain", ""),
        _ => crate::support::recorder::Reply::new(200, "application/json", r#"{"results":[{}]}"#),
    });
    let dir = Dir::new("influxdb-wire");
    let srv = TestServer::start();
    let path = dir.write("script.js", &script(&srv.url("")));
    let (run, export) = run_influx(
        &dir,
        &path,
        &db.url("/rk6test"),
        &[("K6_INFLUXDB_PUSH_INTERVAL", "300ms")],
    );
    run.assert_code(0);
    assert!(!run.stderr.contains("InfluxDBv1"), "{}", run.stderr);
    let (mut counts, mut sums) = (BTreeMap::new(), BTreeMap::new());
    for seen in db.seen().iter().filter(|s| s.path() == "/write") {
        for line in seen.text().lines().filter(|l| !l.is_empty()) {
            let measurement = line.split([',', ' ']).next().unwrap().to_string();
            let fields = line.rsplit_once(' ').unwrap().0;
            let value = fields
                .split([' ', ','])
                .find_map(|f| f.strip_prefix("value="))
                .unwrap_or_else(|| panic!("no value field: {line}"));
            let value: f64 = value.trim_end_matches('i').parse().unwrap();
            *counts.entry(measurement.clone()).or_insert(0u64) += 1;
            *sums.entry(measurement).or_insert(0.0) += value;
        }
    }
    assert_points_match_summary(&counts, &sums, &export);
}

#[test]
fn rk6s_own_metric_only_with_rk6_metrics() {
    let _serial = serial();
    let Some(bin) = influxd_bin() else {
        return;
    };
    let dir = Dir::new("influxdb-rk6-metrics");
    let influx = Influx::start(&bin, &dir);
    // An arrival-rate scenario: each iteration has an iteration_start_delay sample.
    let path = dir.write(
        "script.js",
        "export const options = { scenarios: { a: { executor: 'constant-arrival-rate', rate: 10, timeUnit: '1s', duration: '1s', preAllocatedVUs: 2 } } };\nexport default function () {}\n",
    );
    for (db, flag) in [("plain", None), ("own", Some("--rk6-metrics"))] {
        let mut args = vec!["run", "-q", "--address", "127.0.0.1:0"];
        args.extend(flag);
        let out = format!("influxdb={}", influx.url(db));
        args.extend(["-o", &out, path.to_str().unwrap()]);
        let run = rk6_env(&args, &dir.0, &[]);
        run.assert_code(0);
        let counts = influx.counts(db);
        assert!(counts["iterations"] >= 1, "{counts:?}");
        assert_eq!(
            counts.get("iteration_start_delay"),
            flag.map(|_| &counts["iterations"]),
            "{db}: {counts:?}"
        );
    }
}

#[test]
fn an_influxdb_that_comes_up_during_the_test_gets_the_rest() {
    let _serial = serial();
    let Some(bin) = influxd_bin() else {
        return;
    };
    let dir = Dir::new("influxdb-late");
    let srv = TestServer::start();
    let path = dir.write(
        "script.js",
        &format!(
            "import http from 'k6/http';\nimport {{ sleep }} from 'k6';\nexport const options = {{ vus: 1, duration: '2500ms' }};\nexport default function () {{ http.get('{}/get'); sleep(0.1); }}\n",
            srv.url("")
        ),
    );
    let port = crate::support::free_port();
    let url = format!("http://127.0.0.1:{port}/late");
    let rk6 = {
        let (cwd, path, url) = (dir.0.clone(), path.clone(), url.clone());
        std::thread::spawn(move || {
            run_in(&cwd, &path, &url, &[("K6_INFLUXDB_PUSH_INTERVAL", "200ms")])
        })
    };
    std::thread::sleep(Duration::from_millis(600));
    let influx = Influx::start_on(&bin, &dir, Some(port), false);
    let (run, export) = rk6.join().unwrap();
    run.assert_code(0);
    // The first writes found nobody; once the server is up the database is created and
    // the later points arrive.
    assert!(
        run.stderr.contains("dial: connection refused"),
        "{}",
        run.stderr
    );
    let stored = influx
        .counts("late")
        .get("iterations")
        .copied()
        .unwrap_or(0) as f64;
    let ran = count(&export, "iterations");
    assert!(
        stored > 0.0 && stored < ran,
        "{stored} of {ran}: {}",
        run.stderr
    );
    assert!(
        run.stderr.contains("points did not reach InfluxDB"),
        "{}",
        run.stderr
    );
}

#[test]
fn udp_writes_reach_the_udp_listener() {
    let _serial = serial();
    let Some(bin) = influxd_bin() else {
        return;
    };
    let dir = Dir::new("influxdb-udp");
    let influx = Influx::start_on(&bin, &dir, None, true);
    let srv = TestServer::start();
    let path = dir.write("script.js", &script(&srv.url("")));
    let url = format!("udp://127.0.0.1:{}", influx.udp.unwrap());
    // Small datagrams: several lines, and lines alone, per datagram.
    let (run, export) = run_influx(&dir, &path, &url, &[("K6_INFLUXDB_PAYLOAD_SIZE", "300")]);
    run.assert_code(0);
    assert!(!run.stderr.contains("InfluxDBv1"), "{}", run.stderr);
    // The listener writes in batches: wait for the last one.
    let deadline = Instant::now() + Duration::from_secs(10);
    let counts = loop {
        let counts = influx.counts("udp");
        if counts.get("iterations") == Some(&12) || Instant::now() > deadline {
            break counts;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(
        counts["http_reqs"] as f64,
        count(&export, "http_reqs"),
        "{counts:?}"
    );
    assert_eq!(counts["iterations"], 12, "{counts:?}");
    assert_eq!(counts["checks"], 12, "{counts:?}");
    assert_eq!(counts["my_latency"] as f64, count(&export, "my_latency"));
    assert_eq!(
        influx.fields("udp")["http_req_duration"],
        ["url:string", "value:float"]
    );
}

#[test]
fn a_dead_influxdb_does_not_stop_the_test() {
    let _serial = serial();
    let dir = Dir::new("influxdb-down");
    let srv = TestServer::start();
    let path = dir.write(
        "script.js",
        &format!(
            "import http from 'k6/http';\nexport const options = {{ vus: 1, iterations: 3 }};\nexport default function () {{ http.get('{}/get'); }}\n",
            srv.url("")
        ),
    );
    let addr = crate::support::closed_addr();
    let started = Instant::now();
    let (run, export) = run_influx(&dir, &path, &format!("http://{addr}/db"), &[]);
    // As k6: the test runs, the summary is printed, the exit code is the test's.
    run.assert_code(0);
    assert!(started.elapsed() < Duration::from_secs(15));
    assert_eq!(count(&export, "iterations"), 3.0);
    assert!(run.stdout.contains("iterations"), "{}", run.stdout);
    let errors: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("msg=\"Couldn't write stats\""))
        .collect();
    assert_eq!(
        errors.len(),
        1,
        "one line per kind of failure: {}",
        run.stderr
    );
    assert!(
        errors[0].contains(&format!(
            "error=\"Post \\\"http://{addr}/write?consistency=&db=db&precision=ns&rp=\\\": dial: connection refused\""
        )) && errors[0].contains("output=InfluxDBv1"),
        "{}",
        errors[0]
    );
    assert!(
        run.stderr.contains("level=warning msg=\"")
            && run
                .stderr
                .contains("points did not reach InfluxDB: 1 of 1 writes failed"),
        "{}",
        run.stderr
    );
}

#[test]
fn bad_influxdb_settings_end_the_run_as_k6() {
    let _serial = serial();
    let dir = Dir::new("influxdb-bad");
    let path = dir.write(
        "script.js",
        "export const options = { iterations: 1 };\nexport default function () {}\n",
    );
    let url = format!("http://{}/db", crate::support::closed_addr());
    for (arg, env, needle) in [
        (
            url.as_str(),
            ("K6_INFLUXDB_PUSH_INTERVAL", "abc"),
            "time: invalid duration \\\"abc\\\"",
        ),
        (
            url.as_str(),
            ("K6_INFLUXDB_PUSH_INTERVAL", "0"),
            "metric flush period should be positive but was 0s",
        ),
        (
            url.as_str(),
            ("K6_INFLUXDB_CONCURRENT_WRITES", "0"),
            "influxdb's ConcurrentWrites must be a positive number",
        ),
        (
            url.as_str(),
            ("K6_INFLUXDB_TAGS_AS_FIELDS", "vu:bad"),
            "an invalid type (bad) is specified for an InfluxDB field (vu)",
        ),
        (
            url.as_str(),
            ("K6_INFLUXDB_INSECURE", "1"),
            "K6_INFLUXDB_INSECURE",
        ),
        (
            "ftp://127.0.0.1:1/db",
            ("X", ""),
            "Unsupported protocol scheme: ftp",
        ),
        ("udp://127.0.0.1", ("X", ""), "missing port in address"),
        (
            "http://127.0.0.1:1/db?foo=1",
            ("X", ""),
            "unknown query parameter: foo",
        ),
    ] {
        let (run, _) = run_influx(&dir, &path, arg, &[env]);
        // k6's code for an output it cannot create.
        run.assert_code(255);
        assert!(
            run.stderr
                .contains("could not create the 'influxdb' output: ")
                && run.stderr.contains(needle),
            "{arg} {env:?}: {}",
            run.stderr
        );
    }
}
