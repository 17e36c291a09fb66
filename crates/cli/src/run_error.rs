//! The error that ends a run (or an aggregator's lifecycle) with its own exit code, as
//! `rk6 run` and `rk6 aggregate --setup-once` both report it.

use std::time::Duration;

use rk6_js::log::{Level, Logger};
use rk6_js::{ScriptError, ScriptErrorKind};
use rk6_options::OptionsError;

use crate::exit::ExitCode;
use crate::lifecycle_timeouts;

/// What ends a run with its own exit code: logged once, with k6's message and hint.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RunError {
    /// The exit code, k6's for the case.
    pub code: ExitCode,
    /// The error line.
    pub message: String,
    /// k6's `hint` field, if any.
    pub hint: Option<String>,
}

impl RunError {
    /// An error with `code` and no hint.
    pub(crate) fn new(code: ExitCode, message: impl Into<String>) -> RunError {
        RunError {
            code,
            message: message.into(),
            hint: None,
        }
    }

    /// k6's generic failure (exit 255).
    pub(crate) fn generic(message: impl Into<String>) -> RunError {
        RunError::new(ExitCode::Failure, message)
    }

    /// An invalid option or flag (exit 104).
    pub(crate) fn invalid(message: impl Into<String>) -> RunError {
        RunError::new(ExitCode::InvalidConfig, message)
    }

    /// A script error of the init context, `setup()` or `teardown()`, with k6's code.
    pub(crate) fn of_script(e: &ScriptError) -> RunError {
        match e.kind {
            ScriptErrorKind::Aborted => RunError::new(ExitCode::ScriptAborted, e.message.clone()),
            ScriptErrorKind::Load => RunError::new(ExitCode::Failure, e.message.clone()),
            _ => RunError {
                code: ExitCode::ScriptException,
                message: e.message.clone(),
                hint: Some("script exception".into()),
            },
        }
    }

    /// `setup()`/`teardown()` past its `setupTimeout`/`teardownTimeout`.
    pub(crate) fn timeout(
        code: ExitCode,
        function: &str,
        option: &str,
        limit: Duration,
    ) -> RunError {
        let (message, hint) = lifecycle_timeouts::timed_out(function, option, limit);
        RunError {
            code,
            message,
            hint: Some(hint),
        }
    }

    /// Logs the error and gives its exit code.
    pub(crate) fn log(&self, logger: &Logger) -> ExitCode {
        let fields: Vec<(&str, &str)> = self
            .hint
            .as_deref()
            .map(|h| vec![("hint", h)])
            .unwrap_or_default();
        logger.log(Level::Error, &self.message, &fields);
        self.code
    }
}

impl From<OptionsError> for RunError {
    fn from(e: OptionsError) -> Self {
        RunError::new(e.code, e.message)
    }
}

impl From<ScriptError> for RunError {
    fn from(e: ScriptError) -> Self {
        RunError::of_script(&e)
    }
}
