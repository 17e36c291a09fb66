exports['a-b'] = 1;
exports['0'] = 2;
exports[Symbol.for('s')] = 3;
