exports.a = 1; throw new Error('line one');
