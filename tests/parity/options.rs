//! Option values of every kind — right and wrong JSON types, k6's integer, duration and
//! boolean rules, in a script, a config file and the `K6_*` environment — accepted or
//! refused by rk6 as k6 1.1 accepts or refuses them, with the same exit code.

use std::process::Command;

use super::k6;
use crate::{rk6_env, Dir};

/// (options literal, extra environment): each is run as `export const options = …` with a
/// default function that does nothing.
const CASES: &[(&str, &[(&str, &str)])] = &[
    // booleans: true, false or null only
    ("{iterations: 1, noConnectionReuse: 'x'}", &[]),
    ("{iterations: 1, noConnectionReuse: 1}", &[]),
    ("{iterations: 1, noConnectionReuse: null}", &[]),
    ("{iterations: 1, paused: 'true'}", &[]),
    ("{iterations: 1, throw: 1}", &[]),
    ("{iterations: 1, discardResponseBodies: 'yes'}", &[]),
    ("{iterations: 1, insecureSkipTLSVerify: 'false'}", &[]),
    // strings
    ("{iterations: 1, userAgent: 1}", &[]),
    ("{iterations: 1, userAgent: true}", &[]),
    ("{iterations: 1, userAgent: ''}", &[]),
    ("{iterations: 1, httpDebug: true}", &[]),
    ("{iterations: 1, summaryTimeUnit: 1}", &[]),
    // integers: whole numbers in int64, decimal strings, '' unset
    ("{iterations: 1, maxRedirects: true}", &[]),
    ("{iterations: 1, maxRedirects: '3'}", &[]),
    ("{iterations: 1, maxRedirects: 'x'}", &[]),
    ("{iterations: 1, maxRedirects: 1.5}", &[]),
    ("{iterations: 1, maxRedirects: ''}", &[]),
    ("{iterations: 1, vus: 'x'}", &[]),
    ("{iterations: 1, vus: '1'}", &[]),
    ("{iterations: 1, vus: 1e20}", &[]),
    ("{iterations: '1'}", &[]),
    ("{iterations: 1e20}", &[]),
    ("{iterations: 1, batch: 2.5}", &[]),
    ("{iterations: 1, batch: '3'}", &[]),
    ("{iterations: 1, rps: 'x'}", &[]),
    ("{iterations: 1, metricSamplesBufferSize: 'x'}", &[]),
    (
        "{stages: [{duration: '1s', target: 100000000000000000000}]}",
        &[],
    ),
    // k6's sanity limit on ramping VUs, refused before anything is allocated
    ("{stages: [{duration: '1s', target: 100000001}]}", &[]),
    (
        "{scenarios: {r: {executor: 'ramping-vus', startVUs: 1000000000000, stages: [{duration: '1s', target: 0}]}}}",
        &[],
    ),
    ("{stages: [{duration: '1s', target: 1.5}]}", &[]),
    ("{stages: [{duration: '1s', target: -1}]}", &[]),
    // durations: Go strings with k6's days, numbers as milliseconds
    ("{iterations: 1, setupTimeout: '1d'}", &[]),
    ("{iterations: 1, setupTimeout: '1.5d'}", &[]),
    ("{iterations: 1, setupTimeout: '-1s'}", &[]),
    ("{iterations: 1, setupTimeout: 0}", &[]),
    ("{iterations: 1, setupTimeout: 1500}", &[]),
    ("{iterations: 1, setupTimeout: true}", &[]),
    ("{iterations: 1, setupTimeout: '10x'}", &[]),
    ("{iterations: 1, teardownTimeout: '-1s'}", &[]),
    ("{iterations: 1, minIterationDuration: true}", &[]),
    ("{iterations: 1, minIterationDuration: 'x'}", &[]),
    ("{duration: true}", &[]),
    ("{duration: '-1s'}", &[]),
    ("{stages: [{duration: true, target: 1}]}", &[]),
    ("{stages: [{target: 1}]}", &[]),
    // lists and maps
    ("{iterations: 1, tags: {a: 1}}", &[]),
    ("{iterations: 1, tags: 'a'}", &[]),
    ("{iterations: 1, tags: {a: 'b'}}", &[]),
    ("{iterations: 1, stages: 'x'}", &[]),
    ("{iterations: 1, summaryTrendStats: 'avg'}", &[]),
    ("{iterations: 1, summaryTrendStats: [1]}", &[]),
    ("{iterations: 1, summaryTrendStats: ['avg', 'foo']}", &[]),
    ("{iterations: 1, systemTags: 'status'}", &[]),
    ("{iterations: 1, thresholds: 'x'}", &[]),
    ("{iterations: 1, thresholds: {http_reqs: 'count>0'}}", &[]),
    ("{iterations: 1, hosts: 'x'}", &[]),
    ("{iterations: 1, hosts: {'a.test': 1}}", &[]),
    // any host text is taken (k6 dials the local system for one that is not an IP); only a
    // port that is not an integer is refused
    ("{iterations: 1, hosts: {'a.test': 'y com'}}", &[]),
    ("{iterations: 1, hosts: {'a.test': '127.0.0.1:65536'}}", &[]),
    ("{iterations: 1, hosts: {'a.test': '127.0.0.1:abc'}}", &[]),
    ("{iterations: 1, hosts: {'a.test': ''}}", &[]),
    ("{iterations: 1, blockHostnames: 'x'}", &[]),
    ("{iterations: 1, blacklistIPs: [1]}", &[]),
    ("{iterations: 1, dns: 'x'}", &[]),
    ("{iterations: 1, dns: {ttl: 5}}", &[]),
    ("{iterations: 1, dns: {ttl: '1d'}}", &[]),
    ("{iterations: 1, tlsVersion: 12}", &[]),
    ("{iterations: 1, tlsCipherSuites: 'x'}", &[]),
    ("{iterations: 1, tlsAuth: 'x'}", &[]),
    ("{iterations: 1, executionSegment: 1}", &[]),
    ("{iterations: 1, executionSegment: 'x'}", &[]),
    ("{iterations: 1, ext: 'x'}", &[]),
    ("{iterations: 1, scenarios: 'x'}", &[]),
    // scenario fields follow the same rules
    (
        "{scenarios: {a: {executor: 'shared-iterations', vus: '1', iterations: 1}}}",
        &[],
    ),
    (
        "{scenarios: {a: {executor: 'shared-iterations', vus: 1.5, iterations: 1}}}",
        &[],
    ),
    (
        "{scenarios: {a: {executor: 'shared-iterations', vus: 1, iterations: 1e20}}}",
        &[],
    ),
    (
        "{scenarios: {a: {executor: 'shared-iterations', maxDuration: '1d'}}}",
        &[],
    ),
    (
        "{scenarios: {a: {executor: 'shared-iterations', maxDuration: true}}}",
        &[],
    ),
    (
        "{scenarios: {a: {executor: 'shared-iterations', exec: 1}}}",
        &[],
    ),
    (
        "{scenarios: {a: {executor: 'shared-iterations', tags: {x: 1}}}}",
        &[],
    ),
    (
        "{scenarios: {a: {executor: 'shared-iterations', env: {x: 1}}}}",
        &[],
    ),
    (
        "{scenarios: {a: {executor: 'shared-iterations', startTime: '-1s'}}}",
        &[],
    ),
    (
        "{scenarios: {a: {executor: 'shared-iterations', gracefulStop: '-1s'}}}",
        &[],
    ),
    ("{scenarios: {a: {executor: 1}}}", &[]),
    (
        "{scenarios: {a: {executor: 'constant-vus', vus: 1, duration: '-1s'}}}",
        &[],
    ),
    (
        "{scenarios: {a: {executor: 'ramping-vus', stages: [{duration: '1s', target: 1e20}]}}}",
        &[],
    ),
    (
        "{scenarios: {a: {executor: 'ramping-vus', gracefulRampDown: '-1s', stages: [{duration: '100ms', target: 1}]}}}",
        &[],
    ),
    // K6_* text: booleans are exactly true/false, integers Go's ParseInt, durations k6's
    ("{iterations: 1}", &[("K6_NO_SETUP", "true")]),
    ("{iterations: 1}", &[("K6_NO_SETUP", "1")]),
    ("{iterations: 1}", &[("K6_NO_SETUP", "True")]),
    ("{iterations: 1}", &[("K6_NO_SETUP", "")]),
    ("{iterations: 1}", &[("K6_INSECURE_SKIP_TLS_VERIFY", "yes")]),
    ("{iterations: 1}", &[("K6_THROW", "1")]),
    ("{iterations: 1}", &[("K6_VUS", "x")]),
    ("{iterations: 1}", &[("K6_VUS", " 2")]),
    ("{iterations: 1}", &[("K6_VUS", "1.5")]),
    ("{iterations: 1}", &[("K6_ITERATIONS", "1e3")]),
    ("{iterations: 1}", &[("K6_SETUP_TIMEOUT", "1d")]),
    ("{iterations: 1}", &[("K6_SETUP_TIMEOUT", "x")]),
    ("{iterations: 1}", &[("K6_DURATION", "x")]),
    ("{iterations: 1}", &[("K6_MIN_ITERATION_DURATION", "x")]),
    ("{iterations: 1}", &[("K6_SUMMARY_TREND_STATS", "avg,foo")]),
    ("{iterations: 1}", &[("K6_METRIC_SAMPLES_BUFFER_SIZE", "x")]),
    // An object where an integer goes is Go's `NullInt64` struct: `{}` is 0.
    ("{iterations: 1, rps: {}}", &[]),
    ("{iterations: 1, batch: {}, batchPerHost: {}}", &[]),
    ("{vus: {}, iterations: 1}", &[]),
    ("{vus: {Int64: 2}, iterations: 2}", &[]),
    ("{vus: {Int64: 'x'}, iterations: 1}", &[]),
    ("{stages: [{duration: '1s', target: {}}]}", &[]),
    // Several wrong at once: the first k6 checks decides the exit code.
    ("{iterations: 1, summaryTrendStats: ['p(x)'], dns: {ttl: 'bad'}}", &[]),
    ("{iterations: 1, dns: {select: 'bogus', ttl: 'bad'}}", &[]),
    ("{dns: {policy: 'bogus'}, scenarios: {a: {executor: 'nope'}}}", &[]),
    ("{summaryTrendStats: ['zz'], scenarios: {a: {executor: 'constant-vus', vus: -1}}}", &[]),
    ("{dns: {ttl: 'bad'}, scenarios: {a: {executor: 'nope'}}}", &[]),
    ("{dns: {ttl: 'bad'}, scenarios: {a: {executor: 'constant-vus', vus: -1}}}", &[]),
];

