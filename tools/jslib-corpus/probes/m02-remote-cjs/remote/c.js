const b = require('./b.js');
exports.v = 'c+' + b.b;
exports.thisIsExports = this === exports;
