import * as m from './lib.js';
import d from './lib.js';
const show = (l, v) => console.log(l + ' = ' + (typeof v === 'function' ? 'function' : v === undefined ? 'undefined' : JSON.stringify(v)));
show('VU ' + __VU + ' keys(ns)', Object.keys(m));
show('VU ' + __VU + ' ns.b', m.b);
show('VU ' + __VU + ' keys(default)', Object.keys(d));
export default function () {}
