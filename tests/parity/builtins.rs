//! The built-ins a script sees, side by side with k6. The VUs of an rk6 worker thread share
//! one frozen set of built-ins (vendor/README.md, patch 9); what a script can observe must not
//! change: their contents, identities and callable shape, changes made to them in the init
//! code or later, and each VU's own view (4 VUs on 2 cores: VUs 1 and 3 share a worker), k6's globals and the exports of its
//! modules included.

use super::compare;

#[test]
fn builtins_shared_by_the_vus_of_a_worker_agree_with_k6() {
    compare(
        "parity-builtins",
        r#"
import { check } from 'k6';
import exec from 'k6/execution';
import http from 'k6/http';
import * as k6 from 'k6';

// Changed in the init code, before anything used them.
Map.prototype.tagged = 'init';
const initRegExp = /(\d+)-(\d+)/;
const initTypes = [typeof Date, typeof Math, typeof Proxy, typeof encodeURI, typeof Symbol].join();

export const options = {
  scenarios: { s: { executor: 'per-vu-iterations', vus: 4, iterations: 2 } },
  thresholds: { checks: ['rate==1'] },
};

export default function () {
  const vu = exec.vu.idInTest;
  const first = exec.vu.iterationInScenario === 0;
  if (first && vu === 1) {
    // Only VU 1 changes these: the others must not see it.
    Date.prototype.vuOne = true;
    Math.vuOne = true;
    Array.prototype.includes = () => 'vu one';
    Object.prototype.everywhere = 1;
    delete String.prototype.padStart;
    Object.freeze(JSON);
    Object.setPrototypeOf(Set.prototype, null);
    // k6's globals and module exports are shared by the VUs of an rk6 worker too.
    __ENV.VU_ONE = 'yes';
    crypto.subtle.vuOne = true;
    http.vuOne = true;
    http.url = () => 'replaced';
    setTimeout.vuOne = true;
  }
  const one = vu === 1;
  check(null, {
    'typeof before first use': () => initTypes === 'function,object,function,function,function',
    'init change kept': () => new Map().tagged === 'init',
    'regexp from init': () => initRegExp.exec('12-34')[2] === '34',
    'changes stay in their VU': () => (vu === 1) === (new Date(0).vuOne === true) && (vu === 1) === (Math.vuOne === true),
    'replaced methods stay in their VU': () => one === ([1].includes(1) === 'vu one') && one === (typeof ''.padStart === 'undefined'),
    'Object.prototype stays in its VU': () => one === (({}).everywhere === 1) && one === ('everywhere' in []),
    'frozen built-ins stay in their VU': () => one === Object.isFrozen(JSON) && JSON.parse('[3]')[0] === 3,
    'prototype changes stay in their VU': () => one === (Object.getPrototypeOf(Set.prototype) === null) && one !== (new Set() instanceof Object),
    'k6 globals stay in their VU': () => one === (__ENV.VU_ONE === 'yes') && one === (crypto.subtle.vuOne === true) && one === (setTimeout.vuOne === true),
    'module exports stay in their VU': () => one === (http.vuOne === true) && one === (http.url === undefined ? false : http.url`x` === 'replaced') && typeof k6.check === 'function' && typeof http.get === 'function',
    'functions run in their VU': () => Function('return this')() === globalThis && (0, eval)('typeof __VU') === 'number',
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
