// Scenario 2: many VUs, one GET and one check per iteration, then 1 s of think time.
// Each VU should complete ceil(duration / 1 s) iterations; the runner compares against that.
// Run: rk6|k6 run -u 1000 -d 10s -e BASE_URL=http://127.0.0.1:18090 sleepy.js
import http from 'k6/http';
import { check, sleep } from 'k6';

const URL = `${__ENV.BASE_URL || 'http://127.0.0.1:18090'}/`;

export default function () {
  const res = http.get(URL);
  check(res, { 'status is 200': (r) => r.status === 200 });
  sleep(1);
}
