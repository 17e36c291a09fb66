//! `k6/net/grpc` against the in-process server of `support::grpc`: loading `.proto` files,
//! reflection, unary calls and their replies, errors, samples and init-context rules.

use std::time::Duration;

use serde_json::Value;

use crate::support::grpc;
use crate::{assert_checks, run_file, Dir};

/// A test folder with echo.proto and its import, and `script` as script.js.
fn setup(name: &str, script: &str) -> Dir {
    let dir = Dir::new(name);
    let src = grpc::proto_dir();
    for f in ["echo.proto", "stream.proto", "common/inner.proto"] {
        dir.write(f, &std::fs::read_to_string(src.join(f)).unwrap());
    }
    dir.write("script.js", script);
    dir
}

/// The `grpc_req_duration` samples of a `-o json` file, as their tag objects.
fn grpc_samples(dir: &Dir) -> Vec<Value> {
    std::fs::read_to_string(dir.path("out.json"))
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "Point" && v["metric"] == "grpc_req_duration")
        .map(|v| v["data"]["tags"].clone())
        .collect()
}

const UNARY: &str = r#"
import grpc from 'k6/net/grpc';
import { check } from 'k6';
const client = new grpc.Client();
const methods = client.load([], 'echo.proto');
export const options = { thresholds: { 'grpc_req_duration{status:0}': ['max<10000'] } };
export default function () {
  client.connect(__ENV.ADDR, { plaintext: true, timeout: '5s' });
  const r = client.invoke('rk6.test.Echo/Say', { text: 'hi', count: 5, mood: 'HAPPY', blob: 'aGk=',
    at: '2024-01-02T03:04:05Z', inner: { n: 3 }, big: '18446744073709551615' }, { tags: { mine: 'yes' } });
  const empty = client.invoke('/rk6.test.Echo/Say', {});
  const f = client.invoke('rk6.test.Echo/Fail', { code: 5, message: 'not here' });
  const d = client.invoke('rk6.test.Echo/Sleep', { ms: 2000 }, { timeout: '100ms' });
  const m = client.invoke('rk6.test.Echo/Metadata', {}, { metadata: { 'x-one': '1' } });
  check(null, {
    'methods': () => methods.length === 4 && methods[0].full_method === '/rk6.test.Echo/Say'
      && methods[0].package === 'rk6.test' && methods[0].service === 'Echo' && methods[0].name === 'Say',
    'ok': () => r.status === grpc.StatusOK && r.error === null,
    'int64 as string, enum by name, bytes base64': () => r.message.count === '5'
      && r.message.mood === 'HAPPY' && r.message.blob === 'aGk=' && r.message.big === '18446744073709551615',
    'well-known and nested types': () => r.message.at === '2024-01-02T03:04:05Z' && r.message.inner.n === 3
      && r.message.inner.note === '',
    'unpopulated fields': () => JSON.stringify(empty.message) ===
      '{"text":"","count":"0","mood":"MOOD_UNSET","blob":"","tags":[],"at":null,"inner":null,"ratio":0,"labels":{},"flag":false,"big":"0"}',
    'metadata': () => r.headers['x-echo'][0] === 'yes' && r.trailers['x-trailer'][0] === 'done',
    'status prints as its name': () => String(f.status) === 'NotFound' && f.status == 5 && f.status === grpc.StatusNotFound,
    'error object': () => JSON.stringify(f.error) === '{"code":5,"message":"not here","details":[]}',
    'deadline': () => d.status === grpc.StatusDeadlineExceeded && d.error.message === 'context deadline exceeded',
    'metadata sent': () => m.message.metadata['x-one'] === '1',
  });
  client.close();
}
"#;

#[test]
fn unary_calls_answer_as_in_k6() {
    let addr = grpc::start(Duration::from_secs(60));
    let dir = setup("grpc-unary", UNARY);
    let (run, export) = run_file(
        &dir,
        "script.js",
        &["-o", &format!("json={}", dir.path("out.json").display())],
        &[("ADDR", &addr.to_string())],
    );
    assert_checks(&run, &export, 10.0);
    let samples = grpc_samples(&dir);
    let statuses: Vec<&str> = samples
        .iter()
        .map(|t| t["status"].as_str().unwrap())
        .collect();
    // The call that hit its own deadline leaves no sample, as in k6.
    assert_eq!(statuses, ["0", "0", "5", "0"]);
    let first = &samples[0];
    assert_eq!(first["url"], format!("{addr}/rk6.test.Echo/Say"));
    assert_eq!(first["name"], "/rk6.test.Echo/Say");
    assert_eq!(first["service"], "rk6.test.Echo");
    assert_eq!(first["method"], "Say");
    assert_eq!(first["mine"], "yes");
    assert_eq!(first["scenario"], "default");
}

