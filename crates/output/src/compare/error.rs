//! What can stop a comparison: a limit that does not parse, a summary file that cannot be
//! read, a limit naming what a file lacks. All of them are k6's invalid-config exit (104).

use std::path::PathBuf;

/// Why a run comparison could not be made.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CompareError {
    /// A `--max-regression` value is not `METRIC:STAT=P%`.
    #[error("invalid --max-regression {limit:?}: {why}")]
    Limit {
        /// The value as given.
        limit: String,
        /// What is wrong with it.
        why: String,
    },
    /// A summary file cannot be read or is not a `--summary-export` document.
    #[error("cannot read the summary {}: {why}", path.display())]
    File {
        /// The file named on the command line.
        path: PathBuf,
        /// The I/O or JSON error, or the part of the layout that is wrong.
        why: String,
    },
    /// A limit names a metric or stat one of the runs has not.
    #[error("--max-regression {limit:?}: {what} is not in the {side} summary {}", path.display())]
    Missing {
        /// The limit as given.
        limit: String,
        /// `BASE` or `NEW`.
        side: &'static str,
        /// The file of that side (`the current run` for `rk6 run --compare-to`).
        path: PathBuf,
        /// `metric "x"` or `stat "p(99)" of "x"`.
        what: String,
    },
}
