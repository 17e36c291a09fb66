// Scenario 4: open model. constant-arrival-rate starts RATE iterations per second whatever
// the latency; each is one GET + one check. Planned iterations = RATE x DURATION_S
// (k6 also starts one at the very end); the shortfall shows up as dropped_iterations.
// Run: rk6|k6 run -e BASE_URL=http://127.0.0.1:18090 -e RATE=1000 -e DURATION_S=10 arrival.js
import http from 'k6/http';
import { check } from 'k6';

const URL = `${__ENV.BASE_URL || 'http://127.0.0.1:18090'}/`;
const RATE = Number(__ENV.RATE || '1000');
const DURATION_S = Number(__ENV.DURATION_S || '10');

export const options = {
  scenarios: {
    open_model: {
      executor: 'constant-arrival-rate',
      rate: RATE,
      timeUnit: '1s',
      duration: `${DURATION_S}s`,
      preAllocatedVUs: 50,
      maxVUs: 200,
    },
  },
};

export default function () {
  const res = http.get(URL);
  check(res, { 'status is 200': (r) => r.status === 200 });
}
