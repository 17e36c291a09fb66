//! Real-time outputs (`-o name[=arg]`): every sample of the test, streamed to a file.
//!
//! The metrics thread owns the outputs and hands each one every batch right after the
//! aggregator has seen it, so an output sees exactly the samples the summary counts.
//! Writes are buffered; [`Output::flush`] runs about once a second and [`Output::finish`]
//! at the end of the test (also after Ctrl+C).

use std::io;
use std::time::Duration;

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

/// What an output may show about the run it records (the live dashboard's `param`).
#[derive(Debug, Clone, Default)]
pub struct RunInfo {
    /// The script as a `file://` URL.
    pub script_url: String,
    /// Scenario names in declaration order.
    pub scenarios: Vec<String>,
    /// The longest the run can last, graceful stops included.
    pub end_offset: Duration,
    /// `--execution-segment`, when this instance runs a part of the test.
    pub segment: Option<String>,
    /// The run's `instance_id` tag (`--tag instance_id=N`), when given.
    pub instance_id: Option<String>,
    /// The REST API's address (`--address`), when it serves one.
    pub api_address: Option<String>,
}

/// Why an `-o` value was refused.
#[derive(Debug, Error)]
pub enum OutputError {
    /// An output k6 has and rk6 does not.
    #[error(
        "output {0} is not supported by rk6 yet (supported: aggregate, json, csv, opentelemetry (or experimental-opentelemetry), experimental-prometheus-rw, influxdb, web-dashboard; see docs/compatibility.md)"
    )]
    Unsupported(String),
    /// A name neither k6 nor rk6 knows.
    #[error(
        "invalid output type '{0}', available types are: csv, experimental-opentelemetry, experimental-prometheus-rw, influxdb, json, web-dashboard"
    )]
    Unknown(String),
    /// A bad argument, e.g. an unknown csv key.
    #[error("{0}")]
    InvalidArgument(String),
    /// The live dashboard could not listen (Go's message, e.g. `listen tcp
    /// 127.0.0.1:5665: bind: address already in use`).
    #[error("{0}")]
    Listen(String),
    /// A setting k6 parses but refuses in its validation (k6 exits 104, not 255).
    #[error("{0}")]
    InvalidConfig(String),
    /// The file could not be created.
    #[error("could not create the '{kind}' output: {source}")]
    Create {
        /// `json`, `csv`, `experimental-prometheus-rw`, `experimental-opentelemetry`,
        /// `influxdb` or `web-dashboard`.
        kind: &'static str,
        /// The I/O error.
        source: io::Error,
    },
}
