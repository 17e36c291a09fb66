//! `k6/browser` on Debian's Chromium: side by side with the real k6 1.1.0 where it runs
//! the script (exit codes, checks, threshold verdicts, browser metric names and tags,
//! screenshots), rk6 alone for what k6 added after 1.1 (asserted as k6's documentation
//! describes it), isolation between VUs and iterations, failures, and that no Chromium
//! process outlives rk6.
//!
//! The site is the demo shop's storefront (`rk6 demo --serve-only`), the same one
//! `examples/browser.js` and `examples/hybrid.js` drive.

mod api;
mod failures;
mod isolation;
mod parity;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::free_port;
use crate::Dir;

/// Chromium's path when installed; CI installs Debian's and then requires it.
fn chromium() -> Option<&'static str> {
    let path = "/usr/bin/chromium";
    if Path::new(path).exists() {
        return Some(path);
    }
    if std::env::var_os("CI").is_some() {
        panic!("Chromium is required in CI for the browser tests (apt-get install chromium)");
    }
    eprintln!("Chromium not installed: skipping the browser test");
    None
}

/// The environment both k6 and rk6 run browsers with here: root needs `no-sandbox`.
fn browser_env(chromium: &str) -> Vec<(String, String)> {
    let mut env = vec![(
        "K6_BROWSER_EXECUTABLE_PATH".to_string(),
        chromium.to_string(),
    )];
    // SAFETY: getuid has no preconditions.
    if unsafe { libc::getuid() } == 0 {
        env.push(("K6_BROWSER_ARGS".into(), "no-sandbox".into()));
    }
    env
}

/// The demo shop on a free port of 127.0.0.1, served by `rk6 demo --serve-only`.
struct Shop {
    child: Child,
    base: String,
}

impl Shop {
    fn start() -> Shop {
        let port = free_port();
        let child = Command::new(env!("CARGO_BIN_EXE_rk6"))
            .args(["demo", "--serve-only", "--port", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the demo shop");
        let base = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "the demo shop did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Shop { child, base }
    }
}

impl Drop for Shop {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One run of a browser script by k6 or rk6.
struct BrowserRun {
    code: i32,
    stderr: String,
    export: Value,
    /// Every `Point` of `--out json`: (metric, tags).
    points: Vec<(String, BTreeMap<String, String>)>,
}

impl BrowserRun {
    /// The metric names seen, and for each the tag keys its samples carried.
    fn tag_keys(&self, prefix: &str) -> BTreeMap<String, BTreeSet<String>> {
        let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (metric, tags) in &self.points {
            if metric.starts_with(prefix) {
                out.entry(metric.clone())
                    .or_default()
                    .extend(tags.keys().cloned());
            }
        }
        out
    }
}

/// Runs `script` (in `dir`) with `bin` (k6's path, or None for rk6) and `env` added.
fn run_with(bin: Option<&str>, dir: &Dir, script: &Path, env: &[(String, String)]) -> BrowserRun {
    let run = run_once(bin, dir, script, env);
    // k6 1.1 sometimes fails to start its per-iteration Chromium when the machine is loaded
    // (the whole test suite runs at once): the reference gets a second try, rk6 none.
    let k6_failed_to_launch = run
        .stderr
        .contains("error building browser on IterStart: canceled");
    if bin.is_some() && k6_failed_to_launch {
        return run_once(bin, dir, script, env);
    }
    run
}

fn run_once(bin: Option<&str>, dir: &Dir, script: &Path, env: &[(String, String)]) -> BrowserRun {
    let tag = if bin.is_some() { "k6" } else { "rk6" };
    let export = dir.path(&format!("{tag}-summary.json"));
    let points = dir.path(&format!("{tag}-points.json"));
    let mut cmd = Command::new(bin.unwrap_or(env!("CARGO_BIN_EXE_rk6")));
    cmd.arg("run").arg("-q");
    if bin.is_some() {
        cmd.args(["--address", "127.0.0.1:0"]);
    }
    cmd.arg("--summary-export")
        .arg(&export)
        .arg("--out")
        .arg(format!("json={}", points.display()))
        .arg(script)
        .current_dir(&dir.0)
        .env("K6_NO_USAGE_REPORT", "true")
        .env("NO_COLOR", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let Output { status, stderr, .. } = cmd.output().expect("run the browser test");
    let export = std::fs::read_to_string(&export)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    let points = std::fs::read_to_string(&points)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "Point")
        .map(|v| {
            let tags = v["data"]["tags"]
                .as_object()
                .map(|t| {
                    t.iter()
                        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                        .collect()
                })
                .unwrap_or_default();
            (v["metric"].as_str().unwrap_or_default().to_string(), tags)
        })
        .collect();
    BrowserRun {
        code: status.code().unwrap_or(-1),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        export,
        points,
    }
}

/// The width and height a PNG's header declares.
fn png_size(bytes: &[u8]) -> Option<(u32, u32)> {
    if bytes.len() < 24 || &bytes[..8] != b"\x89PNG\r\n\x1a\n" || &bytes[12..16] != b"IHDR" {
        return None;
    }
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    Some((be(&bytes[16..20]), be(&bytes[20..24])))
}

/// Runs `script` with rk6 against the shop (`BASE_URL`), with the browser settings.
fn rk6_browser(name: &str, script: &str) -> Option<(BrowserRun, Dir)> {
    let chromium = chromium()?;
    let shop = Shop::start();
    let dir = Dir::new(name);
    let path = dir.write("script.js", script);
    let mut env = browser_env(chromium);
    env.push(("BASE_URL".into(), shop.base.clone()));
    let run = run_with(None, &dir, &path, &env);
    Some((run, dir))
}

/// (check name, passes, fails) of an export, as the parity tests compare them.
fn checks(run: &BrowserRun) -> Vec<(String, u64, u64)> {
    crate::parity::checks_of(&run.export)
}
