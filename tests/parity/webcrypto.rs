//! WebCrypto's asymmetric algorithms across engines: keys, signatures, a ciphertext, ECDH
//! bits and an ES256 JWT made by k6 check out in rk6 and the reverse, and bad calls reject
//! with k6's error names and messages.

use std::path::Path;

use serde_json::Value;

use super::{checks, k6, run_k6, run_rk6};
use crate::Dir;

/// Writes `made.json` (see its header).
const PRODUCE: &str = include_str!("webcrypto/produce.js");
/// Reads `made.json`; every check must pass.
const CONSUME: &str = include_str!("webcrypto/consume.js");
/// Writes `errors.json`: `name: message` of each rejection.
const ERRORS: &str = include_str!("webcrypto/errors.js");
/// The checks consume.js makes.
const CONSUME_CHECKS: usize = 45;

#[derive(Clone, Copy, Debug)]
enum Engine<'a> {
    K6(&'a str),
    Rk6,
}

fn run(engine: Engine, script: &Path, dir: &Dir) -> super::Result {
    match engine {
        Engine::K6(bin) => run_k6(bin, script, dir),
        Engine::Rk6 => run_rk6(script, dir),
    }
}

/// `producer` makes the keys and data, `consumer` checks them.
fn cross(producer: Engine, consumer: Engine) {
    let dir = Dir::new("webcrypto-cross");
    let made = run(producer, &dir.write("produce.js", PRODUCE), &dir);
    assert_eq!(made.code, 0, "{producer:?} failed to produce");
    assert!(
        dir.path("made.json").exists(),
        "{producer:?} wrote no made.json"
    );
    let checked = run(consumer, &dir.write("consume.js", CONSUME), &dir);
    assert_eq!(checked.code, 0, "{consumer:?} failed to consume");
    let results = checks(&checked.export);
    let failed: Vec<_> = results.iter().filter(|(_, _, fails)| *fails > 0).collect();
    assert!(
        failed.is_empty(),
        "{consumer:?} rejects what {producer:?} made: {failed:?}"
    );
    assert_eq!(
        results.len(),
        CONSUME_CHECKS,
        "{consumer:?} did not run every check: {results:?}"
    );
}

#[test]
fn webcrypto_rk6_checks_its_own_keys() {
    cross(Engine::Rk6, Engine::Rk6);
}

#[test]
fn webcrypto_rk6_checks_what_k6_made() {
    let Some(bin) = k6() else { return };
    cross(Engine::K6(&bin), Engine::Rk6);
}

#[test]
fn webcrypto_k6_checks_what_rk6_made() {
    let Some(bin) = k6() else { return };
    cross(Engine::Rk6, Engine::K6(&bin));
}

fn errors(engine: Engine) -> Value {
    let dir = Dir::new("webcrypto-errors");
    let run = run(engine, &dir.write("errors.js", ERRORS), &dir);
    assert_eq!(run.code, 0, "{engine:?} failed");
    let text = std::fs::read_to_string(dir.path("errors.json")).expect("errors.json");
    serde_json::from_str(&text).expect("errors.json is JSON")
}

#[test]
fn webcrypto_errors_match_k6() {
    let Some(bin) = k6() else { return };
    let k6 = errors(Engine::K6(&bin));
    let rk6 = errors(Engine::Rk6);
    let k6 = k6.as_object().expect("an object");
    assert_eq!(k6.len(), 13, "{k6:?}");
    for (case, expected) in k6 {
        assert_eq!(&rk6[case], expected, "{case}");
    }
}
