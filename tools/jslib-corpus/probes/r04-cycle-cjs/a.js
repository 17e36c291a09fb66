exports.a1 = 1;
const b = require('./b.js');
exports.a2 = 2;
exports.bSaw = b.saw;
