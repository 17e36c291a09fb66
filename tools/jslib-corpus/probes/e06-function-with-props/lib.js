module.exports = function f() { return 42; };
module.exports.a = 1;
