//! The per-VU event loop: timers, promises, async functions and `http.asyncRequest`.

use crate::support::TestServer;
use crate::{count, metric, run_export, Dir};

/// Timers, microtasks and intervals run in the order browsers and k6 run them.
pub(crate) const ORDERING: &str = r#"
import { setTimeout as st, clearTimeout as ct } from 'k6/timers';
import { check } from 'k6';
export const options = { iterations: 2 };
export default async function () {
  const order = [];
  setTimeout(() => order.push('t20'), 200);
  const id = st(() => order.push('never'), 5);
  ct(id);
  setTimeout((a, b) => order.push(`t0:${a}${b}`), 0, 'x', 'y');
  Promise.resolve().then(() => order.push('micro'));
  order.push('sync');
  let n = 0;
  await new Promise((resolve) => { const iv = setInterval(() => { n++; order.push(`iv${n}`); if (n === 3) { clearInterval(iv); resolve(); } }, 5); });
  const v = await (async () => { await null; return 42; })();
  order.push(`v${v}`);
  await new Promise((r) => setTimeout(r, 260));
  check(order, { 'order': (o) => o.join(',') === 'sync,micro,t0:xy,iv1,iv2,iv3,v42,t20' });
  if (__ITER === 1) { throw new Error('boom in async'); }
}
"#;

#[test]
fn timers_and_promises_run_in_order() {
    let dir = Dir::new("ordering");
    let (run, export) = run_export(&dir, ORDERING, &["--address", ""]);
    run.assert_code(0);
    assert_eq!(metric(&export, "checks")["passes"], 2, "{export}");
    assert_eq!(metric(&export, "checks")["fails"], 0, "{export}");
    assert!(
        run.stderr
            .contains("Uncaught (in promise) Error: boom in async"),
        "{}",
        run.stderr
    );
}

#[test]
fn an_iteration_waits_for_its_timers() {
    let dir = Dir::new("timers-wait");
    // The function returns at once; the iteration lasts until the timer fired.
    let script = r#"
import { Counter } from 'k6/metrics';
const fired = new Counter('fired');
export const options = { iterations: 3 };
export default function () { setTimeout(() => fired.add(1), 150); }
"#;
    let (run, export) = run_export(&dir, script, &["--address", ""]);
    run.assert_code(0);
    assert_eq!(count(&export, "fired"), 3.0, "{export}");
    assert!(
        metric(&export, "iteration_duration")["min"]
            .as_f64()
            .unwrap()
            >= 149.0,
        "{export}"
    );
}

#[test]
fn a_never_cleared_interval_is_interrupted_at_the_end() {
    let dir = Dir::new("interval-forever");
    let script = r#"
export const options = { scenarios: { c: { executor: 'constant-vus', vus: 1, duration: '1s', gracefulStop: '0s' } } };
export default function () { setInterval(() => {}, 10); }
"#;
    let started = std::time::Instant::now();
    let (run, export) = run_export(&dir, script, &["--address", ""]);
    run.assert_code(0);
    // The iteration never finishes on its own: it is interrupted when the scenario ends.
    assert!(count(&export, "iterations") <= 0.0, "{export}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

#[test]
fn async_requests_resolve_through_the_loop() {
    let srv = TestServer::start();
    let dir = Dir::new("async-request");
    let script = format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
export const options = {{ iterations: 2 }};
export default async function () {{
  const [a, b] = await Promise.all([
    http.asyncRequest('GET', '{get}'),
    http.asyncRequest('POST', '{post}', JSON.stringify({{ x: 1 }})),
  ]);
  const c = await http.asyncRequest('GET', 'http://127.0.0.1:1/refused');
  check(null, {{
    'get ok': () => a.status === 200,
    'post ok': () => b.status === 200,
    'refused is a response, not a rejection': () => c.status === 0 && c.error_code === 1212,
  }});
}}
"#,
        get = srv.url("/get"),
        post = srv.url("/post")
    );
    let (run, export) = run_export(&dir, &script, &["--address", ""]);
    run.assert_code(0);
    assert_eq!(
        metric(&export, "checks")["fails"],
        0,
        "{export}\n{}",
        run.stderr
    );
    assert_eq!(count(&export, "http_reqs"), 6.0, "{export}");
}
