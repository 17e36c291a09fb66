export const l = 'local';
