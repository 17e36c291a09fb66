export const b = 'b';
