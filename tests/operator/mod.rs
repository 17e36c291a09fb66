//! rk6 under grafana/k6-operator, emulated on 127.0.0.1: the exact commands and REST calls
//! the operator makes (pkg/resources/jobs/{initializer,runner,starter}.go,
//! pkg/segmentation, pkg/testrun/k6client.go, internal/controller), with rk6 invoked as
//! `k6`; and k6 1.1.0's REST API documents, recorded from the real binary.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{free_port, rest_call, KillOnPanic};
use crate::Dir;

/// One HTTP/1.1 request to the API: (status code, headers in lower case, body). The
/// operator's curl calls (PATCH) send `Content-Type: application/json`; its Go client
/// (setup, teardown) sends none, which the API must not need.
fn api(address: &str, method: &str, path: &str, body: Option<&str>) -> (u16, String, String) {
    let content_type = (method == "PATCH").then_some("application/json");
    let (code, head, body) = rest_call(address, method, path, content_type, body);
    (code, head.to_lowercase(), body)
}

fn json(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"))
}

/// The operator's readiness check (`isServiceReady`): `GET /v1/status` answers below 400.
fn wait_ready(address: &str, runner: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(mut s) = TcpStream::connect(address) {
            let _ = write!(
                s,
                "GET /v1/status HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
            );
            let mut answer = String::new();
            let _ = s.read_to_string(&mut answer);
            if answer.starts_with("HTTP/1.1 200") {
                return;
            }
        }
        assert!(
            runner.try_wait().unwrap().is_none(),
            "runner at {address} exited"
        );
        assert!(Instant::now() < deadline, "{address} never got ready");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `--execution-segment` and `--execution-segment-sequence` as pkg/segmentation builds
/// them for runner `index` (1-based) of `total`.
fn segment_flags(index: usize, total: usize) -> Vec<String> {
    let part = |i: usize| match i {
        0 => "0".to_string(),
        i if i == total => "1".to_string(),
        i => format!("{i}/{total}"),
    };
    let mut sequence = vec!["0".to_string()];
    sequence.extend((1..total).map(|i| format!("{i}/{total}")));
    sequence.push("1".into());
    vec![
        format!("--execution-segment={}:{}", part(index - 1), part(index)),
        format!("--execution-segment-sequence={}", sequence.join(",")),
    ]
}

/// The runner command of pkg/resources/jobs/runner.go for a setup-once (`--no-setup
/// --no-teardown --linger`) test: `k6 run --quiet [segment] [arguments] SCRIPT
/// --address=… --paused --tag instance_id=N --tag testrun_name=NAME …`. Only the address
/// differs (`127.0.0.1:PORT` for `0.0.0.0:6565`: one machine, several runners).
fn runner_args(
    index: usize,
    total: usize,
    arguments: &[String],
    script: &str,
    address: &str,
) -> Vec<String> {
    let mut args = vec!["run".to_string(), "--quiet".into()];
    if total > 1 {
        args.extend(segment_flags(index, total));
    }
    args.extend_from_slice(arguments);
    args.push(script.into());
    args.push(format!("--address={address}"));
    args.push("--paused".into());
    args.extend(["--tag".into(), format!("instance_id={index}")]);
    args.extend(["--tag".into(), "testrun_name=k6-sample".into()]);
    args.extend([
        "--no-setup".into(),
        "--no-teardown".into(),
        "--linger".into(),
    ]);
    args
}

/// `k6` in `dir`: the rk6 binary under the name the operator's images call.
fn k6_binary(dir: &Dir) -> std::path::PathBuf {
    let k6 = dir.path("bin/k6");
    std::fs::create_dir_all(k6.parent().unwrap()).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_rk6"), &k6).unwrap();
    #[cfg(not(unix))]
    std::fs::copy(env!("CARGO_BIN_EXE_rk6"), &k6).unwrap();
    k6
}

fn spawn(k6: &Path, args: &[String], cwd: &Path) -> Child {
    Command::new(k6)
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

const SCRIPT: &str = r#"
import { check } from 'k6';
import { Counter } from 'k6/metrics';
const teardowns = new Counter('teardowns');
export const options = {
  scenarios: {
    si: { executor: 'shared-iterations', vus: 4, iterations: 31 },
    pv: { executor: 'per-vu-iterations', vus: 5, iterations: 3 },
    car: { executor: 'constant-arrival-rate', rate: 50, timeUnit: '1s', duration: '2s', preAllocatedVUs: 6 },
    rar: { executor: 'ramping-arrival-rate', startRate: 10, timeUnit: '1s', preAllocatedVUs: 6,
           stages: [{ target: 40, duration: '1s' }, { target: 40, duration: '1s' }] },
  },
  // Sub-metrics put each scenario's iteration count into the summary export.
  thresholds: {
    'iterations{scenario:si}': ['count>=0'], 'iterations{scenario:pv}': ['count>=0'],
    'iterations{scenario:car}': ['count>=0'], 'iterations{scenario:rar}': ['count>=0'],
  },
};
export function setup() { console.log('SETUP RAN'); return { token: 'from-setup', n: 3 }; }
export default function (data) {
  check(data, { 'got the setup data': (d) => d && d.token === 'from-setup' && d.n === 3 });
}
export function teardown(data) { teardowns.add(1); console.log(`TEARDOWN RAN ${data.token}`); }
"#;

/// Iterations per scenario of the whole test in one process, as k6 1.1.0 ran it
/// (`iterations{scenario:…}` of its summary export), with the tolerance the split test
/// must meet: exact for iteration counts, ±2 % for arrival rates (whose count depends on
/// where the last slot falls).
const PLAN: [(&str, f64, f64); 4] = [
    ("si", 31.0, 0.0),
    ("pv", 15.0, 0.0),
    ("car", 101.0, 0.02),
    ("rar", 64.0, 0.02),
];

/// Iterations of `scenario` in a summary export.
fn iterations_of(export: &Value, scenario: &str) -> f64 {
    export["metrics"][format!("iterations{{scenario:{scenario}}}")]["count"]
        .as_f64()
        .unwrap_or(0.0)
}

#[test]
fn setup_once_flow_with_three_runners_runs_the_whole_plan_once() {
    let dir = Dir::new("operator");
    let k6 = k6_binary(&dir);
    let script = dir.write("test.js", SCRIPT);
    let script = script.to_str().unwrap();

    // Initializer (pkg/resources/jobs/initializer.go): `k6 archive SCRIPT -O ARCHIVE`, then
    // `k6 inspect --execution-requirements ARCHIVE`; the runners get the archive.
    let archive = dir.path("test.js.archived.tar");
    let made = Command::new(&k6)
        .args(["archive", script, "-O"])
        .arg(&archive)
        .current_dir(&dir.0)
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");
    let script = archive.to_str().unwrap();
    let inspect = Command::new(&k6)
        .args(["inspect", "--execution-requirements", script])
        .current_dir(&dir.0)
        .output()
        .unwrap();
    assert!(inspect.status.success(), "{inspect:?}");
    let requirements = json(&String::from_utf8_lossy(&inspect.stdout));
    assert_eq!(requirements["maxVUs"], 21, "{requirements}");

    // The same test in one process, for the plan the runners must add up to.
    let single = dir.path("single.json");
    let out = Command::new(&k6)
        .args(["run", "--quiet", "--address", ""])
        .arg(format!("--summary-export={}", single.display()))
        .arg(script)
        .current_dir(&dir.0)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let single = json(&std::fs::read_to_string(&single).unwrap());

    // Runners: parallelism 3, each a paused `k6 run` with its segment.
    let total = 3;
    let mut runners = Vec::new();
    for i in 1..=total {
        let address = format!("127.0.0.1:{}", free_port());
        let export = dir.path(&format!("summary-{i}.json"));
        // `spec.arguments`, placed before the script as the operator does.
        let arguments = vec![
            format!("--summary-export={}", export.display()),
            format!(
                "--out=json={}",
                dir.path(&format!("out-{i}.json")).display()
            ),
        ];
        let args = runner_args(i, total, &arguments, script, &address);
        runners.push((address, spawn(&k6, &args, &dir.0), export));
    }
    let _reaper = KillOnPanic(runners.iter().map(|(_, c, _)| c.id()).collect());
    for (address, child, _) in &mut runners {
        wait_ready(address, child);
        let (_, _, body) = api(address, "GET", "/v1/status", None);
        let status = json(&body);
        // The operator decodes these with Go: `status` an integer, `running` a boolean.
        assert_eq!(status["data"]["attributes"]["status"], 4, "{status}");
        assert_eq!(status["data"]["attributes"]["running"], false, "{status}");
    }
    let addresses: Vec<&str> = runners.iter().map(|(a, _, _)| a.as_str()).collect();

    // Setup once (internal/controller/common.go runSetup): POST /v1/setup on the first
    // runner, then PUT its data, raw, on every runner (k6client.go).
    let (code, _, body) = api(addresses[0], "POST", "/v1/setup", None);
    assert_eq!(code, 200, "{body}");
    let data = json(&body)["data"]["attributes"]["data"].clone();
    assert_eq!(data["token"], "from-setup", "{body}");
    for a in &addresses {
        let (code, head, body) = api(a, "PUT", "/v1/setup", Some(&data.to_string()));
        assert_eq!(code, 200, "{body}");
        assert!(
            head.contains("content-type: application/json\r\n"),
            "{head}"
        );
    }

    // Starter (pkg/resources/containers/curl_start.go): PATCH every runner.
    let start = r#"{"data":{"attributes":{"paused":false,"stopped":false},"id":"default","type":"status"}}"#;
    for a in &addresses {
        let (code, _, body) = api(a, "PATCH", "/v1/status", Some(start));
        assert_eq!(code, 200, "{body}");
        assert_eq!(json(&body)["data"]["attributes"]["paused"], false, "{body}");
    }

    // StoppedJobs (internal/controller/k6_stopped_jobs.go): every runner's `running` is
    // false again; with --linger they stay up at status 9.
    let deadline = Instant::now() + Duration::from_secs(30);
    for a in &addresses {
        loop {
            let (_, _, body) = api(a, "GET", "/v1/status", None);
            let attrs = json(&body)["data"]["attributes"].clone();
            if attrs["status"] == 9 {
                assert_eq!(attrs["running"], false, "{attrs}");
                break;
            }
            assert!(Instant::now() < deadline, "{a} never ended: {attrs}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    // Teardown once, on the first runner (runTeardown).
    let (code, _, body) = api(addresses[0], "POST", "/v1/teardown", None);
    assert_eq!((code, body.as_str()), (200, ""));

    // Stop: the stopper's PATCH (a lingering runner stays up), then the pods go away
    // (SIGTERM): each runner writes its summary and exits 0.
    let stop =
        r#"{"data":{"attributes":{"paused":false,"stopped":true},"id":"default","type":"status"}}"#;
    let mut stderr = String::new();
    let mut exports = Vec::new();
    for (address, child, export) in runners {
        let (code, _, body) = api(&address, "PATCH", "/v1/status", Some(stop));
        assert_eq!(code, 200, "{body}");
        assert_eq!(json(&body)["data"]["attributes"]["status"], 9, "{body}");
        let pid = child.id().to_string();
        assert!(Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{address}: {err}");
        // The signal only ends the lingering, silently (k6 says nothing either).
        assert!(!err.contains("Stopping the test"), "{address}: {err}");
        stderr.push_str(&err);
        exports.push(json(&std::fs::read_to_string(&export).unwrap()));
    }

    assert_eq!(stderr.matches("SETUP RAN").count(), 1, "{stderr}");
    assert_eq!(
        stderr.matches("TEARDOWN RAN from-setup").count(),
        1,
        "{stderr}"
    );
    let sum = |metric: &str, key: &str| -> f64 {
        exports
            .iter()
            .map(|e| e["metrics"][metric][key].as_f64().unwrap_or(0.0))
            .sum()
    };
    for (scenario, planned, tolerance) in PLAN {
        let got: f64 = exports.iter().map(|e| iterations_of(e, scenario)).sum();
        let alone = iterations_of(&single, scenario);
        for want in [planned, alone] {
            assert!(
                (got - want).abs() <= want * tolerance,
                "{scenario}: {got} iterations over the runners, {alone} in one process, k6 ran {planned}"
            );
        }
    }
    // The teardown run through the API while lingering counts in that runner's summary.
    assert_eq!(
        exports[0]["metrics"]["teardowns"]["count"], 1,
        "{}",
        exports[0]
    );
    assert_eq!(sum("teardowns", "count"), 1.0);
    // Every sample of runner i, the engine's own included, says which runner and test run
    // it comes from.
    for i in 1..=total {
        let text = std::fs::read_to_string(dir.path(&format!("out-{i}.json"))).unwrap();
        let points: Vec<Value> = text
            .lines()
            .map(json)
            .filter(|l| l["type"] == "Point")
            .collect();
        assert!(
            points.iter().any(|p| p["metric"] == "vus_max"),
            "runner {i}"
        );
        for p in &points {
            let tags = &p["data"]["tags"];
            assert_eq!(tags["instance_id"], i.to_string(), "{p}");
            assert_eq!(tags["testrun_name"], "k6-sample", "{p}");
        }
    }
    // Every iteration of every runner got the data set through PUT /v1/setup.
    let iterations = sum("iterations", "count");
    assert_eq!(sum("checks", "passes"), iterations);
    assert_eq!(sum("checks", "fails"), 0.0);
}

#[test]
fn a_throwing_setup_answers_k6s_error_and_a_stop_while_paused_exits_103() {
    let dir = Dir::new("operator-errors");
    let k6 = k6_binary(&dir);
    let script = dir.write(
        "t.js",
        "import { Counter } from 'k6/metrics';\nconst c = new Counter('my_counter');\nexport const options = { vus: 2, iterations: 2, thresholds: { my_counter: ['count>0'] } };\nexport function setup() { throw new Error('boom in setup'); }\nexport default function () { c.add(1); }\n",
    );
    let address = format!("127.0.0.1:{}", free_port());
    let args = runner_args(1, 1, &[], script.to_str().unwrap(), &address);
    let mut child = spawn(&k6, &args, &dir.0);
    let _reaper = KillOnPanic(vec![child.id()]);
    wait_ready(&address, &mut child);
    // Paused before the start, the documents k6 1.1.0 answers for the same script (the status
    // with k6 2.3's `execution_result`, release notes v2.3.0 #6388, still null).
    for (path, content_type, want) in [
        (
            "/v1/status",
            "application/json; charset=utf-8",
            r#"{"data":{"type":"status","id":"default","attributes":{"status":4,"paused":true,"vus":0,"vus-max":2,"stopped":false,"running":false,"tainted":false,"execution_result":null}}}"#,
        ),
        (
            "/v1/metrics",
            "text/plain; charset=utf-8",
            r#"{"data":[{"type":"metrics","id":"my_counter","attributes":{"type":"counter","contains":"default","tainted":null,"sample":{"count":0,"rate":0}}},{"type":"metrics","id":"vus","attributes":{"type":"gauge","contains":"default","tainted":null,"sample":{"value":0}}},{"type":"metrics","id":"vus_max","attributes":{"type":"gauge","contains":"default","tainted":null,"sample":{"value":2}}}]}"#,
        ),
        (
            "/v1/metrics/vus_max",
            "text/plain; charset=utf-8",
            r#"{"data":{"type":"metrics","id":"vus_max","attributes":{"type":"gauge","contains":"default","tainted":null,"sample":{"value":2}}}}"#,
        ),
        (
            "/v1/groups",
            "text/plain; charset=utf-8",
            r#"{"data":[{"type":"groups","id":"d41d8cd98f00b204e9800998ecf8427e","attributes":{"path":"","name":"","checks":null},"relationships":{"groups":{"data":[]},"parent":{"data":null}}}]}"#,
        ),
        (
            "/v1/metrics/nope",
            "text/plain; charset=utf-8",
            r#"{"errors":[{"status":"404","title":"Not Found","detail":"No metric with that ID was found"}]}"#,
        ),
    ] {
        // The gauges of a paused test reach the metrics thread just after the API is up.
        let deadline = Instant::now() + Duration::from_secs(10);
        let (head, body) = loop {
            let (_, head, body) = api(&address, "GET", path, None);
            if body == want || Instant::now() > deadline {
                break (head, body);
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        assert_eq!(body, want, "{path}");
        assert!(
            head.contains(&format!("content-type: {content_type}\r\n")),
            "{path}: {head}"
        );
    }
    // The operator's runSetup aborts the test on the "Error executing" title.
    let (code, head, body) = api(&address, "POST", "/v1/setup", None);
    assert_eq!(code, 500, "{body}");
    assert!(
        head.contains("content-type: text/plain; charset=utf-8"),
        "{head}"
    );
    let doc = json(&body);
    assert_eq!(doc["errors"][0]["status"], "500", "{doc}");
    assert_eq!(doc["errors"][0]["title"], "Error executing setup", "{doc}");
    assert!(
        doc["errors"][0]["detail"]
            .as_str()
            .unwrap()
            .contains("boom in setup"),
        "{doc}"
    );
    let (code, _, body) = api(&address, "GET", "/v1/setup", None);
    assert_eq!(code, 200);
    assert_eq!(
        body,
        r#"{"data":{"type":"setupData","id":"default","attributes":{}}}"#
    );
    let (code, _, body) = api(&address, "DELETE", "/v1/setup", None);
    assert_eq!((code, body.as_str()), (405, ""));
    let (code, _, body) = api(&address, "GET", "/v1/nothing", None);
    assert_eq!((code, body.as_str()), (404, "404 page not found\n"));

    // Stopped before the start: status 10 while lingering, then exit 103 (k6 1.1.0).
    let stop = r#"{"data":{"attributes":{"stopped":true},"id":"default","type":"status"}}"#;
    let (code, _, _) = api(&address, "PATCH", "/v1/status", Some(stop));
    assert_eq!(code, 200);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (_, _, body) = api(&address, "GET", "/v1/status", None);
        let doc = json(&body);
        // Then what the process will exit with, known while it lingers (k6 2.3, #6388).
        let known = !doc["data"]["attributes"]["execution_result"].is_null();
        if doc["data"]["attributes"]["status"] == 10 && known {
            assert_eq!(
                doc["data"]["attributes"]["execution_result"],
                serde_json::json!({"exit_code": 103}),
                "{body}"
            );
            break;
        }
        assert!(Instant::now() < deadline, "{body}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let pid = child.id().to_string();
    Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(103), "{stderr}");
    assert!(stderr.contains("Error executing setup"), "{stderr}");
    assert!(
        stderr.contains(r#"level=error msg="test run stopped from REST API""#),
        "{stderr}"
    );
    // As k6: the failed threshold is not what the exit code or the log reports.
    assert!(!stderr.contains("have been crossed"), "{stderr}");
    // As k6, the (empty) summary still comes.
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("vus_max"),
        "{out:?}"
    );
}

#[test]
fn a_paused_runner_judges_rates_from_its_start_not_from_its_launch() {
    // Runners wait paused until every pod is up; counters' rates (in thresholds judged
    // during the run, with abortOnFail) divide by the run time since the start, as k6's.
    let dir = Dir::new("operator-paused-rate");
    let k6 = k6_binary(&dir);
    let script = dir.write(
        "rate.js",
        "export const options = { scenarios: { car: { executor: 'constant-arrival-rate', rate: 10, duration: '3s', preAllocatedVUs: 2 } },\n  thresholds: { iterations: [{ threshold: 'rate>6', abortOnFail: true }] } };\nexport default function () {}\n",
    );
    let address = format!("127.0.0.1:{}", free_port());
    let args = vec![
        "run".to_string(),
        "--quiet".into(),
        "--paused".into(),
        format!("--address={address}"),
        script.to_str().unwrap().into(),
    ];
    let mut child = spawn(&k6, &args, &dir.0);
    let _reaper = KillOnPanic(vec![child.id()]);
    wait_ready(&address, &mut child);
    std::thread::sleep(Duration::from_millis(2500));
    let start = r#"{"data":{"attributes":{"paused":false},"id":"default","type":"status"}}"#;
    assert_eq!(api(&address, "PATCH", "/v1/status", Some(start)).0, 200);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("iterations"),
        "{out:?}"
    );
}
