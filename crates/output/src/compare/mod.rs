//! `rk6 compare` and `rk6 run --compare-to`: two runs' `--summary-export` stats side by
//! side, and `--max-regression` limits that gate a change. Reading a file
//! ([`summary_file`]), parsing limits ([`limit`]), comparing ([`diff`]) and rendering
//! ([`render`]) each have a file; [`error`] holds what they share.

pub mod diff;
pub mod error;
pub mod limit;
pub mod render;
pub mod summary_file;
