//! What k6's browser module gained after 1.1 (no later k6 runs here, so each is asserted
//! as k6's documentation describes it; the pages are cited at each check), on rk6 alone.

use super::{checks, rk6_browser};

fn assert_all_pass(name: &str, script: &str, expected: usize) {
    let Some((run, _dir)) = rk6_browser(name, script) else {
        return;
    };
    let all = checks(&run);
    let failed: Vec<_> = all.iter().filter(|(_, _, f)| *f > 0).collect();
    assert!(
        failed.is_empty(),
        "{name}: failed checks {failed:?}\n{}",
        run.stderr
    );
    assert_eq!(
        all.len(),
        expected,
        "{name}: checks {all:?}\n{}",
        run.stderr
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
}

/// getBy* locators, filter(), all(), frameLocator(), pressSequentially(), waitForURL(),
/// goBack()/goForward(): grafana.com/docs/k6/latest/javascript-api/k6-browser/page/
/// (getbyrole, getbytext, getbylabel, getbyplaceholder, getbytestid, getbyalttext,
/// waitforurl, goback, goforward) and .../k6-browser/locator/ (filter, all,
/// presssequentially), .../k6-browser/framelocator/.
#[test]
fn locators_and_navigation_added_after_1_1() {
    assert_all_pass(
        "browser-api-locators",
        r#"
import { browser } from 'k6/browser';
import { check } from 'k6';
export const options = { scenarios: { ui: { executor: 'shared-iterations', options: { browser: { type: 'chromium' } } } } };
const BASE = __ENV.BASE_URL;
export default async function () {
  const page = await browser.newPage();
  try {
    await page.goto(`${BASE}/shop/login`);
    await page.getByLabel('User name').pressSequentially('ann');
    await page.getByPlaceholder('nothing').count().then((n) => check(n, { 'getByPlaceholder of nothing': (v) => v === 0 }));
    await page.getByLabel('Password').fill('secret');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL('**/shop/products');
    check(page.url(), { 'waitForURL with a glob': (u) => u.endsWith('/shop/products') });
    check(await page.getByText('Signed in as').textContent(), { 'getByText substring': (t) => t === 'Signed in as ann' });
    check(await page.getByText('Log out', { exact: true }).count(), { 'getByText exact': (n) => n === 1 });
    check(await page.getByRole('listitem').count(), { 'getByRole listitem': (n) => n === 5 });
    check(await page.getByTestId('product-3').locator('.name').textContent(), { 'getByTestId': (t) => t === 'Throughput Hoodie' });
    check(await page.getByAltText('Latency Socks').count(), { 'getByAltText': (n) => n === 1 });
    const socks = page.locator('.product').filter({ hasText: 'Socks' });
    check(await socks.locator('.price').textContent(), { 'filter hasText': (t) => t === '$7.25' });
    check(await page.locator('.product').filter({ hasNotText: 'Socks' }).count(), { 'filter hasNotText': (n) => n === 4 });
    const all = await page.locator('.product .name').all();
    check(all.length, { 'all() gives one locator per match': (n) => n === 5 });
    check(await all[4].textContent(), { 'all() locators address each match': (t) => t === 'Virtual User Plush' });
    const handle = await page.evaluateHandle(() => ({ a: 1, b: [2, 3] }));
    check(await handle.jsonValue(), { 'evaluateHandle + jsonValue': (v) => v.a === 1 && v.b[1] === 3 });
    const frame = page.frames().find((f) => f.url().endsWith('/shop/help'));
    await frame.click('#contact');
    check(await frame.textContent('#contact'), { 'click inside an iframe': (t) => t === 'Thanks!' });
    await frame.evaluate(() => { document.querySelector('#contact').textContent = 'Contact us'; });
    const help = page.frameLocator('#help');
    await help.locator('#contact').click();
    check(await help.locator('#contact').textContent(), { 'frameLocator': (t) => t === 'Thanks!' });
    check(await page.getByRole('combobox').count(), { 'getByRole combobox (select)': (n) => n === 1 });
    await page.goBack();
    check(page.url(), { 'goBack': (u) => u.endsWith('/shop/login') });
    await page.goForward();
    check(page.url(), { 'goForward': (u) => u.endsWith('/shop/products') });
  } finally {
    await page.close();
  }
}
"#,
        17,
    );
}

/// page.route() with fulfill/abort/continue, waitForResponse(), waitForRequest(),
/// waitForEvent(): grafana.com/docs/k6/latest/javascript-api/k6-browser/page/route/,
/// .../k6-browser/route/ ("every request intercepted by a route will stall unless it's
/// continued, fulfilled or aborted"; the last registered matching route runs),
/// .../page/waitforresponse/, .../page/waitforrequest/, .../page/waitforevent/.
#[test]
fn routes_and_network_waits_added_after_1_1() {
    assert_all_pass(
        "browser-api-routes",
        r#"
import { browser } from 'k6/browser';
import { check } from 'k6';
export const options = { scenarios: { ui: { executor: 'shared-iterations', options: { browser: { type: 'chromium' } } } } };
const BASE = __ENV.BASE_URL;
export default async function () {
  const page = await browser.newPage();
  try {
    await page.route(/.*\/shop\/img\/.*/, (route) => route.abort());
    await page.route('**/shop/help', (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<p id="help-text">routed</p>' }));
    await page.route('**/shop/logo.svg', (route) => route.continue({ headers: Object.assign({}, route.request().headers(), { 'x-routed': '1' }) }));
    let failed = 0;
    page.on('requestfailed', () => { failed += 1; });
    await page.goto(`${BASE}/shop/login`);
    await page.fill('#username', 'ann');
    await page.fill('#password', 'secret');
    const [resp] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/shop/products')),
      page.click('#login'),
    ]);
    check(resp.status(), { 'waitForResponse with a predicate': (s) => s === 200 });
    await page.waitForLoadState('load');
    const help = page.frames().find((f) => f.url().endsWith('/shop/help'));
    check(help ? await help.textContent('#help-text') : '', { 'route.fulfill': (t) => t === 'routed' });
    check(failed, { 'route.abort fails the images': (n) => n === 5 });
    const [req] = await Promise.all([
      page.waitForRequest('**/shop/logout'),
      page.click('#logout'),
    ]);
    check(req.method(), { 'waitForRequest with a glob': (m) => m === 'GET' });
    const msg = page.waitForEvent('console');
    await page.evaluate(() => console.log('hello', 42));
    const m = await msg;
    check(m.text(), { 'waitForEvent console': (t) => t === 'hello 42' });
    check(m.type(), { 'console message type': (t) => t === 'log' });
  } finally {
    await page.close();
  }
}
"#,
        6,
    );
}
