// Makes asymmetric WebCrypto keys, signatures, a ciphertext, ECDH bits and an ES256 JWT,
// and writes them (keys exported as JWK, SPKI, PKCS #8, raw) to `made.json` for
// consume.js to check under the other engine (k6 or rk6).
import encoding from 'k6/encoding';

export const options = { iterations: 1, vus: 1 };

const subtle = crypto.subtle;
const MESSAGE = 'signed by one engine, verified by the other';

function bytes(text) {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}
const b64 = (buf) => encoding.b64encode(buf, 'std');
const b64url = (buf) => encoding.b64encode(buf, 'rawurl');
const exponent = new Uint8Array([1, 0, 1]);

async function ecdsa(curve, hash) {
  const pair = await subtle.generateKey({ name: 'ECDSA', namedCurve: curve }, true, ['sign', 'verify']);
  return {
    curve,
    hash,
    signature: b64(await subtle.sign({ name: 'ECDSA', hash }, pair.privateKey, bytes(MESSAGE))),
    publicJwk: await subtle.exportKey('jwk', pair.publicKey),
    spki: b64(await subtle.exportKey('spki', pair.publicKey)),
    raw: b64(await subtle.exportKey('raw', pair.publicKey)),
    privateJwk: await subtle.exportKey('jwk', pair.privateKey),
    pkcs8: b64(await subtle.exportKey('pkcs8', pair.privateKey)),
  };
}

async function rsaSigner(name, params) {
  const pair = await subtle.generateKey(
    { name, modulusLength: 2048, publicExponent: exponent, hash: 'SHA-256' },
    true,
    ['sign', 'verify'],
  );
  return {
    signature: b64(await subtle.sign({ name, ...params }, pair.privateKey, bytes(MESSAGE))),
    spki: b64(await subtle.exportKey('spki', pair.publicKey)),
    publicJwk: await subtle.exportKey('jwk', pair.publicKey),
    pkcs8: b64(await subtle.exportKey('pkcs8', pair.privateKey)),
  };
}

async function oaep() {
  const pair = await subtle.generateKey(
    { name: 'RSA-OAEP', modulusLength: 2048, publicExponent: exponent, hash: 'SHA-256' },
    true,
    ['encrypt', 'decrypt'],
  );
  return {
    ciphertext: b64(await subtle.encrypt({ name: 'RSA-OAEP' }, pair.publicKey, bytes(MESSAGE))),
    pkcs8: b64(await subtle.exportKey('pkcs8', pair.privateKey)),
    privateJwk: await subtle.exportKey('jwk', pair.privateKey),
    spki: b64(await subtle.exportKey('spki', pair.publicKey)),
  };
}

async function ecdh() {
  const usages = ['deriveBits'];
  const a = await subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, true, usages);
  const b = await subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, true, usages);
  const bits = await subtle.deriveBits({ name: 'ECDH', public: b.publicKey }, a.privateKey, 256);
  return {
    privateA: b64(await subtle.exportKey('pkcs8', a.privateKey)),
    publicB: b64(await subtle.exportKey('raw', b.publicKey)),
    privateB: await subtle.exportKey('jwk', b.privateKey),
    publicA: b64(await subtle.exportKey('spki', a.publicKey)),
    bits: b64(bits),
  };
}

async function jwt() {
  const pair = await subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
  const header = b64url(bytes(JSON.stringify({ alg: 'ES256', typ: 'JWT' })));
  const payload = b64url(bytes(JSON.stringify({ sub: 'vu-1', iat: 1700000000 })));
  const input = `${header}.${payload}`;
  const signature = await subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, pair.privateKey, bytes(input));
  return { token: `${input}.${b64url(signature)}`, jwk: await subtle.exportKey('jwk', pair.publicKey) };
}

export async function setup() {
  return {
    message: MESSAGE,
    ecdsa: [await ecdsa('P-256', 'SHA-256'), await ecdsa('P-384', 'SHA-384'), await ecdsa('P-521', 'SHA-512')],
    pkcs1: await rsaSigner('RSASSA-PKCS1-v1_5', {}),
    pss: await rsaSigner('RSA-PSS', { saltLength: 32 }),
    oaep: await oaep(),
    ecdh: await ecdh(),
    jwt: await jwt(),
  };
}

export default function () {}

export function handleSummary(data) {
  return { 'made.json': JSON.stringify(data.setup_data) };
}