#[test]
fn reflection_and_async_invoke() {
    let addr = grpc::start(Duration::from_secs(60));
    let dir = setup(
        "grpc-reflect",
        r#"
import grpc from 'k6/net/grpc';
import { check } from 'k6';
const client = new grpc.Client();
export default async function () {
  client.connect(__ENV.ADDR, { plaintext: true, reflect: true });
  const t0 = Date.now();
  const rs = await Promise.all([
    client.asyncInvoke('rk6.test.Echo/Sleep', { ms: 300 }),
    client.asyncInvoke('rk6.test.Echo/Sleep', { ms: 300 }),
  ]);
  const took = Date.now() - t0;
  const missing = await client.asyncInvoke('rk6.test.Echo/Nope', {}).catch((e) => String(e));
  check(null, {
    'reflected methods work': () => rs.every((r) => r.status === grpc.StatusOK && r.message.text === 'slept'),
    'async calls overlap': () => took < 550,
    'rejects with the Go error': () => missing === 'method "/rk6.test.Echo/Nope" not found in file descriptors',
  });
}
"#,
    );
    let (run, export) = run_file(&dir, "script.js", &[], &[("ADDR", &addr.to_string())]);
    assert_checks(&run, &export, 3.0);
}

#[test]
fn init_context_and_argument_errors() {
    let addr = grpc::start(Duration::from_secs(60));
    let dir = setup(
        "grpc-errors",
        r#"
import grpc from 'k6/net/grpc';
import { check } from 'k6';
const client = new grpc.Client();
client.load(['.'], 'echo.proto');
let initConnect = '';
try { client.connect(__ENV.ADDR, { plaintext: true }); } catch (e) { initConnect = String(e); }
export default function () {
  const err = (f) => { try { f(); return 'no error'; } catch (e) { return String(e); } };
  check(null, {
    'connect in init': () => initConnect === 'GoError: connecting to a gRPC server in the init context is not supported',
    'load after init': () => err(() => client.load([], 'echo.proto')) === 'GoError: load must be called in the init context',
    'invoke before connect': () => err(() => client.invoke('rk6.test.Echo/Say', {})) === 'GoError: no gRPC connection, you must call connect first',
    'unknown connect param': () => err(() => client.connect(__ENV.ADDR, { nope: 1 })) === 'GoError: invalid grpc.connect() parameters: unknown connect param: "nope"',
    'refused': () => err(() => client.connect('127.0.0.1:1', { plaintext: true })).startsWith('GoError: connection error: desc = "transport: error while dialing: dial tcp 127.0.0.1:1'),
    'stream before connect': () => err(() => new grpc.Stream(client, 'rk6.test.Echo/Say')) === "GoError: invalid GRPC Stream's client: no gRPC connection, you must call connect first",
  });
  client.connect(__ENV.ADDR, { plaintext: true });
  check(null, {
    'unknown method': () => err(() => client.invoke('rk6.test.Echo/Nope', {})) === 'GoError: method "/rk6.test.Echo/Nope" not found in file descriptors',
    'unknown param': () => err(() => client.invoke('rk6.test.Echo/Say', {}, { foo: 1 })) === `GoError: invalid GRPC's client.invoke() parameters: unknown param: "foo"`,
  });
}
"#,
    );
    let (run, export) = run_file(&dir, "script.js", &[], &[("ADDR", &addr.to_string())]);
    assert_checks(&run, &export, 8.0);
}

