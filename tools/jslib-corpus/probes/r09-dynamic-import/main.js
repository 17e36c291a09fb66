const show = (l, v) => console.log(l + ' = ' + (typeof v === 'function' ? 'function' : v === undefined ? 'undefined' : JSON.stringify(v)));
import('./esm.js').then((ns) => show('esm keys', Object.keys(ns)), (e) => show('esm rejected', String(e)));
import('./cjs.js').then((ns) => show('cjs keys', Object.keys(ns)), (e) => show('cjs rejected', String(e)));
export default function () {}
