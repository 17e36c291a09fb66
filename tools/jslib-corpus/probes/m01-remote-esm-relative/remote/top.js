export const top = 'top';