/// Config files (`-c`): the same types, and the file's own errors.
const CONFIG_CASES: &[&str] = &[
    r#"{"vus": "x"}"#,
    r#"{"vus": 1e20}"#,
    r#"{"noConnectionReuse": "x"}"#,
    r#"{"setupTimeout": "1d"}"#,
    r#"{"summaryTrendStats": ["foo"]}"#,
    r#"[1]"#,
];

fn k6_code(bin: &str, dir: &Dir, args: &[&str], env: &[(&str, &str)]) -> i32 {
    let mut cmd = Command::new(bin);
    cmd.args(["run", "-q", "--no-summary", "--address", "127.0.0.1:0"])
        .args(args)
        .env("K6_NO_USAGE_REPORT", "true")
        .current_dir(&dir.0);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run k6");
    out.status.code().unwrap_or(-1)
}

fn rk6_code(dir: &Dir, args: &[&str], env: &[(&str, &str)]) -> (i32, String) {
    let mut all = vec!["run", "-q", "--no-summary", "--address", "127.0.0.1:0"];
    all.extend_from_slice(args);
    let run = rk6_env(&all, &dir.0, env);
    (run.code, run.stderr)
}

#[test]
fn option_values_are_accepted_or_refused_as_k6_does() {
    let Some(bin) = k6() else { return };
    let dir = Dir::new("options-parity");
    let mut differences = Vec::new();
    for (i, (options, env)) in CASES.iter().enumerate() {
        let name = format!("s{i}.js");
        let path = dir.write(
            &name,
            // Sleeping keeps the looping cases light (and rk6's saturation warning away).
            &format!("import {{ sleep }} from 'k6';\nexport const options = {options};\nexport default function () {{ sleep(0.2); }}\n"),
        );
        let path = path.to_str().unwrap();
        let theirs = k6_code(&bin, &dir, &[path], env);
        let (ours, stderr) = rk6_code(&dir, &[path], env);
        if ours != theirs {
            differences.push(format!(
                "{options} {env:?}: k6 {theirs}, rk6 {ours}: {}",
                stderr.lines().last().unwrap_or("")
            ));
        }
    }
    let script = dir.write("c.js", "export default function () {}\n");
    let script = script.to_str().unwrap();
    for (i, config) in CONFIG_CASES.iter().enumerate() {
        let file = dir.write(&format!("c{i}.json"), config);
        let args = ["-c", file.to_str().unwrap(), script];
        let theirs = k6_code(&bin, &dir, &args, &[]);
        let (ours, stderr) = rk6_code(&dir, &args, &[]);
        if ours != theirs {
            differences.push(format!(
                "config {config}: k6 {theirs}, rk6 {ours}: {}",
                stderr.lines().last().unwrap_or("")
            ));
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// Script options, command-line flags, environment.
type LayerCase = (
    &'static str,
    &'static [&'static str],
    &'static [(&'static str, &'static str)],
);

/// How the layers decide the execution.
const EXECUTION_CASES: &[LayerCase] = &[
    // A layer that sets the execution replaces the lower layers' shortcuts and scenarios.
    ("{vus: 2, iterations: 5}", &["--duration", "1s"], &[]),
    ("{duration: '1s'}", &["--iterations", "3"], &[]),
    (
        "{stages: [{duration: '1s', target: 2}]}",
        &["--iterations", "3"],
        &[],
    ),
    ("{duration: '1s'}", &[], &[("K6_ITERATIONS", "2")]),
    (
        "{scenarios: {s: {executor: 'per-vu-iterations', iterations: 2}}}",
        &["--duration", "1s"],
        &[],
    ),
    // `--vus` over a script's scenarios, and `vus` alone, follow k6 2.1 (release notes
    // v2.1.0, #5794) where k6 1.1 ignored them: tests/k6_after_1_1.
    // Within one layer they add up or conflict.
    ("{iterations: 3, duration: '2s'}", &[], &[]),
    (
        "{iterations: 3, stages: [{duration: '1s', target: 1}]}",
        &[],
        &[],
    ),
    (
        "{duration: '1s', stages: [{duration: '1s', target: 1}]}",
        &[],
        &[],
    ),
    ("{scenarios: {}, iterations: 3}", &[], &[]),
    (
        "{scenarios: {s: {executor: 'per-vu-iterations'}}, duration: '1s'}",
        &[],
        &[],
    ),
    (
        "{scenarios: {s: {executor: 'per-vu-iterations'}}, stages: [{duration: '1s', target: 1}]}",
        &[],
        &[],
    ),
    // Nothing sets it: 1 iteration of 1 VU, with k6's warnings.
    ("{stages: []}", &[], &[]),
    ("{scenarios: {}}", &[], &[]),
    // Every validation problem of every scenario, in one report (exit 104).
    ("{scenarios: {b: {executor: 'constant-vus', vus: 0}}}", &[], &[]),
    (
        "{scenarios: {b: {executor: 'constant-vus', vus: 0}, a: {executor: 'ramping-vus', startVUs: -1, startTime: '-1s', stages: [{duration: '-1s', target: -1}, {}]}, c: {executor: 'constant-arrival-rate', rate: 0, timeUnit: '0s', duration: '0s', preAllocatedVUs: -1, maxVUs: -3}, ok: {executor: 'shared-iterations'}}}",
        &[],
        &[],
    ),
    ("{vus: 4, iterations: 2}", &[], &[]),
    ("{scenarios: {e: {executor: 'ramping-arrival-rate', startRate: -1, timeUnit: '-1s', stages: [], preAllocatedVUs: -1, maxVUs: -2}, g: {executor: 'externally-controlled', vus: -1, maxVUs: -2, duration: '-1s', gracefulStop: '1s'}}}", &[], &[]),
];

/// The scenario lines of the banner and the warning/error messages of a run.
fn execution_view(out: &std::process::Output) -> (i32, Vec<String>) {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = text
        .lines()
        .filter_map(|l| {
            let t = l.trim();
            if t.starts_with("* ") {
                return Some(t.to_owned());
            }
            // rk6's own saturation self-check, which k6 has not, depends on the machine.
            if l.contains("the load generator was saturated") {
                return None;
            }
            // rk6 keeps what k6 2.0 removed (`--no-summary` here) with a line k6 1.1 has not.
            if l.contains("deprecated and k6 2.0 removed it") {
                return None;
            }
            let level = ["level=warning", "level=error"]
                .iter()
                .find(|x| l.contains(*x))?;
            Some(format!(
                "{level} {}",
                scenario_lines_sorted(&logfmt_msg(l)?)
            ))
        })
        .collect();
    (out.status.code().unwrap_or(-1), lines)
}

#[test]
fn execution_layers_agree_with_k6() {
    let Some(bin) = k6() else { return };
    let dir = Dir::new("parity-execution-layers");
    let mut differ = Vec::new();
    for (i, (options, flags, env)) in EXECUTION_CASES.iter().enumerate() {
        let path = dir.write(
            &format!("e{i}.js"),
            // Sleeping keeps the looping cases light (and rk6's saturation warning away).
            &format!("import {{ sleep }} from 'k6';\nexport const options = {options};\nexport default function () {{ sleep(0.2); }}\n"),
        );
        let run = |program: &str| {
            Command::new(program)
                .args(["run", "--no-summary", "--address", "127.0.0.1:0"])
                .args(*flags)
                .arg(&path)
                .env("K6_NO_USAGE_REPORT", "true")
                .envs(env.iter().copied())
                .current_dir(&dir.0)
                .output()
                .expect("run")
        };
        let k6_view = execution_view(&run(&bin));
        let rk6_view = execution_view(&run(env!("CARGO_BIN_EXE_rk6")));
        if k6_view != rk6_view {
            differ.push(format!(
                "{options} {flags:?} {env:?}\n  k6:  {k6_view:?}\n  rk6: {rk6_view:?}"
            ));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// A validation report with its per-scenario lines sorted: k6 lists failing scenarios in
/// Go's map order, which changes from run to run.
fn scenario_lines_sorted(msg: &str) -> String {
    let mut parts: Vec<&str> = msg.split("\n\t- ").collect();
    if parts.len() > 2 {
        parts[1..].sort_unstable();
    }
    parts.join("\n\t- ")
}

/// The `msg="…"` value of a logfmt line, unescaped up to its closing quote.
fn logfmt_msg(line: &str) -> Option<String> {
    let rest = &line[line.find("msg=\"")? + 5..];
    let mut out = String::new();
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push(match chars.next()? {
                'n' => '\n',
                't' => '\t',
                c => c,
            }),
            '"' => return Some(out),
            c => out.push(c),
        }
    }
    None
}

/// Command-line flags k6 parses itself: each refused one ends with exit 255 and pflag's or
/// k6's words, the accepted ones run.
const FLAG_CASES: &[&[&str]] = &[
    &["--vus", "x"],
    &["-u", "99999999999999999999"],
    &["-u", "+2", "-i", "2"],
    &["--iterations", "1.5"],
    &["--duration", "1d"],
    &["--duration", "5"],
    &["--duration", "1x"],
    &["--duration="],
    &["--max-redirects", "x"],
    &["--batch", "x"],
    &["--rps", "x"],
    &["--bogus"],
    &["--stage", "1s:2"],
    &["-s", "1s:2,1s:0"],
    &["-s", "1s:2", "-s", "1s"],
    &["-s", ":2"],
    &["-s", "1s:x"],
    &["-s", "1d:1"],
    &["-s", "1s:2", "-s", "5:1"],
    &["-s", "1s:-1"],
    &["-s", "1s:1", "-i", "2"],
];

#[test]
fn command_line_flags_are_read_as_k6_reads_them() {
    let Some(bin) = k6() else { return };
    let dir = Dir::new("parity-flags");
    let path = dir.write(
        "script.js",
        "import { sleep } from 'k6';\nexport default function () { sleep(0.2); }\n",
    );
    let mut differ = Vec::new();
    for flags in FLAG_CASES {
        let run = |program: &str| {
            Command::new(program)
                .args(["run", "--no-summary", "--address", "127.0.0.1:0"])
                .args(*flags)
                .arg(&path)
                .env("K6_NO_USAGE_REPORT", "true")
                .current_dir(&dir.0)
                .output()
                .expect("run")
        };
        let k6_view = execution_view(&run(&bin));
        let rk6_view = execution_view(&run(env!("CARGO_BIN_EXE_rk6")));
        if k6_view != rk6_view {
            differ.push(format!(
                "{flags:?}\n  k6:  {k6_view:?}\n  rk6: {rk6_view:?}"
            ));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

#[test]
fn outputs_that_cannot_be_created_exit_as_in_k6() {
    let Some(bin) = k6() else { return };
    let dir = Dir::new("parity-output-codes");
    dir.write("s.js", "export default function () {}\n");
    for out in ["nope", "csv=x.csv,badkey=1", "json"] {
        let args = ["-o", out, "s.js"];
        let k6 = k6_code(&bin, &dir, &args, &[]);
        let (rk6, stderr) = rk6_code(&dir, &args, &[]);
        assert_eq!(rk6, k6, "-o {out}: {stderr}");
    }
}
