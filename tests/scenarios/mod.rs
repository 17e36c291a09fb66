//! Executors, concurrent scenarios and `k6/execution`, through the real binary.

use crate::support::{free_port, TestServer};
use crate::{count, metric, rk6, run_export, Dir};

#[test]
fn constant_arrival_rate_runs_the_planned_iterations() {
    let dir = Dir::new("car");
    let script = "export const options = { scenarios: { car: { executor: 'constant-arrival-rate', rate: 20, timeUnit: '1s', duration: '2s', preAllocatedVUs: 5 } } };\nexport default function () {}\n";
    let (run, export) = run_export(&dir, script, &[]);
    run.assert_code(0);
    // As k6: 20/s over 2 s starts 41 iterations (the last one at 2 s).
    assert_eq!(count(&export, "iterations"), 41.0, "{}", run.stdout);
    assert!(metric(&export, "dropped_iterations").is_null(), "{export}");
}

#[test]
fn arrival_rate_drops_what_busy_vus_cannot_start() {
    let dir = Dir::new("dropped");
    let script = "import { sleep } from 'k6';\nexport const options = { scenarios: { car: { executor: 'constant-arrival-rate', rate: 10, duration: '2s', preAllocatedVUs: 1, gracefulStop: '0s' } } };\nexport default function () { sleep(0.25); }\n";
    let (run, export) = run_export(&dir, script, &[]);
    run.assert_code(0);
    let done = count(&export, "iterations");
    let dropped = count(&export, "dropped_iterations");
    assert!(dropped >= 8.0, "dropped {dropped}: {export}");
    // 21 planned starts; one iteration may still be running at the end and be interrupted
    // (gracefulStop 0s), which counts neither as done nor as dropped.
    assert!(
        (20.0..=21.0).contains(&(done + dropped)),
        "done {done} + dropped {dropped}"
    );
}

#[test]
fn stages_shortcut_ramps_vus() {
    let dir = Dir::new("stages");
    let script = "import { sleep } from 'k6';\nexport const options = { stages: [{ duration: '1s', target: 3 }, { duration: '1s', target: 0 }] };\nexport default function () { sleep(0.1); }\n";
    let path = dir.write("s.js", script);
    let run = rk6(&["run", path.to_str().unwrap()], &dir.0);
    run.assert_code(0);
    assert!(
        run.stdout.contains(
            "Up to 3 looping VUs for 2s over 2 stages (gracefulRampDown: 30s, gracefulStop: 30s)"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("complete and 0 interrupted iterations"),
        "{}",
        run.stdout
    );
}

#[test]
fn concurrent_scenarios_with_exec_env_tags_and_start_time() {
    let srv = TestServer::start();
    let dir = Dir::new("multi");
    let script = format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
import exec from 'k6/execution';
export const options = {{
  scenarios: {{
    browse: {{ executor: 'per-vu-iterations', vus: 2, iterations: 3, exec: 'browse', env: {{ KIND: 'b' }}, tags: {{ team: 'web' }} }},
    buy: {{ executor: 'shared-iterations', vus: 1, iterations: 4, exec: 'buy', startTime: '500ms' }},
  }},
  thresholds: {{
    'iterations{{scenario:browse}}': ['count==6'],
    'iterations{{scenario:buy}}': ['count==4'],
    'http_reqs{{team:web}}': ['count==6'],
  }},
}};
export function browse() {{
  http.get('{url}');
  check(exec, {{
    'env': () => __ENV.KIND === 'b',
    'scenario name': (e) => e.scenario.name === 'browse' && e.scenario.executor === 'per-vu-iterations',
    'vu id': (e) => e.vu.idInTest === __VU && e.vu.idInInstance === __VU,
    'vu iteration': (e) => e.vu.iterationInScenario === __ITER,
    'instance': (e) => e.instance.vusInitialized === 3 && e.instance.currentTestRunDuration >= 0,
    'options': (e) => e.test.options.scenarios.browse.iterations === 3,
    'start time': (e) => e.scenario.startTime > 1700000000000,
  }});
}}
export function buy() {{
  check(exec, {{ 'buy scenario': (e) => e.scenario.name === 'buy' && e.scenario.iterationInTest < 4, 'no env': () => __ENV.KIND === undefined }});
}}
"#,
        url = srv.url("/get")
    );
    let (run, export) = run_export(&dir, &script, &[]);
    run.assert_code(0);
    assert_eq!(count(&export, "iterations"), 10.0);
    let checks = &export["root_group"]["checks"];
    for (name, c) in checks.as_object().unwrap() {
        assert_eq!(
            c["fails"], 0,
            "check {name} failed: {checks}\n{}",
            run.stderr
        );
    }
    assert_eq!(checks["env"]["passes"], 6);
    assert_eq!(checks["buy scenario"]["passes"], 4);
}

