import { x } from './one.js';
import { y } from './two.js';
const show = (l, v) => console.log(l + ' = ' + (typeof v === 'function' ? 'function' : v === undefined ? 'undefined' : JSON.stringify(v)));
show('same object', x === y);
show('require same', require('./lib.js') === x);
show('runs', globalThis.runs);
export default function () {}
