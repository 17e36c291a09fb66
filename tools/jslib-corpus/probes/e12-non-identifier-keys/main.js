import * as m from './lib.js';
const show = (l, v) => console.log(l + ' = ' + (typeof v === 'function' ? 'function' : v === undefined ? 'undefined' : JSON.stringify(v)));
show('keys(ns)', Object.keys(m));
show('ns["a-b"]', m['a-b']);
show('ns[0]', m[0]);
export default function () {}
