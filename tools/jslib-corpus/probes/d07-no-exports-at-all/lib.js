var x = 1;
globalThis.libThis = this === undefined ? 'undefined' : typeof this;
