module.exports = 'ab';
