exports.c = 1;
