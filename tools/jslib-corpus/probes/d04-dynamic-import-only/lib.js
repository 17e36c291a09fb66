exports.p = import('./other.js');
exports.kind = typeof module;
