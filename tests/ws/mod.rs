//! `k6/ws` against the in-process WebSocket server (`support::ws_server`): messages both
//! ways, pings, close codes, refused upgrades, `wss://` and the VU's connect rules, and the
//! `ws_*` metrics they leave.

mod deflate;

use crate::support::ws_server;
use crate::{metric, run_export, Dir};

fn count(export: &serde_json::Value, name: &str) -> f64 {
    metric(export, name)["count"].as_f64().unwrap_or(-1.0)
}

/// Runs `script` (with `BASE` = `ws://` URL of a fresh server) and returns (log, export).
fn run_ws(name: &str, base: &str, script: &str) -> (crate::Run, serde_json::Value) {
    let dir = Dir::new(name);
    let script = format!("const BASE = '{base}';\n{script}");
    run_export(&dir, &script, &[])
}

#[test]
fn ws_echo_binary_ping_and_the_metrics_they_leave() {
    let addr = ws_server::start();
    let (run, export) = run_ws(
        "ws-echo",
        &format!("ws://{addr}"),
        r#"
import ws from 'k6/ws';
import { check } from 'k6';
export const options = { iterations: 2, thresholds: { 'ws_msgs_sent{kind:echo}': ['count==4'], ws_ping: ['max>=0'] } };
export default function () {
  const got = [];
  const res = ws.connect(`${BASE}/echo`, { tags: { kind: 'echo' } }, function (socket) {
    socket.on('open', () => {
      socket.send('hello');
      socket.sendBinary(new Uint8Array([1, 2, 3]).buffer);
      socket.ping();
    });
    socket.on('message', (m) => got.push('text:' + m));
    socket.on('binaryMessage', (b) => got.push('bin:' + Array.from(new Uint8Array(b)).join(',')));
    socket.on('pong', () => got.push('pong'));
    socket.setInterval(() => { if (got.length === 3) socket.close(); }, 5);
    socket.on('close', (code) => got.push('close:' + code));
  });
  check(res, {
    'status 101': (r) => r.status === 101,
    'url': (r) => r.url === `${BASE}/echo`,
    'canonical headers': (r) => typeof r.headers['Sec-Websocket-Accept'] === 'string',
    'no error': (r) => r.error === '',
  });
  check(got.slice().sort(), {
    'all events': (g) => JSON.stringify(g) === JSON.stringify(['bin:1,2,3', 'close:1001', 'pong', 'text:hello']),
  });
}
"#,
    );
    crate::assert_checks(&run, &export, 10.0);
    assert_eq!(count(&export, "ws_sessions"), 2.0);
    assert_eq!(count(&export, "ws_msgs_sent"), 4.0);
    assert_eq!(count(&export, "ws_msgs_received"), 4.0);
    for trend in ["ws_connecting", "ws_session_duration", "ws_ping"] {
        assert!(
            metric(&export, trend)["max"].as_f64().unwrap_or(-1.0) >= 0.0,
            "{trend}"
        );
    }
    assert!(count(&export, "data_sent") > 0.0 && count(&export, "data_received") > 0.0);
}

#[test]
fn ws_server_close_codes_fire_error_before_close_unless_normal() {
    let addr = ws_server::start();
    let (run, export) = run_ws(
        "ws-close",
        &format!("ws://{addr}"),
        r#"
import ws from 'k6/ws';
import { check } from 'k6';
export const options = { iterations: 1 };
function events(path) {
  const seen = [];
  ws.connect(`${BASE}${path}`, function (socket) {
    socket.on('error', (e) => seen.push('error:' + e.error() + ':' + e.code));
    socket.on('close', (code) => seen.push('close:' + code));
  });
  return seen.join('|');
}
export default function () {
  check(null, {
    '4001 is an error first': () => events('/close/4001') === 'error:websocket: close 4001: bye:4001|close:4001',
    '1011 has its Go name': () => events('/close/1011') === 'error:websocket: close 1011 (internal server error): bye:1011|close:1011',
    '1000 is no error': () => events('/close/1000') === 'close:1000',
    '1001 is no error': () => events('/close/1001') === 'close:1001',
    'a dropped connection is 1006': () => events('/drop') === 'error:websocket: close 1006 (abnormal closure): unexpected EOF:1006|close:1006',
  });
}
"#,
    );
    crate::assert_checks(&run, &export, 5.0);
    assert_eq!(count(&export, "ws_sessions"), 5.0);
}

