exports.r = 'remote cjs';
