exports = { a: 1 };
