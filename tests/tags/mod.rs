//! Which tags each sample carries: the VU's tags (the `tags` option, the scenario's tags,
//! `group`, `scenario`, `exec.vu.tags`) on every metric family, under k6's precedence.

use serde_json::{json, Map, Value};

use crate::http_extras::points;
use crate::support::TestServer;
use crate::{metric, run_export, Dir};

/// The tags of every `metric` sample whose `case` tag is `case` (all samples when `None`).
fn tags_of(points: &[Value], metric: &str, case: Option<&str>) -> Vec<Map<String, Value>> {
    points
        .iter()
        .filter(|p| p["metric"] == metric)
        .map(|p| p["data"]["tags"].as_object().cloned().unwrap_or_default())
        .filter(|t| case.is_none_or(|c| t.get("case") == Some(&json!(c))))
        .collect()
}

/// Asserts that every `metric` sample of `case` has `expected` among its tags (and that
/// there is at least one).
fn assert_tags(points: &[Value], metric: &str, case: Option<&str>, expected: Value) {
    let all = tags_of(points, metric, case);
    assert!(!all.is_empty(), "no {metric} sample for {case:?}");
    for tags in &all {
        for (k, v) in expected.as_object().unwrap() {
            if v.is_null() {
                assert!(!tags.contains_key(k), "{metric} {case:?}: {k} in {tags:?}");
            } else {
                assert_eq!(tags.get(k), Some(v), "{metric} {case:?}: {k} in {tags:?}");
            }
        }
    }
}

#[test]
fn every_metric_carries_the_vu_tags_with_k6_precedence() {
    let srv = TestServer::start();
    let dir = Dir::new("tag-precedence");
    let get = srv.url("/get");
    let script = format!(
        r#"
import http from 'k6/http';
import exec from 'k6/execution';
import {{ check, group }} from 'k6';
import {{ Counter }} from 'k6/metrics';
const things = new Counter('things');
export const options = {{
  tags: {{ run: 'r', same: 'run' }},
  scenarios: {{ main: {{ executor: 'per-vu-iterations', vus: 1, iterations: 1, tags: {{ sc: 's', same: 'scenario' }} }} }},
}};
export default function () {{
  http.get('{get}', {{ tags: {{ case: 'before' }} }});
  exec.vu.tags.mytag = 'x';
  exec.vu.tags.same = 'vu';
  http.get('{get}', {{ tags: {{ case: 'plain' }} }});
  http.get('{get}', {{ tags: {{ case: 'over', same: 'req', method: 'M', status: 'S', url: 'U', name: 'N', group: 'G', scenario: 'S2', proto: 'P', expected_response: 'E' }} }});
  exec.vu.tags.name = 'vn';
  http.get('{get}', {{ tags: {{ case: 'vu-named' }} }});
  http.get(http.url`{get}?q=${{1}}`, {{ tags: {{ case: 'vu-named-template' }} }});
  delete exec.vu.tags.name;
  check(1, {{ ok: () => true }}, {{ case: 'check', same: 'chk', check: 'C', group: 'G' }});
  group('g', () => {{ things.add(1, {{ case: 'in-group' }}); }});
  things.add(1, {{ case: 'own', same: 'ctr', scenario: 'S3' }});
  exec.vu.tags.group = 'vg';
  group('h', () => {{ things.add(1, {{ case: 'under-vu-group' }}); }});
  delete exec.vu.tags.group;
}}
"#
    );
    let (run, _) = run_export(&dir, &script, &["--address", "", "-o", "json=out.json"]);
    run.assert_code(0);
    let points = points(&dir, "out.json");
    let vu = json!({"mytag": "x", "same": "vu", "run": "r", "sc": "s", "scenario": "main"});
    for m in ["http_reqs", "http_req_duration", "http_req_failed"] {
        assert_tags(
            &points,
            m,
            Some("before"),
            json!({"mytag": null, "same": "scenario", "run": "r", "sc": "s", "scenario": "main", "group": ""}),
        );
        // The VU's tags reach the request's samples (k6 puts them on every sample).
        assert_tags(&points, m, Some("plain"), vu.clone());
        assert_tags(
            &points,
            m,
            Some("plain"),
            json!({"method": "GET", "status": "200", "url": get, "name": get, "group": ""}),
        );
        // A request's tags win over the VU's; the request's own system tags win over both,
        // and a `name` replaces the `url` tag.
        assert_tags(
            &points,
            m,
            Some("over"),
            json!({"same": "req", "group": "G", "scenario": "S2", "mytag": "x", "method": "GET",
                   "status": "200", "proto": "HTTP/1.1", "expected_response": "true",
                   "name": "N", "url": "N"}),
        );
        // A `name` among the VU's tags names its requests, over a template's name too.
        assert_tags(
            &points,
            m,
            Some("vu-named"),
            json!({"name": "vn", "url": "vn"}),
        );
        assert_tags(
            &points,
            m,
            Some("vu-named-template"),
            json!({"name": "vn", "url": "vn"}),
        );
    }
    // A check's tags win over the VU's, and its `check` tag over them.
    assert_tags(
        &points,
        "checks",
        Some("check"),
        json!({"same": "chk", "check": "ok", "group": "G", "mytag": "x", "scenario": "main"}),
    );
    assert_tags(&points, "group_duration", None, vu.clone());
    assert_eq!(
        tags_of(&points, "group_duration", None)
            .iter()
            .map(|t| t["group"].as_str().unwrap().to_string())
            .collect::<Vec<_>>(),
        ["::g", "vg::h"],
        "a group nests under the group tag the VU has"
    );
    assert_tags(&points, "things", Some("in-group"), vu.clone());
    assert_tags(&points, "things", Some("in-group"), json!({"group": "::g"}));
    assert_tags(
        &points,
        "things",
        Some("own"),
        json!({"same": "ctr", "scenario": "S3", "mytag": "x", "group": ""}),
    );
    assert_tags(
        &points,
        "things",
        Some("under-vu-group"),
        json!({"group": "vg::h"}),
    );
    for m in [
        "iterations",
        "iteration_duration",
        "data_sent",
        "data_received",
    ] {
        assert_tags(&points, m, None, vu.clone());
        // The script deleted `group` from the VU's tags at the end: k6 leaves it off then.
        assert_tags(&points, m, None, json!({"group": null}));
    }
}

