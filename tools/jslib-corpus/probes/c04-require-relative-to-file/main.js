const show = (l, v) => console.log(l + ' = ' + (typeof v === 'function' ? 'function' : v === undefined ? 'undefined' : JSON.stringify(v)));
const a = require('./lib/a.js');
show('a', a);
show('top b', require('./b.js').where);
export default function () {}
