//! k6's process exit codes.

/// Exit codes with k6's numbers, so CI pipelines written for k6 work unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum ExitCode {
    /// The test ran; failed checks and iteration errors do not change this.
    Success = 0,
    /// A threshold failed.
    ThresholdsFailed = 99,
    /// `setup()` ran past `setupTimeout`.
    SetupTimeout = 100,
    /// `teardown()` ran past `teardownTimeout`.
    TeardownTimeout = 101,
    /// Stopped through the REST API (`PATCH /v1/status` with `stopped: true`).
    StoppedFromRestApi = 103,
    /// Options or scenarios are invalid.
    InvalidConfig = 104,
    /// Stopped by SIGINT/SIGTERM.
    ExternalAbort = 105,
    /// The script failed to load, or init/setup threw.
    ScriptException = 107,
    /// `exec.test.abort()`.
    ScriptAborted = 108,
    /// `exec.test.fail()`.
    MarkedAsFailed = 110,
    /// The control API could not listen on the `--address` given.
    CannotStartRestApi = 106,
    /// Any other failure (k6 exits with -1, seen as 255).
    Failure = 255,
}
