//! Executors, concurrent scenarios and `k6/execution`, through the real binary.

use crate::support::TestServer;
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
    // Two VUs on one worker thread, each iteration burning 300 ms of CPU without yielding:
    // the VU waiting for its planned start cannot run until the other finishes, so starts
    // are late because of the generator itself. The delay must show and be flagged.
    let script = "export const options = { scenarios: { car: { executor: 'constant-arrival-rate', rate: 10, duration: '1s', preAllocatedVUs: 2 } } };\nexport default function () { const end = Date.now() + 300; while (Date.now() < end) {} }\n";
    let (run, export) = run_export(&dir, script, &[]);
    run.assert_code(0);
    let delay = metric(&export, "iteration_start_delay");
    assert!(delay["max"].as_f64().unwrap_or(0.0) >= 100.0, "{export}");
    assert!(
        run.stderr.contains("iterations started late"),
        "{}",
        run.stderr
    );
    let fast = "export const options = { scenarios: { car: { executor: 'constant-arrival-rate', rate: 20, duration: '1s', preAllocatedVUs: 5 } } };\nexport default function () {}\n";
    let (run, export) = run_export(&dir, fast, &[]);
    run.assert_code(0);
    let delay = metric(&export, "iteration_start_delay");
    // With free VUs every start is on time (within a few ms on a busy machine).
    assert!(delay["p(95)"].as_f64().unwrap() < 10.0, "{delay}");
    assert!(
        !run.stderr.contains("iterations started late"),
        "{}",
        run.stderr
    );
}
