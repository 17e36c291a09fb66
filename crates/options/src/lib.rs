//! k6's options for rk6 (k6's `lib.Options`): one typed [`Options`] built once from the
//! layers — defaults < `--config` file < script `options` < `K6_*` environment < flags —
//! and validated once, with k6's messages and exit codes.
//!
//! Every kind of value has one parser here, used by every option of that kind and by the
//! scheduler's scenario fields: [`json`] for values from a script or a config file,
//! [`text`] for the environment, [`duration`] for k6's durations. A value of the wrong type
//! is refused with a message naming the option.

pub mod duration;
pub mod error;
pub mod exit;
pub mod features;
pub mod go_float;
pub mod json;
pub mod layers;
pub mod options;
pub mod text;
mod validate;

pub use duration::{
    format_duration, parse_duration, parse_go_duration, parse_time_duration, DurationError,
    GoDuration,
};
pub use error::OptionsError;
pub use exit::ExitCode;
pub use go_float::{parse_go_float, GoFloatError};
pub use layers::{config_file, consolidate, env_layer, script_layer, Consolidated, ScriptLayer};
pub use options::{Dns, Options, Stage, TlsAuth, TlsVersions, INSPECT_KEYS};

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
