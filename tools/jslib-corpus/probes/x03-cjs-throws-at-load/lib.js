exports.a = 1;
function boom() {
  throw new Error('boom from cjs');
}
boom();
