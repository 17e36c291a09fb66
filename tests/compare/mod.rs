//! `rk6 compare` and `rk6 run --compare-to`: the table, the `--max-regression` gate and
//! its exit codes, on files rk6 writes and on one k6 1.1.0 wrote.
//!
//! `k6-1.1.0-export.json` is `k6 run --summary-export` of k6 1.1.0 for
//! `{vus: 2, duration: '1s', thresholds: {http_req_duration: ['p(95)<500']}}` with one
//! `http.get` of a local server and one check per iteration (its keys in Go's map order).

use std::path::{Path, PathBuf};

use crate::support::TestServer;
use crate::{rk6, Dir, Run};

fn k6_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/compare/k6-1.1.0-export.json")
}

/// A small rk6-shaped export: a latency p(95), a request rate and a check rate.
fn export(p95: f64, rate: f64, checks: f64) -> String {
    serde_json::json!({
        "metrics": {
            "http_req_duration": {"avg": p95 / 2.0, "p(95)": p95},
            "http_reqs": {"count": 100, "rate": rate},
            "checks": {"passes": 100, "fails": 0, "value": checks},
        },
        "root_group": {"name": "", "path": "", "id": "d41d8cd98f00b204e9800998ecf8427e",
                       "groups": {}, "checks": {}}
    })
    .to_string()
}

fn compare(dir: &Dir, args: &[&str]) -> Run {
    let mut all = vec!["compare"];
    all.extend_from_slice(args);
    rk6(&all, &dir.0)
}

#[test]
fn k6_and_rk6_files_side_by_side() {
    let srv = TestServer::start();
    let dir = Dir::new("compare-k6");
    dir.write(
        "script.js",
        &format!(
            "import http from 'k6/http';\nimport {{ check }} from 'k6';\n\
             export const options = {{ vus: 2, iterations: 20 }};\n\
             export default function () {{ check(http.get('{}'), {{ ok: (r) => r.status === 200 }}); }}\n",
            srv.url("/get")
        ),
    );
    rk6(
        &["run", "-q", "--summary-export", "rk6.json", "script.js"],
        &dir.0,
    )
    .assert_code(0);
    let k6 = k6_fixture();
    let run = compare(
        &dir,
        &[
            k6.to_str().unwrap(),
            "rk6.json",
            "--max-regression",
            "checks:rate=-1%",
            "--max-regression",
            "http_req_failed:rate=0%",
        ],
    );
    run.assert_code(0);
    let out = &run.stdout;
    assert!(
        out.contains(&format!(
            "█ COMPARISON  BASE {} → NEW rk6.json",
            k6.display()
        )),
        "{out}"
    );
    // Every metric of the k6 file is read, its Rates under the thresholds' stat name.
    for name in [
        "http_req_duration{expected_response:true}",
        "http_req_tls_handshaking",
        "iteration_duration",
        "vus_max",
        "data_sent",
    ] {
        assert!(
            out.lines().any(|l| l.trim_start().starts_with(name)),
            "{name}\n{out}"
        );
    }
    let row = |metric: &str, stat: &str| -> Vec<String> {
        let mut current = "";
        for line in out.lines() {
            let cells: Vec<&str> = line.split_whitespace().collect();
            let cells = match cells.len() {
                5 => {
                    current = cells[0];
                    cells[1..].to_vec()
                }
                4 => cells,
                _ => continue,
            };
            if current == metric && cells[0] == stat {
                return cells.iter().map(|c| c.to_string()).collect();
            }
        }
        panic!("no row {metric} {stat}\n{out}")
    };
    assert_eq!(row("checks", "rate"), ["rate", "1", "1", "0.0%"]);
    assert_eq!(row("iterations", "count")[1..3], ["1513", "20"]);
    assert_eq!(row("http_req_failed", "fails")[1], "1513");
    assert!(
        out.contains("✓ checks:rate=-1%: 0.0% (1 → 1), allowed -1%"),
        "{out}"
    );
    assert!(out.contains("2 limits held"), "{out}");
}

#[test]
fn limits_decide_the_exit_code_in_either_direction() {
    let dir = Dir::new("compare-limits");
    dir.write("base.json", &export(10.0, 100.0, 1.0));
    dir.write("slower.json", &export(12.0, 90.0, 0.97));
    let code = |limits: &[&str]| {
        let mut args = vec!["base.json", "slower.json"];
        for l in limits {
            args.extend(["--max-regression", l]);
        }
        compare(&dir, &args).code
    };
    assert_eq!(code(&[]), 0);
    // p(95) rose 20 %.
    assert_eq!(code(&["http_req_duration:p(95)=25%"]), 0);
    assert_eq!(code(&["http_req_duration:p(95)=10%"]), 99);
    // A rise is no drop, and a drop no rise.
    assert_eq!(code(&["http_req_duration:p(95)=-1%"]), 0);
    assert_eq!(code(&["http_reqs:rate=50%"]), 0);
    // The request rate fell 10 %, the check rate 3 %.
    assert_eq!(code(&["http_reqs:rate=-15%"]), 0);
    assert_eq!(code(&["http_reqs:rate=-5%"]), 99);
    assert_eq!(code(&["checks:rate=-5%", "checks:value=-2%"]), 99);
    assert_eq!(code(&["checks:rate=-5%", "http_reqs:rate=-15%"]), 0);

    let run = compare(
        &dir,
        &[
            "base.json",
            "slower.json",
            "--max-regression",
            "http_req_duration:p(95)=10%",
            "--max-regression",
            "http_reqs:rate=-15%",
        ],
    );
    run.assert_code(99);
    assert!(
        run.stdout
            .contains("✗ http_req_duration:p(95)=10%: +20.0% (10 → 12), allowed +10%"),
        "{}",
        run.stdout
    );
    assert!(run
        .stdout
        .contains("✓ http_reqs:rate=-15%: -10.0% (100 → 90), allowed -15%"));
    assert!(run.stdout.contains("1 of 2 limits exceeded"));
    // NO_COLOR is set by the harness, and stdout is a pipe: no escapes either way.
    assert!(!run.stdout.contains('\x1b'));
}

