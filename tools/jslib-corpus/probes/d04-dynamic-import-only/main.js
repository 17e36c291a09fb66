import * as m from './lib.js';
const show = (l, v) => console.log(l + ' = ' + (typeof v === 'function' ? 'function' : v === undefined ? 'undefined' : JSON.stringify(v)));
show('keys(ns)', Object.keys(m));
show('kind', m.kind);
show('p is promise', m.p instanceof Promise);
m.p.then((ns) => show('dynamic import resolved, keys', Object.keys(ns)), (e) => show('dynamic import rejected', String(e)));
export default function () {}
