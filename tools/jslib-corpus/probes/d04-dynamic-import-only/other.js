export const o = 1;
