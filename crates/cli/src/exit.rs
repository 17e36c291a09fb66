//! k6's process exit codes (defined with the options, whose errors carry them).

pub use rk6_options::ExitCode;
