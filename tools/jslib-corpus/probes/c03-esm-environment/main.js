const show = (l, v) => console.log(l + ' = ' + (typeof v === 'function' ? 'function' : v === undefined ? 'undefined' : JSON.stringify(v)));
const t = (f) => { try { return f(); } catch (e) { return 'throws ' + e.name + ': ' + e.message; } };
show('typeof this', typeof this);
show('typeof module', t(() => typeof module));
show('typeof exports', t(() => typeof exports));
show('typeof require', typeof require);
show('typeof __filename', t(() => typeof __filename));
show('typeof global', typeof global);
show('global === globalThis', t(() => global === globalThis));
show('typeof self', typeof self);
show('typeof window', typeof window);
show('typeof define', typeof define);
show('module in globalThis', 'module' in globalThis);
show('import.meta.url', import.meta.url);
show('typeof import.meta.resolve', typeof import.meta.resolve);
export default function () {}
