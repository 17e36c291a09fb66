import { sleep } from 'k6';
const c = require('./cjs.js');
export const fromCjs = c.c;
export const sleepType = typeof sleep;
