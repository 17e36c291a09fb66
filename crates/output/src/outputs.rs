//! Real-time outputs (`-o name[=arg]`): every sample of the test, streamed to a file.
//!
//! The metrics thread owns the outputs and hands each one every batch right after the
//! aggregator has seen it, so an output sees exactly the samples the summary counts.
//! Writes are buffered; [`Output::flush`] runs about once a second and [`Output::finish`]
//! at the end of the test (also after Ctrl+C).

use std::io;

use rk6_metrics::{Registry, Sample, SummaryData};
use thiserror::Error;

/// A destination for every sample of a test run.
pub trait Output: Send {
    /// How the banner names it, e.g. `json (out.json)`.
    fn description(&self) -> String;
    /// Writes one batch of samples.
    fn add(&mut self, registry: &Registry, batch: &[Sample]);
    /// Pushes buffered data to the file (an error is kept for `finish`).
    fn flush(&mut self);
    /// The end-of-test summary (checks, final threshold verdicts), given once before
    /// `finish` when the run produced one. Streaming outputs ignore it.
    fn end_of_test(&mut self, _summary: &SummaryData) {}
    /// Writes everything still buffered and closes the file; reports the first write error.
    fn finish(&mut self) -> io::Result<()>;
}

/// Why an `-o` value was refused.
#[derive(Debug, Error)]
pub enum OutputError {
    /// An output k6 has and rk6 does not.
    #[error(
        "output {0} is not supported by rk6 yet (supported: json, csv, experimental-prometheus-rw, influxdb, web-dashboard; see docs/compatibility.md)"
    )]
    Unsupported(String),
    /// A name neither k6 nor rk6 knows.
    #[error(
        "invalid output type '{0}', available types are: csv, experimental-prometheus-rw, influxdb, json, web-dashboard"
    )]
    Unknown(String),
    /// A bad argument, e.g. an unknown csv key.
    #[error("{0}")]
    InvalidArgument(String),
    /// The file could not be created.
    #[error("could not create the '{kind}' output: {source}")]
    Create {
        /// `json`, `csv`, `experimental-prometheus-rw`, `influxdb` or `web-dashboard`.
        kind: &'static str,
        /// The I/O error.
        source: io::Error,
    },
}
