//! End-of-test outputs of rk6, built from [`rk6_metrics::SummaryData`].
//!
//! * [`render_text`] prints the k6 1.x text summary (`█ THRESHOLDS`, `█ TOTAL RESULTS`,
//!   metrics by category) byte for byte in k6's layout; in full mode followed by the
//!   `█ GROUP`/`█ SCENARIO` sections of [`rk6_metrics::Sections`], in legacy mode k6's
//!   pre-1.0 layout instead (`text/`: its number, duration and byte rules, metric
//!   categories, line alignment and blocks each have a file).
//! * [`summary_export`] builds the `--summary-export` JSON (legacy shape: Rates as
//!   `passes/fails/value`, `thresholds` maps are `true` when the threshold failed).
//! * [`handle_summary_data`] builds the argument of a script's `handleSummary(data)`
//!   (`thresholds` maps are `{ok}`; groups and checks are arrays).
//! * [`machine_readable_summary`] builds k6 1.5's machine-readable summary (schema 1.0.0),
//!   which takes the place of both with `--new-machine-readable-summary`.
//!
//! The summaries only read the snapshot; they never see samples or sinks.
//!
//! Real-time outputs (`-o json=FILE`, `-o csv=FILE`, `.gz` for gzip) are the exception:
//! [`OutputSpec`] parses an `-o` value and opens an [`Output`], which the metrics thread
//! hands every sample batch (`json` writes k6's JSON lines and `csv` its CSV, both through
//! one sample writer with a per-format line function; [`ReportOutput`] the live web
//! dashboard of `K6_WEB_DASHBOARD=true` (k6's event stream and rk6's page, served from a
//! thread of its own) and the self-contained HTML report of `K6_WEB_DASHBOARD_EXPORT`;
//! [`prometheus_rw`] pushes to a Prometheus remote-write endpoint, [`opentelemetry`]
//! exports OTLP metrics to a collector, [`influxdb`] writes line protocol to an InfluxDB v1
//! server).
//! [`K6MetricsOnly`] and [`k6_summary`] keep rk6's own metrics (`iteration_start_delay`)
//! out of these k6-format machine outputs unless `--rk6-metrics` asks for them.
//!
//! [`aggregate`] (`-o aggregate=URL`) pushes a runner's mergeable deltas to `rk6 aggregate`,
//! which judges a distributed test as one.
//!
//! [`compare`] reads two `--summary-export` files back and compares them, for `rk6
//! compare` and `rk6 run --compare-to` (limits on a stat's relative change).

pub mod aggregate;
pub mod compare;
mod csv;
mod export;
#[cfg(test)]
mod fixtures;
mod handle_summary;
pub mod influxdb;
mod json;
mod json_lines;
mod k6_metrics;
mod machine_readable;
pub mod opentelemetry;
mod out_file;
mod outputs;
pub mod prometheus_rw;
mod report;
mod sample_writer;
mod spec;
mod text;
mod timestamp;
pub(crate) mod transport;
mod worker;

pub use csv::{csv_header, TimeFormat};
pub use export::summary_export;
pub use handle_summary::handle_summary_data;
pub use k6_metrics::{is_rk6_only, k6_summary, K6MetricsOnly};
pub use machine_readable::{
    machine_readable_summary, machine_readable_text, MachineReadableMeta, SCHEMA_VERSION,
};
pub use outputs::{Output, OutputError, RunInfo};
pub use report::{ReportConfig, ReportOutput};
pub use spec::{OutputKind, OutputSpec};
pub use text::{render_text, SummaryMode, TextOptions};