#[test]
fn tls_with_the_vus_settings_and_its_own_roots() {
    let (addr, ca) = grpc::start_tls(Duration::from_secs(60));
    let dir = setup(
        "grpc-tls",
        r#"
import grpc from 'k6/net/grpc';
import { check } from 'k6';
const client = new grpc.Client();
client.load([], 'echo.proto');
const ca = open('ca.pem');
export default function () {
  let untrusted = '';
  try { client.connect(__ENV.ADDR, {}); } catch (e) { untrusted = String(e); }
  client.connect(__ENV.ADDR, { tls: { cacerts: [ca] } });
  const r = client.invoke('rk6.test.Echo/Say', { text: 'over tls' });
  check(null, {
    'untrusted server refused': () => untrusted.includes('authentication handshake failed'),
    'trusted with cacerts': () => r.status === grpc.StatusOK && r.message.text === 'over tls',
  });
}
"#,
    );
    dir.write("ca.pem", &ca);
    let addr = format!("localhost:{}", addr.port());
    let (run, export) = run_file(&dir, "script.js", &[], &[("ADDR", &addr)]);
    assert_checks(&run, &export, 2.0);
    // insecureSkipTLSVerify lets the untrusted server through, as in k6.
    let script = std::fs::read_to_string(dir.path("script.js")).unwrap();
    dir.write(
        "script.js",
        &script.replace(
            "'untrusted server refused': () => untrusted.includes('authentication handshake failed')",
            "'insecure skips verification': () => untrusted === ''",
        ),
    );
    let (run, export) = run_file(
        &dir,
        "script.js",
        &["--insecure-skip-tls-verify"],
        &[("ADDR", &addr)],
    );
    assert_checks(&run, &export, 2.0);
}

#[test]
fn the_grpc_example_runs() {
    let addr = grpc::start(Duration::from_secs(60));
    let dir = Dir::new("example-grpc");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    for f in ["grpc.js", "grpc/echo.proto", "grpc/common/inner.proto"] {
        dir.write(f, &std::fs::read_to_string(root.join(f)).unwrap());
    }
    let (run, export) = run_file(
        &dir,
        "grpc.js",
        &["--duration", "1s"],
        &[("GRPC_ADDR", &addr.to_string())],
    );
    run.assert_code(0);
    let checks = crate::metric(&export, "checks");
    assert!(checks["passes"].as_f64().unwrap() >= 3.0, "{checks}");
    assert_eq!(checks["fails"].as_f64(), Some(0.0));
}

#[test]
fn the_grpc_stream_example_runs() {
    let addr = grpc::start(Duration::from_secs(60));
    let dir = Dir::new("example-grpc-stream");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    for f in [
        "grpc-stream.js",
        "grpc/stream.proto",
        "grpc/echo.proto",
        "grpc/common/inner.proto",
    ] {
        dir.write(f, &std::fs::read_to_string(root.join(f)).unwrap());
    }
    let (run, export) = run_file(
        &dir,
        "grpc-stream.js",
        &["--duration", "1s"],
        &[("GRPC_ADDR", &addr.to_string())],
    );
    run.assert_code(0);
    let checks = crate::metric(&export, "checks");
    assert!(checks["passes"].as_f64().unwrap() >= 2.0, "{checks}");
    assert_eq!(checks["fails"].as_f64(), Some(0.0));
}

#[test]
fn protosets_and_receive_limits() {
    let addr = grpc::start(Duration::from_secs(60));
    let dir = setup(
        "grpc-protoset",
        r#"
import grpc from 'k6/net/grpc';
import { check } from 'k6';
const client = new grpc.Client();
const methods = client.loadProtoset('echo.protoset');
let missing = '';
try { new grpc.Client().loadProtoset('nope.protoset'); } catch (e) { missing = String(e); }
let noProto = '';
try { new grpc.Client().load([], 'nope.proto'); } catch (e) { noProto = String(e); }
export default function () {
  client.connect(__ENV.ADDR, { plaintext: true, maxReceiveSize: 10 });
  const r = client.invoke('rk6.test.Echo/Say', { text: 'this is longer than ten bytes' });
  check(null, {
    'protoset methods': () => methods.map((m) => m.full_method).join() ===
      '/rk6.test.Echo/Say,/rk6.test.Echo/Fail,/rk6.test.Echo/Sleep,/rk6.test.Echo/Metadata',
    'missing protoset': () => missing.startsWith("GoError: couldn't open protoset: stat ") && missing.endsWith('nope.protoset: no such file or directory'),
    'missing proto': () => noProto.startsWith('GoError: stat ') && noProto.endsWith('nope.proto: no such file or directory'),
    'too large': () => r.status === grpc.StatusResourceExhausted
      && r.error.message === 'grpc: received message larger than max (31 vs. 10)',
  });
}
"#,
    );
    let mut compiler = protox::Compiler::new([grpc::proto_dir()]).unwrap();
    compiler.include_imports(true);
    compiler.open_file("echo.proto").unwrap();
    std::fs::write(
        dir.path("echo.protoset"),
        compiler.encode_file_descriptor_set(),
    )
    .unwrap();
    let (run, export) = run_file(&dir, "script.js", &[], &[("ADDR", &addr.to_string())]);
    assert_checks(&run, &export, 4.0);
}

