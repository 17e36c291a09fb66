//! Browser journeys side by side with k6 1.1.0 on the demo shop's storefront.

use std::collections::BTreeSet;

use super::{browser_env, checks, chromium, png_size, run_with, Shop};
use crate::parity::{k6, verdicts_of};
use crate::Dir;

/// The browser metrics every page load of the storefront gives, in k6 and rk6 alike
/// (`fid` and `inp` depend on input timing, so they are compared only by their tags).
const ALWAYS: [&str; 8] = [
    "browser_data_received",
    "browser_data_sent",
    "browser_http_req_duration",
    "browser_http_req_failed",
    "browser_web_vital_cls",
    "browser_web_vital_fcp",
    "browser_web_vital_lcp",
    "browser_web_vital_ttfb",
];

/// Runs `example` (a file of `examples/`) under k6 and rk6 against the same shop and
/// compares what a CI gate and a dashboard see.
fn compare_example(example: &str) {
    let Some(chromium) = chromium() else { return };
    let Some(bin) = k6() else { return };
    let shop = Shop::start();
    let dir = Dir::new(&format!("browser-{example}"));
    let source =
        std::fs::read_to_string(format!("{}/examples/{example}", env!("CARGO_MANIFEST_DIR")))
            .unwrap();
    let path = dir.write(example, &source);
    let mut env = browser_env(chromium);
    env.push(("BASE_URL".into(), shop.base.clone()));
    let theirs = run_with(Some(&bin), &dir, &path, &env);
    let shots_k6: Vec<_> = shots(&dir);
    let _ = std::fs::remove_dir_all(dir.path("screenshots"));
    let ours = run_with(None, &dir, &path, &env);
    assert_eq!(
        ours.code, theirs.code,
        "{example}: exit codes differ\n--- rk6\n{}\n--- k6\n{}",
        ours.stderr, theirs.stderr
    );
    // An arrival-rate scenario's count depends on when the run ends (k6 itself varies by
    // an iteration or two): the same checks, none failing, counts within 5 %.
    let (mine, k6s) = (checks(&ours), checks(&theirs));
    let names = |c: &[(String, u64, u64)]| {
        c.iter()
            .map(|(n, _, f)| (n.clone(), *f))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names(&mine),
        names(&k6s),
        "{example}: checks differ\n{}",
        ours.stderr
    );
    for ((name, a, _), (_, b, _)) in mine.iter().zip(&k6s) {
        let (a, b) = (*a as f64, *b as f64);
        assert!(
            (a - b).abs() <= (0.05 * b).max(1.0),
            "{example}: {name} passed {a} times in rk6, {b} in k6"
        );
    }
    assert_eq!(
        verdicts_of(&ours.export),
        verdicts_of(&theirs.export),
        "{example}: threshold verdicts differ"
    );
    let (ours_tags, theirs_tags) = (ours.tag_keys("browser_"), theirs.tag_keys("browser_"));
    for metric in ALWAYS {
        assert!(
            ours_tags.contains_key(metric),
            "{example}: rk6 emitted no {metric}"
        );
        assert!(
            theirs_tags.contains_key(metric),
            "{example}: k6 emitted no {metric}"
        );
    }
    for (metric, keys) in &ours_tags {
        if let Some(k6_keys) = theirs_tags.get(metric) {
            assert_eq!(keys, k6_keys, "{example}: tags of {metric} differ");
        }
    }
    let shots_rk6 = shots(&dir);
    assert_eq!(
        shots_rk6.len(),
        shots_k6.len(),
        "{example}: screenshot counts differ"
    );
    for (name, size) in shots_rk6.iter().zip(&shots_k6) {
        assert_eq!(name, size, "{example}: screenshots differ in name or size");
    }
}

