import './lib.js';
export default function () {}
