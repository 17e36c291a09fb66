<!-- an HTML-like comment
exports.ok = true;
