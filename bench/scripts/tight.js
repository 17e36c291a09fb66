// Scenario 1: tight loop, one GET and one check per iteration, no think time.
// Run: rk6|k6 run -u 10 -d 10s -e BASE_URL=http://127.0.0.1:18090 tight.js
import http from 'k6/http';
import { check } from 'k6';

const URL = `${__ENV.BASE_URL || 'http://127.0.0.1:18090'}/`;

export default function () {
  const res = http.get(URL);
  check(res, { 'status is 200': (r) => r.status === 200 });
}
