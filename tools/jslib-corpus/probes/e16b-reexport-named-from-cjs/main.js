import { a, renamed } from './mid.js';
const show = (l, v) => console.log(l + ' = ' + (typeof v === 'function' ? 'function' : v === undefined ? 'undefined' : JSON.stringify(v)));
show('a', a);
show('renamed', renamed);
export default function () {}
