const k6 = require('k6');
exports.sleepType = typeof k6.sleep;
