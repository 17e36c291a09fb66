exports.early = 1;
globalThis.addLate = function () { exports.late = 2; };
