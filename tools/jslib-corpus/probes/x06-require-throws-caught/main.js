const show = (l, v) => console.log(l + ' = ' + (typeof v === 'function' ? 'function' : v === undefined ? 'undefined' : JSON.stringify(v)));
for (let i = 0; i < 2; i++) {
  try { require('./lib.js'); show('require', 'ok'); } catch (e) { show('caught', String(e && e.message !== undefined ? e.message : e)); }
}
show('tries', globalThis.tries);
export default function () {}
