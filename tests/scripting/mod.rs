//! Script ergonomics: TypeScript, `require()`, remote modules from a local cache,
//! `rk6 inspect`, `rk6 new`, `--console-output`, and guards against stack-overflowing scripts.

mod parser_gaps;

use serde_json::Value;

use crate::support::TestServer;
use crate::{assert_checks, count, rk6, run_file, Dir};

const TS_LIB: &str = r#"export interface Point<T> {
  x: T;
  y: T;
}

export enum Color {
  Red,
  Green = 5,
  Blue,
}

export function sum<T extends number>(p: Point<T>): number {
  return (p.x as number) + p.y;
}

export type Named = { name: string };
"#;

#[test]
fn typescript_scripts_and_modules_run_without_a_build_step() {
    let dir = Dir::new("ts-run");
    dir.write("lib/geo.ts", TS_LIB);
    dir.write(
        "main.ts",
        r#"import { check } from 'k6';
import { sum, Color, type Named, Point } from './lib/geo.ts';

export const options = { iterations: 2 };

abstract class Shape {
  constructor(protected readonly label: string) {}
  abstract area(): number;
}
class Square extends Shape {
  private side: number;
  constructor(side: number) { super('square'); this.side = side; }
  area(): number { return this.side * this.side; }
}

function first<T>(items: T[]): T | undefined {
  return items[0];
}

export default function (): void {
  const p: Point<number> = { x: 2, y: 3 };
  const raw: unknown = '{"name":"rk6"}';
  const named = JSON.parse(raw as string) as Named;
  const shape: Shape = new Square(4);
  check(null, {
    'generic function with annotations': () => sum(p) === 5,
    'enum values': () => Color.Red === 0 && Color.Blue === 6 && Color[5] === 'Green',
    'as casts': () => named.name === 'rk6',
    'classes with parameter properties': () => shape.area() === 16,
    'generic arrow': () => first<string>(['a', 'b']) === 'a',
    'non-null assertion': () => first([7])! === 7,
  });
}
"#,
    );
    let (run, export) = run_file(&dir, "main.ts", &[], &[]);
    assert_checks(&run, &export, 12.0);
    assert_eq!(count(&export, "iterations"), 2.0);
}

#[test]
fn typescript_syntax_errors_name_the_ts_line_and_column() {
    let dir = Dir::new("ts-syntax");
    dir.write(
        "main.ts",
        "import { helper } from './broken.ts';\nexport default function () { helper(); }\n",
    );
    // Line 4, column 21: the `;` where an expression is missing.
    dir.write(
        "broken.ts",
        "interface A {\n  a: string;\n}\nconst value: number = ;\nexport function helper(): void {}\n",
    );
    let (run, _) = run_file(&dir, "main.ts", &[], &[]);
    run.assert_code(107);
    assert!(
        run.stderr.contains("broken.ts:4:23:"),
        "stderr: {}",
        run.stderr
    );
    // TypeScript that oxc accepts and passes through, but Boa cannot parse (decorators): the
    // error Boa reports on the generated code is mapped back to the `.ts` position.
    dir.write(
        "decorated.ts",
        "interface A {\n  a: number;\n}\n\nclass C {\n  @dec m(): void {}\n}\nfunction dec(...a: unknown[]) {}\nexport default function () {}\n",
    );
    let (run, _) = run_file(&dir, "decorated.ts", &[], &[]);
    run.assert_code(107);
    assert!(
        run.stderr.contains("decorated.ts:6:3:"),
        "stderr: {}",
        run.stderr
    );
}

