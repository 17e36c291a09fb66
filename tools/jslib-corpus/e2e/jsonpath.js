// jsonpath from jslib.k6.io over a response body and over the summary data.
import http from 'k6/http';
import { check } from 'k6';
import jp from 'https://jslib.k6.io/jsonpath/1.0.2/index.js';

export const options = { iterations: 2, thresholds: { checks: ['rate==1'] } };

export default function () {
  const body = { items: [{ id: 1, tags: ['a'] }, { id: 2, tags: ['b', 'c'] }, { id: 3, price: 9 }] };
  const r = http.post('__TARGET__/items', JSON.stringify(body));
  const doc = JSON.parse(r.json('data'));
  check(doc, {
    'ids': (d) => jp.query(d, '$.items[*].id').join() === '1,2,3',
    'recursive tags': (d) => jp.query(d, '$..tags[*]').join() === 'a,b,c',
    'filter': (d) => jp.query(d, '$.items[?(@.price)].id')[0] === 3,
    'paths': (d) => jp.stringify(jp.paths(d, '$..price')[0]) === '$.items[2].price',
  });
}

export function handleSummary(data) {
  return { 'names.json': JSON.stringify(jp.query(data, '$.root_group.checks[*].name')) };
}
