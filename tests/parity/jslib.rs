//! Libraries k6 users import from jslib.k6.io, run end to end side by side with k6: the MIT
//! ones jslib serves as they are on npm (papaparse, jsonpath, and chai, which k6chaijs wraps),
//! served from a local HTTPS server the way jslib.k6.io serves them. The files come from npm
//! at install time (`.ci/npm-libs`), never from the repository. Exit codes, checks, threshold
//! verdicts and the file `handleSummary` writes must agree.

use std::path::PathBuf;

use super::{checks, k6, run_k6_env, run_rk6_env, verdicts};
use crate::module_loading::server::{Answer, ModuleServer};
use crate::support::TestServer;
use crate::Dir;

/// The directory `.ci/npm-libs` fills (`RK6_NPM_LIBS` overrides it).
fn npm_libs() -> PathBuf {
    std::env::var_os("RK6_NPM_LIBS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/npm-libs"))
}

/// The text of `name` from the npm directory. A missing file fails the test in CI (`CI`
/// set), which fetches them, and skips it elsewhere, as the other tests needing an installed
/// tool do; both say how to fetch it.
fn npm_file(name: &str) -> Option<String> {
    let path = npm_libs().join(name);
    match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) => {
            let why = format!(
                "{} missing ({e}): run `.ci/npm-libs` (fetches papaparse, jsonpath and chai with \
                 `npm pack`) or point RK6_NPM_LIBS at a directory holding {name}",
                path.display()
            );
            if std::env::var_os("CI").is_some() {
                panic!("{why}");
            }
            eprintln!("skipping the jslib parity test: {why}");
            None
        }
    }
}

/// The module server with the npm files under jslib.k6.io's paths.
fn jslib_server() -> Option<ModuleServer> {
    let files = [
        ("/papaparse/5.1.1/index.js", "papaparse-5.1.1.js"),
        ("/jsonpath/1.0.2/index.js", "jsonpath-1.0.2.js"),
        ("/chai/4.3.4/chai.js", "chai-4.3.4.js"),
    ];
    let mut answers: Vec<(&str, Answer)> = Vec::new();
    for (path, name) in files {
        answers.push((path, Answer::File(npm_file(name)?)));
    }
    Some(ModuleServer::start(&answers))
}

/// Runs `script` (with `files` beside it) under k6 and rk6, trusting the module server, and
/// asserts they agree; k6 must exit with `code` and count `passes`/`fails` checks, so two
/// runs that both fail to load the library do not pass as agreeing.
fn agree(name: &str, files: &[(&str, &str)], script: &str, code: i32, passes: u64, fails: u64) {
    let Some(bin) = k6() else { return };
    let Some(srv) = jslib_server() else { return };
    let dir = Dir::new(name);
    let ca = dir.write("ca.pem", &srv.cert_pem);
    let ca = ca.to_str().unwrap();
    for (file, text) in files {
        dir.write(file, text);
    }
    let script = script.replace("{JSLIB}", &srv.url(""));
    let path = dir.write("script.js", &script);
    let env = [("SSL_CERT_FILE", ca)];
    let report = || std::fs::read_to_string(dir.path("report.json")).unwrap_or_default();
    let theirs = run_k6_env(&bin, &path, &dir, &env);
    let their_report = report();
    let _ = std::fs::remove_file(dir.path("report.json"));
    let ours = run_rk6_env(&path, &dir, &env);
    let their_checks = checks(&theirs.export);
    let total = |c: &[(String, u64, u64)]| {
        c.iter()
            .fold((0, 0), |(p, f), (_, cp, cf)| (p + cp, f + cf))
    };
    assert_eq!(
        (theirs.code, total(&their_checks)),
        (code, (passes, fails)),
        "{name}: k6 did not run the journey as expected: {their_checks:?}"
    );
    assert_eq!(ours.code, theirs.code, "{name}: exit codes differ");
    assert_eq!(checks(&ours.export), their_checks, "{name}: checks differ");
    assert_eq!(
        verdicts(&ours.export),
        verdicts(&theirs.export),
        "{name}: threshold verdicts differ"
    );
    assert!(!their_report.is_empty(), "{name}: k6 wrote no report.json");
    assert_eq!(
        report(),
        their_report,
        "{name}: handleSummary output differs"
    );
}

