//! `rk6 archive` and running or inspecting the archive: the same checks as the script, the
//! archive's own files (the disk is not read again), its options and `__ENV`, remote modules
//! kept inside, and the binary invoked as `k6`.

use std::path::Path;

use serde_json::Value;

use crate::module_loading::server::{Answer, ModuleServer};
use crate::{assert_checks, count, rk6, rk6_env, run_file, Dir, Run};

const MAIN: &str = r#"import { check } from 'k6';
import { greet } from './lib/util.js';
const users = JSON.parse(open('./data/users.json')).users;
const extra = __ENV.OPEN_EXTRA ? open('./data/extra.txt') : '';
export const options = { vus: 1, iterations: 1, thresholds: { checks: ['rate==1'] } };
export default function () {
  check(users, {
    'opened in init': (u) => u.length === 3,
    'imported module': () => greet('x') === 'HI X',
    'env from -e': () => __ENV.WHO === 'arc',
  });
}
"#;

fn project(name: &str) -> Dir {
    let dir = Dir::new(name);
    dir.write("main.js", MAIN);
    dir.write(
        "lib/util.js",
        "import { up } from './deep/up.js';\nexport function greet(n) { return up('hi ' + n); }\n",
    );
    dir.write(
        "lib/deep/up.js",
        "export function up(s) { return s.toUpperCase(); }\n",
    );
    dir.write("data/users.json", r#"{"users":["a","b","c"]}"#);
    dir.write("data/extra.txt", "extra");
    dir.write("data/unused.txt", "not read by the script");
    dir
}

/// (name, kind) of every entry: `d` directory, `h` hard link, `-` file.
fn entries(archive: &Path) -> Vec<(String, char)> {
    let bytes = std::fs::read(archive).unwrap();
    let mut tar = tar::Archive::new(&bytes[..]);
    tar.entries()
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let kind = match e.header().entry_type() {
                tar::EntryType::Directory => 'd',
                tar::EntryType::Link => 'h',
                _ => '-',
            };
            (e.path().unwrap().to_string_lossy().into_owned(), kind)
        })
        .collect()
}

fn metadata(archive: &Path) -> Value {
    let bytes = std::fs::read(archive).unwrap();
    let mut tar = tar::Archive::new(&bytes[..]);
    for e in tar.entries().unwrap() {
        let e = e.unwrap();
        if e.path().unwrap().to_str() == Some("metadata.json") {
            return serde_json::from_reader(e).unwrap();
        }
    }
    panic!("no metadata.json");
}

fn archive(dir: &Dir, args: &[&str]) -> Run {
    let mut all = vec!["archive"];
    all.extend_from_slice(args);
    rk6(&all, &dir.0)
}