#[test]
fn test_abort_exits_108_and_test_fail_exits_110() {
    let dir = Dir::new("abort");
    let path = dir.write(
        "a.js",
        "import exec from 'k6/execution';\nexport const options = { iterations: 100, vus: 1 };\nexport default function () { if (__ITER === 2) exec.test.abort('enough'); }\nexport function teardown() { console.log('teardown ran'); }\n",
    );
    let run = rk6(&["run", "-q", path.to_str().unwrap()], &dir.0);
    run.assert_code(108);
    assert!(
        run.stderr.contains("test aborted: enough"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("teardown ran"), "{}", run.stderr);

    let path = dir.write(
        "f.js",
        "import exec from 'k6/execution';\nexport const options = { iterations: 3 };\nexport default function () { if (__ITER === 0) exec.test.fail('bad data'); }\n",
    );
    let run = rk6(&["run", "-q", path.to_str().unwrap()], &dir.0);
    run.assert_code(110);
    assert!(
        run.stdout.contains("iterations"),
        "the test ran to the end: {}",
        run.stdout
    );
}

#[test]
fn arrival_rate_reports_how_late_iterations_started() {
    let dir = Dir::new("startdelay");
    // Four VUs per worker thread (one worker per core), each iteration burning 300 ms of CPU
    // without yielding, at a rate that asks for three such iterations per core at once: a VU
    // waiting for its planned start cannot run until the one on its thread finishes, so starts
    // are late because of the generator itself. The delay must show and be flagged.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let script = format!(
        "export const options = {{ scenarios: {{ car: {{ executor: 'constant-arrival-rate', rate: {rate}, duration: '1s', preAllocatedVUs: {vus} }} }} }};\nexport default function () {{ const end = Date.now() + 300; while (Date.now() < end) {{}} }}\n",
        rate = 10 * cores,
        vus = 4 * cores
    );
    let (run, export) = run_export(&dir, &script, &["--rk6-metrics"]);
    run.assert_code(0);
    let delay = metric(&export, "iteration_start_delay");
    assert!(delay["max"].as_f64().unwrap_or(0.0) >= 100.0, "{export}");
    assert!(
        run.stderr.contains("iterations started late"),
        "{}",
        run.stderr
    );
    let fast = "export const options = { scenarios: { car: { executor: 'constant-arrival-rate', rate: 20, duration: '1s', preAllocatedVUs: 5 } } };\nexport default function () {}\n";
    let (run, export) = run_export(&dir, fast, &["--rk6-metrics"]);
    run.assert_code(0);
    let delay = metric(&export, "iteration_start_delay");
    // With free VUs starts are on time: the median within a few ms even on a machine so
    // loaded that its tail (and so the warning) may show the generator's own lateness.
    assert!(delay["med"].as_f64().unwrap() < 10.0, "{delay}");
}

/// The `iterationInTest` numbers each segment ran, from its console lines.
fn iterations_in_test(stderr: &str) -> Vec<u64> {
    let mut out: Vec<u64> = stderr
        .lines()
        .filter_map(|l| l.split("msg=\"it ").nth(1))
        .filter_map(|rest| rest.split(['"', ' ']).next()?.parse().ok())
        .collect();
    out.sort_unstable();
    out
}

