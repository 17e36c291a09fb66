// PBKDF2 (k6 1.6: release notes v1.6.0, #5380; k6-docs javascript-api/crypto/pbkdf2params
// and subtlecrypto/derivekey) and HKDF (WebCrypto, not in k6) through deriveBits and
// deriveKey. Expected values: RFC 6070 (PBKDF2-HMAC-SHA1), Python's
// hashlib.pbkdf2_hmac (SHA-256/384/512) and RFC 5869 test case 1 (HKDF-SHA-256).
import { check } from 'k6';

export const options = { iterations: 1, vus: 1 };

const subtle = crypto.subtle;
const text = (s) => new TextEncoder().encode(s);
const unhex = (s) => new Uint8Array(s.match(/../g).map((h) => parseInt(h, 16)));
const hex = (b) => Array.from(new Uint8Array(b), (x) => (x < 16 ? '0' : '') + x.toString(16)).join('');
async function rejection(p) {
  try {
    await p;
    return 'resolved';
  } catch (e) {
    return `${e.name}: ${e.message}`;
  }
}

async function pbkdf2(password, salt, iterations, hash, bits) {
  const key = await subtle.importKey('raw', text(password), 'PBKDF2', false, ['deriveBits']);
  return hex(await subtle.deriveBits({ name: 'PBKDF2', hash, salt: text(salt), iterations }, key, bits));
}

