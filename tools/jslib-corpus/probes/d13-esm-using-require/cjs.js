exports.c = 'cjs';
