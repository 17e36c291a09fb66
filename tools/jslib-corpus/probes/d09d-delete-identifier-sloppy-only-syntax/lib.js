var q = 1; delete q;
exports.ok = true;
