// Checks what produce.js made under the other engine (read from `made.json`): signatures
// verify, the ciphertext decrypts, ECDH derives the same bits, the JWT verifies, and keys
// re-export as they were imported. Every result is a check.
import { check } from 'k6';
import encoding from 'k6/encoding';

export const options = { iterations: 1, vus: 1 };

const made = JSON.parse(open('./made.json'));
const subtle = crypto.subtle;

function bytes(text) {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}
const unb64 = (text) => encoding.b64decode(text, 'std');
const b64 = (buf) => encoding.b64encode(buf, 'std');
const text = (buf) => String.fromCharCode(...new Uint8Array(buf));
const message = bytes(made.message);
// The key material of a JWK, its numbers without leading zeros: k6 omits `key_ops`, `ext`
// and an RSA key's `alg`, and strips the leading zeros of EC coordinates, which rk6 keeps
// (as WebCrypto and RFC 7518 have them).
const MATERIAL = ['kty', 'crv', 'x', 'y', 'd', 'n', 'e', 'p', 'q', 'dp', 'dq', 'qi'];
function number(text) {
  const b = new Uint8Array(encoding.b64decode(text, 'rawurl'));
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  return Array.from(b.subarray(i)).join(',');
}
const material = (jwk) => MATERIAL.filter((k) => k in jwk)
  .map((k) => [k, k === 'kty' || k === 'crv' ? jwk[k] : number(jwk[k])]);
const sameJwk = (a, b) => JSON.stringify(material(a)) === JSON.stringify(material(b));

