//! The global `crypto.subtle` (WebCrypto), end to end with an async default function.

use crate::{metric, run_export, Dir};

/// The same script runs unchanged under k6 (see its header).
const CHECKS: &str = include_str!("checks.js");

#[test]
fn webcrypto_known_answers_pass_as_checks() {
    let dir = Dir::new("webcrypto");
    let (run, export) = run_export(&dir, CHECKS, &[]);
    run.assert_code(0);
    let checks = metric(&export, "checks");
    assert_eq!(
        (checks["passes"].as_f64(), checks["fails"].as_f64()),
        (Some(30.0), Some(0.0)),
        "checks: {}\n{}",
        export["root_group"]["checks"],
        run.stderr
    );
}
