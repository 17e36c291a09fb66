//! The built-ins a script sees, side by side with k6. rk6's VUs fill most built-ins on
//! first use (vendor/README.md, patch 6); what a script can observe must not change: their
//! contents, identities and callable shape, changes made to them before or after their
//! first use, and each VU's own copy.

use super::compare;

#[test]
fn builtins_filled_on_first_use_agree_with_k6() {
    compare(
        "parity-builtins",
        r#"
import { check } from 'k6';
import exec from 'k6/execution';

// Changed in the init code, before anything used them.
Map.prototype.tagged = 'init';
const initRegExp = /(\d+)-(\d+)/;
const initTypes = [typeof Date, typeof Math, typeof Proxy, typeof encodeURI, typeof Symbol].join();

export const options = {
  scenarios: { s: { executor: 'per-vu-iterations', vus: 2, iterations: 2 } },
  thresholds: { checks: ['rate==1'] },
};

export default function () {
  const vu = exec.vu.idInTest;
  const first = exec.vu.iterationInScenario === 0;
  if (first && vu === 1) {
    // Only VU 1 changes these: VU 2 must not see it.
    Date.prototype.vuOne = true;
    Math.vuOne = true;
  }
  check(null, {
    'typeof before first use': () => initTypes === 'function,object,function,function,function',
    'init change kept': () => new Map().tagged === 'init',
    'regexp from init': () => initRegExp.exec('12-34')[2] === '34',
    'changes stay in their VU': () => (vu === 1) === (new Date(0).vuOne === true) && (vu === 1) === (Math.vuOne === true),
    'Date': () => Date.UTC(2000, 0, 1) === 946684800000 && new Date(0).toISOString() === '1970-01-01T00:00:00.000Z',
    'Map and Set': () => new Map([[1, 'a']]).get(1) === 'a' && new Set([1, 1, 2]).size === 2,
    'Weak collections': () => new WeakMap() instanceof WeakMap && new WeakSet() instanceof WeakSet,
    'Math': () => Math.max(1, 3) === 3 && Math.PI > 3.14,
    'JSON': () => JSON.stringify({ a: [1, 'x'] }) === '{"a":[1,"x"]}' && JSON.parse('[2]')[0] === 2,
    'RegExp': () => 'a1b2'.replace(/\d/g, '') === 'ab' && /x/y.sticky === true && 'a,b'.split(/,/).length === 2,
    'Symbol': () => Symbol('q').description === 'q' && typeof Symbol.iterator === 'symbol',
    'typed arrays': () => new Uint8Array([1, 2, 3]).reduce((a, b) => a + b) === 6 && Object.getPrototypeOf(Int8Array) === Object.getPrototypeOf(Float64Array),
    'ArrayBuffer and DataView': () => new DataView(new ArrayBuffer(8)).byteLength === 8,
    'Proxy and Reflect': () => new Proxy({}, { get: () => 7 }).z === 7 && Reflect.ownKeys({ a: 1 }).join() === 'a',
    'generators': () => { function* g() { yield 1; yield 2; } return [...g()].join() === '1,2'; },
    'BigInt': () => (10n ** 3n).toString() === '1000',
    'URI functions': () => encodeURIComponent('a b') === 'a%20b' && decodeURI('%41') === 'A',
    'instanceof and toString tags': () => Object.prototype.toString.call(new Set()) === '[object Set]' && Object.prototype.toString.call(JSON) === '[object JSON]',
    'names and lengths': () => Date.name === 'Date' && Map.length === 0 && Uint8Array.name === 'Uint8Array',
    'String, Number, Boolean': () => 'ab'.toUpperCase() === 'AB' && (1.5).toFixed(2) === '1.50' && true.toString() === 'true' && parseInt('12px') === 12,
    'Promise': () => typeof Promise.resolve(1).then === 'function',
    'a prototype cycle is refused': () => Reflect.setPrototypeOf(Function.prototype, DataView) === false,
  });
}
"#,
    );
}
