// A shopper's journey through the rk6 demo shop: log in, browse, order, log out.
// Start the shop with `rk6 demo` (or point BASE_URL at another instance).
import http from 'k6/http';
import { check, group, sleep } from 'k6';

const BASE_URL = __ENV.BASE_URL || 'http://127.0.0.1:3333';

export const options = {
  vus: 2,
  iterations: 10,
  thresholds: {
    http_req_failed: ['rate<0.01'],
    'http_req_duration{expected_response:true}': ['p(95)<1000'],
    'http_req_duration{name:slow}': ['p(95)<2000'],
    checks: ['rate>0.99'],
  },
};

export function setup() {
  const res = http.get(`${BASE_URL}/health`);
  if (res.status !== 200) throw new Error(`demo shop not reachable at ${BASE_URL}`);
  return { startedAt: Date.now() };
}

export default function (data) {
  group('login', () => {
    // A plain object body is sent as application/x-www-form-urlencoded.
    const res = http.post(`${BASE_URL}/api/login`, {
      username: `shopper${__VU}`,
      password: 'secret',
    });
    check(res, {
      'login status is 200': (r) => r.status === 200,
      'session cookie set': (r) => (r.cookies.session || []).length > 0,
    });
  });

  let productId = 1;
  group('browse', () => {
    const res = http.get(`${BASE_URL}/api/products`);
    check(res, {
      'products status is 200': (r) => r.status === 200,
      'five products listed': (r) => r.json().products.length === 5,
      'first product has a name': (r) => typeof r.json('products.0.name') === 'string',
    });
    if (res.status === 200) productId = res.json(`products.${(__ITER + __VU) % 5}.id`);
    // One name tag for all product pages keeps the metric series from exploding per id.
    const detail = http.get(`${BASE_URL}/api/products/${productId}`, { tags: { name: 'product' } });
    check(detail, { 'product detail matches': (r) => r.json('id') === productId });
  });

  group('order', () => {
    const body = JSON.stringify({ product_id: productId, quantity: 2 });
    const res = http.post(`${BASE_URL}/api/orders`, body, {
      headers: { 'Content-Type': 'application/json' },
    });
    check(res, {
      'order created': (r) => r.status === 201,
      'order has a total': (r) => r.json('total') > 0,
    });

    const slow = http.get(`${BASE_URL}/api/slow?ms=50`, { tags: { name: 'slow' } });
    check(slow, { 'slow endpoint answered': (r) => r.status === 200 });
  });

  group('logout', () => {
    // Logout redirects to the home page, which k6 follows.
    const out = http.get(`${BASE_URL}/api/logout`);
    check(out, { 'logged out to home page': (r) => r.status === 200 && r.body.includes('rk6 demo shop') });
  });

  sleep(0.1);
}

export function teardown(data) {
  const seconds = (Date.now() - data.startedAt) / 1000;
  console.log(`journey finished in ${seconds.toFixed(2)}s`);
}
