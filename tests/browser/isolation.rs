//! Each VU-iteration's browser context is its own, as in k6 (where every iteration even
//! gets its own browser): rk6 shares one Chromium between VUs, so this is what keeps
//! one VU's cookies, storage and routes from another's, and one iteration's from the next.

use super::{browser_env, checks, chromium, run_with, Shop};
use crate::parity::k6;
use crate::Dir;

const SCRIPT: &str = r#"
import { browser } from 'k6/browser';
import { check } from 'k6';
export const options = { scenarios: { ui: { executor: 'per-vu-iterations', vus: 2, iterations: 2, options: { browser: { type: 'chromium' } } } } };
const BASE = __ENV.BASE_URL;
export default async function () {
  const me = `${__VU}-${__ITER}`;
  const page = await browser.newPage();
  try {
    // VU 1 hides the catalogue's pictures; VU 2 must still get them (k6 1.1 has no
    // page.route: there both get them).
    let images = 0;
    const routes = typeof page.route === 'function';
    if (__VU === 1 && routes) await page.route('**/shop/img/**', (route) => route.abort());
    page.on('response', (r) => { if (r.url().includes('/shop/img/')) images += 1; });
    await page.goto(`${BASE}/shop/login`);
    check(await page.evaluate(() => localStorage.getItem('who')), { 'no storage from another VU or iteration': (v) => v === null });
    check(await page.context().cookies(), { 'no cookies from another VU or iteration': (c) => c.length === 0 });
    await page.evaluate((who) => localStorage.setItem('who', who), me);
    await page.fill('#username', `shopper${__VU}`);
    await page.fill('#password', 'secret');
    await Promise.all([page.waitForNavigation(), page.click('#login')]);
    await page.waitForTimeout(300);
    check(await page.evaluate(() => localStorage.getItem('who')), { 'own storage': (v) => v === me });
    check(await page.textContent('#user'), { 'own session': (t) => t === `Signed in as shopper${__VU}` });
    check(images, { 'own routes': (n) => (__VU === 1 && routes ? n === 0 : n === 5) });
  } finally {
    await page.close();
  }
}
"#;

#[test]
fn vus_and_iterations_see_only_their_own_context() {
    let Some(chromium) = chromium() else { return };
    let shop = Shop::start();
    let dir = Dir::new("browser-isolation");
    let path = dir.write("script.js", SCRIPT);
    let mut env = browser_env(chromium);
    env.push(("BASE_URL".into(), shop.base.clone()));
    let ours = run_with(None, &dir, &path, &env);
    let all = checks(&ours);
    assert_eq!(all.len(), 5, "{all:?}\n{}", ours.stderr);
    for (name, passes, fails) in &all {
        assert_eq!((*passes, *fails), (4, 0), "{name}\n{}", ours.stderr);
    }
    if let Some(bin) = k6() {
        let theirs = run_with(Some(&bin), &dir, &path, &env);
        assert_eq!(
            checks(&theirs),
            all,
            "k6 sees it otherwise\n{}",
            theirs.stderr
        );
    }
}
