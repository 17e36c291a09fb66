// Scenarios 2 and 8: many VUs, one GET and one check per iteration, then THINK_TIME_S
// (default 1 s) of think time. Each VU should complete ceil(duration / think time)
// iterations; the runner compares against that.
//
// Scenario 8 (20,000 VUs, sleep(5)) also sets START_SPREAD_S and FRESH_CONNECTIONS:
// this machine's hard open-file limit (20,000) cannot hold one idle keep-alive connection
// per VU, so each iteration opens its own connection (k6's noConnectionReuse) and the VUs'
// first requests are spread over START_SPREAD_S seconds instead of all landing at once.
// The spread is shorter than the think time, so the planned count is unchanged.
// Run: rk6|k6 run -u 1000 -d 10s -e BASE_URL=http://127.0.0.1:18090 sleepy.js
import http from 'k6/http';
import { check, sleep } from 'k6';

const URL = `${__ENV.BASE_URL || 'http://127.0.0.1:18090'}/`;
const THINK_TIME_S = Number(__ENV.THINK_TIME_S || '1');
const START_SPREAD_S = Number(__ENV.START_SPREAD_S || '0');

export const options = {
  noConnectionReuse: __ENV.FRESH_CONNECTIONS === 'true',
};

export default function () {
  if (__ITER === 0 && START_SPREAD_S > 0) {
    sleep(((__VU % 1000) / 1000) * START_SPREAD_S);
  }
  const res = http.get(URL);
  check(res, { 'status is 200': (r) => r.status === 200 });
  sleep(THINK_TIME_S);
}
