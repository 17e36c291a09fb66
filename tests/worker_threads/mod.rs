//! Many VUs in one process: the worker threads are one a core whatever the VU count, and the
//! VUs of a thread keep their state apart while their GC domains collect one by one.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::{metric, Dir};

/// The most threads the rk6 process had while it ran, sampled from `/proc`.
fn peak_threads(child: &mut std::process::Child) -> u64 {
    let mut peak = 0;
    while child.try_wait().unwrap().is_none() {
        if let Ok(status) = std::fs::read_to_string(format!("/proc/{}/status", child.id())) {
            if let Some(n) = status
                .lines()
                .find_map(|l| l.strip_prefix("Threads:"))
                .and_then(|n| n.trim().parse().ok())
            {
                peak = peak.max(n);
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    peak
}

/// 1500 VUs (31 domains of 48) that each keep a private object graph and a `WeakMap` keyed
/// on shared built-ins across iterations, and make garbage enough for their domains to
/// collect many times. Every VU finds its own graph and weak entries intact at every
/// iteration, and the process holds a handful of threads: it used to start a worker thread
/// per 48 VUs (32 here), so the thread count grew with the VUs until 250,000 VUs ran out of
/// file descriptors for their event loops.
#[cfg(target_os = "linux")]
#[test]
fn vus_share_a_thread_a_core_and_keep_their_state_apart() {
    let dir = Dir::new("worker-threads");
    let script = r#"
import { check } from 'k6';
import { Counter } from 'k6/metrics';
const mine = { vu: __VU, items: [] };
const seen = new Counter('intact');
// Keys shared by the VUs of a thread (built-ins live in one domain's heap): a weak entry a
// VU keys on them lives as long as the key, across the collections of the VU's own domain.
const weak = new WeakMap([[Math, __VU], [JSON, -__VU]]);
export const options = {
  scenarios: { many: { executor: 'per-vu-iterations', vus: 1500, iterations: 4, maxDuration: '2m' } },
};
export default function () {
  for (let i = 0; i < 200; i++) {
    const junk = { i, s: 'x'.repeat(16) + i, a: [i, i + 1, { vu: __VU }] };
    if (i % 50 === 0) mine.items.push({ vu: __VU, n: mine.items.length, junk });
  }
  const ok = weak.get(Math) === __VU && weak.get(JSON) === -__VU && mine.vu === __VU && mine.items.every((it, n) => it.vu === __VU && it.n === n && it.junk.a[2].vu === __VU);
  if (ok && mine.items.length === 4 * (__ITER + 1)) seen.add(1);
}
"#;
    dir.write("script.js", script);
    let export = dir.path("summary.json");
    // `-v` reports the collections (into a file: a pipe nobody reads could fill up).
    let log = dir.path("stderr.log");
    let mut child = Command::new(env!("CARGO_BIN_EXE_rk6"))
        .args(["run", "-v", "-q", "--address", "", "--summary-export"])
        .arg(&export)
        .arg("script.js")
        .current_dir(&dir.0)
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::from(std::fs::File::create(&log).unwrap()))
        .spawn()
        .unwrap();
    let peak = peak_threads(&mut child);
    let status = child.wait().unwrap();
    let stderr = std::fs::read_to_string(&log).unwrap();
    assert_eq!(status.code(), Some(0), "{stderr}");
    let collections: u64 = stderr
        .split_once("garbage-collection pauses up to ")
        .and_then(|(_, rest)| rest.split_once(" over "))
        .and_then(|(_, rest)| rest.split_once(' '))
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or_else(|| panic!("no collection report: {stderr}"));
    assert!(
        collections > 31,
        "more collections than domains, so VUs ran beside collections of other domains: {collections}"
    );
    let export: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    assert_eq!(metric(&export, "iterations")["count"], 6000, "{export}");
    assert_eq!(
        metric(&export, "intact")["count"],
        6000,
        "every VU found its own state at every iteration: {export}"
    );
    // One worker per 48 VUs gave 32 workers here: above this bound wherever cores ≤ 11 (CI
    // has 2); on bigger machines the old sizing also ran a worker per core and this check
    // cannot tell the two apart.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    assert!(
        peak <= 2 * cores + 8,
        "{peak} threads for 1500 VUs on {cores} cores"
    );
}
