module.exports = Object.create({ default: 'from proto' });
module.exports.own = 1;