#[test]
fn three_segments_run_exactly_the_whole_test() {
    let dir = Dir::new("segments");
    let script = r#"
import exec from 'k6/execution';
export const options = { scenarios: {
  si: { executor: 'shared-iterations', vus: 4, iterations: 10 },
  pv: { executor: 'per-vu-iterations', vus: 5, iterations: 2, exec: 'pv' },
  car: { executor: 'constant-arrival-rate', rate: 20, duration: '1s', preAllocatedVUs: 3, exec: 'car' },
} };
export default function () { console.log(`it ${exec.scenario.iterationInTest} si`); }
export function pv() {}
export function car() { console.log(`it ${1000 + exec.scenario.iterationInTest} car`); }
"#;
    let path = dir.write("seg.js", script);
    let mut totals = [0.0f64; 3];
    let mut seen = Vec::new();
    for seg in ["0:1/3", "1/3:2/3", "2/3:1"] {
        let export = dir.path(&format!("{}.json", seg.replace(['/', ':'], "_")));
        let run = rk6(
            &[
                "run",
                "--address",
                "",
                "--execution-segment",
                seg,
                "--execution-segment-sequence",
                "0,1/3,2/3,1",
                "--summary-export",
                export.to_str().unwrap(),
                path.to_str().unwrap(),
            ],
            &dir.0,
        );
        run.assert_code(0);
        assert!(
            run.stdout.contains("scenarios: (33.33%) 3 scenarios"),
            "{}",
            run.stdout
        );
        let export: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
        totals[0] += count(&export, "iterations");
        totals[1] += count(&export, "vus_max")
            .max(metric(&export, "vus_max")["max"].as_f64().unwrap_or(0.0));
        seen.extend(iterations_in_test(&run.stderr));
    }
    // The whole test: 10 shared + 5 × 2 per-VU + 21 arrival-rate iterations, none twice.
    assert_eq!(totals[0], 41.0, "iterations over all segments");
    seen.sort_unstable();
    let whole: Vec<u64> = (0..10).chain(1000..1021).collect();
    assert_eq!(seen, whole, "iterationInTest over all segments");
}

#[test]
fn bad_segments_are_rejected_like_k6() {
    let dir = Dir::new("badseg");
    let path = dir.write("s.js", "export default function () {}\n");
    let run = rk6(
        &[
            "run",
            "--address",
            "",
            "--execution-segment",
            "1/4:1/2",
            "--execution-segment-sequence",
            "0,1/3,1",
            path.to_str().unwrap(),
        ],
        &dir.0,
    );
    run.assert_code(104);
    assert!(
        run.stderr
            .contains("provided segment 1/4:1/2 can't be found in sequence 0,1/3,1"),
        "{}",
        run.stderr
    );
    let run = rk6(
        &[
            "run",
            "--address",
            "",
            "--execution-segment",
            "abc",
            path.to_str().unwrap(),
        ],
        &dir.0,
    );
    run.assert_code(255);
    assert!(
        run.stderr
            .contains("'abc' is not a valid percentage, decimal, fraction or interval value"),
        "{}",
        run.stderr
    );
}

/// Sends `PATCH /v1/status` with `body` to the control API at `address`.
fn patch_status(address: &str, body: &str) {
    let (code, head, answer) =
        crate::support::rest_call(address, "PATCH", "/v1/status", None, Some(body));
    assert_eq!(code, 200, "{head}\n\n{answer}");
}

