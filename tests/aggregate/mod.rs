//! One verdict for a distributed test: three `rk6 run` runners, each with its execution
//! segment and `-o aggregate`, and one `rk6 aggregate` that merges their deltas, judges the
//! thresholds on the whole test and prints its summary.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::recorder::{Recorder, Reply};
use crate::support::{free_port, KillOnPanic, TestServer};
use crate::Dir;

const SEQUENCE: &str = "--execution-segment-sequence=0,1/3,2/3,1";
const SEGMENTS: [&str; 3] = ["0:1/3", "1/3:2/3", "2/3:1"];

fn rk6_cmd(args: &[String], cwd: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rk6"));
    cmd.args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// `rk6 aggregate` for three runners on a free port; returns it and its push URL.
fn aggregator(dir: &Dir, script: &Path, extra: &[&str]) -> (Child, String) {
    aggregator_env(dir, script, extra, &[])
}

/// [`aggregator`] with `env` set.
fn aggregator_env(
    dir: &Dir,
    script: &Path,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (Child, String) {
    let address = format!("127.0.0.1:{}", free_port());
    let mut args = vec![
        "aggregate".to_string(),
        "--instances".into(),
        "3".into(),
        "--address".into(),
        address.clone(),
        "--summary-export".into(),
        dir.path("whole.json").display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push(script.display().to_string());
    let mut child = rk6_cmd(&args, &dir.0)
        .envs(env.iter().copied())
        .spawn()
        .unwrap();
    // Runners that push before it listens retry a second later; waiting keeps tests short.
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(&address).is_err() {
        assert!(child.try_wait().unwrap().is_none(), "the aggregator exited");
        assert!(Instant::now() < deadline, "the aggregator never listened");
        std::thread::sleep(Duration::from_millis(20));
    }
    (child, format!("http://{address}"))
}

/// Runner `i` (1-based) of three: its segment, `instance_id`, API address, its own
/// `-o json` file and the aggregate output.
fn runner(dir: &Dir, script: &Path, i: usize, push: &str) -> Child {
    runner_at(dir, script, i, push, &format!("127.0.0.1:{}", free_port()))
}

/// [`runner`] with its REST API at `api`.
fn runner_at(dir: &Dir, script: &Path, i: usize, push: &str, api: &str) -> Child {
    runner_with(dir, script, i, push, api, &[])
}

/// [`runner_at`] with `extra` flags.
fn runner_with(dir: &Dir, script: &Path, i: usize, push: &str, api: &str, extra: &[&str]) -> Child {
    runner_env(dir, script, i, push, api, extra, &[])
}

/// [`runner_with`] with `env` set.
fn runner_env(
    dir: &Dir,
    script: &Path,
    i: usize,
    push: &str,
    api: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> Child {
    let mut args = vec![
        "run".to_string(),
        "-q".into(),
        format!("--execution-segment={}", SEGMENTS[i - 1]),
        SEQUENCE.into(),
        "--address".into(),
        api.to_string(),
        "--tag".into(),
        format!("instance_id={i}"),
        "-o".into(),
        format!("aggregate={push}"),
        "-o".into(),
        format!("json={}", dir.path(&format!("samples-{i}.json")).display()),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push(script.display().to_string());
    rk6_cmd(&args, &dir.0)
        .envs(env.iter().copied())
        .spawn()
        .unwrap()
}

struct Done {
    code: i32,
    stdout: String,
    stderr: String,
    /// When the process was seen to have ended.
    at: Instant,
}

fn wait(child: Child) -> Done {
    let Output {
        status,
        stdout,
        stderr,
    } = child.wait_with_output().unwrap();
    Done {
        code: status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        at: Instant::now(),
    }
}

/// Runs three runners and the aggregator to their ends: (aggregator, runners).
fn distributed(dir: &Dir, script: &Path, extra: &[&str]) -> (Done, Vec<Done>) {
    let (agg, push) = aggregator(dir, script, extra);
    let runners: Vec<Child> = (1..=3).map(|i| runner(dir, script, i, &push)).collect();
    let mut pids: Vec<u32> = runners.iter().map(Child::id).collect();
    pids.push(agg.id());
    let _reaper = KillOnPanic(pids);
    let runners: Vec<Done> = runners.into_iter().map(wait).collect();
    (wait(agg), runners)
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// Every `metric` value in the runners' `-o json` files.
fn samples(dir: &Dir, metric: &str) -> Vec<f64> {
    let mut out = Vec::new();
    for i in 1..=3 {
        let text = std::fs::read_to_string(dir.path(&format!("samples-{i}.json"))).unwrap();
        for line in text.lines() {
            let v: Value = serde_json::from_str(line).unwrap();
            if v["type"] == "Point" && v["metric"] == metric {
                out.push(v["data"]["value"].as_f64().unwrap());
            }
        }
    }
    out
}

/// k6's percentile: sort, interpolate at `p·(n−1)`.
fn percentile(values: &[f64], p: f64) -> f64 {
    let mut s = values.to_vec();
    s.sort_by(f64::total_cmp);
    let i = p / 100.0 * (s.len() - 1) as f64;
    let (a, b) = (s[i.floor() as usize], s[i.ceil() as usize]);
    a + (b - a) * (i - i.floor())
}

fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= (want.abs() * 0.01).max(0.5)
}

fn script(base: &str, thresholds: &str) -> String {
    format!(
        r#"
import http from 'k6/http';
import {{ check, group }} from 'k6';
export const options = {{
  scenarios: {{ s: {{ executor: 'shared-iterations', vus: 6, iterations: 60 }} }},
  thresholds: {thresholds},
}};
export default function () {{
  group('g', () => {{
    const r = http.get('{base}');
    check(r, {{ 'status is 200': (r) => r.status === 200 }});
  }});
}}
"#
    )
}

#[test]
fn three_runners_give_the_single_process_counts_percentiles_and_verdict() {
    let srv = TestServer::start();
    let dir = Dir::new("aggregate-whole");
    // Each runner's share (20 iterations) fails `count==60` on its own; the whole passes.
    let path = dir.write(
        "test.js",
        &script(
            &srv.url("/get"),
            "{ iterations: ['count==60'], http_req_duration: ['p(95)<10000', 'med<10000'] }",
        ),
    );
    let single = rk6_cmd(
        &[
            "run".into(),
            "-q".into(),
            "--address".into(),
            "".into(),
            "--summary-export".into(),
            dir.path("single.json").display().to_string(),
            path.display().to_string(),
        ],
        &dir.0,
    )
    .spawn()
    .unwrap();
    let single = wait(single);
    assert_eq!(single.code, 0, "{}", single.stderr);
    let single = read_json(&dir.path("single.json"));

    let (agg, runners) = distributed(&dir, &path, &[]);
    for r in &runners {
        assert_eq!(r.code, 0, "a runner defers its verdict\n{}", r.stderr);
        assert!(
            r.stdout.contains("covers this runner's share"),
            "{}",
            r.stdout
        );
    }
    assert_eq!(agg.code, 0, "{}\n{}", agg.stdout, agg.stderr);
    let whole = read_json(&dir.path("whole.json"));
    let m = |e: &Value, name: &str, key: &str| e["metrics"][name][key].as_f64().unwrap_or(-1.0);
    for (name, key) in [
        ("iterations", "count"),
        ("http_reqs", "count"),
        ("checks", "passes"),
        ("http_req_duration", "count"),
    ] {
        assert_eq!(m(&whole, name, key), m(&single, name, key), "{name} {key}");
    }
    assert_eq!(m(&whole, "iterations", "count"), 60.0);
    assert_eq!(
        whole["root_group"]["groups"]["g"]["checks"]["status is 200"]["passes"], 60,
        "{whole}"
    );
    let durations = samples(&dir, "http_req_duration");
    assert_eq!(durations.len(), 60);
    for (key, p) in [("p(95)", 95.0), ("med", 50.0), ("p(90)", 90.0)] {
        let (got, want) = (
            m(&whole, "http_req_duration", key),
            percentile(&durations, p),
        );
        assert!(close(got, want), "{key}: aggregated {got}, exact {want}");
    }
    assert!(agg.stdout.contains("TOTAL RESULTS"), "{}", agg.stdout);
    assert!(agg.stdout.contains("✓ 'count==60'"), "{}", agg.stdout);
}

#[test]
fn a_threshold_only_the_whole_test_crosses_fails_the_aggregator_alone() {
    let srv = TestServer::start();
    let dir = Dir::new("aggregate-share");
    // 20 iterations a share pass `count<50`; the whole test's 60 do not.
    let path = dir.write(
        "test.js",
        &script(&srv.url("/get"), "{ iterations: ['count<50'] }"),
    );
    let single = wait(
        rk6_cmd(
            &[
                "run".into(),
                "-q".into(),
                "--address".into(),
                "".into(),
                path.display().to_string(),
            ],
            &dir.0,
        )
        .spawn()
        .unwrap(),
    );
    assert_eq!(single.code, 99, "the same test in one process fails");
    let (agg, runners) = distributed(&dir, &path, &[]);
    for r in &runners {
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    assert_eq!(agg.code, 99, "{}\n{}", agg.stdout, agg.stderr);
    assert!(agg.stdout.contains("✗ 'count<50'"), "{}", agg.stdout);
    assert!(
        agg.stderr
            .contains("thresholds on metrics 'iterations' have been crossed"),
        "{}",
        agg.stderr
    );
    assert_eq!(
        read_json(&dir.path("whole.json"))["metrics"]["iterations"]["count"],
        60
    );
}

#[test]
fn abort_on_fail_crossed_by_the_whole_test_stops_every_runner() {
    let dir = Dir::new("aggregate-abort");
    // One VU a runner, one iteration a second: the whole test reaches 6 iterations after
    // about two seconds, while a runner's share would need six.
    let path = dir.write(
        "test.js",
        r#"
import { sleep } from 'k6';
export const options = {
  scenarios: { s: { executor: 'constant-vus', vus: 3, duration: '30s' } },
  thresholds: { iterations: [{ threshold: 'count<6', abortOnFail: true }] },
};
export default function () { sleep(1); }
"#,
    );
    let (mut agg, push) = aggregator(&dir, &path, &[]);
    // The aggregator's log, read as it is written, to know when it decided to stop.
    let stderr = agg.stderr.take().unwrap();
    let (lines_tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let _ = lines_tx.send((line, Instant::now()));
        }
    });
    let runners: Vec<Child> = (1..=3).map(|i| runner(&dir, &path, i, &push)).collect();
    let mut pids: Vec<u32> = runners.iter().map(Child::id).collect();
    pids.push(agg.id());
    let _reaper = KillOnPanic(pids);
    let runners: Vec<Done> = runners.into_iter().map(wait).collect();
    let agg = wait(agg);
    let log: Vec<(String, Instant)> = lines.try_iter().collect();
    let text: String = log.iter().map(|(l, _)| format!("{l}\n")).collect();
    let decided = log
        .iter()
        .find(|(l, _)| l.contains("stopping every runner"))
        .map(|(_, at)| *at)
        .unwrap_or_else(|| panic!("the aggregator never stopped the runners\n{text}"));
    for r in &runners {
        assert_eq!(r.code, 103, "stopped through the REST API\n{}", r.stderr);
        // `at` is when this test saw the exit, no earlier than the exit itself.
        let after = r.at.saturating_duration_since(decided);
        assert!(
            after < Duration::from_secs(5),
            "a runner stopped {after:?} after the abort"
        );
    }
    assert_eq!(agg.code, 99, "{}\n{text}", agg.stdout);
    let whole = read_json(&dir.path("whole.json"));
    let n = whole["metrics"]["iterations"]["count"].as_f64().unwrap();
    assert!((6.0..30.0).contains(&n), "{n}");
}

#[test]
fn a_runner_killed_mid_test_is_named_and_the_aggregator_still_ends() {
    let dir = Dir::new("aggregate-missing");
    let path = dir.write(
        "test.js",
        r#"
import { sleep } from 'k6';
export const options = { scenarios: { s: { executor: 'constant-vus', vus: 3, duration: '3s' } } };
export default function () { sleep(0.2); }
"#,
    );
    let (agg, push) = aggregator(&dir, &path, &["--timeout", "2s"]);
    let apis: Vec<String> = (0..3)
        .map(|_| format!("127.0.0.1:{}", free_port()))
        .collect();
    let mut runners: Vec<Child> = (1..=3)
        .map(|i| runner_at(&dir, &path, i, &push, &apis[i - 1]))
        .collect();
    let mut pids: Vec<u32> = runners.iter().map(Child::id).collect();
    pids.push(agg.id());
    let _reaper = KillOnPanic(pids);
    // Runner 2 joined (its output pushes before its API listens) and ran a while.
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(&apis[1]).is_err() {
        assert!(Instant::now() < deadline, "runner 2 never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(800));
    runners[1].kill().unwrap();
    let start = Instant::now();
    let runners: Vec<Done> = runners.into_iter().map(wait).collect();
    assert_eq!((runners[0].code, runners[2].code), (0, 0));
    let agg = wait(agg);
    assert!(
        agg.at - start < Duration::from_secs(10),
        "the aggregator hung"
    );
    assert_eq!(agg.code, 255, "{}\n{}", agg.stdout, agg.stderr);
    assert!(
        agg.stderr
            .contains("instance 2 (segment 1/3:2/3) is missing"),
        "{}",
        agg.stderr
    );
    assert!(
        agg.stderr.contains("2 of 3 runners in full: 66.67%"),
        "{}",
        agg.stderr
    );
    assert!(agg.stdout.contains("TOTAL RESULTS"), "{}", agg.stdout);
}

#[test]
fn runners_that_start_before_the_aggregator_send_everything_once() {
    let srv = TestServer::start();
    let dir = Dir::new("aggregate-late");
    // Three seconds of iterations (0.3 s each, 10 a VU); the aggregator starts halfway.
    let path = dir.write(
        "test.js",
        &format!(
            r#"
import http from 'k6/http';
import {{ sleep }} from 'k6';
export const options = {{
  scenarios: {{ s: {{ executor: 'per-vu-iterations', vus: 6, iterations: 10 }} }},
  thresholds: {{ iterations: ['count==60'] }},
}};
export default function () {{ http.get('{}'); sleep(0.3); }}
"#,
            srv.url("/get")
        ),
    );
    // Nothing listens yet: every runner's first pushes fail and are kept.
    let address = format!("127.0.0.1:{}", free_port());
    let push = format!("http://{address}");
    let runners: Vec<Child> = (1..=3).map(|i| runner(&dir, &path, i, &push)).collect();
    let mut pids: Vec<u32> = runners.iter().map(Child::id).collect();
    std::thread::sleep(Duration::from_millis(1500));
    let args: Vec<String> = [
        "aggregate",
        "--instances",
        "3",
        "--address",
        &address,
        "--summary-export",
        dir.path("whole.json").to_str().unwrap(),
        path.to_str().unwrap(),
    ]
    .map(String::from)
    .to_vec();
    let agg = rk6_cmd(&args, &dir.0).spawn().unwrap();
    pids.push(agg.id());
    let _reaper = KillOnPanic(pids);
    let runners: Vec<Done> = runners.into_iter().map(wait).collect();
    let agg = wait(agg);
    for r in &runners {
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_eq!(
            r.stderr.matches("cannot reach the aggregator").count(),
            1,
            "said once\n{}",
            r.stderr
        );
    }
    assert_eq!(agg.code, 0, "{}\n{}", agg.stdout, agg.stderr);
    let whole = read_json(&dir.path("whole.json"));
    assert_eq!(whole["metrics"]["iterations"]["count"], 60, "{whole}");
    assert_eq!(whole["metrics"]["http_reqs"]["count"], 60, "{whole}");
    // Two VUs a runner: the whole test's are the sum of every runner's, not the last one's.
    assert_eq!(whole["metrics"]["vus_max"]["value"], 6, "{whole}");
    assert_eq!(whole["metrics"]["vus_max"]["max"], 6, "{whole}");
}

#[test]
fn percentiles_past_the_exact_limit_merge_within_histogram_precision() {
    let dir = Dir::new("aggregate-histograms");
    // 42,000 values of a custom Trend (14,000 a runner): the merged whole is in HDR
    // histograms, and each runner's deltas travel as buckets once it sent 10,000 values.
    let path = dir.write(
        "test.js",
        r#"
import { Trend } from 'k6/metrics';
import exec from 'k6/execution';
const t = new Trend('spread', true);
export const options = {
  scenarios: { s: { executor: 'shared-iterations', vus: 3, iterations: 60 } },
  thresholds: { spread: ['p(95)<951', 'med>499'] },
};
export default function () {
  const it = exec.scenario.iterationInTest;
  for (let i = 0; i < 700; i++) t.add(((it * 700 + i) * 7919 % 30011) / 30.0);
}
"#,
    );
    let (agg, runners) = distributed(&dir, &path, &[]);
    for r in &runners {
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    assert_eq!(agg.code, 0, "{}\n{}", agg.stdout, agg.stderr);
    let whole = read_json(&dir.path("whole.json"));
    let values = samples(&dir, "spread");
    assert_eq!(values.len(), 42_000);
    for (key, p) in [("p(95)", 95.0), ("med", 50.0), ("p(90)", 90.0)] {
        let got = whole["metrics"]["spread"][key].as_f64().unwrap();
        let want = percentile(&values, p);
        assert!(
            ((got - want) / want).abs() < 0.001,
            "{key}: aggregated {got}, exact {want}"
        );
    }
    let avg = values.iter().sum::<f64>() / values.len() as f64;
    let got = whole["metrics"]["spread"]["avg"].as_f64().unwrap();
    assert!((got - avg).abs() < 1e-9, "avg {got} vs {avg}");
}

#[test]
fn the_aggregator_runs_handle_summary_over_the_whole_test() {
    let dir = Dir::new("aggregate-handle-summary");
    // Every process runs handleSummary: the runners over their shares, the aggregator
    // (`-e WHO=whole`) over the whole test.
    let path = dir.write(
        "test.js",
        r#"
export const options = { scenarios: { s: { executor: 'shared-iterations', vus: 3, iterations: 30 } } };
export default function () {}
export function handleSummary(data) {
  const who = __ENV.WHO || 'share';
  return { [`${who}.txt`]: String(data.metrics.iterations.values.count), stdout: `summary of the ${who}\n` };
}
"#,
    );
    let (agg, runners) = distributed(&dir, &path, &["-e", "WHO=whole"]);
    for r in &runners {
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(r.stdout.contains("summary of the share"), "{}", r.stdout);
    }
    assert_eq!(agg.code, 0, "{}\n{}", agg.stdout, agg.stderr);
    assert!(
        agg.stdout.contains("summary of the whole"),
        "{}",
        agg.stdout
    );
    assert!(!agg.stdout.contains("TOTAL RESULTS"), "{}", agg.stdout);
    assert_eq!(
        std::fs::read_to_string(dir.path("whole.txt")).unwrap(),
        "30"
    );
    assert_eq!(
        read_json(&dir.path("whole.json"))["metrics"]["iterations"]["count"],
        30,
        "--summary-export is written too"
    );
}

/// The runners of a `--setup-once` test: paused, without their own setup and teardown.
const PAUSED: [&str; 3] = ["--paused", "--no-setup", "--no-teardown"];

/// Three paused runners and a `--setup-once` aggregator, run to their ends.
fn setup_once(dir: &Dir, script: &Path) -> (Done, Vec<Done>) {
    let (agg, push) = aggregator(dir, script, &["--setup-once"]);
    let runners: Vec<Child> = (1..=3)
        .map(|i| {
            let api = format!("127.0.0.1:{}", free_port());
            runner_with(dir, script, i, &push, &api, &PAUSED)
        })
        .collect();
    let mut pids: Vec<u32> = runners.iter().map(Child::id).collect();
    pids.push(agg.id());
    let _reaper = KillOnPanic(pids);
    let runners: Vec<Done> = runners.into_iter().map(wait).collect();
    (wait(agg), runners)
}

#[test]
fn setup_once_runs_setup_and_teardown_once_for_the_whole_test() {
    // setup() fetches a token, every iteration checks the data, teardown posts it back.
    let target = Recorder::start(|seen| match seen.path() {
        "/setup" => Reply::new(200, "text/plain", "tok-7"),
        _ => Reply::new(200, "text/plain", "ok"),
    });
    let dir = Dir::new("aggregate-setup-once");
    let path = dir.write(
        "test.js",
        &format!(
            r#"
import http from 'k6/http';
import {{ check }} from 'k6';
export const options = {{
  scenarios: {{ s: {{ executor: 'shared-iterations', vus: 6, iterations: 30 }} }},
  thresholds: {{ checks: ['rate==1'] }},
}};
export function setup() {{ return {{ token: http.post('{base}/setup').body, n: 3 }}; }}
export default function (data) {{
  http.get('{base}/work');
  check(data, {{ 'got the setup data': (d) => d && d.token === 'tok-7' && d.n === 3 }});
}}
export function teardown(data) {{ http.post('{base}/teardown', JSON.stringify(data)); }}
"#,
            base = target.url("")
        ),
    );
    let (agg, runners) = setup_once(&dir, &path);
    for r in &runners {
        assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    }
    assert_eq!(agg.code, 0, "{}\n{}", agg.stdout, agg.stderr);
    assert!(
        agg.stdout.contains("setup() ran once; started 3 runners"),
        "{}",
        agg.stdout
    );
    let seen: Vec<(String, String)> = target
        .seen()
        .iter()
        .map(|s| (s.path().to_owned(), s.text()))
        .collect();
    let count = |p: &str| seen.iter().filter(|(path, _)| path == p).count();
    assert_eq!(count("/setup"), 1, "{seen:?}");
    assert_eq!(count("/work"), 30, "{seen:?}");
    assert_eq!(count("/teardown"), 1, "{seen:?}");
    assert_eq!(seen[0].0, "/setup", "setup comes first");
    assert_eq!(
        seen.last().unwrap(),
        &(
            "/teardown".to_string(),
            r#"{"n":3,"token":"tok-7"}"#.to_string()
        ),
        "teardown comes last, with setup's data"
    );
    let whole = read_json(&dir.path("whole.json"));
    let group = &whole["root_group"]["checks"]["got the setup data"];
    assert_eq!(
        (&group["passes"], &group["fails"]),
        (&30.into(), &0.into()),
        "{whole}"
    );
    assert_eq!(whole["metrics"]["vus_max"]["value"], 6, "{whole}");
    // The requests of setup() and teardown() count in the whole test, as in k6.
    assert_eq!(whole["metrics"]["http_reqs"]["count"], 32, "{whole}");
}

#[test]
fn a_throwing_setup_once_stops_every_runner_and_exits_as_k6() {
    let dir = Dir::new("aggregate-setup-throws");
    let path = dir.write(
        "test.js",
        r#"
import { Counter } from 'k6/metrics';
const c = new Counter('work');
export const options = { scenarios: { s: { executor: 'shared-iterations', vus: 3, iterations: 9 } } };
export function setup() { throw new Error('boom in setup'); }
export default function () { c.add(1); }
"#,
    );
    let start = Instant::now();
    let (agg, runners) = setup_once(&dir, &path);
    assert!(start.elapsed() < Duration::from_secs(20), "it hung");
    for r in &runners {
        assert_eq!(r.code, 103, "stopped while paused\n{}", r.stderr);
    }
    assert_eq!(agg.code, 107, "{}\n{}", agg.stdout, agg.stderr);
    assert!(agg.stderr.contains("boom in setup"), "{}", agg.stderr);
    assert!(
        agg.stdout
            .contains("the test cannot start; stopping every runner"),
        "{}",
        agg.stdout
    );
    let whole = read_json(&dir.path("whole.json"));
    assert!(
        whole["metrics"]["work"].is_null(),
        "no iteration ran: {whole}"
    );
}

#[test]
fn setup_once_refuses_runners_that_were_not_started_paused() {
    let dir = Dir::new("aggregate-setup-unpaused");
    let path = dir.write(
        "test.js",
        r#"
import { sleep } from 'k6';
export const options = { scenarios: { s: { executor: 'constant-vus', vus: 3, duration: '3s' } } };
export function setup() { console.log('SETUP RAN'); }
export default function () { sleep(0.1); }
"#,
    );
    let (agg, push) = aggregator(&dir, &path, &["--setup-once", "--join-timeout", "5s"]);
    // Runners that start at once, with their own setup (not --paused, not --no-setup).
    let runners: Vec<Child> = (1..=3).map(|i| runner(&dir, &path, i, &push)).collect();
    let mut pids: Vec<u32> = runners.iter().map(Child::id).collect();
    pids.push(agg.id());
    let _reaper = KillOnPanic(pids);
    let runners: Vec<Done> = runners.into_iter().map(wait).collect();
    let agg = wait(agg);
    assert_eq!(agg.code, 255, "{}\n{}", agg.stdout, agg.stderr);
    assert!(
        agg.stderr.contains("is not waiting paused")
            && agg.stderr.contains("--paused --no-setup --no-teardown"),
        "{}",
        agg.stderr
    );
    assert!(
        !agg.stderr.contains("SETUP RAN"),
        "no setup on the aggregator"
    );
    assert!(
        agg.stdout
            .contains("the test cannot start; stopping every runner"),
        "{}",
        agg.stdout
    );
    for r in &runners {
        assert_eq!(r.code, 103, "stopped by the aggregator\n{}", r.stderr);
    }
}

#[test]
fn a_setup_once_past_its_timeout_exits_100() {
    let dir = Dir::new("aggregate-setup-timeout");
    let path = dir.write(
        "test.js",
        r#"
import { sleep } from 'k6';
export const options = {
  setupTimeout: '1s',
  scenarios: { s: { executor: 'shared-iterations', vus: 3, iterations: 3 } },
};
export function setup() { sleep(5); }
export default function () {}
"#,
    );
    let (agg, runners) = setup_once(&dir, &path);
    for r in &runners {
        assert_eq!(r.code, 103, "{}", r.stderr);
    }
    assert_eq!(agg.code, 100, "{}\n{}", agg.stdout, agg.stderr);
    assert!(
        agg.stderr
            .contains("setup() execution timed out after 1 seconds"),
        "{}",
        agg.stderr
    );
}

/// POSTs `body` as a push to the aggregator at `push` (`http://HOST:PORT`); its status.
fn post_push(push: &str, authorization: Option<&str>, body: &str) -> u16 {
    use std::io::{Read, Write};
    let address = push.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    let auth = authorization
        .map(|a| format!("Authorization: {a}\r\n"))
        .unwrap_or_default();
    write!(
        stream,
        "POST /v1/push HTTP/1.1\r\nHost: {address}\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer[9..12].parse().unwrap()
}

#[test]
fn a_push_without_the_secret_changes_nothing() {
    let dir = Dir::new("aggregate-secret");
    // The whole test's 60 iterations pass `count==60`; one forged push more would not.
    let path = dir.write(
        "test.js",
        r#"
export const options = {
  scenarios: { s: { executor: 'shared-iterations', vus: 6, iterations: 60 } },
  thresholds: { iterations: ['count==60'] },
};
export default function () {}
"#,
    );
    let secret = [("RK6_AGGREGATE_SECRET", "s3cret")];
    let (agg, push) = aggregator_env(&dir, &path, &[], &secret);
    // A finished runner's 1,000 iterations, as anyone who can connect could send them.
    let forged = r#"{"runner":{"id":"intruder","instance_id":"9"},"seq":0,"elapsed_ms":1000,"done":true,"delta":{"metrics":[{"name":"iterations","type":"counter","contains":"default","sink":{"kind":"counter","sum":1000,"samples":1000}}]}}"#;
    assert_eq!(post_push(&push, None, forged), 401);
    assert_eq!(post_push(&push, Some("Bearer guess"), forged), 401);
    // A runner with another secret: its whole run is refused.
    let intruder = rk6_cmd(
        &[
            "run".into(),
            "-q".into(),
            "-o".into(),
            format!("aggregate={push}"),
            path.display().to_string(),
        ],
        &dir.0,
    )
    .env("RK6_AGGREGATE_SECRET", "guess")
    .spawn()
    .unwrap();
    // The test's runners, their secret as a Kubernetes Secret often holds it (a newline).
    let runners: Vec<Child> = (1..=3)
        .map(|i| {
            let api = format!("127.0.0.1:{}", free_port());
            runner_env(
                &dir,
                &path,
                i,
                &push,
                &api,
                &[],
                &[("RK6_AGGREGATE_SECRET", "s3cret\n")],
            )
        })
        .collect();
    let mut pids: Vec<u32> = runners.iter().map(Child::id).collect();
    pids.extend([agg.id(), intruder.id()]);
    let _reaper = KillOnPanic(pids);
    let intruder = wait(intruder);
    let runners: Vec<Done> = runners.into_iter().map(wait).collect();
    let agg = wait(agg);
    for r in &runners {
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(!r.stderr.contains("refuses"), "{}", r.stderr);
    }
    assert_eq!(
        intruder
            .stderr
            .matches("refuses this runner's pushes")
            .count(),
        1,
        "said once\n{}",
        intruder.stderr
    );
    assert!(
        intruder
            .stderr
            .contains("a different secret in RK6_AGGREGATE_SECRET"),
        "{}",
        intruder.stderr
    );
    assert_eq!(agg.code, 0, "{}\n{}", agg.stdout, agg.stderr);
    let whole = read_json(&dir.path("whole.json"));
    assert_eq!(whole["metrics"]["iterations"]["count"], 60, "{whole}");
    assert_eq!(whole["aggregate"]["secret"], true, "{whole}");
    // The two forged pushes and the intruder's: at least its last one (a run as short as
    // this one can end within its first push period, so its first push is its last).
    let refused = whole["aggregate"]["refused_pushes"].as_u64().unwrap();
    assert!(refused >= 3, "{whole}");
    assert!(
        agg.stdout.contains(&format!(
            "The aggregator refused {refused} pushes without its secret (RK6_AGGREGATE_SECRET); what they carried is not in these figures."
        )),
        "{}",
        agg.stdout
    );
    assert!(agg.stdout.contains("✓ 'count==60'"), "{}", agg.stdout);
    assert!(!agg.stdout.contains("instance 9"), "{}", agg.stdout);
    assert!(
        agg.stderr
            .contains("refused a push without the aggregator's secret"),
        "{}",
        agg.stderr
    );
    assert!(
        !agg.stderr.contains("without a secret"),
        "on loopback, no warning"
    );
}

#[test]
fn runners_of_tests_that_end_as_their_first_second_comes_count_their_vus() {
    let dir = Dir::new("aggregate-short-vus");
    // setup() takes 0.7 s, the iterations 0.5 s: the whole test's first second comes while
    // the VUs run, as k6 samples `vus`; the scenarios alone last less than a second.
    let path = dir.write(
        "test.js",
        r#"
import { sleep } from 'k6';
export const options = { scenarios: { s: { executor: 'per-vu-iterations', vus: 6, iterations: 1 } } };
export function setup() { sleep(0.7); }
export default function () { sleep(0.5); }
"#,
    );
    let (agg, runners) = distributed(&dir, &path, &[]);
    for r in &runners {
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    assert_eq!(agg.code, 0, "{}\n{}", agg.stdout, agg.stderr);
    let whole = read_json(&dir.path("whole.json"));
    assert_eq!(whole["metrics"]["vus_max"]["value"], 6, "{whole}");
    assert!(whole["metrics"]["vus"]["max"].is_number(), "{whole}");
    // The issue's test: one second of iterations that all throw at once.
    let path = dir.write(
        "throws.js",
        r#"
export const options = { duration: '1s', vus: 6 };
export default function () { throw new Error('x'); }
"#,
    );
    for _ in 0..2 {
        let (agg, _) = distributed(&dir, &path, &[]);
        assert_eq!(agg.code, 0, "{}\n{}", agg.stdout, agg.stderr);
        let whole = read_json(&dir.path("whole.json"));
        assert_eq!(whole["metrics"]["vus_max"]["value"], 6, "{whole}");
        assert!(whole["metrics"]["vus"]["max"].is_number(), "{whole}");
    }
}
