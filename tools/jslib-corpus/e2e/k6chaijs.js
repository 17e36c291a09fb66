// k6chaijs: describe/expect over responses, passing and failing expectations become checks.
import http from 'k6/http';
import { describe, expect } from 'https://jslib.k6.io/k6chaijs/4.5.0.1/index.js';
import { describe as describe43, expect as expect43 } from 'https://jslib.k6.io/k6chaijs/4.3.4.3/index.js';

export const options = { iterations: 2, thresholds: { checks: ['rate==1'] } };

export default function () {
  describe('fetch an item', () => {
    const r = http.get('__TARGET__/items/7', { headers: { 'X-Probe': 'yes' } });
    expect(r.status, 'status').to.equal(200);
    expect(r).to.have.validJsonBody();
    expect(r.json('headers.X-Probe'), 'echoed header').to.equal('yes');
    expect(r.json('method')).to.be.oneOf(['GET', 'HEAD']);
  });
  describe('values', () => {
    expect([1, 2, 3]).to.have.lengthOf(3).and.include(2);
    expect({ a: { b: 'c' } }).to.deep.equal({ a: { b: 'c' } });
    expect('rk6').to.match(/k6$/);
  });
  describe('a failing expectation', () => {
    expect(404, 'status').to.equal(200);
  });
  describe('a failing deep equal', () => {
    expect({ a: [1, 2] }).to.deep.equal({ a: [1, 3] });
  });
  describe('throwing inside describe', () => {
    throw new Error('not an assertion');
  });
  describe43('older k6chaijs', () => {
    expect43(1 + 1).to.equal(2);
    expect43('x', 'failing in 4.3.4.3').to.equal('y');
  });
}

export function handleSummary(data) {
  const walk = (g) => [g.name, g.checks.map((c) => [c.name, c.passes, c.fails]), g.groups.map(walk)];
  return { 'groups.json': JSON.stringify(walk(data.root_group)) };
}
