//! Constructs k6 parses that Boa 0.22.0 did not, fixed by the patches in `vendor/` (see
//! vendor/README.md): each script runs under rk6 and, when k6 is installed, side by side
//! with k6 (exit code, checks, thresholds, request and iteration counts must agree).

use super::{assert_checks, run_file};
use crate::support::TestServer;
use crate::{count, metric, Dir};

/// Patch 1: `export default async (data) => { … }`, awaited once per iteration.
fn async_arrow_default_script(url: &str) -> String {
    format!(
        r#"import http from 'k6/http';
import {{ check }} from 'k6';

export const options = {{
  vus: 1,
  iterations: 3,
  thresholds: {{ iteration_duration: ['min>=20'], checks: ['rate==1'] }},
}};

const log = [];

export function setup() {{
  return {{ who: 'rk6' }};
}}

export default async (data) => {{
  log.push(`start ${{__ITER}}`);
  await new Promise((resolve) => setTimeout(resolve, 20));
  const res = await http.asyncRequest('GET', '{url}');
  log.push(`end ${{__ITER}}`);
  const expected = [];
  for (let i = 0; i <= __ITER; i++) expected.push(`start ${{i}}`, `end ${{i}}`);
  check(res, {{
    'setup data reaches the async arrow': () => data.who === 'rk6',
    'the request was awaited': (r) => r.status === 200,
    'each iteration ran to its end before the next began': () => log.join() === expected.join(),
  }});
}};
"#
    )
}

#[test]
fn export_default_async_arrow_is_awaited_each_iteration() {
    let srv = TestServer::start();
    let script = async_arrow_default_script(&srv.url("/get"));
    let dir = Dir::new("async-arrow-default");
    dir.write("main.js", &script);
    let (run, export) = run_file(&dir, "main.js", &[], &[]);
    assert_checks(&run, &export, 9.0);
    assert_eq!(count(&export, "iterations"), 3.0, "{export}");
    assert_eq!(count(&export, "http_reqs"), 3.0, "{export}");
    // The 20 ms timer is inside every iteration: the iteration waited for the promise.
    assert!(
        metric(&export, "iteration_duration")["min"]
            .as_f64()
            .is_some_and(|ms| ms >= 20.0),
        "{export}"
    );
    crate::parity::compare("async-arrow-default", &script);
}

/// Patch 2: a module that ends with `export { … }` and no semicolon, as jslib's httpx
/// does; here both an imported module and the entry script itself end that way.
#[test]
fn export_list_can_end_a_module_without_a_semicolon() {
    let dir = Dir::new("export-list-eof");
    dir.write(
        "lib.js",
        "const greet = (who) => `hello ${who}`;\nclass Counter {\n  constructor() { this.n = 0; }\n  add() { return ++this.n; }\n}\n\nexport {\n  greet,\n  Counter,\n}",
    );
    let main = r#"import { check } from 'k6';
import { greet, Counter } from './lib.js';

const options = { iterations: 2 };
const counter = new Counter();

function run() {
  check(null, {
    'named exports of a module ending in export {}': () => greet('k6') === 'hello k6',
    'a class exported in the list': () => counter.add() === __ITER + 1,
  });
}

export { options, run as default }"#;
    dir.write("main.js", main);
    let (run, export) = run_file(&dir, "main.js", &[], &[]);
    assert_checks(&run, &export, 4.0);
    assert_eq!(count(&export, "iterations"), 2.0, "{export}");
    // The entry script alone (no local import) against k6.
    crate::parity::compare(
        "export-list-eof",
        "import { check } from 'k6';\nconst options = { iterations: 2 };\nfunction run() { check(null, { 'default from the list': () => true }); }\nexport { options, run as default }",
    );
}

/// Patch 3: `async` used as an ordinary identifier where an expression starts.
const ASYNC_IDENTIFIER: &str = r#"import { check } from 'k6';
export const options = { iterations: 1 };
const half = async => async / 2;
export default function () {
  const async = 12;
  const third = async / 2 / 2;
  check(null, {
    'an arrow function parameter named async': () => half(10) === 5,
    'async divides instead of starting a regex': () => third === 3,
  });
}
"#;

#[test]
fn async_works_as_an_identifier() {
    let dir = Dir::new("async-identifier");
    dir.write("main.js", ASYNC_IDENTIFIER);
    let (run, export) = run_file(&dir, "main.js", &[], &[]);
    assert_checks(&run, &export, 2.0);
    crate::parity::compare("async-identifier", ASYNC_IDENTIFIER);
}
