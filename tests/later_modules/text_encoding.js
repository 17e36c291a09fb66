// The TextEncoder and TextDecoder globals (k6 2.2: release notes v2.2.0, #6182), in the init
// context and in an iteration, as the WHATWG Encoding standard has them.
import { check } from 'k6';

export const options = { iterations: 1 };

const hex = (a) => Array.from(a, (x) => x.toString(16).padStart(2, '0')).join(' ');
const atInit = new TextDecoder().decode(new TextEncoder().encode('init ✓'));

export default function () {
  // The release notes' example.
  const encoded = new TextEncoder().encode('Hello, world!');
  const decoded = new TextDecoder().decode(encoded);
  check(decoded, { 'release notes example': (d) => d === 'Hello, world!' && encoded instanceof Uint8Array && encoded.length === 13 });
  check(atInit, { 'in the init context': (t) => t === 'init ✓' });

  const enc = new TextEncoder();
  check(enc, {
    'encoder': (e) => e.encoding === 'utf-8' && hex(e.encode('é€😀')) === 'c3 a9 e2 82 ac f0 9f 98 80' && e.encode().length === 0,
    'lone surrogates become U+FFFD': (e) => hex(e.encode('\ud800')) === 'ef bf bd',
  });
  const dest = new Uint8Array(5);
  const r = enc.encodeInto('a€😀', dest);
  check(r, { 'encodeInto writes whole code points': (x) => x.read === 2 && x.written === 4 && hex(dest) === '61 e2 82 ac 00' });

  const dec = new TextDecoder();
  check(dec, {
    'decoder defaults': (d) => d.encoding === 'utf-8' && d.fatal === false && d.ignoreBOM === false,
    'BOM dropped, bad bytes replaced': (d) => d.decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x61, 0xff, 0x62])) === 'a\ufffdb',
    'ignoreBOM keeps it': () => new TextDecoder('utf-8', { ignoreBOM: true }).decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x61])) === '\ufeffa',
    'ArrayBuffer and DataView': (d) => d.decode(new Uint8Array([0x61, 0x62]).buffer) === 'ab' && d.decode(new DataView(new Uint8Array([0x61, 0x62, 0x63]).buffer, 1, 1)) === 'b',
  });
  const parts = [0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80].map((b) => dec.decode(new Uint8Array([b]), { stream: true }));
  check(parts.join('') + dec.decode(), { 'stream: sequences split across calls': (t) => t === '€😀' });
  check(new TextDecoder('utf-16le'), {
    'utf-16le': (d) => d.encoding === 'utf-16le' && d.decode(new Uint8Array([0x68, 0, 0x3d, 0xd8, 0x00, 0xde])) === 'h😀',
    'utf-16be': () => new TextDecoder('utf-16be').decode(new Uint8Array([0, 0x68])) === 'h',
  });
  const errors = [];
  for (const f of [
    () => new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array([0xff])),
    () => new TextDecoder('windows-1252'),
    () => TextEncoder(),
  ]) {
    try {
      f();
      errors.push('none');
    } catch (e) {
      errors.push(e.name);
    }
  }
  check(errors, { 'fatal, unknown labels and calls without new throw': (e) => e.join() === 'TypeError,RangeError,TypeError' });
}