#[test]
fn typescript_exception_stacks_point_at_ts_lines() {
    let dir = Dir::new("ts-stack");
    dir.write(
        "fail.ts",
        r#"interface Options {
  reason: string;
  code: number;
}

type Reason = string;

export function explode(o: Options): never {
  const why: Reason = `${o.reason} (${o.code})`;
  throw new Error(why);
}
"#,
    );
    dir.write(
        "main.ts",
        r#"import { explode } from './fail.ts';

export const options = { iterations: 1 };

interface Unused {
  a: number;
}

export default function (): void {
  const reason: string = 'kaboom';
  explode({ reason, code: 7 } as { reason: string; code: number });
}
"#,
    );
    let (run, _) = run_file(&dir, "main.ts", &[], &[]);
    run.assert_code(0);
    assert!(run.stderr.contains("Error: kaboom (7)"), "{}", run.stderr);
    assert!(
        run.stderr.contains("fail.ts:10:"),
        "stack must name the .ts throw line: {}",
        run.stderr
    );
    assert!(
        run.stderr.contains("main.ts:11:"),
        "stack must name the .ts call line: {}",
        run.stderr
    );
}

#[test]
fn require_loads_builtin_modules_and_commonjs_files() {
    let dir = Dir::new("require");
    dir.write(
        "lib/helper.js",
        "exports.times = function (a, b) { return a * b; };\nexports.loads = (exports.loads || 0) + 1;\n",
    );
    dir.write(
        "lib/math.js",
        "const helper = require('./helper.js');\nmodule.exports = { double: (x) => helper.times(x, 2), file: typeof __filename };\n",
    );
    dir.write(
        "lib/esm.js",
        "export const kind = 'esm';\nexport default 3;\n",
    );
    dir.write(
        "main.js",
        r#"const http = require('k6/http');
const { check } = require('k6');
const math = require('./lib/math.js');
const again = require('./lib/math.js');
const helper = require('./lib/helper.js');
const esm = require('./lib/esm.js');

export const options = { iterations: 1 };

export default function () {
  let late = '';
  try { require('k6'); } catch (e) { late = String(e); }
  check(null, {
    'built-in module functions': () => typeof http.get === 'function' && typeof http.post === 'function' && !('default' in http),
    'module.exports of a file': () => math.double(21) === 42,
    'nested relative require': () => helper.times(3, 4) === 12,
    'modules are cached': () => again === math && helper.loads === 1,
    'no __filename, as in k6': () => math.file === 'undefined',
    'ES module files give their namespace': () => esm.kind === 'esm' && esm.default === 3,
    'only in the init context': () => late.includes('only available in the init stage'),
  });
}
"#,
    );
    let (run, export) = run_file(&dir, "main.js", &[], &[]);
    assert_checks(&run, &export, 7.0);
}

#[test]
fn require_of_a_missing_file_fails_the_init_context() {
    let dir = Dir::new("require-missing");
    dir.write(
        "main.js",
        "const x = require('./nope.js');\nexport default function () {}\n",
    );
    let (run, _) = run_file(&dir, "main.js", &[], &[]);
    run.assert_code(107);
    assert!(run.stderr.contains("nope.js"), "{}", run.stderr);
}

#[test]
fn remote_modules_come_from_the_module_cache() {
    let dir = Dir::new("remote");
    dir.write(
        "cache/jslib.k6.io/k6-utils/1.4.0/index.js",
        "import { pad } from './pad.js';\nexport function randomIntBetween(a, b) { return a + Math.floor(Math.random() * (b - a + 1)); }\nexport const label = pad('x');\n",
    );
    dir.write(
        "cache/jslib.k6.io/k6-utils/1.4.0/pad.js",
        "export function pad(s) { return '[' + s + ']'; }\n",
    );
    dir.write(
        "main.js",
        r#"import { check } from 'k6';
import { randomIntBetween, label } from 'https://jslib.k6.io/k6-utils/1.4.0/index.js';
export const options = { iterations: 1 };
export default function () {
  const n = randomIntBetween(3, 5);
  check(null, {
    'remote function works': () => n >= 3 && n <= 5,
    'relative import inside the remote module': () => label === '[x]',
  });
}
"#,
    );
    let cache = dir.path("cache");
    let env = [("RK6_MODULE_CACHE", cache.to_str().unwrap())];
    let (run, export) = run_file(&dir, "main.js", &[], &env);
    assert_checks(&run, &export, 2.0);

    // Not in the cache: downloaded (here from a port nothing listens on, so it fails with
    // the URL and the reason).
    let closed = crate::support::closed_addr();
    let url = format!("https://{}/not-cached/1.0.0/index.js", closed);
    dir.write(
        "missing.js",
        &format!("import x from '{url}';\nexport default function () {{}}\n"),
    );
    let (run, _) = run_file(&dir, "missing.js", &[], &env);
    run.assert_code(107);
    assert!(
        run.stderr.contains(&format!(
            "couldn't be retrieved from the resolved url \\\"{url}\\\""
        )) && run.stderr.contains("connection refused"),
        "{}",
        run.stderr
    );
}

