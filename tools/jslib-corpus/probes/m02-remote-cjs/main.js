import c from 'https://127.0.0.1:18443/m02-remote-cjs/remote/c.js';
import { v } from 'https://127.0.0.1:18443/m02-remote-cjs/remote/c.js';
const show = (l, v) => console.log(l + ' = ' + (typeof v === 'function' ? 'function' : v === undefined ? 'undefined' : JSON.stringify(v)));
show('default', c);
show('v', v);
export default function () {}
