//! Faults while a test runs, each compared with k6 1.1.0 (docs/reliability.md): outputs
//! that cannot write, signals in every phase, a target cutting every body short under
//! many VUs, and a process short of file descriptors. Servers listen on 127.0.0.1 port 0;
//! every run is bounded in time.

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::{accept_loop, TestServer};
use crate::{rk6, Dir, Run};

fn summary_printed(run: &Run) -> bool {
    run.stdout.contains("iterations")
}

fn no_panic(run: &Run) {
    assert!(
        !run.stderr.contains("panicked"),
        "rk6 panicked:\n{}",
        run.stderr
    );
}

/// k6 1.1.0 with `--out json=/dev/full` or `--summary-export=/dev/full`: the error logged,
/// the summary printed, exit 0.
#[test]
fn a_full_device_is_an_error_line_not_a_failed_test() {
    let dir = Dir::new("faults-full-device");
    let path = dir.write(
        "script.js",
        "export const options = { iterations: 3 };\nexport default function () {}\n",
    );
    let script = path.to_str().unwrap();
    for (args, needle) in [
        (
            vec!["run", "--out", "json=/dev/full", script],
            "output json (/dev/full): No space left on device",
        ),
        (
            vec!["run", "--out", "csv=/dev/full", script],
            "output csv (/dev/full): No space left on device",
        ),
        (
            vec!["run", "--summary-export=/dev/full", script],
            "cannot write the summary export /dev/full: No space left on device",
        ),
    ] {
        let run = rk6(&args, &dir.0);
        run.assert_code(0);
        no_panic(&run);
        assert!(summary_printed(&run), "{args:?}: {}", run.stdout);
        assert!(run.stderr.contains(needle), "{args:?}: {}", run.stderr);
    }
}

/// k6 1.1.0 refuses to start when an output's file cannot be opened ("open …: not a
/// directory", exit 255, no summary); a summary export it cannot open is only logged.
#[test]
fn an_output_file_that_cannot_be_opened_stops_the_start_with_255() {
    let dir = Dir::new("faults-unopenable");
    let path = dir.write(
        "script.js",
        "export const options = { iterations: 1 };\nexport default function () {}\n",
    );
    // A path through a regular file fails for root too (a read-only mode would not).
    let blocked = format!("{}/x.json", path.display());
    let out = format!("json={blocked}");
    let run = rk6(&["run", "--out", &out, path.to_str().unwrap()], &dir.0);
    run.assert_code(255);
    no_panic(&run);
    assert!(!summary_printed(&run), "{}", run.stdout);
    assert!(
        run.stderr
            .contains("could not create the 'json' output: Not a directory"),
        "{}",
        run.stderr
    );
    let export = format!("--summary-export={blocked}");
    let run = rk6(&["run", &export, path.to_str().unwrap()], &dir.0);
    run.assert_code(0);
    assert!(summary_printed(&run), "{}", run.stdout);
    assert!(
        run.stderr.contains("cannot write the summary export"),
        "{}",
        run.stderr
    );
}

/// A script logging its phases; `SETUP`/`TEARDOWN` seconds of sleep in those.
const PHASES: &str = r#"
import { sleep } from 'k6';
export const options = { vus: 2, duration: __ENV.DUR || '30s' };
export function setup() { console.log('setup start'); sleep(Number(__ENV.SETUP || 0)); console.log('setup end'); }
export default function () { if (__ITER === 0 && __VU === 1) console.log('iteration'); sleep(0.1); }
export function teardown() { console.log('teardown start'); sleep(Number(__ENV.TEARDOWN || 0)); console.log('teardown end'); }
"#;

