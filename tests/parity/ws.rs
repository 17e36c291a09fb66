//! `k6/ws` side by side with the real k6 against a WebSocket server of Python's
//! `websockets` library (`ws/server.py`, started by `support::py_ws`): checks, exit codes and the `ws_*` counts.

use serde_json::Value;

use crate::support::py_ws::PyWs;
use crate::Dir;

fn count(export: &Value, metric: &str) -> f64 {
    export["metrics"][metric]["count"].as_f64().unwrap_or(-1.0)
}

/// Runs `script` (with `BASE`, the server's `ws://` URL) under both and compares exit
/// codes, checks, verdicts and the `ws_*` counters; the Trend metrics must exist in both
/// or neither.
fn compare_ws(name: &str, script: &str) {
    let Some(bin) = super::k6() else { return };
    let Some(server) = PyWs::start() else { return };
    let dir = Dir::new(name);
    let script = format!("const BASE = 'ws://127.0.0.1:{}';\n{script}", server.port);
    let path = dir.write("script.js", &script);
    let k6 = super::run_k6(&bin, &path, &dir);
    let rk6 = super::run_rk6(&path, &dir);
    assert_eq!(rk6.code, k6.code, "{name}: exit codes differ");
    assert_eq!(
        super::checks(&rk6.export),
        super::checks(&k6.export),
        "{name}: checks differ"
    );
    assert_eq!(
        super::verdicts(&rk6.export),
        super::verdicts(&k6.export),
        "{name}: threshold verdicts differ"
    );
    for metric in [
        "ws_sessions",
        "ws_msgs_sent",
        "ws_msgs_received",
        "iterations",
    ] {
        let (a, b) = (count(&rk6.export, metric), count(&k6.export, metric));
        assert_eq!(a, b, "{name}: {metric} differs: rk6 {a}, k6 {b}");
    }
    for metric in ["ws_connecting", "ws_session_duration", "ws_ping"] {
        assert_eq!(
            rk6.export["metrics"][metric].is_object(),
            k6.export["metrics"][metric].is_object(),
            "{name}: {metric} present in one only"
        );
    }
}

#[test]
fn ws_sessions_agree_with_k6() {
    compare_ws(
        "ws-sessions",
        r#"
import ws from 'k6/ws';
import { check, group } from 'k6';
export const options = {
  vus: 2, iterations: 4,
  thresholds: {
    'ws_sessions{status:101}': ['count==12'],
    'ws_sessions{status:403}': ['count==4'],
    'ws_msgs_sent{group:::chat}': ['count==12'],
    'ws_sessions{subproto:chat}': ['count==4'],
    ws_connecting: ['max<5000'],
    ws_ping: ['max<5000'],
  },
};
export default function () {
  group('chat', () => {
    const got = [];
    const res = ws.connect(`${BASE}/echo`, { headers: { 'Sec-WebSocket-Protocol': 'chat' }, tags: { room: 'a' } }, function (socket) {
      socket.on('open', () => {
        socket.send('one');
        socket.send('two');
        socket.sendBinary(new Uint8Array([7, 8]).buffer);
        socket.ping();
      });
      socket.on('message', (m) => got.push(m));
      socket.on('binaryMessage', (b) => got.push(new Uint8Array(b).length));
      socket.on('pong', () => got.push('pong'));
      socket.setInterval(() => { if (got.length === 4) socket.close(); }, 5);
    });
    check(res, {
      'upgraded': (r) => r.status === 101,
      'subprotocol': (r) => r.headers['Sec-Websocket-Protocol'] === 'chat',
      'url': (r) => r.url === `${BASE}/echo`,
    });
    check(got, { 'echoed': (g) => g.includes('one') && g.includes('two') && g.includes(2) && g.includes('pong') });
  });
  const closes = [];
  ws.connect(`${BASE}/close/4001`, function (socket) {
    socket.on('error', (e) => closes.push(e.error()));
    socket.on('close', (c) => closes.push(c));
  });
  ws.connect(`${BASE}/close/1000`, function (socket) {
    socket.on('error', (e) => closes.push(e.error()));
    socket.on('close', (c) => closes.push(c));
  });
  check(closes, { 'close codes': (c) => JSON.stringify(c) === JSON.stringify(['websocket: close 4001: bye', 4001, 1000]) });
  let ran = false;
  const refused = ws.connect(`${BASE}/reject`, function () { ran = true; });
  check(refused, { 'refused upgrade': (r) => r.status === 403 && r.body === 'go away\n' && r.error === '' && !ran });
  const dead = ws.connect('ws://127.0.0.1:1/', function () { ran = true; });
  check(dead, { 'refused connection': (r) => r.status === 0 && r.error === 'dial tcp 127.0.0.1:1: connect: connection refused' });
  let pinged = 0;
  ws.connect(`${BASE}/ping`, function (socket) {
    socket.on('ping', () => { pinged++; socket.close(); });
  });
  check(pinged, { 'server ping': (p) => p === 1 });
}
"#,
    );
}

