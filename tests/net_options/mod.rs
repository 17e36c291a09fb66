//! k6's network options end to end: `hosts`, `blockHostnames`, `blacklistIPs`, `dns`,
//! `localIPs` and `rps`. No test resolves anything but `localhost` or a `hosts` name.

use std::net::ToSocketAddrs;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::recorder::{Recorder, Reply};
use crate::support::TestServer;
use crate::{count, metric, rk6, rk6_env, run_export, Dir};

/// A server on `bind` (port 0) answering every request with the client's IP as the body,
/// so a test can see which source address (`localIPs`) or family (`dns.policy`) was used;
/// `None` if that address family is unavailable.
fn peer_echo(bind: &str) -> Option<Recorder> {
    Recorder::bind(bind, |req| {
        Reply::new(200, "text/plain", req.peer.ip().to_string())
    })
}

/// Runs a script whose checks must all pass; returns the export.
fn run_checked(dir: &Dir, script: &str, extra: &[&str]) -> Value {
    let (run, export) = run_export(dir, script, extra);
    run.assert_code(0);
    assert_eq!(
        metric(&export, "checks")["fails"].as_f64(),
        Some(0.0),
        "failed checks\n{}\n{}",
        run.stdout,
        run.stderr
    );
    assert!(metric(&export, "checks")["passes"].as_f64() > Some(0.0));
    export
}

#[test]
fn hosts_overrides_exact_wildcard_and_port_forms() {
    let srv = TestServer::start();
    let port = srv.addr.port();
    let dir = Dir::new("hosts");
    let script = format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
export const options = {{
  iterations: 1,
  hosts: {{
    'myapp.test': '127.0.0.1',
    '*.wild.test': '127.0.0.1:{port}',
    'port.test:80': '127.0.0.1:{port}',
    'named.test': 'localhost:{port}',
    'port.test': '127.0.0.2',
    '127.0.0.3': '127.0.0.1',
  }},
}};
export default function () {{
  const r = http.get('http://myapp.test:{port}/headers');
  check(r, {{
    'exact name': (r) => r.status === 200 && r.remote_ip === '127.0.0.1' && r.remote_port === {port},
    'Host header keeps the name': (r) => JSON.stringify(r.json('headers.host')).includes('myapp.test:{port}'),
  }});
  check(http.get('http://MyApp.TEST:{port}/get'), {{ 'names are case-insensitive': (r) => r.status === 200 }});
  check(http.get('http://a.b.wild.test:1/get'), {{ 'wildcard with port': (r) => r.status === 200 && r.remote_port === {port} }});
  check(http.get('http://port.test/get'), {{ 'key with the default port': (r) => r.status === 200 }});
  check(http.get('http://named.test:9/get'), {{ 'value is a name': (r) => r.status === 200 }});
  check(http.get('http://127.0.0.3:{port}/get'), {{
    'ipv4 literal key': (r) => r.status === 200 && r.remote_ip === '127.0.0.1' && r.timings.looking_up === 0,
  }});
  const other = http.get('http://port.test:{port}/get', {{ timeout: '5s' }});
  check(other, {{ 'other ports use the key without one': (r) => r.error_code === 1212 }});
}}
"#
    );
    let export = run_checked(&dir, &script, &[]);
    assert_eq!(count(&export, "http_reqs"), 7.0);
}

#[test]
fn blocked_hostnames_and_blacklisted_ips_fail_with_k6_codes() {
    let srv = TestServer::start();
    let port = srv.addr.port();
    let dir = Dir::new("block");
    // Blocked names are mapped too: blocking must win before any override or lookup.
    let script = format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
export const options = {{
  iterations: 1,
  hosts: {{ 'x.blocked.test': '127.0.0.1', 'exact.test': '127.0.0.1', 'far.test': '127.0.0.2', 'ok.test': '127.0.0.1' }},
  blockHostnames: ['*.blocked.test', 'EXACT.test'],
  blacklistIPs: ['127.0.0.2/32', '::1/128'],
}};
export default function () {{
  const bad = (code, msg) => (r) => r.status === 0 && r.error_code === code && r.error === msg;
  check(http.get('http://x.blocked.test:{port}/get'), {{ 'wildcard block': bad(1111, 'hostname is blocked') }});
  check(http.get('http://exact.TEST:{port}/get'), {{ 'exact block': bad(1111, 'hostname is blocked') }});
  check(http.get('http://far.test:{port}/get'), {{ 'mapped ip blacklisted': bad(1110, 'ip is blacklisted') }});
  check(http.get('http://127.0.0.2:{port}/get'), {{ 'literal ip blacklisted': bad(1110, 'ip is blacklisted') }});
  check(http.get('http://[::1]:{port}/get'), {{ 'v6 blacklisted': bad(1110, 'ip is blacklisted') }});
  check(http.get('http://ok.test:{port}/get'), {{ 'others pass': (r) => r.status === 200 }});
  check(http.get('http://127.0.0.1:{port}/get'), {{ 'ips are not hostnames': (r) => r.status === 200 }});
}}
"#
    );
    let export = run_checked(&dir, &script, &["--summary-trend-stats", "count"]);
    assert_eq!(count(&export, "http_reqs"), 7.0);
    // The same rules from the flags and from the environment.
    let script = format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