const USERS_CSV: &str = "name,age,admin,city\nalice,31,true,\"Paris, FR\"\nbob,27,false,Oslo\n\ncarol,45,true,\"New \"\"York\"\"\"\n";

#[test]
fn papaparse_csv_driven_journey_agrees_with_k6() {
    let srv = TestServer::start();
    let script = r#"
import http from 'k6/http';
import { check, group } from 'k6';
import papaparse from '{JSLIB}/papaparse/5.1.1/index.js';
const users = papaparse.parse(open('./users.csv'), { header: true, dynamicTyping: true, skipEmptyLines: true });
const rows = papaparse.parse('a;b\n1;2\n3', { delimiter: ';' });
export const options = {
  vus: 2, iterations: 6,
  thresholds: { checks: ['rate==1'], 'http_reqs{name:user}': ['count==6'], 'http_reqs{name:nope}': ['count>0'] },
};
export default function () {
  const user = users.data[__ITER % users.data.length];
  group('post user', () => {
    const r = http.post('BASE/post', JSON.stringify(user), { headers: { 'Content-Type': 'application/json' }, tags: { name: 'user' } });
    check(r, {
      'echoed the row': (r) => r.json('json.name') === user.name && r.json('json.city') === user.city,
      'typed age': (r) => typeof r.json('json.age') === 'number',
      'typed admin': (r) => typeof r.json('json.admin') === 'boolean',
    });
  });
  check(users, {
    'three rows': (u) => u.data.length === 3,
    'header fields': (u) => u.meta.fields.join() === 'name,age,admin,city',
    'quoted comma and quotes': (u) => u.data[0].city === 'Paris, FR' && u.data[2].city === 'New "York"',
    'no errors': (u) => u.errors.length === 0,
  });
  check(rows, {
    'explicit delimiter': (r) => r.data[0].join('|') === 'a|b' && r.meta.delimiter === ';',
    'short row kept': (r) => r.data[2].length === 1 && r.errors.length === 0,
    'unparse round trip': () => papaparse.unparse(users.data).split('\r\n')[1] === 'alice,31,true,"Paris, FR"',
  });
}
export function handleSummary(data) {
  return { 'report.json': JSON.stringify({ checks: data.root_group.checks.map((c) => [c.name, c.passes, c.fails]), csv: papaparse.unparse(users.data) }) };
}
"#
    .replace("BASE", &srv.url(""));
    // The `nope` threshold fails, so both exit 99.
    agree(
        "jslib-papaparse",
        &[("users.csv", USERS_CSV)],
        &script,
        99,
        60,
        0,
    );
}

