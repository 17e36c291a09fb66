// textSummary and jUnit from k6-summary in handleSummary, over the run's checks, a Rate and a
// Trend of fixed values (timings and per-second rates vary between runs, so they are left out).
import http from 'k6/http';
import { check, group } from 'k6';
import { Rate, Trend } from 'k6/metrics';
import { textSummary, jUnit, humanizeValue } from 'https://jslib.k6.io/k6-summary/0.1.0/index.js';
import { textSummary as oldTextSummary } from 'https://jslib.k6.io/k6-summary/0.0.2/index.js';

const ok = new Rate('answer_ok');
const size = new Trend('answer_size');

export const options = {
  iterations: 4,
  thresholds: { checks: ['rate>0.5'], answer_ok: ['rate==1'], answer_size: ['p(95)<100', 'max<10'] },
};

export default function () {
  group('api', () => {
    const r = http.get('__TARGET__/items/' + __ITER);
    check(r, { 'status 200': (r) => r.status === 200, 'odd only': () => __ITER % 2 === 1 });
    ok.add(__ITER !== 3);
    size.add(10 * (__ITER + 1));
  });
}

const DETERMINISTIC = ['checks', 'answer_ok', 'answer_size'];

export function handleSummary(data) {
  const metrics = {};
  // k6 fills `values` and `thresholds` in Go map order, which varies from run to run; jUnit
  // prints them in that order, so they are put in a fixed one.
  const sorted = (o) => o && Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k]]));
  for (const m of DETERMINISTIC) {
    const { values, thresholds } = data.metrics[m];
    metrics[m] = Object.assign({}, data.metrics[m], { values: sorted(values), thresholds: sorted(thresholds) });
  }
  const fixed = Object.assign({}, data, { metrics });
  return {
    'summary.txt': textSummary(fixed, { indent: ' ', enableColors: false }),
    'summary-old.txt': oldTextSummary(fixed, { indent: '  ', enableColors: false }),
    'junit.xml': jUnit(fixed, { name: 'rk6 e2e' }),
    'humanized.txt': [humanizeValue(1234.5678, data.metrics.answer_size, 'ms'), humanizeValue(0.25, data.metrics.answer_ok)].join('\n'),
  };
}
