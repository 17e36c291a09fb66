// 1000 VUs read random elements of a ~50 MB SharedArray for 10 s; no network.
import { SharedArray } from 'k6/data';
import { check, sleep } from 'k6';

export const options = {
  vus: __ENV.VUS ? parseInt(__ENV.VUS) : 1000,
  duration: __ENV.DURATION || '10s',
  summaryTrendStats: ['avg', 'p(95)'],
};

const users = new SharedArray('users', function () {
  return JSON.parse(open(__ENV.DATA || './data.json'));
});

export default function () {
  let ok = true;
  for (let i = 0; i < 10; i++) {
    const n = Math.floor(Math.random() * users.length);
    const u = users[n];
    ok = ok && u.id === n && u.username === `user${n}`;
  }
  check(ok, { 'elements match their index': (v) => v });
  sleep(0.1);
}
