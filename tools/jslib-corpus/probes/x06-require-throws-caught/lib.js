globalThis.tries = (globalThis.tries || 0) + 1;
throw new Error('boom ' + globalThis.tries);
