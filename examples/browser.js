// A shopper's journey through the rk6 demo shop's storefront in a real browser: log in,
// pick a product, place an order. Run the shop with `rk6 demo --serve-only --port 3333`,
// then `rk6 run examples/browser.js` (k6 runs it unchanged too).
import { browser } from 'k6/browser';
import { check } from 'k6';

const BASE_URL = __ENV.BASE_URL || 'http://127.0.0.1:3333';

export const options = {
  scenarios: {
    ui: {
      executor: 'shared-iterations',
      vus: 1,
      iterations: 2,
      options: { browser: { type: 'chromium' } },
    },
  },
  thresholds: {
    checks: ['rate==1.0'],
    browser_web_vital_lcp: ['p(75)<2500'],
    browser_web_vital_cls: ['p(75)<0.25'],
    browser_http_req_failed: ['rate<0.5'],
  },
};

export default async function () {
  const page = await browser.newPage();
  try {
    await page.goto(`${BASE_URL}/shop/login`);
    await page.locator('#username').fill(`shopper${__VU}`);
    await page.locator('#password').fill('secret');
    await Promise.all([page.waitForNavigation(), page.locator('#login').click()]);
    check(await page.locator('#user').textContent(), {
      'signed in': (t) => t === `Signed in as shopper${__VU}`,
    });

    await page.locator('#product').selectOption('3');
    await page.locator('#quantity').fill('2');
    await page.locator('#gift').check();
    const help = page.frames().find((f) => f.url().endsWith('/shop/help'));
    check(help ? await help.locator('#help-text').textContent() : '', {
      'help shown in its frame': (t) => t.includes('Questions?'),
    });
    await Promise.all([page.waitForNavigation(), page.locator('#place-order').click()]);
    check(await page.locator('#summary').textContent(), {
      'order placed': (t) => t === '2 x Throughput Hoodie (gift wrapped): $98.00',
    });
    await page.screenshot({ path: `screenshots/order-${__VU}-${__ITER}.png` });
  } finally {
    await page.close();
  }
}