/// Runs PHASES, sends SIGTERM once `marker` is logged, and returns the run and how long
/// rk6 took to exit after the signal.
fn terminated_at(marker: &str, env: &[(&str, &str)]) -> (Run, Duration) {
    let dir = Dir::new("faults-sigterm");
    let path = dir.write("script.js", PHASES);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rk6"));
    cmd.args(["run", "--address", "", path.to_str().unwrap()])
        .current_dir(&dir.0)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("start rk6");
    let mut stdout = child.stdout.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut stderr = String::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    for line in lines.by_ref() {
        let line = line.unwrap_or_default();
        stderr.push_str(&line);
        stderr.push('\n');
        if line.contains(marker) || Instant::now() > deadline {
            break;
        }
    }
    let pid = child.id().to_string();
    let killed = Command::new("kill").args(["-TERM", &pid]).status();
    assert!(killed.is_ok_and(|s| s.success()), "kill -TERM {pid}");
    let signalled = Instant::now();
    for line in lines {
        stderr.push_str(&line.unwrap_or_default());
        stderr.push('\n');
    }
    let status = child.wait().expect("wait for rk6");
    let took = signalled.elapsed();
    let run = Run {
        code: status.code().unwrap_or(-1),
        stdout: out.join().unwrap(),
        stderr,
    };
    (run, took)
}

const ABORTED: &str = "test run was aborted because k6 received a 'terminated' signal";

/// k6 1.1.0: SIGTERM during setup ends the run at once with 105, without the summary or
/// teardown.
#[test]
fn sigterm_during_setup_ends_at_once_with_105() {
    let (run, took) = terminated_at("setup start", &[("SETUP", "20")]);
    run.assert_code(105);
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert!(!summary_printed(&run), "{}", run.stdout);
    assert!(!run.stderr.contains("teardown start"), "{}", run.stderr);
    assert!(run.stderr.contains(ABORTED), "{}", run.stderr);
}

/// k6 1.1.0: SIGTERM during the scenarios stops them, runs teardown, prints the summary
/// and exits 105.
#[test]
fn sigterm_during_the_run_runs_teardown_and_ends_with_105() {
    let (run, took) = terminated_at("iteration", &[]);
    run.assert_code(105);
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert!(summary_printed(&run), "{}", run.stdout);
    assert!(run.stderr.contains("teardown end"), "{}", run.stderr);
    assert!(run.stderr.contains(ABORTED), "{}", run.stderr);
}

/// k6 1.1.0: SIGTERM during teardown lets teardown finish, prints the summary and exits
/// 105 (rk6 used to ignore the signal there and exit 0).
#[test]
fn sigterm_during_teardown_lets_it_finish_and_ends_with_105() {
    let (run, took) = terminated_at("teardown start", &[("DUR", "1s"), ("TEARDOWN", "2")]);
    run.assert_code(105);
    assert!(took >= Duration::from_millis(1500), "took {took:?}");
    assert!(took < Duration::from_secs(15), "took {took:?}");
    assert!(summary_printed(&run), "{}", run.stdout);
    assert!(run.stderr.contains("teardown end"), "{}", run.stderr);
    assert!(run.stderr.contains(ABORTED), "{}", run.stderr);
}

/// 200 VUs for 2 s against a server that announces 100 000 bytes and closes after 1 000:
/// every request fails with k6's "unexpected EOF" (1000), the body read so far is kept,
/// and the test itself passes (k6 1.1.0: the same error and code, exit 0).
#[test]
fn a_target_cutting_every_body_short_under_200_vus() {
    let addr = accept_loop(Duration::from_secs(60), |mut stream| async move {
        let mut buf = vec![0u8; 4096];
        let mut seen = Vec::new();
        while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
        }
        let mut reply = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n".to_vec();
        reply.extend(std::iter::repeat_n(b'x', 1000));
        let _ = stream.write_all(&reply).await;
    });
    let dir = Dir::new("faults-short-bodies");
    dir.write(
        "script.js",
        &format!(
            r#"import http from 'k6/http';
import {{ check }} from 'k6';
export const options = {{ vus: 200, duration: '2s' }};
export default function () {{
  const r = http.get('http://{addr}/');
  check(r, {{
    'k6 error': (r) => r.error === 'unexpected EOF' && r.error_code === 1000 && r.status === 0,
    'partial body': (r) => r.body !== null && r.body.length === 1000,
  }});
}}
"#
        ),
    );
    let started = Instant::now();
    let (run, export) = crate::run_file(&dir, "script.js", &[], &[]);
    assert!(started.elapsed() < Duration::from_secs(60));
    run.assert_code(0);
    no_panic(&run);
    let checks = crate::metric(&export, "checks");
    assert_eq!(checks["fails"], 0, "{checks}");
    assert!(checks["passes"].as_f64().unwrap() > 200.0, "{checks}");
    let failed = crate::metric(&export, "http_req_failed");
    assert_eq!(failed["fails"], 0, "every request failed: {failed}");
}