const STREAMS: &str = r#"
import grpc from 'k6/net/grpc';
import { check } from 'k6';
const client = new grpc.Client();
client.load([], 'stream.proto');
export default function () {
  const got = { repeat: [], chat: [], collect: null, errors: [], ends: [] };
  client.connect(__ENV.ADDR, { plaintext: true });
  const r = new grpc.Stream(client, 'rk6.test.Streams/Repeat', { tags: { mine: 'yes' } });
  r.on('data', (m, meta) => got.repeat.push([m.text, m.count, typeof meta.ts]));
  r.on('end', () => got.ends.push('repeat'));
  r.write({ text: 'hi', count: 3 });
  r.end();
  const c = new grpc.Stream(client, 'rk6.test.Streams/Collect');
  c.on('data', (m) => { got.collect = m; });
  c.on('end', () => got.ends.push('collect'));
  c.write({ text: 'a' });
  c.write({ text: 'b' });
  c.end();
  c.write({ text: 'after end: dropped' });
  const b = new grpc.Stream(client, '/rk6.test.Streams/Chat');
  b.on('data', (m) => got.chat.push(JSON.stringify(m)));
  b.on('end', () => got.ends.push('chat'));
  b.write({ text: 'x' });
  b.write({ text: 'y', count: 2 });
  b.end();
  const f = new grpc.Stream(client, 'rk6.test.Streams/Repeat');
  f.on('error', (e) => got.errors.push(JSON.stringify(e)));
  f.on('end', () => {
    got.ends.push('fail');
    // The last stream to end: by then every event was delivered.
    setTimeout(() => check(got, {
      'server stream': (g) => JSON.stringify(g.repeat) === '[["hi","3","number"],["hi","3","number"],["hi","3","number"]]',
      'client stream': (g) => g.collect !== null && g.collect.text === 'a,b' && g.collect.count === '2',
      'bidi stream, unpopulated fields left out': (g) => g.chat.join('|') === '{"text":"x"}|{"text":"y","count":"2"}',
      'error event': (g) => g.errors.length === 1 && g.errors[0] === '{"code":5,"details":[],"message":"no such thing"}',
      'every stream ended': (g) => g.ends.length === 4,
    }), 500);
  });
  f.write({ text: 'fail' });
  f.end();
}
"#;

#[test]
fn streams_deliver_data_error_and_end_events() {
    let addr = grpc::start(Duration::from_secs(60));
    let dir = setup("grpc-streams", STREAMS);
    let (run, export) = run_file(
        &dir,
        "script.js",
        &["-o", &format!("json={}", dir.path("out.json").display())],
        &[("ADDR", &addr.to_string())],
    );
    assert_checks(&run, &export, 5.0);
    let points = |metric: &str| -> Vec<Value> {
        std::fs::read_to_string(dir.path("out.json"))
            .unwrap()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|v| v["type"] == "Point" && v["metric"] == metric)
            .map(|v| v["data"]["tags"].clone())
            .collect()
    };
    let streams = points("grpc_streams");
    assert_eq!(streams.len(), 4);
    assert_eq!(points("grpc_streams_msgs_sent").len(), 6);
    assert_eq!(points("grpc_streams_msgs_received").len(), 7);
    assert_eq!(streams[0]["url"], format!("{addr}/rk6.test.Streams/Repeat"));
    assert_eq!(streams[0]["name"], "/rk6.test.Streams/Repeat");
    assert_eq!(streams[0]["method"], "Repeat");
    assert_eq!(streams[0]["mine"], "yes");
    let failed = grpc_samples(&dir)
        .iter()
        .filter(|t| t["status"] == "5")
        .count();
    assert_eq!(failed, 1);
}

