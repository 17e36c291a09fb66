// WebCrypto known-answer checks, run by rk6's integration tests and, unchanged, by k6
// (`k6 run tests/webcrypto/checks.js`) to compare results. k6 v1.1.0 passes 29 of the 30:
// it digests the whole buffer behind a typed-array window instead of the window.
import { check } from 'k6';

export const options = { iterations: 1, vus: 1 };

const subtle = crypto.subtle;

function bytes(text) {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}

function unhex(text) {
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(text.substr(i * 2, 2), 16);
  return out;
}

function hex(buffer) {
  return Array.from(new Uint8Array(buffer), (b) => (b < 16 ? '0' : '') + b.toString(16)).join('');
}

async function rejection(promise) {
  try {
    await promise;
    return 'resolved';
  } catch (e) {
    return e.name;
  }
}

export default async function () {
  const abc = bytes('abc');
  const digests = {
    'SHA-1': 'a9993e364706816aba3e25717850c26c9cd0d89d',
    'SHA-256': 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    'SHA-384': 'cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7',
    'SHA-512': 'ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f',
  };
  for (const name of Object.keys(digests)) {
    const d = await subtle.digest(name, abc);
    check(d, { [`digest ${name}`]: (d) => hex(d) === digests[name] });
  }
  const viaObject = await subtle.digest({ name: 'SHA-256' }, bytes('xxabcx').subarray(2, 5));
  check(viaObject, { 'digest of a typed array window with an algorithm object': (d) => hex(d) === digests['SHA-256'] });

  // RFC 4231 test case 2.
  const jefe = await subtle.importKey('raw', bytes('Jefe'), { name: 'HMAC', hash: 'SHA-256' }, true, ['sign', 'verify']);
  const msg = bytes('what do ya want for nothing?');
  const mac = await subtle.sign('HMAC', jefe, msg);
  check(mac, { 'HMAC-SHA-256 RFC 4231 #2': (m) => hex(m) === '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843' });
  check(jefe, {
    'HMAC key shape': (k) => k.type === 'secret' && k.extractable === true && k.algorithm.name === 'HMAC'
      && k.algorithm.hash.name === 'SHA-256' && k.algorithm.length === 32 && k.usages.join() === 'sign,verify',
  });
  check(await subtle.verify('HMAC', jefe, mac, msg), { 'verify accepts the right MAC': (v) => v === true });
  check(await subtle.verify('HMAC', jefe, mac, bytes('other')), { 'verify rejects other data': (v) => v === false });
  const jwk = await subtle.exportKey('jwk', jefe);
  check(jwk, { 'HMAC JWK export': (j) => j.kty === 'oct' && j.k === 'SmVmZQ' && j.alg === 'HS256' && j.ext === true });
  const back = await subtle.importKey('jwk', jwk, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  check(hex(await subtle.sign('HMAC', back, msg)), { 'JWK round trip signs the same': (h) => h === hex(mac) });
  const gen = await subtle.generateKey({ name: 'HMAC', hash: { name: 'SHA-512' } }, true, ['sign', 'verify']);
  check(gen, { 'generated HMAC key is the hash block size': (k) => k.algorithm.length === 1024 });
  const raw = await subtle.exportKey('raw', gen);
  check(raw, { 'raw export of a generated HMAC key': (r) => r.byteLength === 128 });

  // NIST GCM test case 4 (AES-128, 12-byte IV, additional data).
  const gcmKey = await subtle.importKey('raw', unhex('feffe9928665731c6d6a8f9467308308'), 'AES-GCM', true, ['encrypt', 'decrypt']);
  const gcmParams = { name: 'AES-GCM', iv: unhex('cafebabefacedbaddecaf888'), additionalData: unhex('feedfacedeadbeeffeedfacedeadbeefabaddad2') };
  const plain = unhex('d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39');
  const sealed = await subtle.encrypt(gcmParams, gcmKey, plain);
  check(sealed, {
    'AES-GCM NIST #4 ciphertext and tag': (c) => hex(c) === '42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091' + '5bc94fbc3221a5db94fae95ae7121a47',
  });
  check(hex(await subtle.decrypt(gcmParams, gcmKey, sealed)), { 'AES-GCM decrypts': (p) => p === hex(plain) });
  const short = await subtle.encrypt({ ...gcmParams, tagLength: 96 }, gcmKey, plain);
  check(short, { 'AES-GCM 96-bit tag': (c) => c.byteLength === plain.length + 12 });
  const tampered = new Uint8Array(sealed);
  tampered[0] ^= 1;
  check(await rejection(subtle.decrypt(gcmParams, gcmKey, tampered)), { 'tampered GCM data is an OperationError': (n) => n === 'OperationError' });
  const aes = await subtle.generateKey({ name: 'AES-GCM', length: 256 }, true, ['encrypt', 'decrypt']);
  check(aes, { 'generated AES key': (k) => k.algorithm.name === 'AES-GCM' && k.algorithm.length === 256 });
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const round = await subtle.decrypt({ name: 'AES-GCM', iv }, aes, await subtle.encrypt({ name: 'AES-GCM', iv }, aes, abc));
  check(hex(round), { 'AES-GCM round trip with a generated key': (h) => h === hex(abc) });

  // NIST SP 800-38A F.2.1 (CBC) and F.5.1 (CTR), AES-128.
  const nistKey = unhex('2b7e151628aed2a6abf7158809cf4f3c');
  const nistPlain = unhex('6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51');
  const cbcKey = await subtle.importKey('raw', nistKey, { name: 'AES-CBC' }, false, ['encrypt', 'decrypt']);
  const cbcParams = { name: 'AES-CBC', iv: unhex('000102030405060708090a0b0c0d0e0f') };
  const cbc = await subtle.encrypt(cbcParams, cbcKey, nistPlain);
  check(cbc, { 'AES-CBC NIST F.2.1 (+ padding block)': (c) => c.byteLength === 48 && hex(c).startsWith('7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b2') });
  check(hex(await subtle.decrypt(cbcParams, cbcKey, cbc)), { 'AES-CBC decrypts': (p) => p === hex(nistPlain) });
  const ctrKey = await subtle.importKey('raw', nistKey, { name: 'AES-CTR' }, false, ['encrypt']);
  const ctr = await subtle.encrypt({ name: 'AES-CTR', counter: unhex('f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff'), length: 64 }, ctrKey, nistPlain);
  check(ctr, { 'AES-CTR NIST F.5.1': (c) => hex(c) === '874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff' });

  // Errors carry WebCrypto exception names.
  check(await rejection(subtle.digest('MD5', abc)), { 'unknown digest is NotSupportedError': (n) => n === 'NotSupportedError' });
  check(await rejection(subtle.exportKey('raw', cbcKey)), { 'non-extractable export is InvalidAccessError': (n) => n === 'InvalidAccessError' });
  check(await rejection(subtle.decrypt(cbcParams, ctrKey, cbc)), { 'algorithm mismatch is InvalidAccessError': (n) => n === 'InvalidAccessError' });
  check(await rejection(subtle.decrypt({ name: 'AES-CTR', counter: new Uint8Array(16), length: 64 }, ctrKey, cbc)), { 'missing usage is InvalidAccessError': (n) => n === 'InvalidAccessError' });
  check(await rejection(subtle.importKey('raw', new Uint8Array(5), 'AES-GCM', true, ['encrypt'])), { 'bad AES key length is DataError': (n) => n === 'DataError' });
  check(await rejection(subtle.importKey('raw', new Uint8Array(16), 'AES-GCM', true, ['sign'])), { 'bad usage is SyntaxError': (n) => n === 'SyntaxError' });
  check(await rejection(subtle.encrypt({ name: 'AES-GCM', iv: new Uint8Array(12), tagLength: 64 }, aes, abc)), { '64-bit GCM tag is NotSupportedError': (n) => n === 'NotSupportedError' });
  check(await rejection(subtle.sign('HMAC', jefe, 'a string')), { 'string data is OperationError': (n) => n === 'OperationError' });
}
