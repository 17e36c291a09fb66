import * as m from './lib.js';
import { g } from './lib.js';
const show = (l, v) => console.log(l + ' = ' + (typeof v === 'function' ? 'function' : v === undefined ? 'undefined' : JSON.stringify(v)));
show('keys(ns)', Object.keys(m));
show('g', g);
show('g again', g);
show('ns.g', m.g);
show('ns.g again', m.g);
export default function () {}
