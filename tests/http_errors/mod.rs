//! Every transport failure k6 classifies, through the rk6 binary: `status`, `error_code`
//! and `error` on the response and on the samples' tags, exactly as k6 1.1.0 gives them
//! (each value below was read off a real k6 run against these same servers; the parity
//! module re-checks them side by side). Also: none of them stalls a VU, and each injected
//! delay lands in the phase k6 puts it in.

pub(crate) mod servers;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::{rk6_env, Dir, Run};
use servers::Servers;

/// One request per failure; each logs `CASE name|status|error_code|error`.
pub(crate) const FAULTS_SCRIPT: &str = r#"
import http from 'k6/http';
const P = JSON.parse(__ENV.PORTS);
const u = (name, path) => `http://127.0.0.1:${P[name]}${path || '/'}`;
// A label over 63 bytes fails in the resolver library itself: no query leaves the machine.
const UNRESOLVABLE = 'a'.repeat(64) + '.invalid';
const short = { timeout: '300ms' };
const PHASES = ['blocked', 'looking_up', 'connecting', 'tls_handshaking', 'sending', 'waiting', 'receiving'];
function report(name, r) {
  console.log(`CASE ${name}|${r.status}|${r.error_code}|${JSON.stringify(r.body)}|${r.error}`);
  console.log(`TIMED ${name} ${PHASES.filter((p) => r.timings[p] > 0).join(',')}`);
}
export const options = { iterations: 1 };
export default function () {
  report('refused', http.get(u('refused')));
  report('reset_mid', http.get(u('reset_mid')));
  report('eof_mid', http.get(u('eof_mid')));
  report('silent', http.get(u('silent'), short));
  report('stalled_body', http.get(u('stalled_body'), short));
  report('deaf', http.get(u('deaf'), short));
  report('garbage', http.get(u('garbage')));
  report('bad_chunk', http.get(u('bad_chunk')));
  report('bad_first_chunk', http.get(u('bad_first_chunk')));
  report('eof_after_head', http.get(u('eof_after_head')));
  report('hangup', http.get(u('hangup')));
  report('reset_at_once', http.get(u('reset_at_once')));
  report('ka_close_1', http.get(u('ka_close')));
  report('ka_close_2', http.get(u('ka_close')));
  report('ka_reset_1', http.get(u('ka_reset')));
  report('ka_reset_2', http.get(u('ka_reset')));
  http.get(u('ka_close_put'));
  report('ka_close_put', http.put(u('ka_close_put'), 'x'));
  http.get(u('ka_reset_delete'));
  report('ka_reset_delete', http.del(u('ka_reset_delete')));
  report('redirect_loop', http.get(u('redirect_loop')));
  report('redirect_param', http.get(u('redirect_loop'), { redirects: 2 }));
  report('tls_self_signed', http.get(`https://127.0.0.1:${P.tls_self_signed}/`));
  report('tls_self_signed_ca', http.get(`https://127.0.0.1:${P.tls_self_signed_ca}/`));
  report('not_tls', http.get(`https://127.0.0.1:${P.not_tls}/`));
  report('unknown_host', http.get(`http://${UNRESOLVABLE}/`));
}
"#;

