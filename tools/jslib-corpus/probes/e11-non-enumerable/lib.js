Object.defineProperty(exports, 'hidden', { value: 1 });
exports.shown = 2;
