exports.b = require('./b.js').where;
exports.c = require('./sub/c.js');
