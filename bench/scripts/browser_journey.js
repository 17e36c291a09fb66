// The browser cost benchmark's journey (bench/browser.py): three pages of the demo shop's
// storefront per iteration (login form, catalogue, order confirmation), no think time.
import { browser } from 'k6/browser';
import { check } from 'k6';

export const options = {
  scenarios: {
    ui: {
      executor: 'constant-vus',
      vus: Number(__ENV.VUS || 1),
      duration: __ENV.DURATION || '20s',
      options: { browser: { type: 'chromium' } },
    },
  },
};

export default async function () {
  const page = await browser.newPage();
  try {
    await page.goto(`${__ENV.BASE_URL}/shop/login`);
    await page.locator('#username').fill(`shopper${__VU}`);
    await page.locator('#password').fill('secret');
    await Promise.all([page.waitForNavigation(), page.locator('#login').click()]);
    await page.locator('#product').selectOption('2');
    await Promise.all([page.waitForNavigation(), page.locator('#place-order').click()]);
    check(await page.locator('#confirmation').textContent(), { 'order placed': (t) => t.startsWith('Order #') });
  } finally {
    await page.close();
  }
}