#[test]
fn inspect_prints_the_options_in_k6_layout() {
    let dir = Dir::new("inspect");
    let script = dir.write(
        "script.js",
        r#"export const options = {
  vus: 2,
  duration: '3s',
  thresholds: { http_req_duration: ['p(95)<200'] },
  tags: { team: 'perf' },
};
export default function () {}
"#,
    );
    let run = rk6(&["inspect", script.to_str().unwrap()], &dir.0);
    run.assert_code(0);
    assert!(run.stdout.contains(r#""p(95)\u003c200""#), "{}", run.stdout);
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    let obj = json.as_object().unwrap();
    let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
    assert_eq!(
        &keys[..6],
        [
            "paused",
            "vus",
            "duration",
            "iterations",
            "stages",
            "scenarios"
        ]
    );
    assert_eq!(keys.last(), Some(&"discardResponseBodies"));
    assert_eq!(json["vus"], 2);
    assert_eq!(json["duration"], "3s");
    assert_eq!(json["iterations"], Value::Null);
    assert_eq!(json["tags"]["team"], "perf");
    assert_eq!(json["dns"]["ttl"], Value::Null);

    let run = rk6(
        &[
            "inspect",
            "--execution-requirements",
            script.to_str().unwrap(),
        ],
        &dir.0,
    );
    run.assert_code(0);
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    // 3 s of constant VUs plus the default 30 s graceful stop.
    assert_eq!(json["totalDuration"], "33s");
    assert_eq!(json["maxVUs"], 2);
    assert_eq!(json["scenarios"]["default"]["executor"], "constant-vus");
    assert_eq!(json["scenarios"]["default"]["vus"], 2);

    let broken = dir.write("broken.js", "export const options = {;\n");
    rk6(&["inspect", broken.to_str().unwrap()], &dir.0).assert_code(107);
}

#[test]
fn new_writes_a_runnable_starter_and_never_overwrites_silently() {
    let srv = TestServer::start();
    let dir = Dir::new("new");
    rk6(&["new"], &dir.0).assert_code(0);
    let written = std::fs::read_to_string(dir.path("script.js")).unwrap();
    assert!(written.contains("export default function"), "{written}");

    std::fs::write(dir.path("script.js"), "// mine\n").unwrap();
    let run = rk6(&["new"], &dir.0);
    run.assert_code(255);
    assert!(run.stderr.contains("--force"), "{}", run.stderr);
    assert_eq!(
        std::fs::read_to_string(dir.path("script.js")).unwrap(),
        "// mine\n"
    );
    rk6(&["new", "--force"], &dir.0).assert_code(0);
    assert_eq!(
        std::fs::read_to_string(dir.path("script.js")).unwrap(),
        written
    );

    rk6(&["new", "other.js"], &dir.0).assert_code(0);
    let target = srv.url("/get");
    let env = format!("TARGET={target}");
    let (run, export) = run_file(&dir, "other.js", &["-u", "1", "-i", "1", "-e", &env], &[]);
    assert_checks(&run, &export, 1.0);
}

#[test]
fn console_output_goes_to_a_file_and_verbose_shows_debug() {
    let dir = Dir::new("console");
    dir.write(
        "main.js",
        r#"export const options = { iterations: 1 };
export default function () {
  console.log('hello', 1);
  console.debug('dbg line');
  console.error('bad thing');
}
"#,
    );
    let out = dir.path("console.log");
    let (run, _) = run_file(
        &dir,
        "main.js",
        &["--console-output", out.to_str().unwrap()],
        &[],
    );
    run.assert_code(0);
    assert!(!run.stderr.contains("hello"), "{}", run.stderr);
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("level=info msg=\"hello 1\""), "{text}");
    assert!(text.contains("level=error msg=\"bad thing\""), "{text}");
    assert!(!text.contains("dbg line"), "{text}");

    // k6 appends to an existing file; -v adds debug lines.
    let (run, _) = run_file(
        &dir,
        "main.js",
        &["-v", "--console-output", out.to_str().unwrap()],
        &[],
    );
    run.assert_code(0);
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.matches("msg=\"hello 1\"").count(), 2, "{text}");
    assert!(text.contains("level=debug msg=\"dbg line\""), "{text}");

    let (run, _) = run_file(&dir, "main.js", &["-v"], &[]);
    assert!(
        run.stderr
            .contains("level=debug msg=\"dbg line\" source=console"),
        "{}",
        run.stderr
    );
    let (run, _) = run_file(&dir, "main.js", &[], &[]);
    assert!(!run.stderr.contains("dbg line"), "{}", run.stderr);
}

