import * as e from './esm.js';
const show = (l, v) => console.log(l + ' = ' + (typeof v === 'function' ? 'function' : v === undefined ? 'undefined' : JSON.stringify(v)));
show('esm.sawC', e.sawC);
export default function () {}
