//! `k6/ws` side by side with the real k6 against a WebSocket server of Python's
//! `websockets` library (`ws/server.py`): checks, exit codes and the `ws_*` counts.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use crate::Dir;

/// The Python server on 127.0.0.1, stopped on drop.
struct PyWs {
    child: Child,
    port: u16,
}

impl PyWs {
    /// Starts the server; `None` (after saying why) when Python's `websockets` is missing,
    /// which CI does not accept (.ci/run installs it).
    fn start() -> Option<PyWs> {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/parity/ws/server.py");
        let missing = |why: String| {
            if std::env::var_os("CI").is_some() {
                panic!("Python's websockets is required in CI: {why}");
            }
            eprintln!("skipping the WebSocket parity test: {why}");
            None
        };
        let mut child = match Command::new("python3")
            .arg(script)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
        {
            Ok(c) => c,
            Err(e) => return missing(format!("python3: {e}")),
        };
        let mut line = String::new();
        let _ = BufReader::new(child.stdout.take().unwrap()).read_line(&mut line);
        match line.trim().parse() {
            Ok(port) => Some(PyWs { child, port }),
            Err(_) => {
                let _ = child.kill();
                let out = child.wait_with_output().ok();
                let err = out
                    .map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
                    .unwrap_or_default();
                missing(format!("the server did not start: {err}"))
            }
        }
    }
}

impl Drop for PyWs {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

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
