import d from './lib.js';
import * as ns from './lib.js';
const show = (l, v) => console.log(l + ' = ' + (typeof v === 'function' ? 'function' : v === undefined ? 'undefined' : JSON.stringify(v)));
const r = require('./lib.js');
show('require result', r);
show('require === default import', r === d);
show('require again ===', require('./lib.js') === r);
show('require via ./x/../lib.js ===', require('./x/../lib.js') === r);
show('require of esm namespace === import * (esm)', require('./esm.js') === esmNs);
export default function () {}
import * as esmNs from './esm.js';
