const show = (l, v) => console.log(l + ' = ' + (typeof v === 'function' ? 'function' : v === undefined ? 'undefined' : JSON.stringify(v)));
show('require remote', require('https://127.0.0.1:18443/m05-require-remote/remote/c.js'));
export default function () {}