#[test]
fn system_tags_left_out_keep_user_tags_of_that_name() {
    let srv = TestServer::start();
    let dir = Dir::new("tag-system-off");
    let get = srv.url("/get");
    let script = format!(
        r#"
import http from 'k6/http';
import exec from 'k6/execution';
import {{ check, group }} from 'k6';
export const options = {{ iterations: 1, systemTags: ['status'] }};
export default function () {{
  exec.vu.tags.group = 'vg';
  http.get('{get}', {{ tags: {{ url: 'U', method: 'M', status: 'S' }} }});
  check(1, {{ ok: () => true }}, {{ case: 'outer', check: 'C' }});
  group('g', () => {{ check(1, {{ inner: () => true }}, {{ case: 'inner' }}); }});
}}
"#
    );
    let (run, export) = run_export(&dir, &script, &["--address", "", "-o", "json=out.json"]);
    run.assert_code(0);
    assert_eq!(metric(&export, "checks")["fails"], 0, "{export}");
    let points = points(&dir, "out.json");
    // As k6: only the enabled system tags are set; tags of the other names stay as given.
    assert_eq!(
        tags_of(&points, "http_reqs", None),
        [
            json!({"url": "U", "method": "M", "status": "200", "group": "vg"})
                .as_object()
                .cloned()
                .unwrap()
        ]
    );
    assert_tags(
        &points,
        "checks",
        Some("outer"),
        json!({"check": "C", "group": "vg", "scenario": null}),
    );
    // With `group` off, group() leaves the group tag alone.
    assert_tags(&points, "checks", Some("inner"), json!({"group": "vg"}));
}

#[test]
fn vu_tags_set_by_the_script_tag_later_samples() {
    let dir = Dir::new("vutags");
    let script = r#"
import exec from 'k6/execution';
import { Counter } from 'k6/metrics';
import { check } from 'k6';
const c = new Counter('my_counter');
export const options = { iterations: 3, tags: { global: 'g' },
  thresholds: { 'my_counter{foo:bar}': ['count==3'], 'my_counter{mt:x}': ['count==3'], 'iterations{foo:bar}': ['count>=2'] } };
export default function () {
  exec.vu.tags.foo = 'bar';
  exec.vu.metrics.tags.mt = 'x';
  let threw = false;
  try { exec.vu.tags.bad = { a: 1 }; } catch (e) { threw = e instanceof TypeError; }
  check(exec.vu.tags, {
    'object values throw': () => threw,
    'same map': (t) => t.mt === 'x' && exec.vu.metrics.tags.foo === 'bar',
    'system tags visible': (t) => t.scenario === 'default' && t.global === 'g' && t.group === '',
  });
  c.add(1);
}
"#;
    let (run, export) = run_export(&dir, script, &["--address", ""]);
    run.assert_code(0);
    assert_eq!(metric(&export, "checks")["fails"], 0, "{export}");
    assert_eq!(metric(&export, "checks")["passes"], 9, "{export}");
}

#[test]
fn run_tags_reach_the_engine_s_own_samples() {
    // k6-operator tells its runners apart by `--tag instance_id=N --tag testrun_name=…`:
    // the engine's gauges and dropped iterations must carry them as the VUs' samples do.
    let dir = Dir::new("run-tags-engine");
    let script = r#"
import { sleep } from 'k6';
export const options = { scenarios: {
  car: { executor: 'constant-arrival-rate', rate: 20, duration: '1200ms', preAllocatedVUs: 1, maxVUs: 1 },
} };
export default function () { sleep(0.2); }
"#;
    let (run, _) = run_export(
        &dir,
        script,
        &[
            "--tag",
            "instance_id=2",
            "--tag",
            "testrun_name=k6-sample",
            "-o",
            "json=out.json",
        ],
    );
    run.assert_code(0);
    let points = points(&dir, "out.json");
    let expected = json!({"instance_id": "2", "testrun_name": "k6-sample"});
    for m in ["vus", "vus_max", "dropped_iterations", "iterations"] {
        assert_tags(&points, m, None, expected.clone());
    }
    assert_tags(
        &points,
        "dropped_iterations",
        None,
        json!({"scenario": "car"}),
    );
}
