exports.b = 'b';
