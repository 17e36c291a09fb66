//! The k6 modules beyond HTTP: `k6/experimental/fs` and `k6/experimental/csv` (and the
//! data-driven example using them), `k6/secrets` with `--secret-source`, and the modules
//! k6 1.1 has that rk6 rejects.

use crate::support::TestServer;
use crate::{rk6, run_file, Dir};

/// The data-driven example (fs + csv), run against a local server from a copy of
/// examples/.
#[test]
fn the_data_driven_example_runs() {
    let srv = TestServer::start();
    let dir = Dir::new("example-data-driven");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let script = std::fs::read_to_string(root.join("data-driven.js")).unwrap();
    let users = std::fs::read_to_string(root.join("data/users.csv")).unwrap();
    dir.write("data-driven.js", &script);
    dir.write("data/users.csv", &users);
    let (run, summary) = run_file(&dir, "data-driven.js", &[], &[("BASE_URL", &srv.url(""))]);
    run.assert_code(0);
    let checks = &summary["root_group"]["checks"];
    for name in [
        "login answered",
        "record has every column",
        "parser and parse agree",
    ] {
        assert_eq!(checks[name]["passes"], 8, "{name}: {checks}");
        assert_eq!(checks[name]["fails"], 0, "{name}: {checks}");
    }
}

#[test]
fn fs_files_are_per_vu_and_open_only_in_init() {
    let dir = Dir::new("fs-vus");
    dir.write("data.txt", "0123456789");
    dir.write(
        "fs.js",
        r#"
import { open, SeekMode } from 'k6/experimental/fs';
import { check } from 'k6';
const file = await open('data.txt');
// per-vu-iterations: shared iterations may all go to one VU on a loaded machine, as in k6.
export const options = { scenarios: { s: { executor: 'per-vu-iterations', vus: 3, iterations: 2 } } };
export default async function () {
  // Each VU's File has its own offset: its two iterations read 0-3 then 4-7.
  const buf = new Uint8Array(4);
  const n = await file.read(buf);
  const text = String.fromCharCode(...buf.slice(0, n));
  check(text, { 'own offset': (t) => t === '0123' || t === '4567' });
  let err = '';
  try { await open('data.txt'); } catch (e) { err = String(e); }
  check(err, { 'open only in init': (e) => e === 'ForbiddenError: open() failed; reason: opening a file is allowed only in the Init context' });
  check(await file.stat(), { 'stat': (s) => s.name === 'data.txt' && s.size === 10 });
}
"#,
    );
    let (run, summary) = run_file(&dir, "fs.js", &[], &[]);
    run.assert_code(0);
    let checks = &summary["root_group"]["checks"];
    for name in ["own offset", "open only in init", "stat"] {
        assert_eq!(checks[name]["passes"], 6, "{name}: {checks}");
    }
}

#[test]
fn csv_errors_reach_the_script() {
    let dir = Dir::new("csv-errors");
    dir.write("bad.csv", "a,b\nc,d,e\n");
    let path = dir.write(
        "csv.js",
        r#"
import { open } from 'k6/experimental/fs';
import csv from 'k6/experimental/csv';
const f = await open('bad.csv');
let err;
try { await csv.parse(f); } catch (e) { err = String(e); }
console.log(`parse: ${err}`);
export default function () {}
"#,
    );
    let run = rk6(
        &["run", "-q", "--iterations", "1", path.to_str().unwrap()],
        &dir.0,
    );
    run.assert_code(0);
    assert!(
        run.stderr.contains(
            "parse: GoError: failed to read record; reason: record on line 2: wrong number of fields"
        ),
        "{}",
        run.stderr
    );
}