/// (case, status, error_code, body as JSON, error) as k6 1.1.0 reports them.
const EXPECTED: &[(&str, u16, u32, &str, &str)] = &[
    ("refused", 0, 1212, "null", "dial: connection refused"),
    // A failure mid-body keeps the bytes that arrived.
    (
        "reset_mid",
        0,
        1220,
        "\"partial\"",
        "read: connection reset by peer",
    ),
    ("eof_mid", 0, 1000, "\"partial\"", "unexpected EOF"),
    ("silent", 0, 1050, "null", "request timeout"),
    ("stalled_body", 0, 1050, "\"partial\"", "request timeout"),
    ("deaf", 0, 1050, "null", "request timeout"),
    (
        "garbage",
        0,
        1000,
        "null",
        "malformed HTTP status code \"is\"",
    ),
    // A chunk-size line that is not hex after one good chunk: its bytes and Go's text.
    (
        "bad_chunk",
        0,
        1000,
        "\"hello\"",
        "invalid byte in chunk length",
    ),
    // The head came, no body byte: k6's body is "" (null only without a response head).
    (
        "bad_first_chunk",
        0,
        1000,
        "\"\"",
        "invalid byte in chunk length",
    ),
    ("eof_after_head", 0, 1000, "\"\"", "unexpected EOF"),
    ("hangup", 0, 1000, "null", "EOF"),
    (
        "reset_at_once",
        0,
        1220,
        "null",
        "read: connection reset by peer",
    ),
    ("ka_close_1", 200, 0, "\"first\"", ""),
    // The GET is replayed on a new connection, invisibly.
    ("ka_close_2", 200, 0, "\"second\"", ""),
    ("ka_reset_1", 200, 0, "\"first\"", ""),
    ("ka_reset_2", 200, 0, "\"second\"", ""),
    // PUT and DELETE are not replayed (Go's rule).
    ("ka_close_put", 0, 1000, "null", "EOF"),
    (
        "ka_reset_delete",
        0,
        1220,
        "null",
        "read: connection reset by peer",
    ),
    // Too many redirects is not an error: the last 3xx comes back.
    ("redirect_loop", 302, 0, "\"\"", ""),
    ("redirect_param", 302, 0, "\"\"", ""),
    (
        "tls_self_signed",
        0,
        1310,
        "null",
        "x509: unknown authority",
    ),
    (
        "tls_self_signed_ca",
        0,
        1310,
        "null",
        "x509: unknown authority",
    ),
    (
        "not_tls",
        0,
        1301,
        "null",
        "tls: first record does not look like a TLS handshake",
    ),
    ("unknown_host", 0, 1101, "null", "lookup: no such host"),
];

/// The `CASE` lines of a run: name → (status, error_code, body as JSON, error).
pub(crate) fn cases(stderr: &str) -> BTreeMap<String, (u16, u32, String, String)> {
    stderr
        .lines()
        .filter_map(|l| {
            let rest = l.split("msg=\"CASE ").nth(1)?;
            let body = rest
                .rsplit_once("\" source=console")?
                .0
                .replace("\\\"", "\"");
            let mut f = body.splitn(5, '|');
            let name = f.next()?.to_string();
            let status = f.next()?.parse().ok()?;
            let code = f.next()?.parse().ok()?;
            let body = f.next()?.to_string();
            Some((name, (status, code, body, f.next()?.to_string())))
        })
        .collect()
}

/// What k6 logs when a request stops at the default redirect limit.
const REDIRECT_WARNING: &str = "level=warning msg=\"Stopped after 11 redirects and returned the redirection; pass { redirects: n } in request params or set global maxRedirects to silence this\"";

/// The redirect-limit warnings of a run, without timestamp and URL.
pub(crate) fn redirect_warnings(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| l.contains("Stopped after"))
        .filter_map(|l| Some(l.split_once(' ')?.1.rsplit_once(" url=")?.0.to_string()))
        .collect()
}

/// The `TIMED` lines of a run: case → the phases that were not zero.
pub(crate) fn timed(stderr: &str) -> BTreeMap<String, String> {
    stderr
        .lines()
        .filter_map(|l| {
            let rest = l.split("msg=\"TIMED ").nth(1)?;
            let rest = rest.rsplit_once("\" source=console")?.0;
            let (name, phases) = rest.split_once(' ').unwrap_or((rest, ""));
            Some((name.to_string(), phases.to_string()))
        })
        .collect()
}

/// (error_code, error) tag pairs of the `http_reqs` samples in a JSON output, sorted.
pub(crate) fn error_tags(json_lines: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = json_lines
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "Point" && v["metric"] == "http_reqs")
        .filter_map(|v| {
            let tags = &v["data"]["tags"];
            let code = tags["error_code"].as_str()?.to_string();
            Some((code, tags["error"].as_str().unwrap_or("<none>").to_string()))
        })
        .collect();
    out.sort();
    out
}

/// Tags that k6 leaves off the samples of a request that got no response.
pub(crate) fn tags_of_failed(json_lines: &str) -> Vec<String> {
    let mut keys: Vec<String> = json_lines
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "Point" && v["metric"] == "http_reqs")
        .filter(|v| v["data"]["tags"]["status"] == "0")
        .flat_map(|v| {
            v["data"]["tags"]
                .as_object()
                .map(|o| o.keys().cloned().collect::<Vec<_>>())
                .unwrap_or_default()
        })
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

