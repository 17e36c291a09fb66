export * from './lib.js';
export { a as renamed } from './lib.js';
