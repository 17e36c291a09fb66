export const x = 1;
exports.y = 2;
