import { a, url, resolved } from 'https://127.0.0.1:18443/m01-remote-esm-relative/remote/sub/a.js';
const show = (l, v) => console.log(l + ' = ' + (typeof v === 'function' ? 'function' : v === undefined ? 'undefined' : JSON.stringify(v)));
show('a', a);
show('import.meta.url in remote', url);
show('import.meta.resolve in remote', resolved);
export default function () {}