/// `ulimit -n` set low for rk6 alone, through the shell.
fn with_open_files(limit: u32, args: &[&str], dir: &Dir) -> Run {
    let bin = env!("CARGO_BIN_EXE_rk6");
    let output = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -n {limit} && exec \"$0\" \"$@\""))
        .arg(bin)
        .args(args)
        .current_dir(&dir.0)
        .env("NO_COLOR", "1")
        .output()
        .expect("run rk6 under sh");
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// With 64 descriptors and 200 VUs, the dials that find none fail as k6 1.1.0 reports
/// them (1213 "dial: unknown errno 24 error with msg `too many open files`"), the rest of
/// the test goes on, and the exit is 0.
#[test]
fn too_many_open_files_fail_dials_with_k6s_error() {
    let server = TestServer::start();
    let dir = Dir::new("faults-nofile");
    dir.write(
        "script.js",
        &format!(
            r#"import http from 'k6/http';
import {{ check }} from 'k6';
export const options = {{ vus: 200, duration: '2s' }};
export default function () {{
  const r = http.get('{}');
  check(r, {{
    'ok or out of descriptors': (r) => r.status === 200 ||
      (r.error_code === 1213 && r.error === 'dial: unknown errno 24 error with msg `too many open files`'),
    'out of descriptors': (r) => r.error_code === 1213,
  }});
}}
"#,
            server.url("/get")
        ),
    );
    let run = with_open_files(
        64,
        &[
            "run",
            "--address",
            "",
            "--summary-export",
            "export.json",
            "script.js",
        ],
        &dir,
    );
    run.assert_code(0);
    no_panic(&run);
    let export: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path("export.json")).unwrap()).unwrap();
    let checks = &export["root_group"]["checks"];
    assert_eq!(
        checks["ok or out of descriptors"]["fails"], 0,
        "{checks}\n{}",
        run.stderr
    );
    assert!(
        checks["out of descriptors"]["passes"].as_f64().unwrap() > 0.0,
        "no dial ran out of descriptors: {checks}"
    );
    assert!(
        run.stderr.contains("socket: too many open files"),
        "{}",
        run.stderr
    );
}

/// Too few descriptors for rk6's own event loops (it needs about two dozen, k6 about a
/// dozen): a clear reason and exit 255, not a thread quietly ending (which used to give
/// exit 0 and no summary).
#[test]
fn too_few_descriptors_to_start_is_a_clear_error() {
    let dir = Dir::new("faults-nofile-start");
    dir.write(
        "script.js",
        "export const options = { iterations: 1 };\nexport default function () {}\n",
    );
    let run = with_open_files(12, &["run", "--address", "", "script.js"], &dir);
    run.assert_code(255);
    no_panic(&run);
    assert!(
        run.stderr
            .contains("Too many open files (os error 24); raise the open-files limit (ulimit -n)"),
        "{}",
        run.stderr
    );
}

/// A VU that gets no coroutine stack (the process at `vm.max_map_count` or `ulimit -v`;
/// here a debug build's limit of 2 stacks, so one of the 3 VUs gets none — which one
/// depends on the order the workers create them in): the limit named with the VU and the
/// stacks allocated, and exit 255 as for a worker thread rk6
/// cannot start; it used to be `Cannot allocate memory` as a "script exception" (107), and
/// a malloc that found no mapping left aborted the process (134).
#[cfg(debug_assertions)]
#[test]
fn a_vu_without_a_stack_names_vm_max_map_count() {
    let dir = Dir::new("faults-stacks");
    dir.write(
        "script.js",
        "export const options = { vus: 3, iterations: 3 };\nexport default function () {}\n",
    );
    let run = crate::rk6_env(
        &["run", "script.js"],
        &dir.0,
        &[("RK6_TEST_MAX_STACKS", "2")],
    );
    run.assert_code(255);
    no_panic(&run);
    assert!(
        run.stderr.contains("cannot allocate a VU stack for VU ")
            && run.stderr.contains("with 2 VU stacks allocated")
            && run.stderr.contains("vm.max_map_count (")
            && run.stderr.contains("sysctl -w vm.max_map_count="),
        "{}",
        run.stderr
    );
}
