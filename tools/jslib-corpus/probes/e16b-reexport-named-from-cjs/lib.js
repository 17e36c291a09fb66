exports.a = 1;
exports.default = 'd';
