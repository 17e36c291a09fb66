//! The REST API side by side: the same paused, lingering test under k6 and rk6, driven
//! through the same calls (k6-operator's and the others), must answer the same status
//! codes, content types and documents (timings aside).

use std::io::Read;
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use super::k6;
use crate::support::{free_port, rest_call, KillOnPanic};
use crate::Dir;

const SCRIPT: &str = r#"
import { check, group } from 'k6';
import { Counter } from 'k6/metrics';
const c = new Counter('my_counter');
export const options = {
  scenarios: { s: { executor: 'shared-iterations', vus: 2, iterations: 4 } },
  thresholds: { my_counter: ['count>2'], 'iterations{scenario:s}': ['count>100'] },
};
export function setup() { return { token: 'abc', n: 42, nested: { b: 1, a: [1, 2] } }; }
export default function (data) {
  group('g1', () => { check(data, { 'token is <put> & set': (d) => d.token === 'put' }); c.add(1); });
}
export function teardown() { c.add(10); }
"#;

/// (status, content type, body) of one request.
fn call(address: &str, method: &str, path: &str, body: Option<&str>) -> (u16, String, String) {
    let (code, head, body) = rest_call(address, method, path, None, body);
    let content_type = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-type")
                .then(|| v.trim().to_owned())
        })
        .unwrap_or_default();
    (code, content_type, body)
}

/// The parts of a document that do not depend on timing: metrics sorted by id with their
/// counts and gauge values (trend statistics and counters' rates reduced to their keys);
/// error documents without Go's or serde's parse-error wording; the status without k6 2.3's
/// field; every other document as its exact text (field order, escaping, number forms).
fn normalize(path: &str, body: &str) -> Value {
    let Ok(mut doc) = serde_json::from_str::<Value>(body) else {
        return json!(body);
    };
    // k6 2.3's `execution_result` (release notes v2.3.0, #6388), which k6 1.1 lacks.
    if doc["data"]["type"] == "status" {
        if let Some(a) = doc["data"]["attributes"].as_object_mut() {
            a.remove("execution_result");
        }
        return json!(serde_json::to_string(&doc).unwrap());
    }
    if doc.get("errors").is_none() && !path.starts_with("/v1/metrics") {
        return json!(body);
    }
    if let Some(errors) = doc["errors"].as_array_mut() {
        for e in errors {
            if e["title"] == "Error parsing request body" || e["title"] == "Invalid data" {
                e["detail"] = json!("…");
            }
        }
        return doc;
    }
    let metric = |m: &Value| -> Value {
        let a = &m["attributes"];
        let sample: Map<String, Value> = a["sample"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| {
                let exact = a["type"] != "trend" && !(a["type"] == "counter" && k == "rate");
                (k.clone(), if exact { v.clone() } else { json!("…") })
            })
            .collect();
        json!({"type": m["type"], "id": m["id"], "type_": a["type"], "contains": a["contains"], "tainted": a["tainted"], "sample": sample})
    };
    match &doc["data"] {
        Value::Array(list) => {
            let mut list: Vec<Value> = list.iter().map(metric).collect();
            list.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
            json!(list)
        }
        one => metric(one),
    }
}

