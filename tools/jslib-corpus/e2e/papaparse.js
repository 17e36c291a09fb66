// papaparse from jslib.k6.io: rows from a CSV built in the init context drive the requests.
import http from 'k6/http';
import { check } from 'k6';
import papaparse from 'https://jslib.k6.io/papaparse/5.1.1/index.js';

const csv = 'user,age,city\nann,31,"Paris, FR"\nbob,27,Oslo\n\ncy,45,"New ""York"""\n';
const users = papaparse.parse(csv, { header: true, dynamicTyping: true, skipEmptyLines: true });

export const options = { iterations: 3, thresholds: { checks: ['rate==1'] } };

export default function () {
  const u = users.data[__ITER];
  const r = http.post('__TARGET__/users', JSON.stringify(u), { headers: { 'Content-Type': 'application/json' } });
  check(r, {
    'row sent': (r) => JSON.parse(r.json('data')).user === u.user,
    'typed': () => typeof u.age === 'number',
    'quotes': () => users.data[2].city === 'New "York"' && users.data[0].city === 'Paris, FR',
    'no errors': () => users.errors.length === 0 && users.meta.fields.join() === 'user,age,city',
  });
}

export function handleSummary() {
  return { 'csv.txt': papaparse.unparse(users.data, { quotes: true }) };
}
