!function (e) {
  'object' == typeof exports && 'undefined' != typeof module ? (module.exports = e(), globalThis.umdBranch = 'commonjs')
    : 'function' == typeof define && define.amd ? define([], e)
    : (('undefined' != typeof window ? window : 'undefined' != typeof global ? global : 'undefined' != typeof self ? self : this).Lib = e(), globalThis.umdBranch = 'global');
}(function () { return function Lib() {}; });
