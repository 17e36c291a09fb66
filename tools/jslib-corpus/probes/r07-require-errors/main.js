const show = (l, v) => console.log(l + ' = ' + (typeof v === 'function' ? 'function' : v === undefined ? 'undefined' : JSON.stringify(v)));
const t = (f) => { try { f(); return 'ok'; } catch (e) { return 'throws ' + (e && e.name) + ': ' + (e && e.message !== undefined ? e.message : String(e)); } };
show('require("")', t(() => require('')));
show('require("lodash")', t(() => require('lodash')));
show('require("./nope.js")', t(() => require('./nope.js')));
export default function () {
  show('require in default', t(() => require('k6')));
}
