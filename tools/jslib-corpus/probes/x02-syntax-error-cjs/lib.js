exports.a = 1;
exports.b = ;