#[test]
fn ws_server_ping_fires_ping_and_is_answered() {
    let addr = ws_server::start();
    let (run, export) = run_ws(
        "ws-ping",
        &format!("ws://{addr}"),
        r#"
import ws from 'k6/ws';
import { check } from 'k6';
export const options = { iterations: 1 };
export default function () {
  let pings = 0, echoed = '';
  ws.connect(`${BASE}/ping`, function (socket) {
    socket.on('ping', () => { pings++; socket.send('after ping'); });
    socket.on('message', (m) => { echoed = m; socket.close(1000); });
  });
  check(null, { 'one ping': () => pings === 1, 'still echoes': () => echoed === 'after ping' });
}
"#,
    );
    crate::assert_checks(&run, &export, 2.0);
}

#[test]
fn ws_refused_upgrades_and_connections_return_k6s_response() {
    let addr = ws_server::start();
    let (run, export) = run_ws(
        "ws-refused",
        &format!("ws://{addr}"),
        r#"
import ws from 'k6/ws';
import { check } from 'k6';
export const options = { iterations: 1, thresholds: { 'ws_sessions{status:403}': ['count==1'] } };
export default function () {
  let ran = false;
  const r = ws.connect(`${BASE}/reject`, function () { ran = true; });
  check(r, {
    '403': (r) => r.status === 403,
    'body': (r) => r.body === 'go away\n',
    'no url or error': (r) => r.url === '' && r.error === '',
    'callback not run': () => !ran,
  });
  const dead = ws.connect('ws://127.0.0.1:1/x', function () { ran = true; });
  check(dead, {
    'refused': (r) => r.status === 0 && /^dial tcp 127.0.0.1:1: connect: connection refused$/.test(r.error),
    'callback still not run': () => !ran,
  });
}
"#,
    );
    crate::assert_checks(&run, &export, 6.0);
    assert_eq!(count(&export, "ws_sessions"), 2.0);
    assert!(metric(&export, "ws_session_duration")["max"]
        .as_f64()
        .is_some());
}

#[test]
fn ws_handshake_sends_headers_cookies_subprotocol_and_agent() {
    let addr = ws_server::start();
    let (run, export) = run_ws(
        "ws-headers",
        &format!("ws://{addr}"),
        r#"
import ws from 'k6/ws';
import http from 'k6/http';
import { check } from 'k6';
export const options = { iterations: 1, userAgent: 'agent/1', thresholds: { 'ws_sessions{subproto:chat}': ['count==1'] } };
export default function () {
  http.cookieJar().set(BASE.replace('ws:', 'http:') + '/', 'vu', 'jar');
  let headers = {};
  const res = ws.connect(`${BASE}/headers`, { headers: { 'X-Extra': 'yes', 'Sec-WebSocket-Protocol': 'chat' } }, function (socket) {
    socket.on('message', (m) => { headers = JSON.parse(m); socket.close(); });
  });
  check(headers, {
    'extra header': (h) => h['x-extra'] === 'yes',
    'cookie from the VU jar': (h) => h['cookie'] === 'vu=jar',
    'user agent': (h) => h['user-agent'] === 'agent/1',
    'subprotocol asked': (h) => h['sec-websocket-protocol'] === 'chat',
  });
  check(res, { 'subprotocol chosen': (r) => r.headers['Sec-Websocket-Protocol'] === 'chat' });
  const jar = http.cookieJar().cookiesForURL(BASE.replace('ws:', 'http:') + '/');
  check(jar, { 'set-cookie stored': (j) => j.srv && j.srv[0] === '1' });
  let own = {};
  const mine = new http.CookieJar();
  mine.set(BASE.replace('ws:', 'http:') + '/', 'own', '1');
  ws.connect(`${BASE}/headers`, { jar: mine }, function (socket) {
    socket.on('message', (m) => { own = JSON.parse(m); socket.close(); });
  });
  check(own, { 'the jar param replaces the VU jar': (h) => h['cookie'] === 'own=1' });
}
"#,
    );
    crate::assert_checks(&run, &export, 7.0);
}

