import { r } from 'https://127.0.0.1:18443/m03-remote-imports-file/remote/r.js';
const show = (l, v) => console.log(l + ' = ' + (typeof v === 'function' ? 'function' : v === undefined ? 'undefined' : JSON.stringify(v)));
show('r', r);
export default function () {}
