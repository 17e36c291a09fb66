if (__VU === 0) { exports.a = 'vu0'; } else { exports.b = 'vu' + __VU; }