fn spawn(bin: &str, script: &std::path::Path, address: &str, dir: &Dir) -> Child {
    Command::new(bin)
        .args(["run", "-q", "--paused", "--linger", "--address", address])
        .arg(script)
        .env("K6_NO_USAGE_REPORT", "true")
        .env("NO_COLOR", "1")
        .current_dir(&dir.0)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn wait_for(address: &str, want_status: u64) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if TcpStream::connect(address).is_ok() {
            let (_, _, body) = call(address, "GET", "/v1/status", None);
            let doc: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
            if doc["data"]["attributes"]["status"] == want_status {
                return;
            }
        }
        assert!(
            Instant::now() < deadline,
            "{address}: never at status {want_status}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn rest_api_answers_as_k6_in_every_state() {
    let Some(k6_bin) = k6() else { return };
    let dir = Dir::new("parity-rest-api");
    let script = dir.write("api.js", SCRIPT);
    let k6_addr = format!("127.0.0.1:{}", free_port());
    let rk6_addr = format!("127.0.0.1:{}", free_port());
    let mut k6_child = spawn(&k6_bin, &script, &k6_addr, &dir);
    let mut rk6_child = spawn(env!("CARGO_BIN_EXE_rk6"), &script, &rk6_addr, &dir);
    let _reaper = KillOnPanic(vec![k6_child.id(), rk6_child.id()]);
    wait_for(&k6_addr, 4);
    wait_for(&rk6_addr, 4);
    // The paused gauges reach each engine's metrics a little after its API is up.
    for address in [&k6_addr, &rk6_addr] {
        let deadline = Instant::now() + Duration::from_secs(10);
        while call(address, "GET", "/v1/metrics/vus_max", None).0 != 200 {
            assert!(
                Instant::now() < deadline,
                "{address}: no vus_max while paused"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    let same = |method: &str, path: &str, body: Option<&str>| {
        let k = call(&k6_addr, method, path, body);
        let r = call(&rk6_addr, method, path, body);
        assert_eq!(
            (r.0, &r.1, normalize(path, &r.2)),
            (k.0, &k.1, normalize(path, &k.2)),
            "{method} {path}\n k6: {}\nrk6: {}",
            k.2,
            r.2
        );
    };
    // Paused before the start.
    for path in [
        "/v1/status",
        "/v1/setup",
        "/v1/metrics",
        "/v1/metrics/vus_max",
        "/v1/metrics/nope",
        "/v1/groups",
        "/v1/groups/d41d8cd98f00b204e9800998ecf8427e",
        "/v1/groups/nope",
        "/v1/nothing",
    ] {
        same("GET", path, None);
    }
    same("DELETE", "/v1/status", None);
    same("POST", "/v1/metrics", None);
    same("PATCH", "/v1/status", Some("xx"));
    same(
        "PATCH",
        "/v1/status",
        Some(r#"{"data":{"attributes":{"vus":3}}}"#),
    );
    same("PUT", "/v1/setup", Some("{bad"));
    same("POST", "/v1/setup", None);
    same("PUT", "/v1/setup", Some("null"));
    same("PUT", "/v1/setup", Some(""));
    same(
        "PUT",
        "/v1/setup",
        Some(r#"{"token":"put","z":[1,{"y":2.5e-3}],"h":"<&>"}"#),
    );
    same("GET", "/v1/setup", None);
    // The starter's PATCH, then the end (lingering).
    same(
        "PATCH",
        "/v1/status",
        Some(
            r#"{"data":{"attributes":{"paused":false,"stopped":false},"id":"default","type":"status"}}"#,
        ),
    );
    wait_for(&k6_addr, 9);
    wait_for(&rk6_addr, 9);
    // k6 hands the last samples (teardown's included) and the final threshold pass to its
    // metrics a moment after the status says 9.
    for address in [&k6_addr, &rk6_addr] {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let (_, _, body) = call(address, "GET", "/v1/metrics/my_counter", None);
            let doc: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
            let a = &doc["data"]["attributes"];
            if a["sample"]["count"] == 14 && !a["tainted"].is_null() {
                break;
            }
            assert!(Instant::now() < deadline, "{address}: {body}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    for path in [
        "/v1/status",
        "/v1/setup",
        "/v1/metrics",
        "/v1/metrics/my_counter",
        "/v1/metrics/iterations%7Bscenario:s%7D",
        "/v1/groups",
        "/v1/groups/9ccb03cc5acd728a2fe595bbd1f14da3",
    ] {
        same("GET", path, None);
    }
    same("POST", "/v1/teardown", None);
    same(
        "PATCH",
        "/v1/status",
        Some(r#"{"data":{"attributes":{"stopped":true},"id":"default","type":"status"}}"#),
    );
    // Pods deleted: both print their summary and exit with the same code.
    let mut codes = Vec::new();
    for child in [&mut k6_child, &mut rk6_child] {
        let pid = child.id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        let status = child.wait().unwrap();
        let mut err = String::new();
        let _ = child.stderr.take().unwrap().read_to_string(&mut err);
        codes.push((status.code(), err.contains("Error executing")));
    }
    assert_eq!(codes[1], codes[0], "rk6 vs k6 exit");
}