const SECRETS: &str = r#"
import secrets from 'k6/secrets';
export const options = { iterations: 1 };
export default async function () {
  const v = await secrets.get('cool');
  console.log(`got ${v} (${v.length})`);
  console.log(`other ${await secrets.source('other').get('cool')}`);
  try { await secrets.get('nope'); } catch (e) { console.log(`missing: ${e}`); }
  try { await secrets.source('zzz').get('cool'); } catch (e) { console.log(`unknown: ${e}`); }
  throw new Error(`boom ${v}`);
}
"#;

#[test]
fn secrets_are_read_from_sources_and_redacted_from_logs() {
    let dir = Dir::new("secrets");
    dir.write("s.txt", "cool=fromfile\n");
    let path = dir.write("s.js", SECRETS);
    let run = rk6(
        &[
            "run",
            "-q",
            "--secret-source=mock=default,cool=s3cret",
            "--secret-source=file=name=other,s.txt",
            path.to_str().unwrap(),
        ],
        &dir.0,
    );
    run.assert_code(0);
    let err = &run.stderr;
    assert!(!err.contains("s3cret"), "{err}");
    assert!(!err.contains("fromfile"), "{err}");
    for line in [
        "msg=\"got ***SECRET_REDACTED*** (6)\"",
        "msg=\"other ***SECRET_REDACTED***\"",
        "msg=\"missing: no value\"",
        "msg=\"unknown: no secret source with name \\\"zzz\\\" is configured\"",
        "boom ***SECRET_REDACTED***",
    ] {
        assert!(err.contains(line), "{line} in {err}");
    }
}

#[test]
fn bad_secret_sources_exit_255() {
    let dir = Dir::new("secrets-bad");
    let path = dir.write("s.js", SECRETS);
    for (flag, msg) in [
        (
            "--secret-source=bogus=x",
            "no secret source for type \\\"bogus\\\" for configuration \\\"bogus=x\\\"",
        ),
        (
            "--secret-source=mock=novalue",
            "parsing \\\"novalue\\\", needs =",
        ),
        (
            "--secret-source=file=missing.txt",
            "open missing.txt: no such file or directory",
        ),
    ] {
        let run = rk6(&["run", "-q", flag, path.to_str().unwrap()], &dir.0);
        run.assert_code(255);
        assert!(run.stderr.contains(msg), "{flag}: {}", run.stderr);
    }
    let run = rk6(&["run", "-q", path.to_str().unwrap()], &dir.0);
    run.assert_code(0);
    assert!(
        run.stderr.contains("no secret sources are configured"),
        "{}",
        run.stderr
    );
}

#[test]
fn unsupported_k6_modules_say_what_to_use() {
    let dir = Dir::new("unsupported-modules");
    for (spec, hint) in [
        ("k6/crypto/x509", "certificate parsing is not planned yet"),
        ("k6/experimental/redis", "Redis tests need k6"),
    ] {
        let path = dir.write(
            "m.js",
            &format!("import m from '{spec}';\nexport default function () {{}}\n"),
        );
        let run = rk6(&["run", "-q", path.to_str().unwrap()], &dir.0);
        run.assert_code(107);
        let want = format!("the module {spec} is not supported by rk6: {hint}");
        assert!(run.stderr.contains(&want), "{want} in {}", run.stderr);
    }
    // k6/experimental/streams (k6 1.1) and k6/websockets (k6 1.6) load now: tests/later_modules.
    for spec in ["k6/experimental/streams", "k6/websockets"] {
        let path = dir.write(
            "w.js",
            &format!("import * as m from '{spec}';\nexport default function () {{}}\n"),
        );
        let run = rk6(&["run", "-q", path.to_str().unwrap()], &dir.0);
        run.assert_code(0);
    }
    let path = dir.write(
        "x.js",
        "import m from 'k6/x/sql';\nexport default function () {}\n",
    );
    let run = rk6(&["run", "-q", path.to_str().unwrap()], &dir.0);
    run.assert_code(107);
    assert!(
        run.stderr
            .contains("unknown module: k6/x/sql (rk6 has no k6 extensions"),
        "{}",
        run.stderr
    );
}
