import * as m from './lib.js';
const show = (l, v) => console.log(l + ' = ' + (typeof v === 'function' ? 'function' : v === undefined ? 'undefined' : JSON.stringify(v)));
show('ns', { fromCjs: m.fromCjs, sleepType: m.sleepType });
export default function () {}