#[test]
fn ws_wss_follows_the_vu_tls_settings_and_connect_rules() {
    let addr = ws_server::start_tls();
    let port = addr.port();
    let (run, export) = run_ws(
        "ws-wss",
        &format!("wss://127.0.0.1:{port}"),
        &format!(
            r#"
import ws from 'k6/ws';
import {{ check }} from 'k6';
export const options = {{ iterations: 1, insecureSkipTLSVerify: true, hosts: {{ 'ws.test': '127.0.0.1:{port}' }}, blockHostnames: ['*.blocked'] }};
export default function () {{
  let echoed = '';
  const res = ws.connect(`${{BASE}}/echo`, function (socket) {{
    socket.on('open', () => socket.send('secure'));
    socket.on('message', (m) => {{ echoed = m; socket.close(); }});
  }});
  check(res, {{ 'wss 101': (r) => r.status === 101, 'wss echo': () => echoed === 'secure' }});
  const named = ws.connect('ws://ws.test/x', function () {{}});
  check(named, {{ 'hosts override used (TLS port answers plain text badly)': (r) => r.status === 0 && r.error !== '' }});
  const blocked = ws.connect('wss://a.blocked/echo', function () {{}});
  check(blocked, {{ 'blocked': (r) => r.error === 'hostname (a.blocked) is in a blocked pattern (*.blocked)' }});
}}
"#
        ),
    );
    crate::assert_checks(&run, &export, 4.0);

    // Without insecureSkipTLSVerify the self-signed certificate is refused.
    let (run, export) = run_ws(
        "ws-wss-verify",
        &format!("wss://127.0.0.1:{port}"),
        r#"
import ws from 'k6/ws';
import { check } from 'k6';
export const options = { iterations: 1 };
export default function () {
  const r = ws.connect(`${BASE}/echo`, function () {});
  check(r, { 'certificate refused': (r) => r.status === 0 && /certificate/.test(r.error) });
}
"#,
    );
    crate::assert_checks(&run, &export, 1.0);
}

#[test]
fn ws_blacklisted_ips_are_refused_with_gos_text() {
    let addr = ws_server::start();
    let (run, export) = run_ws(
        "ws-blacklist",
        &format!("ws://{addr}"),
        r#"
import ws from 'k6/ws';
import { check } from 'k6';
export const options = { iterations: 1, blacklistIPs: ['127.0.0.0/8'] };
export default function () {
  let ran = false;
  const r = ws.connect(`${BASE}/echo`, function () { ran = true; });
  check(r, { 'blacklisted': (r) => r.status === 0 && !ran && r.error === 'IP (127.0.0.1) is in a blacklisted range (127.0.0.0/8)' });
}
"#,
    );
    crate::assert_checks(&run, &export, 1.0);
}

#[test]
fn ws_misuse_is_an_error_never_a_crash() {
    let addr = ws_server::start();
    let (run, export) = run_ws(
        "ws-misuse",
        &format!("ws://{addr}"),
        r#"
import ws from 'k6/ws';
import { check } from 'k6';
export const options = { iterations: 1 };
function thrown(f) { try { f(); return ''; } catch (e) { return String(e); } }
export default function () {
  check(null, {
    'setTimeout 0': () => thrown(() => ws.connect(`${BASE}/echo`, (s) => s.setTimeout(() => {}, 0))).includes('setTimeout requires a >0 timeout parameter, received 0.00'),
    'sendBinary string': () => thrown(() => ws.connect(`${BASE}/echo`, (s) => s.sendBinary('x'))).includes('expected ArrayBuffer as argument, received: String'),
    'no callback': () => thrown(() => ws.connect(`${BASE}/echo`, {})).includes('last argument to ws.connect must be a function'),
    'handler throws': () => thrown(() => ws.connect(`${BASE}/echo`, (s) => s.on('open', () => { throw new Error('in open'); }))).includes('in open'),
    'other compression': () => thrown(() => ws.connect(`${BASE}/echo`, { compression: 'gzip' }, () => {})).includes("unsupported compression algorithm 'gzip', supported algorithm is 'deflate'"),
    'own headers': () => ws.connect(`${BASE}/echo`, { headers: { Upgrade: 'x' } }, () => {}).error === 'websocket: duplicate header not allowed: Upgrade',
  });
}
"#,
    );
    crate::assert_checks(&run, &export, 6.0);
}

#[test]
fn ws_in_the_init_context_is_refused() {
    let dir = Dir::new("ws-init");
    let (run, _) = run_export(
        &dir,
        "import ws from 'k6/ws';\nws.connect('ws://127.0.0.1:1/', () => {});\nexport default function () {}\n",
        &[],
    );
    assert_eq!(run.code, 107, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("using websockets in the init context is not supported"),
        "{}",
        run.stderr
    );
}

