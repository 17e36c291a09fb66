(function (root, factory) {
  if (typeof define === 'function' && define.amd) { define([], factory); globalThis.umdBranch = 'amd'; }
  else if (typeof module === 'object' && module.exports) { module.exports = factory(); globalThis.umdBranch = 'commonjs'; }
  else { root.Lib = factory(); globalThis.umdBranch = 'global'; }
}(typeof self !== 'undefined' ? self : this, function () { return { v: 1 }; }));
