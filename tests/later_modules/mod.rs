//! The JavaScript modules and globals k6 added after 1.1 (k6 1.2 to 2.2), run end to end:
//! each test asserts the behaviour the release notes or k6's documentation give (cited
//! here or in its script), since the k6 on hand for side-by-side runs is 1.1.0. (CLI and
//! option changes are in tests/k6_after_1_1.)

use crate::support::ws_server;
use crate::{assert_checks, rk6, run_export, run_file, Dir};

/// `k6/websockets` (k6 1.6), the close event's `code`/`reason` (k6 1.5), the readyState
/// constants and `close()`'s argument checks.
#[test]
fn websockets_stable_path_close_codes_and_constants() {
    let addr = ws_server::start();
    let dir = Dir::new("later-websockets");
    let script = format!(
        "const BASE = 'ws://{addr}';\n{}",
        include_str!("websockets.js")
    );
    let (run, export) = run_export(&dir, &script, &[]);
    assert_checks(&run, &export, 11.0);
    assert!(
        !run.stderr.contains("deprecated"),
        "no warning for the stable path: {}",
        run.stderr
    );
}

/// k6 1.6 deprecated `k6/experimental/websockets` (release notes v1.6.0, #5586; it still
/// works in k6 2.2): one warning for the whole run, naming `k6/websockets`.
#[test]
fn the_experimental_websockets_path_warns_once() {
    let addr = ws_server::start();
    let dir = Dir::new("later-websockets-experimental");
    let script = format!(
        r#"
import {{ WebSocket }} from 'k6/experimental/websockets';
import {{ check }} from 'k6';
export const options = {{ vus: 3, iterations: 3 }};
export default function () {{
  const ws = new WebSocket('ws://{addr}/echo');
  ws.onopen = () => ws.close(3000, 'done');
  ws.onclose = (e) => check(e, {{ 'closed with a code': (e) => e.code === 3000 && e.reason === 'done' }});
}}
"#
    );
    let (run, export) = run_export(&dir, &script, &[]);
    assert_checks(&run, &export, 3.0);
    let warning = "k6/experimental/websockets is deprecated and will be removed in a future release. Please use k6/websockets instead.";
    assert_eq!(
        run.stderr.matches(warning).count(),
        1,
        "one warning: {}",
        run.stderr
    );
    assert!(
        run.stderr.contains("level=warning"),
        "a warning: {}",
        run.stderr
    );
}

/// `Blob.stream()` (k6 1.1 has it; rk6 lacked streams): a `ReadableStream` of the blob's
/// bytes as text, in chunks of at most 1024 bytes, then an empty chunk as it closes, as k6
/// reads it.
#[test]
fn blob_stream_reads_the_bytes_as_k6_does() {
    let dir = Dir::new("later-blob-stream");
    let (run, export) = run_export(
        &dir,
        r#"
import { Blob } from 'k6/websockets';
import { check } from 'k6';
export const options = { iterations: 1 };
export default async function () {
  const reader = new Blob(['a'.repeat(1500), 'bc']).stream().getReader();
  const chunks = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
  }
  check(chunks, { 'chunks': (c) => c.length === 3 && c[0] === 'a'.repeat(1024) && c[1] === 'a'.repeat(476) + 'bc' && c[2] === '' });
}
"#,
        &[],
    );
    assert_checks(&run, &export, 1.0);
}

/// `k6/experimental/streams`: `ReadableStream` (k6 1.1; it was refused before) and
/// `WritableStream` (k6 2.2).
#[test]
fn streams_read_and_write() {
    let dir = Dir::new("later-streams");
    let (run, export) = run_export(&dir, include_str!("streams.js"), &[]);
    assert_checks(&run, &export, 18.0);
}

/// The `TextEncoder` and `TextDecoder` globals (k6 2.2).
#[test]
fn text_encoder_and_decoder_globals() {
    let dir = Dir::new("later-text-encoding");
    let (run, export) = run_export(&dir, include_str!("text_encoding.js"), &[]);
    assert_checks(&run, &export, 13.0);
}

/// `Selection.single(selector)` (k6 2.1: release notes v2.1.0, #6002; k6-docs
/// javascript-api/k6-html/selection/selection-single).
#[test]
fn html_selection_single() {
    let dir = Dir::new("later-html-single");
    let (run, export) = run_export(
        &dir,
        r#"
import { parseHTML } from 'k6/html';
import { check } from 'k6';
export const options = { iterations: 1 };
export default function () {
  const doc = parseHTML('<div><h1>one</h1><p><h1>two</h1></p></div><ul><li>a</li><li>b</li></ul>');
  check(doc, {
    'the release notes example': (d) => d.single('h1').text() === 'one',
    'at most one element': (d) => d.single('li').size() === 1 && d.single('li').text() === 'a',
    'none when nothing matches': (d) => d.single('table').size() === 0,
    'within the selection': (d) => d.find('ul').single('li:last-child').text() === 'b',
  });
}
"#,
        &[],
    );
    assert_checks(&run, &export, 4.0);
}

