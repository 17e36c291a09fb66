let saw;
try { saw = JSON.stringify(require('./a.js')); } catch (e) { saw = 'throws ' + e.name + ': ' + e.message; }
exports.saw = saw;
