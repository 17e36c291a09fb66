const show = (l, v) => console.log(l + ' = ' + (typeof v === 'function' ? 'function' : v === undefined ? 'undefined' : JSON.stringify(v)));
const t = (f) => { try { return f(); } catch (e) { return 'throws ' + e.name + ': ' + e.message; } };
show('require(data.json)', t(() => require('./data.json')));
show('require(list.json)', t(() => require('./list.json')));
export default function () {}
