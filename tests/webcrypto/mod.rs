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

/// PBKDF2 `importKey`/`deriveBits`/`deriveKey` (k6 1.6: release notes v1.6.0, #5380; k6-docs
/// javascript-api/crypto/pbkdf2params and subtlecrypto/derivekey) with RFC 6070 and
/// hashlib.pbkdf2_hmac vectors and k6's errors, and HKDF (RFC 5869), which k6 lacks.
#[test]
fn pbkdf2_and_hkdf_derive_known_answers() {
    let dir = Dir::new("webcrypto-derive");
    let (run, export) = run_export(&dir, include_str!("derive.js"), &[]);
    crate::assert_checks(&run, &export, 8.0);
}
