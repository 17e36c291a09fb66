//! How files become modules, as in k6 1.1.0: CommonJS files (`exports`, `module.exports`,
//! UMD and bundler wrappers, top-level `return`) imported with `import`, the entry script as
//! CommonJS, one instance per file shared by `import` and `require()`, cycles, cached
//! failures, k6's errors; and remote modules fetched over HTTPS once per test.
//! The fixtures are small files written here; `docs/scripting.md` has the rules.

mod remote;
pub(crate) mod server;

use crate::{assert_checks, rk6_env, run_file, Dir, Run};

/// CommonJS files of every shape k6 meets on jslib.k6.io, written by us.
pub(crate) const CJS_FIXTURES: &[(&str, &str)] = &[
    (
        "lib/plain.js",
        "exports.a = 1;\nexports.b = function () { return 2; };\nObject.defineProperty(exports, 'hidden', { value: 5, enumerable: false });\n",
    ),
    (
        "lib/fn.js",
        "module.exports = function () { return 'fn'; };\nmodule.exports.extra = 3;\n",
    ),
    // webpack's CommonJS output: `__esModule` defined non-enumerably, no `default`.
    (
        "lib/webpack.js",
        "(() => {\n  'use strict';\n  var __webpack_exports__ = {};\n  Object.defineProperty(__webpack_exports__, '__esModule', { value: true });\n  __webpack_exports__.helper = function () { return 'w'; };\n  var __webpack_export_target__ = exports;\n  for (var i in __webpack_exports__) __webpack_export_target__[i] = __webpack_exports__[i];\n  if (__webpack_exports__.__esModule) Object.defineProperty(__webpack_export_target__, '__esModule', { value: true });\n})();\n",
    ),
    // Babel's: `exports.default` is the default import; `__esModule` is ignored.
    (
        "lib/babel.js",
        "Object.defineProperty(exports, '__esModule', { value: true });\nexports.default = function () { return 'dflt'; };\nexports.named = 'n';\n",
    ),
    // The classic UMD header: CommonJS branch (module and exports are objects).
    (
        "lib/umd.js",
        "(function (root, factory) {\n  if (typeof define === 'function' && define.amd) { define([], factory); }\n  else if (typeof module === 'object' && module.exports) { module.exports = factory(); module.exports.branch = 'commonjs'; }\n  else { root.Umd = factory(); }\n}(typeof self !== 'undefined' ? self : this, function () { return { v: 1 }; }));\n",
    ),
    // A browser-global script: `this` is `exports`.
    ("lib/global.js", "this.Foo = 1;\n"),
    (
        "lib/ret.js",
        "exports.a = 1;\nif (exports.a) { return; }\nexports.b = 2;\n",
    ),
    (
        "lib/env.js",
        "exports.env = {\n  thisIsExports: this === exports,\n  moduleKeys: Object.keys(module).join(),\n  args: arguments.length,\n  filename: typeof __filename,\n  strict: (function () { return this === undefined; })(),\n  globalIsGlobalThis: global === globalThis,\n  sameRequire: require === globalThis.require,\n};\n",
    ),
];

pub(crate) const CJS_MAIN: &str = r#"import { check } from 'k6';
import * as plain from './lib/plain.js';
import plainDefault, { a, b, nope, hidden } from './lib/plain.js';
import fn, { extra } from './lib/fn.js';
import * as fnNs from './lib/fn.js';
import webpack, { helper } from './lib/webpack.js';
import babel, { named } from './lib/babel.js';
import * as babelNs from './lib/babel.js';
import umd, { branch } from './lib/umd.js';
import g from './lib/global.js';
import * as ret from './lib/ret.js';
import { env } from './lib/env.js';

export const options = { iterations: 1 };