#[test]
fn archive_then_run_gives_the_scripts_checks_from_the_archives_files() {
    let dir = project("archive-run");
    // The script run directly, with the flags the archive records.
    let (direct, export) = run_file(&dir, "main.js", &["-e", "WHO=arc", "-i", "3"], &[]);
    assert_checks(&direct, &export, 9.0);
    let made = archive(
        &dir,
        &["-e", "WHO=arc", "-i", "3", "-O", "test.tar", "main.js"],
    );
    made.assert_code(0);
    assert_eq!(made.stdout, "", "k6 prints nothing");
    let tar = dir.path("test.tar");
    let root = dir.0.to_string_lossy().trim_start_matches('/').to_string();
    let names: Vec<(String, char)> = entries(&tar);
    let file = |p: &str| format!("file/{root}/{p}");
    for (name, kind) in [
        ("metadata.json".to_string(), '-'),
        ("data".to_string(), '-'),
        (file("data/users.json"), '-'),
        (file("lib/util.js"), '-'),
        (file("lib/deep/up.js"), '-'),
        (file("main.js"), 'h'),
        (file("lib/deep"), 'd'),
        ("file".to_string(), 'd'),
    ] {
        assert!(names.contains(&(name.clone(), kind)), "{name}: {names:?}");
    }
    assert!(
        !names.iter().any(|(n, _)| n.ends_with("unused.txt")),
        "only files the init context read: {names:?}"
    );
    let meta = metadata(&tar);
    assert_eq!(meta["type"], "js");
    assert_eq!(meta["options"]["iterations"], 3);
    assert_eq!(meta["options"]["vus"], 1);
    assert_eq!(meta["options"]["thresholds"]["checks"][0], "rate==1");
    assert_eq!(meta["env"], serde_json::json!({"WHO": "arc"}));
    assert_eq!(
        meta["filename"],
        format!("file://{}/main.js", dir.0.display())
    );
    assert_eq!(meta["pwd"], format!("file://{}", dir.0.display()));
    assert_eq!(meta["compatibilityMode"], "extended");
    assert_eq!(meta["k6version"], "1.1.0");

    // The archive's files are what the run reads: with the sources gone it runs unchanged.
    for gone in ["main.js", "lib", "data/users.json"] {
        let p = dir.path(gone);
        let _ = std::fs::remove_file(&p).or_else(|_| std::fs::remove_dir_all(&p));
    }
    let (run, export) = run_file(&dir, "test.tar", &[], &[]);
    assert_checks(&run, &export, 9.0);
    assert_eq!(count(&export, "iterations"), 3.0);
    // Flags still go over the archive's options and environment.
    let (run, export) = run_file(&dir, "test.tar", &["-i", "1", "-e", "WHO=other"], &[]);
    run.assert_code(99);
    assert_eq!(count(&export, "iterations"), 1.0);
    // A file the init context did not read is not in the archive, although it is on disk.
    let (run, _) = run_file(&dir, "test.tar", &["-e", "OPEN_EXTRA=1"], &[]);
    assert_eq!(run.code, 107, "{}", run.stderr);
    assert!(
        run.stderr.contains("data/extra.txt: file does not exist"),
        "{}",
        run.stderr
    );
}

#[test]
fn inspect_reads_an_archive() {
    let dir = project("archive-inspect");
    archive(
        &dir,
        &[
            "-u", "4", "-d", "10s", "-e", "WHO=arc", "-O", "t.tar", "main.js",
        ],
    )
    .assert_code(0);
    let run = rk6(&["inspect", "--execution-requirements", "t.tar"], &dir.0);
    run.assert_code(0);
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    // The flags replaced the script's iterations shortcut, as k6 consolidates them.
    assert_eq!(v["vus"], 4);
    assert_eq!(v["duration"], "10s");
    assert_eq!(v["iterations"], Value::Null);
    assert_eq!(v["maxVUs"], 4);
    assert_eq!(v["totalDuration"], "40s");
    assert_eq!(v["scenarios"]["default"]["executor"], "constant-vus");
    let plain = rk6(&["inspect", "t.tar"], &dir.0);
    plain.assert_code(0);
    let v: Value = serde_json::from_str(&plain.stdout).unwrap();
    assert_eq!(v["vus"], 4);
    assert!(v.get("maxVUs").is_none());
}

#[test]
fn remote_modules_travel_inside_the_archive() {
    let srv = ModuleServer::start(&[
        (
            "/lib/a.js",
            Answer::File("import { b } from './b.js';\nexport const a = 'a' + b;\n".into()),
        ),
        ("/lib/b.js", Answer::File("export const b = 'b';\n".into())),
    ]);
    let dir = Dir::new("archive-remote");
    let ca = dir
        .write("ca.pem", &srv.cert_pem)
        .to_string_lossy()
        .into_owned();
    dir.write(
        "main.js",
        &format!(
            "import {{ check }} from 'k6';\nimport {{ a }} from '{}';\nexport const options = {{ iterations: 2 }};\nexport default function () {{ check(a, {{ 'remote': (v) => v === 'ab' }}); }}\n",
            srv.url("/lib/a.js")
        ),
    );
    let made = rk6_env(&["archive", "main.js"], &dir.0, &[("SSL_CERT_FILE", &ca)]);
    made.assert_code(0);
    let names = entries(&dir.path("archive.tar"));
    let host = format!("https/{}", srv.addr);
    for p in ["", "/lib", "/lib/a.js", "/lib/b.js"] {
        assert!(
            names.iter().any(|(n, _)| *n == format!("{host}{p}")),
            "{host}{p}: {names:?}"
        );
    }
    let downloads = srv.all_hits().values().sum::<usize>();
    // No certificate to trust and no download: the modules come from the archive.
    let (run, export) = run_file(&dir, "archive.tar", &[], &[]);
    assert_checks(&run, &export, 2.0);
    assert_eq!(srv.all_hits().values().sum::<usize>(), downloads);
}

