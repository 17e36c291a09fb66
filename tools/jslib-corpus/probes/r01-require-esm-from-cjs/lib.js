const e = require('./esm.js');
exports.keys = Object.keys(e);
exports.tag = Object.prototype.toString.call(e);
exports.def = e.default;
exports.frozen = Object.isFrozen(e);
