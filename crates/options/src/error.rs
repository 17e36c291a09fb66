//! The error of reading, consolidating or validating options.

use crate::exit::ExitCode;

/// An option value or combination that k6 refuses, with the exit code k6 ends with for it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct OptionsError {
    /// k6's exit code for this error (mostly [`ExitCode::InvalidConfig`]).
    pub code: ExitCode,
    /// What is wrong, naming the option and the value.
    pub message: String,
}

impl OptionsError {
    /// An invalid configuration (exit 104).
    pub fn invalid(message: impl Into<String>) -> OptionsError {
        OptionsError {
            code: ExitCode::InvalidConfig,
            message: message.into(),
        }
    }

    /// A value k6 refuses only when it uses it, ending with its generic failure (exit 255).
    pub fn failure(message: impl Into<String>) -> OptionsError {
        OptionsError {
            code: ExitCode::Failure,
            message: message.into(),
        }
    }
}
