import { h } from 'http://127.0.0.1:18443/m06-http-scheme/remote/h.js';
console.log('h = ' + h);
export default function () {}