#[test]
fn max_send_size_fails_the_call_as_grpc_go() {
    let addr = grpc::start(Duration::from_secs(60));
    let dir = setup(
        "grpc-max-send",
        r#"
import grpc from 'k6/net/grpc';
import { check } from 'k6';
const client = new grpc.Client();
client.load([], 'echo.proto', 'stream.proto');
export const options = {
  thresholds: { grpc_streams_msgs_sent: ['count==1'] },
};
export default function () {
  client.connect(__ENV.ADDR, { plaintext: true, maxSendSize: 100 });
  // A text of 98 bytes encodes to 100: at the limit, it goes.
  const fits = client.invoke('rk6.test.Echo/Say', { text: 'x'.repeat(98) });
  const over = client.invoke('rk6.test.Echo/Say', { text: 'x'.repeat(99) });
  const log = [];
  client.asyncInvoke('rk6.test.Echo/Say', { text: 'x'.repeat(300) }).then((r) => log.push('async ' + r.status + ' ' + r.error.message));
  const s = new grpc.Stream(client, 'rk6.test.Streams/Chat');
  s.on('error', (e) => log.push('error ' + String(e)));
  s.on('end', () => log.push('end'));
  s.write({ text: 'a' });
  s.write({ text: 'b'.repeat(200) });
  s.write({ text: 'after the failure: dropped' });
  s.end();
  setTimeout(() => check(log, {
    'async call fails the same way': (l) => l.includes('async 8 trying to send message larger than max (303 vs. 100)'),
    // As k6: the writer's error, the end, then the reader's error.
    'stream: error, end, error': (l) => JSON.stringify(l.filter((x) => !x.startsWith('async'))) === JSON.stringify([
      'error code: 8, message: trying to send message larger than max (203 vs. 100)', 'end',
      'error code: 8, message: trying to send message larger than max (203 vs. 100)']),
  }), 300);
  check(null, {
    'at the limit': () => fits.status === grpc.StatusOK,
    'over it: a failed call, not a throw': () => over.status === grpc.StatusResourceExhausted
      && over.error.message === 'trying to send message larger than max (101 vs. 100)'
      && over.message.text === '',
  });
}
"#,
    );
    let (run, export) = run_file(
        &dir,
        "script.js",
        &["-o", "json=out.json"],
        &[("ADDR", &addr.to_string())],
    );
    assert_checks(&run, &export, 4.0);
    // Each refused message is a failed call (or stream) in grpc_req_duration.
    let statuses: Vec<String> = grpc_samples(&dir)
        .iter()
        .map(|t| {
            format!(
                "{} {}",
                t["method"].as_str().unwrap_or(""),
                t["status"].as_str().unwrap_or("")
            )
        })
        .collect();
    let mut sorted = statuses.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        ["Chat 8", "Say 0", "Say 8", "Say 8"],
        "{statuses:?}"
    );
}

#[test]
fn tls_password_decrypts_a_legacy_encrypted_key_as_k6() {
    let (addr, ca) = grpc::start_tls(Duration::from_secs(60));
    let dir = setup(
        "grpc-tls-password",
        r#"
import grpc from 'k6/net/grpc';
import { check } from 'k6';
const client = new grpc.Client();
client.load([], 'echo.proto');
const ca = open('ca.pem');
const cert = open('cert.pem');
const encrypted = open('key-aes256.pem');
const plain = open('key.pem');
function thrown(tls) {
  try { client.connect(__ENV.ADDR, { tls: Object.assign({ cacerts: [ca], cert }, tls) }); client.close(); return ''; }
  catch (e) { return String(e); }
}
export default function () {
  check(null, {
    'wrong password': () => thrown({ key: encrypted, password: 'nope' }) === 'GoError: x509: decryption password incorrect',
    'password for a plain key': () => thrown({ key: plain, password: 'k6-secret' }) === 'GoError: x509: no DEK-Info header in block',
    'not a string': () => thrown({ key: encrypted, password: 5 }).startsWith('GoError: invalid grpc.connect() parameters: invalid tls password value'),
  });
  client.connect(__ENV.ADDR, { tls: { cacerts: [ca], cert, key: encrypted, password: 'k6-secret' } });
  const r = client.invoke('rk6.test.Echo/Say', { text: 'with a decrypted key' });
  check(r, { 'connected with the decrypted key': (r) => r.status === grpc.StatusOK && r.message.text === 'with a decrypted key' });
}
"#,
    );
    dir.write("ca.pem", &ca);
    let keys = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/grpc/client-cert");
    for f in ["cert.pem", "key.pem", "key-aes256.pem"] {
        dir.write(f, &std::fs::read_to_string(keys.join(f)).unwrap());
    }
    let addr = format!("localhost:{}", addr.port());
    let (run, export) = run_file(&dir, "script.js", &[], &[("ADDR", &addr)]);
    assert_checks(&run, &export, 4.0);
}