#[test]
fn deeply_nested_scripts_fail_cleanly_instead_of_overflowing() {
    let dir = Dir::new("deep");
    let n = 100_000;
    let cases = [
        (
            "parens.js",
            format!("let x = {}1{};", "(".repeat(n), ")".repeat(n)),
        ),
        (
            "arrays.js",
            format!("let x = {}{};", "[".repeat(n), "]".repeat(n)),
        ),
        (
            "functions.js",
            format!("{}{}", "function f() {".repeat(n / 10), "}".repeat(n / 10)),
        ),
        ("bangs.js", format!("let x = {}true;", "!".repeat(n))),
        (
            "types.ts",
            format!("let x: {}number{} = [];", "Array<".repeat(n), ">".repeat(n)),
        ),
    ];
    for (name, body) in &cases {
        dir.write(name, &format!("{body}\nexport default function () {{}}\n"));
        let (run, _) = run_file(&dir, name, &[], &[]);
        run.assert_code(107);
        assert!(
            run.stderr.contains(&format!("{name}:1:")) && run.stderr.contains("overflow the stack"),
            "{name}: {}",
            run.stderr
        );
    }
    // An imported module is checked too.
    dir.write(
        "deep_main.js",
        "import './parens.js';\nexport default function () {}\n",
    );
    let (run, _) = run_file(&dir, "deep_main.js", &[], &[]);
    run.assert_code(107);
}

#[test]
fn runaway_recursion_is_a_range_error_not_a_crash() {
    let dir = Dir::new("recursion");
    // Each way of recursing through a native uses native stack on every level.
    dir.write(
        "main.js",
        r#"import { check } from 'k6';
function down(n) { return down(n + 1) + 1; }
const ways = [
  down,
  function viaMap(n) { return [n].map((x) => viaMap(x + 1))[0]; },
  function viaReviver(n) { return JSON.parse('{"a":1}', (k, v) => (k === 'a' ? viaReviver(n + 1) : v)); },
  function viaSort(n) { return [3, 1, 2].sort(() => viaSort(n + 1)); },
  function viaCheck(n) { return check(null, { deeper: () => viaCheck(n + 1) }); },
  function viaToString(n) { return `${{ toString() { return viaToString(n + 1); } }}`; },
];
export const options = { iterations: ways.length };
export default function () {
  ways[__ITER](0);
}
"#,
    );
    let (run, export) = run_file(&dir, "main.js", &[], &[]);
    run.assert_code(0);
    assert_eq!(
        run.stderr
            .matches("RangeError: Maximum call stack size exceeded")
            .count(),
        6,
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("at down (file://"), "{}", run.stderr);
    assert!(run.stderr.contains("main.js:2:"), "{}", run.stderr);
    assert_eq!(count(&export, "iterations"), 6.0);
}
