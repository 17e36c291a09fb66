const show = (l, v) => console.log(l + ' = ' + JSON.stringify(v));
show('function this', (function () { return this; })() === undefined ? 'undefined' : 'object');
try { undeclaredVar2 = 1; show('assign undeclared', 'ok'); } catch (e) { show('assign undeclared', e.name); }
try { show('arguments.callee', typeof arguments.callee); } catch (e) { show('arguments.callee', e.name); }
