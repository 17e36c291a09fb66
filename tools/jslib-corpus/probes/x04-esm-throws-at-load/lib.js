export const a = 1;
function boom() {
  throw new Error('boom from esm');
}
boom();
