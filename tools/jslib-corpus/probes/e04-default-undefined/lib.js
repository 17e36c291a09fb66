exports.default = undefined;
exports.a = 1;