export const options = {{ iterations: 1, hosts: {{ 'a.test': '127.0.0.1', 'b.test': '127.0.0.1' }} }};
export default function () {{
  check(http.get('http://a.test:{port}/get'), {{ 'flag block': (r) => r.error_code === 1111 }});
  check(http.get('http://b.test:{port}/get'), {{ 'env blacklist': (r) => r.error_code === 1110 }});
}}
"#
    );
    let path = dir.write("flags.js", &script);
    let run = rk6_env(
        &[
            "run",
            "-q",
            "--block-hostnames",
            "a.test",
            path.to_str().unwrap(),
        ],
        &dir.0,
        &[("K6_BLACKLIST_IPS", "10.0.0.0/8,127.0.0.0/8")],
    );
    run.assert_code(0);
    assert!(run.stdout.contains("100.00% 2 out of 2"), "{}", run.stdout);
}

/// Flags, environment, script options, expected exit code and message.
type Case<'a> = (
    Vec<&'a str>,
    Vec<(&'a str, &'a str)>,
    Option<String>,
    i32,
    &'a str,
);

#[test]
fn invalid_network_options_are_rejected_like_k6() {
    let dir = Dir::new("badnet");
    let empty = dir.write("t.js", "export default function () {}");
    let script = |opts: &str| {
        dir.write(
            "o.js",
            &format!("export const options = {{ iterations: 1, {opts} }};\nexport default function () {{}}"),
        )
    };
    let cases: Vec<Case> = vec![
        (
            vec!["--dns", "select=foo"],
            vec![],
            None,
            104,
            "foo does not belong to DNSSelect values",
        ),
        (
            vec!["--dns", "foo=1"],
            vec![],
            None,
            104,
            "unknown DNS configuration field: foo",
        ),
        (
            vec![],
            vec![("K6_DNS", "policy=bar")],
            None,
            104,
            "bar does not belong to DNSPolicy values",
        ),
        (
            vec!["--dns", "ttl=abc"],
            vec![],
            None,
            255,
            "invalid DNS TTL: abc",
        ),
        (
            vec![],
            vec![],
            Some("dns: { ttl: '-1s' }".into()),
            255,
            "invalid DNS TTL: -1s",
        ),
        (
            vec![],
            vec![],
            Some("dns: { policy: 'xx' }".into()),
            104,
            "xx does not belong to DNSPolicy values",
        ),
        (
            vec![],
            vec![],
            Some("hosts: { 'a*.test': '127.0.0.1' }".into()),
            104,
            "invalid host pattern 'a*.test'",
        ),
        (
            vec![],
            vec![],
            Some("blockHostnames: ['a*b']".into()),
            104,
            "invalid hostname pattern 'a*b'",
        ),
        (
            vec![],
            vec![],
            Some("blacklistIPs: ['1.2.3.4']".into()),
            104,
            "invalid CIDR address: 1.2.3.4",
        ),
        (
            vec!["--local-ips", "bogus"],
            vec![],
            None,
            255,
            "bogus is not a valid IP, IP range or CIDR",
        ),
        (vec![], vec![("K6_RPS", "abc")], None, 104, "K6_RPS"),
    ];
    for (flags, env, opts, code, msg) in cases {
        let path = match &opts {
            Some(o) => script(o),
            None => empty.clone(),
        };
        let mut args = vec!["run", "-q"];
        args.extend(flags.iter().copied());
        args.push(path.to_str().unwrap());
        let run = rk6_env(&args, &dir.0, &env);
        assert_eq!(run.code, code, "{flags:?} {env:?} {opts:?}: {}", run.stderr);
        assert!(
            run.stderr.contains(msg),
            "{flags:?} {env:?} {opts:?}: {}",
            run.stderr
        );
    }
    // Valid forms run.
    let ok = script("dns: { ttl: 'inf', select: 'roundRobin', policy: 'any' }, rps: -1");
    let run = rk6(
        &[
            "run",
            "-q",
            "--dns",
            "ttl=0,select=first",
            ok.to_str().unwrap(),
        ],
        &dir.0,
    );
    run.assert_code(0);
}

