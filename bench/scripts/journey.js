// Scenario 3: a realistic shopper journey against the nginx bench target.
//
// k6/http get/post/put/patch/del/request with params (headers, tags, timeout), JSON bodies
// and array methods on the responses, k6 check/group/sleep/fail, custom metrics (k6/metrics),
// __ENV, __VU, __ITER, open(), setup/teardown and thresholds.
//
// Every iteration makes 13 requests (14 every 5th) and thinks for THINK_TIME_S seconds in total (5 pauses),
// so a VU can complete at most ceil(duration / THINK_TIME_S) iterations; bench/run.sh uses
// that as the planned iteration count. With THINK_TIME_S=0 (scenario 7) it is a closed loop
// of JavaScript and requests.
//
// Run: rk6|k6 run -u 50 -d 10s -e BASE_URL=http://127.0.0.1:18090 journey.js
import http from 'k6/http';
import { check, group, sleep, fail } from 'k6';
import { Counter, Rate, Trend } from 'k6/metrics';

const BASE_URL = __ENV.BASE_URL || 'http://127.0.0.1:18090';
const THINK_TIME_S = Number(__ENV.THINK_TIME_S || '0.5');
const PAUSE = THINK_TIME_S / 5;

// Test data is read once per VU at init time, like a k6 SharedArray-free script would.
const USERS = JSON.parse(open('./data/users.json'));

const cartTotal = new Trend('cart_total');
const ordersCreated = new Counter('orders_created');
const checkoutOk = new Rate('checkout_ok');

export const options = {
  thresholds: {
    http_req_failed: ['rate<0.01'],
    checks: ['rate>0.99'],
    'http_req_duration{expected_response:true}': ['p(95)<500'],
    'http_req_duration{name:product}': ['p(95)<500'],
    checkout_ok: ['rate>0.99'],
  },
};

