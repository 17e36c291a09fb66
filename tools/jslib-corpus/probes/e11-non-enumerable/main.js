import * as m from './lib.js';
import { hidden } from './lib.js';
const show = (l, v) => console.log(l + ' = ' + (typeof v === 'function' ? 'function' : v === undefined ? 'undefined' : JSON.stringify(v)));
show('keys(ns)', Object.keys(m));
show('hidden', hidden);
show('ns.hidden', m.hidden);
export default function () {}
