exports.octal = 010;
exports.ok = true;
