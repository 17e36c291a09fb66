const l = require('./lib.js');
console.log('done = ' + l.done);
export default function () {}
