module.exports = Object.create({ inherited: 1 });
module.exports.own = 2;