#[test]
fn ws_session_cut_by_the_end_of_the_test_agrees_with_k6() {
    compare_ws(
        "ws-interrupted",
        r#"
import ws from 'k6/ws';
import { check } from 'k6';
export const options = { scenarios: { cut: { executor: 'constant-vus', vus: 1, duration: '1s', gracefulStop: '0s' } } };
export default function () {
  ws.connect(`${BASE}/echo`, function (socket) {
    socket.on('open', () => socket.send('x'));
  });
  check(null, { 'never reached': () => true });
}
"#,
    );
}

#[test]
fn websocket_api_agrees_with_k6() {
    compare_ws(
        "ws-api",
        r#"
import { WebSocket } from 'k6/experimental/websockets';
import { check } from 'k6';
export const options = {
  vus: 2, iterations: 4,
  thresholds: {
    'ws_sessions{status:101}': ['count==8'],
    'ws_msgs_sent{subproto:chat}': ['count==40'],
    ws_ping: ['max<5000'],
  },
};
export default function () {
  const log = [];
  for (let i = 0; i < 2; i++) {
    const ws = new WebSocket(`${BASE}/echo`, ['chat'], { tags: { n: String(i) } });
    ws.binaryType = 'arraybuffer';
    let got = 0;
    ws.onopen = () => {
      ws.send('one');
      ws.send(new Uint8Array([1, 2]));
      ws.send(new Uint8Array([3]).buffer);
      ws.ping();
    };
    ws.onpong = () => log.push('pong');
    ws.onmessage = (e) => { log.push(typeof e.data === 'string' ? e.data : e.data.byteLength); if (++got === 3) ws.close(); };
    ws.onerror = (e) => log.push('error:' + e.error);
    ws.onclose = () => log.push('close:' + ws.readyState);
  }
  const cut = new WebSocket(`${BASE}/close/4001`);
  cut.onerror = (e) => log.push(e.error);
  const refused = new WebSocket(`${BASE}/reject`);
  refused.onerror = (e) => log.push(e.error);
  setTimeout(() => {
    check(log, {
      'echoes': (l) => l.filter((x) => x === 'one').length === 2 && l.filter((x) => x === 2).length === 2,
      'pongs': (l) => l.filter((x) => x === 'pong').length === 2,
      'closes': (l) => l.filter((x) => x === 'close:3').length === 2,
      'server close': (l) => l.includes('websocket: close 4001: bye'),
      'refused': (l) => l.includes('websocket: bad handshake'),
    });
  }, 300);
}
"#,
    );
}

#[test]
fn websocket_api_session_cut_by_the_end_of_the_test_agrees_with_k6() {
    compare_ws(
        "ws-api-interrupted",
        r#"
import { WebSocket } from 'k6/experimental/websockets';
export const options = { scenarios: { cut: { executor: 'constant-vus', vus: 1, duration: '1s', gracefulStop: '0s' } } };
export default function () {
  const ws = new WebSocket(`${BASE}/echo`);
  // Open until the end of the test cuts it: no ws_session_duration in either.
  ws.onopen = () => ws.send('x');
}
"#,
    );
}

#[test]
fn deflate_agrees_with_k6() {
    compare_ws(
        "ws-deflate",
        r#"
import ws from 'k6/ws';
import { WebSocket } from 'k6/experimental/websockets';
import { check } from 'k6';
const OFFER = 'permessage-deflate; server_no_context_takeover; client_no_context_takeover';
const TEXT = JSON.stringify(Array.from({ length: 200 }, (_, i) => ({ id: i, name: 'user' + i, active: i % 3 === 0 })));
export const options = {
  iterations: 2,
  thresholds: {
    // Uncompressed the messages alone would be ~60 kB each way.
    data_sent: ['count<8000'],
    data_received: ['count<8000'],
    'ws_msgs_sent{compressed:yes}': ['count==8'],
  },
};
export default function () {
  let wire;
  const res = ws.connect(`${BASE}/echo`, { compression: 'deflate', tags: { compressed: 'yes' } }, function (socket) {
    socket.on('open', () => { socket.send(TEXT); socket.sendBinary(new Uint8Array(5000).buffer); socket.send('wire?'); });
    socket.on('message', (m) => { if (m.startsWith('{')) { wire = JSON.parse(m); socket.close(); } });
  });
  check(res, { 'ws: answer header': (r) => r.headers['Sec-Websocket-Extensions'].startsWith(OFFER) });
  check(wire, { 'ws: compressed on the wire': (w) => w.offer === OFFER && w.compressed === 3 && w.sent_compressed === 2 });
  const api = new WebSocket(`${BASE}/echo`, null, { compression: 'deflate', tags: { compressed: 'yes' } });
  api.onopen = () => { api.send(TEXT); api.send('wire?'); };
  api.onmessage = (e) => {
    if (!e.data.startsWith('{')) return;
    const w = JSON.parse(e.data);
    check(api.extensions, { 'api: extensions': (x) => x.length === 1 && x[0].startsWith(OFFER) });
    check(w, { 'api: compressed on the wire': (w) => w.compressed === 2 && w.sent_compressed === 1 });
    api.close();
  };
}
"#,
    );
}
