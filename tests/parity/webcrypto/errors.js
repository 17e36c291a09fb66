// Bad WebCrypto calls; each rejection's `name: message` goes to `errors.json`, which must
// be the same under k6 and rk6.
export const options = { iterations: 1, vus: 1 };

const subtle = crypto.subtle;
const data = new Uint8Array([1, 2, 3]);

async function rejection(promise) {
  try {
    await promise;
    return 'resolved';
  } catch (e) {
    return `${e.name}: ${e.message}`;
  }
}

export async function setup() {
  const ec = await subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
  const oaep = await subtle.generateKey(
    { name: 'RSA-OAEP', modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' },
    true,
    ['encrypt', 'decrypt'],
  );
  const ecdsaP256 = { name: 'ECDSA', namedCurve: 'P-256' };
  return {
    'sign with a public key': await rejection(subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, ec.publicKey, data)),
    'verify with a private key': await rejection(subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, ec.privateKey, data, data)),
    'sign ECDSA with an RSA key': await rejection(subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, oaep.privateKey, data)),
    'encrypt with a private key': await rejection(subtle.encrypt({ name: 'RSA-OAEP' }, oaep.privateKey, data)),
    'decrypt with a public key': await rejection(subtle.decrypt({ name: 'RSA-OAEP' }, oaep.publicKey, data)),
    'export an EC private key as raw': await rejection(subtle.exportKey('raw', ec.privateKey)),
    'export an EC private key as spki': await rejection(subtle.exportKey('spki', ec.privateKey)),
    'export an EC public key as pkcs8': await rejection(subtle.exportKey('pkcs8', ec.publicKey)),
    'import an RSA key as raw': await rejection(subtle.importKey('raw', data, { name: 'RSA-PSS', hash: 'SHA-256' }, true, ['verify'])),
    'import a bad raw EC point': await rejection(subtle.importKey('raw', data, ecdsaP256, true, ['verify'])),
    'generate ECDSA for encrypt': await rejection(subtle.generateKey(ecdsaP256, true, ['encrypt'])),
    'generate on an unknown curve': await rejection(subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-999' }, true, ['sign'])),
    'generate ECDH without usages': await rejection(subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, true, [])),
  };
}

export default function () {}

export function handleSummary(data) {
  return { 'errors.json': JSON.stringify(data.setup_data, null, 1) };
}