#[test]
fn dns_policy_picks_the_address_family() {
    let v4 = peer_echo("127.0.0.1:0").unwrap();
    let dir = Dir::new("policy");
    let run_with = |dns: &str, port: u16| {
        let script = format!(
            r#"
import http from 'k6/http';
export const options = {{ iterations: 1 }};
export default function () {{
  const r = http.get('http://localhost:{port}/');
  console.log(`result=${{r.status}}|${{r.body}}|${{r.error_code}}|${{r.error}}`);
}}
"#
        );
        let path = dir.write("p.js", &script);
        let run = rk6(&["run", "-q", "--dns", dns, path.to_str().unwrap()], &dir.0);
        run.assert_code(0);
        let line = run
            .stderr
            .lines()
            .find(|l| l.contains("result="))
            .unwrap()
            .to_string();
        line.split("result=")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        run_with("policy=onlyIPv4,select=first", v4.addr.port()),
        "200|127.0.0.1|0|"
    );
    assert_eq!(
        run_with("ttl=0,policy=preferIPv4", v4.addr.port()),
        "200|127.0.0.1|0|"
    );
    let Some(v6) = peer_echo("[::1]:0") else {
        println!("note: IPv6 loopback unavailable, skipping the onlyIPv6 check");
        return;
    };
    let localhost_has_v6 = ("localhost", 80)
        .to_socket_addrs()
        .is_ok_and(|mut a| a.any(|a| a.is_ipv6()));
    let got = run_with("policy=onlyIPv6", v6.addr.port());
    if localhost_has_v6 {
        assert_eq!(got, "200|::1|0|");
        assert_eq!(run_with("policy=preferIPv6", v6.addr.port()), "200|::1|0|");
    } else {
        // As k6 reports a name with no address of the required family.
        assert_eq!(got, "0|null|1000|lookup localhost: no such host");
        // preferIPv6 falls back to IPv4.
        assert_eq!(
            run_with("policy=preferIPv6", v4.addr.port()),
            "200|127.0.0.1|0|"
        );
    }
}

#[test]
fn local_ips_bind_each_vu_to_its_address() {
    let srv = peer_echo("127.0.0.1:0").unwrap();
    let dir = Dir::new("localips");
    let script = format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
export const options = {{
  scenarios: {{ s: {{ executor: 'per-vu-iterations', vus: 3, iterations: 2 }} }},
}};
const want = ['127.0.0.2', '127.0.0.3'];
export default function () {{
  const r = http.get('http://127.0.0.1:{port}/', {{ timeout: '5s' }});
  check(r, {{ 'vu source ip': (r) => r.body === want[(__VU - 1) % 2] }});
}}
"#,
        port = srv.addr.port()
    );
    let export = run_checked(&dir, &script, &["--local-ips", "127.0.0.2-127.0.0.3"]);
    assert_eq!(metric(&export, "checks")["passes"], 6);
    // The environment form, and a CIDR covering its whole block.
    let path = dir.write(
        "env.js",
        &script.replace(
            "want = ['127.0.0.2', '127.0.0.3']",
            "want = ['127.0.0.4', '127.0.0.5']",
        ),
    );
    let run = rk6_env(
        &["run", "-q", path.to_str().unwrap()],
        &dir.0,
        &[("K6_LOCAL_IPS", "127.0.0.5/31")],
    );
    run.assert_code(0);
    assert!(run.stdout.contains("100.00% 6 out of 6"), "{}", run.stdout);
    // In a script k6 ignores it, with its unknown-field warning.
    let ignored = format!(
        r#"
import http from 'k6/http';
import {{ check }} from 'k6';
export const options = {{ iterations: 1, localIPs: '127.0.0.9' }};
export default function () {{
  check(http.get('http://127.0.0.1:{port}/'), {{ 'os picks the source': (r) => r.body === '127.0.0.1' }});
}}
"#,
        port = srv.addr.port()
    );
    let path = dir.write("ignored.js", &ignored);
    let run = rk6(&["run", "-q", path.to_str().unwrap()], &dir.0);
    run.assert_code(0);
    assert!(
        run.stderr.contains("json: unknown field \\\"localIPs\\\""),
        "{}",
        run.stderr
    );
    assert!(run.stdout.contains("100.00% 1 out of 1"), "{}", run.stdout);
}

#[test]
fn rps_limits_all_vus_together() {
    let srv = TestServer::start();
    let dir = Dir::new("rps");
    let script = format!(
        r#"
import http from 'k6/http';
export const options = {{ vus: 4, duration: '1s', rps: 20 }};
export default function () {{ http.get('{}'); }}
"#,
        srv.url("/get")
    );
    let (run, export) = run_export(&dir, &script, &[]);
    run.assert_code(0);
    let reqs = count(&export, "http_reqs");
    // One request at once, then one every 50 ms: about 20 in the second, never hundreds.
    assert!((5.0..=30.0).contains(&reqs), "http_reqs {reqs}");

    // A fixed number of requests needs at least (n - 1) intervals, whoever sends them.
    let script = format!(
        r#"
import http from 'k6/http';
export const options = {{ vus: 5, iterations: 10 }};
export default function () {{ http.get('{}'); }}
"#,
        srv.url("/get")
    );
    let path = dir.write("n.js", &script);
    let t0 = Instant::now();
    let run = rk6(
        &["run", "-q", "--rps", "20", path.to_str().unwrap()],
        &dir.0,
    );
    let took = t0.elapsed();
    run.assert_code(0);
    assert!(
        took >= Duration::from_millis(440),
        "10 requests at 20/s took {took:?}"
    );
}
