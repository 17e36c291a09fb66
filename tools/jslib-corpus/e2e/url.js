// The URL/URLSearchParams polyfill: parsing, building a query, and using the result in requests.
import http from 'k6/http';
import { check } from 'k6';
import { URL, URLSearchParams } from 'https://jslib.k6.io/url/1.0.0/index.js';

export const options = { iterations: 2, thresholds: { checks: ['rate==1'], 'http_reqs{name:search}': ['count==2'] } };

export default function () {
  const u = new URL('__TARGET__/search');
  u.searchParams.append('q', 'k6 & rk6');
  u.searchParams.append('page', String(__ITER + 1));
  u.hash = 'top';
  const r = http.get(u.toString().split('#')[0], { tags: { name: 'search' } });
  const p = new URLSearchParams('a=1&b=2&a=3');
  p.sort();
  const rel = new URL('../x/y?z=1', 'https://example.test/a/b/c');
  check(null, {
    'query encoded': () => u.search === '?q=k6+%26+rk6&page=' + (__ITER + 1),
    'server saw the query': () => r.json('url') === '/search?q=k6+%26+rk6&page=' + (__ITER + 1),
    'parts': () => u.protocol === 'http:' && u.hostname === '127.0.0.1' && u.pathname === '/search' && u.hash === '#top',
    'getAll and sort': () => p.getAll('a').join() === '1,3' && p.toString() === 'a=1&a=3&b=2',
    'relative resolution': () => rel.href === 'https://example.test/a/x/y?z=1',
    'from an object': () => new URLSearchParams({ x: 'a b', y: 'é' }).toString() === 'x=a+b&y=%C3%A9',
    'has and delete': () => { p.delete('b'); return !p.has('b') && p.has('a'); },
    'invalid URL throws': () => { try { new URL('not a url'); return false; } catch (e) { return e instanceof TypeError; } },
  });
}

export function handleSummary(data) {
  return {
    'urls.json': JSON.stringify([new URL('/p?q=1#h', 'http://h.test:8080').href, new URLSearchParams([['k', 'v w']]).toString()]),
    'checks.json': JSON.stringify(data.root_group.checks.map((c) => [c.name, c.passes, c.fails])),
  };
}
