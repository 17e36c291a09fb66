// A multipart body built with the formdata polyfill, posted to the local echo target.
import http from 'k6/http';
import { check } from 'k6';
import { FormData } from 'https://jslib.k6.io/formdata/0.0.2/index.js';

export const options = { iterations: 2, thresholds: { checks: ['rate==1'] } };

const bytes = new Uint8Array([0x89, 0x50, 0x4e, 0x47]).buffer;

export default function () {
  const fd = new FormData();
  fd.append('name', 'k6 user');
  fd.append('id', String(__ITER));
  fd.append('file', http.file(bytes, 'pic.png', 'image/png'));
  fd.append('text', http.file('hello text', 'a.txt'));
  const r = http.post('__TARGET__/upload', fd.body(), {
    headers: { 'Content-Type': 'multipart/form-data; boundary=' + fd.boundary },
  });
  const body = r.json('data');
  const parts = body.split('--' + fd.boundary);
  check(r, {
    'content type has the boundary': (r) => r.json('headers.Content-Type') === 'multipart/form-data; boundary=' + fd.boundary,
    'five boundary pieces': () => parts.length === 6 && parts[5].startsWith('--'),
    'name field': () => parts[1].includes('Content-Disposition: form-data; name="name"\r\n') && parts[1].endsWith('\r\n\r\nk6 user\r\n'),
    'id field': () => parts[2].includes('name="id"\r\n') && parts[2].endsWith('\r\n\r\n' + __ITER + '\r\n'),
    'file part': () => parts[3].includes('name="file"; filename="pic.png"\r\nContent-Type: image/png\r\n\r\n'),
    'text part': () => parts[4].includes('filename="a.txt"') && parts[4].includes('hello text'),
    'length matches': (r) => Number(r.json('headers.Content-Length')) === fd.body().byteLength,
  });
}

export function handleSummary(data) {
  return { 'checks.json': JSON.stringify(data.root_group.checks.map((c) => [c.name, c.passes, c.fails])) };
}
