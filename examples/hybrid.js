// A hybrid test: protocol-level load on the demo shop's API at a constant arrival rate,
// and one browser user measuring what a shopper sees meanwhile (web vitals). One summary,
// one verdict. Run the shop with `rk6 demo --serve-only --port 3333`, then
// `rk6 run examples/hybrid.js`.
import http from 'k6/http';
import { browser } from 'k6/browser';
import { check } from 'k6';

const BASE_URL = __ENV.BASE_URL || 'http://127.0.0.1:3333';

export const options = {
  scenarios: {
    api: {
      executor: 'constant-arrival-rate',
      exec: 'api',
      rate: 20,
      timeUnit: '1s',
      duration: '5s',
      preAllocatedVUs: 5,
    },
    shopper: {
      executor: 'per-vu-iterations',
      exec: 'shopper',
      vus: 1,
      iterations: 2,
      options: { browser: { type: 'chromium' } },
    },
  },
  thresholds: {
    'http_req_duration{scenario:api}': ['p(95)<500'],
    'checks{scenario:api}': ['rate>0.99'],
    'checks{scenario:shopper}': ['rate==1.0'],
    browser_web_vital_fcp: ['p(75)<1800'],
    browser_web_vital_lcp: ['p(75)<2500'],
  },
};

export function api() {
  const res = http.get(`${BASE_URL}/api/products/${1 + (__ITER % 5)}`);
  check(res, { 'product found': (r) => r.status === 200 });
}

export async function shopper() {
  const page = await browser.newPage();
  try {
    await page.goto(`${BASE_URL}/shop/login`);
    await page.locator('#username').fill('ann');
    await page.locator('#password').fill('secret');
    await Promise.all([page.waitForNavigation(), page.locator('#login').click()]);
    check(page, { 'catalogue shown': (p) => p.url().endsWith('/shop/products') });
    check(await page.locator('.product').count(), { 'five products': (n) => n === 5 });
  } finally {
    await page.close();
  }
}