function jsonHeaders(token) {
  const headers = { 'Content-Type': 'application/json', Accept: 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  return headers;
}

function pickUser() {
  return USERS[(__VU * 7 + __ITER) % USERS.length];
}

export function setup() {
  const res = http.get(`${BASE_URL}/api/config`, { tags: { name: 'config' } });
  if (res.status !== 200) fail(`bench target not reachable at ${BASE_URL}: status ${res.status}`);
  const config = res.json();
  const health = http.get(`${BASE_URL}/api/health`);
  check(health, { 'target healthy': (r) => r.json('status') === 'ok' });
  return {
    categories: config.categories,
    currency: config.currency,
    maxCartItems: config.max_cart_items,
    searchEnabled: config.features.search,
  };
}

export default function (data) {
  const user = pickUser();
  let token = '';

  group('home', () => {
    const res = http.get(`${BASE_URL}/`, { tags: { name: 'home' } });
    check(res, {
      'home status is 200': (r) => r.status === 200,
      'home has title': (r) => r.body.includes('rk6 benchmark target'),
    });
  });
  sleep(PAUSE);

  group('login', () => {
    const res = http.post(
      `${BASE_URL}/api/login`,
      JSON.stringify({ username: user.username, password: user.password }),
      { headers: jsonHeaders(), tags: { name: 'login' }, timeout: '5s' },
    );
    const ok = check(res, {
      'login status is 200': (r) => r.status === 200,
      'login returns a token': (r) => typeof r.json('token') === 'string',
      'login returns the user': (r) => r.json('user.name') === 'shopper',
    });
    if (ok) token = res.json('token');
  });
  sleep(PAUSE);

  let chosen = null;
  group('browse', () => {
    const list = http.get(`${BASE_URL}/api/products`, {
      headers: jsonHeaders(token),
      tags: { name: 'products' },
    });
    const body = list.json();
    check(list, {
      'products status is 200': (r) => r.status === 200,
      'twenty products listed': () => body.products.length === 20,
      'every product has a price': () => body.products.every((p) => p.price > 0),
    });

    const category = data.categories[(__VU + __ITER) % data.categories.length];
    const inCategory = body.products.filter((p) => p.category === category && p.in_stock);
    chosen = inCategory.length > 0 ? inCategory[__ITER % inCategory.length] : body.products[0];

    const cats = http.get(`${BASE_URL}/api/categories`, { headers: jsonHeaders(token) });
    check(cats, {
      'categories status is 200': (r) => r.status === 200,
      'chosen category exists': (r) => r.json().categories.some((c) => c.slug === category),
    });

    // One name tag for all product pages keeps the metric series bounded.
    const detail = http.get(`${BASE_URL}/api/products/${chosen.id}`, {
      headers: jsonHeaders(token),
      tags: { name: 'product' },
    });
    check(detail, {
      'product detail status is 200': (r) => r.status === 200,
      'product detail matches': (r) => r.json('id') === chosen.id,
      'product has related items': (r) => r.json('related').length === 2,
    });
  });
  sleep(PAUSE);

  if (data.searchEnabled) {
    group('search', () => {
      const q = encodeURIComponent(`${data.categories[__ITER % data.categories.length]} item`);
      const res = http.get(`${BASE_URL}/api/search?q=${q}&page=1`, {
        headers: jsonHeaders(token),
        tags: { name: 'search' },
      });
      const hits = res.json('hits');
      check(res, {
        'search status is 200': (r) => r.status === 200,
        'search has hits': () => Array.isArray(hits) && hits.length > 0,
        'hits are sorted by score': () => hits.every((h, i) => i === 0 || hits[i - 1].score >= h.score),
      });
    });
  }

  group('cart', () => {
    const add = http.post(
      `${BASE_URL}/api/cart/items`,
      JSON.stringify({ product_id: chosen.id, quantity: 1 }),
      { headers: jsonHeaders(token), tags: { name: 'cart_add' } },
    );
    check(add, { 'item added': (r) => r.status === 201 && r.json('ok') === true });

    const update = http.put(
      `${BASE_URL}/api/cart/items/${chosen.id}`,
      JSON.stringify({ quantity: 2 }),
      { headers: jsonHeaders(token), tags: { name: 'cart_item' } },
    );
    check(update, { 'quantity updated': (r) => r.json('item.quantity') === 2 });

    const patch = http.patch(
      `${BASE_URL}/api/cart/items/${chosen.id}`,
      JSON.stringify({ gift_wrap: __ITER % 2 === 0 }),
      { headers: jsonHeaders(token), tags: { name: 'cart_item' } },
    );
    check(patch, { 'item patched': (r) => r.status === 200 });

    const cart = http.get(`${BASE_URL}/api/cart`, { headers: jsonHeaders(token), tags: { name: 'cart' } });
    check(cart, {
      'cart status is 200': (r) => r.status === 200,
      'cart total is positive': (r) => r.json('total') > 0,
      'cart currency matches': (r) => r.json('currency') === data.currency,
    });
    cartTotal.add(cart.json('total'), { currency: data.currency });
  });
  sleep(PAUSE);

  group('checkout', () => {
    const order = http.post(
      `${BASE_URL}/api/orders`,
      JSON.stringify({ product_id: chosen.id, quantity: 2, user: user.username }),
      { headers: jsonHeaders(token), tags: { name: 'order' }, timeout: '10s' },
    );
    const created = check(order, {
      'order created': (r) => r.status === 201,
      'order has an id': (r) => r.json('id').startsWith('o-'),
      'order has a total': (r) => r.json('total') > 0,
    });
    checkoutOk.add(created);
    if (created) ordersCreated.add(1, { product: String(chosen.id % 4) });

    const profile = http.request('GET', `${BASE_URL}/api/profile`, null, {
      headers: jsonHeaders(token),
      tags: { name: 'profile' },
    });
    check(profile, { 'profile has an address': (r) => r.json('addresses.0.city') === 'Berlin' });
  });

  group('logout', () => {
    if (__ITER % 5 === 4) {
      const del = http.del(`${BASE_URL}/api/cart/items/${chosen.id}`, null, {
        headers: jsonHeaders(token),
        tags: { name: 'cart_item' },
      });
      check(del, { 'item removed': (r) => r.status === 200 });
    }
    const res = http.post(`${BASE_URL}/api/logout`, null, { headers: jsonHeaders(token), tags: { name: 'logout' } });
    check(res, { 'logged out': (r) => r.status === 200 && r.json('ok') === true });
  });
  sleep(PAUSE);
}

export function teardown(data) {
  const res = http.get(`${BASE_URL}/api/health`, { tags: { name: 'health' } });
  check(res, { 'target still healthy': (r) => r.status === 200 });
  if (!data.currency) fail('setup data lost');
}