fn run_with_ports(dir: &Dir, script: &str, ports: &str, extra: &[&str]) -> Run {
    let path = dir.write("script.js", script);
    let mut args = vec!["run", "-q", "--address", ""];
    args.extend_from_slice(extra);
    args.push(path.to_str().unwrap());
    rk6_env(&args, &dir.0, &[("PORTS", ports)])
}

#[test]
fn every_failure_has_k6s_code_and_message() {
    let dir = Dir::new("http-errors");
    let srv = Servers::faults();
    let out = dir.path("out.json");
    let out_arg = format!("json={}", out.display());
    let run = run_with_ports(&dir, FAULTS_SCRIPT, &srv.ports_json(), &["--out", &out_arg]);
    run.assert_code(0);
    let got = cases(&run.stderr);
    for (name, status, code, body, error) in EXPECTED {
        assert_eq!(
            got.get(*name),
            Some(&(*status, *code, body.to_string(), error.to_string())),
            "case {name}\n{}",
            run.stderr
        );
    }
    assert_eq!(got.len(), EXPECTED.len(), "{got:?}");
    // Only the request relying on the default limit gets k6's warning.
    let url = format!("url=\"http://127.0.0.1:{}/\"", srv.ports["redirect_loop"]);
    assert_eq!(
        redirect_warnings(&run.stderr),
        vec![REDIRECT_WARNING.to_string()]
    );
    assert!(run.stderr.contains(&url), "{}", run.stderr);

    // The samples carry the same code and message as tags, once per failed request.
    let json = std::fs::read_to_string(&out).unwrap();
    let mut want: Vec<(String, String)> = EXPECTED
        .iter()
        .filter(|e| e.2 != 0)
        .map(|e| (e.2.to_string(), e.4.to_string()))
        .collect();
    want.sort();
    assert_eq!(error_tags(&json), want);
    // A request without a response has no protocol, so no `proto` tag at all.
    let keys = tags_of_failed(&json);
    assert!(!keys.contains(&"proto".to_string()), "{keys:?}");
    assert!(keys.contains(&"error_code".to_string()), "{keys:?}");
}

