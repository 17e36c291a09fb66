exports.__esModule = true;
exports.a = 1;
