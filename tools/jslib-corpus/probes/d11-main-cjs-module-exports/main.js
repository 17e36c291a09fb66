module.exports = {
  options: { iterations: 1, vus: 1 },
  default: function () { console.log('iteration in module.exports main'); },
};
