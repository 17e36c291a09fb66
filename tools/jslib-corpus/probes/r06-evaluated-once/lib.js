globalThis.runs = (globalThis.runs || 0) + 1;
module.exports = { id: Math.random() };
