//! CommonJS files imported with `import`, a CommonJS entry script, and `require`/`import`
//! sharing one instance, side by side with k6: each check must pass or fail under both.

use super::compare_with_files;
use crate::module_loading::{CJS_FIXTURES, CJS_MAIN, SHARED_FILES, SHARED_MAIN};

#[test]
fn commonjs_imports_agree_with_k6() {
    compare_with_files("parity-cjs-import", CJS_FIXTURES, CJS_MAIN);
}

#[test]
fn shared_instances_cycles_and_cached_failures_agree_with_k6() {
    compare_with_files("parity-cjs-shared", SHARED_FILES, SHARED_MAIN);
}

#[test]
fn a_commonjs_entry_script_agrees_with_k6() {
    compare_with_files(
        "parity-cjs-main",
        &[],
        "const { check } = require('k6');\nconst initThis = this === exports;\nmodule.exports.options = { iterations: 2, thresholds: { checks: ['rate==1'] } };\nmodule.exports.default = function () {\n  check(null, { 'init this is exports': () => initThis, 'this in default is undefined': () => this === undefined });\n};\n",
    );
}