#[test]
fn failures_do_not_stall_or_crash_vus() {
    let dir = Dir::new("http-errors-load");
    let srv = Servers::faults();
    let script = r#"
import http from 'k6/http';
import { check } from 'k6';
const P = JSON.parse(__ENV.PORTS);
const u = (name) => `http://127.0.0.1:${P[name]}/`;
export const options = { vus: 3, iterations: 9 };
export default function () {
  const short = { timeout: '200ms' };
  const codes = [
    http.get(u('refused')), http.get(u('reset_mid')), http.get(u('eof_mid')),
    http.get(u('silent'), short), http.get(u('stalled_body'), short), http.get(u('deaf'), short),
    http.get(u('garbage')), http.get(u('hangup')), http.get(u('reset_at_once')),
    http.get(`https://127.0.0.1:${P.not_tls}/`),
  ].map((r) => r.error_code);
  check(codes, { 'all failed with a code': (c) => c.every((x) => x > 0) });
}
"#;
    let started = Instant::now();
    let run = run_with_ports(&dir, script, &srv.ports_json(), &[]);
    run.assert_code(0);
    assert!(
        run.stdout.contains("iterations") && run.stdout.contains(": 9 "),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("100.00% 9 out of 9"), "{}", run.stdout);
    // Three 200 ms timeouts per iteration, three iterations per VU: ~2 s of waiting.
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

/// One request per delayed phase (plus a reuse of the TLS connection); each logs
/// `PHASES name {timings}`.
pub(crate) const DELAYS_SCRIPT: &str = r#"
import http from 'k6/http';
const P = JSON.parse(__ENV.PORTS);
const u = (name) => `http://127.0.0.1:${P[name]}/`;
export const options = { iterations: 1, insecureSkipTLSVerify: true };
function report(name, r) {
  if (r.error) console.log(`FAILED ${name} ${r.error}`);
  console.log(`PHASES ${name} ${JSON.stringify(r.timings)}`);
}
export default function () {
  report('waiting', http.get(u('waiting')));
  report('receiving', http.get(u('receiving')));
  report('sending', http.post(u('sending'), 'a'.repeat(8 << 20)));
  report('tls', http.get(`https://127.0.0.1:${P.tls}/`));
  report('tls_reused', http.get(`https://127.0.0.1:${P.tls}/`));
  http.get(u('connect_arm'));
  report('connect', http.get(u('connect')));
}
"#;

/// The injected delay of [`DELAYS_SCRIPT`]'s servers.
pub(crate) const DELAY: Duration = Duration::from_millis(200);

/// For each case, the timing fields that reached 90% of the injected delay.
pub(crate) fn phases_over(stderr: &str) -> BTreeMap<String, Vec<String>> {
    stderr
        .lines()
        .filter_map(|l| {
            let rest = l.split("msg=\"PHASES ").nth(1)?;
            let (name, json) = rest.split_once(' ')?;
            let json = json
                .rsplit_once("\" source=console")?
                .0
                .replace("\\\"", "\"");
            let t: Value = serde_json::from_str(&json).ok()?;
            let over = t
                .as_object()?
                .iter()
                .filter(|(_, v)| v.as_f64().unwrap_or(0.0) >= DELAY.as_secs_f64() * 900.0)
                .map(|(k, _)| k.clone())
                .collect();
            Some((name.to_string(), over))
        })
        .collect()
}

/// Where each delay must land (k6's phase model).
pub(crate) fn expected_phases() -> BTreeMap<String, Vec<String>> {
    [
        ("waiting", &["duration", "waiting"][..]),
        ("receiving", &["duration", "receiving"]),
        ("sending", &["duration", "sending"]),
        ("tls", &["blocked", "tls_handshaking"]),
        ("tls_reused", &[]),
        ("connect", &["blocked", "connecting"]),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.iter().map(|s| s.to_string()).collect()))
    .collect()
}

#[test]
fn each_delay_lands_in_its_phase() {
    let dir = Dir::new("http-delays");
    let srv = Servers::delays(DELAY);
    let run = run_with_ports(&dir, DELAYS_SCRIPT, &srv.ports_json(), &[]);
    run.assert_code(0);
    assert!(!run.stderr.contains("FAILED"), "{}", run.stderr);
    assert_eq!(
        phases_over(&run.stderr),
        expected_phases(),
        "{}",
        run.stderr
    );
    // duration is exactly sending + waiting + receiving on every response.
    for l in run.stderr.lines().filter(|l| l.contains("msg=\"PHASES ")) {
        let json = l.split_once('{').unwrap().1.rsplit_once('}').unwrap().0;
        let t: Value =
            serde_json::from_str(&format!("{{{}}}", json.replace("\\\"", "\""))).unwrap();
        let f = |k: &str| t[k].as_f64().unwrap();
        let sum = f("sending") + f("waiting") + f("receiving");
        assert!((f("duration") - sum).abs() < 1e-6, "{l}");
    }
}

#[test]
fn an_explicit_max_redirects_silences_the_redirect_warning() {
    let dir = Dir::new("http-redirect-warning");
    let srv = Servers::faults();
    let script = |options: &str| {
        format!(
            "import http from 'k6/http';\nexport const options = {{ {options} }};\n\
             export default function () {{ http.get('http://127.0.0.1:{}/'); }}\n",
            srv.ports["redirect_loop"]
        )
    };
    let quiet = run_with_ports(&dir, &script("maxRedirects: 10"), "{}", &[]);
    quiet.assert_code(0);
    assert!(
        redirect_warnings(&quiet.stderr).is_empty(),
        "{}",
        quiet.stderr
    );
    let quiet = run_with_ports(&dir, &script(""), "{}", &["--max-redirects", "3"]);
    quiet.assert_code(0);
    assert!(
        redirect_warnings(&quiet.stderr).is_empty(),
        "{}",
        quiet.stderr
    );
    let warned = run_with_ports(&dir, &script(""), "{}", &[]);
    assert_eq!(
        redirect_warnings(&warned.stderr).len(),
        1,
        "{}",
        warned.stderr
    );
}
