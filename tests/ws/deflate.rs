//! `compression: 'deflate'` (permessage-deflate) in `k6/ws` and the WebSocket API, against
//! Python's `websockets` server (`support::py_ws`), which reports what it saw on the
//! connection: the offer, its answer, and how many data frames came compressed (RSV1).

use crate::support::py_ws::PyWs;
use crate::support::ws_server;
use crate::{assert_checks, metric, run_export, Dir};

/// What a test script gets besides its body: `BASE`, and `OFFER`, the extension k6 offers.
fn prelude(port: u16) -> String {
    format!(
        "const BASE = 'ws://127.0.0.1:{port}';\n\
         const OFFER = 'permessage-deflate; server_no_context_takeover; client_no_context_takeover';\n"
    )
}

fn counted(export: &serde_json::Value, name: &str) -> f64 {
    metric(export, name)["count"].as_f64().unwrap_or(-1.0)
}

#[test]
fn ws_deflate_round_trips_compressed_and_shrinks_the_wire() {
    let Some(server) = PyWs::start() else { return };
    let dir = Dir::new("ws-deflate");
    let script = prelude(server.port)
        + r#"
import ws from 'k6/ws';
import { check } from 'k6';
const TEXT = 'k6 compresses this. '.repeat(2000);
export default function () {
  const got = [];
  let pings = 0, pongs = 0;
  // /ping pings first and echoes only once its pong came back: control frames pass
  // uncompressed both ways beside the compressed messages.
  const res = ws.connect(`${BASE}/ping`, { compression: 'deflate' }, function (socket) {
    socket.on('ping', () => pings++);
    socket.on('pong', () => pongs++);
    socket.setTimeout(() => socket.close(), 5000);
    socket.on('open', () => {
      socket.ping();
      socket.send(TEXT);
      socket.sendBinary(new Uint8Array(20000).fill(7).buffer);
      socket.send('');
      socket.send('wire?');
    });
    socket.on('message', (m) => { got.push(m); if (m.startsWith('{')) socket.close(); });
    socket.on('binaryMessage', (b) => got.push(new Uint8Array(b)));
  });
  const wire = JSON.parse(got[got.length - 1]);
  check(res, {
    'answer header': (r) => r.headers['Sec-Websocket-Extensions'].startsWith('permessage-deflate; server_no_context_takeover; client_no_context_takeover'),
  });
  check(null, { 'pings both ways': () => pings === 1 && pongs === 1 });
  check(got, {
    'text back': (g) => g[0] === TEXT,
    'binary back': (g) => g[1].length === 20000 && g[1].every((b) => b === 7),
    'empty back': (g) => g[2] === '',
  });
  check(wire, {
    'offered as k6 offers': (w) => w.offer === OFFER,
    'every message came compressed': (w) => w.compressed === 4 && w.plain === 0,
    'the server compressed its replies': (w) => w.sent_compressed === 3,
  });
}
"#;
    let (run, export) = run_export(&dir, &script, &[]);
    assert_checks(&run, &export, 8.0);
    // 60 kB of messages both ways; compressed, the session (handshake included) is small.
    let (sent, received) = (
        counted(&export, "data_sent"),
        counted(&export, "data_received"),
    );
    assert!(sent > 0.0 && sent < 2000.0, "data_sent {sent}");
    assert!(
        received > 0.0 && received < 2000.0,
        "data_received {received}"
    );
    assert_eq!(counted(&export, "ws_msgs_sent"), 4.0);
    assert_eq!(counted(&export, "ws_msgs_received"), 4.0);
}

#[test]
fn websocket_api_deflate_reports_its_extension_and_compresses() {
    let Some(server) = PyWs::start() else { return };
    let dir = Dir::new("ws-api-deflate");
    let script = prelude(server.port)
        + r#"
import { WebSocket } from 'k6/experimental/websockets';
import { check } from 'k6';
const TEXT = 'abc'.repeat(10000);
export default function () {
  const seen = {};
  const zipped = new WebSocket(`${BASE}/echo`, null, { compression: 'deflate' });
  seen.before = JSON.stringify(zipped.extensions);
  zipped.onopen = () => {
    seen.open = zipped.extensions;
    zipped.send(TEXT);
    zipped.send(new Uint8Array(30000));
    zipped.send('wire?');
  };
  zipped.binaryType = 'arraybuffer';
  zipped.onmessage = (e) => {
    if (typeof e.data !== 'string') seen.binary = e.data.byteLength;
    else if (e.data.startsWith('{')) { seen.wire = JSON.parse(e.data); zipped.close(); }
    else seen.text = e.data === TEXT;
  };
  const plain = new WebSocket(`${BASE}/echo`);
  plain.onopen = () => { seen.plain = JSON.stringify(plain.extensions); plain.send('wire?'); };
  plain.onmessage = (e) => { seen.plainWire = JSON.parse(e.data); plain.close(); };
  let open = 2;
  zipped.onclose = plain.onclose = () => --open === 0 && check(seen, {
    'no extensions before the upgrade': (s) => s.before === '[]',
    'the answer once open': (s) => Array.isArray(s.open) && s.open.length === 1 && s.open[0].startsWith(OFFER),
    'messages back': (s) => s.text === true && s.binary === 30000,
    'compressed both ways': (s) => s.wire.offer === OFFER && s.wire.compressed === 3 && s.wire.plain === 0 && s.wire.sent_compressed === 2,
    'without the param nothing is offered': (s) => s.plain === '[]' && s.plainWire.offer === '' && s.plainWire.compressed === 0,
  });
}
"#;
    let (run, export) = run_export(&dir, &script, &[]);
    assert_checks(&run, &export, 5.0);
    let sent = counted(&export, "data_sent");
    assert!(sent > 0.0 && sent < 3000.0, "data_sent {sent}");
}

#[test]
fn ws_deflate_answer_without_no_context_takeover_is_refused_as_k6_does() {
    let addr = ws_server::start();
    let dir = Dir::new("ws-deflate-invalid");
    let script = format!("const BASE = 'ws://{addr}';\n")
        + r#"
import ws from 'k6/ws';
import { WebSocket } from 'k6/experimental/websockets';
import { check } from 'k6';
export default function () {
  let ran = false;
  // As gorilla: the dial fails after the 101; k6/ws returns the answer without an error.
  const res = ws.connect(`${BASE}/bad-deflate`, { compression: 'deflate' }, () => { ran = true; });
  check(res, { 'answer, no session': (r) => r.status === 101 && r.error === '' && r.url === '' && !ran });
  // The answer decides even without an offer.
  ws.connect(`${BASE}/bad-deflate`, () => { ran = true; });
  check(ran, { 'not offered, refused too': (r) => r === false });
  const log = [];
  const api = new WebSocket(`${BASE}/bad-deflate`, null, { compression: 'deflate' });
  api.onopen = () => log.push('open');
  api.onerror = (e) => log.push(e.error);
  api.onclose = () => check(log, {
    'error, never open': (l) => JSON.stringify(l) === JSON.stringify(['websocket: invalid compression negotiation']),
  });
}
"#;
    let (run, export) = run_export(&dir, &script, &[]);
    assert_checks(&run, &export, 3.0);
}
