//! Runs small scripts in a real VU context for unit tests of the modules.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::log::Logger;
use crate::script::program::{Program, ScriptError};
use crate::shared::Shared;
use crate::vu::runtime::Runtime;

/// Run-wide state for a trivial script, for tests that need a `Host` but no script.
pub(crate) fn shared() -> Arc<Shared> {
    static N: AtomicUsize = AtomicUsize::new(0);
    let path = std::env::temp_dir().join(format!(
        "rk6-js-shared-{}-{}.js",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&path, "export default function () {}\n").expect("write script");
    let program = Program::load(&path, BTreeMap::new()).expect("load script");
    let _ = std::fs::remove_file(&path);
    Shared::for_init(
        program,
        Arc::new(rk6_metrics::Registry::new()),
        Logger::new(false),
    )
}

/// Evaluates `src` as the init context of VU 1 (promise jobs included) and returns its
/// exported `options` object as JSON: tests put what they observed there.
pub(crate) fn run(src: &str) -> Result<serde_json::Value, ScriptError> {
    run_vus(src, 1).pop().expect("one VU")
}

/// [`run`] for VUs 1 to `vus` of one run, one after the other.
pub(crate) fn run_vus(src: &str, vus: u64) -> Vec<Result<serde_json::Value, ScriptError>> {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "rk6-js-test-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("script.js");
    std::fs::write(&path, src).expect("write script");
    let result = std::thread::Builder::new()
        .stack_size(16 << 20)
        .spawn(move || {
            let program = match Program::load(&path, BTreeMap::new()) {
                Ok(p) => p,
                Err(e) => return vec![Err(e)],
            };
            let shared = Shared::for_init(
                program,
                Arc::new(rk6_metrics::Registry::new()),
                Logger::new(false),
            );
            (1..=vus)
                .map(|id| Runtime::init(id, shared.clone())?.options())
                .collect()
        })
        .expect("spawn")
        .join()
        .expect("script thread panicked");
    let _ = std::fs::remove_dir_all(&dir);
    result
}