export default async function () {
  const vectors = [
    await pbkdf2('password', 'salt', 1, 'SHA-1', 160),
    await pbkdf2('password', 'salt', 2, 'SHA-1', 160),
    await pbkdf2('password', 'salt', 4096, 'SHA-1', 160),
    await pbkdf2('passwordPASSWORDpassword', 'saltSALTsaltSALTsaltSALTsaltSALTsalt', 4096, 'SHA-1', 200),
    await pbkdf2('pass\0word', 'sa\0lt', 4096, 'SHA-1', 128),
    await pbkdf2('password', 'salt', 4096, 'SHA-256', 256),
    await pbkdf2('my secret password', '0123456789abcdef', 1000, { name: 'SHA-512' }, 512),
    await pbkdf2('pw', 'NaCl', 2, 'sha-384', 128),
  ];
  check(vectors, {
    'PBKDF2 known answers': (v) =>
      JSON.stringify(v) ===
      JSON.stringify([
        '0c60c80f961f0e71f3a9b524af6012062fe037a6',
        'ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957',
        '4b007901b765489abead49d926f721d065a429c1',
        '3d2eec4fe41c849b80c8d83662c0e44a8b291a964cf2f07038',
        '56fa6aa75548099dcc37d7f03425e0c3',
        'c5e478d59288c841aa530db6845c4c8d962893a001ce4e11a4963873aa98134a',
        'c3080ec6fc2eaa96c13ba67b28374a71c8f5aaafd330984a369e77ab5056e657dc616edf25b7e2302f12002d431c6f4e069b7cb102effbd2084fd30b53bad586',
        '160609de2a5f746496ee945bdb404cb3',
      ]),
  });

  const base = await subtle.importKey('raw', text('password'), { name: 'PBKDF2' }, false, ['deriveKey', 'deriveBits']);
  check(base, {
    'the password key': (k) =>
      k.type === 'secret' && k.extractable === false && k.algorithm.name === 'PBKDF2' && k.usages.join() === 'deriveKey,deriveBits',
  });
  const params = { name: 'PBKDF2', hash: 'SHA-256', salt: text('salt'), iterations: 1000 };
  const aes = await subtle.deriveKey(params, base, { name: 'AES-GCM', length: 128 }, true, ['encrypt', 'decrypt']);
  const cbc = await subtle.deriveKey(params, base, { name: 'AES-CBC', length: 256 }, true, ['encrypt']);
  const ctr = await subtle.deriveKey(params, base, { name: 'AES-CTR', length: 192 }, true, ['decrypt']);
  const kw = await subtle.deriveKey(params, base, { name: 'AES-KW', length: 128 }, true, ['wrapKey']);
  const mac = await subtle.deriveKey(params, base, { name: 'HMAC', hash: 'SHA-256' }, true, ['sign']);
  const short = await subtle.deriveKey(params, base, { name: 'HMAC', hash: 'SHA-1', length: 128 }, true, ['verify']);
  const derived = [aes, cbc, ctr, kw, mac, short];
  const raw = [];
  for (const k of derived) raw.push(hex(await subtle.exportKey('raw', k)));
  // The keys are the first bits PBKDF2 derives: 512 bits for an HMAC key without a length.
  const full = '632c2812e46d4604102ba7618e9d6d7d2f8128f6266b4a03264d2a0460b7dcb388b3b1131f741bcbeb02541c8c2e97bd8bed62ab6425542e45512b7312f440eb';
  check(raw, {
    'deriveKey: the derived bits': (r) =>
      r[0] === full.slice(0, 32) && r[1] === full.slice(0, 64) && r[2] === full.slice(0, 48) && r[3] === full.slice(0, 32) && r[4] === full && r[5] === full.slice(0, 32),
  });
  check(derived, {
    'deriveKey: the key algorithms': (d) =>
      d[0].algorithm.name === 'AES-GCM' && d[0].algorithm.length === 128 && d[0].usages.join() === 'encrypt,decrypt' &&
      d[4].algorithm.name === 'HMAC' && d[4].algorithm.hash.name === 'SHA-256' && d[4].algorithm.length === 512,
  });
  const iv = new Uint8Array(12);
  const sealed = await subtle.encrypt({ name: 'AES-GCM', iv }, aes, text('hello'));
  check(new TextDecoder().decode(await subtle.decrypt({ name: 'AES-GCM', iv }, aes, sealed)), {
    'a derived AES-GCM key works': (t) => t === 'hello',
  });

  const ikm = await subtle.importKey('raw', unhex('0b'.repeat(22)), 'HKDF', false, ['deriveBits', 'deriveKey']);
  const hkdf = { name: 'HKDF', hash: 'SHA-256', salt: unhex('000102030405060708090a0b0c'), info: unhex('f0f1f2f3f4f5f6f7f8f9') };
  check(hex(await subtle.deriveBits(hkdf, ikm, 336)), {
    'HKDF RFC 5869 case 1': (h) => h === '3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865',
  });
  const hkdfKey = await subtle.deriveKey(hkdf, ikm, { name: 'AES-CBC', length: 128 }, true, ['encrypt']);
  check(hex(await subtle.exportKey('raw', hkdfKey)), { 'HKDF deriveKey': (h) => h === '3cb25f25faacd57a90434f64d0362f2a' });

  const errors = [
    await rejection(subtle.importKey('raw', text('pw'), 'PBKDF2', true, ['deriveBits'])),
    await rejection(subtle.importKey('raw', text('pw'), 'PBKDF2', false, ['encrypt'])),
    await rejection(subtle.importKey('jwk', { kty: 'oct', k: 'cHc' }, 'PBKDF2', false, ['deriveBits'])),
    await rejection(subtle.importKey('raw', text('pw'), 'PBKDF2', false, [])),
    await rejection(subtle.generateKey('PBKDF2', false, ['deriveBits'])),
    await rejection(subtle.deriveBits({ ...params, iterations: 0 }, base, 256)),
    await rejection(subtle.deriveBits({ name: 'PBKDF2', salt: text('s'), iterations: 1 }, base, 256)),
    await rejection(subtle.deriveBits(params, base, 0)),
    await rejection(subtle.deriveBits(params, base, 12)),
    await rejection(subtle.deriveBits(params, ikm, 256)),
    await rejection(subtle.deriveKey(params, base, { name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign'])),
    await rejection(subtle.deriveKey(params, base, { name: 'AES-GCM', length: 100 }, true, ['encrypt'])),
    await rejection(subtle.deriveKey(params, base, { name: 'AES-GCM', length: 128 }, true, [])),
    await rejection(subtle.exportKey('raw', base)),
  ];
  check(errors, {
    'PBKDF2 errors': (e) =>
      JSON.stringify(e) ===
      JSON.stringify([
        'SyntaxError: invalid value for param extractable',
        'SyntaxError: invalid key usage: encrypt',
        'NotSupportedError: invalid format: jwk',
        'SyntaxError: usages cannot not be empty for a secret or private CryptoKey',
        'NotSupportedError: algorithm "PBKDF2" is not supported for operation "generateKey" by rk6',
        "OperationError: number of iterations can't be 0",
        'SyntaxError: could not get hash from algorithm parameter',
        'OperationError: length can not be 0',
        'OperationError: currently only multiples of 8 are supported for length',
        'OperationError: provided basekey algorithm and deriveKey algorithm name dont match HKDF!=PBKDF2',
        "NotSupportedError: derive key function doesn't support algorithm ECDSA",
        'OperationError: invalid AES key length 100; use 128, 192 or 256',
        'SyntaxError: usages cannot not be empty for a secret or private CryptoKey',
        'InvalidAccessError: the key is not extractable',
      ]),
  });
}
