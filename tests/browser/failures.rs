//! A browser that cannot start, a script outside a browser scenario, elements that never
//! appear: k6 1.1.0's exit codes and messages; and no Chromium outlives rk6, however it
//! ends.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{browser_env, chromium, run_with, Shop};
use crate::parity::k6;
use crate::Dir;

const NEW_PAGE: &str = r#"
import { browser } from 'k6/browser';
export const options = { scenarios: { ui: { executor: 'shared-iterations', SCENARIO_OPTIONS } } };
export default async function () {
  const page = await browser.newPage();
  await page.close();
}
"#;

/// Runs a script that opens a page under k6 and rk6 with `scenario_options` and `env`;
/// returns (rk6's code, rk6's stderr, k6's code, k6's stderr).
fn both(
    name: &str,
    scenario_options: &str,
    env: &[(String, String)],
) -> Option<(i32, String, i32, String)> {
    chromium()?;
    let bin = k6()?;
    let dir = Dir::new(name);
    let path = dir.write(
        "script.js",
        &NEW_PAGE.replace("SCENARIO_OPTIONS", scenario_options),
    );
    let theirs = run_with(Some(&bin), &dir, &path, env);
    let ours = run_with(None, &dir, &path, env);
    Some((ours.code, ours.stderr, theirs.code, theirs.stderr))
}

#[test]
fn a_browser_outside_a_browser_scenario_is_refused_as_in_k6() {
    let Some(chromium) = chromium() else { return };
    let msg = "browser not found in registry. make sure to set browser type option in scenario definition in order to use the browser module";
    let Some((code, err, k6_code, k6_err)) =
        both("browser-no-type", "iterations: 1", &browser_env(chromium))
    else {
        return;
    };
    assert_eq!(code, k6_code, "{err}");
    assert!(k6_err.contains(msg), "{k6_err}");
    assert!(
        err.contains(&format!("Uncaught (in promise) {msg}")),
        "{err}"
    );
}

#[test]
fn an_unknown_browser_type_aborts_as_in_k6() {
    let Some(chromium) = chromium() else { return };
    let msg = "error building browser on IterStart: initializing browser type: error parsing browser options: unsupported browser type: firefox";
    let opts = "options: { browser: { type: 'firefox' } }";
    let Some((code, err, k6_code, k6_err)) = both("browser-firefox", opts, &browser_env(chromium))
    else {
        return;
    };
    assert_eq!((code, k6_code), (108, 108), "{err}\n{k6_err}");
    assert!(k6_err.contains(msg) && err.contains(msg), "{err}");
}

#[test]
fn a_missing_browser_aborts_as_in_k6() {
    let env = vec![(
        "K6_BROWSER_EXECUTABLE_PATH".to_string(),
        "/nonexistent/chromium".to_string(),
    )];
    let opts = "options: { browser: { type: 'chromium' } }";
    let msg = "error building browser on IterStart: finding browser executable: k6 couldn't detect google chrome or a chromium-supported browser on the given path: /nonexistent/chromium";
    let Some((code, err, k6_code, k6_err)) = both("browser-missing", opts, &env) else {
        return;
    };
    assert_eq!((code, k6_code), (108, 108), "{err}\n{k6_err}");
    assert!(k6_err.contains(msg) && err.contains(msg), "{err}");
}

/// Element waits time out with k6's words for each action (seen from k6 1.1.0), the
/// iteration goes on, and the test ends.
#[test]
fn actions_on_missing_elements_time_out_with_k6s_messages() {
    let Some(chromium) = chromium() else { return };
    let Some(bin) = k6() else { return };
    let shop = Shop::start();
    let dir = Dir::new("browser-timeouts");
    let script = r##"
import { browser } from 'k6/browser';
import { check } from 'k6';
export const options = { scenarios: { ui: { executor: 'shared-iterations', options: { browser: { type: 'chromium' } } } } };
export default async function () {
  const page = await browser.newPage();
  await page.goto(`${__ENV.BASE_URL}/shop/login`);
  const L = (s) => page.locator(s);
  const cases = {
    'clicking on "#nope": timed out after 300ms': () => L('#nope').click({ timeout: 300 }),
    'filling "#nope" with "x": timed out after 300ms': () => L('#nope').fill('x', { timeout: 300 }),
    'typing "x" in "#nope": timed out after 300ms': () => L('#nope').type('x', { timeout: 300 }),
    'checking "#nope": timed out after 300ms': () => L('#nope').check({ timeout: 300 }),
    'getting text content of "#nope": timed out after 300ms': () => L('#nope').textContent({ timeout: 300 }),
    'getting attribute "x" of "#nope": timed out after 300ms': () => L('#nope').getAttribute('x', { timeout: 300 }),
    'waiting for "#nope": timed out after 300ms': () => L('#nope').waitFor({ timeout: 300 }),
    'waiting for selector "#nope": timed out after 300ms': () => page.waitForSelector('#nope', { timeout: 300 }),
    'filling "h1" with "x": element is not an <input>, <textarea> or [contenteditable] element': () => L('h1').fill('x', { timeout: 300 }),
    'new page: existing browser context must be closed before creating a new one': () => browser.newPage(),
    'waiting for navigation: timed out after 300ms': () => page.waitForNavigation({ timeout: 300 }),
  };
  for (const [want, f] of Object.entries(cases)) {
    let got = 'no error';
    try { await f(); } catch (e) { got = String(e); }
    check(got, { [want]: (g) => g === want });
  }
  await page.close();
}
"##;
    let path = dir.write("script.js", script);
    let mut env = browser_env(chromium);
    env.push(("BASE_URL".into(), shop.base.clone()));
    let theirs = run_with(Some(&bin), &dir, &path, &env);
    let ours = run_with(None, &dir, &path, &env);
    let failed = |r: &super::BrowserRun| -> Vec<String> {
        super::checks(r)
            .into_iter()
            .filter(|(_, _, f)| *f > 0)
            .map(|(n, _, _)| n)
            .collect()
    };
    assert!(
        failed(&theirs).is_empty(),
        "k6 disagrees with the expected messages: {:?}",
        failed(&theirs)
    );
    assert!(
        failed(&ours).is_empty(),
        "{:?}\n{}",
        failed(&ours),
        ours.stderr
    );
    assert_eq!(ours.code, theirs.code);
}