/// (file name, PNG size) of the screenshots a run left in `dir/screenshots`, sorted.
fn shots(dir: &Dir) -> Vec<(String, (u32, u32))> {
    let mut out: Vec<_> = std::fs::read_dir(dir.path("screenshots"))
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| {
                    let bytes = std::fs::read(e.path()).unwrap();
                    let size = png_size(&bytes).expect("a screenshot is a PNG");
                    (e.file_name().to_string_lossy().into_owned(), size)
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

#[test]
fn storefront_journey_agrees_with_k6() {
    compare_example("browser.js");
}

#[test]
fn hybrid_test_agrees_with_k6() {
    compare_example("hybrid.js");
}

/// The page and element API of k6 1.1 (the methods k6 1.1.0 has), each answer checked.
/// Left out, as k6 1.1.0 fails them: `evaluateHandle` of an arrow function returning an
/// object literal (a SyntaxError), and clicks inside an iframe (`node is either not
/// visible or not an HTMLElement`); rk6's own tests cover both (`api.rs`).
#[test]
fn page_api_agrees_with_k6() {
    let Some(chromium) = chromium() else { return };
    let Some(bin) = k6() else { return };
    let shop = Shop::start();
    let dir = Dir::new("browser-page-api");
    let path = dir.write("script.js", PAGE_API);
    let mut env = browser_env(chromium);
    env.push(("BASE_URL".into(), shop.base.clone()));
    let theirs = run_with(Some(&bin), &dir, &path, &env);
    let ours = run_with(None, &dir, &path, &env);
    let failed = |r: &super::BrowserRun| -> BTreeSet<String> {
        checks(r)
            .into_iter()
            .filter(|(_, _, f)| *f > 0)
            .map(|(n, _, _)| n)
            .collect()
    };
    assert_eq!(
        ours.code, theirs.code,
        "exit codes differ\n--- rk6\n{}\n--- k6\n{}",
        ours.stderr, theirs.stderr
    );
    assert_eq!(
        failed(&ours),
        failed(&theirs),
        "checks failing in one only\n{}",
        ours.stderr
    );
    assert_eq!(checks(&ours), checks(&theirs));
    assert!(failed(&ours).is_empty(), "{:?}", failed(&ours));
}

const PAGE_API: &str = r##"
import { browser } from 'k6/browser';
import { check } from 'k6';
export const options = { scenarios: { ui: { executor: 'shared-iterations', options: { browser: { type: 'chromium' } } } } };
const BASE = __ENV.BASE_URL;
export default async function () {
  const context = await browser.newContext({ viewport: { width: 800, height: 600 } });
  const page = await context.newPage();
  try {
    const res = await page.goto(`${BASE}/shop/login`, { waitUntil: 'networkidle' });
    check(res, { 'goto response': (r) => r.status() === 200 && r.url().endsWith('/shop/login') && r.ok() });
    check(page.viewportSize(), { 'viewport from the context': (v) => v.width === 800 && v.height === 600 });
    check(await page.title(), { 'title': (t) => t === 'Log in - rk6 demo shop' });
    check(await page.evaluate(() => [window.innerWidth, document.querySelectorAll('input').length]), { 'evaluate': (v) => v[0] === 800 && v[1] === 2 });
    check(await page.evaluate((a, b) => a + b, 2, 3), { 'evaluate with arguments': (v) => v === 5 });
    check((await page.$$('input')).length, { '$$ finds both inputs': (n) => n === 2 });
    check(await page.$('#nothing-here'), { '$ of nothing is null': (h) => h === null });
    const user = await page.$('#username');
    await user.type('ann');
    check(await user.inputValue(), { 'type into a handle': (v) => v === 'ann' });
    await page.keyboard.press('Backspace');
    check(await page.inputValue('#username'), { 'keyboard Backspace': (v) => v === 'an' });
    await page.locator('#username').clear();
    check(await page.locator('#username').inputValue(), { 'clear': (v) => v === '' });
    await page.fill('#username', 'bob');
    check(await page.getAttribute('#password', 'type'), { 'getAttribute': (v) => v === 'password' });
    check(await page.isVisible('#login'), { 'isVisible': (v) => v === true });
    check(await page.isHidden('#error'), { 'isHidden of a missing element': (v) => v === true });
    check(await page.locator('label').first().textContent(), { 'first label': (t) => t === 'User name' });
    check(await page.locator('label').nth(1).innerText(), { 'nth label': (t) => t === 'Password' });
    check(await page.content(), { 'content': (c) => c.startsWith('<!DOCTYPE html>') && c.includes('id="login"') });
    await page.fill('#password', 'wrong');
    await Promise.all([page.waitForNavigation(), page.click('#login')]);
    check(await page.locator('#error').textContent(), { 'failed login shows the error': (t) => t === 'Wrong user name or password' });
    await page.fill('#username', 'bob');
    await page.fill('#password', 'secret');
    await Promise.all([page.waitForNavigation(), page.press('#password', 'Enter')]);
    check(page.url(), { 'Enter submits the form': (u) => u.endsWith('/shop/products') });
    await page.waitForFunction(() => document.querySelector('#promo') !== null);
    check(await page.locator('#promo').isVisible(), { 'waitForFunction': (v) => v === true });
    await page.waitForSelector('.product');
    check(await page.locator('.product').count(), { 'count': (n) => n === 5 });
    check(await page.selectOption('#product', '4'), { 'selectOption returns the values': (v) => v.length === 1 && v[0] === '4' });
    await page.check('#gift');
    check(await page.isChecked('#gift'), { 'check': (v) => v === true });
    await page.uncheck('#gift');
    check(await page.isChecked('#gift'), { 'uncheck': (v) => v === false });
    const frame = page.frames().find((f) => f.url().endsWith('/shop/help'));
    check(await frame.textContent('#help-text'), { 'text inside an iframe': (t) => t.startsWith('Questions?') });
    const shot = await page.screenshot({ fullPage: true });
    check(shot.byteLength, { 'screenshot bytes': (n) => n > 1000 });
    await page.setViewportSize({ width: 640, height: 480 });
    check(await page.evaluate(() => window.innerWidth), { 'setViewportSize': (w) => w === 640 });
    await page.reload();
    check(page.url(), { 'reload keeps the page': (u) => u.endsWith('/shop/products') });
    await page.setContent('<p id="x">hello</p>');
    check(await page.textContent('#x'), { 'setContent': (t) => t === 'hello' });
    check(await page.evaluate(() => document.cookie), { 'HttpOnly cookie hidden from the page': (c) => !c.includes('session') });
    const cookies = await context.cookies();
    check(cookies, { 'session cookie in the context': (cs) => cs.some((c) => c.name === 'session' && c.httpOnly) });
    await context.clearCookies();
    check(await context.cookies(), { 'clearCookies': (cs) => cs.length === 0 });
    let err = '';
    try { await page.locator('#never').click({ timeout: 300 }); } catch (e) { err = String(e); }
    check(err, { 'a missing element times out': (e) => e === 'clicking on "#never": timed out after 300ms' });
  } finally {
    await page.close();
    await context.close();
  }
}
"##;

/// `page.on('metric')` with `metric.tag()` groups dynamic URLs under one `name` tag, in
/// k6 1.1.0 and rk6 alike.
#[test]
fn metric_tag_groups_urls_as_in_k6() {
    let Some(chromium) = chromium() else { return };
    let Some(bin) = k6() else { return };
    let shop = Shop::start();
    let dir = Dir::new("browser-metric-tag");
    let path = dir.write(
        "script.js",
        r#"
import { browser } from 'k6/browser';
export const options = { scenarios: { ui: { executor: 'shared-iterations', options: { browser: { type: 'chromium' } } } } };
export default async function () {
  const page = await browser.newPage();
  page.on('metric', (metric) => {
    metric.tag({ name: 'product images', matches: [{ url: /\/shop\/img\/\d+\.svg$/, method: 'GET' }] });
  });
  await page.goto(`${__ENV.BASE_URL}/shop/login`);
  await page.fill('#username', 'ann');
  await page.fill('#password', 'secret');
  await Promise.all([page.waitForNavigation(), page.click('#login')]);
  await page.close();
}
"#,
    );
    let mut env = browser_env(chromium);
    env.push(("BASE_URL".into(), shop.base.clone()));
    // k6 puts the group's name in both `url` and `name`; no image URL is left.
    let names = |r: &super::BrowserRun| -> BTreeSet<(String, String)> {
        r.points
            .iter()
            .filter(|(m, t)| {
                m == "browser_http_req_duration"
                    && (t["name"] == "product images" || t["url"].contains("/shop/img/"))
            })
            .map(|(_, t)| (t["url"].clone(), t["name"].clone()))
            .collect()
    };
    // k6 1.1 now and then misses the page's requests when Chromium's `browser_ui` target
    // attaches first (its "unknown target type" warning): the reference gets a second try.
    let theirs = match run_with(Some(&bin), &dir, &path, &env) {
        r if names(&r).is_empty() && r.stderr.contains("unknown target type") => {
            run_with(Some(&bin), &dir, &path, &env)
        }
        r => r,
    };
    let ours = run_with(None, &dir, &path, &env);
    let grouped = ("product images".to_string(), "product images".to_string());
    assert_eq!(
        names(&theirs),
        BTreeSet::from([grouped]),
        "{}",
        theirs.stderr
    );
    assert_eq!(names(&ours), names(&theirs), "{}", ours.stderr);
}