/// `connect()`'s `authority` (k6 1.2.0+: v1.2.0 release notes, grafana/k6#4898; k6's
/// `Connect` passes it to grpc-go's `WithAuthority`): every call's `:authority`, and over
/// TLS the name the server's certificate is checked against, as grpc-go's TLS credentials
/// take it; an empty string leaves the address.
#[test]
fn authority_sets_the_calls_authority_and_the_tls_name() {
    let addr = grpc::start(Duration::from_secs(60));
    let (tls_addr, ca) = grpc::start_tls(Duration::from_secs(60));
    let dir = setup(
        "grpc-authority",
        r#"
import grpc from 'k6/net/grpc';
import { check } from 'k6';
const client = new grpc.Client();
client.load([], 'echo.proto');
const ca = open('ca.pem');
const seen = (params) => {
  client.connect(__ENV.ADDR, Object.assign({ plaintext: true }, params));
  const r = client.invoke('rk6.test.Echo/Metadata', {});
  client.close();
  return r.message.metadata[':authority'];
};
const thrown = (f) => { try { f(); return ''; } catch (e) { return String(e); } };
export default function () {
  const tls = (authority) => thrown(() => {
    client.connect(__ENV.TLS_ADDR, Object.assign({ tls: { cacerts: [ca] } }, authority ? { authority } : {}));
    client.invoke('rk6.test.Echo/Say', { text: 'x' });
    client.close();
  });
  check(null, {
    'the address by default': () => seen({}) === __ENV.ADDR,
    'authority replaces it': () => seen({ authority: 'api.example.test' }) === 'api.example.test',
    'with a port': () => seen({ authority: 'api.example.test:8443' }) === 'api.example.test:8443',
    'empty leaves the address': () => seen({ authority: '' }) === __ENV.ADDR,
    'not a string': () => thrown(() => client.connect(__ENV.ADDR, { authority: 5 }))
      === "GoError: invalid grpc.connect() parameters: invalid authority value: '5', it needs to be a string",
    // The certificate names localhost only: dialed by IP, the authority makes it match.
    'tls name from the authority': () => tls('localhost') === '',
    'tls without it checks the IP': () => tls('').includes('authentication handshake failed'),
  });
}
"#,
    );
    dir.write("ca.pem", &ca);
    let (run, export) = run_file(
        &dir,
        "script.js",
        &[],
        &[
            ("ADDR", &addr.to_string()),
            ("TLS_ADDR", &format!("127.0.0.1:{}", tls_addr.port())),
        ],
    );
    assert_checks(&run, &export, 7.0);
}

