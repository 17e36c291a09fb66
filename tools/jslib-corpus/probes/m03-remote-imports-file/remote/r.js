import { l } from 'file:///work/corpus/probes/m03-remote-imports-file/local.js';
export const r = l;
