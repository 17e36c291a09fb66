exports.where = 'b.js (top)';