/// The pids of Chromium processes whose command line names `marker`.
fn chromium_pids(marker: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&cmd);
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Zombies are gone already; they wait only for their parent to reap them.
        let zombie = stat
            .rsplit(')')
            .next()
            .is_some_and(|r| r.trim_start().starts_with('Z'));
        if cmd.contains(marker) && !zombie {
            out.push(pid);
        }
    }
    out
}

/// SIGINT, SIGTERM or SIGKILL in the middle of a browser iteration: rk6 ends and every
/// Chromium process it started ends with it.
#[test]
fn no_chromium_outlives_rk6() {
    let Some(chromium) = chromium() else { return };
    let shop = Shop::start();
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGKILL] {
        let dir = Dir::new("browser-signals");
        let path = dir.write(
            "script.js",
            r#"
import { browser } from 'k6/browser';
export const options = { scenarios: { ui: { executor: 'constant-vus', vus: 2, duration: '30s', options: { browser: { type: 'chromium' } } } } };
export default async function () {
  const page = await browser.newPage();
  await page.goto(`${__ENV.BASE_URL}/shop/login`);
  await page.waitForTimeout(200);
  await page.close();
}
"#,
        );
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_rk6"));
        cmd.args(["run", "-q"])
            .arg(&path)
            .current_dir(&dir.0)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        for (k, v) in browser_env(chromium) {
            cmd.env(k, v);
        }
        cmd.env("BASE_URL", &shop.base);
        let mut child = cmd.spawn().unwrap();
        let marker = format!("rk6-browser-{}-", child.id());
        let deadline = Instant::now() + Duration::from_secs(20);
        while chromium_pids(&marker).is_empty() {
            assert!(Instant::now() < deadline, "rk6 started no Chromium");
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(500));
        // SAFETY: signals the child this test started.
        unsafe { libc::kill(child.id() as i32, signal) };
        let status = child.wait().unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while !chromium_pids(&marker).is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(
            chromium_pids(&marker).is_empty(),
            "Chromium outlived rk6 after signal {signal} ({status:?})"
        );
    }
}

/// Chromium killed in the middle of a test: the iteration it served fails, and the next
/// iteration gets a new Chromium, so the test goes on (k6 starts a browser per iteration,
/// so there a crash costs one iteration too).
#[test]
fn a_killed_chromium_is_started_again_for_the_next_iteration() {
    let Some(chromium) = chromium() else { return };
    let shop = Shop::start();
    let dir = Dir::new("browser-relaunch");
    let path = dir.write(
        "script.js",
        r#"
import { browser } from 'k6/browser';
import { check } from 'k6';
export const options = { scenarios: { ui: { executor: 'per-vu-iterations', vus: 1, iterations: 8, options: { browser: { type: 'chromium' } } } } };
export default async function () {
  const page = await browser.newPage();
  try {
    await page.goto(`${__ENV.BASE_URL}/shop/login`);
    await page.waitForTimeout(250);
    check(await page.title(), { 'page shown': (t) => t.length > 0 });
  } finally {
    await page.close().catch(() => {});
  }
}
"#,
    );
    let export = dir.0.join("summary.json");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rk6"));
    cmd.args(["run", "-q", "--summary-export"])
        .arg(&export)
        .arg(&path)
        .current_dir(&dir.0)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in browser_env(chromium) {
        cmd.env(k, v);
    }
    cmd.env("BASE_URL", &shop.base);
    let child = cmd.spawn().unwrap();
    let marker = format!("rk6-browser-{}-", child.id());
    let deadline = Instant::now() + Duration::from_secs(20);
    let main_process = loop {
        // The browser process is the one without a `--type=` (renderer, gpu, ...).
        let main = chromium_pids(&marker).into_iter().find(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| !String::from_utf8_lossy(&c).contains("--type="))
        });
        if let Some(pid) = main {
            break pid;
        }
        assert!(Instant::now() < deadline, "rk6 started no Chromium");
        std::thread::sleep(Duration::from_millis(50));
    };
    std::thread::sleep(Duration::from_millis(800));
    // SAFETY: kills a Chromium the rk6 this test started launched.
    unsafe { libc::kill(main_process as i32, libc::SIGKILL) };
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&export).unwrap()).unwrap();
    let check = &summary["root_group"]["checks"]["page shown"];
    let passes = check["passes"].as_u64().unwrap_or(0);
    // Killed at about the third iteration: without a new browser every later one fails.
    assert!(
        passes >= 5,
        "only {passes} of 8 iterations passed after the kill:\n{stderr}"
    );
    assert_eq!(summary["metrics"]["iterations"]["count"], 8, "{stderr}");
}