#[test]
fn websocket_api_runs_several_sockets_on_the_event_loop() {
    let addr = ws_server::start();
    let http = crate::support::TestServer::start();
    let (run, export) = run_ws(
        "ws-api",
        &format!("ws://{addr}"),
        &format!(
            r#"
import {{ WebSocket, Blob }} from 'k6/experimental/websockets';
import http from 'k6/http';
import {{ check }} from 'k6';
export const options = {{ iterations: 1, thresholds: {{ 'ws_msgs_sent{{name:ws://{addr}/echo}}': ['count==6'] }} }};
export default function () {{
  const log = [];
  const a = new WebSocket(`${{BASE}}/echo`, ['chat']);
  const b = new WebSocket(`${{BASE}}/echo`);
  b.binaryType = 'arraybuffer';
  check(a, {{ 'connecting': (s) => s.readyState === 0 && s.url === `${{BASE}}/echo` && s.binaryType === 'blob' }});
  a.onopen = () => {{
    a.send('text');
    a.send(new Uint8Array([1, 2, 3]));
    log.push('buffered:' + a.bufferedAmount);
    a.ping();
  }};
  a.onpong = () => log.push('a pong');
  a.addEventListener('message', (e) => {{
    if (typeof e.data === 'string') {{ log.push('a text:' + e.data); return; }}
    e.data.arrayBuffer().then((buf) => {{ log.push('a blob:' + new Uint8Array(buf).join(',')); a.close(); }});
  }});
  a.onclose = () => log.push('a closed:' + a.readyState);
  b.onopen = () => b.send(new Uint8Array([9, 8]).buffer);
  b.onmessage = (e) => {{
    log.push('b ab:' + new Uint8Array(e.data).join(','));
    setTimeout(() => b.close(3001, 'later'), 20);
  }};
  b.onerror = (e) => log.push('b error:' + e.error);
  b.onclose = () => log.push('b closed');
  http.asyncRequest('GET', '{http}/get').then((r) => log.push('http:' + r.status));
  const refused = new WebSocket('ws://127.0.0.1:1/');
  refused.onerror = (e) => log.push('refused:' + e.error);
  refused.onclose = () => log.push('refused closed');
  let thrown = '';
  try {{ a.send('too early'); }} catch (e) {{ thrown = String(e); }}
  check(thrown, {{ 'send before open': (t) => t.includes('InvalidStateError') }});
  setTimeout(() => {{
    check(log, {{
      'a': (l) => ['buffered:7', 'a pong', 'a text:text', 'a blob:1,2,3', 'a closed:3'].every((x) => l.includes(x)),
      'b': (l) => ['b ab:9,8', 'b error:websocket: close 3001: later', 'b closed'].every((x) => l.includes(x)),
      'http': (l) => l.includes('http:200'),
      'refused': (l) => l.includes('refused:dial tcp 127.0.0.1:1: connect: connection refused') && l.includes('refused closed'),
    }}, {{}});
  }}, 500);
  const blob = new Blob(['ab', new Uint8Array([99])], {{ type: 'text/plain' }});
  blob.text().then((t) => check(t, {{ 'blob text': (t) => t === 'abc' && blob.size === 3 && blob.type === 'text/plain' }}));
}}
"#,
            http = http.url(""),
            addr = addr
        ),
    );
    crate::assert_checks(&run, &export, 7.0);
    assert_eq!(count(&export, "ws_sessions"), 3.0);
    // Pings and close frames count as sent messages in the WebSocket API, as in k6.
    assert_eq!(count(&export, "ws_msgs_sent"), 6.0);
    assert_eq!(count(&export, "ws_msgs_received"), 3.0);
}

#[test]
fn websocket_api_close_arguments_are_checked() {
    let addr = ws_server::start();
    let (run, export) = run_ws(
        "ws-api-close",
        &format!("ws://{addr}"),
        r#"
import { WebSocket } from 'k6/experimental/websockets';
import { check } from 'k6';
export const options = { iterations: 1 };
export default function () {
  const ws = new WebSocket(`${BASE}/echo`);
  ws.onopen = () => {
    let bad = '';
    try { ws.close(1001); } catch (e) { bad = String(e); }
    check(bad, { 'bad code': (t) => t.includes('The close code must be either 1000, or between 3000 and 4999. 1001 is neither') });
    ws.close();
  };
  ws.onclose = () => check(ws, { 'closed': (s) => s.readyState === 3 });
  let scheme = '';
  try { new WebSocket('http://127.0.0.1/'); } catch (e) { scheme = String(e); }
  check(scheme, { 'scheme': (t) => t.includes('WebSocket requires url with scheme ws or wss, but got "http"') });
  let option = '';
  try { new WebSocket(`${BASE}/echo`, null, { nope: 1 }); } catch (e) { option = String(e); }
  check(option, { 'unknown option': (t) => t.includes("unknown WebSocket's option nope") });
}
"#,
    );
    crate::assert_checks(&run, &export, 4.0);
}

/// examples/websockets.js against the in-process server.
#[test]
fn the_websockets_example_runs() {
    let addr = ws_server::start();
    let dir = Dir::new("example-websockets");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let script = std::fs::read_to_string(root.join("websockets.js")).unwrap();
    dir.write("websockets.js", &script);
    let url = format!("ws://{addr}");
    let (run, export) = crate::run_file(&dir, "websockets.js", &[], &[("WS_URL", &url)]);
    crate::assert_checks(&run, &export, 12.0);
    assert_eq!(count(&export, "ws_sessions"), 8.0);
}
