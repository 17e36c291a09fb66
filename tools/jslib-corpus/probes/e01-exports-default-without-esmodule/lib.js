exports.default = 5;
exports.a = 1;
