export const h = 'plain http';
