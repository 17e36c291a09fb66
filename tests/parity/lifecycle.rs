//! How often the init context runs, side by side with k6: once for the options, once per VU,
//! and once more for each of `setup()`, `teardown()` and the end-of-test summary, each on a
//! VU of its own (so a global set in `setup()` is not seen by `teardown()` or
//! `handleSummary()`); an ES and a CommonJS entry script alike.

use std::process::Command;

use super::{console_lines, k6};
use crate::{rk6, Dir};

const ESM_ALL: &str = "let g = 'init';\nconsole.log('init ' + __VU);\nexport const options = { vus: 2, iterations: 2 };\nexport function setup() { console.log('setup sees ' + g); g = 'setup'; return { a: 1 }; }\nexport default function () {}\nexport function teardown(d) { console.log('teardown sees ' + g + ' ' + JSON.stringify(d)); g = 'teardown'; }\nexport function handleSummary(data) { console.log('summary sees ' + g + ' ' + JSON.stringify(data.setup_data)); return {}; }\n";

const ESM_PLAIN: &str = "console.log('init');\nexport default function () {}\n";

const CJS_MAIN: &str = "console.log('init: this === exports ' + (this === exports));\nexports.options = { iterations: 2 };\nexports.default = function () { console.log('iteration'); };\nexports.setup = function () { return 1; };\n";

/// The console lines of `script` run with `flags`, under k6 and rk6, sorted (the VUs'
/// inits run concurrently).
fn both(bin: &str, name: &str, script: &str, flags: &[&str]) -> (Vec<String>, Vec<String>) {
    let dir = Dir::new(name);
    let path = dir.write("script.js", script);
    let mut args = vec!["run", "-q", "--address", ""];
    args.extend_from_slice(flags);
    args.push(path.to_str().unwrap());
    let theirs = Command::new(bin)
        .args(&args)
        .env("K6_NO_USAGE_REPORT", "true")
        .current_dir(&dir.0)
        .output()
        .expect("run k6");
    let ours = rk6(&args, &dir.0);
    let mut theirs = console_lines(&String::from_utf8_lossy(&theirs.stderr));
    let mut ours = console_lines(&ours.stderr);
    theirs.sort();
    ours.sort();
    (theirs, ours)
}

#[test]
fn init_runs_and_lifecycle_vus_agree_with_k6() {
    let Some(bin) = k6() else { return };
    let cases: &[(&str, &str, &[&str], usize)] = &[
        ("lifecycle-all", ESM_ALL, &[], 9),
        ("lifecycle-all-no-summary", ESM_ALL, &["--no-summary"], 7),
        ("lifecycle-all-no-setup", ESM_ALL, &["--no-setup"], 7),
        ("lifecycle-plain", ESM_PLAIN, &[], 3),
        (
            "lifecycle-plain-no-summary",
            ESM_PLAIN,
            &["--no-summary"],
            2,
        ),
        ("lifecycle-cjs", CJS_MAIN, &[], 6),
        ("lifecycle-cjs-no-summary", CJS_MAIN, &["--no-summary"], 5),
    ];
    for (name, script, flags, lines) in cases {
        let (theirs, ours) = both(&bin, name, script, flags);
        assert_eq!(theirs.len(), *lines, "{name}: k6 printed {theirs:?}");
        assert_eq!(ours, theirs, "{name}");
    }
}
