const show = (l, v) => console.log(l + ' = ' + JSON.stringify(v === undefined ? 'undefined' : v));
show('typeof this', typeof this);
show('this === exports', this === exports);
show('typeof __filename', typeof __filename);
show('typeof __dirname', typeof __dirname);
show('arguments.length', arguments.length);
show('require === globalThis.require', require === globalThis.require);
show('function this', (function () { return this; })() === undefined ? 'undefined' : 'object');
try { undeclaredVar3 = 1; show('assign undeclared', 'ok'); } catch (e) { show('assign undeclared', e.name); }
exports.done = true;
