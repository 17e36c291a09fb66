import d from './lib.js';
export const y = d;
