import { b } from './b.js';
import { top } from '/m01-remote-esm-relative/remote/top.js';
export const a = 'a+' + b + '+' + top;
export const url = import.meta.url;
export const resolved = import.meta.resolve('./x.js');
