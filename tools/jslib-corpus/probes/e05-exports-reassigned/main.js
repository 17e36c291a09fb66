import * as m from './lib.js';
import d from './lib.js';
const show = (l, v) => console.log(l + ' = ' + (typeof v === 'function' ? 'function' : v === undefined ? 'undefined' : JSON.stringify(v)));
show('keys(ns)', Object.keys(m));
show('typeof default', typeof d);
show('keys(default)', d !== null && d !== undefined ? Object.keys(d) : null);
show('default', d);

export default function () {}