#[test]
fn markdown_for_ci_comments() {
    let dir = Dir::new("compare-md");
    dir.write("base.json", &export(10.0, 100.0, 1.0));
    dir.write("new.json", &export(12.0, 100.0, 1.0));
    let run = compare(
        &dir,
        &[
            "base.json",
            "new.json",
            "--format",
            "markdown",
            "--max-regression",
            "http_req_duration:p(95)=10%",
        ],
    );
    run.assert_code(99);
    assert_eq!(
        run.stdout,
        "### rk6 run comparison

BASE `base.json` → NEW `new.json`

**1 of 1 limit exceeded**

| | limit | change | base → new | allowed |
|---|---|---:|---|---:|
| ❌ | `http_req_duration:p(95)=10%` | +20.0% | 10 → 12 | +10% |

<details><summary>All 7 stats</summary>

| metric | stat | base | new | change |
|---|---|---:|---:|---:|
| checks | rate | 1 | 1 | 0.0% |
| checks | passes | 100 | 100 | 0.0% |
| checks | fails | 0 | 0 | 0.0% |
| http_req_duration | avg | 5 | 6 | +20.0% |
| http_req_duration | p(95) | 10 | 12 | +20.0% |
| http_reqs | count | 100 | 100 | 0.0% |
| http_reqs | rate | 100 | 100 | 0.0% |

</details>
"
    );
}

#[test]
fn unusable_limits_and_files_exit_104_naming_them() {
    let dir = Dir::new("compare-104");
    dir.write("base.json", &export(10.0, 100.0, 1.0));
    dir.write("new.json", &export(10.0, 100.0, 1.0));
    dir.write("broken.json", "{\"metrics\": ");
    dir.write("other.json", "{\"state\": {}}");
    let fails = |args: &[&str], says: &str| {
        let run = compare(&dir, args);
        run.assert_code(104);
        assert!(run.stderr.contains(says), "{says}\n{}", run.stderr);
        assert!(run.stdout.is_empty(), "{}", run.stdout);
    };
    fails(
        &[
            "base.json",
            "new.json",
            "--max-regression",
            "http_req_duration:p95=10%",
        ],
        "invalid --max-regression \"http_req_duration:p95=10%\": unknown stat \"p95\"",
    );
    fails(
        &[
            "base.json",
            "new.json",
            "--max-regression",
            "http_req_duration:p(95)=10",
        ],
        "must be a percentage",
    );
    fails(
        &["base.json", "missing.json"],
        "cannot read the summary missing.json",
    );
    fails(
        &["broken.json", "new.json"],
        "cannot read the summary broken.json: not JSON",
    );
    fails(
        &["base.json", "other.json"],
        "other.json: no \"metrics\" object",
    );
    fails(
        &["base.json", "new.json", "--max-regression", "vus:value=10%"],
        "metric \"vus\" is not in the BASE summary base.json",
    );
}

#[test]
fn run_compare_to_prints_the_comparison_and_gates_the_run() {
    let dir = Dir::new("compare-run");
    dir.write(
        "script.js",
        "export const options = { iterations: 5 };\nexport default function () {}\n",
    );
    dir.write(
        "base.json",
        r#"{"metrics": {"iterations": {"count": 10, "rate": 1000}}, "root_group": {}}"#,
    );
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "-q", "--compare-to", "base.json"];
        args.extend_from_slice(extra);
        args.push("script.js");
        rk6(&args, &dir.0)
    };
    let held = run(&["--max-regression", "iterations:count=-60%"]);
    held.assert_code(0);
    let summary = held.stdout.find("█ TOTAL RESULTS").expect("summary");
    let table = held
        .stdout
        .find("█ COMPARISON  BASE base.json → NEW this run");
    assert!(table.is_some_and(|t| t > summary), "{}", held.stdout);
    assert!(
        held.stdout
            .contains("✓ iterations:count=-60%: -50.0% (10 → 5), allowed -60%"),
        "{}",
        held.stdout
    );

    let exceeded = run(&["--max-regression", "iterations:count=-10%"]);
    exceeded.assert_code(99);
    assert!(exceeded.stdout.contains("✗ iterations:count=-10%"));
    assert!(
        exceeded
            .stderr
            .contains("run comparison: --max-regression limits exceeded: iterations:count=-10%"),
        "{}",
        exceeded.stderr
    );

    // The run's own failed threshold still fails it when the comparison holds.
    dir.write(
        "script.js",
        "export const options = { iterations: 5, thresholds: { iterations: ['count>100'] } };\n\
         export default function () {}\n",
    );
    run(&["--max-regression", "iterations:count=-60%"]).assert_code(99);

    // A bad limit or BASE is refused before the test runs.
    let bad = run(&["--max-regression", "iterations:count"]);
    bad.assert_code(104);
    assert!(
        bad.stderr.contains("invalid --max-regression"),
        "{}",
        bad.stderr
    );
    assert!(!bad.stdout.contains("TOTAL RESULTS"));
    let orphan = rk6(
        &[
            "run",
            "-q",
            "--max-regression",
            "iterations:count=1%",
            "script.js",
        ],
        &dir.0,
    );
    orphan.assert_code(104);
    assert!(
        orphan.stderr.contains("needs --compare-to"),
        "{}",
        orphan.stderr
    );
}
