import d from './lib.js';
export const x = d;
