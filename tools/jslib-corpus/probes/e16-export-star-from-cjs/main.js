import * as m from './mid.js';
const show = (l, v) => console.log(l + ' = ' + (typeof v === 'function' ? 'function' : v === undefined ? 'undefined' : JSON.stringify(v)));
show('keys(ns)', Object.keys(m));
show('ns.a', m.a);
show('ns.renamed', m.renamed);
export default function () {}
