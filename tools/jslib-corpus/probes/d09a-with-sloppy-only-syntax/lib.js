with ({}) {}
exports.ok = true;
