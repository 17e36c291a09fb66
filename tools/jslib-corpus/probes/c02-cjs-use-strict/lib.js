'use strict';
const show = (l, v) => console.log(l + ' = ' + JSON.stringify(v));
show('function this', (function () { return this; })() === undefined ? 'undefined' : 'object');
try { undeclaredVar = 1; show('assign undeclared', 'ok'); } catch (e) { show('assign undeclared', e.name); }
show('typeof this', typeof this);
