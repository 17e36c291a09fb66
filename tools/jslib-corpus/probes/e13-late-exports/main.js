import * as m from './lib.js';
import { late } from './lib.js';
const show = (l, v) => console.log(l + ' = ' + (typeof v === 'function' ? 'function' : v === undefined ? 'undefined' : JSON.stringify(v)));
show('late before', late);
globalThis.addLate();
show('keys(ns)', Object.keys(m));
show('late after', late);
show('ns.late', m.late);
export default function () {}
