import d from './lib.js';
export default function () {}
