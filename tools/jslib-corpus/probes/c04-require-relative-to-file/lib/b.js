exports.where = 'lib/b.js';
