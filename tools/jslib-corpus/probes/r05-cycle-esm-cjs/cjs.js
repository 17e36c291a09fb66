let saw;
try {
  const e = require('./esm.js');
  saw = { keys: Object.keys(e) };
  try { saw.value = e.fromEsm; } catch (err) { saw.value = 'throws ' + err.name; }
} catch (e) { saw = 'throws ' + e.name + ': ' + e.message; }
module.exports = { saw };
