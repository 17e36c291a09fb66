export const e = 1;
