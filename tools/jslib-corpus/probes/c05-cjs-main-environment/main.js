const show = (l, v) => console.log(l + ' = ' + JSON.stringify(v));
show('typeof this', typeof this);
show('this === exports', this === exports);
show('keys(module)', Object.keys(module));
show('typeof require', typeof require);
exports.default = function () {};
