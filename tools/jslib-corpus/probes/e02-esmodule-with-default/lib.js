Object.defineProperty(exports, '__esModule', { value: true });
exports.default = function named() { return 'dflt'; };
exports.a = 1;
