exports.where = 'lib/sub/c.js';
exports.up = require('../b.js').where;
