exports.a = 1;
if (exports.a) {
  return;
}
exports.b = 2;
