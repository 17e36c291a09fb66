let branch;
try {
  branch = (typeof module === 'object' && module.exports) ? 'commonjs' : 'global';
} catch (e) { branch = 'throws ' + e.name + ': ' + e.message; }
export { branch };