/// Polls `rk6 status` until `want` appears in its output (or panics after 20 s).
fn wait_status(address: &str, dir: &Dir, want: &str) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let st = rk6(&["status", "-a", address], &dir.0);
        if st.code == 0 && st.stdout.contains(want) {
            return st.stdout;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never saw {want}: {} {}",
            st.stdout,
            st.stderr
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[test]
fn externally_controlled_vus_follow_the_control_api() {
    let dir = Dir::new("external");
    let script = r#"
import { sleep } from 'k6';
import exec from 'k6/execution';
export const options = { scenarios: { ec: { executor: 'externally-controlled', vus: 0, maxVUs: 3, duration: '0' } } };
export default function () { console.log(`vu ${exec.vu.idInTest}`); sleep(0.05); }
"#;
    let path = dir.write("ec.js", script);
    let address = format!("127.0.0.1:{}", free_port());
    let export = dir.path("summary.json");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_rk6"))
        .args([
            "run",
            "--paused",
            "--address",
            &address,
            "--summary-export",
            export.to_str().unwrap(),
            path.to_str().unwrap(),
        ])
        .current_dir(&dir.0)
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status = wait_status(&address, &dir, "status: 4");
    assert!(status.contains("paused: true"), "{status}");
    rk6(&["resume", "-a", &address], &dir.0).assert_code(0);
    wait_status(&address, &dir, "status: 7");
    let too_many = rk6(&["scale", "-a", &address, "-u", "5"], &dir.0);
    too_many.assert_code(255);
    assert!(
        too_many
            .stderr
            .contains("must be less than or equal to the number of maxVUs (3)"),
        "{}",
        too_many.stderr
    );
    rk6(&["scale", "-a", &address, "-u", "2"], &dir.0).assert_code(0);
    std::thread::sleep(std::time::Duration::from_millis(600));
    // Stopping through the API ends the test gracefully with k6's own code for it (103).
    patch_status(&address, r#"{"data":{"attributes":{"stopped":true}}}"#);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(103), "{stderr}");
    assert!(
        stderr.contains(r#"level=error msg="test run stopped from REST API""#),
        "{stderr}"
    );
    let export: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    assert!(count(&export, "iterations") >= 4.0, "{export}");
    // Only the two VUs scaled in ran iterations.
    let mut vus: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.split("msg=\"vu ").nth(1))
        .map(|r| &r[..1])
        .collect();
    vus.sort_unstable();
    vus.dedup();
    assert_eq!(vus, ["1", "2"], "{stderr}");
}

#[test]
fn config_file_sits_below_script_options() {
    let dir = Dir::new("config");
    dir.write(
        "config.json",
        r#"{"iterations": 3, "vus": 3, "summaryTrendStats": ["avg", "p(99)"]}"#,
    );
    let script = "export const options = { vus: 1 };\nexport default function () {}\n";
    let config = dir.path("config.json");
    let (run, export) = run_export(
        &dir,
        script,
        &["--config", config.to_str().unwrap(), "--address", ""],
    );
    run.assert_code(0);
    assert_eq!(count(&export, "iterations"), 3.0, "{export}");
    assert!(
        metric(&export, "iteration_duration").get("p(99)").is_some(),
        "{export}"
    );
    assert!(
        metric(&export, "iteration_duration").get("med").is_none(),
        "{export}"
    );
}

#[test]
fn sigint_stops_gracefully_and_loses_no_sample() {
    let srv = TestServer::start();
    let dir = Dir::new("sigint");
    let script = format!(
        r#"
import http from 'k6/http';
import {{ sleep }} from 'k6';
export const options = {{ scenarios: {{ c: {{ executor: 'constant-vus', vus: 8, duration: '1m', gracefulStop: '200ms' }} }} }};
export default function () {{ http.get('{url}'); }}
export function teardown() {{ console.log('teardown ran'); }}
"#,
        url = srv.url("/get")
    );
    let path = dir.write("s.js", &script);
    let export = dir.path("summary.json");
    let out = dir.path("out.json");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_rk6"))
        .args([
            "run",
            "-q",
            "--address",
            "",
            "--summary-export",
            export.to_str().unwrap(),
            "-o",
        ])
        .arg(format!("json={}", out.display()))
        .arg(&path)
        .current_dir(&dir.0)
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let killed = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let started = std::time::Instant::now();
    let done = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&done.stderr);
    let stdout = String::from_utf8_lossy(&done.stdout);
    // k6's code for an external stop, after teardown and the summary.
    assert_eq!(done.status.code(), Some(105), "{stderr}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert!(stderr.contains("teardown ran"), "{stderr}");
    assert!(stdout.contains("TOTAL RESULTS"), "{stdout}");
    let export: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    let reqs = count(&export, "http_reqs");
    assert!(reqs > 10.0, "{export}");
    eprintln!("sigint test: {reqs} requests in ~2.5 s");
    let points = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .filter(|l| l.contains(r#""type":"Point""#) && l.contains(r#""metric":"http_reqs""#))
        .count();
    assert_eq!(points as f64, reqs, "every request in the JSON output");
}

#[test]
fn arrival_rate_keeps_its_rate_in_a_real_run() {
    let dir = Dir::new("realrate");
    let script = "export const options = { scenarios: { car: { executor: 'constant-arrival-rate', rate: 200, duration: '2s', preAllocatedVUs: 10 } } };\nexport default function () {}\n";
    let (run, export) = run_export(&dir, script, &["--address", "", "--rk6-metrics"]);
    run.assert_code(0);
    // 200/s for 2 s: 401 starts (the last at 2 s), none dropped.
    assert_eq!(count(&export, "iterations"), 401.0, "{export}");
    assert!(metric(&export, "dropped_iterations").is_null(), "{export}");
    // Starts are late only by the 1 ms timer granularity (generous on a busy machine).
    let delay = metric(&export, "iteration_start_delay");
    assert!(delay["med"].as_f64().unwrap() < 2.0, "{delay}");
}

#[test]
fn a_saturated_generator_is_reported_with_its_figure() {
    let dir = Dir::new("saturated");
    // Iterations that hold their worker thread for 80 ms without yielding: every other VU
    // and the worker's own clock run late by as much.
    let script = "export const options = { vus: 2, duration: '1500ms' };\nexport default function () { const end = Date.now() + 80; while (Date.now() < end) {} }\n";
    let (run, _) = run_export(&dir, script, &["--address", ""]);
    run.assert_code(0);
    let line = run
        .stderr
        .lines()
        .find(|l| l.contains("the load generator was saturated"))
        .unwrap_or_else(|| panic!("no saturation warning: {}", run.stderr));
    assert!(line.contains("ms late (p(99) >= "), "{line}");
    assert!(
        line.contains("garbage-collection pauses up to") || line.contains("no garbage collection"),
        "{line}"
    );
}

#[test]
fn verbose_runs_report_the_collector_pauses() {
    let dir = Dir::new("gc-pauses");
    // Each iteration leaves ~20,000 objects behind: the collector has to run during the test.
    let path = dir.write(
        "s.js",
        "export const options = { vus: 2, iterations: 30 };\n\
         export default function () { const a = []; for (let i = 0; i < 20000; i++) a.push({ i }); }\n",
    );
    let run = rk6(&["run", "-v", "-q", path.to_str().unwrap()], &dir.0);
    run.assert_code(0);
    let line = run
        .stderr
        .lines()
        .find(|l| l.contains("garbage-collection pauses up to"))
        .unwrap_or_else(|| panic!("no pause figures: {}", run.stderr));
    let collections: u64 = line
        .split("garbage-collection pauses up to")
        .nth(1)
        .and_then(|t| t.split(" over ").nth(1))
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no collection count: {line}"));
    assert!(collections > 0, "{line}");
}

#[test]
fn dropped_iterations_are_emitted_as_they_happen() {
    // One VU for 50 starts a second of half-second iterations: most starts are dropped. As
    // in k6 (stopped after ~2.2 s here), the abortOnFail threshold sees the drops while the
    // test runs and stops it at its first evaluation, and `-o json` has a point per drop.
    let dir = Dir::new("dropped-live");
    let path = dir.write(
        "s.js",
        "import { sleep } from 'k6';\n\
         export const options = {\n\
           scenarios: { drop: { executor: 'constant-arrival-rate', rate: 50, timeUnit: '1s', duration: '10s', preAllocatedVUs: 1, maxVUs: 1, gracefulStop: '0s' } },\n\
           thresholds: { dropped_iterations: [{ threshold: 'count<1', abortOnFail: true }] },\n\
         };\n\
         export default function () { sleep(0.5); }\n",
    );
    let started = std::time::Instant::now();
    let run = rk6(
        &["run", "-q", "-o", "json=out.json", path.to_str().unwrap()],
        &dir.0,
    );
    run.assert_code(99);
    let took = started.elapsed();
    assert!(took < std::time::Duration::from_secs(7), "ran {took:?}");
    let json = std::fs::read_to_string(dir.path("out.json")).unwrap();
    let points: Vec<serde_json::Value> = json
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|l| l["type"] == "Point" && l["metric"] == "dropped_iterations")
        .collect();
    assert!(points.len() > 10, "{} points", points.len());
    assert!(points
        .iter()
        .all(|p| p["data"]["value"] == 1 && p["data"]["tags"]["scenario"] == "drop"));
}
