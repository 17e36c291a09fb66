globalThis.tlaThis = typeof this;
await Promise.resolve(1);
globalThis.tlaDone = true;
