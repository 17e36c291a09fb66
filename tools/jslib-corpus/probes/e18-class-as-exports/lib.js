module.exports = class Foo { static s() { return 1; } };
module.exports.extra = 1;