export default function () {
  check(null, {
    'namespace keys are Object.keys(module.exports), no default': () =>
      JSON.stringify(Object.keys(plain)) === '["a","b"]',
    'default import is module.exports': () => plainDefault.a === 1 && typeof plainDefault.b === 'function',
    'named imports read the exports': () => a === 1 && b() === 2,
    'a missing named import is undefined': () => nope === undefined,
    'a named import reads a property the key list lacks': () => hidden === 5 && plain.hidden === undefined,
    'module.exports = function with properties': () => fn() === 'fn' && extra === 3 && JSON.stringify(Object.keys(fnNs)) === '["extra"]',
    'webpack bundle: the default is the exports object': () => webpack.helper() === 'w' && webpack.__esModule === true && helper() === 'w',
    'babel output: exports.default is the default': () => babel() === 'dflt' && named === 'n' && JSON.stringify(Object.keys(babelNs)) === '["default","named"]',
    'UMD takes its CommonJS branch': () => umd.v === 1 && branch === 'commonjs',
    'this at the top of a CommonJS file is exports': () => g.Foo === 1 && globalThis.Foo === undefined,
    'a top-level return ends the file': () => JSON.stringify(Object.keys(ret)) === '["a"]',
    'the CommonJS environment is k6s': () => JSON.stringify(env) === JSON.stringify({
      thisIsExports: true, moduleKeys: 'exports', args: 2, filename: 'undefined', strict: true,
      globalIsGlobalThis: true, sameRequire: true,
    }),
  });
}
"#;

#[test]
fn commonjs_files_imported_with_import_behave_as_in_k6() {
    let dir = Dir::new("cjs-import");
    for (name, body) in CJS_FIXTURES {
        dir.write(name, body);
    }
    dir.write("main.js", CJS_MAIN);
    let (run, export) = run_file(&dir, "main.js", &[], &[]);
    assert_checks(&run, &export, 12.0);
}

#[test]
fn the_entry_script_may_be_commonjs() {
    let dir = Dir::new("cjs-main");
    dir.write(
        "main.js",
        "const { check } = require('k6');\nconst initThis = this === exports;\nexports.options = { iterations: 2, vus: 1 };\nexports.default = function () {\n  check(null, { 'init this is exports': () => initThis, 'this in default is undefined': () => this === undefined });\n};\n",
    );
    let (run, export) = run_file(&dir, "main.js", &[], &[]);
    assert_checks(&run, &export, 4.0);
    assert_eq!(crate::count(&export, "iterations"), 2.0);

    dir.write(
        "obj.js",
        "const { check } = require('k6');\nmodule.exports = { options: { iterations: 3 }, default: function () { check(null, { ran: () => true }); } };\n",
    );
    let (run, export) = run_file(&dir, "obj.js", &[], &[]);
    assert_checks(&run, &export, 3.0);
}

/// The files of the shared-instance test, written by us.
pub(crate) const SHARED_FILES: &[(&str, &str)] = &[
    ("lib/counted.js", "globalThis.runs = (globalThis.runs || 0) + 1;\nexports.id = {};\n"),
    ("lib/other.js", "import * as c from './counted.js';\nexport const viaOther = c.id;\n"),
    ("lib/a.js", "exports.a1 = 1;\nconst b = require('./b.js');\nexports.a2 = 2;\nexports.bSaw = b.saw;\n"),
    ("lib/b.js", "exports.saw = JSON.stringify(require('./a.js'));\n"),
    ("lib/throws.js", "globalThis.tries = (globalThis.tries || 0) + 1;\nthrow new Error('boom ' + globalThis.tries);\n"),
    ("lib/esm.js", "export const kind = 'esm';\nexport default 3;\n"),
];

/// Its entry script.
pub(crate) const SHARED_MAIN: &str = r#"import { check } from 'k6';
import * as http from 'k6/http';
import counted from './lib/counted.js';
import * as countedNs from './lib/counted.js';
import { viaOther } from './lib/other.js';
import * as esmNs from './lib/esm.js';

const required = require('./lib/counted.js');
const viaDots = require('./lib/../lib/counted.js');
const a = require('./lib/a.js');
const esm = require('./lib/esm.js');
const k6 = require('k6');
const caught = [];
for (let i = 0; i < 2; i++) {
  try { require('./lib/throws.js'); } catch (e) { caught.push(e.message); }
}
let mixing = '';
try { typeof module; } catch (e) { mixing = e.message; }
let inDefault = '';