/// The lines `console.log` writes for `script` (their `msg` values, unescaped).
fn console_lines(dir: &Dir, script: &str) -> Vec<String> {
    dir.write("console.js", script);
    let run = rk6(
        &[
            "run",
            "-q",
            "--summary-mode=disabled",
            dir.path("console.js").to_str().unwrap(),
        ],
        &dir.0,
    );
    run.assert_code(0);
    run.stderr
        .lines()
        .filter(|l| l.contains("source=console"))
        .filter_map(|l| {
            let msg = l.split_once("msg=")?.1;
            let msg = msg.rsplit_once(" source=console")?.0;
            Some(match serde_json::from_str::<String>(msg) {
                Ok(unquoted) => unquoted,
                Err(_) => msg.to_string(),
            })
        })
        .collect()
}

/// `console.log` of objects in k6's format since 1.6: release notes v1.5.0 (#5460, deep
/// objects, functions, circular references) and v1.6.0 (#5496, `ArrayBuffer` and typed
/// arrays, the `{ key: value }` form); their examples give the expected lines.
#[test]
fn console_log_prints_objects_as_k6_1_6_does() {
    let dir = Dir::new("later-console");
    let lines = console_lines(
        &dir,
        r#"
export default function () {
  const buffer = new ArrayBuffer(8);
  const view = new Int32Array(buffer);
  view[0] = 4;
  view[1] = 2;
  console.log(buffer);
  const int32 = new Int32Array([4, 2]);
  console.log(int32);
  console.log({ v: int32 });
  console.log({ name: 'test', buffer: buffer, view: int32 });
  console.log({ one: class {}, two: function () {} });
  console.log([{ handler: class {} }, { data: [1, 2, class {}] }]);
  const obj = { fn: function () {}, foo: {} };
  obj.foo = obj;
  console.log(obj);
  console.log('plain', 1, true, null, undefined, () => 1, new Error('boom'));
  console.log({ s: 'q"x', n: null, u: undefined, hole: [, 1], d: new Date(0), e: new Error('inner'), m: new Map(), empty: [], z: new Uint8Array(0) });
  console.log(new Date(0), [], {});
}
"#,
    );
    assert_eq!(
        lines,
        [
            "ArrayBuffer { [Uint8Contents]: <04 00 00 00 02 00 00 00>, byteLength: 8 }",
            "Int32Array(2) [ 4, 2 ]",
            "{ v: Int32Array(2) [ 4, 2 ] }",
            "{ name: \"test\", buffer: ArrayBuffer { [Uint8Contents]: <04 00 00 00 02 00 00 00>, byteLength: 8 }, view: Int32Array(2) [ 4, 2 ] }",
            "{ one: [object Function], two: [object Function] }",
            "[ { handler: [object Function] }, { data: [ 1, 2, [object Function] ] } ]",
            "{ fn: [object Function], foo: [Circular] }",
            "plain 1 true null undefined [object Function] Error: boom",
            "{ s: \"q\"x\", n: null, u: null, hole: [ null, 1 ], d: \"1970-01-01T00:00:00.000Z\", e: Error: inner, m: {}, empty: [], z: Uint8Array(0) [] }",
            "\"1970-01-01T00:00:00.000Z\" [] {}",
        ]
    );
}

/// PBKDF2's example in k6's documentation (k6-docs javascript-api/crypto/pbkdf2params and
/// subtlecrypto/derivekey), which needs `TextEncoder` too, runs as written.
#[test]
fn the_documented_pbkdf2_examples_run() {
    let dir = Dir::new("later-pbkdf2-docs");
    dir.write(
        "docs.js",
        r#"
import { check } from 'k6';
export default async function () {
  const password = new TextEncoder().encode('my secret password');
  const baseKey = await crypto.subtle.importKey('raw', password, 'PBKDF2', false, ['deriveBits', 'deriveKey']);
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const derivedBits = await crypto.subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt: salt, iterations: 310000 }, baseKey, 256);
  const derivedKey = await crypto.subtle.deriveKey(
    { name: 'PBKDF2', hash: 'SHA-256', salt: salt, iterations: 310000 },
    baseKey,
    { name: 'AES-GCM', length: 256 },
    true,
    ['encrypt', 'decrypt']
  );
  const raw = await crypto.subtle.exportKey('raw', derivedKey);
  const same = new Uint8Array(raw).every((b, i) => b === new Uint8Array(derivedBits)[i]);
  check(null, { 'deriveBits and deriveKey agree': () => derivedBits.byteLength === 32 && same });
  console.log('derived key: ' + JSON.stringify(derivedKey));
}
"#,
    );
    let (run, export) = run_file(&dir, "docs.js", &["--iterations", "1"], &[]);
    assert_checks(&run, &export, 1.0);
    assert!(run.stderr.contains("derived key: {"), "{}", run.stderr);
}
