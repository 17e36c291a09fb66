export const a = 1;
export default 'dflt';
