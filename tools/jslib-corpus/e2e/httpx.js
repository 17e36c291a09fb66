// An httpx session against the local target: base URL, session headers and tags, each verb.
import { check } from 'k6';
import { Httpx, Get, Post } from 'https://jslib.k6.io/httpx/0.1.0/index.js';

const session = new Httpx({ baseURL: '__TARGET__/api', headers: { 'User-Agent': 'e2e-httpx' }, timeout: 5000 });
session.addHeader('X-Session', 's1');
session.addTag('flow', 'httpx');

export const options = {
  iterations: 3,
  thresholds: {
    'http_reqs{flow:httpx}': ['count==27'],
    'http_reqs{name:custom}': ['count==3'],
    checks: ['rate==1'],
  },
};

export default function () {
  const g = session.get('/users/1');
  const p = session.post('/users', JSON.stringify({ name: 'ann' }), { headers: { 'Content-Type': 'application/json' } });
  const u = session.put('/users/1', 'x=1');
  const pa = session.patch('/users/1', 'y=2');
  const d = session.delete('/users/1');
  const named = session.get('/named', null, { tags: { name: 'custom' } });
  const [b1, b2] = session.batch([new Get('/b/1'), new Post('/b/2')]);
  check(null, {
    'base url joined': () => g.json('url') === '/api/users/1',
    'session header sent': () => g.json('headers.X-Session') === 's1' && g.json('headers.User-Agent') === 'e2e-httpx',
    'post body': () => p.json('method') === 'POST' && p.json('data') === '{"name":"ann"}',
    'per-request header': () => p.json('headers.Content-Type') === 'application/json',
    'put patch delete': () => [u, pa, d].map((r) => r.json('method')).join() === 'PUT,PATCH,DELETE',
    'tagged request': () => named.status === 200,
    'batch through the session': () => b1.json('url') === '/api/b/1' && b2.json('method') === 'POST' && b2.json('headers.X-Session') === 's1',
  });
  session.clearHeader('X-Session');
  const after = session.get('/users/2');
  check(after, { 'header cleared': (r) => r.json('headers.X-Session') === undefined });
  session.addHeader('X-Session', 's1');
}

export function handleSummary(data) {
  return { 'checks.json': JSON.stringify(data.root_group.checks.map((c) => [c.name, c.passes, c.fails])) };
}