/// A failed status's `grpc-status-details-bin` (k6 1.1.0 decodes it; side by side in
/// tests/parity/grpc.rs): `error.details` as protojson with `@type` in a unary reply, `{}`
/// for the whole error when a type is unknown, `Internal` when the trailer's code is
/// another, Go values in a stream's `error` event, the trailer among the trailers.
#[test]
fn error_details_from_the_status_trailer() {
    let addr = grpc::start(Duration::from_secs(60));
    let dir = setup(
        "grpc-error-details",
        r#"
import grpc from 'k6/net/grpc';
import { check } from 'k6';
const client = new grpc.Client();
client.load([], 'echo.proto', 'stream.proto');
export default async function () {
  client.connect(__ENV.ADDR, { plaintext: true });
  const fail = (kind) => client.invoke('rk6.test.Echo/Fail', { code: 9, message: 'details:' + kind });
  const info = fail('info');
  const unknown = fail('unknown');
  const mismatch = fail('mismatch');
  const later = await client.asyncInvoke('rk6.test.Echo/Fail', { code: 9, message: 'details:info' });
  const streamed = [];
  const s = new grpc.Stream(client, 'rk6.test.Streams/Repeat');
  s.on('error', (e) => streamed.push(e));
  s.on('end', () => setTimeout(() => check(streamed, {
    'stream: Go values, no @type': (e) => e.length === 1 && e[0].message === 'with details'
      && JSON.stringify(e[0].details) === '[{"reason":"QUOTA","domain":"rk6.test","metadata":{"k":"v"}}]'
      && String(e[0].details[0]) === 'reason:"QUOTA"  domain:"rk6.test"  metadata:{key:"k"  value:"v"}',
  }), 0));
  s.write({ text: 'details:info' });
  s.end();
  const expected = '{"code":9,"message":"with details","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"QUOTA","domain":"rk6.test","metadata":{"k":"v"}}]}';
  check(null, {
    'protojson with @type': () => info.status === grpc.StatusFailedPrecondition && JSON.stringify(info.error) === expected,
    'asyncInvoke too': () => JSON.stringify(later.error) === expected,
    'an unknown type: {}': () => JSON.stringify(unknown.error) === '{}' && unknown.status === grpc.StatusFailedPrecondition,
    'another code: Internal': () => mismatch.status === grpc.StatusInternal
      && mismatch.error.message.startsWith('grpc-status-details-bin mismatch: grpc-status=FailedPrecondition, grpc-message="details:mismatch", grpc-status-details-bin=code:5  message:"with details"  details:{[type.googleapis.com/google.rpc.ErrorInfo]:{reason:"QUOTA"')
      && mismatch.error.details.length === 0,
    'the trailer is metadata': () => info.trailers['grpc-status-details-bin'][0].startsWith('\b\t\u0012\u000cwith details'),
  });
}
"#,
    );
    let (run, export) = run_file(
        &dir,
        "script.js",
        &["-o", &format!("json={}", dir.path("out.json").display())],
        &[("ADDR", &addr.to_string())],
    );
    assert_checks(&run, &export, 6.0);
    let statuses: Vec<String> = grpc_samples(&dir)
        .iter()
        .map(|t| t["status"].as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(
        statuses,
        ["9", "9", "13", "9", "5"],
        "the mismatch is Internal"
    );
}

/// A request key its message type lacks throws Go protojson's words, with the key's place
/// in the JSON text (k6 1.1.0's texts; side by side in tests/parity/grpc.rs).
#[test]
fn unknown_request_keys_throw_as_k6() {
    let addr = grpc::start(Duration::from_secs(60));
    let dir = setup(
        "grpc-unknown-keys",
        r#"
import grpc from 'k6/net/grpc';
import { check } from 'k6';
const client = new grpc.Client();
client.load([], 'echo.proto', 'stream.proto');
const thrown = (f) => { try { f(); return 'no error'; } catch (e) { return String(e); } };
const prefix = 'GoError: unable to serialise request object to protocol buffer: proto:\u00a0';
export default function () {
  client.connect(__ENV.ADDR, { plaintext: true });
  const say = (req) => thrown(() => client.invoke('rk6.test.Echo/Say', req));
  let streamError = '';
  const s = new grpc.Stream(client, 'rk6.test.Streams/Chat');
  s.on('error', (e) => { streamError = String(e); });
  s.on('end', () => setTimeout(() => check(streamError, {
    'a stream write ends the stream': (e) => e === "code: 2, message: can't serialise request object to protocol buffer: proto:\u00a0(line 1:2): unknown field \"nope\"",
  }), 0));
  s.write({ nope: 1 });
  s.end();
  check(null, {
    'top level': () => say({ text: 'x', nope: 1 }) === prefix + '(line 1:13): unknown field "nope"',
    'nested': () => say({ inner: { n: 1, bad: 2 } }) === prefix + '(line 1:17): unknown field "bad"',
    'undefined is left out': () => say({ text: 'x', gone: undefined }) === 'no error',
  });
}
"#,
    );
    let (run, export) = run_file(&dir, "script.js", &[], &[("ADDR", &addr.to_string())]);
    assert_checks(&run, &export, 4.0);
}