export default async function () {
  for (const e of made.ecdsa) {
    const alg = { name: 'ECDSA', namedCurve: e.curve };
    const sign = { name: 'ECDSA', hash: e.hash };
    const sig = unb64(e.signature);
    const fromJwk = await subtle.importKey('jwk', e.publicJwk, alg, true, ['verify']);
    const fromSpki = await subtle.importKey('spki', unb64(e.spki), alg, true, ['verify']);
    const fromRaw = await subtle.importKey('raw', unb64(e.raw), alg, true, ['verify']);
    check(await subtle.verify(sign, fromJwk, sig, message), { [`ECDSA ${e.curve} verifies with the JWK key`]: (v) => v === true });
    check(await subtle.verify(sign, fromSpki, sig, message), { [`ECDSA ${e.curve} verifies with the SPKI key`]: (v) => v === true });
    check(await subtle.verify(sign, fromRaw, sig, message), { [`ECDSA ${e.curve} verifies with the raw key`]: (v) => v === true });
    check(await subtle.verify(sign, fromRaw, sig, bytes('another message')), { [`ECDSA ${e.curve} rejects another message`]: (v) => v === false });
    check(b64(await subtle.exportKey('spki', fromJwk)), { [`ECDSA ${e.curve} JWK re-exports as the same SPKI`]: (v) => v === e.spki });
    check(await subtle.exportKey('jwk', fromSpki), { [`ECDSA ${e.curve} SPKI re-exports as the same JWK`]: (v) => sameJwk(v, e.publicJwk) });
    // A private key from the other engine signs what its public half verifies.
    const fromPkcs8 = await subtle.importKey('pkcs8', unb64(e.pkcs8), alg, true, ['sign']);
    const privJwk = await subtle.importKey('jwk', e.privateJwk, alg, true, ['sign']);
    const mine = await subtle.sign(sign, fromPkcs8, message);
    check(await subtle.verify(sign, fromJwk, mine, message), { [`ECDSA ${e.curve} PKCS #8 key signs for its public key`]: (v) => v === true });
    check(await subtle.exportKey('jwk', fromPkcs8), { [`ECDSA ${e.curve} PKCS #8 re-exports as the same JWK`]: (v) => sameJwk(v, e.privateJwk) });
    check(b64(await subtle.exportKey('pkcs8', privJwk)), { [`ECDSA ${e.curve} private JWK imports`]: (v) => v.length > 0 });
  }

  for (const [name, params, e] of [
    ['RSASSA-PKCS1-v1_5', {}, made.pkcs1],
    ['RSA-PSS', { saltLength: 32 }, made.pss],
  ]) {
    const alg = { name, hash: 'SHA-256' };
    const sig = unb64(e.signature);
    const fromSpki = await subtle.importKey('spki', unb64(e.spki), alg, true, ['verify']);
    const fromJwk = await subtle.importKey('jwk', e.publicJwk, alg, true, ['verify']);
    check(await subtle.verify({ name, ...params }, fromSpki, sig, message), { [`${name} verifies with the SPKI key`]: (v) => v === true });
    check(await subtle.verify({ name, ...params }, fromSpki, sig, bytes('another message')), { [`${name} rejects another message`]: (v) => v === false });
    // Only imported: k6 1.1 can neither verify with nor export an RSA public key it
    // imported from a JWK.
    check(fromJwk.algorithm, { [`${name} public JWK imports`]: (a) => a.modulusLength === 2048 });
    check(await subtle.exportKey('jwk', fromSpki), { [`${name} SPKI re-exports as the same JWK`]: (v) => sameJwk(v, e.publicJwk) });
    const priv = await subtle.importKey('pkcs8', unb64(e.pkcs8), alg, true, ['sign']);
    const mine = await subtle.sign({ name, ...params }, priv, message);
    check(await subtle.verify({ name, ...params }, fromSpki, mine, message), { [`${name} PKCS #8 key signs for its public key`]: (v) => v === true });
  }

  const oaep = { name: 'RSA-OAEP', hash: 'SHA-256' };
  const fromPkcs8 = await subtle.importKey('pkcs8', unb64(made.oaep.pkcs8), oaep, true, ['decrypt']);
  const fromJwk = await subtle.importKey('jwk', made.oaep.privateJwk, oaep, true, ['decrypt']);
  const ciphertext = unb64(made.oaep.ciphertext);
  check(text(await subtle.decrypt({ name: 'RSA-OAEP' }, fromPkcs8, ciphertext)), { 'RSA-OAEP decrypts with the PKCS #8 key': (v) => v === made.message });
  check(text(await subtle.decrypt({ name: 'RSA-OAEP' }, fromJwk, ciphertext)), { 'RSA-OAEP decrypts with the JWK key': (v) => v === made.message });
  const pub = await subtle.importKey('spki', unb64(made.oaep.spki), oaep, true, ['encrypt']);
  const again = await subtle.encrypt({ name: 'RSA-OAEP' }, pub, bytes('round trip'));
  check(text(await subtle.decrypt({ name: 'RSA-OAEP' }, fromJwk, again)), { 'RSA-OAEP SPKI key encrypts for its private key': (v) => v === 'round trip' });

  const ecdh = { name: 'ECDH', namedCurve: 'P-256' };
  const a = await subtle.importKey('pkcs8', unb64(made.ecdh.privateA), ecdh, true, ['deriveBits']);
  const bPub = await subtle.importKey('raw', unb64(made.ecdh.publicB), ecdh, true, []);
  const b = await subtle.importKey('jwk', made.ecdh.privateB, ecdh, true, ['deriveBits']);
  const aPub = await subtle.importKey('spki', unb64(made.ecdh.publicA), ecdh, true, []);
  check(b64(await subtle.deriveBits({ name: 'ECDH', public: bPub }, a, 256)), { 'ECDH derives the same bits from A': (v) => v === made.ecdh.bits });
  check(b64(await subtle.deriveBits({ name: 'ECDH', public: aPub }, b, 256)), { 'ECDH derives the same bits from B': (v) => v === made.ecdh.bits });

  const [header, payload, signature] = made.jwt.token.split('.');
  const key = await subtle.importKey('jwk', made.jwt.jwk, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['verify']);
  const valid = await subtle.verify(
    { name: 'ECDSA', hash: 'SHA-256' },
    key,
    encoding.b64decode(signature, 'rawurl'),
    bytes(`${header}.${payload}`),
  );
  const claims = JSON.parse(encoding.b64decode(payload, 'rawurl', 's'));
  check(valid, { 'the ES256 JWT verifies': (v) => v === true });
  check(claims, { 'the ES256 JWT carries its claims': (c) => c.sub === 'vu-1' && c.iat === 1700000000 });
  const forged = encoding.b64encode(bytes(JSON.stringify({ sub: 'vu-2', iat: 1700000000 })), 'rawurl');
  check(await subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key, encoding.b64decode(signature, 'rawurl'), bytes(`${header}.${forged}`)), {
    'a forged ES256 JWT does not verify': (v) => v === false,
  });
}
