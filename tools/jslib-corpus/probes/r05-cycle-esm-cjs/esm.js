import c from './cjs.js';
export const fromEsm = 'esm';
export const sawC = c;