export const options = { iterations: 1 };

export default function () {
  try { require('k6'); } catch (e) { inDefault = e.message; }
  check(null, {
    'one instance for import and require': () => required === counted && viaDots === counted && viaOther === counted.id && countedNs.id === counted.id && globalThis.runs === 1,
    'CommonJS cycle sees the exports so far': () => a.a2 === 2 && a.bSaw === '{"a1":1}',
    'require of an ES module is its namespace': () => esm === esmNs && esm.default === 3,
    'require of a k6 module: named exports, no default': () => typeof k6.check === 'function' && !('default' in k6),
    'import * of k6/http lists no default': () => !Object.keys(http).includes('default') && typeof http.get === 'function',
    'a failed require rethrows the same error': () => JSON.stringify(caught) === '["boom 1","boom 1"]' && globalThis.tries === 1,
    'module in an ES module is the mixing error': () => mixing.includes('mixing ECMAScript Modules (ESM) and CommonJS'),
    'require outside the init stage': () => inDefault.includes('only available in the init stage'),
  });
}
"#;

#[test]
fn import_and_require_share_one_instance_with_node_cycles_and_cached_failures() {
    let dir = Dir::new("cjs-shared");
    for (name, body) in SHARED_FILES {
        dir.write(name, body);
    }
    dir.write("main.js", SHARED_MAIN);
    let (run, export) = run_file(&dir, "main.js", &[], &[]);
    assert_checks(&run, &export, 8.0);
}

/// Runs `main` and returns the run (for the failures below).
fn fails(name: &str, files: &[(&str, &str)]) -> Run {
    let dir = Dir::new(name);
    for (n, b) in files {
        dir.write(n, b);
    }
    let main = dir.path("main.js");
    rk6_env(&["run", "-q", main.to_str().unwrap()], &dir.0, &[])
}

#[test]
fn load_errors_have_k6s_texts_and_exit_codes() {
    let run = fails(
        "esm-missing-export",
        &[
            ("lib.js", "export const a = 1;\n"),
            (
                "main.js",
                "import { nope } from './lib.js';\nexport default function () {}\n",
            ),
        ],
    );
    run.assert_code(107);
    assert!(
        run.stderr.contains(
            r#"The requested module \"./lib.js\" does not provide an export named \"nope\""#
        ),
        "{}",
        run.stderr
    );

    let run = fails(
        "cjs-null",
        &[
            ("lib.js", "module.exports = null;\n"),
            (
                "main.js",
                "import x from './lib.js';\nexport default function () {}\n",
            ),
        ],
    );
    run.assert_code(255);
    assert!(
        run.stderr.contains("CommonJS's exports must not be null")
            && run.stderr.contains("could not initialize 'main.js'"),
        "{}",
        run.stderr
    );

    let run = fails(
        "cjs-syntax",
        &[
            ("lib.js", "exports.a = 1;\nexports.b = ;\n"),
            (
                "main.js",
                "import x from './lib.js';\nexport default function () {}\n",
            ),
        ],
    );
    run.assert_code(107);
    assert!(run.stderr.contains("lib.js:2:"), "{}", run.stderr);

    let run = fails(
        "umd-in-esm",
        &[(
            "main.js",
            "export const x = typeof module === 'object' ? 1 : 2;\nexport default function () {}\n",
        )],
    );
    run.assert_code(107);
    assert!(
        run.stderr
            .contains(r#"you are trying to access identifier \"module\""#),
        "{}",
        run.stderr
    );

    let run = fails(
        "dynamic-import",
        &[
            ("lib.js", "export const a = 1;\n"),
            (
                "main.js",
                "let why = '';\nimport('./lib.js').catch((e) => { why = String(e); });\nexport default function () { if (why !== 'dynamic modules not enabled in the host program') throw new Error('import() resolved: ' + why); }\nexport const options = { iterations: 1 };\nexport function handleSummary() { return { stdout: why }; }\n",
            ),
        ],
    );
    run.assert_code(0);
    assert!(
        run.stdout
            .contains("dynamic modules not enabled in the host program"),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
}
