exports.options = { iterations: 2, vus: 1 };
exports.default = function () {
  console.log('iteration in cjs main, this is ' + typeof this);
};
console.log('init: this === exports ' + (this === exports));
