let n = 0;
Object.defineProperty(exports, 'g', { enumerable: true, get() { n += 1; return n; } });
