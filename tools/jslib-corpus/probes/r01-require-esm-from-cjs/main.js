import d from './lib.js';
const show = (l, v) => console.log(l + ' = ' + (typeof v === 'function' ? 'function' : v === undefined ? 'undefined' : JSON.stringify(v)));
show('default', d);

export default function () {}
