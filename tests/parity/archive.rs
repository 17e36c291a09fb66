//! Archives are interchangeable with k6 1.1.0: an archive k6 made runs in rk6 with k6's
//! checks and exit code, one rk6 made runs in k6 the same, and both write the same
//! `metadata.json` and the same entries for the same script, flags and environment.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::{checks, count, k6, run_k6, run_rk6, verdicts};
use crate::module_loading::server::{Answer, ModuleServer};
use crate::{rk6_env, Dir};

const MAIN: &str = r#"import { check, group } from 'k6';
import { greet } from './lib/util.js';
import { r } from 'REMOTE';
const users = JSON.parse(open('./data/users.json')).users;
export const options = { vus: 1, iterations: 1, thresholds: { checks: ['rate==1'] }, tags: { from: 'script' } };
export default function () {
  group('g', () => {
    check(users, {
      'opened in init': (u) => u.length === 3,
      'imported module': () => greet('x') === 'HI X',
      'remote module': () => r === 'remote',
      'env from -e': () => __ENV.WHO === 'arc',
    });
  });
}
"#;

fn project(name: &str, srv: &ModuleServer) -> (Dir, String) {
    let dir = Dir::new(name);
    dir.write("main.js", &MAIN.replace("REMOTE", &srv.url("/r.js")));
    dir.write(
        "lib/util.js",
        "import { up } from './deep/up.js';\nexport function greet(n) { return up('hi ' + n); }\n",
    );
    dir.write(
        "lib/deep/up.js",
        "export function up(s) { return s.toUpperCase(); }\n",
    );
    dir.write("data/users.json", r#"{"users":["a","b","c"]}"#);
    dir.write("data/unused.txt", "not read");
    let ca = dir
        .write("ca.pem", &srv.cert_pem)
        .to_string_lossy()
        .into_owned();
    (dir, ca)
}

fn server() -> ModuleServer {
    ModuleServer::start(&[("/r.js", Answer::File("export const r = 'remote';\n".into()))])
}

fn k6_archive(bin: &str, dir: &Dir, args: &[&str], env: &[(&str, &str)]) {
    let out = Command::new(bin)
        .arg("archive")
        .args(args)
        .env("K6_NO_USAGE_REPORT", "true")
        .envs(env.iter().copied())
        .current_dir(&dir.0)
        .output()
        .expect("run k6 archive");
    assert!(
        out.status.success(),
        "k6 archive: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn rk6_archive(dir: &Dir, args: &[&str], env: &[(&str, &str)]) {
    let mut all = vec!["archive"];
    all.extend_from_slice(args);
    rk6_env(&all, &dir.0, env).assert_code(0);
}

/// Runs `archive` under both and asserts the same exit code, checks and verdicts.
fn same_run(bin: &str, dir: &Dir, archive: &Path, what: &str) -> i32 {
    let k6 = run_k6(bin, archive, dir);
    let rk6 = run_rk6(archive, dir);
    assert_eq!(rk6.code, k6.code, "{what}: exit codes differ");
    assert_eq!(
        checks(&rk6.export),
        checks(&k6.export),
        "{what}: checks differ"
    );
    assert_eq!(
        verdicts(&rk6.export),
        verdicts(&k6.export),
        "{what}: verdicts differ"
    );
    assert_eq!(
        count(&rk6.export, "iterations"),
        count(&k6.export, "iterations"),
        "{what}: iterations differ"
    );
    k6.code
}

fn tar_entries(path: &Path) -> (Value, Vec<(String, char)>) {
    let bytes = std::fs::read(path).unwrap();
    let mut tar = tar::Archive::new(&bytes[..]);
    let mut meta = Value::Null;
    let mut names = Vec::new();
    for e in tar.entries().unwrap() {
        let e = e.unwrap();
        let name = e.path().unwrap().to_string_lossy().into_owned();
        let kind = match e.header().entry_type() {
            tar::EntryType::Directory => 'd',
            tar::EntryType::Link => 'h',
            _ => '-',
        };
        if name == "metadata.json" {
            meta = serde_json::from_reader(e).unwrap();
        }
        names.push((name, kind));
    }
    (meta, names)
}

#[test]
fn archives_made_by_either_run_in_both_alike() {
    let Some(bin) = k6() else { return };
    let srv = server();
    let (dir, ca) = project("parity-archive-run", &srv);
    let env = [("SSL_CERT_FILE", ca.as_str())];
    for (what, extra) in [("passing", &["-e", "WHO=arc"][..]), ("failing", &[][..])] {
        let mut args = vec!["-i", "2", "main.js"];
        args.extend_from_slice(extra);
        let k6_tar = format!("k6-{what}.tar");
        let rk6_tar = format!("rk6-{what}.tar");
        k6_archive(&bin, &dir, &[&args[..], &["-O", &k6_tar]].concat(), &env);
        rk6_archive(&dir, &[&args[..], &["-O", &rk6_tar]].concat(), &env);
        let expected = if what == "passing" { 0 } else { 99 };
        for tar in [&k6_tar, &rk6_tar] {
            let code = same_run(&bin, &dir, &dir.path(tar), &format!("{what} {tar}"));
            assert_eq!(code, expected, "{what} {tar}");
        }
    }
}

#[test]
fn metadata_and_entries_match_k6() {
    let Some(bin) = k6() else { return };
    let srv = server();
    let (dir, ca) = project("parity-archive-meta", &srv);
    dir.write("config.json", r#"{"userAgent": "from-config", "batch": 3}"#);
    let env = [
        ("SSL_CERT_FILE", ca.as_str()),
        ("K6_NO_TEARDOWN", "true"),
        ("K6_SUMMARY_TREND_STATS", "avg,p(99)"),
    ];
    for (what, args) in [
        (
            "flags",
            &[
                "-u",
                "3",
                "-d",
                "5s",
                "-e",
                "WHO=arc",
                "-e",
                "B=2",
                "--tag",
                "t=cli",
                "--no-setup",
                "-c",
                "config.json",
                "main.js",
            ][..],
        ),
        (
            "stages and exclude-env-vars",
            &[
                "-s",
                "1s:2",
                "-s",
                "2s:0",
                "-e",
                "WHO=arc",
                "--exclude-env-vars",
                "main.js",
            ][..],
        ),
        ("script alone", &["main.js"][..]),
    ] {
        k6_archive(&bin, &dir, &[args, &["-O", "k6.tar"]].concat(), &env);
        rk6_archive(&dir, &[args, &["-O", "rk6.tar"]].concat(), &env);
        let (k6_meta, k6_names) = tar_entries(&dir.path("k6.tar"));
        let (rk6_meta, rk6_names) = tar_entries(&dir.path("rk6.tar"));
        assert_eq!(rk6_meta, k6_meta, "{what}: metadata.json differs");
        assert_eq!(rk6_names, k6_names, "{what}: entries differ");
    }
    // Archiving an archive, as the operator's initializer may.
    k6_archive(
        &bin,
        &dir,
        &["k6.tar", "-e", "C=3", "-O", "k6-again.tar"],
        &[],
    );
    rk6_archive(&dir, &["k6.tar", "-e", "C=3", "-O", "rk6-again.tar"], &[]);
    let (k6_meta, k6_names) = tar_entries(&dir.path("k6-again.tar"));
    let (rk6_meta, rk6_names) = tar_entries(&dir.path("rk6-again.tar"));
    assert_eq!(rk6_meta, k6_meta, "archive of an archive: metadata.json");
    assert_eq!(rk6_names, k6_names, "archive of an archive: entries");
}