#[test]
fn jsonpath_queries_on_responses_agree_with_k6() {
    let srv = TestServer::start();
    let script = r#"
import http from 'k6/http';
import { check } from 'k6';
import jp from '{JSLIB}/jsonpath/1.0.2/index.js';
export const options = { iterations: 3, thresholds: { checks: ['rate>0.8'] } };
const store = { store: { book: [
  { category: 'reference', author: 'Nigel Rees', title: 'Sayings', price: 8.95 },
  { category: 'fiction', author: 'Evelyn Waugh', title: 'Sword', price: 12.99 },
  { category: 'fiction', author: 'Herman Melville', title: 'Moby Dick', isbn: '0-553-21311-3', price: 8.99 },
], bicycle: { color: 'red', price: 19.95 } } };
export default function () {
  const r = http.post('BASE/post', JSON.stringify(store), { headers: { 'Content-Type': 'application/json' } });
  const doc = r.json('json');
  check(doc, {
    'all authors': (d) => jp.query(d, '$.store.book[*].author').join() === 'Nigel Rees,Evelyn Waugh,Herman Melville',
    'recursive prices': (d) => jp.query(d, '$..price').length === 4,
    'filter expression': (d) => jp.query(d, '$..book[?(@.price<10)].title').join() === 'Sayings,Moby Dick',
    'slice': (d) => jp.query(d, '$..book[-1:].title')[0] === 'Moby Dick',
    'value': (d) => jp.value(d, '$.store.bicycle.color') === 'red',
    'paths': (d) => jp.stringify(jp.paths(d, '$..isbn')[0]) === '$.store.book[2].isbn',
    'nodes': (d) => jp.nodes(d, '$.store.book[0]')[0].value.price === 8.95,
    'apply': (d) => { jp.apply(d, '$..author', (a) => a.toUpperCase()); return d.store.book[1].author === 'EVELYN WAUGH'; },
    // Deliberately failing: the third iteration's document has no such key.
    'missing is empty': (d) => jp.query(d, '$.nothing').length === 0 && __ITER < 2,
  });
  let err = '';
  try { jp.query(doc, '$[?(@.price<'); } catch (e) { err = e.message; }
  check(err, { 'bad path throws': (e) => e.length > 0 });
}
export function handleSummary(data) {
  const checks = jp.query(data, '$.root_group.checks[*]').map((c) => `${c.name} ${c.passes}/${c.fails}`);
  return { 'report.json': JSON.stringify({ checks, verdict: jp.value(data, '$.metrics.checks.thresholds["rate>0.8"].ok') }) };
}
"#
    .replace("BASE", &srv.url(""));
    agree("jslib-jsonpath", &[], &script, 0, 29, 1);
}

#[test]
fn chai_expectations_as_checks_agree_with_k6() {
    // A describe/expect wrapper of our own over chai's browserify bundle, as k6chaijs is.
    let srv = TestServer::start();
    let script = r#"
import http from 'k6/http';
import { check, group } from 'k6';
import chai from '{JSLIB}/chai/4.3.4/chai.js';
const { expect } = chai;
chai.config.truncateThreshold = 0;
// A failing expectation's check is named after chai's message, so the messages are compared too.
function describe(name, fn) {
  group(name, () => {
    let label = name;
    try { fn(); } catch (e) { label = `${name}: ${e.name}: ${e.message}`; }
    check(null, { [label]: () => label === name });
  });
}
export const options = { iterations: 2, thresholds: { checks: ['rate==1'] } };
export default function () {
  describe('status and json', () => {
    const r = http.post('BASE/post', JSON.stringify({ id: 7, tags: ['a', 'b'] }), { headers: { 'Content-Type': 'application/json' } });
    expect(r.status, 'status').to.equal(200);
    expect(r.json('json')).to.deep.equal({ id: 7, tags: ['a', 'b'] });
    expect(r.json('json.tags')).to.have.lengthOf(2).and.include('b');
    expect(r.json()).to.have.property('method', 'POST');
  });
  describe('types and ranges', () => {
    expect('k6').to.be.a('string').with.lengthOf(2);
    expect(5).to.be.within(1, 10).and.above(4);
    expect(null).to.be.null;
    expect({ a: { b: 1 } }).to.nested.include({ 'a.b': 1 });
    expect(() => { throw new TypeError('bad'); }).to.throw(TypeError, 'bad');
  });
  describe('failing status', () => {
    const r = http.get('BASE/status/404');
    expect(r.status, 'status of /status/404').to.equal(200);
  });
  describe('failing deep equal', () => {
    expect({ a: [1, 2] }).to.deep.equal({ a: [1, 3] });
  });
  describe('failing property', () => {
    expect({ x: 1 }).to.have.property('y');
  });
}
export function handleSummary(data) {
  const groups = data.root_group.groups.map((g) => [g.name, g.checks.map((c) => [c.name, c.passes, c.fails])]);
  return { 'report.json': JSON.stringify({ groups, rate: data.metrics.checks.values.rate }) };
}
"#
    .replace("BASE", &srv.url(""));
    agree("jslib-chai", &[], &script, 99, 4, 6);
}
