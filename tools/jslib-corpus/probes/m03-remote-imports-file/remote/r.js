import { l } from 'file:///nonexistent/rk6-probe/local.js';
export const r = l;
