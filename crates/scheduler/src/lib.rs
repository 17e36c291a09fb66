//! The scenario scheduler of rk6. It knows nothing of JavaScript or HTTP.
//!
//! How the types fit: options become [`Scenario`]s ([`scenarios_from_options`]); a
//! [`VuFactory`] supplied by the caller builds [`Vu`]s inside a [`Pool`] (worker threads in
//! production, the current thread in tests); [`run`] starts each scenario at its start time,
//! hands every VU a [`Job`] whose executor-specific [`IterationSource`] decides how many
//! iterations it runs, and interrupts iterations still running when the graceful stop expires.
//! [`ExecutionState`] exposes live counters to the progress display and metrics ticker.

pub mod config;
pub mod executor;
pub mod fields;
pub mod job;
pub mod lag;
pub mod pool;
pub mod run;
pub mod segment;
pub mod state;
pub mod vu;

pub use config::{
    decode_scenarios, executor_keys, scenarios_from_options, shortcut_scenario, ConfigError,
    Decoded, Executor, Scenario, COMMON_KEYS,
};
pub use executor::{ExecutorConfig, IterationSource};
pub use job::Job;
pub use lag::LagMonitor;
pub use pool::{LocalPool, Pool, ThreadPool};
pub use run::{initial_vu_ids, run, total_vus, RunEnd};
pub use segment::{Segment, Stripe};
pub use state::{ExecutionState, ScenarioState};
pub use tokio_util::sync::CancellationToken;
pub use vu::{Iteration, IterationOutcome, Vu, VuFactory, WorkerProfile};

/// The advice added to an error of running out of file descriptors (EMFILE/ENFILE).
pub fn fd_hint(e: &std::io::Error) -> &'static str {
    if matches!(e.raw_os_error(), Some(23 | 24)) {
        "; raise the open-files limit (ulimit -n)"
    } else {
        ""
    }
}

/// The property tests' case count: `default` in the normal test run (sized for CI), or
/// `PROPTEST_CASES` when set, for a longer fuzzing run (docs/reliability.md).
#[cfg(test)]
pub(crate) fn prop_config(default: u32) -> proptest::test_runner::Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    proptest::test_runner::Config {
        cases,
        failure_persistence: None,
        ..proptest::test_runner::Config::default()
    }
}
