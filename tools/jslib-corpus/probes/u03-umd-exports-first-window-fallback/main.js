import * as m from './lib.js';
import d from './lib.js';
const show = (l, v) => console.log(l + ' = ' + (typeof v === 'function' ? 'function' : v === undefined ? 'undefined' : JSON.stringify(v)));
show('keys(ns)', Object.keys(m));
show('default', d);
show('branch', globalThis.umdBranch); show('typeof globalThis.Lib', typeof globalThis.Lib);
export default function () {}