#[test]
fn invoked_as_k6_it_is_rk6() {
    let dir = project("archive-as-k6");
    let k6 = dir.path("bin/k6");
    std::fs::create_dir_all(k6.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_rk6"), &k6).unwrap();
    let k6_cmd = |args: &[&str]| {
        let out = std::process::Command::new(&k6)
            .args(args)
            .current_dir(&dir.0)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, stdout, _) = k6_cmd(&["version"]);
    assert_eq!(code, 0);
    assert!(stdout.starts_with("k6 v1.1.0 (rk6 v"), "{stdout}");
    // The operator's initializer: archive, then inspect the archive.
    let (code, _, stderr) = k6_cmd(&["archive", "main.js", "-e", "WHO=arc", "-O", "a.tar"]);
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) = k6_cmd(&["inspect", "--execution-requirements", "a.tar"]);
    assert_eq!(code, 0, "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["maxVUs"], 1);
    let export = dir.path("s.json");
    let (code, _, stderr) = k6_cmd(&[
        "run",
        "-q",
        "--address",
        "127.0.0.1:0",
        "--summary-export",
        export.to_str().unwrap(),
        "a.tar",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let export: Value = serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    assert_eq!(export["metrics"]["checks"]["passes"], 3);
}

#[test]
fn grpc_proto_files_are_archived() {
    let dir = Dir::new("archive-grpc");
    dir.write(
        "protos/sub/common.proto",
        "syntax = \"proto3\"; package common; message Note { string text = 1; }\n",
    );
    dir.write(
        "protos/svc.proto",
        "syntax = \"proto3\"; package demo; import \"sub/common.proto\";\nservice Demo { rpc Say(common.Note) returns (common.Note); }\n",
    );
    dir.write(
        "main.js",
        r#"import grpc from 'k6/net/grpc';
import { check } from 'k6';
const client = new grpc.Client();
const methods = client.load(['protos'], 'svc.proto');
export const options = { iterations: 1 };
export default function () { check(methods, { 'loaded': (m) => m.length === 1 && m[0].full_method === '/demo.Demo/Say' }); }
"#,
    );
    archive(&dir, &["main.js"]).assert_code(0);
    let root = dir.0.to_string_lossy().trim_start_matches('/').to_string();
    let names = entries(&dir.path("archive.tar"));
    for p in ["protos/svc.proto", "protos/sub/common.proto"] {
        let name = format!("file/{root}/{p}");
        assert!(names.contains(&(name.clone(), '-')), "{name}: {names:?}");
    }
    std::fs::remove_dir_all(dir.path("protos")).unwrap();
    let (run, export) = run_file(&dir, "archive.tar", &[], &[]);
    assert_checks(&run, &export, 1.0);
}

#[test]
fn archive_refuses_a_test_that_cannot_run() {
    let dir = Dir::new("archive-refuses");
    for (script, code) in [
        (
            "export const options = { scenarios: { s: { executor: 'constant-vus', vus: -1, duration: '1s' } } };\nexport default function () {}\n",
            104,
        ),
        (
            "export const options = { scenarios: { s: { executor: 'shared-iterations', exec: 'nope' } } };\nexport function other() {}\n",
            104,
        ),
        ("export default function () {}\nthrow new Error('init boom');\n", 107),
    ] {
        dir.write("t.js", script);
        let run = archive(&dir, &["t.js"]);
        assert_eq!(run.code, code, "{script}\n{}", run.stderr);
        assert!(!dir.path("archive.tar").exists(), "{script}");
    }
}
